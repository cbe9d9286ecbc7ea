//! The deterministic `autotune` generator: read what a kernel tunes (its autotune configs, or the
//! literal launch options it hard-codes), build a config space ([`space`]), and write chosen configs
//! back: the `configs=[...]` list is replaced, or an `@triton.autotune` decorator is added and the
//! now-conflicting launch keywords removed (a grid that used those values reads them from `META`:
//! [`grid`] says which literal is which name, [`pairing`] reads the kernel for it and for the key).

pub mod bind;
pub mod budget;
pub mod derive;
pub mod emit;
pub mod grid;
pub mod pairing;
pub mod space;
pub mod splat;
mod tidy;

use super::outline::{Arg, Function, LaunchSite, Outline, slice};
use crate::text::TextRange;
use space::{ConfigValue, KernelKind, TuneConfig, TuneInput};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AutotuneError {
    #[error("no Triton kernel named `{0}` in this file")]
    NoSuchKernel(String),
    #[error("this file has {} kernels ({}); name one with --kernel", .0.len(), quoted(.0))]
    Ambiguous(Vec<String>),
    /// The message says what the file launches from elsewhere (`Outline::no_kernel_message`).
    #[error("{0}")]
    NoKernel(String),
    #[error("`{0}` has no autotune configs and is not launched in this file: nothing to tune")]
    NothingToTune(String),
    #[error(
        "`{kernel}` is launched through `{kernel}.{method}(...)`, whose options are fixed where it is called: the stage tunes \
         launches written `{kernel}[grid](...)`; launch it that way, or tune the values passed to `{method}` by hand"
    )]
    LaunchedThroughHandle { kernel: String, method: &'static str },
    #[error("`{kernel}`'s configs are built by code the stage cannot read; edit them by hand or list them literally")]
    OpaqueConfigs { kernel: String },
    #[error(
        "`{kernel}` is launched with `{splat}`: the stage cannot tell which tiles and options that passes, and a \
         tuned value passed twice fails the launch. A dict literal built in the launch's function and read only \
         by item (`cfg[\"BLOCK\"]`) is spelled out by the stage; otherwise write them as keywords at the launch \
         (e.g. `BLOCK=512, num_warps=4`)"
    )]
    KeywordSplat { kernel: String, splat: String },
}

/// What the generator found out about the kernel; enough to build candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub kernel: String,
    pub input: TuneInput,
    pub key: Vec<String>,
    /// The launch grids' literals and the tuned names they stand for.
    pub grid: grid::GridPlan,
    /// One name per grid factor; the first is the most plausible, the rest are checked by the stage.
    pub readings: Vec<Vec<String>>,
    /// The original runs the start config and nothing else: one config in its list, or launches that
    /// all pass the same literal options. Otherwise (an autotuner choosing among several, warps
    /// computed by the wrapper, two call sites with their own tiles) the start config is one
    /// candidate among the others, timed like them.
    pub start_is_original: bool,
    /// Tiles the launch computes (`BLOCK=triton.next_power_of_2(n)`, `BLOCK_M=cfg.block_m`), with the
    /// expression: they stay at the launch, untuned, and the stage says so.
    pub kept: Vec<(String, String)>,
    /// Of those, tiles bound to a host name the wrapper also reads elsewhere: (name, where, as
    /// `line N: `code``), so the note can point at what ties them.
    pub kept_reads: Vec<(String, String)>,
    /// Of those, tiles a host tensor descriptor is built with too: (name, the descriptor's call).
    pub tied: Vec<(String, String)>,
    /// Host tensor descriptors whose block follows the config's tiles: (the kernel parameter, each
    /// block size's tile or `None` where the size is no tile). The list's configs set them in a `pre_hook`.
    pub descriptors: Vec<(String, Vec<Option<String>>)>,
    /// `num_warps`/`num_stages` the launch computes (`num_warps=num_warps` from a helper that picks
    /// them by size), with the expression: the result writes one tuned value in their place.
    pub replaced: Vec<(String, String)>,
    /// Host names the launches read a tuned value through (`BLOCK = 256` ... `BLOCK=BLOCK`): a local
    /// one the rewrite leaves unread is dropped (`tidy`).
    through: Vec<String>,
    /// Pointer parameters a call updates (loaded and stored, or atomically): an autotune list the
    /// stage writes names them in `restore_value`, unless its decorator already restores or zeroes.
    pub restore: Vec<String>,
    how: How,
    /// Where `import triton` goes when a list is written into a file that does not bind `triton`
    /// (`from triton import jit` alone): the start of the line after its last import.
    import_at: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
enum How {
    /// Replace the text of this range (the configs list) with the new list.
    ReplaceConfigs { configs: TextRange, indent: String },
    /// Insert a decorator at `at`, and drop tuned keywords from these launches.
    AddDecorator { at: TextRange, indent: String },
    /// A kernel made by an assignment (`add = triton.jit(_add_impl)`): wrap the call at `at` (the
    /// JIT's, or that of the `triton.heuristics` over it) in `triton.autotune(...)(...)`, the `def`
    /// left as it is; a `pre_hook` goes above the statement, at `hook_at`.
    WrapCall { at: TextRange, hook_at: usize, indent: String },
}

/// Why a kernel without configs has no launch to tune: launched through a compiled handle
/// (`k.warmup(...)`, as Triton's fused-softmax tutorial does, or `k.run(...)`), or not at all.
fn not_launched(text: &str, kernel: &str) -> AutotuneError {
    ["warmup", "run"]
        .into_iter()
        .find(|m| {
            let call = format!("{kernel}.{m}(");
            // `k.warmup(`, not `my_k.warmup(`: the name must start where the match does.
            text.match_indices(&call).any(|(i, _)| !text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.'))
        })
        .map(|method| AutotuneError::LaunchedThroughHandle { kernel: kernel.to_string(), method })
        .unwrap_or_else(|| AutotuneError::NothingToTune(kernel.to_string()))
}

/// `a`, `b` as a message lists names.
pub(crate) fn quoted(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// Choose the kernel: the named one, else the only one, else the only launched one.
pub fn pick_kernel<'a>(o: &'a Outline, name: Option<&str>) -> Result<&'a Function, AutotuneError> {
    if let Some(n) = name {
        return o.kernel(n).ok_or_else(|| AutotuneError::NoSuchKernel(n.to_string()));
    }
    let kernels: Vec<&Function> = o.kernels().collect();
    match kernels.len() {
        0 => Err(AutotuneError::NoKernel(o.no_kernel_message())),
        1 => Ok(kernels[0]),
        _ => {
            let launched: Vec<&&Function> = kernels.iter().filter(|k| o.launches.iter().any(|l| l.targets(&k.name))).collect();
            match launched.as_slice() {
                [one] => Ok(one),
                _ => Err(AutotuneError::Ambiguous(kernels.iter().map(|k| k.name.clone()).collect())),
            }
        }
    }
}

