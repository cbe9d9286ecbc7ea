-- Headless end-to-end test of editors/nvim against the real xeforge server.
-- Steps are written to $XEFORGE_TEST_OUT as "ok ..." / "FAIL ..." lines, then "RESULT PASS|FAIL".
local plugin = assert(vim.env.XEFORGE_PLUGIN, 'XEFORGE_PLUGIN unset')
vim.opt.runtimepath:prepend(plugin)
vim.cmd.runtime('plugin/xeforge.lua')
vim.opt.swapfile = false
vim.lsp.log.set_level(vim.log.levels.WARN)

require('xeforge').setup({ server_path = vim.env.XEFORGE_BIN })

local out = assert(io.open(vim.env.XEFORGE_TEST_OUT, 'w'))
local failed = false
local function log(line)
  out:write(line, '\n')
  out:flush()
end
local function check(ok, what, detail)
  if ok then
    log('ok   ' .. what)
  else
    failed = true
    log('FAIL ' .. what .. (detail and (': ' .. detail) or ''))
  end
  return ok
end

local function codes(bufnr)
  local seen = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code then
      table.insert(seen, ('%s@%d:%d'):format(d.code, d.lnum + 1, d.col + 1))
    end
  end
  table.sort(seen)
  return seen
end

local function find(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return d
    end
  end
end

local function line_with(bufnr, pattern)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if l:find(pattern, 1, true) then
      return i - 1, l
    end
  end
end

local function finish()
  log(failed and 'RESULT FAIL' or 'RESULT PASS')
  out:close()
  vim.cmd('qall!')
end

-- 4b. Inline suggestion at the launch: XF101's fix (6 -> 8) as one item. With
-- vim.lsp.inline_completion (Neovim 0.12+) through the plugin's accept key; without it (0.11) the
-- plugin sets nothing up, and the server's item, asked for through Neovim's LSP client, is applied
-- the way 0.12 applies one.
local function inline_fix(client, buf, r, c)
  local on_line = function()
    return (vim.api.nvim_buf_get_lines(buf, r, r + 1, false)[1] or ''):find('num_warps=8', 1, true) ~= nil
  end
  local xeforge = require('xeforge')
  if xeforge.has_inline() then
    check(vim.lsp.inline_completion.is_enabled({ bufnr = buf }), 'inline completion enabled for the buffer')
    vim.api.nvim_win_set_cursor(0, { r + 1, c })
    vim.cmd('startinsert')
    local ns = vim.api.nvim_create_namespace('nvim.lsp.inline_completion')
    local shown = vim.wait(10000, function()
      return #vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}) > 0
    end, 50)
    check(shown, 'the fix shows as ghost text at the launch')
    vim.api.nvim_feedkeys(vim.keycode('<Tab>'), 'x', false)
    vim.cmd('stopinsert')
    check(vim.wait(5000, on_line, 50), 'one <Tab> accepts it: num_warps=8')
    return
  end
  log(('     Neovim %s has no vim.lsp.inline_completion: the raw request instead'):format(tostring(vim.version())))
  local map = vim.fn.maparg('<Tab>', 'i', false, true)
  check(map.buffer ~= 1, 'the plugin maps no accept key without vim.lsp.inline_completion')
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = r, character = c },
    context = { triggerKind = 1 },
  }
  local res = client:request_sync('textDocument/inlineCompletion', params, 10000, buf)
  local item = res and res.result and res.result.items and res.result.items[1]
  if not check(item ~= nil, 'the server offers the fix at the launch', vim.inspect(res)) then
    return
  end
  local range = item.range
  check(
    item.insertText == '8' and range.start.line == r and range['end'].line == r,
    'the item is the quick fix on the launch line',
    vim.inspect(item)
  )
  vim.api.nvim_buf_set_text(buf, r, range.start.character, r, range['end'].character, { item.insertText })
  check(on_line(), 'applied as Neovim 0.12 applies an item: num_warps=8')
end

