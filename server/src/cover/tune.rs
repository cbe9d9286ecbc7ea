//! The autotune stage's loop, within a time budget:
//!
//! 1. plan: the kernel's tuned names, its grid readings, the config space pruned by the XF limits and
//!    the knowledge base (`autotune::budget`);
//! 2. families: correctness on the spec's small family plus derived variants a wrong grid reading fails
//!    (`autotune::derive`), timing on the requested (large) family's largest variant;
//! 3. readings: when the code leaves a grid factor open, each reading is checked with configs that set
//!    the candidate names apart; the first that is correct is used;
//! 4. screen: when the budget cannot measure the whole space one config at a time, the whole space
//!    goes into one `@triton.autotune` list, checked once on the timed family and not timed: Triton's
//!    autotuner times every config on the device on the first call of that shape (its configs compiled
//!    side by side first, in the harness worker), and its timings order the sweep. They
//!    are measured in the candidate's process, so they only order the search: every config kept is
//!    judged by the harness on the check family, and after a screen one correct config is enough;
//! 5. sweep: configs in order, in batches of one harness `sweep` request each (the original set up once
//!    per batch), each timed with few pairs, until the budget says stop; compile metadata (spills)
//!    prunes configs that can only spill more;
//! 6. final: the best config and those the sweep could not tell from it, timed in full; the autotuner's
//!    search among them happens in the harness's warm-up and its picks are recorded. After a screen,
//!    a config the judge could not rank below the best (a tied interval, or a round timed at the
//!    launch floor, whose host issue set the figure) leads when the screen put it first.

use super::autotune::{self, budget, derive, space};
use super::evidence::{self, RoundRecord};
use super::outline::Outline;
use super::run::{Best, Ctx, EvalOpts, Progress, StageError, StageRunner, record};
use crate::harness::{DeviceKind, Evaluation, HarnessError, Verdict};
use crate::knowledge::Target;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::collections::BTreeMap;
use std::time::Instant;

/// The family a device times on when none is named: `bench-<device>` (`bench-xpu`, `bench-cuda`),
/// else `bench-gpu`, else the first whose name starts with `bench`.
pub(super) fn bench_family(families: &[String], device: &str) -> Option<String> {
    let own = format!("bench-{device}");
    families
        .iter()
        .find(|f| **f == own)
        .or_else(|| families.iter().find(|f| *f == "bench-gpu"))
        .or_else(|| families.iter().find(|f| f.starts_with("bench")))
        .cloned()
}

/// Where correctness is checked and timing is done.
struct Families {
    opts: EvalOpts,
    /// The derived variant's dims and how they were made, when one is in use.
    derived: Option<(derive::Strategy, Vec<(String, i64)>)>,
    /// The spec's small family the derived one is built from.
    source: Option<String>,
    /// Derived dims already checked: a later strategy that makes the same ones is skipped.
    tried: Vec<Vec<(String, i64)>>,
    spec_text: Option<String>,
}

impl Families {
    fn new(ctx: &Ctx<'_>, on_cpu: bool, device: &str) -> Families {
        let mut f = Families { opts: EvalOpts::default(), derived: None, source: None, tried: Vec::new(), spec_text: None };
        let Some(spec) = ctx.spec.as_ref() else { return f };
        let Ok(text) = std::fs::read_to_string(spec) else { return f };
        let fams = derive::families(&text);
        // On a GPU with no family named, time on the spec's bench family for the device: the
        // harness's own default is `ci`, sized for the interpreter, where a GPU call is launch-bound
        // and no config can show (a 4096³ GEMM inferred beside a 96×64 check timed at 50 µs).
        let requested = ctx.req.family.clone().or_else(|| if on_cpu { None } else { bench_family(&fams, device) });
        let small = if fams.iter().any(|x| x == "ci") { Some("ci".to_string()) } else { None };
        // Derived variants scale the small family's dims; without one (only large families) none are made.
        f.source = if on_cpu { requested.clone().or(small.clone()) } else { small.clone() };
        if !on_cpu && requested.is_some() && f.source.is_some() && requested != f.source {
            f.opts.timing_family = requested;
        }
        f.spec_text = Some(text);
        f
    }

    /// Write the spec with the derived family (strategy `s`) and check on it; false when none can be made.
    fn derive(&mut self, ctx: &Ctx<'_>, s: derive::Strategy) -> bool {
        let (Some(text), Some(source)) = (&self.spec_text, &self.source) else { return false };
        let Some((spec, dims)) = derive::check_spec(text, source, s) else { return false };
        if self.tried.contains(&dims) {
            return false;
        }
        let ext = if text.trim_start().starts_with('{') { "json" } else { "yaml" };
        let path = ctx.work.join(format!("check-spec.{ext}"));
        if std::fs::write(&path, spec).is_err() {
            return false;
        }
        self.opts.spec = Some(path);
        self.opts.family = Some(derive::CHECK_FAMILY.into());
        self.tried.push(dims.clone());
        self.derived = Some((s, dims));
        true
    }

    /// Back to the next strategy, or to the spec's own small family.
    fn fall_back(&mut self, ctx: &Ctx<'_>) -> String {
        let was = self.derived.take().map(|d| d.0);
        let next = match was {
            Some(derive::Strategy::Edges) => [derive::Strategy::Multiples, derive::Strategy::Tied].as_slice(),
            Some(derive::Strategy::Multiples) => &[derive::Strategy::Tied],
            _ => &[],
        };
        for s in next {
            if self.derive(ctx, *s) {
                return format!("the original failed on the derived variant; now {}", s.describe());
            }
        }
        self.opts.spec = None;
        self.opts.family = self.source.clone();
        "the original failed on the derived variants; checking on the spec's own family".into()
    }

    /// What a verdict depends on: the spec file, both families and the derived dims (a fallback
    /// changes them; an evaluation on the earlier ones is not reused).
    fn key(&self) -> String {
        format!("{:?} {:?} {:?} {}", self.opts.spec, self.opts.family, self.opts.timing_family, self.note())
    }

    fn note(&self) -> String {
        let check = self.opts.family.clone().unwrap_or_else(|| "the default family".into());
        let timed = self.opts.timing_family.clone().map(|t| format!(", timed on {t}'s largest variant")).unwrap_or_default();
        match &self.derived {
            Some((s, dims)) => {
                // A spec quotes `N` and `n` (YAML 1.1 reads them as false); the note names the dim.
                let d = dims.iter().map(|(k, v)| format!("{}={v}", k.trim_matches(['"', '\'']))).collect::<Vec<_>>().join(" ");
                format!("checked on {check} ({} plus {d}: {}){timed}", self.source.clone().unwrap_or_default(), s.describe())
            }
            None => format!("checked on {check}{timed}"),
        }
    }
}

