//! Command-line entry: one file per subcommand.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub mod check;
pub mod devices;
pub mod explain;
pub mod lsp;
pub mod optimize;
pub mod report;
pub mod rules;
pub mod spec;
pub mod stage;
pub mod stages;
pub mod verify;

#[derive(Debug, Parser)]
#[command(name = "xeforge", version, about = "Hardware-aware Triton kernel checker and verified optimiser for Intel GPUs")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check Triton kernels in files or directories.
    Check(check::CheckArgs),
    /// List the rules.
    Rules(rules::RulesArgs),
    /// Show a rule's documentation.
    Explain(explain::ExplainArgs),
    /// List the device profiles.
    Devices(devices::DevicesArgs),
    /// List the optimisation stages.
    Stages(stages::StagesArgs),
    /// Run the language server over stdio.
    Lsp(lsp::LspArgs),
    /// Verify a kernel file on the harness (self-check).
    Verify(verify::VerifyArgs),
    /// Draft a harness spec (`<kernel>.yaml`) for a kernel file.
    Spec(spec::SpecArgs),
    /// Run one optimisation stage on a kernel, verified on the harness.
    Stage(stage::StageArgs),
    /// Run the stages the analysis selects, in dependency order, each verified.
    Optimize(optimize::OptimizeArgs),
    /// Write a stage run's evidence (or a directory of runs) as one self-contained HTML page.
    Report(report::ReportArgs),
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            // clap uses 0 for --help/--version and 2 for usage errors, as docs/rules.md wants.
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    let code = match cli.command {
        Command::Check(a) => check::run(a),
        Command::Rules(a) => rules::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Devices(a) => devices::run(a),
        Command::Stages(a) => stages::run(a),
        Command::Lsp(a) => lsp::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Spec(a) => spec::run(a),
        Command::Stage(a) => stage::run(a),
        Command::Optimize(a) => optimize::run(a),
        Command::Report(a) => report::run(a),
    };
    ExitCode::from(code)
}

/// Stages, `verify`, `spec` and `optimize` run a kernel file on the harness, which imports it as a
/// Python module: a notebook is not one. `check` reads notebooks; these say what to do instead.
pub(crate) fn refuse_notebook(command: &str, path: &std::path::Path) -> Option<u8> {
    if !crate::workspace::is_notebook(path) {
        return None;
    }
    eprintln!(
        "xeforge {command}: {}: a notebook cannot be run on the harness (it imports a Python module); \
         `xeforge check` reads notebooks, and `jupyter nbconvert --to script` makes a .py of one for {command}",
        path.display()
    );
    Some(2)
}
