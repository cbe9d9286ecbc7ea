-- Buffer-local commands: :XeForgeDevice, :XeForgeStage, :XeForgeVerify, :XeForgeReport, :XeForgeRestart.
-- Device and stage lists come from the server (requests `xeforge/devices` and `xeforge/stages`,
-- whose stages carry their ready `xeforge.runStage` command), so the commands offer exactly what
-- the server can do.
local M = {}

local RUN_STAGE = 'xeforge.runStage'
local SELECT_DEVICE = 'xeforge.selectDevice'

---@param bufnr integer
---@return vim.lsp.Client?
local function client_for(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'xeforge' })[1]
end

local function notify(msg, level)
  vim.notify('xeforge: ' .. msg, level or vim.log.levels.INFO)
end

--- Reads the `xeforge/devices` reply (which `xeforge.selectDevice` also answers with): the server's
--- typed `DevicesResult` (server/src/lsp/handlers/configuration.rs), {devices = {{id, name, vendor,
--- arch, generation, selected}}, toolchains, device, toolchain}. A reply of any other shape is an
--- error that names what is wrong, not a list guessed from it.
---@return { id: string, name: string, vendor: string, arch: string, generation: string, current: boolean }[]? devices
---@return string? error
function M.parse_devices(reply)
  if type(reply) ~= 'table' or type(reply.devices) ~= 'table' then
    return nil, 'the reply has no devices list'
  end
  if type(reply.device) ~= 'string' or type(reply.toolchain) ~= 'string' then
    return nil, 'the reply has no device and toolchain'
  end
  local out = {}
  for i, d in ipairs(reply.devices) do
    if type(d) ~= 'table' or type(d.selected) ~= 'boolean' then
      return nil, ('devices[%d] is not a device'):format(i)
    end
    for _, key in ipairs({ 'id', 'name', 'vendor', 'arch', 'generation' }) do
      if type(d[key]) ~= 'string' then
        return nil, ('devices[%d].%s is not a string'):format(i, key)
      end
    end
    table.insert(out, {
      id = d.id,
      name = d.name,
      vendor = d.vendor,
      arch = d.arch,
      generation = d.generation,
      current = d.selected,
    })
  end
  return out
end

local last_devices = {}

local function select_device(client, bufnr, id)
  client:exec_cmd(
    { title = 'Select device', command = SELECT_DEVICE, arguments = { { device = id } } },
    { bufnr = bufnr },
    function(err)
      if err then
        notify(('could not select %s: %s'):format(id, err.message), vim.log.levels.ERROR)
        return
      end
      -- Kept in the client's settings so a restart and `workspace/configuration` agree.
      require('xeforge').set('device', id)
      notify('device ' .. id)
    end
  )
end

function M.device(bufnr, arg)
  local client = client_for(bufnr)
  if not client then
    return notify('the server is not attached to this buffer', vim.log.levels.ERROR)
  end
  if arg and arg ~= '' then
    return select_device(client, bufnr, arg)
  end
  client:request('xeforge/devices', {}, function(err, reply)
    if err then
      return notify('could not list devices: ' .. err.message, vim.log.levels.ERROR)
    end
    local devices, bad = M.parse_devices(reply)
    if not devices then
      return notify('unexpected xeforge/devices reply: ' .. bad, vim.log.levels.ERROR)
    end
    last_devices = vim.tbl_map(function(d)
      return d.id
    end, devices)
    if #devices == 0 then
      return notify('the server returned no devices', vim.log.levels.WARN)
    end
    table.sort(devices, function(a, b)
      return (a.current and 1 or 0) > (b.current and 1 or 0)
    end)
    vim.ui.select(devices, {
      prompt = 'XeForge device',
      format_item = function(d)
        return d.id .. '  ' .. d.name .. (d.current and '  (current)' or '')
      end,
    }, function(choice)
      if choice then
        select_device(client, bufnr, choice.id)
      end
    end)
  end, bufnr)
end

