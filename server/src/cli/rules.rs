//! `xeforge rules` (under construction; owned by its feature's module).

#[derive(Debug, clap::Args)]
pub struct RulesArgs {}

pub fn run(_args: RulesArgs) -> u8 {
    eprintln!("xeforge rules: not built yet");
    2
}
