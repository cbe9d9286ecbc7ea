//! One version's findings, kept per kernel so that the next version re-runs the rules only for
//! the kernels an edit touched (the language server checks on every keystroke).
//!
//! Kernel-scoped rules read one kernel, its launches, the module constants, and the text under
//! their ranges. So a kernel's findings carry over when all of that is the same up to where its
//! top-level statements now start: the kernel is the earlier one (the same `Arc`, or that one
//! moved with its unchanged statement), its launches and the constants equal the earlier ones
//! with every range moved along with the statement holding it, and each finding's ranges lie in
//! statements whose text is unchanged, so they move the same way. Anything else is checked
//! afresh. The result equals a fresh check (tests here and the LSP differential test).

use std::collections::HashMap;
use std::sync::Arc;

use super::{Diagnostic, LintOptions};
use crate::knowledge::{Knowledge, Target};
use crate::model::shift::MapRanges;
use crate::model::{Binding, FileModel, Kernel, Launch};
use crate::text::TextRange;

/// The findings of one check, per kernel, for the next check of an edited version.
pub struct Memo {
    target: (String, String),
    options: LintOptions,
    /// Address of the knowledge base the findings came from; compared only while the caller
    /// still holds it (the previous result holds its knowledge), so it cannot have been reused.
    kb: usize,
    constants: Vec<Binding>,
    /// Top-level statement ranges of the text checked.
    tops: Vec<TextRange>,
    /// By the address of the model's kernel (held in the unit, so the address stays taken).
    units: HashMap<usize, Unit>,
    /// Kernels whose findings were carried over rather than checked (tests and benchmarks).
    pub reused: usize,
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memo").field("units", &self.units.len()).field("reused", &self.reused).finish_non_exhaustive()
    }
}

struct Unit {
    kernel: Arc<Kernel>,
    launches: Vec<Launch>,
    /// The kernel's ranges outside its own statement (module constants, config lists it reads).
    outside: Vec<TextRange>,
    /// Shared with the next memo when nothing in it moved.
    diagnostics: Arc<[Diagnostic]>,
}

/// A kernel's findings carried over from the earlier check.
pub(super) struct Carried {
    pub diagnostics: Arc<[Diagnostic]>,
    outside: Vec<TextRange>,
}

/// What the previous check left, and how this build's kernels relate to the previous build's.
pub struct Previous<'p> {
    pub memo: &'p Memo,
    pub text: &'p str,
}

/// How byte ranges of the previous text map into the current one: the unchanged top-level
/// statements before and after the edited region, each with how far it moved.
pub(super) struct Zones {
    zones: Vec<(TextRange, isize)>,
}

impl Zones {
    fn new(prev_tops: &[TextRange], prev_text: &str, tops: &[TextRange], text: &str) -> Zones {
        let same = |p: TextRange, q: TextRange| {
            p.end - p.start == q.end - q.start && prev_text.get(p.start..p.end).is_some_and(|a| text.get(q.start..q.end) == Some(a))
        };
        let (m, n) = (prev_tops.len(), tops.len());
        let mut zones = Vec::new();
        let mut i = 0;
        while i < m && i < n && prev_tops[i] == tops[i] && same(prev_tops[i], tops[i]) {
            zones.push((prev_tops[i], 0));
            i += 1;
        }
        let delta = text.len() as isize - prev_text.len() as isize;
        let mut tail = Vec::new();
        let mut j = 0;
        while j < m - i && j < n - i {
            let (p, q) = (prev_tops[m - 1 - j], tops[n - 1 - j]);
            if q.start as isize - p.start as isize != delta || !same(p, q) {
                break;
            }
            tail.push((p, delta));
            j += 1;
        }
        zones.extend(tail.into_iter().rev());
        Zones { zones }
    }

    /// Where a range of the previous text is now, when it lies in an unchanged statement
    /// (its end may touch the statement's end: an insertion point after it).
    fn map(&self, r: TextRange) -> Option<TextRange> {
        let i = self.zones.partition_point(|(z, _)| z.start <= r.start).checked_sub(1)?;
        let (z, d) = self.zones[i];
        (r.end <= z.end).then(|| TextRange::new((r.start as isize + d) as usize, (r.end as isize + d) as usize))
    }

    /// `x` with every range mapped, or None when one does not map.
    fn moved<T: MapRanges + Clone>(&self, x: &T) -> Option<T> {
        let mut out = x.clone();
        let mut ok = true;
        out.map_ranges(&mut |r| match self.map(*r) {
            Some(n) => *r = n,
            None => ok = false,
        });
        ok.then_some(out)
    }
}

impl MapRanges for Diagnostic {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        let Diagnostic { code: _, name: _, severity: _, message: _, range, kernel: _, device: _, toolchain: _, related, fix, origin: _ } =
            self;
        f(range);
        for r in related {
            f(&mut r.range);
        }
        if let Some(fix) = fix {
            for e in &mut fix.edits {
                f(&mut e.range);
            }
        }
    }
}