--- Stage choices from the server's `xeforge/stages`: the kernel at or above the cursor first, within
--- a kernel the stages its analysis recommends first, then in the server's order.
---@param result { kernels: { name: string, line: integer, stages: { name: string, title: string, recommended: boolean, command: lsp.Command }[] }[] }?
---@param cursor_line integer 0-based
---@param stage? string only this stage
function M.stage_choices(result, cursor_line, stage)
  local out = {}
  for _, k in ipairs((result or {}).kernels or {}) do
    for _, s in ipairs(k.stages or {}) do
      if s.command and (not stage or stage == '' or s.name == stage) then
        table.insert(out, {
          line = k.line,
          command = s.command,
          kernel = k.name,
          stage = s.name,
          recommended = s.recommended == true,
          order = #out,
        })
      end
    end
  end
  local function rank(c)
    return c.line <= cursor_line and (cursor_line - c.line) or (1e9 + c.line)
  end
  table.sort(out, function(a, b)
    if rank(a) ~= rank(b) then
      return rank(a) < rank(b)
    end
    if a.recommended ~= b.recommended then
      return a.recommended
    end
    return a.order < b.order
  end)
  return out
end

function M.stage(bufnr, arg)
  local client = client_for(bufnr)
  if not client then
    return notify('the server is not attached to this buffer', vim.log.levels.ERROR)
  end
  local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr) }
  client:request('xeforge/stages', params, function(err, result)
    if err then
      return notify('could not get the stages: ' .. err.message, vim.log.levels.ERROR)
    end
    local cursor = vim.api.nvim_win_get_cursor(0)[1] - 1
    local choices = M.stage_choices(result, cursor, arg)
    if #choices == 0 then
      return notify('no optimisation stage is offered here (stages appear above Triton kernels)', vim.log.levels.WARN)
    end
    local function run(choice)
      if choice then
        -- Progress arrives as $/progress; the verified result as workspace/applyEdit.
        client:exec_cmd(choice.command, { bufnr = bufnr })
      end
    end
    if arg and arg ~= '' and #choices >= 1 then
      return run(choices[1])
    end
    vim.ui.select(choices, {
      prompt = 'XeForge stage',
      format_item = function(c)
        return ('%s%s  (%sline %d)'):format(
          c.command.title,
          c.recommended and ' (recommended)' or '',
          c.kernel and (c.kernel .. ', ') or '',
          c.line + 1
        )
      end,
    }, run)
  end, bufnr)
end

--- Server request `xeforge/askProblem`: a stage needs sizes nothing in the code gives. Asks once with
--- vim.ui.input (starting from the server's suggestion); the server writes the answer above the
--- entry as `# xeforge: dims ...` and the same run goes on. `vim.NIL` when dismissed (the run then
--- ends saying what to add). An input UI that answers after returning counts as dismissed: an LSP
--- handler's reply is its return value.
---@param params { entry: string, missing: string[], suggestion: string, line: integer, message: string }
function M.ask_problem(_, params)
  if type(params) ~= 'table' then
    return vim.NIL
  end
  local missing = type(params.missing) == 'table' and table.concat(params.missing, '; ') or ''
  local answer
  vim.ui.input({
    prompt = ('xeforge: %s needs %s. # xeforge: dims '):format(tostring(params.entry), missing),
    default = type(params.suggestion) == 'string' and params.suggestion or '',
  }, function(input)
    answer = input
  end)
  if type(answer) ~= 'string' or vim.trim(answer) == '' then
    return vim.NIL
  end
  return { answer = answer }
end

local VERIFY_COMPILED = 'xeforge.verifyCompiled'

--- Asks the server to compile the buffer's file on its harness (`xeforge.verifyCompiled`, also behind
--- the "Re-verify on the harness" code action). The progress ($/progress), the outcome
--- (window/showMessage) and the compiled diagnostics (source "xeforge (compiled)") come from the server.
--- The URI alone: the server verifies the version it has when the command arrives.
---@param bufnr integer
function M.verify(bufnr)
  local client = client_for(bufnr)
  if not client then
    return notify('the server is not attached to this buffer', vim.log.levels.ERROR)
  end
  local command =
    { title = 'Verify compiled kernel', command = VERIFY_COMPILED, arguments = { { uri = vim.uri_from_bufnr(bufnr) } } }
  client:exec_cmd(command, { bufnr = bufnr }, function(err)
    if err then
      notify('could not verify: ' .. err.message, vim.log.levels.ERROR)
    end
  end)
