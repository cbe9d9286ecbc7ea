//! `xeforge explain` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {}

pub fn run(_args: ExplainArgs) -> u8 {
    eprintln!("xeforge explain: not built yet");
    2
}