impl StageRunner {
    pub(super) async fn autotune(
        &self,
        ctx: &Ctx<'_>,
        outline: &Outline,
        kernel: &str,
        target: Target<'_>,
        rounds: &mut Vec<RoundRecord>,
        progress: &mut impl FnMut(Progress),
    ) -> Result<Option<Best>, StageError> {
        let clock = Instant::now();
        // A launch through `**cfg` is read, and rewritten, from the file with the dict spelled out;
        // the original stays the harness's baseline.
        let spelled = autotune::splat::spell_out(&ctx.req.text, kernel);
        let text: &String = spelled.as_ref().map_or(&ctx.req.text, |s| &s.text);
        let own;
        let outline = match &spelled {
            Some(s) => {
                own = Outline::build(&s.text);
                &own
            }
            None => outline,
        };
        let tt = space::TuneTarget::for_stage(&self.kb, &target, ctx.req.device == DeviceKind::Cuda);
        let f = autotune::pick_kernel(outline, Some(kernel))?;
        let mut plan = autotune::plan(text, outline, f, tt.backend)?;
        if let Some(spec) = ctx.spec.as_ref().and_then(|s| std::fs::read_to_string(s).ok()) {
            plan.read_spec(&spec);
        }
        let knobs = budget::Knobs::embedded();
        let configs = autotune::emit::space_for(&plan, &tt, ctx.req.max_configs, text);
        // `auto` is whatever the harness finds: the interpreter's path when that is the CPU.
        let on_cpu = match ctx.req.device {
            DeviceKind::Cpu => true,
            DeviceKind::Auto => self.harness.probe().await.is_ok_and(|p| p.device.is_cpu()),
            _ => false,
        };
        let budget_s = if ctx.req.budget_s > 0 { ctx.req.budget_s as f64 } else { knobs.budget.stage_s };
        let device = match ctx.req.device {
            _ if on_cpu => "cpu",
            DeviceKind::Xpu => "xpu",
            _ => "cuda",
        };
        let mut eval_s = knobs.eval_prior(device);
        // Jobs the harness runs at once on this device (`ping`'s pool; 1 without one).
        let lanes = self.harness.lanes(ctx.req.device).await;
        // Where a stage's time goes outside its rounds: the harness's start, then each sweep batch's
        // set-up (noted on the first round recorded, and on each batch's first config).
        let mut ready = Some(format!("harness ready {:.1} s into the stage", clock.elapsed().as_secs_f64()));
        let mut spent: Vec<f64> = Vec::new();

        let mut fam = Families::new(ctx, on_cpu, device);
        fam.derive(ctx, derive::Strategy::Edges);
        let mut round = 0u32;

        // The derived variants must hold for the kernel as it is: the start config renders grids that
        // compute the same numbers under any reading, so a failure there means the variant is unsound
        // (an output the original leaves unwritten, a dim another must equal), not the rewrite.
        // On the interpreter the start config is the result: as an autotune list of one, the form a
        // user extends and lets Triton's autotuner search on their GPU. Timed on a device, each single
        // config is written into the launches (`Plan::render_one`: no wrapper cost in its time).
        // A kernel with an autotune list of its own keeps it whole there: the interpreter cannot time
        // configs, so it has no ground to drop any of the user's.
        let keep_list = on_cpu && plan.keeps_autotune();
        let start_as = |reading: &[String]| {
            let one = std::slice::from_ref(&plan.input.start);
            if keep_list {
                plan.with_restore(text)
            } else if on_cpu {
                plan.render_as(text, one, reading)
            } else {
                plan.candidate(text, one, reading)
            }
        };
        let cpu_detail = if keep_list && !plan.restore.is_empty() {
            "the kernel's own autotune list, restore_value added (the interpreter cannot time configs)"
        } else if keep_list {
            "the kernel's own autotune list, unchanged (the interpreter cannot time configs)"
        } else {
            "starting config only (the interpreter cannot time configs)"
        };
        let start_text = start_as(plan.first_reading())?;
        let mut start_eval: Option<(RoundRecord, Option<Evaluation>)> = None;
        while fam.derived.is_some() {
            round += 1;
            let mut rec = RoundRecord::new(round, "autotune", "starting config on the check family (are the derived variants sound?)");
            rec.notes.extend(ready.take());
            rec.notes.push(fam.note());
            if on_cpu {
                rec.notes.extend(plan.restore_note()); // the result there is this list
            }
            let opts = EvalOpts { no_timing: !on_cpu, ..fam.opts.clone() };
            let t = Instant::now();
            let e = self.try_candidate_with(ctx, round, &start_text, &mut rec, progress, Some(&opts)).await?;
            spent.push(t.elapsed().as_secs_f64());
            // The device or the harness failing is no reason to doubt the variants: it ends the stage.
            if let Some(e) = e.as_ref().filter(|e| e.verdict == Verdict::Error && !e.blames_original()) {
                rounds.push(rec);
                return Err(self.harness_verdict_error(ctx, e));
            }
            let sound = e.as_ref().is_some_and(|e| e.verdict.is_correct());
            if !sound {
                rec.notes.push(fam.fall_back(ctx));
                rounds.push(rec);
                continue;
            }
            start_eval = Some((rec, e));
            break;
        }

        // Readings the kernel leaves open: the first one correct on configs that set the names apart.
        let mut reading = 0usize;
        if plan.readings.len() > 1 {
            let probes = probes(&plan, &tt);
            let (n, expected) = budget::plan(
                &knobs,
                budget_s,
                clock.elapsed().as_secs_f64(),
                eval_s,
                plan.readings.len() * probes.len(),
                configs.len().saturating_sub(1),
            );
            progress(Progress::Planned { configs: n, expected_s: expected.round() as u64 });
            let mut found = None;
            'readings: for (ri, r) in plan.readings.iter().enumerate() {
                // A reading's probes go at once when the pool has lanes for them; their outcomes are
                // read in order, as if one at a time (a probe judged beside the one that decided is
                // recorded, and decides nothing). With one lane, one after another as always.
                for group in probes.chunks(lanes) {
                    let mut staged = Vec::new();
                    for p in group {
                        round += 1;
                        let mut rec = RoundRecord::new(
                            round,
                            "autotune",
                            format!("grid reading {} of {} with {}", ri + 1, plan.readings.len(), p.label()),
                        );
                        rec.notes = plan.grid.describe(r);
                        rec.notes.extend(ready.take());
                        rec.notes.push(fam.note());
                        let cand = plan.candidate(text, std::slice::from_ref(p), r)?;
                        let t = Instant::now();
                        let path = self.stage_candidate(ctx, round, &cand, &mut rec, progress)?;
                        staged.push((rec, path, t));
                    }
                    let opts = EvalOpts { no_timing: true, ..fam.opts.clone() };
                    let judged = futures::future::join_all(staged.iter().map(|(_, path, t)| {
                        let opts = &opts;
                        async move {
                            let e = match path {
                                Some(p) => Some(self.evaluate_raw(ctx, &ctx.original_path, p, Some(opts)).await),
                                None => None,
                            };
                            (e, t.elapsed().as_secs_f64())
                        }
                    }))
                    .await;
                    let mut decided = false; // the reading's fate is known: what follows only gets recorded
                    for ((mut rec, _, _), (e, took)) in staged.into_iter().zip(judged) {
                        let e = e.transpose()?;
                        spent.push(took);
                        if let Some(e) = &e {
                            record(rec.round, &mut rec, e, progress);
                        }
                        if decided {
                            rec.notes.push("judged at once with the probe before it, whose outcome decided this reading".into());
                            rounds.push(rec);
                            continue;
                        }
                        rounds.push(rec);
                        match e {
                            Some(e) if e.verdict == Verdict::Error && fam.derived.is_some() => {
                                let why = fam.fall_back(ctx);
                                if let Some(last) = rounds.last_mut() {
                                    last.notes.push(why);
                                }
                                decided = true;
                            }
                            Some(e) if e.verdict == Verdict::Error => return Err(self.harness_verdict_error(ctx, &e)),
                            Some(e) if e.verdict.is_correct() => {}
                            _ => decided = true,
                        }
                    }
                    if decided {
                        continue 'readings;
                    }
                }
                found = Some(ri);
                break;
            }
            reading = found.unwrap_or(0);
            eval_s = mean(&spent).unwrap_or(eval_s);
        }
        let chosen_reading = plan.readings.get(reading).cloned().unwrap_or_default();
        let reading_notes = {
            let mut n = plan.grid.describe(&chosen_reading);
            n.extend(spelled.as_ref().map(|s| s.note.clone()));
            n.extend(plan.kept_note());
            n.extend(plan.replaced_note());
            if plan.readings.len() > 1 {
                n.push(format!("grid reading {} of {} (the first that was correct on the check family)", reading + 1, plan.readings.len()));
            }
            n
        };

