//! What one build hands the next, so that an edit rebuilds only what it touched (the language
//! server keeps it per document): the flat tree, whose unchanged statements are copied, and every
//! top-level kernel with the module-level facts its build read.
//!
//! A kernel is reused when its statement's text is unchanged, the imports are the same and each
//! recorded fact still holds; its ranges inside the statement move with the statement. The result
//! equals a fresh build (unit tests here; the LSP differential test checks every edit).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::cx::{Cx, Fact};
use super::shift::move_block;
use super::types::{Imports, Kernel, Launch};
use crate::syntax::flat::FlatTree;
use crate::text::TextRange;

/// The reusable state of one build of one text.
pub struct Reuse {
    pub flat: FlatTree,
    pub(super) kernels: KernelCache,
    pub(super) launches: LaunchCache,
}

impl Reuse {
    /// Kernels this build took from the previous one instead of building them.
    pub fn kernels_reused(&self) -> usize {
        self.kernels.reused
    }

    /// Top-level statements whose launches this build took from the previous one.
    pub fn launch_statements_reused(&self) -> usize {
        self.launches.reused
    }

    /// For a kernel of this build's model that is an earlier build's kernel moved to where its
    /// unchanged statement now starts (and not modified since): that earlier kernel. A kernel
    /// reused in place is the earlier `Arc` itself and has no entry here.
    pub fn moved_from(&self, kernel: &Arc<Kernel>) -> Option<&Arc<Kernel>> {
        self.kernels.moved.get(&(Arc::as_ptr(kernel) as usize)).filter(|(now, _)| Arc::ptr_eq(now, kernel)).map(|(_, was)| was)
    }
}

impl std::fmt::Debug for Reuse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reuse").field("kernels", &self.kernels.len()).finish_non_exhaustive()
    }
}

#[derive(Default)]
pub(super) struct KernelCache {
    imports: Imports,
    shadowed: HashSet<String>,
    by_text: ByStatement<Cached>,
    /// Moved kernels of this build (by address) → (the kernel, the earlier one it was moved from).
    /// Both are held, so an address cannot be reused while the entry exists.
    moved: HashMap<usize, (Arc<Kernel>, Arc<Kernel>)>,
    /// How many of the kernels were reused rather than built (for tests and benchmarks).
    pub(super) reused: usize,
}

struct Cached {
    /// The statement's range in the text it was built from.
    range: TextRange,
    kernel: Arc<Kernel>,
    facts: Vec<Fact>,
}

