//! `xeforge lsp` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct LspArgs {}

pub fn run(_args: LspArgs) -> u8 {
    eprintln!("xeforge lsp: not built yet");
    2
}