        if on_cpu {
            // The interpreter can neither time configs nor run Triton's autotuner over several: the
            // decorator gets the starting config alone, checked on the derived variants too.
            if let Some((mut rec, Some(e))) = start_eval.filter(|_| reading == 0) {
                rec.detail = cpu_detail.into();
                rec.notes.splice(0..0, reading_notes.clone());
                rounds.push(rec);
                return Ok(self.acceptable(ctx, &e).map(|status| Best { text: start_text, evaluation: e, status }));
            }
            round += 1;
            let mut rec = RoundRecord::new(round, "autotune", cpu_detail);
            rec.notes = reading_notes.clone();
            rec.notes.extend(ready.take());
            rec.notes.push(fam.note());
            rec.notes.extend(plan.restore_note());
            let cand = start_as(&chosen_reading)?;
            let mut e = self.try_candidate_with(ctx, round, &cand, &mut rec, progress, Some(&fam.opts)).await?;
            if e.as_ref().is_some_and(|e| e.verdict == Verdict::Error) && fam.derived.is_some() {
                rec.notes.push(fam.fall_back(ctx));
                e = self.try_candidate_with(ctx, round, &cand, &mut rec, progress, Some(&fam.opts)).await?;
            }
            rounds.push(rec);
            return match e {
                Some(e) if e.verdict == Verdict::Error => Err(self.harness_verdict_error(ctx, &e)),
                Some(e) => Ok(self.acceptable(ctx, &e).map(|status| Best { text: cand, evaluation: e, status })),
                None => Ok(None),
            };
        }