fn text_hash(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// What was built from one top-level statement: where the statement stood in the text it was
/// built from, and the module-level facts the build read.
trait FromStatement {
    fn statement(&self) -> TextRange;
    fn facts(&self) -> &[Fact];
}

impl FromStatement for Cached {
    fn statement(&self) -> TextRange {
        self.range
    }
    fn facts(&self) -> &[Fact] {
        &self.facts
    }
}

impl FromStatement for Arc<CachedLaunches> {
    fn statement(&self) -> TextRange {
        self.range
    }
    fn facts(&self) -> &[Fact] {
        &self.facts
    }
}

/// Entries found again by the text of the statement they were built from.
struct ByStatement<T> {
    by_text: HashMap<u64, Vec<T>>,
}

impl<T> Default for ByStatement<T> {
    fn default() -> Self {
        ByStatement { by_text: HashMap::new() }
    }
}

impl<T: FromStatement> ByStatement<T> {
    fn insert(&mut self, text: &str, entry: T) {
        let r = entry.statement();
        let Some(src) = text.get(r.start..r.end) else { return };
        self.by_text.entry(text_hash(src)).or_default().push(entry);
    }

    /// The entry built from a statement of `prev_text` with the same text as `at` in `text`,
    /// when every fact its build read holds in `cx`.
    fn find(&self, prev_text: &str, text: &str, at: TextRange, cx: &Cx) -> Option<&T> {
        let src = text.get(at.start..at.end)?;
        self.by_text.get(&text_hash(src))?.iter().find(|e| {
            let r = e.statement();
            prev_text.get(r.start..r.end) == Some(src) && e.facts().iter().all(|f| cx.holds(f))
        })
    }

    fn len(&self) -> usize {
        self.by_text.values().map(Vec::len).sum()
    }
}

impl KernelCache {
    pub(super) fn new(cx: &Cx) -> Self {
        KernelCache {
            imports: cx.imports.clone(),
            shadowed: cx.shadowed().clone(),
            by_text: ByStatement::default(),
            moved: HashMap::new(),
            reused: 0,
        }
    }

    fn len(&self) -> usize {
        self.by_text.len()
    }

    /// Whether kernels built under this cache's imports can be reused under `cx`'s at all.
    pub(super) fn compatible(&self, cx: &Cx) -> bool {
        self.imports == cx.imports && self.shadowed == *cx.shadowed()
    }

    /// Records that `now` is `was` moved (see [`Reuse::moved_from`]).
    pub(super) fn note_moved(&mut self, now: &Arc<Kernel>, was: &Arc<Kernel>) {
        self.moved.insert(Arc::as_ptr(now) as usize, (now.clone(), was.clone()));
    }

    pub(super) fn insert(&mut self, text: &str, range: TextRange, kernel: Arc<Kernel>, facts: Vec<Fact>) {
        self.by_text.insert(text, Cached { range, kernel, facts });
    }

    /// The kernel built from the same statement text in `prev_text`, moved to `at` (shared when it
    /// has not moved), when every fact its build read holds in `cx`. The caller has checked
    /// [`KernelCache::compatible`].
    /// Also returns the earlier kernel when the result is a moved copy of it.
    pub(super) fn reuse(
        &self,
        prev_text: &str,
        text: &str,
        at: TextRange,
        cx: &Cx,
    ) -> Option<(Arc<Kernel>, Vec<Fact>, Option<Arc<Kernel>>)> {
        let hit = self.by_text.find(prev_text, text, at, cx)?;
        if hit.range.start == at.start {
            return Some((hit.kernel.clone(), hit.facts.clone(), None));
        }
        let mut k = Kernel::clone(&hit.kernel);
        move_block(&mut k, hit.range, at.start);
        Some((Arc::new(k), hit.facts.clone(), Some(hit.kernel.clone())))
    }
}

/// The launches of top-level statements, for the next build: a statement's launches are reused
/// when its text is unchanged, every module-level fact their resolution read still holds, and
/// each `a[b](...)` call in it still denotes the same kind of kernel (same parameter names; the
/// kernel index and `k.fn` are looked up afresh, the rest moves with the statement).
#[derive(Default)]
pub(super) struct LaunchCache {
    by_text: ByStatement<Arc<CachedLaunches>>,
    pub(super) reused: usize,
}

pub(super) struct CachedLaunches {
    range: TextRange,
    facts: Arc<[Fact]>,
    pub(super) calls: Vec<CallRecord>,
}

/// One subscript call of a statement: the parameter names of the kernel its target denoted, and
/// the launch built from it.
#[derive(Clone)]
pub(super) struct CallRecord {
    pub(super) params: Option<Vec<String>>,
    pub(super) launch: Option<Launch>,
}

impl CallRecord {
    /// Whether the target now denotes a kernel with the same parameter names (or still none).
    pub(super) fn same_target(&self, now: Option<&Kernel>) -> bool {
        match (&self.params, now) {
            (None, None) => true,
            (Some(names), Some(k)) => names.iter().eq(k.params.iter().map(|p| &p.name)),
            _ => false,
        }
    }
}

impl LaunchCache {
    pub(super) fn insert(&mut self, text: &str, range: TextRange, facts: Vec<Fact>, calls: Vec<CallRecord>) {
        self.by_text.insert(text, Arc::new(CachedLaunches { range, facts: facts.into(), calls }));
    }

    /// The calls recorded for the same statement text in `prev_text`, with their launches where
    /// the statement now is (`at`), when every fact they read holds in `cx`.
    pub(super) fn reuse(&self, prev_text: &str, text: &str, at: TextRange, cx: &Cx) -> Option<Arc<CachedLaunches>> {
        let hit = self.by_text.find(prev_text, text, at, cx)?;
        if hit.range.start == at.start {
            return Some(hit.clone());
        }
        let mut calls = hit.calls.clone();
        for c in &mut calls {
            if let Some(l) = &mut c.launch {
                move_block(l, hit.range, at.start);
            }
        }
        Some(Arc::new(CachedLaunches { range: at, facts: hit.facts.clone(), calls }))
    }

    /// Keeps a reused entry for the next build.
    pub(super) fn keep(&mut self, text: &str, entry: Arc<CachedLaunches>) {
        self.by_text.insert(text, entry);
        self.reused += 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{build, build_reusing};
    use crate::syntax;

    /// Every fixture, edited at spread positions (typing, breaking, lines above, literals that
    /// module constants and config lists hold), each version built from the previous one's reuse:
    /// the model equals a fresh build of the same text.
    #[test]
    fn reused_kernels_give_the_fresh_model_after_every_edit() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut reused = 0;
        let mut launches = 0;
        let mut files = 0;
        for dir in ["rules", "model"] {
            for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
                let Ok(mut text) = std::fs::read_to_string(e.path()) else { continue };
                if e.path().extension().is_none_or(|x| x != "py") {
                    continue;
                }
                files += 1;
                let (_, mut prev) = build_reusing(&text, &syntax::parse(&text), None);
                for i in 0..12 {
                    let cut = text.len() * (i * 7 % 12 + 1) / 13;
                    let Some(cut) = (cut..text.len()).find(|c| text.is_char_boundary(*c)) else { continue };
                    let mut next = text.clone();
                    match i % 6 {
                        0 => next.insert(cut, 'x'),
                        1 => next.insert(cut, '('),
                        2 => next.insert(text[..cut].rfind('\n').map_or(0, |n| n + 1), '\n'),
                        // A digit somewhere after the cut: a constant, a config value, a block size.
                        3 => {
                            if let Some(d) = text[cut..].find(|c: char| c.is_ascii_digit()) {
                                let at = cut + d;
                                let v = if &text[at..at + 1] == "1" { "2" } else { "1" };
                                next.replace_range(at..at + 1, v);
                            }
                        }
                        4 => next.insert(cut, 'é'),
                        _ => {
                            // Undo of the broken insert above, when it is still there.
                            next = next.replacen("(", "", usize::from(i == 5));
                        }
                    }
                    let tree = syntax::parse(&next);
                    let (model, r) = build_reusing(&next, &tree, prev.as_ref().map(|p| (p, text.as_str())));
                    assert_eq!(model, build(&next, &tree), "{} after edit {i} at {cut}", e.path().display());
                    reused += r.as_ref().map_or(0, |r| r.kernels_reused());
                    launches += r.as_ref().map_or(0, |r| r.launch_statements_reused());
                    prev = r;
                    text = next;
                }
            }
        }
        assert!(files > 50, "{files} fixtures");
        assert!(reused > 100, "only {reused} kernels reused");
        assert!(launches > 50, "only {launches} statements' launches reused");
    }

    /// A launch statement left as it is, while what it launches changes elsewhere: the kernel's
    /// parameters are renamed, the kernel is renamed away (no launch) and back, and the module
    /// constant passed to it changes.
    #[test]
    fn launches_follow_the_kernel_they_denote() {
        let version = |params: &str, name: &str, n: u32| {
            format!(
                "import triton\nimport triton.language as tl\n\nN = {n}\n\n\n@triton.jit\ndef {name}({params}):\n    pass\n\n\n\
                 def run(x):\n    k[(1,)](x, N, num_warps=4)\n"
            )
        };
        let texts = [
            version("x, n", "k", 4),
            version("x, m", "k", 4),
            version("x, m", "k2", 4),
            version("x, m", "k", 4),
            version("x, m", "k", 4),
            version("x, m", "k", 8),
        ];
        let (_, mut prev) = build_reusing(&texts[0], &syntax::parse(&texts[0]), None);
        let mut reused = 0;
        for w in texts.windows(2) {
            let tree = syntax::parse(&w[1]);
            let (model, r) = build_reusing(&w[1], &tree, prev.as_ref().map(|p| (p, w[0].as_str())));
            assert_eq!(model, build(&w[1], &tree), "{}", w[1]);
            reused += r.as_ref().map_or(0, |r| r.launch_statements_reused());
            prev = r;
        }
        // Only the unchanged step may reuse the launch: every other step changed what it reads.
        assert_eq!(reused, 1);
    }
}
