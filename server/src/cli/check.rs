//! `xeforge check PATH...`: discover files, resolve each one's config, analyse in parallel, print.
//!
//! Exit status (docs/rules.md): 0 no error-severity diagnostic, 1 some, 2 usage or I/O error (I/O wins).

use crate::analysis;
use crate::config::{ConfigFile, ConfigResolver, Settings};
use crate::fix;
use crate::knowledge::{Knowledge, Severity};
use crate::lint::Diagnostic;
use crate::notebook::{self, Concat, Notebook};
use crate::output::{self, Counts, FileResult, Format};
use crate::package::{Modules, RunDisk};
use crate::timings::Phase;
use crate::workspace::{self, io_reason};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// Files or directories to check (default: the current directory).
    pub paths: Vec<PathBuf>,
    /// Target device ("arc-pro-b70"); see `xeforge devices`.
    #[arg(long)]
    pub device: Option<String>,
    /// Target toolchain ("xpu-3.7", "cuda").
    #[arg(long)]
    pub toolchain: Option<String>,
    /// Rule codes, prefixes or names to enable (comma-separated); replaces the config's list.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Option<Vec<String>>,
    /// Rule codes, prefixes or names to disable (comma-separated); replaces the config's list.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Option<Vec<String>>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Apply safe fixes and write the files.
    #[arg(long)]
    pub fix: bool,
    /// With --fix or --diff, also apply unsafe fixes.
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print the fixes as a unified diff instead of writing them.
    #[arg(long, conflicts_with = "fix")]
    pub diff: bool,
    /// Print the number of diagnostics per rule instead of each diagnostic.
    #[arg(long)]
    pub statistics: bool,
    /// Exit with 0 even when error-severity diagnostics were found.
    #[arg(long)]
    pub exit_zero: bool,
    /// Knowledge overlay directory (devices, toolchains, rules) added over the embedded one.
    #[arg(long, value_name = "DIR")]
    pub knowledge: Option<PathBuf>,
    /// Use this config file for every path instead of discovering pyproject.toml / xeforge.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the kernels found per file as JSON instead of diagnostics (for corpus checks).
    #[arg(long, hide = true)]
    pub show_kernels: bool,
}

/// What happened to one file.
enum Outcome {
    Checked {
        result: FileResult,
        kernels: Vec<String>,
        fixed: usize,
        diff: Option<String>,
    },
    /// Not a Triton file, or binary: nothing to report (binary gets a note).
    Skipped {
        note: Option<String>,
    },
    /// I/O, encoding, config or usage error, already phrased for `error: ...`.
    Failed(String),
}

pub fn run(args: CheckArgs) -> u8 {
    match Checker::new(&args) {
        Ok(c) => c.run(&args),
        Err(msg) => {
            eprintln!("error: {msg}");
            2
        }
    }
}

struct Checker {
    resolver: Arc<ConfigResolver>,
    /// The CLI flags as a settings layer over every config file.
    cli: Settings,
    /// Knowledge bases by overlay directory (None = embedded), loaded once each.
    kbs: Mutex<HashMap<Option<PathBuf>, Result<Arc<Knowledge>, String>>>,
    /// Errors that would repeat for every file (a broken config, an unknown device): printed once.
    reported: Mutex<BTreeSet<String>>,
    /// Models of the files checked or imported, each parsed once per run.
    modules: Modules,
    /// The file system as this run sees it (package lookups stat each path once).
    files: RunDisk,
}

impl Checker {
    fn new(args: &CheckArgs) -> Result<Checker, String> {
        let resolver = match &args.config {
            Some(path) => ConfigResolver::fixed(ConfigFile::load(path).map_err(|e| e.to_string())?),
            None => ConfigResolver::new(),
        };
        let cli = Settings {
            device: args.device.clone(),
            toolchain: args.toolchain.clone(),
            select: args.select.clone(),
            ignore: args.ignore.clone(),
            knowledge: args.knowledge.as_ref().map(|k| std::path::absolute(k).unwrap_or_else(|_| k.clone())),
            ..Settings::default()
        };
        for list in [&cli.select, &cli.ignore].into_iter().flatten() {
            let unknown = crate::lint::unknown_selectors(list);
            if !unknown.is_empty() {
                return Err(format!("unknown rule selector(s): {} (see `xeforge rules`)", unknown.join(", ")));
            }
        }
        Ok(Checker {
            resolver: Arc::new(resolver),
            cli,
            kbs: Mutex::default(),
            reported: Mutex::default(),
            modules: Modules::for_check(),
            files: RunDisk::default(),
        })
    }