        if let Some((rec, _)) = start_eval {
            rounds.push(rec);
        }
        // The sweep: a start config that is the original itself (speedup 1 by definition) is not timed;
        // one the original does not simply run (`Plan::start_is_original`) is a candidate like the rest.
        let mut sweep: Vec<space::TuneConfig> = configs.iter().skip(usize::from(plan.start_is_original)).cloned().collect();
        let budget::SweepPlan { configs: planned, expected_s: expected, screen } =
            budget::sweep_plan(&knobs, budget_s, clock.elapsed().as_secs_f64(), eval_s, sweep.len());
        progress(Progress::Planned { configs: planned, expected_s: expected.round() as u64 });
        let mut measured: Vec<Measured> = Vec::new();
        // Each measured config's own evaluation, its round and the families it was judged on: the
        // final list may be that very candidate (see `reuse`).
        let mut verified: Vec<Verified> = Vec::new();
        let mut spilled: Vec<space::TuneConfig> = Vec::new();
        let mut tried = 0usize;
        let mut stopped = None;
        let mut screened = false;
        // Enough configs judged to stop on the budget: the minimum, or after a screen (which ordered
        // the sweep by the autotuner's timings) one judged correct.
        let enough = |screened: bool, tried: usize, measured: usize| tried >= knobs.budget.min_configs || (screened && measured > 0);
        if screen {
            round += 1;
            let mut rec =
                RoundRecord::new(round, "autotune", format!("screen: all {} configs in one @triton.autotune list", configs.len()));
            rec.notes = reading_notes.clone();
            rec.notes.extend(ready.take());
            let cand = plan.candidate(text, &configs, &chosen_reading)?;
            // Not timed: the autotuner's search runs on the first call of each of its keys, and its
            // timings are all the screen is for (the harness's timed pairs of the list would order
            // nothing). By default (`Screen::Check`) checked on the check family without searches,
            // the timed shape then called once untimed for the search (`search_timed`); with
            // `Screen::Timed` checked on the timed family alone, where that first call happens.
            // Every config the screen puts first is then judged in the sweep as any other, on the
            // check family.
            let opts = match ctx.req.screen {
                budget::Screen::Check if fam.opts.timing_family.is_some() => {
                    EvalOpts { no_timing: true, search_timed: true, ..fam.opts.clone() }
                }
                _ => EvalOpts {
                    family: fam.opts.timing_family.clone().or_else(|| fam.opts.family.clone()),
                    timing_family: None,
                    no_timing: true,
                    ..fam.opts.clone()
                },
            };
            let t = Instant::now();
            let e = self.try_candidate_with(ctx, round, &cand, &mut rec, progress, Some(&opts)).await?;
            // The order holds whatever the list's own verdict (a kernel that accumulates into its
            // output is wrong after a search's repeated runs, but its configs were timed all the same).
            match e.as_ref().map(|e| screen_order(e, &sweep)) {
                Some(order) if !order.is_empty() => {
                    let first: Vec<String> = order.iter().take(3).map(|&i| sweep[i].label()).collect();
                    rec.notes.push(format!("Triton's autotuner ranked first: {}", first.join(", ")));
                    let mut rest: Vec<Option<space::TuneConfig>> = sweep.drain(..).map(Some).collect();
                    let mut ordered: Vec<space::TuneConfig> = order.iter().filter_map(|&i| rest[i].take()).collect();
                    ordered.extend(rest.into_iter().flatten());
                    sweep = ordered;
                    screened = true;
                }
                _ => rec.notes.push(
                    "no order from the screen (the list did not run, or the autotuner's search was not reported): the sweep goes in order"
                        .into(),
                ),
            }
            rec.notes.push(format!("screen: {:.0} s", t.elapsed().as_secs_f64()));
            rounds.push(rec);
        }
        // A config whose interval falls below the best one's lower end could not join the final list:
        // the harness stops timing it there (sequential stopping; within a batch the harness itself
        // moves that floor up as faster configs come in).
        let sweep_opts = |fam: &Families, best_lo: Option<f64>| EvalOpts {
            runs: Some(knobs.budget.sweep_runs),
            stop_below: best_lo.filter(|lo| *lo > 1.0),
            ..fam.opts.clone()
        };
        // Configs go to the harness in batches, one `sweep` request each: the trusted side (the
        // original imported, compiled, its references and its solo timing) is set up once per batch,
        // not once per config. A harness without `sweep` gets one `evaluate` per config. With several
        // lanes (`ping`'s pool: devices, interpreter lanes, Ray's GPUs) up to that many batches are in
        // flight, and a lane whose batch is answered gets the next one at once: no lane waits for the
        // slowest batch. The first batches split the configs evenly between the lanes, later ones
        // what is left (min(batch, ⌈left/lanes⌉) each). Answers are read in the order their batches
        // were sent (rounds, progress, the fallbacks and the budget's stop decided as one lane would);
        // what a batch is sent with (the best lower end so far for `stop_below`, the spills that prune
        // larger tiles) counts every answer already in. A batch whose answer sends the sweep back (a
        // fallback, a judge that died) drops every later one still in flight (their requests are
        // cancelled) and is judged again from there. With one lane one batch of `sweep_batch` at a
        // time: the order, the requests and the figures of a sweep without a pool.
        let mut batch = knobs.budget.sweep_batch.max(1);
        let mut next = 0usize;
        let mut carried: Vec<String> = Vec::new(); // notes for the next round recorded (a fallback's why)
        let sweep_start = rounds.len();
        // Batches by number, in the order they were sent: staged until their answer is read; answers in
        // before an earlier batch's wait in `done`.
        let mut staged: BTreeMap<u64, Batch> = BTreeMap::new();
        let mut done: BTreeMap<u64, (Judged, f64)> = BTreeMap::new();
        let mut flying = FuturesUnordered::new();
        let (mut sent, mut read) = (0u64, 0u64);
        let mut pending = 0usize; // configs sent whose answers are not read yet
        let mut stop_at: Option<(u32, String)> = None; // a batch stopped on the budget: (its first unjudged round, why)
        loop {
            // Read the answers in, in the order their batches were sent.
            let mut restart: Option<(usize, u32)> = None; // judge again from (index in the sweep, round before)
            while let Some((outcome, took)) = done.remove(&read) {
                let Some(Batch { first, first_round, mut items, mut refused, reserved }) = staged.remove(&read) else { break };
                read += 1;
                pending = pending.saturating_sub(items.len());
                if items.is_empty() {
                    rounds.append(&mut refused);
                    continue;
                }
                let (results, why) = match outcome {
                    Judged::Nothing => (Vec::new(), None),
                    Judged::Sweep(Ok(Ok(s))) => {
                        let own: f64 = s.results.iter().filter_map(|e| e.elapsed.as_ref()?.candidate_s).sum();
                        if !s.results.is_empty() {
                            // One evaluation's worth: the batch's fixed cost plus one config's share.
                            let n = s.results.len() as f64;
                            let fixed = (took - own).max(0.0);
                            eval_s = fixed + own / n;
                            carried.push(format!(
                                "its batch of {} took {:.1} s beside the configs' own {:.1} s (the original set up: imported, its references, timed alone)",
                                s.results.len(),
                                fixed,
                                own
                            ));
                        }
                        (s.results, s.stopped)
                    }
                    Judged::Sweep(Ok(Err(e))) if e.verdict == Verdict::Error && fam.derived.is_some() => {
                        // The batches after it ran on the unsound family too: judged again from here.
                        carried.push(fam.fall_back(ctx));
                        restart = Some((first, first_round));
                        break;
                    }
                    Judged::Sweep(Ok(Err(e))) => return Err(self.harness_verdict_error(ctx, &e)),
                    Judged::Sweep(Err(StageError::Harness(HarnessError::Unsupported(_)))) => {
                        batch = 1;
                        restart = Some((first, first_round));
                        break;
                    }
                    Judged::Sweep(Err(e)) | Judged::One(Err(e)) => return Err(e),
                    Judged::One(Ok(e)) => {
                        spent.push(took);
                        eval_s = mean(&spent).unwrap_or(eval_s);
                        (vec![e], None)
                    }
                };
                items[0].2.notes.append(&mut carried);
                let judged = results.len().min(items.len());
                let mut retry_from = None; // (index in the sweep, round) of the first config to judge again
                for ((i, c, mut rec, _), e) in items.drain(..judged).zip(results) {
                    if e.verdict == Verdict::Error {
                        // The trusted side failed on this config's turn: the original, not the config.
                        if fam.derived.is_some() {
                            carried.push(fam.fall_back(ctx));
                            retry_from = Some((i, rec.round));
                            break;
                        }
                        record(rec.round, &mut rec, &e, progress);
                        rounds.push(rec);
                        return Err(self.harness_verdict_error(ctx, &e));
                    }
                    tried += 1;
                    record(rec.round, &mut rec, &e, progress);
                    let (judged_in, sha256) = (rec.round, rec.candidate_sha256.clone());
                    rounds.push(rec);
                    if spills(&e) {
                        spilled.push(c.clone());
                    }
                    if let (true, Some(s), Some(ci)) = (e.verdict.is_correct(), e.speedup(), e.speedup_interval()) {
                        let floor = at_floor(&e);
                        verified.push(Verified { config: c.clone(), round: judged_in, sha256, families: fam.key(), evaluation: e });
                        measured.push(Measured { config: c, speedup: s, ci, rank: i, floor });
                    }
                }
                let unjudged = retry_from.or_else(|| items.first().map(|i| (i.0, i.2.round)));
                refused.retain(|r| unjudged.is_none_or(|(_, u)| r.round < u));
                rounds.append(&mut refused);
                // A batch the harness stopped on its budget ends the sweep once the batches in flight are
                // in; after a screen only once one config is judged correct (the autotuner's first picks
                // can be wrong on the check family: tiles larger than its dims), so the sweep goes on past
                // the budget until then.
                match (unjudged, why) {
                    (Some((i, r)), Some(w)) if w.starts_with("budget") && (!screened || enough(screened, tried, measured.len())) => {
                        // The batch's room had the final round set aside, and that round will not run now
                        // (the best config's own round stands for it): the time goes to the next configs.
                        let freed = reserved
                            && staged.is_empty()
                            && flying.is_empty()
                            && best_is_final(&plan, &measured, screened, &verified, knobs.budget.final_reuse_width)
                            && clock.elapsed().as_secs_f64() + eval_s <= budget_s;
                        if freed {
                            carried.push(
                                "the best config's round is the result as it stands (no final round): the time set aside for one goes to more configs"
                                    .into(),
                            );
                            restart = Some((i, r - 1));
                            break;
                        }
                        stop_at.get_or_insert((r, format!("{w}; {tried} of {} configs measured in all", sweep.len())));
                    }
                    // The judge died (blaming the config that ran) or the trusted side failed: the rest
                    // again, the batches sent after it too (a fallback changed the family they ran on).
                    (Some((i, r)), _) if stop_at.is_none() => {
                        restart = Some((i, r - 1));
                        break;
                    }
                    _ => {}
                }
            }
            if let Some(back) = restart {
                // Every batch still in flight was sent after this one: dropped, its request cancelled.
                flying = FuturesUnordered::new();
                staged.clear();
                done.clear();
                (read, pending) = (sent, 0);
                (next, round) = back;
            }
            if ctx.cancel.is_cancelled() {
                return Err(StageError::Cancelled);
            }
            // Send: a batch to every free lane.
            if stop_at.is_none() && stopped.is_none() && next < sweep.len() && flying.len() < lanes {
                let elapsed = clock.elapsed().as_secs_f64();
                // The final round's time is set aside only where that round will run: a best config
                // whose own round was accepted with a narrow interval is the result as it stands (`reuse`).
                let will_reuse = best_is_final(&plan, &measured, screened, &verified, knobs.budget.final_reuse_width);
                let final_s = if will_reuse { 0.0 } else { eval_s * knobs.budget.final_factor };
                if enough(screened, tried + pending, measured.len()) && elapsed + eval_s + final_s > budget_s {
                    // Out of time: nothing more is sent; the batches in flight are still read.
                    if flying.is_empty() {
                        stopped = Some(format!(
                            "budget: {} of {} configs measured in {elapsed:.0} s (budget {budget_s:.0} s)",
                            tried,
                            sweep.len()
                        ));
                    }
                } else {
                    let per_batch = if lanes > 1 { batch.min((sweep.len() - next).div_ceil(lanes)).max(1) } else { batch };
                    // What the answers in but not yet read say too: the best config so far, and spills.
                    let (best_lo, spilled_too) = {
                        let unread = unread(&staged, &done);
                        let best = measured
                            .iter()
                            .map(|m| (m.speedup, m.ci[0]))
                            .chain(
                                unread
                                    .iter()
                                    .filter(|(_, e)| e.verdict.is_correct())
                                    .filter_map(|(_, e)| Some((e.speedup()?, e.speedup_interval()?[0]))),
                            )
                            .max_by(|a, b| a.0.total_cmp(&b.0))
                            .map(|m| m.1);
                        let spilled_too: Vec<space::TuneConfig> =
                            unread.iter().filter(|(_, e)| e.verdict != Verdict::Error && spills(e)).map(|(c, _)| (*c).clone()).collect();
                        (best, spilled_too)
                    };
                    // The harness's budget counts from its own start: what is left once the final round is set aside.
                    let room = (budget_s - elapsed - final_s).max(0.001);
                    while flying.len() < lanes && next < sweep.len() {
                        let mut b =
                            Batch { first: next, first_round: round, items: Vec::new(), refused: Vec::new(), reserved: final_s > 0.0 };
                        while b.items.len() < per_batch && next < sweep.len() {
                            let (i, c) = (next, &sweep[next]);
                            next += 1;
                            if spilled.iter().chain(&spilled_too).any(|s| spills_more(c, s, &plan.input)) {
                                continue;
                            }
                            round += 1;
                            let left = (budget_s - elapsed).max(0.0);
                            let mut rec = RoundRecord::new(
                                round,
                                "autotune",
                                format!("{} (config {} of {}, ~{left:.0} s left)", c.label(), i + 1, sweep.len()),
                            );
                            if i == 0 {
                                rec.notes = reading_notes.clone();
                                rec.notes.push(fam.note());
                            }
                            let cand = plan.candidate(text, std::slice::from_ref(c), &chosen_reading)?;
                            match self.stage_candidate(ctx, round, &cand, &mut rec, progress)? {
                                Some(path) => b.items.push((i, c.clone(), rec, path)),
                                None => b.refused.push(rec),
                            }
                        }
                        let number = sent;
                        sent += 1;
                        if b.items.is_empty() {
                            // Every config refused by the guard: nothing to send, read in its turn.
                            done.insert(number, (Judged::Nothing, 0.0));
                            staged.insert(number, b);
                            continue;
                        }
                        // Configs a batch must judge whatever the budget says: the minimum still owed.
                        let least = if screened { 1 } else { knobs.budget.min_configs.saturating_sub(tried + pending).max(1) as u32 };
                        pending += b.items.len();
                        let paths: Vec<std::path::PathBuf> = b.items.iter().map(|i| i.3.clone()).collect();
                        let opts = sweep_opts(&fam, best_lo);
                        let one = batch == 1;
                        flying.push(async move {
                            let t = Instant::now();
                            let outcome = if one {
                                Judged::One(self.evaluate_raw(ctx, &ctx.original_path, &paths[0], Some(&opts)).await)
                            } else {
                                Judged::Sweep(self.sweep_raw(ctx, paths, &opts, Some(room), least).await)
                            };
                            (number, outcome, t.elapsed().as_secs_f64())
                        });
                        staged.insert(number, b);
                    }
                }
            }
            if flying.is_empty() {
                if done.is_empty() {
                    break;
                }
                continue; // batches the guard refused whole, read in their turn
            }
            if let Some((number, outcome, took)) = flying.next().await {
                done.insert(number, (outcome, took));
            }
        }
        rounds[sweep_start..].sort_by_key(|r| r.round);
        if let Some((r, why)) = stop_at {
            // The final round follows the last one judged.
            round = rounds[sweep_start..].iter().map(|x| x.round).max().unwrap_or(r - 1).max(r - 1);
            stopped = Some(why);
        }