/// The earlier check's findings as far as they carry over to this one.
pub(super) struct Carry<'p> {
    memo: &'p Memo,
    zones: Zones,
}

impl<'p> Carry<'p> {
    /// None when nothing can carry over: another target, options or knowledge, or changed constants.
    pub(super) fn new(
        prev: &Previous<'p>,
        model: &FileModel,
        text: &str,
        tops: &[TextRange],
        target: Target,
        kb: &Knowledge,
        opts: &LintOptions,
    ) -> Option<Carry<'p>> {
        let memo = prev.memo;
        if memo.target != target_key(target) || memo.options != *opts || memo.kb != kb as *const Knowledge as usize {
            return None;
        }
        let zones = Zones::new(&memo.tops, prev.text, tops, text);
        (zones.moved(&memo.constants)? == model.constants).then_some(Carry { memo, zones })
    }

    /// The earlier findings of kernel `ki`, moved, when they still hold. `moved_from` gives the
    /// earlier kernel a moved one was copied from.
    pub(super) fn findings(
        &self,
        model: &FileModel,
        ki: usize,
        launches: &[&Launch],
        moved_from: &dyn Fn(&Arc<Kernel>) -> Option<Arc<Kernel>>,
    ) -> Option<Carried> {
        let kernel = model.kernels.get(ki)?;
        let unit = match self.memo.units.get(&key(kernel)) {
            Some(u) if Arc::ptr_eq(&u.kernel, kernel) => u,
            _ => {
                let was = moved_from(kernel)?;
                self.memo.units.get(&key(&was)).filter(|u| Arc::ptr_eq(&u.kernel, &was))?
            }
        };
        // The statement moved as the kernel did; what it read elsewhere did not move.
        if self.zones.map(unit.kernel.range) != Some(kernel.range) || unit.outside.iter().any(|r| self.zones.map(*r) != Some(*r)) {
            return None;
        }
        let mut launches = launches.iter().copied();
        for was in &unit.launches {
            let mut was = self.zones.moved(was)?;
            was.kernel = ki;
            if launches.next() != Some(&was) {
                return None;
            }
        }
        if launches.next().is_some() {
            return None;
        }
        let mut moved = false;
        let mut out = Vec::with_capacity(unit.diagnostics.len());
        for d in unit.diagnostics.iter() {
            let m = self.zones.moved(d)?;
            moved |= m != *d;
            out.push(m);
        }
        let diagnostics = if moved { out.into() } else { unit.diagnostics.clone() };
        Some(Carried { diagnostics, outside: unit.outside.clone() })
    }
}

/// Collects this check's units into the memo the next check reads.
pub(super) struct MemoBuilder {
    memo: Memo,
}

impl MemoBuilder {
    pub(super) fn new(model: &FileModel, tops: Vec<TextRange>, target: Target, kb: &Knowledge, opts: &LintOptions) -> Self {
        MemoBuilder {
            memo: Memo {
                target: target_key(target),
                options: opts.clone(),
                kb: kb as *const Knowledge as usize,
                constants: model.constants.clone(),
                tops,
                units: HashMap::new(),
                reused: 0,
            },
        }
    }

    /// Kernel `ki` was checked afresh.
    pub(super) fn checked(&mut self, model: &FileModel, ki: usize, launches: &[&Launch], diagnostics: Vec<Diagnostic>) {
        let Some(kernel) = model.kernels.get(ki) else { return };
        let mut outside = Vec::new();
        let within = kernel.range;
        Kernel::clone(kernel).map_ranges(&mut |r| {
            if !(within.start <= r.start && r.end <= within.end) {
                outside.push(*r);
            }
        });
        self.insert(model, ki, launches, diagnostics.into(), outside);
    }

    /// Kernel `ki`'s findings were carried over.
    pub(super) fn carried(&mut self, model: &FileModel, ki: usize, launches: &[&Launch], c: Carried) {
        self.insert(model, ki, launches, c.diagnostics, c.outside);
        self.memo.reused += 1;
    }

    fn insert(&mut self, model: &FileModel, ki: usize, launches: &[&Launch], diagnostics: Arc<[Diagnostic]>, outside: Vec<TextRange>) {
        let Some(kernel) = model.kernels.get(ki) else { return };
        let launches = launches.iter().map(|l| (*l).clone()).collect();
        self.memo.units.insert(key(kernel), Unit { kernel: kernel.clone(), launches, outside, diagnostics });
    }

    pub(super) fn finish(self) -> Memo {
        self.memo
    }
}

fn key(k: &Arc<Kernel>) -> usize {
    Arc::as_ptr(k) as usize
}

fn target_key(t: Target) -> (String, String) {
    (t.device.id.clone(), t.toolchain.id.clone())
}
