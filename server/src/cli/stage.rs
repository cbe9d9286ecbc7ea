//! `xeforge stage` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct StageArgs {}

pub fn run(_args: StageArgs) -> u8 {
    eprintln!("xeforge stage: not built yet");
    2
}
