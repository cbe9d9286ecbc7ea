//! `xeforge report RUN.json|DIR [-o OUT.html] [--open]`: a stage run's evidence as one HTML page.

use super::rules::KnowledgeArgs;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// An evidence record (`.xeforge/runs/*.json`) or a directory of them (an index of all runs).
    pub path: PathBuf,
    /// Where to write the page (default: the record's name with `.html`, or `index.html` in the directory).
    #[arg(short = 'o', long = "output", value_name = "OUT.html")]
    pub output: Option<PathBuf>,
    /// Open the page in the default browser once written.
    #[arg(long)]
    pub open: bool,
    #[command(flatten)]
    pub knowledge: KnowledgeArgs,
}

pub fn run(args: ReportArgs) -> u8 {
    let kb = match args.knowledge.load() {
        Ok(kb) => kb,
        Err(code) => return code,
    };
    let runs = match crate::report::load(&args.path) {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let out = args.output.clone().unwrap_or_else(|| default_output(&args.path));
    if let Err(e) = std::fs::write(&out, crate::report::render(&runs, &kb)) {
        eprintln!("error: {}: {e}", out.display());
        return 2;
    }
    println!("{}", out.display());
    if args.open {
        open(&out);
    }
    0
}

fn default_output(path: &Path) -> PathBuf {
    if path.is_dir() { path.join("index.html") } else { path.with_extension("html") }
}

/// The platform's opener; a failure to open is reported, the page is still written.
fn open(page: &Path) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(page).spawn() {
        eprintln!("note: could not open {} with {opener}: {e}", page.display());
    }
}
