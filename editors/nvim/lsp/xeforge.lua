-- Neovim 0.11+ config for the xeforge language server, found on 'runtimepath' by
-- vim.lsp.config / vim.lsp.enable:
--
--   vim.lsp.enable('xeforge')                      -- defaults below
--   require('xeforge').setup({ device = 'max-1550' }) -- same, with settings
--
-- The server reads `init_options` at start and answers `workspace/configuration` for the
-- section `xeforge` from `settings.xeforge`, so both carry the same table.
local settings = {
  lint = { run = 'onType' },
}

---@type vim.lsp.Config
return {
  -- setting, project environment, mason, PATH: see require('xeforge').find_server
  cmd = require('xeforge').server_cmd({}),
  filetypes = { 'python' },
  root_markers = { 'xeforge.toml', 'pyproject.toml', '.git' },
  init_options = settings,
  settings = { xeforge = settings },
  handlers = {
    -- A stage asks for sizes the code does not give (see :help xeforge-stage).
    ['xeforge/askProblem'] = function(...)
      return require('xeforge.commands').ask_problem(...)
    end,
  },
}