    fn run(&self, args: &CheckArgs) -> u8 {
        let paths = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
        crate::timings::init_from_env();
        let discover = crate::timings::span(Phase::Discover);
        let found = workspace::discover_files(&paths, &self.resolver);
        drop(discover);
        let mut io_error = false;
        for e in &found.errors {
            eprintln!("error: {}: {}", e.path.display(), e.message);
            io_error = true;
        }

        let outcomes: Vec<(PathBuf, Outcome)> = found.files.par_iter().map(|p| (p.clone(), self.check_file(p, args))).collect();

        let mut results = Vec::new();
        let mut kernels: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let (mut fixed, mut diffs) = (0, String::new());
        for (path, outcome) in outcomes {
            match outcome {
                Outcome::Checked { result, kernels: k, fixed: n, diff } => {
                    fixed += n;
                    if let Some(d) = diff {
                        diffs.push_str(&d);
                    }
                    kernels.insert(result.display.clone(), k);
                    results.push(result);
                }
                Outcome::Skipped { note: Some(n) } => eprintln!("note: {}: {n}", display_path(&path)),
                Outcome::Skipped { note: None } => {}
                Outcome::Failed(msg) => {
                    eprintln!("error: {msg}");
                    io_error = true;
                }
            }
        }
        let output = crate::timings::span(Phase::Output);
        results.sort_by(|a, b| a.display.cmp(&b.display));

        let counts = Counts::of(&results);
        // Buffered: a locked stdout is line-buffered, and the JSON output is a write per line.
        let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let written = if args.show_kernels {
            write_kernels(&kernels, &mut stdout)
        } else if args.diff {
            write_diff(&diffs, fixed, &mut stdout)
        } else if args.statistics {
            write_statistics(&results, args.format, &mut stdout)
        } else {
            self.write_report(&results, &counts, fixed, args, &mut stdout)
        };
        // A closed pipe (`| head`) is not a failure of the check.
        if let Err(e) = written.and_then(|_| stdout.flush())
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            eprintln!("error: writing output: {}", io_reason(&e));
            return 2;
        }
        drop(output);
        if let Some(table) = crate::timings::report() {
            eprint!("{table}");
        }

