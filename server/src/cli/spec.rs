//! `xeforge spec FILE`: draft `<kernel>.yaml` beside the kernel file, TODOs where unknown.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct SpecArgs {
    pub file: PathBuf,
    /// Where to write (default: `<file stem>.yaml` beside the file; `-` for stdout).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Overwrite an existing spec.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: SpecArgs) -> u8 {
    if let Some(code) = super::refuse_notebook("spec", &args.file) {
        return code;
    }
    let text = match std::fs::read_to_string(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("xeforge spec: {}: {e}", args.file.display());
            return 2;
        }
    };
    let yaml = crate::cover::spec::draft_file(&args.file, &text);
    let out = args.output.clone().unwrap_or_else(|| args.file.with_extension("yaml"));
    if out.as_os_str() == "-" {
        print!("{yaml}");
        return 0;
    }
    if out.exists() && !args.force {
        eprintln!("xeforge spec: {} exists; not overwriting it without --force", out.display());
        return 1;
    }
    if let Err(e) = std::fs::write(&out, yaml) {
        eprintln!("xeforge spec: {}: {e}", out.display());
        return 2;
    }
    let todos = std::fs::read_to_string(&out).map(|t| t.matches("TODO").count()).unwrap_or(0);
    println!("wrote {} ({todos} TODO{} to complete)", out.display(), if todos == 1 { "" } else { "s" });
    0
}
