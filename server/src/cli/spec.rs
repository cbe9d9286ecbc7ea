//! `xeforge spec` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct SpecArgs {}

pub fn run(_args: SpecArgs) -> u8 {
    eprintln!("xeforge spec: not built yet");
    2
}