end

-- Restarts are serialised: a request during a restart is remembered and runs after it.
local restarting, pending = false, false

function M.restart()
  if restarting then
    pending = true
    return
  end
  local clients = vim.lsp.get_clients({ name = 'xeforge' })
  restarting = true
  for _, c in ipairs(clients) do
    c:stop()
  end
  local function done()
    restarting = false
    if pending then
      pending = false
      M.restart()
    end
  end
  local waited = 0
  local timer = assert(vim.uv.new_timer())
  timer:start(
    50,
    50,
    vim.schedule_wrap(function()
      waited = waited + 50
      local alive = false
      for _, c in ipairs(clients) do
        if not c:is_stopped() then
          alive = true
        end
      end
      if alive and waited < 5000 then
        return
      end
      timer:stop()
      timer:close()
      if alive then
        for _, c in ipairs(clients) do
          c:stop(true) -- forced: the server ignored shutdown for 5 s
        end
      end
      -- enable() re-runs the FileType logic for every loaded buffer, root detection included.
      vim.lsp.enable('xeforge')
      notify('server restarted')
      done()
    end)
  )
end

local RENDER_REPORT = 'xeforge.renderReport'

--- Asks the server to write the evidence report of `arg` ({record = path} or {dir = runs dir}) and
--- opens the page in the browser.
---@param bufnr integer
---@param arg table
function M.report(bufnr, arg)
  local client = client_for(bufnr)
  if not client then
    return notify('no xeforge server attached to this buffer', vim.log.levels.WARN)
  end
  client:request('workspace/executeCommand', { command = RENDER_REPORT, arguments = { arg } }, function(err, res)
    if err or type(res) ~= 'table' or type(res.path) ~= 'string' then
      return notify('no report: ' .. (err and err.message or 'the server sent no page'), vim.log.levels.WARN)
    end
    notify('evidence report: ' .. res.path)
    vim.ui.open(res.path)
  end, bufnr)
end

--- The runs directory of the buffer's project (the nearest `.xeforge/runs` upward).
---@param bufnr integer
---@return string?
function M.runs_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= '' and vim.fs.dirname(name) or vim.fn.getcwd()
  local found = vim.fs.find('.xeforge', { upward = true, path = start, type = 'directory' })[1]
  if found and vim.fn.isdirectory(found .. '/runs') == 1 then
    return found .. '/runs'
  end
end

-- The "Evidence report" code lens names this client-side command.
vim.lsp.commands['xeforge.showReport'] = function(command, ctx)
  M.report(ctx.bufnr, (command.arguments or {})[1] or {})
end

local function complete_devices()
  return last_devices
end

---@param bufnr integer
function M.attach(bufnr)
  local function cmd(name, fn, opts)
    vim.api.nvim_buf_create_user_command(bufnr, name, fn, opts)
  end
  cmd('XeForgeDevice', function(a)
    M.device(bufnr, a.args)
  end, { nargs = '?', complete = complete_devices, desc = 'xeforge: select the target device' })
  cmd('XeForgeStage', function(a)
    M.stage(bufnr, a.args)
  end, { nargs = '?', desc = 'xeforge: run an optimisation stage on the kernel at the cursor' })
  cmd('XeForgeVerify', function()
    M.verify(bufnr)
  end, { desc = 'xeforge: compile the file on the harness and show what compiling said' })
  cmd('XeForgeReport', function()
    local dir = M.runs_dir(bufnr)
    if not dir then
      return notify('no .xeforge/runs here yet: run a stage first', vim.log.levels.WARN)
    end
    M.report(bufnr, { dir = dir })
  end, { desc = "xeforge: open the evidence report of this project's stage runs" })
  cmd('XeForgeRestart', function()
    M.restart()
  end, { desc = 'xeforge: restart the language server' })
  -- Fill the device completion list once per session.
  if #last_devices == 0 then
    local client = client_for(bufnr)
    if client then
      client:request('xeforge/devices', {}, function(err, reply)
        local devices = not err and M.parse_devices(reply)
        if devices then
          last_devices = vim.tbl_map(function(d)
            return d.id
          end, devices)
        end
      end, bufnr)
    end
  end
end

return M
