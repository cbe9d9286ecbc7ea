//! Where the time of a `xeforge check` run goes, per phase, summed over threads (each thread's CPU
//! time, so that a loaded machine's waits do not count): set `XEFORGE_TIMINGS=1` and the table goes
//! to stderr at the end of the run. Off by default, when each [`span`] costs one relaxed load of a flag.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// The phases, in the order of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Walking the paths given into the list of files.
    Discover,
    /// Reading each file, the pre-filters, decoding, config lookup.
    Read,
    /// tree-sitter's parse.
    Parse,
    /// Copying the tree into the flat array.
    Flat,
    /// The model built from the flat tree.
    Model,
    /// Dropping tree-sitter trees.
    Drop,
    /// Following imports to other files (their parse and build count under those phases too).
    Imports,
    /// The rules.
    Lint,
    /// Sorting and printing the results.
    Output,
}

const PHASES: [(Phase, &str); 9] = [
    (Phase::Discover, "discover"),
    (Phase::Read, "read"),
    (Phase::Parse, "parse"),
    (Phase::Flat, "flat copy"),
    (Phase::Model, "model"),
    (Phase::Drop, "tree drop"),
    (Phase::Imports, "imports"),
    (Phase::Lint, "lint"),
    (Phase::Output, "output"),
];

static NANOS: [AtomicU64; 9] = [const { AtomicU64::new(0) }; 9];
static BYTES_PARSED: AtomicU64 = AtomicU64::new(0);
static FILES_PARSED: AtomicU64 = AtomicU64::new(0);
static ON: AtomicBool = AtomicBool::new(false);
static START: OnceLock<Instant> = OnceLock::new();

/// Turns the counters on when `XEFORGE_TIMINGS` is set (called once, at the start of a run).
pub fn init_from_env() {
    if std::env::var_os("XEFORGE_TIMINGS").is_some_and(|v| !v.is_empty() && v != "0") {
        ON.store(true, Ordering::Relaxed);
        START.get_or_init(Instant::now);
    }
}

#[inline]
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// This thread's CPU time, in nanoseconds (wall time where there is no such clock).
fn now() -> u64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid clock id and a pointer to a live timespec.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        }
    }
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

thread_local! {
    /// The spans open on this thread, innermost last, with when each last resumed: time counts for
    /// the innermost one only (an import's parse counts as parse, not as imports).
    static OPEN: std::cell::RefCell<Vec<(usize, u64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn add(i: usize, since: u64, now: u64) {
    NANOS[i].fetch_add(now.saturating_sub(since), Ordering::Relaxed);
}

/// Adds the time until the returned guard drops to `phase`, less that of spans opened inside it.
#[inline]
pub fn span(phase: Phase) -> Span {
    if !enabled() {
        return Span { on: false };
    }
    let i = PHASES.iter().position(|(p, _)| *p == phase).unwrap_or(0);
    let now = now();
    OPEN.with(|open| {
        let mut open = open.borrow_mut();
        if let Some(&(outer, since)) = open.last() {
            add(outer, since, now);
        }
        open.push((i, now));
    });
    Span { on: true }
}

/// One parse of `bytes` bytes (counted only while enabled).
#[inline]
pub fn parsed(bytes: usize) {
    if enabled() {
        BYTES_PARSED.fetch_add(bytes as u64, Ordering::Relaxed);
        FILES_PARSED.fetch_add(1, Ordering::Relaxed);
    }
}

pub struct Span {
    on: bool,
}

impl Drop for Span {
    #[inline]
    fn drop(&mut self) {
        if !self.on {
            return;
        }
        let now = now();
        OPEN.with(|open| {
            let mut open = open.borrow_mut();
            if let Some((i, since)) = open.pop() {
                add(i, since, now);
            }
            if let Some(outer) = open.last_mut() {
                outer.1 = now;
            }
        });
    }
}

/// The table, when enabled: each phase's CPU seconds (summed over threads) and share.
pub fn report() -> Option<String> {
    if !enabled() {
        return None;
    }
    let secs: Vec<f64> = NANOS.iter().map(|n| n.load(Ordering::Relaxed) as f64 / 1e9).collect();
    let total: f64 = secs.iter().sum();
    let mut out = String::from("phase        cpu-s   share\n");
    for ((_, name), s) in PHASES.iter().zip(&secs) {
        out.push_str(&format!("{name:<11} {s:7.3}  {:5.1}%\n", 100.0 * s / total.max(1e-9)));
    }
    out.push_str(&format!("{:<11} {total:7.3}\n", "sum"));
    let wall = START.get().map_or(0.0, |s| s.elapsed().as_secs_f64());
    let bytes = BYTES_PARSED.load(Ordering::Relaxed) as f64;
    out.push_str(&format!(
        "wall {wall:.3} s; parsed {} files, {:.1} MB ({:.1} MB/s of parse time)\n",
        FILES_PARSED.load(Ordering::Relaxed),
        bytes / 1e6,
        bytes / 1e6 / secs[2].max(1e-9)
    ));
    Some(out)
}