        // The final list. A kernel the user already autotunes keeps a list: the best config and those
        // whose interval reaches its lower end (the sweep could not tell them apart), at most 3, all
        // faster than the start. Otherwise the best config alone, written into the launches: with
        // several configs Triton's autotuner sits between every call and the kernel, and on an H100
        // host that cost 19 µs a launch (rotary: 51 µs to issue a call against 31 µs for one config,
        // tests/bench/stages/stage_repeat.sh), which made a list of configs each verified 1.02-1.04x
        // faster come out 0.88x. Configs the sweep could not tell apart gain nothing on the timed shape.
        let most = if plan.keeps_autotune() { 3 } else { 1 };
        let Some((chosen, why)) = final_pick(&measured, screened, most) else { return Ok(None) };
        let chosen: Vec<space::TuneConfig> = chosen.into_iter().map(|m| m.config.clone()).collect();
        round += 1;
        let label = match chosen.as_slice() {
            [one] if !plan.keeps_autotune() => format!("final: {} written into the launches", one.label()),
            _ => format!("final list of {} config{}", chosen.len(), if chosen.len() == 1 { "" } else { "s" }),
        };
        let mut rec = RoundRecord::new(round, "autotune", label);
        rec.notes = reading_notes;
        rec.notes.extend(ready.take());
        rec.notes.push(fam.note());
        if chosen.len() > 1 {
            rec.notes.push("the autotuner chooses among these in the harness's warm-up; its picks are recorded per key".into());
        }
        if chosen.len() > 1 || plan.keeps_autotune() {
            rec.notes.extend(plan.restore_note());
        }
        if let Some(s) = stopped {
            rec.notes.push(s);
        }
        rec.notes.extend(why);
        let cand = plan.candidate(text, &chosen, &chosen_reading)?;
        if let Some((v, status)) = reuse(&verified, &chosen, &cand, &fam, knobs.budget.final_reuse_width)
            .and_then(|v| Some((v, self.acceptable(ctx, &v.evaluation)?)))
        {
            let [lo, hi] = v.evaluation.speedup_interval().unwrap_or([0.0, 0.0]);
            if let Some(r) = rounds.iter_mut().rev().find(|r| r.round == v.round) {
                // What the final round would have said (why the sweep stopped, say) goes with the round
                // that stands for it.
                for n in rec.notes.drain(..) {
                    if !r.notes.contains(&n) {
                        r.notes.push(n);
                    }
                }
                r.notes.push(format!(
                    "the final list is this config alone, byte for byte: this round's evaluation is the stage's \
                     result (accepted, interval [{lo:.3}, {hi:.3}], no wider than the {:.0}% that calls for a \
                     second evaluation); stage time {:.0} s",
                    knobs.budget.final_reuse_width * 100.0,
                    clock.elapsed().as_secs_f64()
                ));
            }
            return Ok(Some(Best { text: cand, evaluation: v.evaluation.clone(), status }));
        }
        rec.notes.push(format!("stage time before the final round: {:.0} s", clock.elapsed().as_secs_f64()));
        let final_opts = EvalOpts { runs: Some(knobs.budget.final_runs), ..fam.opts.clone() };
        let e = self.try_candidate_with(ctx, round, &cand, &mut rec, progress, Some(&final_opts)).await?;
        rounds.push(rec);
        match e {
            Some(e) if e.verdict == Verdict::Error => Err(self.harness_verdict_error(ctx, &e)),
            Some(e) => Ok(self.acceptable(ctx, &e).map(|status| Best { text: cand, evaluation: e, status })),
            None => Ok(None),
        }
    }
}

