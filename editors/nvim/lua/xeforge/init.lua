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
---@field harness? { python?: string, url?: string }
---@field enable? boolean        call vim.lsp.enable (default true)

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
    harness = { python = nonempty(harness.python), url = nonempty(harness.url) },
  }
end

--- The server command from the options: `cmd`, else `server_path`, else xeforge on PATH.
---@param opts xeforge.Options
---@return string[]
function M.server_cmd(opts)
  if opts.cmd then
    return opts.cmd
  end
  local bin = opts.server_path and vim.fn.expand(opts.server_path) or vim.g.xeforge_server_path or 'xeforge'
  return { bin, 'lsp' }
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
