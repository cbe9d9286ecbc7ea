//! `xeforge devices`: the device profiles as an aligned table (or JSON with every source).

use super::rules::{Format, KnowledgeArgs, Table, print_json};
use crate::knowledge::{Device, Fact, Knowledge};

#[derive(Debug, clap::Args)]
pub struct DevicesArgs {
    #[command(flatten)]
    pub knowledge: KnowledgeArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: DevicesArgs) -> u8 {
    let kb = match args.knowledge.load() {
        Ok(kb) => kb,
        Err(code) => return code,
    };
    match args.format {
        Format::Text => print!("{}", render(&kb)),
        Format::Json => print_json(&kb.devices),
    }
    0
}

fn render(kb: &Knowledge) -> String {
    let mut table = Table::new(["id", "name", "arch", "sub-groups", "max WG (large GRF)", "SLM", "fp64", "DPAS", "2D block IO"]);
    // Intel devices first (the checker's subject), then the harness's NVIDIA GPUs.
    let mut devices: Vec<&Device> = kb.devices.iter().collect();
    devices.sort_by_key(|d| (!d.is_intel(), d.id.clone()));
    for d in devices {
        let id = if d.id == kb.default_device { format!("{} *", d.id) } else { d.id.clone() };
        table.row([
            id,
            d.name.clone(),
            d.arch.clone(),
            fact(&d.sub_group_sizes, |v| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")),
            work_group(d),
            fact(&d.slm_bytes, |b| kib(*b)),
            fact(&d.has_fp64, yes_no),
            fact(&d.has_dpas, yes_no),
            fact(&d.has_2d_block_io, yes_no),
        ]);
    }
    format!(
        "{}\n* default device    ? unverified value    - unknown or not applicable\nSources for every value: xeforge devices --format json\n",
        table.render()
    )
}

/// A fact's value, `?`-suffixed when unverified, `-` when unknown.
fn fact<T>(f: &Fact<T>, show: impl Fn(&T) -> String) -> String {
    match f.get() {
        Some(v) if f.verified => show(v),
        Some(v) => format!("{}?", show(v)),
        None => "-".to_string(),
    }
}

fn work_group(d: &Device) -> String {
    let normal = fact(&d.max_work_group_size, u32::to_string);
    match d.max_work_group_size_large_grf.get() {
        Some(_) => format!("{normal} ({})", fact(&d.max_work_group_size_large_grf, u32::to_string)),
        None => normal,
    }
}

fn yes_no(b: &bool) -> String {
    if *b { "yes" } else { "no" }.to_string()
}

fn kib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) { format!("{} KiB", bytes / 1024) } else { format!("{bytes} B") }
}
