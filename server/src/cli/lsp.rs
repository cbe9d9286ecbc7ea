//! `xeforge lsp`: run the language server over stdio.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct LspArgs {
    /// Print the version and exit.
    #[arg(long)]
    pub version: bool,
    /// Write logs to this file (they also go to the client through window/logMessage).
    #[arg(long, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// Log level filter (error, warn, info, debug, trace); overrides XEFORGE_LOG.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Accepted for editors that pass it by habit; stdio is the only transport.
    #[arg(long, hide = true)]
    pub stdio: bool,
}

pub fn run(args: LspArgs) -> u8 {
    if args.version {
        println!("xeforge-lsp {}", env!("CARGO_PKG_VERSION"));
        return 0;
    }
    if let Err(e) = init_logging(&args) {
        eprintln!("error: {e}");
        return 2;
    }
    // Before any thread of the runtime allocates (see lsp::heap).
    crate::lsp::heap::limit_arenas(2);
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return 2;
        }
    };
    // Stage actions, lenses and `xeforge.runStage` run the CoVeR stages on the configured harness.
    let stage: std::sync::Arc<dyn crate::lsp::stage::StageActionProvider> =
        std::sync::Arc::new(crate::cover::lsp_provider::CoverStageProvider::new());
    let opts = crate::lsp::ServeOptions { stage: Some(stage), exit_process: true };
    runtime.block_on(crate::lsp::serve(tokio::io::stdin(), tokio::io::stdout(), opts));
    // stdin closed without `exit`: the spec asks for status 1 unless shutdown was requested, but a
    // closed pipe is also how some clients stop; both are quiet ends.
    0
}

fn init_logging(args: &LspArgs) -> Result<(), String> {
    use tracing_subscriber::EnvFilter;
    let filter = match &args.log_level {
        Some(l) => EnvFilter::try_new(l).map_err(|e| format!("--log-level: {e}"))?,
        None => EnvFilter::try_from_env("XEFORGE_LOG").unwrap_or_else(|_| EnvFilter::new("info")),
    };
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(false);
    // stdout carries the protocol: logs go to the file or stderr, never stdout.
    let result = match &args.log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("--log-file {}: {e}", path.display()))?;
            builder.with_writer(std::sync::Mutex::new(file)).try_init()
        }
        None => builder.with_writer(std::io::stderr).try_init(),
    };
    result.map_err(|e| format!("logging: {e}"))
}