/// A measured config's own sweep evaluation, kept for [`reuse`].
struct Verified {
    config: space::TuneConfig,
    round: u32,
    sha256: Option<String>,
    /// [`Families::key`] when it was judged.
    families: String,
    evaluation: Evaluation,
}

/// The final list's evaluation when it has already been made: a list of one config whose sweep round
/// judged these very bytes `accepted`, on the families still in use, with an interval no wider than
/// `width` (hi / lo - 1). A second evaluation of the same file would only narrow an interval that is
/// already narrow; on an H100 every accepted stage's final list was such a config, and its round took
/// 6-28 s (tests/bench/results/autotune_general_h100.md). A wide interval is measured again with the
/// final round's larger number of pairs; a list of several configs is a new file (the autotuner picks).
fn reuse<'a>(verified: &'a [Verified], chosen: &[space::TuneConfig], cand: &str, fam: &Families, width: f64) -> Option<&'a Verified> {
    let [only] = chosen else { return None };
    let sha = evidence::sha256(cand);
    let v = verified.iter().rev().find(|v| &v.config == only)?;
    (stands(&v.evaluation, width) && v.sha256.as_deref() == Some(sha.as_str()) && v.families == fam.key()).then_some(v)
}

/// An evaluation that can stand as the stage's result without a second one: `accepted`, with an
/// interval at most `width` wide (hi / lo - 1).
fn stands(e: &Evaluation, width: f64) -> bool {
    let narrow = e.speedup_interval().is_some_and(|[lo, hi]| lo > 0.0 && hi / lo - 1.0 <= width);
    e.verdict == Verdict::Accepted && narrow
}

/// The screen's order of `sweep` (indices, fastest first): the autotuner's timings of its last
/// search when reported, else its pick for the timed variant alone (the pick whose key has the largest
/// product of its numbers: the timed variant is the largest one).
fn screen_order(e: &Evaluation, sweep: &[space::TuneConfig]) -> Vec<usize> {
    let Some(report) = e.compile.as_ref() else { return Vec::new() };
    let mut timed: Vec<(f64, usize)> = report
        .autotune_timings
        .iter()
        .filter(|t| t.ms.is_finite() && t.ms > 0.0)
        .filter_map(|t| Some((t.ms, sweep.iter().position(|c| c.matches(&t.config))?)))
        .collect();
    if !timed.is_empty() {
        timed.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut seen = vec![false; sweep.len()];
        return timed.into_iter().filter(|(_, i)| !std::mem::replace(&mut seen[*i], true)).map(|(_, i)| i).collect();
    }
    let size = |key: &[String]| key.iter().filter_map(|k| k.parse::<f64>().ok()).map(f64::abs).filter(|v| *v >= 1.0).product::<f64>();
    let pick = report.autotune_picks.iter().max_by(|a, b| size(&a.key).total_cmp(&size(&b.key)));
    pick.and_then(|p| sweep.iter().position(|c| c.matches(&p.config))).into_iter().collect()
}