pub fn plan(text: &str, o: &Outline, kernel: &Function, backend: space::TuneBackend) -> Result<Plan, AutotuneError> {
    let constexprs: Vec<&str> = kernel
        .params
        .iter()
        .filter(|p| p.annotation.as_deref().is_some_and(|a| a.contains("constexpr")))
        .map(|p| p.name.as_str())
        .collect();
    // The kernel's code: for one made by an assignment, its `def` alone (its range spans the statement too).
    let body = slice(text, if kernel.made.is_some() { kernel.def_range } else { kernel.range });
    let has_dot = body.contains("tl.dot(") || body.contains(".dot(");
    let default_stages = if backend == space::TuneBackend::Xpu { 2 } else { 3 };
    // A kernel made by an assignment is tuned there: the list goes into its statement.
    let indent = line_indent(text, kernel.made.as_ref().map_or(kernel.range.start, |m| m.statement.start));
    let tree = crate::syntax::parse(text);

    let launches: Vec<&LaunchSite> = o.launches.iter().filter(|l| l.targets(&kernel.name)).collect();
    let sites: Vec<TextRange> = launches.iter().map(|l| l.range).collect();
    // What each launch passes (`bind`), in the order of `launches`.
    let bound_at: Vec<Vec<bind::Bound>> = launches.iter().map(|l| bind::bindings(text, tree.root_node(), kernel, l, &sites)).collect();
    // A `**dict` may hold any tuned name: writing the config beside it would pass that name twice.
    let splat = launches.iter().flat_map(|l| &l.args).map(|a| slice(text, a.range).trim()).find(|a| a.starts_with("**"));
    if let (None, Some(splat)) = (kernel.autotune, splat) {
        return Err(AutotuneError::KeywordSplat { kernel: kernel.name.clone(), splat: splat.to_string() });
    }
    let (mut kept, mut replaced, mut tied, mut descriptors) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut kept_reads = Vec::new();
    let (start, key, how, start_is_original) = if let Some(i) = kernel.autotune {
        let deco = kernel.decorators[i];
        let (configs_range, listed, key) =
            read_autotune(text, deco).ok_or_else(|| AutotuneError::OpaqueConfigs { kernel: kernel.name.clone() })?;
        let how = How::ReplaceConfigs { configs: configs_range, indent: indent.clone() };
        match listed {
            Some((first, count)) => (first, key, how, count == 1),
            // Configs built by code (a helper, a comprehension): their names are the tuning knobs the
            // launches leave to the autotuner. The start is a guess, timed like any other config.
            None => (
                opaque_start(kernel, &launches, default_stages).ok_or(AutotuneError::OpaqueConfigs { kernel: kernel.name.clone() })?,
                key,
                how,
                false,
            ),
        }
    } else {
        let (launch, first) = launches.first().zip(bound_at.first().cloned()).ok_or_else(|| not_launched(text, &kernel.name))?;
        // What the first launch passes is the starting config; a launch with no literal at all
        // still has num_warps and num_stages to tune (computed tiles stay at the launch).
        let mut cfg = TuneConfig { kwargs: Vec::new(), num_warps: 4, num_stages: default_stages };
        // Warps or stages the launch computes (no literal binds them): the result writes one tuned
        // value in their place, and says so.
        replaced = launch
            .args
            .iter()
            .filter_map(|a| Some((a.name.clone()?, a.value)))
            .filter(|(n, _)| bind::COUNTS.contains(&n.as_str()) && !first.iter().any(|b| &b.name == n))
            .map(|(n, v)| (n, slice(text, v).trim().to_string()))
            .collect();
        // So are tiles and counts the wrapper chooses among literals (`if M >= 1024: BM = 128 ...`).
        replaced.extend(first.iter().filter(|b| b.chosen).filter_map(|b| Some((b.name.clone(), b.via.clone()?))));
        let computed = !replaced.is_empty();
        // A switch such as `ACT=0` here and `ACT=1` at another call site is what the kernel computes,
        // not how: a config would force one value on both. Left at the launches; tiles, warps and
        // stages may differ (each site's grid reads its config).
        // A tile that another site computes (`BLOCK=triton.next_power_of_2(n)`) stays everywhere too:
        // that site's grid reads its own variable, which a config would no longer match.
        let computed_elsewhere =
            |name: &str| launches.iter().zip(&bound_at).any(|(l, bound)| !bound.iter().any(|b| b.name == name) && passes(kernel, l, name));
        let varies = |name: &str, value: &ConfigValue| {
            computed_elsewhere(name) || bound_at.iter().any(|bound| bound.iter().any(|b| b.name == name && b.value != *value))
        };
        // A tile the launch's host tensor descriptors are built with (`from_tensor(x, [64, 32])`,
        // `BLOCK_M=64`) must change with them: a config `pre_hook` sets each descriptor's block from
        // the config's tiles (`descriptor_hooks`). Where a size could be either of two tiles, or the
        // descriptor is not passed to the kernel by name, the tiles stay at the launch.
        let (hooks, unhooked) =
            descriptor_hooks(text, kernel, launch, &bind::descriptor_blocks(text, tree.root_node(), launch), &first, &constexprs);
        descriptors = hooks;
        let in_descriptor = |b: &bind::Bound| unhooked.iter().find(|(n, _)| n == &b.name).map(|(_, call)| call);
        let tuned: Vec<bind::Bound> = first
            .into_iter()
            .filter(|b| bind::COUNTS.contains(&b.name.as_str()) || !computed_elsewhere(&b.name))
            .filter(|b| bind::is_tuning_knob(&b.name) || !varies(&b.name, &b.value))
            .filter(|b| match in_descriptor(b) {
                Some(call) if !bind::COUNTS.contains(&b.name.as_str()) => {
                    tied.push((b.name.clone(), call.clone()));
                    false
                }
                _ => true,
            })
            .collect();
        // The tuned names' values at a launch, by name: the start config is the original where every
        // launch passes the same.
        let values = |bound: &[bind::Bound]| {
            let mut v: Vec<(String, ConfigValue)> =
                bound.iter().filter(|b| tuned.iter().any(|t| t.name == b.name)).map(|b| (b.name.clone(), b.value.clone())).collect();
            v.sort_by(|x, y| x.0.cmp(&y.0));
            v
        };
        let same_everywhere = bound_at.iter().all(|bound| values(bound) == values(&tuned));
        for b in tuned {
            match (b.name.as_str(), &b.value) {
                ("num_warps", ConfigValue::Int(w)) => cfg.num_warps = *w as u32,
                ("num_stages", ConfigValue::Int(s)) => cfg.num_stages = *s as u32,
                _ => cfg.kwargs.push((b.name, b.value)),
            }
        }
        // The key is the shapes the kernel bounds its indices with: never a pointer (a fresh output
        // tensor each call would re-run the search every call) nor a float such as `eps`.
        let tiles: Vec<String> = cfg.kwargs.iter().map(|(k, _)| k.clone()).collect();
        let facts = pairing::read(body, &tiles);
        let key = kernel
            .params
            .iter()
            .filter(|p| !constexprs.contains(&p.name.as_str()) && p.default.is_none())
            .filter(|p| facts.shapes.contains(&p.name) && !facts.pointers.contains(&p.name))
            .filter(|p| !cfg.kwargs.iter().any(|(k, _)| k == &p.name))
            .map(|p| p.name.clone())
            .collect();
        kept = computed_tiles(text, kernel, launch, &cfg, &constexprs);
        kept_reads = kept
            .iter()
            .filter_map(|(name, e)| {
                let at = bind::first_read_elsewhere(text, tree.root_node(), launch, &sites, e)?;
                Some((name.clone(), line_at(text, at)))
            })
            .collect();
        let how = match &kernel.made {
            Some(m) => How::WrapCall { at: m.applied[autotune_slot(text, kernel)], hook_at: m.statement.start, indent },
            None => {
                let at = kernel.decorators.get(autotune_slot(text, kernel)).copied().unwrap_or(kernel.def_range);
                How::AddDecorator { at: TextRange::empty(at.start), indent }
            }
        };
        (cfg, key, how, !computed && same_everywhere)
    };

    let blocks: Vec<(String, i64)> = start
        .kwargs
        .iter()
        .filter(|(k, _)| constexprs.contains(&k.as_str()))
        .filter_map(|(k, v)| v.as_int().map(|i| (k.clone(), i)))
        .collect();
    let axes: Vec<char> = blocks.iter().filter_map(|(n, _)| space_axis(n)).collect();
    let kind = if has_dot && axes.contains(&'M') && axes.contains(&'N') && axes.contains(&'K') {
        KernelKind::Gemm
    } else if has_dot && axes.contains(&'M') && axes.contains(&'N') {
        KernelKind::Attention
    } else if blocks.is_empty() {
        KernelKind::RowWise
    } else {
        KernelKind::Other
    };
    let fp32 = body.contains("tl.float32")
        && !body.contains("float16")
        && !body.contains("bfloat16")
        && has_dot
        && !body.contains(".to(tl.float16");
    let names: Vec<String> = start.kwargs.iter().filter(|(_, v)| v.as_int().is_some()).map(|(k, _)| k.clone()).collect();
    let facts = pairing::read(body, &names);
    let mut through: Vec<String> = bound_at
        .iter()
        .flatten()
        .filter(|b| names.contains(&b.name) || bind::COUNTS.contains(&b.name.as_str()))
        .filter_map(|b| b.via.clone())
        .collect();
    through.sort();
    through.dedup();
    // Each launch's grid is read with the values that launch passes (two call sites may pass
    // different tiles); a kernel with configs already reads them from META.
    let per_launch: Vec<Vec<bind::Bound>> = bound_at
        .into_iter()
        .map(|mut b| {
            b.retain(|b| names.contains(&b.name));
            if matches!(how, How::ReplaceConfigs { .. }) || b.is_empty() {
                // No tile at this launch: the configs' own values (a literal grid written for them).
                b = start
                    .kwargs
                    .iter()
                    .filter(|(k, v)| names.contains(k) && v.as_int().is_some())
                    .map(|(k, v)| bind::Bound { name: k.clone(), value: v.clone(), via: None, positional: None, chosen: false })
                    .collect();
            }
            b
        })
        .collect();
    // Triton's search times every config on the caller's own tensors: an update in place would be
    // applied once per benchmark call (the harness fails such a list, `search_effects`).
    let decorated = kernel.autotune.map(|i| slice(text, kernel.decorators[i]));
    let restore = match decorated.is_some_and(|d| d.contains("restore_value") || d.contains("reset_to_zero")) {
        true => Vec::new(),
        false => {
            let mut updated = facts.updated();
            // One tensor passed as a pointer the kernel reads and one it writes (`k[grid](x, x, n)`)
            // is updated in place too: the written one is named, which restores the tensor.
            for l in &launches {
                for (a, b) in bind::aliased(text, tree.root_node(), kernel, l) {
                    for (w, r) in [(&a, &b), (&b, &a)] {
                        if facts.written.contains(w) && facts.read.contains(r) {
                            updated.insert(w.clone());
                        }
                    }
                }
            }
            kernel
                .params
                .iter()
                .filter(|p| !constexprs.contains(&p.name.as_str()) && updated.contains(&p.name))
                .map(|p| p.name.clone())
                .collect()
        }
    };
    let grid = grid::read(text, o, kernel, &launches, &per_launch, &facts);
    let readings = grid.readings();
    // Without a spec ([`Plan::read_spec`]) the text is all there is: a dot's operands are 16-bit unless
    // the kernel says fp32; other data is fp32 unless the file names a 16-bit type.
    let elem_bytes = match has_dot {
        true if fp32 => 4,
        true => 2,
        false if text.contains("float16") || text.contains("bfloat16") => 2,
        false => 4,
    };
    let input = TuneInput { kind, blocks, start, elem_bytes };
    Ok(Plan {
        kernel: kernel.name.clone(),
        input,
        key,
        grid,
        readings,
        start_is_original,
        kept,
        kept_reads,
        tied,
        descriptors,
        replaced,
        through,
        restore,
        how,
        import_at: import_slot(text, o),
    })
}

