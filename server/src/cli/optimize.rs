//! `xeforge optimize` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct OptimizeArgs {}

pub fn run(_args: OptimizeArgs) -> u8 {
    eprintln!("xeforge optimize: not built yet");
    2
}
