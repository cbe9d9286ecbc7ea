-- xeforge for Neovim: setup() merges the user's options into the `xeforge` LSP config and
-- enables it. Options mirror the server's editor settings (see :h xeforge-settings).
local M = {}

---@class xeforge.Options
---@field cmd? string[]          server command (default { 'xeforge', 'lsp' })
---@field server_path? string    path to the binary, when cmd is not given
---@field device? string
---@field toolchain? string
---@field lint? { run?: 'onType'|'onSave' }
---@field llm? { url?: string, model?: string, apiKeyEnv?: string }
---@field harness? { python?: string, url?: string, tokenEnv?: string }
---@field enable? boolean        call vim.lsp.enable (default true)
---@field inline? { enable?: boolean, accept?: string|false }  inline suggestions (Neovim 0.12+)

--- Settings in the shape the server reads (camelCase, nested), without unset values.
---@param opts xeforge.Options
---@return table
function M.server_settings(opts)
  local function nonempty(v)
    if type(v) == 'string' and v ~= '' then
      return v
    end
  end
  local lint = opts.lint or {}
  local llm = opts.llm or {}
  local harness = opts.harness or {}
  return {
    device = nonempty(opts.device),
    toolchain = nonempty(opts.toolchain),
    lint = { run = (lint.run == 'onSave') and 'onSave' or 'onType' },
    llm = { url = nonempty(llm.url), model = nonempty(llm.model), apiKeyEnv = nonempty(llm.apiKeyEnv) },
    harness = { python = nonempty(harness.python), url = nonempty(harness.url), tokenEnv = nonempty(harness.tokenEnv) },
  }
end

--- The places a binary is looked for, in order, as ruff's clients do: the `server_path` option
--- (or `g:xeforge_server_path`), the project's Python environment (`$VIRTUAL_ENV`, `.venv`, `venv`
--- in the working directory: `pip install xeforge` puts the binary there), a mason-style install
--- directory (`stdpath('data')/mason/bin`), then PATH.
---@param opts? xeforge.Options
---@param root? string  project directory (default: the working directory)
---@return { path: string?, source: string, tried: string[] }
function M.find_server(opts, root)
  opts = opts or {}
  local configured = opts.server_path or vim.g.xeforge_server_path
  if configured and configured ~= '' then
    -- An explicit setting is used as given, never silently replaced by another binary.
    return { path = vim.fn.expand(configured), source = 'setting', tried = { configured } }
  end
  local exe = vim.fn.has('win32') == 1 and 'xeforge.exe' or 'xeforge'
  local bin = vim.fn.has('win32') == 1 and 'Scripts' or 'bin'
  root = root or vim.fn.getcwd()
  local places = {}
  if vim.env.VIRTUAL_ENV and vim.env.VIRTUAL_ENV ~= '' then
    table.insert(places, { vim.fs.joinpath(vim.env.VIRTUAL_ENV, bin, exe), 'environment' })
  end
  for _, venv in ipairs({ '.venv', 'venv' }) do
    table.insert(places, { vim.fs.joinpath(root, venv, bin, exe), 'environment' })
  end
  table.insert(places, { vim.fs.joinpath(vim.fn.stdpath('data'), 'mason', 'bin', exe), 'mason' })
  local tried = {}
  for _, place in ipairs(places) do
    table.insert(tried, place[1])
    if vim.fn.executable(place[1]) == 1 then
      return { path = place[1], source = place[2], tried = tried }
    end
  end
  table.insert(tried, exe .. ' on PATH')
  local on_path = vim.fn.exepath(exe)
  return { path = on_path ~= '' and on_path or nil, source = 'path', tried = tried }
end

--- The server command from the options: `cmd`, else the first binary `find_server` finds (or
--- plain `xeforge`, which fails to start with Neovim's own message; :checkhealth xeforge says why).
---@param opts xeforge.Options
---@return string[]
function M.server_cmd(opts)
  if opts.cmd then
    return opts.cmd
  end
  return { M.find_server(opts).path or 'xeforge', 'lsp' }
end

---@type xeforge.Options
M.options = {}

---@param opts? xeforge.Options
function M.setup(opts)
  opts = opts or {}
  M.options = opts
  local settings = M.server_settings(opts)
  vim.lsp.config('xeforge', {
    cmd = M.server_cmd(opts),
    init_options = settings,
    settings = { xeforge = settings },
  })
  if opts.enable ~= false then
    vim.lsp.enable('xeforge')
  end
end

--- Whether this Neovim has LSP inline completion (`vim.lsp.inline_completion`, Neovim 0.12+).
---@return boolean
function M.has_inline()
  local ic = vim.lsp.inline_completion
  return type(ic) == 'table' and type(ic.enable) == 'function' and type(ic.get) == 'function'
end

--- Inline suggestions for a buffer the server attached to: a finding's fix or a verified stage
--- result, as ghost text at the config list or launch under the cursor, accepted with one key
--- (`inline.accept`, default <Tab>; a plain <Tab> when nothing is shown). Where Neovim lacks
--- `vim.lsp.inline_completion` nothing is set up (:checkhealth xeforge says so).
---@param client vim.lsp.Client
---@param bufnr integer
---@return boolean enabled
function M.attach_inline(client, bufnr)
  local opts = M.options.inline or {}
  if opts.enable == false or not M.has_inline() then
    return false
  end
  if not client:supports_method('textDocument/inlineCompletion', bufnr) then
    return false
  end
  vim.lsp.inline_completion.enable(true, { bufnr = bufnr, client_id = client.id })
  local key = opts.accept == nil and '<Tab>' or opts.accept
  if key then
    vim.keymap.set('i', key, function()
      if not vim.lsp.inline_completion.get({ bufnr = bufnr }) then
        return key
      end
    end, { buffer = bufnr, expr = true, desc = 'xeforge: accept the inline suggestion' })
  end
  return true
end

--- Changes a setting at run time and tells the running servers (they re-lint open files).
---@param key string  e.g. 'device', 'lint.run'
---@param value any
function M.set(key, value)
  local path = vim.split(key, '.', { plain = true })
  for _, client in ipairs(vim.lsp.get_clients({ name = 'xeforge' })) do
    client.settings = client.settings or {}
    client.settings.xeforge = client.settings.xeforge or {}
    local t = client.settings.xeforge
    for i = 1, #path - 1 do
      t[path[i]] = t[path[i]] or {}
      t = t[path[i]]
    end
    t[path[#path]] = value
    client:notify('workspace/didChangeConfiguration', { settings = client.settings })
  end
end

return M