/// Where `import triton` goes if the file does not bind the name `triton` (see [`Plan::import_at`]).
fn import_slot(text: &str, o: &Outline) -> Option<usize> {
    if crate::model::build_text(text).imports.triton.iter().any(|n| n == "triton") {
        return None;
    }
    let Some(last) = o.imports.iter().map(|i| i.range.end).max() else { return Some(0) };
    Some(text[last..].find('\n').map_or(text.len(), |n| last + n + 1))
}

/// Which of the kernel's decorators a new `@triton.autotune` goes above: right above the JIT
/// function and the `@triton.heuristics` over it, as Triton stacks them. Whatever else decorates the
/// kernel wraps the autotuner, not the other way round: `@staticmethod` in a class body, a library's
/// launch cache (`@libentry()`, as FlagGems writes it), which expects the autotuner beneath it. The
/// same for the calls an assignment applies (`libentry()(triton.heuristics(...)(triton.jit(fn)))`).
fn autotune_slot(text: &str, kernel: &Function) -> usize {
    let triton = |d: &TextRange, names: &[&str]| {
        let t = slice(text, *d).trim().trim_start_matches('@');
        let head = t.split('(').next().unwrap_or(t).trim();
        names.iter().any(|n| head == *n || head.ends_with(&format!(".{n}")))
    };
    let Some(jit) = kernel.decorators.iter().rposition(|d| triton(d, &["jit"])) else {
        return 0;
    };
    let mut first = jit;
    while first > 0 && triton(&kernel.decorators[first - 1], &["heuristics"]) {
        first -= 1;
    }
    first
}

/// The tiles `launch` passes that the start config does not hold (computed, or read from an object):
/// `(name, expression)`, in the launch's order.
fn computed_tiles(text: &str, kernel: &Function, launch: &LaunchSite, start: &TuneConfig, constexprs: &[&str]) -> Vec<(String, String)> {
    let tile = |name: &str| constexprs.contains(&name) && bind::is_tuning_knob(name) && !bind::COUNTS.contains(&name);
    bind::passed(text, kernel, launch)
        .0
        .into_iter()
        .filter(|(name, _, _)| tile(name) && !start.kwargs.iter().any(|(k, _)| k == name))
        .map(|(name, _, a)| (name, slice(text, a.value).trim().to_string()))
        .collect()
}

/// Which host descriptors a config `pre_hook` can keep in step with the tiles: (kernel parameter, each
/// block size's tile), and the tiles that must stay at the launch instead, each with the call that
/// ties it.
type Hooks = (Vec<(String, Vec<Option<String>>)>, Vec<(String, String)>);

fn descriptor_hooks(
    text: &str,
    kernel: &Function,
    launch: &LaunchSite,
    descs: &[bind::Descriptor],
    bound: &[bind::Bound],
    constexprs: &[&str],
) -> Hooks {
    let tiles: Vec<&bind::Bound> =
        bound.iter().filter(|b| !bind::COUNTS.contains(&b.name.as_str()) && constexprs.contains(&b.name.as_str())).collect();
    let (passed, _) = bind::passed(text, kernel, launch);
    let (mut hooks, mut unhooked) = (Vec::new(), Vec::new());
    for d in descs {
        let of = |size: &str| -> Vec<&str> {
            tiles
                .iter()
                .filter(|b| b.via.as_deref() == Some(size) || bind::literal(size).is_some_and(|v| v == b.value))
                .map(|b| b.name.as_str())
                .collect()
        };
        let sizes: Vec<Vec<&str>> = d.sizes.iter().map(|s| of(s)).collect();
        if sizes.iter().all(|t| t.is_empty()) {
            continue;
        }
        let param = passed.iter().find(|(_, _, a)| slice(text, a.value).trim() == d.name).map(|(p, _, _)| p.clone());
        match param {
            Some(p) if sizes.iter().all(|t| t.len() <= 1) => {
                hooks.push((p, sizes.iter().map(|t| t.first().map(|s| s.to_string())).collect::<Vec<_>>()));
            }
            _ => unhooked.extend(sizes.iter().flatten().map(|t| (t.to_string(), d.call.clone()))),
        }
    }
    // A tile one descriptor cannot follow stays for all of them.
    hooks.retain(|(_, sizes)| !sizes.iter().flatten().any(|t| unhooked.iter().any(|(u, _)| u == t)));
    (hooks, unhooked)
}

/// How [`Plan::kept_note`] begins: the CLI shows that note beside the summary.
pub const KEPT_NOTE: &str = "not tuned, left as the launch passes";
/// How [`Plan::replaced_note`] begins: the CLI shows it too.
pub const REPLACED_NOTE: &str = "computed at the launch, replaced by one tuned value";
/// How [`Plan::restore_note`] begins: the CLI shows it too.
pub const RESTORE_NOTE: &str = "the autotune list restores what the kernel updates in place";

impl Plan {
    /// What the stage cannot tune and why, for the evidence; `None` when every tile is tuned.
    pub fn kept_note(&self) -> Option<String> {
        if self.kept.is_empty() {
            return None;
        }
        let why = |e: &str| {
            if e.contains('(') {
                "computed at the launch".to_string()
            } else if e.contains('.') {
                "read off an object at run time".to_string()
            } else {
                format!("`{e}` is not one literal, or the wrapper reads it elsewhere too (a buffer's size, a loop)")
            }
        };
        let tied = |n: &str| self.tied.iter().find(|(t, _)| t == n).map(|(_, call)| call);
        let read = |n: &str| self.kept_reads.iter().find(|(t, _)| t == n).map(|(_, at)| at);
        let mut list: Vec<String> = self
            .kept
            .iter()
            .filter(|(n, _)| tied(n).is_none())
            .map(|(n, e)| match read(n) {
                Some(at) => {
                    format!("{n}=`{e}` (the wrapper also reads `{e}` at {at}: a config would change the kernel's tile and leave that line on the old one)")
                }
                None => format!("{n}=`{e}` ({})", why(e)),
            })
            .collect();
        let by_descriptor: Vec<String> = self.kept.iter().filter(|(n, _)| tied(n).is_some()).map(|(n, e)| format!("{n}=`{e}`")).collect();
        if let Some(call) = self.kept.iter().find_map(|(n, _)| tied(n)) {
            list.push(format!(
                "{} (host tensor descriptors are built with the same block, `{call}`, and which of its sizes is \
                 which tile is not clear (two tiles of one size, or a descriptor the launch does not pass): a config \
                 would change the kernel's tiles and not the descriptor's; a config `pre_hook` that sets the \
                 descriptors' `block_shape` from the tiles would let them be tuned)",
                by_descriptor.join(", ")
            ));
        }
        let tuned = if self.input.start.kwargs.iter().any(|(_, v)| v.as_int().is_some()) { "the other tiles, " } else { "" };
        Some(format!(
            "{KEPT_NOTE} {}: {}; the stage tunes {tuned}num_warps and num_stages. A literal at \
             the launch (or a name assigned one and read nowhere else) is tuned",
            if self.kept.len() == 1 { "it" } else { "them" },
            list.join(", "),
        ))
    }

