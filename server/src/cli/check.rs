//! `xeforge check` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct CheckArgs {}

pub fn run(_args: CheckArgs) -> u8 {
    eprintln!("xeforge check: not built yet");
    2
}
