-- Buffer-local commands for every buffer the xeforge server attaches to, whether it was
-- started by require('xeforge').setup() or by a plain vim.lsp.enable('xeforge').
if vim.g.loaded_xeforge then
  return
end
vim.g.loaded_xeforge = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.notify_once('xeforge.nvim needs Neovim 0.11 or newer', vim.log.levels.WARN)
  return
end

vim.api.nvim_create_autocmd('LspAttach', {
  group = vim.api.nvim_create_augroup('xeforge.attach', { clear = true }),
  callback = function(args)
    local client = vim.lsp.get_client_by_id(args.data.client_id)
    if client and client.name == 'xeforge' then
      require('xeforge.commands').attach(args.buf)
      require('xeforge').attach_inline(client, args.buf)
    end
  end,
})
