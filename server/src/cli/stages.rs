//! `xeforge stages` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct StagesArgs {}

pub fn run(_args: StagesArgs) -> u8 {
    eprintln!("xeforge stages: not built yet");
    2
}