/// A config the sweep judged correct, and what its round measured.
#[derive(Debug, Clone)]
struct Measured {
    config: space::TuneConfig,
    speedup: f64,
    ci: [f64; 2],
    /// Its place in the sweep's order: after a screen, the autotuner's device timings, fastest first.
    rank: usize,
    /// Its calls were measured at the launch floor of their round ([`at_floor`]): (issue, call) µs.
    floor: Option<(f64, f64)>,
}

/// Share of a candidate's measured call that the original's launch issue, in the same round, must
/// reach for the call to count as measured at the launch floor (the harness's `ISSUE_BOUND`).
const FLOOR_SHARE: f64 = 0.85;

/// (issue, call) µs when a round timed the candidate's calls at the launch floor: issuing one call of
/// the original (the same wrapper and launch, on the same core, in the same round) takes at least
/// [`FLOOR_SHARE`] of the candidate's measured call. The judge's clock counts the host's issue, and
/// that issue wanders between rounds (41-79 µs a call for one GEMM's original on an H100,
/// tests/bench/results/autotune_general_h100_default.md), so such a round's speedup says how fast the
/// host was, not the kernel: it is a lower bound on what the config gains where its launches are
/// not the bottleneck.
fn at_floor(e: &Evaluation) -> Option<(f64, f64)> {
    let t = e.timing.as_ref().filter(|t| t.meaningful)?;
    let (issue, call) = (t.issue_us?, t.candidate_us?);
    (issue > 0.0 && call > 0.0 && issue >= FLOOR_SHARE * call).then_some((issue, call))
}

/// The configs the final round is built on (at most `most`, the first leading), and why the lead is
/// not the config with the best measured speedup when it is not. None when nothing measured was
/// faster than the original.
///
/// The lead is the best measured config, unless the sweep was ordered by a screen and a config the
/// judge could not rank below it comes earlier in that order: one whose interval reaches the best
/// one's lower end, or one measured at the launch floor ([`at_floor`]), whose speedup is only a lower
/// bound. Either must have been verified faster than the original in its own round (its interval
/// above 1). The autotuner's device timings then decide between configs the judge's clock cannot tell
/// apart; the judge's verdict on the lead is still what the stage reports.
fn final_pick(measured: &[Measured], screened: bool, most: usize) -> Option<(Vec<&Measured>, Option<String>)> {
    let mut by_speedup: Vec<&Measured> = measured.iter().collect();
    by_speedup.sort_by(|a, b| b.speedup.total_cmp(&a.speedup));
    let best = *by_speedup.first()?;
    if best.speedup <= 1.0 {
        return None;
    }
    let tied = |m: &Measured| m.speedup > 1.0 && m.ci[1] >= best.ci[0];
    let unranked = |m: &Measured| m.ci[0] > 1.0 && (tied(m) || m.floor.is_some());
    let lead = if screened {
        by_speedup.iter().copied().filter(|m| std::ptr::eq(*m, best) || unranked(m)).min_by_key(|m| m.rank).unwrap_or(best)
    } else {
        best
    };
    let why = (!std::ptr::eq(lead, best)).then(|| {
        let how = match lead.floor {
            Some((issue, call)) => format!(
                "its round measured {:.2}× at the launch floor ({issue:.0} µs of its {call:.0} µs a call was the original's launch issue in that round)",
                lead.speedup
            ),
            None => format!("its round measured {:.2}× [{:.3}, {:.3}], which the judge could not tell apart", lead.speedup, lead.ci[0], lead.ci[1]),
        };
        format!(
            "{} leads, not {} ({:.2}× measured): {how}; between configs the judge's clock cannot rank, the autotuner's device \
             timings (the screen) decide",
            lead.config.label(),
            best.config.label(),
            best.speedup
        )
    });
    let mut chosen = vec![lead];
    chosen.extend(by_speedup.iter().copied().filter(|m| !std::ptr::eq(*m, lead) && tied(m)).take(most.saturating_sub(1)));
    Some((chosen, why))
}

/// Whether the config the final round would lead with ([`final_pick`]) would be the stage's result
/// without a final round: a kernel whose result is that config alone (not a list of the user's), and
/// its own round [`stands`] (what [`reuse`] asks of it).
fn best_is_final(plan: &autotune::Plan, measured: &[Measured], screened: bool, verified: &[Verified], width: f64) -> bool {
    if plan.keeps_autotune() {
        return false;
    }
    let Some((chosen, _)) = final_pick(measured, screened, 1) else { return false };
    verified.iter().rev().find(|v| v.config == chosen[0].config).is_some_and(|v| stands(&v.evaluation, width))
}

/// Configs staged for one harness request of the sweep.
struct Batch {
    /// Where in the sweep it starts, and the round before its first config: where to go back to.
    first: usize,
    first_round: u32,
    items: Vec<(usize, space::TuneConfig, RoundRecord, std::path::PathBuf)>,
    /// Configs the guard refused, kept in round order with the judged ones.
    refused: Vec<RoundRecord>,
    /// Its room had the final round's time set aside.
    reserved: bool,
}

/// A batch's answer: one `sweep`, or one `evaluate` from a harness without `sweep`; nothing for a
/// batch the guard refused whole.
enum Judged {
    Sweep(Result<Result<crate::harness::Sweep, Evaluation>, StageError>),
    One(Result<Evaluation, StageError>),
    Nothing,
}

/// The configs of the answers in but not yet read, with their evaluations.
fn unread<'a>(staged: &'a BTreeMap<u64, Batch>, done: &'a BTreeMap<u64, (Judged, f64)>) -> Vec<(&'a space::TuneConfig, &'a Evaluation)> {
    let mut out = Vec::new();
    for (number, (judged, _)) in done {
        let results: &[Evaluation] = match judged {
            Judged::Sweep(Ok(Ok(s))) => &s.results,
            Judged::One(Ok(e)) => std::slice::from_ref(e),
            _ => &[],
        };
        if let Some(b) = staged.get(number) {
            out.extend(b.items.iter().map(|i| &i.1).zip(results));
        }
    }
    out
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Two configs that give the names an open grid factor may take distinct values, in opposite orders,
/// so a reading that swaps any two of them launches too few programs under one of the two.
fn probes(plan: &autotune::Plan, tt: &space::TuneTarget) -> Vec<space::TuneConfig> {
    let names = plan.grid.open_names();
    let k = names.len() as u32;
    let mut out = Vec::new();
    for rev in [false, true] {
        let mut c = plan.input.start.clone();
        for (i, n) in names.iter().enumerate() {
            let i = i as u32;
            let v = 16i64 << if rev { i } else { k.saturating_sub(1) - i };
            if let Some(slot) = c.kwargs.iter_mut().find(|(x, _)| x == n) {
                slot.1 = space::ConfigValue::Int(v);
            }
        }
        if space::legal(&c, &plan.input, tt) && !out.contains(&c) {
            out.push(c);
        }
    }
    if out.is_empty() {
        out.push(plan.input.start.clone());
    }
    out
}