local function run()
  local buf = vim.api.nvim_get_current_buf()

  -- 1. The server attaches and the buffer-local commands exist.
  local attached = vim.wait(20000, function()
    return #vim.lsp.get_clients({ bufnr = buf, name = 'xeforge' }) > 0
  end, 50)
  if not check(attached, 'xeforge attached to the fixture') then
    return
  end
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'xeforge' })[1]
  log('     offset encoding ' .. client.offset_encoding)
  vim.wait(2000, function()
    return vim.api.nvim_buf_get_commands(buf, {}).XeForgeStage ~= nil
  end, 20)
  local cmds = vim.api.nvim_buf_get_commands(buf, {})
  check(
    cmds.XeForgeStage and cmds.XeForgeDevice and cmds.XeForgeVerify and cmds.XeForgeRestart,
    'buffer-local :XeForgeStage/:XeForgeDevice/:XeForgeVerify/:XeForgeRestart'
  )

  -- 2. Diagnostics arrive: XF104 on grf_mode='large' (xpu-3.7 spells it '256').
  local got = vim.wait(20000, function()
    return find(buf, 'XF104') ~= nil
  end, 50)
  if not check(got, 'XF104 diagnostic shown', table.concat(codes(buf), ' ')) then
    return
  end
  local d = find(buf, 'XF104')
  local row, text = line_with(buf, "grf_mode='large'")
  check(
    d.lnum == row and text:sub(d.col + 1, d.end_col) == "'large'",
    'XF104 sits on the value',
    ('%d:%d-%d in %q'):format(d.lnum, d.col, d.end_col, tostring(text))
  )
  log('     diagnostics: ' .. table.concat(codes(buf), ' '))

  -- 3. The preferred quick fix, through vim.lsp.buf.code_action, renames it to '256'.
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  local offered = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(offered, action.title)
      return action.isPreferred == true
        and action.kind == 'quickfix'
        and vim.iter(action.diagnostics or {}):any(function(x)
          return x.code == 'XF104'
        end)
    end,
  })
  local fixed = vim.wait(10000, function()
    return line_with(buf, "grf_mode='256'") ~= nil
  end, 50)
  check(fixed, "quick fix applied: grf_mode='256'", 'offered: ' .. table.concat(offered, ' | '))
  local cleared = vim.wait(10000, function()
    return find(buf, 'XF104') == nil
  end, 50)
  check(cleared, 'XF104 cleared after the fix', table.concat(codes(buf), ' '))

  -- 4. Typing a bad value brings XF101, typing a good one clears it.
  local r, l = line_with(buf, 'num_warps=8')
  if check(r ~= nil, 'launch line found') then
    local c = l:find('num_warps=8', 1, true) + #'num_warps='
    vim.api.nvim_buf_set_text(buf, r, c - 1, r, c, { '6' })
    check(
      vim.wait(10000, function()
        return find(buf, 'XF101') ~= nil
      end, 50),
      'XF101 appears for num_warps=6',
      table.concat(codes(buf), ' ')
    )
    inline_fix(client, buf, r, c)
    vim.api.nvim_buf_set_text(buf, r, c - 1, r, c, { '4' })
    check(
      vim.wait(10000, function()
        return find(buf, 'XF101') == nil
      end, 50),
      'XF101 clears for num_warps=4',
      table.concat(codes(buf), ' ')
    )
  end

  -- 4b. Completion and signature help through vim.lsp: `tl.` members with xpu-3.7's availability
  --     (block pointers deprecated there), documentation on resolve, tl.load's and the launch's
  --     signatures with the active parameter.
  local mrow = line_with(buf, 'mask = offs < n')
  if check(mrow ~= nil, 'kernel body found') then
    local function at_end(row)
      local text = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
      return { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = row, character = #text } }
    end
    vim.api.nvim_buf_set_lines(buf, mrow + 1, mrow + 1, false, { '    z = tl.' })
    local reply = client:request_sync('textDocument/completion', at_end(mrow + 1), 10000, buf)
    local items = reply and reply.result and (reply.result.items or reply.result) or {}
    local by = {}
    for _, it in ipairs(items) do
      by[it.label] = it
    end
    check(by.load ~= nil and by.dot ~= nil, 'completion offers tl.load and tl.dot', ('%d items'):format(#items))
    check(
      by.make_block_ptr ~= nil and vim.tbl_contains(by.make_block_ptr.tags or {}, 1),
      'tl.make_block_ptr tagged Deprecated on xpu-3.7',
      vim.inspect(by.make_block_ptr)
    )
    if by.load then
      local res = client:request_sync('completionItem/resolve', by.load, 10000, buf)
      local doc = res and res.result and res.result.documentation
      local md = type(doc) == 'table' and doc.value or tostring(doc)
      check(
        md:find('tl.load(pointer', 1, true) ~= nil and md:find('Available on', 1, true) ~= nil,
        'resolve adds the docs',
        md
      )
    end
    vim.api.nvim_buf_set_lines(buf, mrow + 1, mrow + 2, false, { '    z = tl.load(x_ptr + offs, ' })
    local sh = client:request_sync('textDocument/signatureHelp', at_end(mrow + 1), 10000, buf)
    local sig = sh and sh.result and sh.result.signatures and sh.result.signatures[1]
    check(
      sig ~= nil and sig.label:find('tl.load(pointer, mask=None', 1, true) == 1 and sh.result.activeParameter == 1,
      'signature help for tl.load, active parameter mask',
      vim.inspect(sh and sh.result)
    )
    vim.api.nvim_buf_set_lines(buf, mrow + 1, mrow + 2, false, {})
    local lrow, ltext = line_with(buf, 'add_kernel[grid](')
    if check(lrow ~= nil, 'launch found') then
      local col = ltext:find('(x, y, ', 1, true) + #'(x, y, ' - 1
      local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = lrow, character = col } }
      local lh = client:request_sync('textDocument/signatureHelp', params, 10000, buf)
      local lsig = lh and lh.result and lh.result.signatures and lh.result.signatures[1]
      check(
        lsig ~= nil
          and lsig.label == 'add_kernel[grid](x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr)'
          and lh.result.activeParameter == 2,
        'signature help for the launch, constexpr marked',
        vim.inspect(lh and lh.result)
      )
    end
  end

  -- 5. The device list the pickers use.
  local reply = client:request_sync('xeforge/devices', {}, 5000, buf)
  local parse_devices = require('xeforge.commands').parse_devices
  local devices = reply and not reply.err and parse_devices(reply.result) or {}
  local ids = vim.tbl_map(function(x)
    return x.id
  end, devices)
  check(
    vim.tbl_contains(ids, 'arc-pro-b70') and vim.tbl_contains(ids, 'max-1550'),
    'xeforge/devices lists the devices',
    vim.inspect(reply)
  )
  -- The reply is read as the server types it: another shape is an error, not a guessed list.
  local none, bad = parse_devices({ 'arc-pro-b70' })
  check(none == nil and bad == 'the reply has no devices list', 'a bare id list is refused', tostring(bad))
  local wrong = vim.deepcopy(reply.result)
  wrong.devices[1].selected = nil
  none, bad = parse_devices(wrong)
  check(
    none == nil and bad == 'devices[1] is not a device',
    'a device without its selected flag is refused',
    tostring(bad)
  )

  -- 5b. Binary lookup without a setting: the project's environment, then a mason-style install
  --     directory, then PATH (what `pip install xeforge` into a .venv gives is found first).
  do
    local xf = require('xeforge')
    local tmp = vim.fn.tempname()
    local venv_bin = tmp .. '/project/.venv/bin'
    local mason_bin = tmp .. '/data/mason/bin'
    vim.fn.mkdir(venv_bin, 'p')
    vim.fn.mkdir(mason_bin, 'p')
    local saved_data, saved_venv = vim.fn.stdpath, vim.env.VIRTUAL_ENV
    vim.env.VIRTUAL_ENV = nil
    vim.fn.stdpath = function(what)
      return what == 'data' and (tmp .. '/data') or saved_data(what)
    end
    vim.uv.fs_symlink(vim.env.XEFORGE_BIN, mason_bin .. '/xeforge')
    local mason = xf.find_server({}, tmp .. '/project')
    vim.uv.fs_symlink(vim.env.XEFORGE_BIN, venv_bin .. '/xeforge')
    local env = xf.find_server({}, tmp .. '/project')
    local setting = xf.find_server({ server_path = vim.env.XEFORGE_BIN }, tmp .. '/project')
    vim.fn.stdpath, vim.env.VIRTUAL_ENV = saved_data, saved_venv
    check(
      mason.source == 'mason' and mason.path == mason_bin .. '/xeforge',
      'a mason-style install is found before PATH',
      vim.inspect(mason)
    )
    check(
      env.source == 'environment' and env.path == venv_bin .. '/xeforge',
      "the project's .venv comes first",
      vim.inspect(env)
    )
    check(setting.source == 'setting', 'the server_path option wins', vim.inspect(setting))
    vim.fn.delete(tmp, 'rf')
  end

  -- 6. :checkhealth xeforge reports the binary with its version and the Python it found.
  vim.cmd('checkhealth xeforge')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(report:find('xeforge: language server', 1, true) ~= nil, 'checkhealth has the server section')
  check(
    report:find('OK binary: ' .. vim.fn.exepath(vim.env.XEFORGE_BIN), 1, true) ~= nil
      and report:find('xeforge %d+%.%d+') ~= nil,
    'checkhealth shows the binary and its version',
    report
  )
  check(report:find('OK python %d') ~= nil, 'checkhealth found a Python for the harness', report)
  check(
    report:find('torch', 1, true) ~= nil and report:find('triton', 1, true) ~= nil,
    'checkhealth reports torch and triton'
  )
  check(report:find('ERROR', 1, true) == nil, 'checkhealth has no error', report)
  check(
    report:find('xeforge: inline suggestions', 1, true) ~= nil,
    'checkhealth says whether inline suggestions work',
    report
  )
  for line in vim.gsplit(report, '\n') do
    if line:match('^%s*- ') then
      log('     health' .. line)
    end
  end

  -- 7. A stage on a wrapper-style file with no spec: the scalar `alpha` is asked once through
  --    vim.ui.input (scripted here), written above `def scale`, and the same run ends in the
  --    verified edit (on the CPU interpreter: untimed).
  vim.cmd.edit('scale_wrapper.py')
  local wbuf = vim.api.nvim_get_current_buf()
  local asked = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(asked, opts)
    on_confirm('alpha=2.0')
  end
  local wattached = vim.wait(20000, function()
    return #vim.lsp.get_clients({ bufnr = wbuf, name = 'xeforge' }) > 0
      and vim.api.nvim_buf_get_commands(wbuf, {}).XeForgeStage ~= nil
  end, 50)
  if not check(wattached, 'xeforge attached to the wrapper-style file') then
    return
  end
  local krow = line_with(wbuf, 'def scale_kernel')
  vim.api.nvim_win_set_cursor(0, { krow + 1, 0 })
  vim.cmd('XeForgeStage autotune')
  local written = vim.wait(30000, function()
    return line_with(wbuf, '# xeforge: dims alpha=2.0') ~= nil
  end, 100)
  check(
    written and #asked == 1,
    'asked once, the answer written above the entry',
    ('asked %d time(s): %s'):format(#asked, vim.inspect(asked[1]))
  )
  if #asked == 1 then
    check(
      asked[1].default == 'alpha=<value>' and asked[1].prompt:find('alpha', 1, true) ~= nil,
      'the prompt names what is missing and starts from the suggestion',
      vim.inspect(asked[1])
    )
  end
  local arow = line_with(wbuf, '# xeforge: dims alpha=2.0')
  local drow = line_with(wbuf, 'def scale(x, alpha)')
  check(arow ~= nil and drow == arow + 1, 'the line sits directly above `def scale`')
  local tuned = vim.wait(60000, function()
    return line_with(wbuf, '@triton.autotune(') ~= nil
  end, 200)
  check(
    tuned,
    'the same run ended in the verified edit (@triton.autotune)',
    table.concat(vim.api.nvim_buf_get_lines(wbuf, 0, -1, false), '\n')
  )

  -- 8. :XeForgeVerify compiles the (unsaved, tuned) buffer on the harness; on the CPU interpreter
  --    the server says there is no compile metadata, in a window/showMessage (captured on its way).
  local shown = {}
  local show = vim.lsp.handlers['window/showMessage']
  vim.lsp.handlers['window/showMessage'] = function(err, params, ctx, config)
    table.insert(shown, params and params.message or '')
    return show(err, params, ctx, config)
  end
  vim.cmd('XeForgeVerify')
  local said = vim.wait(60000, function()
    return vim.iter(shown):any(function(m)
      return m:find('scale_wrapper.py: correct on cpu', 1, true) ~= nil
        and m:find('no compile metadata on this device (cpu', 1, true) ~= nil
    end)
  end, 100)
  vim.lsp.handlers['window/showMessage'] = show
  check(said, ':XeForgeVerify: the server says the interpreter has no compile metadata', table.concat(shown, ' | '))

  -- 9. :XeForgeReport writes the project's evidence report and opens it (vim.ui.open, captured).
  local opened
  vim.ui.open = function(path)
    opened = path
    return nil, nil
  end
  vim.cmd('XeForgeReport')
  vim.wait(20000, function()
    return opened ~= nil
  end, 100)
  local page = opened and table.concat(vim.fn.readfile(opened), '\n') or ''
  check(
    opened ~= nil and opened:match('%.xeforge/runs/index%.html$') ~= nil and page:find('scale_kernel', 1, true) ~= nil,
    ':XeForgeReport writes the runs index and opens it',
    tostring(opened)
  )
end

function _G.XeForgeE2E()
  local ok, err = xpcall(run, debug.traceback)
  check(ok, 'test ran without a Lua error', err)
  finish()
end