    /// Why a list the stage writes names `restore_value` (see [`Plan::restore`]); `None` when it does not.
    pub fn restore_note(&self) -> Option<String> {
        let [first, ..] = self.restore.as_slice() else { return None };
        let names = self.restore.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        Some(format!(
            "{RESTORE_NOTE}: restore_value=[{}]. The kernel updates {names} in place (reads and writes \
             it, adds to it atomically, or writes a tensor the launch also passes as an input), and \
             Triton's search times every config on the caller's own tensors: without it, the first call \
             of each new shape would return `{first}` updated once per timed run",
            self.restore_list(),
        ))
    }

    /// [`Plan::restore`] as the decorator lists it: `'p_ptr', 'buf_ptr'`.
    fn restore_list(&self) -> String {
        self.restore.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
    }

    /// What the result writes over the wrapper's own choice, for the evidence and the CLI; `None`
    /// when the launch computes no warps or stages. A helper that picks `num_warps` by size (as
    /// Liger's and Unsloth's `calculate_settings` do) chooses per call; the result is one value,
    /// timed on the timed shape alone, so the user is told which sizes it was measured on.
    pub fn replaced_note(&self) -> Option<String> {
        if self.replaced.is_empty() {
            return None;
        }
        let list: Vec<String> = self.replaced.iter().map(|(n, e)| format!("{n}=`{e}`")).collect();
        Some(format!(
            "{REPLACED_NOTE}: {}. The wrapper may choose {} per size; the result is the value timed fastest \
             on the timed shape, and the other sizes are checked for correctness only",
            list.join(", "),
            if self.replaced.len() == 1 { "it" } else { "them" },
        ))
    }
}

fn space_axis(name: &str) -> Option<char> {
    let up = name.to_ascii_uppercase();
    // `BM`/`BN`/`BK` as in many GEMMs, besides BLOCK_M / BLOCK_SIZE_M / TILE_M.
    let short = up.len() == 2 && up.starts_with('B');
    if up.contains("GROUP") || !(up.contains("BLOCK") || up.contains("TILE") || short) {
        return None;
    }
    up.chars().last().filter(|c| matches!(c, 'M' | 'N' | 'K'))
}

/// From an `@triton.autotune(...)` decorator: the configs list's range, its first config, the key,
/// how many configs it lists.
/// Whether launch `l` passes the kernel's parameter `name`, by keyword or by position.
fn passes(kernel: &Function, l: &LaunchSite, name: &str) -> bool {
    l.args.iter().enumerate().any(|(i, a)| match &a.name {
        Some(n) => n == name,
        None => kernel.params.get(i).is_some_and(|p| p.name == name),
    })
}

/// A start config for a kernel whose `@triton.autotune` configs are built by code: each integer
/// constexpr tuning knob that no launch passes (the autotuner supplies it) at a middling value.
fn opaque_start(kernel: &Function, launches: &[&LaunchSite], num_stages: u32) -> Option<TuneConfig> {
    let kwargs: Vec<(String, ConfigValue)> = kernel
        .params
        .iter()
        .filter(|p| p.annotation.as_deref().is_some_and(|a| a.contains("constexpr")) && p.default.is_none())
        .filter(|p| bind::is_tuning_knob(&p.name) && !bind::COUNTS.contains(&p.name.as_str()) && !bind::OPTIONS.contains(&p.name.as_str()))
        .filter(|p| !launches.iter().any(|l| passes(kernel, l, &p.name)))
        .map(|p| {
            let up = p.name.to_ascii_uppercase();
            let v = if up.contains("SPLIT") {
                1
            } else if up.contains("GROUP") {
                8
            } else {
                64
            };
            (p.name.clone(), ConfigValue::Int(v))
        })
        .collect();
    (!kwargs.is_empty()).then_some(TuneConfig { kwargs, num_warps: 4, num_stages })
}