fn spills(e: &Evaluation) -> bool {
    e.compile.as_ref().is_some_and(|c| c.configs.iter().any(|m| m.spills.unwrap_or(0) > 0))
}

/// `c` has every tile at least as large as `s`'s and no more warps: it would spill at least as much.
fn spills_more(c: &space::TuneConfig, s: &space::TuneConfig, input: &space::TuneInput) -> bool {
    let tile = |x: &space::TuneConfig, n: &str| x.get(n).and_then(|v| v.as_int()).unwrap_or(0);
    c.num_warps <= s.num_warps && c.num_stages >= s.num_stages && input.blocks.iter().all(|(n, _)| tile(c, n) >= tile(s, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(block: i64, speedup: f64, ci: [f64; 2], rank: usize, floor: Option<(f64, f64)>) -> Measured {
        let config = space::TuneConfig { kwargs: vec![("BLOCK".into(), space::ConfigValue::Int(block))], num_warps: 4, num_stages: 3 };
        Measured { config, speedup, ci, rank, floor }
    }

    fn lead(measured: &[Measured], screened: bool) -> i64 {
        let (chosen, _) = final_pick(measured, screened, 1).expect("a pick");
        chosen[0].config.get("BLOCK").and_then(|v| v.as_int()).unwrap()
    }

    #[test]
    fn the_best_measured_config_leads_when_the_judge_can_rank_it() {
        // The screen put 64 first, but its round measured it clearly slower, not at the floor.
        let measured = [m(64, 3.0, [2.9, 3.1], 0, None), m(128, 4.2, [4.1, 4.3], 1, None)];
        assert_eq!(lead(&measured, true), 128);
        assert!(final_pick(&measured, true, 1).unwrap().1.is_none());
    }

    #[test]
    fn a_config_measured_at_the_launch_floor_is_ranked_by_the_screen() {
        // 64's round: 79 µs of the original's issue against 87 µs a call, so 3.09× says how fast the
        // host was; the screen ranks it ahead of 128, which a faster-issuing round measured at 4.29×.
        let measured = [m(64, 3.09, [3.0, 3.2], 0, Some((79.0, 87.0))), m(128, 4.29, [4.2, 4.4], 1, None)];
        let (chosen, why) = final_pick(&measured, true, 1).unwrap();
        assert_eq!(chosen.len(), 1);
        assert_eq!(lead(&measured, true), 64);
        let why = why.expect("says why the best measured does not lead");
        assert!(why.contains("launch floor (79 µs of its 87 µs a call"), "{why}");
        assert!(why.contains("BLOCK=128"), "{why}");
    }

    #[test]
    fn without_a_screen_there_is_no_device_order_to_rank_by() {
        let measured = [m(64, 3.09, [3.0, 3.2], 0, Some((79.0, 87.0))), m(128, 4.29, [4.2, 4.4], 1, None)];
        assert_eq!(lead(&measured, false), 128);
    }

    #[test]
    fn configs_the_judge_cannot_tell_apart_go_by_the_screen() {
        let measured = [m(256, 1.50, [1.40, 1.61], 2, None), m(64, 1.48, [1.38, 1.58], 0, None), m(32, 1.2, [1.1, 1.3], 1, None)];
        assert_eq!(lead(&measured, true), 64);
        let why = final_pick(&measured, true, 1).unwrap().1.unwrap();
        assert!(why.contains("could not tell apart"), "{why}");
    }

    #[test]
    fn a_config_not_verified_faster_than_the_original_never_leads() {
        // At the floor and first in the screen, but its own round did not show it faster (interval
        // reaching 1): the stage keeps what was verified.
        let measured = [m(64, 1.02, [0.97, 1.08], 0, Some((50.0, 52.0))), m(128, 1.3, [1.2, 1.4], 1, None)];
        assert_eq!(lead(&measured, true), 128);
    }

    #[test]
    fn nothing_faster_than_the_original_is_no_pick() {
        let measured = [m(64, 0.98, [0.95, 1.01], 0, None)];
        assert!(final_pick(&measured, true, 1).is_none());
        assert!(final_pick(&[], true, 1).is_none());
    }

    #[test]
    fn a_list_keeps_the_lead_first_then_the_configs_tied_with_the_best() {
        let measured =
            [m(256, 1.50, [1.40, 1.61], 2, None), m(64, 1.30, [1.25, 1.35], 0, Some((40.0, 44.0))), m(128, 1.45, [1.41, 1.5], 1, None)];
        let (chosen, _) = final_pick(&measured, true, 3).unwrap();
        let blocks: Vec<i64> = chosen.iter().map(|c| c.config.get("BLOCK").and_then(|v| v.as_int()).unwrap()).collect();
        assert_eq!(blocks, [64, 256, 128]);
    }

    #[test]
    fn a_round_is_at_the_floor_when_the_originals_issue_fills_the_call() {
        let judged = |meaningful: bool, call: f64| -> Evaluation {
            serde_json::from_value(serde_json::json!({
                "verdict": "accepted",
                "timing": {"meaningful": meaningful, "candidate_us": call, "issue_us": 79.0}
            }))
            .unwrap()
        };
        let e = judged(true, 87.0);
        assert_eq!(at_floor(&e), Some((79.0, 87.0)));
        assert_eq!(at_floor(&judged(true, 120.0)), None);
        assert_eq!(at_floor(&judged(false, 87.0)), None, "no timing on the interpreter");
    }
    #[test]
    fn a_gpu_with_no_family_named_times_on_the_specs_bench_family() {
        let fams = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(bench_family(&fams(&["ci", "bench-gpu"]), "cuda").as_deref(), Some("bench-gpu"));
        assert_eq!(bench_family(&fams(&["ci", "bench-gpu", "bench-xpu"]), "xpu").as_deref(), Some("bench-xpu"));
        assert_eq!(bench_family(&fams(&["ci", "bench-big"]), "cuda").as_deref(), Some("bench-big"));
        assert_eq!(bench_family(&fams(&["ci"]), "cuda"), None);
    }
}