        if io_error {
            2
        } else if args.diff {
            u8::from(fixed > 0 && !args.exit_zero)
        } else if counts.errors > 0 && !args.exit_zero {
            1
        } else {
            0
        }
    }

    fn write_report(
        &self,
        results: &[FileResult],
        counts: &Counts,
        fixed: usize,
        args: &CheckArgs,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        match args.format {
            Format::Json => output::json::render(results, out),
            Format::Github => output::github::render(results, out),
            Format::Sarif => {
                let kb = self.knowledge(&self.cli.knowledge).unwrap_or_else(|_| Arc::new(Knowledge::embedded().clone()));
                output::sarif::render(results, &kb, out)
            }
            Format::Text => {
                output::text::render(results, output::text::TextOptions::for_stdout(), out)?;
                if fixed > 0 {
                    writeln!(out, "Fixed {fixed} {}.", if fixed == 1 { "problem" } else { "problems" })?;
                }
                if fixed == 0 || counts.total() > 0 {
                    let summary = output::text::summary(counts);
                    if fixed > 0 { writeln!(out, "{summary} remaining.") } else { writeln!(out, "{summary}") }
                } else {
                    Ok(())
                }
            }
        }
    }

    fn check_file(&self, path: &Path, args: &CheckArgs) -> Outcome {
        let read = crate::timings::span(Phase::Read);
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => return Outcome::Failed(format!("{}: {}", display_path(path), io_reason(&e))),
        };
        if bytes[..bytes.len().min(8192)].contains(&0) {
            return Outcome::Skipped { note: Some("binary file skipped".into()) };
        }
        // Cheap pre-filter before decoding and config lookup: a kernel file always names triton.
        if !contains(&bytes, b"triton") {
            return Outcome::Skipped { note: None };
        }
        let shown = display_path(path);
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                return Outcome::Failed(format!("{shown}: not valid UTF-8 (invalid byte at offset {at})"));
            }
        };
        let (kb, opts) = match self.setup(path) {
            Ok(s) => s,
            Err(outcome) => return outcome,
        };
        drop(read);
        if workspace::is_notebook(path) {
            return self.check_notebook(path, shown, text, &kb, &opts, args);
        }
        let place = analysis::Place { path, files: &self.files, modules: &self.modules };
        let analyse = |t: &str| analysis::analyze_at(t, place, &kb, &opts);
        let mut analysis = match analyse(&text) {
            Ok(a) => a,
            Err(e) => return self.once(e.to_string()),
        };

        let (mut fixed, mut diff, mut source) = (0, None, text);
        if (args.fix || args.diff) && analysis.diagnostics.iter().any(|d| d.fix.is_some()) {
            let r = fix::apply_until_stable(&source, args.unsafe_fixes, |t| analyse(t).map(|a| a.diagnostics).unwrap_or_default());
            if r.text != source {
                fixed = r.applied;
                if args.diff {
                    diff = Some(unified_diff(&shown, &source, &r.text));
                } else {
                    if let Err(e) = std::fs::write(path, &r.text) {
                        return Outcome::Failed(format!("{shown}: cannot write fixes: {}", io_reason(&e)));
                    }
                    source = r.text;
                    match analyse(&source) {
                        Ok(a) => analysis = a,
                        Err(e) => return self.once(e.to_string()),
                    }
                }
            }
        }
        let kernels = analysis.model.kernels.iter().map(|k| k.qualified_name.clone()).collect();
        let diagnostics: Vec<Diagnostic> = analysis.diagnostics;
        Outcome::Checked { result: FileResult::new(path.to_path_buf(), shown, source, diagnostics), kernels, fixed, diff }
    }

    /// The knowledge base and lint options for `path` (its config under the CLI flags), or why not.
    fn setup(&self, path: &Path) -> Result<(Arc<Knowledge>, crate::lint::LintOptions), Outcome> {
        let settings = match self.resolver.resolve(path) {
            Ok(Some(cfg)) => cfg.settings.clone().merge(self.cli.clone()),
            Ok(None) => self.cli.clone(),
            Err(e) => return Err(self.once(e.to_string())),
        };
        for list in [&settings.select, &settings.ignore].into_iter().flatten() {
            let unknown = crate::lint::unknown_selectors(list);
            if !unknown.is_empty() {
                let from = self.resolver.resolve(path).ok().flatten().map(|c| c.path.display().to_string());
                return Err(self.once(format!(
                    "{}: unknown rule selector(s): {}",
                    from.unwrap_or_else(|| "command line".into()),
                    unknown.join(", ")
                )));
            }
        }
        let kb = self.knowledge(&settings.knowledge).map_err(|e| self.once(e))?;
        Ok((kb, settings.lint_options(path)))
    }

    /// A notebook: its Python cells analysed as one file, positions reported per cell, fixes written
    /// back into the cells' `source` only (`notebook`).
    fn check_notebook(
        &self,
        path: &Path,
        shown: String,
        text: String,
        kb: &Knowledge,
        opts: &crate::lint::LintOptions,
        args: &CheckArgs,
    ) -> Outcome {
        let nb = match Notebook::parse(text) {
            Ok(nb) => nb,
            Err(e) => return Outcome::Failed(format!("{shown}: {e}")),
        };
        let place = analysis::Place { path, files: &self.files, modules: &self.modules };
        let analyse = |t: &str| analysis::analyze_at(t, place, kb, opts);
        let mut cells: Vec<(usize, String)> = nb.python_cells().into_iter().map(|(i, s)| (i, s.to_string())).collect();
        let mut concat = Concat::build(cells.iter().map(|(i, s)| (*i, s.as_str())));
        let mut analysis = match analyse(&concat.text) {
            Ok(a) => a,
            Err(e) => return self.once(e.to_string()),
        };

        let (mut fixed, mut diff) = (0, None);
        if (args.fix || args.diff) && analysis.diagnostics.iter().any(|d| d.fix.is_some()) {
            let r = notebook::fix::apply_until_stable(cells.clone(), args.unsafe_fixes, |t| {
                analyse(t).map(|a| a.diagnostics).unwrap_or_default()
            });
            let changed: Vec<(usize, String)> =
                r.cells.iter().zip(&cells).filter(|(new, old)| new.1 != old.1).map(|(new, _)| new.clone()).collect();
            if !changed.is_empty() {
                fixed = r.applied;
                if args.diff {
                    let before = |i: usize| cells.iter().find(|(j, _)| *j == i).map_or("", |(_, s)| s.as_str());
                    diff = Some(
                        changed.iter().map(|(i, after)| unified_diff(&format!("{shown}:cell {}", i + 1), before(*i), after)).collect(),
                    );
                } else {
                    if let Err(e) = std::fs::write(path, nb.with_sources(&changed)) {
                        return Outcome::Failed(format!("{shown}: cannot write fixes: {}", io_reason(&e)));
                    }
                    cells = r.cells;
                    concat = Concat::build(cells.iter().map(|(i, s)| (*i, s.as_str())));
                    match analyse(&concat.text) {
                        Ok(a) => analysis = a,
                        Err(e) => return self.once(e.to_string()),
                    }
                }
            }
        }
        let kernels = analysis.model.kernels.iter().map(|k| k.qualified_name.clone()).collect();
        let result = FileResult::new(path.to_path_buf(), shown, concat.original, analysis.diagnostics).in_cells(concat.parts);
        Outcome::Checked { result, kernels, fixed, diff }
    }

    /// Report `msg` the first time only; every file hits it, but once is enough to read.
    fn once(&self, msg: String) -> Outcome {
        let first = self.reported.lock().unwrap_or_else(|p| p.into_inner()).insert(msg.clone());
        if first { Outcome::Failed(msg) } else { Outcome::Skipped { note: None } }
    }

    fn knowledge(&self, overlay: &Option<PathBuf>) -> Result<Arc<Knowledge>, String> {
        let mut kbs = self.kbs.lock().unwrap_or_else(|p| p.into_inner());
        kbs.entry(overlay.clone())
            .or_insert_with(|| match overlay {
                None => Ok(Arc::new(Knowledge::embedded().clone())),
                Some(dir) => {
                    Knowledge::embedded().with_overlay(dir).map(Arc::new).map_err(|e| format!("knowledge overlay {}: {e}", dir.display()))
                }
            })
            .clone()
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// Relative to the working directory when below it, `/`-separated: what users, JSON and SARIF see.
pub fn display_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| abs.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| path.to_path_buf());
    let s = shown.to_string_lossy().replace('\\', "/");
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}