/// The decorator's `configs` expression, its literal list's first config and length where it is one
/// (None where code builds it), and the key.
fn read_autotune(text: &str, deco: TextRange) -> Option<(TextRange, Option<(TuneConfig, usize)>, Vec<String>)> {
    let src = slice(text, deco);
    let tree = crate::syntax::parse(src);
    let mut configs: Option<tree_sitter::Node> = None;
    let mut key = Vec::new();
    let root = tree.root_node();
    let mut stack = vec![root];
    let mut call = None;
    while let Some(n) = stack.pop() {
        if n.kind() == "call" && call.is_none() {
            call = Some(n);
            break;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    let args = call?.child_by_field_name("arguments")?;
    for (i, a) in crate::syntax::named_children(args).enumerate() {
        if a.kind() == "keyword_argument" {
            let name = a.child_by_field_name("name").map(|n| crate::syntax::node_text(src, n)).unwrap_or("");
            let value = a.child_by_field_name("value")?;
            match name {
                "configs" => configs = Some(value),
                "key" => {
                    key = crate::syntax::named_children(value)
                        .filter_map(|s| bind::literal(crate::syntax::node_text(src, s)))
                        .filter_map(|v| if let ConfigValue::Str(s) = v { Some(s) } else { None })
                        .collect()
                }
                _ => {}
            }
        } else if i == 0 {
            configs = Some(a);
        }
    }
    let configs = configs?;
    let r = crate::syntax::range(configs);
    let range = TextRange::new(deco.start + r.start, deco.start + r.end);
    if configs.kind() != "list" {
        return Some((range, None, key));
    }
    // A literal list whose first entry is not a literal `triton.Config(...)` is not read as code-built.
    let first = crate::syntax::named_children(configs).next()?;
    let cfg = read_config(src, first)?;
    Some((range, Some((cfg, crate::syntax::named_children(configs).count())), key))
}

fn read_config(src: &str, call: tree_sitter::Node) -> Option<TuneConfig> {
    if call.kind() != "call" {
        return None;
    }
    let args = call.child_by_field_name("arguments")?;
    let mut cfg = TuneConfig { kwargs: Vec::new(), num_warps: 4, num_stages: 3 };
    for a in crate::syntax::named_children(args) {
        match a.kind() {
            "dictionary" => {
                for pair in crate::syntax::named_children(a).filter(|p| p.kind() == "pair") {
                    let k = bind::literal(crate::syntax::node_text(src, pair.child_by_field_name("key")?))?;
                    let v = bind::literal(crate::syntax::node_text(src, pair.child_by_field_name("value")?))?;
                    if let ConfigValue::Str(k) = k {
                        cfg.kwargs.push((k, v));
                    }
                }
            }
            "keyword_argument" => {
                let name = crate::syntax::node_text(src, a.child_by_field_name("name")?);
                let v = bind::literal(crate::syntax::node_text(src, a.child_by_field_name("value")?));
                match (name, v) {
                    ("num_warps", Some(ConfigValue::Int(w))) => cfg.num_warps = w.max(1) as u32,
                    ("num_stages", Some(ConfigValue::Int(s))) => cfg.num_stages = s.max(1) as u32,
                    _ => {}
                }
            }
            _ => return None,
        }
    }
    Some(cfg)
}

/// `line N: `code`` for the line holding byte `at` (its code trimmed, at most 80 characters).
fn line_at(text: &str, at: usize) -> String {
    let lines = crate::text::LineIndex::new(text);
    let line = lines.line_of(at);
    let r = lines.line_range(text, line);
    let code: String = text[r.start..r.end].trim().chars().take(80).collect();
    format!("line {}: `{code}`", line + 1)
}

fn line_indent(text: &str, at: usize) -> String {
    let start = text[..at.min(text.len())].rfind('\n').map(|i| i + 1).unwrap_or(0);
    text[start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect()
}

impl Plan {
    /// Size the kernel's data by the spec's dtypes ([`derive::float_bytes`]) where it names any: the
    /// text rarely says what a dot reads, and a wrong guess prunes configs that fit (or keeps some
    /// that cannot compile).
    pub fn read_spec(&mut self, spec: &str) {
        if let Some(b) = derive::float_bytes(spec) {
            self.input.elem_bytes = b;
        }
        // A key is shapes only: a name the spec gives a fractional value (`eps: 1e-6`, `p: 0.5`) would
        // start a new search for every value a caller passes.
        if matches!(self.how, How::AddDecorator { .. } | How::WrapCall { .. }) {
            let floats = derive::float_values(spec);
            self.key.retain(|k| !floats.contains(k));
        }
    }

    /// The file with `configs` as the kernel's autotune list (and its launches adjusted), grids read
    /// the most plausible way.
    pub fn render(&self, text: &str, configs: &[TuneConfig]) -> Result<String, AutotuneError> {
        self.render_reading(text, configs, 0)
    }

    /// The same under reading `reading` of [`Plan::readings`].
    pub fn render_reading(&self, text: &str, configs: &[TuneConfig], reading: usize) -> Result<String, AutotuneError> {
        let r = self.readings.get(reading).cloned().unwrap_or_default();
        self.render_as(text, configs, &r)
    }

    /// The same with grid factors read as `reading` (one tuned name per factor of [`Plan::grid`]).
    pub fn render_as(&self, text: &str, configs: &[TuneConfig], reading: &[String]) -> Result<String, AutotuneError> {
        let mut edits: Vec<(TextRange, String)> = Vec::new();
        // Every `triton.Config` passes `num_ctas` too (1 unless set): a launch's own goes into the configs.
        let tuned: Vec<&str> =
            configs.iter().flat_map(|c| c.kwargs.iter().map(|(k, _)| k.as_str())).chain(["num_warps", "num_stages", "num_ctas"]).collect();
        let o = Outline::build(text);
        let ctas = o
            .launches
            .iter()
            .filter(|l| l.targets(&self.kernel))
            .flat_map(|l| l.args.iter().filter(|a| a.name.as_deref() == Some("num_ctas")))
            .find_map(|a| slice(text, a.value).trim().parse::<u32>().ok())
            .filter(|c| *c != 1);
        let restore = self.restore_list();
        // First: a decorator may start on the line it goes on.
        if let Some(at) = self.import_at {
            edits.push((TextRange::empty(at), "import triton\n".into()));
        }
        match &self.how {
            How::ReplaceConfigs { configs: r, indent } => {
                let tail = if restore.is_empty() { String::new() } else { format!(", restore_value=[{restore}]") };
                edits.push((*r, format!("{}{tail}", list(configs, indent, ctas, None))));
            }
            How::AddDecorator { at, indent } => {
                let (hook, autotune) = self.autotune_call(configs, indent, ctas);
                edits.push((*at, format!("{hook}@{autotune}\n{indent}")));
            }
            How::WrapCall { at, hook_at, indent } => {
                let (hook, autotune) = self.autotune_call(configs, indent, ctas);
                edits.push((TextRange::empty(*hook_at), hook));
                edits.push((TextRange::empty(at.start), format!("{autotune}(")));
                edits.push((TextRange::empty(at.end), ")".into()));
            }
        }
        edits.extend(self.grid.edits(reading));
        // Launch keywords the configs now set would conflict with them (XF109): remove them.
        let params = self.params(&o);
        for l in o.launches.iter().filter(|l| l.targets(&self.kernel)) {
            for a in l.args.iter().filter(|a| a.name.as_deref().is_some_and(|n| tuned.contains(&n))) {
                edits.push((arg_with_separator(text, l, a), String::new()));
            }
            // A tile passed by position goes too; the positional arguments after it become keywords.
            let positional = positional(text, l);
            if let Some(first) = (0..positional).find(|&i| params.get(i).is_some_and(|p| tuned.contains(p))) {
                for (i, a) in l.args.iter().enumerate().take(positional).skip(first) {
                    match params.get(i) {
                        Some(p) if tuned.contains(p) => edits.push((arg_with_separator(text, l, a), String::new())),
                        Some(p) => edits.push((TextRange::empty(a.range.start), format!("{p}="))),
                        None => {}
                    }
                }
            }
        }
        apply(text, edits).map(|t| tidy::drop_unread(&t, &self.through))
    }
}

impl Plan {
    /// `triton.autotune(configs=..., key=...)` for `configs` at `indent`, and the definition of the
    /// `pre_hook` its configs name, to stand above it (empty without one).
    fn autotune_call(&self, configs: &[TuneConfig], indent: &str, ctas: Option<u32>) -> (String, String) {
        let key = self.key.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ");
        let restore = self.restore_list();
        let restore = if restore.is_empty() { String::new() } else { format!("{indent}    restore_value=[{restore}],\n") };
        let (hook, configs) = match self.descriptor_hook(indent) {
            Some((name, def)) => (def, list(configs, indent, ctas, Some(&name))),
            None => (String::new(), list(configs, indent, ctas, None)),
        };
        (hook, format!("triton.autotune(\n{indent}    configs={configs},\n{indent}    key=[{key}],\n{restore}{indent})"))
    }

    /// The `pre_hook` that sets the host descriptors' blocks from a config's tiles (see
    /// [`Plan::descriptors`]): its name and its definition, to stand above the decorator.
    fn descriptor_hook(&self, indent: &str) -> Option<(String, String)> {
        if self.descriptors.is_empty() {
            return None;
        }
        let name = format!("_{}_descriptor_blocks", self.kernel.trim_start_matches('_'));
        let mut def =
            format!("def {name}(nargs):\n{indent}    # The host tensor descriptors' blocks follow the tiles of the config about to run.\n");
        for (param, sizes) in &self.descriptors {
            let block: Vec<String> = sizes
                .iter()
                .enumerate()
                .map(|(i, t)| match t {
                    Some(t) => format!("nargs[\"{t}\"]"),
                    None => format!("nargs[\"{param}\"].block_shape[{i}]"),
                })
                .collect();
            def.push_str(&format!("{indent}    nargs[\"{param}\"].block_shape = [{}]\n", block.join(", ")));
        }
        def.push_str(&format!("\n\n{indent}"));
        Some((name, def))
    }

    /// The most plausible grid reading (empty where no grid factor is tuned).
    pub fn first_reading(&self) -> &[String] {
        self.readings.first().map(Vec::as_slice).unwrap_or(&[])
    }

    /// The file with only `restore_value` added to the kernel's own autotune decorator (see
    /// [`Plan::restore`]); the text unchanged where there is nothing to add.
    pub fn with_restore(&self, text: &str) -> Result<String, AutotuneError> {
        match &self.how {
            How::ReplaceConfigs { configs, .. } if !self.restore.is_empty() => {
                apply(text, vec![(TextRange::empty(configs.end), format!(", restore_value=[{}]", self.restore_list()))])
            }
            _ => Ok(text.to_string()),
        }
    }

    /// Whether the kernel has an autotune list of its own (the stage replaces its configs, and a
    /// result of several configs stays a list).
    pub fn keeps_autotune(&self) -> bool {
        matches!(self.how, How::ReplaceConfigs { .. })
    }

    /// The file the stage measures for `configs` under `reading`: one config written into the launches
    /// ([`Plan::render_one`]), several as an autotune list ([`Plan::render_as`]).
    pub fn candidate(&self, text: &str, configs: &[TuneConfig], reading: &[String]) -> Result<String, AutotuneError> {
        match configs {
            [one] => self.render_one(text, one, reading),
            _ => self.render_as(text, configs, reading),
        }
    }

    /// The file with one config written into the launches themselves: every grid and every launch of
    /// the kernel take its values, with no `@triton.autotune` around the kernel. The autotuner's
    /// wrapper costs each call launch time (6-15 µs a call on an H100 host,
    /// tests/bench/results/autotune_launch_cost_h100.md): on a kernel whose launches take about as
    /// long as its device time, that alone turned configs 1.07-1.12x faster into 0.80-0.87x in the
    /// stage's timed comparison. A kernel that already has an autotune list keeps it, with this config.
    /// So does one whose host tensor descriptors follow the tiles: their blocks are set by the config's
    /// `pre_hook`, and a tile written into the launch alone would leave them as the host built them
    /// (on an H100, every such config read the wrong part of the matrix).
    pub fn render_one(&self, text: &str, config: &TuneConfig, reading: &[String]) -> Result<String, AutotuneError> {
        if self.keeps_autotune() || !self.descriptors.is_empty() {
            return self.render_as(text, std::slice::from_ref(config), reading);
        }
        let mut values: Vec<(String, String)> = config.kwargs.iter().map(|(k, v)| (k.clone(), v.render())).collect();
        values.push(("num_warps".into(), config.num_warps.to_string()));
        values.push(("num_stages".into(), config.num_stages.to_string()));
        let o = Outline::build(text);
        let inline = |s: &grid::Source| o.launches.get(s.launch).is_some_and(|l| l.grid == s.target);
        let mut edits = self.grid.pinned_edits(reading, inline, |name| config.get(name).and_then(ConfigValue::as_int));
        let params = self.params(&o);
        for l in o.launches.iter().filter(|l| l.targets(&self.kernel)) {
            let positional = positional(text, l);
            let mut missing = String::new();
            for (name, v) in &values {
                let passed = l
                    .args
                    .iter()
                    .position(|a| a.name.as_deref() == Some(name.as_str()))
                    .or_else(|| params.iter().position(|p| p == name).filter(|&i| i < positional));
                match passed {
                    Some(i) => edits.push((l.args[i].value, v.clone())),
                    None => missing.push_str(&format!("{name}={v}, ")),
                }
            }
            if missing.is_empty() {
                continue;
            }
            let missing = missing.trim_end_matches([',', ' ']);
            // Before the closing parenthesis, after a trailing comma if the list has one; a list
            // written one argument a line with a trailing comma gets one line per argument too.
            let close = l.args_range.end.saturating_sub(1);
            let inner = text.get(l.args_range.start + 1..close).unwrap_or("").trim_end();
            let at = l.args_range.start + 1 + inner.len();
            let last_line = inner.rsplit('\n').next().unwrap_or("");
            let added = if inner.contains('\n') && inner.ends_with(',') {
                let indent = &last_line[..last_line.len() - last_line.trim_start().len()];
                missing.split(", ").map(|kw| format!("\n{indent}{kw},")).collect::<String>()
            } else if inner.is_empty() {
                missing.to_string()
            } else if inner.ends_with(',') {
                format!(" {missing}")
            } else {
                format!(", {missing}")
            };
            edits.push((TextRange::empty(at), added));
        }
        apply(text, edits).map(|t| tidy::drop_unread(&t, &self.through))
    }
}

impl Plan {
    /// The kernel's parameter names, in order.
    fn params<'a>(&self, o: &'a Outline) -> Vec<&'a str> {
        o.kernel(&self.kernel).map(|k| k.params.iter().map(|p| p.name.as_str()).collect()).unwrap_or_default()
    }
}

/// How many of a launch's arguments map to the kernel's parameters by position: those before the
/// first keyword or `*splat`.
fn positional(text: &str, l: &LaunchSite) -> usize {
    l.args.iter().take_while(|a| a.name.is_none() && !slice(text, a.range).trim_start().starts_with('*')).count()
}

/// The configs as an autotune list; `ctas`: the `num_ctas` each passes where not 1; `hook`: the
/// `pre_hook` each names (see [`Plan::descriptor_hook`]).
fn list(configs: &[TuneConfig], indent: &str, ctas: Option<u32>, hook: Option<&str>) -> String {
    let mut tail = String::new();
    if let Some(n) = ctas {
        tail.push_str(&format!(", num_ctas={n}"));
    }
    if let Some(h) = hook {
        tail.push_str(&format!(", pre_hook={h}"));
    }
    let mut s = String::from("[\n");
    for c in configs {
        let config = c.render();
        s.push_str(&format!("{indent}        {}{tail}),\n", config.trim_end_matches(')')));
    }
    s.push_str(&format!("{indent}    ]"));
    s
}

/// The argument plus the comma that separates it from its neighbour.
fn arg_with_separator(text: &str, l: &LaunchSite, a: &Arg) -> TextRange {
    let idx = l.args.iter().position(|x| x.range == a.range).unwrap_or(0);
    if idx > 0 {
        TextRange::new(l.args[idx - 1].range.end, a.range.end)
    } else if let Some(next) = l.args.get(1) {
        TextRange::new(a.range.start, next.range.start)
    } else {
        // The only argument: keep a trailing comma out of it too.
        let mut end = a.range.end;
        let rest = &text[end..l.args_range.end.min(text.len())];
        if let Some(p) = rest.find(',')
            && rest[..p].trim().is_empty()
        {
            end += p + 1;
        }
        TextRange::new(a.range.start, end)
    }
}

fn apply(text: &str, mut edits: Vec<(TextRange, String)>) -> Result<String, AutotuneError> {
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = String::with_capacity(text.len() + 512);
    let mut at = 0;
    for (r, s) in edits {
        if r.start < at || r.end > text.len() {
            continue; // overlapping edit: the earlier one wins (cannot happen with distinct launch args)
        }
        out.push_str(&text[at..r.start]);
        out.push_str(&s);
        at = r.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use space::TuneBackend;

    const HARDCODED: &str = "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n    pid = tl.program_id(0)\n    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n_elements), mask=offs < n_elements)\n\nclass Model(torch.nn.Module):\n    def forward(self, x, y):\n        out = torch.empty_like(x)\n        n = out.numel()\n        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)\n        return out\n";

    /// HARDCODED with its launch replaced by `launch`, rendered with one config: the start config with
    /// `BLOCK_SIZE` set to `block` and `warps` warps.
    fn one_config(kernel: &str, launch: &str, block: i64, warps: u32) -> String {
        let src = HARDCODED.replace("add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)", launch);
        let o = Outline::build(&src);
        let p = plan(&src, &o, o.kernel(kernel).unwrap(), TuneBackend::Cuda).unwrap();
        let mut c = p.input.start.clone();
        c.kwargs[0].1 = ConfigValue::Int(block);
        c.num_warps = warps;
        p.candidate(&src, &[c], &p.readings[0]).unwrap()
    }

    /// A tile bound to a local the wrapper also reads (`assert M % BLOCK_M == 0`) stays at the launch,
    /// and the note points at the line that ties it.
    #[test]
    fn a_tile_the_wrapper_reads_elsewhere_is_kept_with_the_line_that_reads_it() {
        let src = HARDCODED.replace(
            "        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)",
            "        BLOCK = 1024\n        assert n % BLOCK == 0\n        add_kernel[(n // BLOCK,)](x, y, out, n, BLOCK_SIZE=BLOCK, num_warps=4)",
        );
        let o = Outline::build(&src);
        let p = plan(&src, &o, o.kernel("add_kernel").unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.kept, [("BLOCK_SIZE".to_string(), "BLOCK".to_string())]);
        let note = p.kept_note().unwrap();
        assert!(note.contains("the wrapper also reads `BLOCK` at line 16: `assert n % BLOCK == 0`"), "{note}");
    }

    /// Tiles and warps the wrapper chooses per size in an if-chain of literals are tuned: the start is
    /// the first branch's values, not the original (which chooses per call), the note says one value
    /// replaces the choice, and the rewrite leaves no stale chain behind.
    #[test]
    fn tiles_an_if_chain_chooses_are_tuned_and_the_chain_goes() {
        let src = HARDCODED.replace(
            "        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)",
            "        if n >= 1 << 20:\n            BLOCK = 4096\n            warps = 8\n        else:\n            BLOCK = 1024 if n > 4096 else 256\n            warps = 4\n        add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK_SIZE=BLOCK, num_warps=warps)",
        );
        let o = Outline::build(&src);
        let p = plan(&src, &o, o.kernel("add_kernel").unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.input.start.kwargs, [("BLOCK_SIZE".to_string(), ConfigValue::Int(4096))]);
        assert_eq!(p.input.start.num_warps, 8);
        assert!(!p.start_is_original && p.kept.is_empty(), "{:?}", p.kept);
        assert!(
            p.replaced_note().is_some_and(|n| n.contains("BLOCK_SIZE=`BLOCK`") && n.contains("num_warps=`warps`")),
            "{:?}",
            p.replaced_note()
        );
        let mut c = p.input.start.clone();
        c.kwargs[0].1 = ConfigValue::Int(512);
        c.num_warps = 2;
        let out = p.candidate(&src, &[c], &p.readings[0]).unwrap();
        assert!(
            out.contains("        n = out.numel()\n        add_kernel[(triton.cdiv(n, 512),)](x, y, out, n, BLOCK_SIZE=512, num_warps=2"),
            "{out}"
        );
        assert!(!out.contains("if n >= 1 << 20") && !out.contains("warps = "), "{out}");

        // Read by host code on one path too (a buffer's size): the choice stays at the launch.
        let tied = src.replace("            warps = 4\n", "            warps = 4\n            assert n % BLOCK == 0\n");
        let o = Outline::build(&tied);
        let p = plan(&tied, &o, o.kernel("add_kernel").unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.kept, [("BLOCK_SIZE".to_string(), "BLOCK".to_string())]);
    }

    /// A descriptor block a `pre_hook` cannot follow (two tiles of the same size: which is which?)
    /// leaves the tiles at the launch, and the note says why; one built inline in the launch is the
    /// object the kernel receives, so the hook sets it like a named one.
    #[test]
    fn descriptor_tiles_a_hook_cannot_follow_stay_at_the_launch() {
        let kernel = "import triton\nimport triton.language as tl\nfrom triton.tools.tensor_descriptor import TensorDescriptor\n\n@triton.jit\ndef k(d, o, BM: tl.constexpr, BN: tl.constexpr):\n    t = d.load([tl.program_id(0) * BM, tl.program_id(1) * BN])\n    o.store([tl.program_id(0) * BM, tl.program_id(1) * BN], t)\n\n";
        let square = "def run(x, y, M, N):\n    d = TensorDescriptor.from_tensor(x, [64, 64])\n    o = TensorDescriptor.from_tensor(y, [64, 64])\n    k[(triton.cdiv(M, 64), triton.cdiv(N, 64))](d, o, BM=64, BN=64)\n";
        let src = format!("{kernel}{square}");
        let o = Outline::build(&src);
        let p = plan(&src, &o, o.kernel("k").unwrap(), TuneBackend::Cuda).unwrap();
        assert!(p.descriptors.is_empty() && p.input.start.kwargs.is_empty(), "{:?} {:?}", p.descriptors, p.input.start);
        assert!(p.kept_note().is_some_and(|n| n.contains("host tensor descriptors are built with the same block")), "{:?}", p.kept_note());

        let inline = "def run(x, y, M, N):\n    k[(triton.cdiv(M, 64), triton.cdiv(N, 32))](TensorDescriptor.from_tensor(x, [64, 32]), TensorDescriptor.from_tensor(y, [64, 32]), BM=64, BN=32)\n";
        let src = format!("{kernel}{inline}");
        let o = Outline::build(&src);
        let p = plan(&src, &o, o.kernel("k").unwrap(), TuneBackend::Cuda).unwrap();
        let both = vec![Some("BM".to_string()), Some("BN".to_string())];
        assert_eq!(p.descriptors, [("d".to_string(), both.clone()), ("o".to_string(), both)]);
        assert!(p.kept_note().is_none());
    }

    /// The kernel's own list lacks `restore_value` on an in-place update: the stage's lists add it, and
    /// the start (the list itself, on the interpreter) gets it alone; one that restores is left as is.
    #[test]
    fn an_own_list_without_restore_value_on_an_in_place_kernel_gets_it() {
        let src = "import triton\nimport triton.language as tl\n\n@triton.autotune(configs=[triton.Config({'B': 64}), triton.Config({'B': 128})], key=['n'])\n@triton.jit\ndef k(y_ptr, x_ptr, n, B: tl.constexpr):\n    o = tl.program_id(0) * B + tl.arange(0, B)\n    tl.atomic_add(y_ptr + o, tl.load(x_ptr + o, mask=o < n), mask=o < n)\n\ndef run(y, x, n):\n    k[lambda m: (triton.cdiv(n, m['B']),)](y, x, n)\n";
        let o = Outline::build(src);
        let p = plan(src, &o, o.kernel("k").unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.restore, ["y_ptr"]);
        let added = p.with_restore(src).unwrap();
        assert!(added.contains("triton.Config({'B': 128})], restore_value=['y_ptr'], key=['n'])\n"), "{added}");
        let listed = p.render(src, std::slice::from_ref(&p.input.start)).unwrap();
        assert!(listed.contains("    ], restore_value=['y_ptr'], key=['n'])\n"), "{listed}");
        let restored = src.replace("key=['n']", "key=['n'], reset_to_zero=['y_ptr']");
        let o = Outline::build(&restored);
        let p = plan(&restored, &o, o.kernel("k").unwrap(), TuneBackend::Cuda).unwrap();
        assert!(p.restore.is_empty() && p.with_restore(&restored).unwrap() == restored);
    }

    #[test]
    fn a_file_with_several_launched_kernels_names_them_when_it_asks_which() {
        let src = HARDCODED
            .replace("class Model", "@triton.jit\ndef copy_kernel(x_ptr, n):\n    pass\n\nclass Model")
            .replace("        return out\n", "        copy_kernel[(1,)](out, n)\n        return out\n");
        let o = Outline::build(&src);
        let err = pick_kernel(&o, None).unwrap_err();
        assert_eq!(err.to_string(), "this file has 2 kernels (`add_kernel`, `copy_kernel`); name one with --kernel");
        assert_eq!(pick_kernel(&o, Some("copy_kernel")).unwrap().name, "copy_kernel");
    }

    #[test]
    fn a_grid_shared_with_another_kernels_launch_reads_each_launchs_own_value() {
        let out = one_config(
            "add_kernel",
            "grid = (triton.cdiv(n, 1024),)\n        add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)\n        copy_kernel[grid](out, y, n, BLOCK_SIZE=1024)",
            256,
            4,
        );
        assert!(out.contains("        grid = lambda META: (triton.cdiv(n, META['BLOCK_SIZE']),)\n"), "{out}");
        assert!(out.contains("add_kernel[grid](x, y, out, n, BLOCK_SIZE=256, num_warps=4, num_stages=3)"), "{out}");
        assert!(out.contains("copy_kernel[grid](out, y, n, BLOCK_SIZE=1024)"), "{out}");
    }

    #[test]
    fn a_launch_with_a_keyword_splat_is_refused_with_what_to_write_instead() {
        let src = HARDCODED.replace(
            "add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)",
            "add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, **self.meta)",
        );
        let o = Outline::build(&src);
        let err = plan(&src, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap_err();
        assert_eq!(err, AutotuneError::KeywordSplat { kernel: "add_kernel".into(), splat: "**self.meta".into() });
        assert!(err.to_string().contains("write them as keywords at the launch"), "{err}");
    }

    #[test]
    fn one_config_goes_one_option_a_line_after_a_trailing_comma_of_a_launch_written_over_several_lines() {
        let launch = "add_kernel[(triton.cdiv(n, 1024),)](\n            x, y, out, n,\n            BLOCK_SIZE=1024,\n        )";
        let out = one_config("add_kernel", launch, 256, 2);
        assert!(
            out.contains(
                "add_kernel[(triton.cdiv(n, 256),)](\n            x, y, out, n,\n            BLOCK_SIZE=256,\n            num_warps=2,\n            num_stages=3,\n        )"
            ),
            "{out}"
        );
        assert!(!out.contains("autotune"), "{out}");
    }

    #[test]
    fn hardcoded_launch_becomes_an_autotune_decorator() {
        let o = Outline::build(HARDCODED);
        let k = pick_kernel(&o, None).unwrap();
        let p = plan(HARDCODED, &o, k, TuneBackend::Cuda).unwrap();
        assert_eq!(p.key, vec!["n_elements".to_string()]);
        assert!(p.start_is_original);
        assert_eq!(p.input.kind, KernelKind::Other);
        assert_eq!(p.input.blocks, vec![("BLOCK_SIZE".to_string(), 1024)]);
        let mut c = p.input.start.clone();
        c.kwargs[0].1 = ConfigValue::Int(2048);
        let out = p.render(HARDCODED, &[c]).unwrap();
        assert!(
            out.contains(
                "@triton.autotune(\n    configs=[\n        triton.Config({'BLOCK_SIZE': 2048}, num_warps=4, num_stages=3),\n    ],\n    key=['n_elements'],\n)\n@triton.jit"
            ),
            "{out}"
        );
        assert!(out.contains("add_kernel[lambda META: (triton.cdiv(n, META['BLOCK_SIZE']),)](x, y, out, n)"), "{out}");
    }

    #[test]
    fn existing_configs_are_replaced_in_place() {
        let src = "import triton\nimport triton.language as tl\n\n@triton.autotune(configs=[triton.Config({'BLOCK': 64}, num_warps=2)], key=['n'])\n@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n    pass\n\ndef run(x, n):\n    k[lambda m: (triton.cdiv(n, m['BLOCK']),)](x, n, num_warps=8)\n";
        let o = Outline::build(src);
        let p = plan(src, &o, pick_kernel(&o, Some("k")).unwrap(), TuneBackend::Xpu).unwrap();
        assert_eq!(p.key, vec!["n".to_string()]);
        assert_eq!(p.input.start.num_warps, 2);
        assert!(p.start_is_original, "one config in the list");
        let cfg = TuneConfig { kwargs: vec![("BLOCK".into(), ConfigValue::Int(128))], num_warps: 4, num_stages: 2 };
        let out = p.render(src, &[cfg]).unwrap();
        assert!(
            out.contains(
                "@triton.autotune(configs=[\n        triton.Config({'BLOCK': 128}, num_warps=4, num_stages=2),\n    ], key=['n'])"
            ),
            "{out}"
        );
        // num_warps at the launch would conflict with the configs (XF109).
        assert!(out.contains("](x, n)\n"), "{out}");
    }

    #[test]
    fn configs_built_by_code_are_tuned_from_the_knobs_the_launches_leave_to_the_autotuner() {
        // A helper (or a comprehension) builds the list: the stage cannot read the user's configs, so
        // its start is a guess timed like the rest, and its list replaces the call.
        let src = "import triton\nimport triton.language as tl\n\ndef configs():\n    return [triton.Config({'BLOCK': b}) for b in (256, 1024)]\n\n@triton.autotune(configs=configs(), key=['n'])\n@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr, ACT: tl.constexpr, EPS: tl.constexpr = 1):\n    pass\n\ndef run(x, n):\n    k[lambda m: (triton.cdiv(n, m['BLOCK']),)](x, n, ACT=1)\n";
        let o = Outline::build(src);
        let p = plan(src, &o, pick_kernel(&o, Some("k")).unwrap(), TuneBackend::Cuda).unwrap();
        // ACT is passed at the launch and is not a tuning knob; EPS has a default.
        assert_eq!(p.input.start.kwargs, vec![("BLOCK".to_string(), ConfigValue::Int(64))]);
        assert!(!p.start_is_original, "the original autotunes over its own list");
        assert_eq!(p.key, vec!["n".to_string()]);
        let cfg = TuneConfig { kwargs: vec![("BLOCK".into(), ConfigValue::Int(512))], num_warps: 8, num_stages: 3 };
        let out = p.render(src, &[cfg]).unwrap();
        assert!(
            out.contains(
                "@triton.autotune(configs=[\n        triton.Config({'BLOCK': 512}, num_warps=8, num_stages=3),\n    ], key=['n'])"
            ),
            "{out}"
        );
        assert!(out.contains("](x, n, ACT=1)\n"), "{out}");
    }

    #[test]
    fn a_launch_without_literals_still_tunes_warps_and_keeps_computed_tiles() {
        let src =
            "import triton\n@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n    pass\n\ndef run(x, b):\n    k[(1,)](x, B=b, num_warps=w)\n";
        let o = Outline::build(src);
        let p = plan(src, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.input.kind, KernelKind::RowWise);
        assert_eq!(p.input.start, TuneConfig { kwargs: vec![], num_warps: 4, num_stages: 3 });
        assert!(!p.start_is_original, "the wrapper computes its warps: the start config is a guess, timed like the others");
        let cfg = TuneConfig { num_warps: 8, ..p.input.start.clone() };
        let out = p.render(src, &[cfg]).unwrap();
        assert!(out.contains("triton.Config({}, num_warps=8, num_stages=3)"), "{out}");
        assert!(out.contains("k[(1,)](x, B=b)\n"), "{out}");
    }

    #[test]
    fn a_kernel_launched_nowhere_has_nothing_to_tune() {
        let src = "import triton\n@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n    pass\n";
        let o = Outline::build(src);
        let err = plan(src, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap_err();
        assert_eq!(err, AutotuneError::NothingToTune("k".into()));
    }

    #[test]
    fn a_kernel_launched_through_its_compiled_handle_is_told_how_the_stage_reads_launches() {
        let src = "import triton\n@triton.jit\ndef k(x_ptr, B: tl.constexpr):\n    pass\n\ndef f(x):\n    h = k.warmup(x, B=64, grid=(1,))\n    h[(4, 1, 1)](x, 64)\n";
        let o = Outline::build(src);
        let err = plan(src, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap_err();
        assert_eq!(err, AutotuneError::LaunchedThroughHandle { kernel: "k".into(), method: "warmup" });
        assert!(err.to_string().contains("launches written `k[grid](...)`"), "{err}");
        let other = src.replace("h = k.warmup", "h = my_k.warmup");
        let o = Outline::build(&other);
        assert_eq!(plan(&other, &o, o.kernel("k").unwrap(), TuneBackend::Cuda).unwrap_err(), AutotuneError::NothingToTune("k".into()));
    }

    const RELU: &str = "import triton\n@triton.jit\ndef relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\n";

    #[test]
    fn every_call_site_reads_its_own_tile_in_its_grid() {
        let src = format!(
            "{RELU}def run(x, y, n):\n    if n < 4096:\n        relu[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)\n    else:\n        relu[(triton.cdiv(n, 2048),)](x, y, n, BLOCK=2048, num_warps=8)\n"
        );
        let o = Outline::build(&src);
        let p = plan(&src, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.input.blocks, vec![("BLOCK".to_string(), 256)]);
        assert!(!p.start_is_original, "the second site runs BLOCK=2048 w8");
        let out = p.render(&src, std::slice::from_ref(&p.input.start)).unwrap();
        assert_eq!(out.matches("relu[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, n)\n").count(), 2, "{out}");
    }

    #[test]
    fn a_switch_that_differs_between_call_sites_stays_at_each_launch() {
        let src = "import triton\n@triton.jit\ndef act(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ACT: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\ndef relu(x, y, n):\n    act[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, ACT=0)\n\ndef gelu(x, y, n):\n    act[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, ACT=1)\n";
        let o = Outline::build(src);
        let p = plan(src, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.input.start.kwargs, vec![("BLOCK".to_string(), ConfigValue::Int(256))]);
        assert!(p.start_is_original, "both sites run BLOCK=256 w4");
        let out = p.render(src, std::slice::from_ref(&p.input.start)).unwrap();
        assert!(out.contains("act[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, n, ACT=0)\n"), "{out}");
        assert!(out.contains("act[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, y, n, ACT=1)\n"), "{out}");
        // A tile another site computes stays at both launches.
        let computed = src.replace("BLOCK=256, ACT=1", "BLOCK=triton.next_power_of_2(n), ACT=1");
        let o = Outline::build(&computed);
        let p = plan(&computed, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.input.start.kwargs, vec![], "{:?}", p.input.start);
        let out = p.render(&computed, std::slice::from_ref(&p.input.start)).unwrap();
        assert!(out.contains("act[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, ACT=0)\n"), "{out}");
        // One call site: the switch's one value goes into every config, as before.
        let one = src.replace("ACT=1", "ACT=0");
        let o = Outline::build(&one);
        let p = plan(&one, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        assert!(p.input.start.kwargs.contains(&("ACT".to_string(), ConfigValue::Int(0))), "{:?}", p.input.start);
    }

    #[test]
    fn a_tile_held_by_a_local_name_is_tuned_and_its_grid_uses_read_meta() {
        let src = format!(
            "{RELU}def run(x, y):\n    n = x.numel()\n    BLOCK = 512\n    grid = ((n + BLOCK - 1) // BLOCK,)\n    relu[grid](x, y, n, BLOCK=BLOCK)\n"
        );
        let o = Outline::build(&src);
        let p = plan(&src, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.input.blocks, vec![("BLOCK".to_string(), 512)]);
        assert!(p.start_is_original);
        assert_eq!(p.readings, vec![vec!["BLOCK".to_string()]]);
        let out = p.render(&src, std::slice::from_ref(&p.input.start)).unwrap();
        assert!(out.contains("grid = lambda META: ((n + META['BLOCK'] - 1) // META['BLOCK'],)\n    relu[grid](x, y, n)\n"), "{out}");
    }

    #[test]
    fn a_tile_passed_by_position_leaves_the_launch_and_later_positionals_become_keywords() {
        let src = "import triton\n@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr, y_ptr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\ndef run(x, y, n):\n    k[(triton.cdiv(n, 128),)](x, n, 128, y)\n";
        let o = Outline::build(src);
        let p = plan(src, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        assert_eq!(p.input.blocks, vec![("BLOCK".to_string(), 128)]);
        let out = p.render(src, std::slice::from_ref(&p.input.start)).unwrap();
        assert!(out.contains("k[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, n, y_ptr=y)\n"), "{out}");
    }

    #[test]
    fn a_grid_value_shared_by_two_tuned_names_is_read_from_the_kernel() {
        let src = "import triton\n@triton.jit\ndef k(x_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):\n    pid_m = tl.program_id(0)\n    pid_n = tl.program_id(1)\n    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n    tl.store(x_ptr + rm[:, None] * N + rn[None, :], 0, mask=(rm[:, None] < M) & (rn[None, :] < N))\n\ndef run(x, M, N):\n    k[((N + 63) // 64, triton.cdiv(M, 64))](x, N, M, BLOCK_M=64, BLOCK_N=64, num_warps=4)\n";
        let o = Outline::build(src);
        let p = plan(src, &o, pick_kernel(&o, None).unwrap(), TuneBackend::Cuda).unwrap();
        // Host N is passed as the kernel's M: the first axis is covered by BLOCK_M.
        assert_eq!(p.readings, vec![vec!["BLOCK_M".to_string(), "BLOCK_N".to_string()]]);
        assert_eq!(p.key, vec!["M".to_string(), "N".to_string()]);
        let out = p.render(src, std::slice::from_ref(&p.input.start)).unwrap();
        assert!(
            out.contains("k[lambda META: ((N + (META['BLOCK_M'] - 1)) // META['BLOCK_M'], triton.cdiv(M, META['BLOCK_N']))](x, N, M)"),
            "{out}"
        );
    }
}
