//! `xeforge verify` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {}

pub fn run(_args: VerifyArgs) -> u8 {
    eprintln!("xeforge verify: not built yet");
    2
}
