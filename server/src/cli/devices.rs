//! `xeforge devices` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct DevicesArgs {}

pub fn run(_args: DevicesArgs) -> u8 {
    eprintln!("xeforge devices: not built yet");
    2
}