fn unified_diff(name: &str, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

fn write_diff(diffs: &str, fixed: usize, out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(diffs.as_bytes())?;
    if fixed > 0 {
        eprintln!("Would fix {fixed} {}.", if fixed == 1 { "problem" } else { "problems" });
    } else {
        eprintln!("No fixes available.");
    }
    Ok(())
}

fn write_kernels(kernels: &BTreeMap<String, Vec<String>>, out: &mut dyn Write) -> std::io::Result<()> {
    let rows: Vec<serde_json::Value> = kernels.iter().map(|(file, ks)| serde_json::json!({ "filename": file, "kernels": ks })).collect();
    serde_json::to_writer_pretty(&mut *out, &rows).map_err(std::io::Error::other)?;
    writeln!(out)
}

/// `--statistics`: count per rule, most frequent first (then by code), like `ruff --statistics`.
fn write_statistics(results: &[FileResult], format: Format, out: &mut dyn Write) -> std::io::Result<()> {
    struct Row {
        code: &'static str,
        name: &'static str,
        severity: Severity,
        count: usize,
        fixable: usize,
    }
    let mut rows: BTreeMap<&'static str, Row> = BTreeMap::new();
    for d in results.iter().flat_map(|f| &f.diagnostics) {
        let r = rows.entry(d.code).or_insert(Row { code: d.code, name: d.name, severity: d.severity, count: 0, fixable: 0 });
        r.count += 1;
        r.severity = r.severity.max(d.severity);
        r.fixable += usize::from(d.fix.is_some());
    }
    let mut rows: Vec<Row> = rows.into_values().collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.code.cmp(b.code)));
    if format == Format::Json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({ "code": r.code, "name": r.name, "severity": r.severity.as_str(),
                                    "count": r.count, "fixable": r.fixable })
            })
            .collect();
        serde_json::to_writer_pretty(&mut *out, &v).map_err(std::io::Error::other)?;
        return writeln!(out);
    }
    let width = rows.iter().map(|r| r.count.to_string().len()).max().unwrap_or(1);
    for r in &rows {
        let mark = if r.fixable > 0 { "[*] " } else { "    " };
        writeln!(out, "{:>width$}\t{}\t{mark}{} ({})", r.count, r.code, r.name, r.severity.as_str())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_paths_are_relative_and_slash_separated() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(display_path(&cwd.join("a").join("b.py")), "a/b.py");
        assert_eq!(display_path(Path::new("./c.py")), "c.py");
        assert_eq!(display_path(Path::new("/definitely/elsewhere.py")), "/definitely/elsewhere.py");
    }

    #[test]
    fn diffs_name_both_sides() {
        let d = unified_diff("k.py", "a\nnum_warps=6\n", "a\nnum_warps=8\n");
        assert!(d.starts_with("--- a/k.py\n+++ b/k.py\n"), "{d}");
        assert!(d.contains("-num_warps=6\n+num_warps=8\n"), "{d}");
    }
}
