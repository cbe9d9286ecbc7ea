//! Puts the sources together: the entry, its inputs (tensors with named dimensions, or scalars), and
//! the variants (sizes and dtype), each fact with where it came from.

use super::code::{self, CodeFacts, slot};
use super::entry::{self, Entry, EntryKind};
use super::hints::{self, Hints};
use super::sites::{self, Observation};
use super::tree::Src;
use super::value::Val;
use super::{Input, InputKind, Missing, Origin, Problem, Variant};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// Largest input (elements) a `ci` variant may have: the Triton interpreter runs every program in
/// Python, so correctness sizes stay small; larger observed sizes are scaled down for `ci`.
pub const CI_MAX_ELEMENTS: i64 = 1 << 16;
/// Most `ci` variants kept (the smallest ones, different dtypes first).
const CI_MAX_VARIANTS: usize = 3;
/// How variants made of default sizes say so (and are the only ones whose timed sizes are invented).
const DEFAULT_ORIGIN: &str = "default sizes (no call site)";
/// Below this many elements in its largest tensor, a call site's variant is a smoke test, not a size
/// to time on a GPU (`bench-gpu` scales it up).
const TIMING_MIN_ELEMENTS: i64 = 1 << 18;
/// Sizes used when no source gives any: distinct per dimension, so a transposed result shows.
const CI_DEFAULTS: &[i64] = &[64, 96, 128, 80, 112, 48];

/// How many callers up an entry whose sizes nothing gives is climbed: a function, the
/// `autograd.Function` that calls it, the module whose `forward` applies that.
const CALLER_LEVELS: usize = 3;

/// Infers the problem of `kernel` (or the file's only launched kernel) in `text`, the content of `path`.
/// `Err` when there is nothing to call: the message says what to add.
///
/// When nothing gives the entry's sizes and no entry is configured, the nearest caller in the file
/// whose sizes something gives becomes the entry (library code: a launching function, an
/// `autograd.Function` over it, an `nn.Module` over that, sizes only where the module is used);
/// else the entry's own problem says what is missing.
pub fn infer(path: &Path, text: &str, kernel: Option<&str>) -> Result<Problem, String> {
    let tree = crate::syntax::parse(text);
    let model = crate::model::build(text, &tree);
    let first = infer_at(path, text, &tree, &model, kernel, None)?;
    if first.is_complete() || hints::configured(path, None)?.entry.is_some() {
        return Ok(first);
    }
    let src = Src::new(text, &first.file);
    let mut level = vec![first.entry.clone()];
    let mut seen: Vec<usize> = vec![first.entry.def_start];
    for _ in 0..CALLER_LEVELS {
        let mut next = Vec::new();
        for e in &level {
            for c in entry::callers(&src, &tree, e) {
                // A caller that takes nothing makes its own inputs (a demo, an example): not an entry.
                if seen.contains(&c.def_start) || c.params.is_empty() {
                    continue;
                }
                seen.push(c.def_start);
                if let Ok(mut p) = infer_at(path, text, &tree, &model, kernel, Some(c.clone()))
                    && p.is_complete()
                {
                    p.notes.push(format!(
                        "entered through `{}`, which calls `{}`: no call site or hint gives `{}`'s sizes, and `{}`'s code or call sites do",
                        c.name, e.name, first.entry.name, c.name
                    ));
                    return Ok(p);
                }
                next.push(c);
            }
        }
        level = next;
    }
    Ok(first)
}

/// The problem with `entry` as found (from the launches, or as configured), or as given.
fn infer_at(
    path: &Path,
    text: &str,
    tree: &tree_sitter::Tree,
    model: &crate::model::FileModel,
    kernel: Option<&str>,
    given: Option<Entry>,
) -> Result<Problem, String> {
    let file = path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_else(|| path.display().to_string());
    let kidx = pick_kernel(model, kernel)
        .map_err(|e| if model.kernels.is_empty() { crate::cover::outline::Outline::build(text).no_kernel_message() } else { e })?;
    let k = &model.kernels[kidx];
    let src = Src::new(text, &file);
    let by_file = hints::configured(path, None)?;
    let entry = match given {
        Some(e) => e,
        None => entry::find(&src, tree, model, kidx, by_file.entry.as_ref().map(|e| e.0.as_str())).map_err(|e| {
            match (by_file.entry.is_none() && !model.launches.iter().any(|l| l.kernel == kidx), launched_beside(path, &k.name)) {
                (true, Some((other, line))) => format!(
                    "`{}` is launched from {other}, line {line}, not from {file}: a stage edits one file, so the kernel and \
                     a function that launches it must be in one file (a small wrapper beside the kernel, \
                     `def run(x): {}[grid](...)`, is enough)",
                    k.name, k.name
                ),
                _ => e,
            }
        })?,
    };
    let mut hints = if by_file == Hints::default() { hints::configured(path, Some(&entry.name))? } else { by_file };
    if entry.kind == EntryKind::Model {
        return Err(format!(
            "{file} defines `class Model`: the harness runs it as it is, with a spec beside the file (`xeforge spec {file}` drafts one)"
        ));
    }
    let def = entry::def_node(tree, entry.def_start);
    let def_line = def.map(|d| src.line(d)).unwrap_or(1);
    let first_line = def.map(|d| super::tree::decorators(d).first().map(|x| src.line(*x)).unwrap_or(src.line(d))).unwrap_or(1);
    let inline = hints::inline(text, &file, def_line, first_line)?;
    hints.variants.extend(inline.variants);
    hints.shapes.extend(inline.shapes);

    let kdef = tree
        .root_node()
        .descendant_for_byte_range(k.name_range.start, k.name_range.end)
        .and_then(|n| n.parent())
        .filter(|n| n.kind() == "function_definition");
    let kparams: Vec<String> = k.params.iter().map(|p| p.name.clone()).collect();
    let mut facts = code::read(&src, tree, &entry, kdef, &kparams);
    let obs = sites::observe(&src, tree, &entry);

    let mut b = Builder {
        file: file.clone(),
        entry: &entry,
        facts: &mut facts,
        hints: &hints,
        obs: &obs,
        notes: Vec::new(),
        missing: Vec::new(),
        provenance: BTreeMap::new(),
    };
    let inputs = b.inputs();
    let (variants, inits) = b.variants(&inputs);
    let launch_lines = entry::launch_lines(&src, tree, model, kidx);
    let launched = launch_lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", ");
    b.provenance.insert("entry".into(), format!("{} (launches `{}` at line {launched})", entry.origin, k.name));
    let place = b.def_hint();
    let (notes, missing, provenance) = (b.notes, b.missing, b.provenance);
    let hint_line = first_line.saturating_sub(1);
    let hint_indent = text.lines().nth(hint_line).map(|l| l[..l.len() - l.trim_start().len()].to_string()).unwrap_or_default();
    Ok(Problem {
        hint_line,
        hint_indent,
        place,
        file,
        kernel: k.name.clone(),
        entry: entry.clone(),
        inputs,
        inits,
        variants,
        provenance,
        notes,
        missing,
    })
}

fn pick_kernel(model: &crate::model::FileModel, name: Option<&str>) -> Result<usize, String> {
    if let Some(n) = name {
        return model.kernels.iter().position(|k| k.name == n).ok_or_else(|| format!("no Triton kernel named `{n}`"));
    }
    let launched: Vec<usize> = (0..model.kernels.len()).filter(|i| model.launches.iter().any(|l| l.kernel == *i)).collect();
    match (model.kernels.len(), launched.as_slice()) {
        (0, _) => Err("the file has no Triton kernel".into()),
        (1, _) => Ok(0),
        (_, [one]) => Ok(*one),
        (n, _) => {
            let names: Vec<String> = model.kernels.iter().map(|k| k.name.clone()).collect();
            Err(format!("the file has {n} kernels ({}); name one with --kernel", crate::cover::autotune::quoted(&names)))
        }
    }
}

struct Builder<'a> {
    file: String,
    entry: &'a Entry,
    facts: &'a mut CodeFacts,
    hints: &'a Hints,
    obs: &'a [Observation],
    notes: Vec<String>,
    missing: Vec<Missing>,
    provenance: BTreeMap<String, String>,
}

/// A parameter default as a value: a number or a flag; anything else is not known statically.
fn default_literal(d: &str) -> Val {
    let d = d.trim();
    match d {
        "True" => Val::Bool(true),
        "False" => Val::Bool(false),
        _ => d.replace('_', "").parse::<i64>().map(Val::Int).or_else(|_| d.parse::<f64>().map(Val::Float)).unwrap_or(Val::Unknown),
    }
}

/// What an input is before dimensions are named: a tensor of some rank, or a scalar.
enum Shape {
    Tensor(usize, Origin),
    Scalar(String, Origin),
    /// A tuple of this many sizes.
    Sizes(usize, Origin),
}

impl Builder<'_> {
    /// Where the `# xeforge: dims` line goes: above the entry's `def`, which for `Fn.apply` is
    /// `Fn.forward` (`apply` is inherited from `autograd.Function`, never written).
    fn def_hint(&self) -> String {
        match (self.entry.kind, &self.entry.class) {
            (super::entry::EntryKind::Apply, Some(class)) => format!("above `def forward` of `{class}` in {}", self.file),
            _ => format!("above `def {}` in {}", self.entry.name.rsplit('.').next().unwrap_or(""), self.file),
        }
    }

    fn obs_arg(&self, i: usize) -> Option<(&Val, &Origin)> {
        self.obs.iter().map(|o| (&o.args[i], &o.origin)).find(|(v, _)| !matches!(v, Val::Unknown))
    }

    /// A parameter's value at a call site: what it passes, else the parameter's literal default.
    fn arg_at(&self, o: &Observation, i: usize) -> Val {
        match o.args.get(i) {
            Some(Val::Unknown) | None => self.entry.params.get(i).and_then(|p| p.default.as_deref()).map_or(Val::Unknown, default_literal),
            Some(v) => v.clone(),
        }
    }

    /// Parameters with a default that the spec passes: those a call site passes another number or
    /// flag (`leaky_relu(x, 0.2, inplace=True)`), so the harness calls the entry as the user's code
    /// does, and any before them at their default (the harness passes by position). One it cannot
    /// reach that way (past a `None` default, or keyword-only) stays at its default, and a note says so.
    fn passed_defaults(&mut self) -> BTreeSet<usize> {
        let params = &self.entry.params;
        let literal = |i: usize| params[i].default.as_deref().map(default_literal);
        let scalar = |v: &Val| matches!(v, Val::Int(_) | Val::Float(_) | Val::Bool(_));
        let overridden: Vec<usize> = (0..params.len())
            .filter(|&i| params[i].default.is_some())
            .filter(|&i| self.obs.iter().any(|o| o.args.get(i).is_some_and(|v| scalar(v) && Some(v) != literal(i).as_ref())))
            .collect();
        let Some(&last) = overridden.last() else { return BTreeSet::new() };
        // Every site's value must be a number or a flag, passed or by default.
        let reachable = |i: usize| !params[i].keyword_only && self.obs.iter().all(|o| scalar(&self.arg_at(o, i)));
        let cut = (0..=last).find(|&i| params[i].default.is_some() && !reachable(i)).unwrap_or(last + 1);
        for &i in overridden.iter().filter(|&&i| i >= cut) {
            let why = match params[i].keyword_only {
                true => "it is keyword-only and the harness passes arguments by position".to_string(),
                false => format!("the harness passes arguments by position and `{}` before it has no number to pass", params[cut].name),
            };
            self.notes
                .push(format!("a call site passes `{}` another value than its default; the spec keeps the default: {why}", params[i].name));
        }
        (0..cut).filter(|&i| params[i].default.is_some()).collect()
    }

    fn inputs(&mut self) -> Vec<Input> {
        let defaults = self.passed_defaults();
        let params: Vec<(usize, String)> = self
            .entry
            .params
            .iter()
            .enumerate()
            .filter(|(i, p)| p.default.is_none() || defaults.contains(i))
            .map(|(i, p)| (i, p.name.clone()))
            .collect();
        let site_ranks: HashMap<String, usize> = params
            .iter()
            .filter_map(|(i, p)| match self.obs_arg(*i) {
                Some((Val::Tensor(t), _)) => Some((p.clone(), t.dims.len())),
                _ => None,
            })
            .collect();
        code::alike_shapes(self.facts, &|p| site_ranks.get(p).copied());
        let mut shapes: Vec<(String, Option<Shape>)> = Vec::new();
        for (i, p) in &params {
            shapes.push((p.clone(), self.shape_of(*i, p)));
        }
        let ranks: HashMap<String, usize> =
            shapes.iter().filter_map(|(p, s)| if let Some(Shape::Tensor(r, _)) = s { Some((p.clone(), *r)) } else { None }).collect();
        let rank_of = |p: &str| ranks.get(p).copied();
        code::equal_shapes(self.facts, &rank_of);
        self.facts.resolve_negative(&rank_of);
        for (p, (dims, o)) in &self.hints.shapes {
            for (axis, d) in dims.iter().enumerate() {
                self.facts.uf.union(&slot(p, axis), d);
                self.facts.origins.entry(d.clone()).or_insert_with(|| o.clone());
            }
        }
        for (p, n, o) in self.facts.numel.clone() {
            if ranks.get(&p) == Some(&1) {
                self.facts.uf.union(&slot(&p, 0), &n);
                self.facts.origins.entry(n).or_insert(o);
            }
        }
        self.union_site_names(&params, &ranks);
        for (p, s) in &shapes {
            if let Some(Shape::Sizes(n, _)) = s {
                self.union_sizes_with_a_shape(p, *n, &params, &ranks);
            }
        }
        let mut out = Vec::new();
        for (p, shape) in shapes {
            match shape {
                Some(Shape::Tensor(rank, origin)) => {
                    let shape = (0..rank).map(|a| self.dim_name(&p, a)).collect::<Vec<_>>();
                    let fixed = self.int_dtype(&p);
                    let range = fixed.as_ref().and_then(|f| f.1).map(|(lo, hi)| (self.bound(lo, &ranks), self.bound(hi, &ranks)));
                    self.provenance.insert(format!("input {p}"), format!("tensor [{}]: {origin}", shape.join(", ")));
                    out.push(Input { name: p, kind: InputKind::Tensor { shape, dtype: fixed.map(|f| f.0), range }, origin: Some(origin) });
                }
                Some(Shape::Scalar(py, origin)) => {
                    self.provenance.insert(format!("input {p}"), format!("{py} scalar: {origin}"));
                    out.push(Input { name: p, kind: InputKind::Scalar { py }, origin: Some(origin) });
                }
                Some(Shape::Sizes(n, origin)) => {
                    let dims = (0..n).map(|a| self.dim_name(&p, a)).collect::<Vec<_>>();
                    self.provenance.insert(format!("input {p}"), format!("sizes ({}): {origin}", dims.join(", ")));
                    out.push(Input { name: p, kind: InputKind::Sizes { dims }, origin: Some(origin) });
                }
                None => {
                    let min = self.facts.min_rank.get(&p).copied().unwrap_or(1);
                    let names: Vec<String> = (0..min.max(1)).map(|a| format!("{p}_{a}")).collect();
                    let sizes = names.iter().map(|n| format!("{n}=1024")).collect::<Vec<_>>().join(" ");
                    self.missing.push(Missing {
                        what: format!("the shape of `{p}` (no call site passes it and the code does not unpack `{p}.shape`)"),
                        add: format!("{p}=[{}] {sizes}", names.join(",")),
                    });
                }
            }
        }
        out
    }

    fn shape_of(&mut self, i: usize, p: &str) -> Option<Shape> {
        if self.entry.params[i].default.is_some() {
            // Passed for a call site's number or flag (`passed_defaults`), or at its default before one.
            let (v, o) = self
                .obs
                .iter()
                .map(|o| (self.arg_at(o, i), o.origin.clone()))
                .find(|(v, _)| Some(v) != self.entry.params[i].default.as_deref().map(default_literal).as_ref())
                .or_else(|| self.obs.first().map(|o| (self.arg_at(o, i), o.origin.clone())))?;
            let py = match v {
                Val::Bool(_) => "bool",
                Val::Int(_) => "int",
                _ => "float",
            };
            return Some(Shape::Scalar(py.into(), o));
        }
        if let Some((dims, o)) = self.hints.shapes.get(p) {
            return Some(Shape::Tensor(dims.len(), o.clone()));
        }
        if let Some((r, o)) = self.facts.rank.get(p) {
            return Some(Shape::Tensor(*r, o.clone()));
        }
        let site = self.obs_arg(i).map(|(v, o)| (v.clone(), o.clone()));
        if let Some((Val::Tensor(t), o)) = &site {
            return Some(Shape::Tensor(t.dims.len(), o.clone()));
        }
        if let Some((py, o)) = self.facts.scalars.get(p) {
            let py = match &site {
                Some((Val::Int(_), _)) => "int".to_string(),
                Some((Val::Bool(_), _)) => "bool".to_string(),
                _ => py.clone(),
            };
            return Some(Shape::Scalar(py, o.clone()));
        }
        match &site {
            Some((Val::Int(_), o)) => return Some(Shape::Scalar("int".into(), o.clone())),
            Some((Val::Float(_), o)) => return Some(Shape::Scalar("float".into(), o.clone())),
            Some((Val::Bool(_), o)) => return Some(Shape::Scalar("bool".into(), o.clone())),
            Some((Val::Seq(items), o)) if !items.is_empty() && items.iter().all(|v| matches!(v, Val::Int(x) if *x >= 0)) => {
                return Some(Shape::Sizes(items.len(), o.clone()));
            }
            _ => {}
        }
        let o = self.facts.tensors.get(p).cloned()?;
        if let Some((_, _, no)) = self.facts.numel.iter().find(|(q, _, _)| q == p) {
            return Some(Shape::Tensor(1, no.clone()));
        }
        if let Some(fo) = self.facts.flat.get(p).filter(|_| !self.facts.min_rank.contains_key(p)) {
            self.notes.push(format!("`{p}` is taken to have 1 dimension (the wrapper flattens it, any shape will do: {fo})"));
            return Some(Shape::Tensor(1, fo.clone()));
        }
        let min = self.facts.min_rank.get(p).copied()?;
        let min = if self.facts.flattened.contains(p) { min.max(2) } else { min };
        let why = if self.facts.flattened.contains(p) { "the wrapper flattens it to rows" } else { "the most its code indexes" };
        self.notes.push(format!("`{p}` is taken to have {min} dimension{} ({why}: {o})", if min == 1 { "" } else { "s" }));
        Some(Shape::Tensor(min, o))
    }

    /// Sizes spelled with the same name at a call site (`torch.rand(size)` twice) are one dimension,
    /// unless the entry's code already names them differently.
    fn union_site_names(&mut self, params: &[(usize, String)], ranks: &HashMap<String, usize>) {
        for o in self.obs {
            for (i, p) in params {
                let Some(Val::Tensor(t)) = o.args.get(*i) else {
                    continue;
                };
                if Some(&t.dims.len()) != ranks.get(p) {
                    continue;
                }
                for (axis, d) in t.dims.iter().enumerate() {
                    let Some(n) = &d.name else { continue };
                    let site_key = format!("site:{n}");
                    let s = slot(p, axis);
                    self.facts.uf.add(&s);
                    let named = |uf: &code::Unify, k: &str| uf.order.iter().any(|x| !x.contains(':') && uf.same(x, k));
                    if self.facts.uf.same(&s, &site_key) {
                        continue;
                    }
                    let other_named =
                        self.facts.uf.order.iter().any(|x| x.starts_with("site:") && x == &site_key) && named(&self.facts.uf, &site_key);
                    if !(named(&self.facts.uf, &s) && other_named) {
                        self.facts.uf.union(&s, &site_key);
                    }
                }
            }
        }
    }

    /// A tuple of sizes passed beside tensors is most often some tensor's shape or its trailing part
    /// (`normalized_shape`): where every call site agrees with the trailing sizes of one tensor input,
    /// the tuple's sizes are that tensor's dimensions, so that variants keep them equal.
    fn union_sizes_with_a_shape(&mut self, p: &str, n: usize, params: &[(usize, String)], ranks: &HashMap<String, usize>) {
        let Some(pi) = params.iter().find(|(_, q)| q == p).map(|(i, _)| *i) else { return };
        let sized: Vec<&Observation> = self.obs.iter().filter(|o| matches!(o.args.get(pi), Some(Val::Seq(v)) if v.len() == n)).collect();
        if sized.is_empty() {
            return;
        }
        for (qi, q) in params {
            let Some(&rank) = ranks.get(q).filter(|r| **r >= n) else { continue };
            let agrees = sized.iter().all(|o| match (o.args.get(pi), o.args.get(*qi)) {
                (Some(Val::Seq(v)), Some(Val::Tensor(t))) if t.dims.len() == rank => {
                    v.iter().zip(&t.dims[rank - n..]).all(|(a, d)| a.as_int() == Some(d.size))
                }
                _ => false,
            });
            if agrees {
                for a in 0..n {
                    self.facts.uf.union(&slot(q, rank - n + a), &slot(p, a));
                }
                return;
            }
        }
    }

    /// The name of (input, axis)'s class: the code's name, else the call site's, else `x_0`.
    fn dim_name(&self, p: &str, axis: usize) -> String {
        let uf = &self.facts.uf;
        let s = slot(p, axis);
        if !uf.order.contains(&s) {
            return format!("{p}_{axis}");
        }
        let root = uf.find(&s);
        let members: Vec<&String> = uf.order.iter().filter(|k| uf.find(k) == root).collect();
        if let Some(n) = members.iter().find(|k| !k.contains(':') && is_ident(k)) {
            return n.to_string();
        }
        // A site's name for a size (`torch.randn(M, K)`), not the place a literal size is written (`@120`).
        if let Some(n) = members.iter().find_map(|k| k.strip_prefix("site:")).filter(|n| is_ident(n)) {
            return n.to_string();
        }
        let first = members
            .iter()
            .find(|k| k.contains(':') && !k.starts_with("site:"))
            .map(|k| k.replace(':', "_"))
            .unwrap_or(format!("{p}_{axis}"));
        first.replace('-', "m")
    }

    /// A `randint` bound as the spec writes it: the name of the dimension a call site's tensor has that
    /// size along (indices into it, which must scale with it when a variant shrinks or grows it), else
    /// the number. Zero and one stay numbers.
    fn bound(&self, value: i64, ranks: &HashMap<String, usize>) -> String {
        if value > 1 {
            for o in self.obs.iter() {
                for (i, p) in self.entry.params.iter().enumerate() {
                    let (Some(Val::Tensor(t)), Some(rank)) = (o.args.get(i), ranks.get(&p.name)) else { continue };
                    if let Some(axis) = t.dims.iter().take(*rank).position(|d| d.size == value) {
                        return self.dim_name(&p.name, axis);
                    }
                }
            }
            // A module's size (`nn.Embedding`-like `num_embeddings`): indices into its table.
            for o in self.obs.iter() {
                for (j, ip) in self.entry.init_params.iter().enumerate() {
                    if o.inits.get(j).and_then(|v| v.as_int()) == Some(value) {
                        return ip.name.clone();
                    }
                }
            }
        }
        value.to_string()
    }

    /// A fixed integer dtype (indices): from an assert or the call sites' `randint`.
    fn int_dtype(&self, p: &str) -> Option<(String, Option<(i64, i64)>)> {
        if let Some((d, _)) = self.facts.dtypes.get(p).filter(|(d, _)| d.starts_with("int") || d.starts_with("uint") || d == "bool") {
            return Some((d.clone(), None));
        }
        let i = self.entry.params.iter().position(|q| q.name == p)?;
        match self.obs_arg(i) {
            Some((Val::Tensor(t), _))
                if t.dtype.as_deref().is_some_and(|d| d.starts_with("int") || d.starts_with("uint") || d == "bool") =>
            {
                Some((t.dtype.clone()?, t.range))
            }
            _ => None,
        }
    }

    fn variants(&mut self, inputs: &[Input]) -> (Vec<Variant>, Vec<String>) {
        let divisors = self.divisors(inputs);
        let mut inits = Vec::new();
        for (j, ip) in self.entry.init_params.iter().enumerate() {
            if ip.default.is_some() {
                break; // later ones keep their defaults too
            }
            if !self.obs.iter().any(|o| o.inits.get(j).is_some_and(|v| v.as_int().is_some() || matches!(v, Val::Float(_)))) {
                let class = self.entry.class.clone().unwrap_or_default();
                self.missing.push(Missing {
                    what: format!("a value for `{}` of `{class}(...)` (no call site builds one)", ip.name),
                    add: format!("{}=<value>", ip.name),
                });
            }
            inits.push(ip.name.clone());
        }
        // Observed sizes: hints first, then call sites.
        let mut observed: Vec<(BTreeMap<String, f64>, Option<String>, String)> = Vec::new();
        for h in &self.hints.variants {
            let dims: BTreeMap<String, f64> = h.dims.clone();
            observed.push((dims, h.dtype.clone(), h.origin.to_string()));
        }
        let from_hints = !observed.is_empty();
        if !from_hints {
            for o in self.obs {
                match self.observation(inputs, &inits, o) {
                    Ok(v) => {
                        if !observed.iter().any(|x| x.0 == v.0 && x.1 == v.1) {
                            observed.push(v);
                        }
                    }
                    Err(why) => self.notes.push(format!("call at {} not used: {why}", o.origin)),
                }
            }
        }
        let needed: Vec<String> = inputs
            .iter()
            .flat_map(|i| match &i.kind {
                InputKind::Tensor { shape, .. } => shape.clone(),
                InputKind::Scalar { .. } => vec![i.name.clone()],
                InputKind::Sizes { dims } => dims.clone(),
            })
            .chain(inits.iter().cloned())
            .fold(Vec::new(), |mut acc, d| {
                if !acc.contains(&d) {
                    acc.push(d);
                }
                acc
            });
        let default_dtype = self.default_dtype();
        let mut full: Vec<(BTreeMap<String, f64>, String, String)> = Vec::new();
        for (dims, dtype, origin) in observed {
            let unknown: Vec<&String> = dims.keys().filter(|k| !needed.contains(k)).collect();
            if from_hints && !unknown.is_empty() {
                self.notes.push(format!(
                    "{origin}: {} name{} no dimension of the inputs ({})",
                    unknown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                    if unknown.len() == 1 { "s" } else { "" },
                    needed.join(", ")
                ));
            }
            let mut d = dims.clone();
            let mut defaulted = Vec::new();
            for (n, name) in needed.iter().enumerate() {
                if !d.contains_key(name) {
                    if let Some(v) = self.unsized_scalar(inputs, name) {
                        if let Some(v) = v {
                            d.insert(name.clone(), v);
                        }
                        continue;
                    }
                    d.insert(name.clone(), round_up(CI_DEFAULTS[n % CI_DEFAULTS.len()], divisors.get(name).copied().unwrap_or(1)) as f64);
                    defaulted.push(name.clone());
                }
            }
            if !defaulted.is_empty() {
                self.notes.push(format!(
                    "{origin}: no size for {}; using {}",
                    defaulted.join(", "),
                    defaulted.iter().map(|n| format!("{n}={}", d[n])).collect::<Vec<_>>().join(" ")
                ));
            }
            let (dt, dt_origin) = match dtype {
                Some(x) => (x, origin.clone()),
                None => {
                    self.provenance.insert("dtype".into(), default_dtype.2.clone());
                    (default_dtype.0.clone(), default_dtype.1.clone())
                }
            };
            if !full.iter().any(|x| x.0 == d && x.1 == dt) {
                full.push((d, dt, format!("{origin}; dtype from {dt_origin}")));
            }
        }
        if full.is_empty() {
            let mut d = BTreeMap::new();
            let mut chosen = Vec::new();
            for (n, name) in needed.iter().enumerate() {
                if let Some(v) = self.unsized_scalar(inputs, name) {
                    chosen.extend(v.map(|v| (name.clone(), v)));
                    continue;
                }
                d.insert(name.clone(), round_up(CI_DEFAULTS[n % CI_DEFAULTS.len()], divisors.get(name).copied().unwrap_or(1)) as f64);
            }
            let (dt, dt_origin) = (default_dtype.0.clone(), default_dtype.1.clone());
            self.provenance.insert("dtype".into(), default_dtype.2.clone());
            if !needed.is_empty() {
                self.notes.push(format!(
                    "no call site or `# xeforge: dims` gives sizes; using {} (add `# xeforge: dims {}` {} to choose)",
                    d.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
                    d.keys().map(|k| format!("{k}=4096")).collect::<Vec<_>>().join(" "),
                    self.def_hint()
                ));
            }
            d.extend(chosen);
            full.push((d, dt, format!("{DEFAULT_ORIGIN}; dtype from {dt_origin}")));
        }
        let div_origins: Vec<(String, i64, String)> =
            divisors.iter().filter_map(|(n, m)| self.divisor_origin(n).map(|o| (n.clone(), *m, o.to_string()))).collect();
        for (name, m, o) in div_origins {
            self.provenance.insert(format!("divisible {name}"), format!("multiple of {m}: {o}"));
        }
        for name in &needed {
            if let Some(o) = self.class_origin(name) {
                self.provenance.insert(format!("dim {name}"), o.to_string());
            }
        }
        for (p, o) in &self.facts.contiguous {
            self.provenance.insert(format!("contiguous {p}"), o.to_string());
        }
        let mut out = families(full, inputs, &inits, &divisors, &mut self.notes);
        for v in &mut out {
            let changed = self.fit_bounds(&mut v.dims, &divisors);
            if !changed.is_empty() {
                self.notes.push(format!("{}: {} to meet the code's asserts", v.family, changed.join(", ")));
            }
        }
        (out, inits)
    }

    /// Sizes moved until every bound the asserts state holds (`assert rotary_dim <= headdim`, `assert
    /// headdim <= 256`): the larger side raised, unless a number caps it, then the smaller one lowered.
    /// Returns what changed, with the line of the assert, e.g. "headdim 20 → 48 (line 146: `...`)".
    fn fit_bounds(&self, dims: &mut BTreeMap<String, f64>, divisors: &BTreeMap<String, i64>) -> Vec<String> {
        use code::Term;
        let size = |t: &Term| match t {
            Term::Size(k, m) => Some((self.name_of_key(k, &[]), *m)),
            Term::Int(_) => None,
        };
        let value = |dims: &BTreeMap<String, f64>, t: &Term| match t {
            Term::Size(k, m) => dims.get(&self.name_of_key(k, &[])).map(|v| *v as i64 * m),
            Term::Int(v) => Some(*v),
        };
        // The numbers each size must stay within, from bounds against a number.
        let cap = |name: &str| {
            self.facts
                .bounds
                .iter()
                .filter_map(|b| match (size(&b.small), &b.large) {
                    (Some((n, m)), Term::Int(c)) if n == name => Some((c - i64::from(b.strict)) / m),
                    _ => None,
                })
                .min()
        };
        let before = dims.clone();
        let mut why: BTreeMap<String, String> = BTreeMap::new();
        for _ in 0..16 {
            let mut moved = false;
            for b in &self.facts.bounds {
                let (Some(lo), Some(hi)) = (value(dims, &b.small), value(dims, &b.large)) else { continue };
                let need = lo + i64::from(b.strict); // the larger side's least value
                if hi >= need {
                    continue;
                }
                let m_of = |name: &str| divisors.get(name).copied().unwrap_or(1);
                let raised = size(&b.large).and_then(|(n, m)| {
                    let v = round_up((need + m - 1) / m, m_of(&n));
                    cap(&n).is_none_or(|c| v <= c).then_some((n, v))
                });
                let change = raised.or_else(|| {
                    let (n, m) = size(&b.small)?;
                    let most = (hi - i64::from(b.strict)) / m;
                    let v = most - most % m_of(&n);
                    (v >= 1).then_some((n, v))
                });
                if let Some((n, v)) = change
                    && dims.get(&n).is_some_and(|x| *x as i64 != v)
                {
                    dims.insert(n.clone(), v as f64);
                    why.entry(n).or_insert_with(|| b.origin.to_string());
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        why.iter().filter(|(n, _)| before.get(*n) != dims.get(*n)).map(|(n, o)| format!("{n} {} → {} ({o})", before[n], dims[n])).collect()
    }

    /// For `name`, a scalar input nothing gives a value and that sizes nothing: the value it is checked
    /// with (`chosen_float`), or None once it is recorded as missing. None for any other input.
    fn unsized_scalar(&mut self, inputs: &[Input], name: &str) -> Option<Option<f64>> {
        let scalar =
            inputs.iter().find(|i| i.name == name && matches!(i.kind, InputKind::Scalar { .. }) && !self.facts.sizes.contains_key(name))?;
        let v = self.chosen_float(scalar);
        if v.is_none() {
            self.missing_scalar(name);
        }
        Some(v)
    }

    /// A value for a float scalar that nothing gives (`eps`, `sm_scale`, `p`): it sizes nothing, so a
    /// value usual for its name is checked with, and a note says so. None for other scalars.
    fn chosen_float(&mut self, input: &Input) -> Option<f64> {
        let InputKind::Scalar { py } = &input.kind else { return None };
        if py != "float" {
            return None;
        }
        let n = input.name.to_ascii_lowercase();
        // A number passed to the kernel and read nowhere else is taken for a float; it may be an int
        // (a count, a flag), so only one annotated `float` or named as floats are is given a value.
        let annotated = self.facts.scalars.get(&input.name).is_some_and(|(_, o)| o.code.replace(' ', "").ends_with(":float"));
        // (`alpha`, `beta` and the like say nothing of their range: asked, unless annotated.)
        let named = ["eps", "scale", "slope", "temp", "drop", "prob", "momentum", "decay", "softcap"].iter().any(|k| n.contains(k))
            || ["p", "lr"].contains(&n.as_str());
        if !annotated && !named {
            return None;
        }
        let (v, why) = if n.contains("eps") {
            (1e-5, "an epsilon")
        } else if n.contains("sm_scale") || n.contains("softmax_scale") || n == "qk_scale" {
            (0.125, "a softmax scale, 1/√64")
        } else if n == "p" || n.contains("drop") || n.contains("prob") || n.contains("momentum") {
            (0.1, "a probability or rate")
        } else {
            (0.5, "a moderate value")
        };
        let note = format!(
            "no call site passes `{}`; checked with {}={v} ({why}): add `# xeforge: dims {}=...` {} to choose",
            input.name,
            input.name,
            input.name,
            self.def_hint()
        );
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
        Some(v)
    }

    fn missing_scalar(&mut self, name: &str) {
        if self.missing.iter().any(|m| m.what.contains(&format!("`{name}`"))) {
            return;
        }
        self.missing
            .push(Missing { what: format!("a value for the scalar `{name}` (no call site passes one)"), add: format!("{name}=<value>") });
    }

    fn observation(
        &self,
        inputs: &[Input],
        inits: &[String],
        o: &Observation,
    ) -> Result<(BTreeMap<String, f64>, Option<String>, String), String> {
        let mut dims: BTreeMap<String, f64> = BTreeMap::new();
        let mut dtype = None;
        let put = |dims: &mut BTreeMap<String, f64>, name: &str, v: f64| -> Result<(), String> {
            match dims.get(name) {
                Some(old) if *old != v => Err(format!("`{name}` would be both {old} and {v}")),
                _ => {
                    dims.insert(name.to_string(), v);
                    Ok(())
                }
            }
        };
        for input in inputs {
            let i = self.entry.params.iter().position(|p| p.name == input.name).unwrap_or(0);
            let v = &self.arg_at(o, i);
            match (&input.kind, v) {
                (InputKind::Tensor { shape, dtype: fixed, .. }, Val::Tensor(t)) => {
                    if t.dims.len() != shape.len() {
                        return Err(format!("`{}` has {} dimensions there, {} in the entry", input.name, t.dims.len(), shape.len()));
                    }
                    for (name, d) in shape.iter().zip(&t.dims) {
                        put(&mut dims, name, d.size as f64)?;
                    }
                    if fixed.is_none() && dtype.is_none() {
                        dtype = t.dtype.clone();
                    }
                }
                (InputKind::Scalar { .. }, Val::Int(x)) => put(&mut dims, &input.name, *x as f64)?,
                (InputKind::Scalar { .. }, Val::Float(x)) => put(&mut dims, &input.name, *x)?,
                (InputKind::Scalar { .. }, Val::Bool(x)) => put(&mut dims, &input.name, if *x { 1.0 } else { 0.0 })?,
                (InputKind::Sizes { dims: names }, Val::Seq(items)) => {
                    if items.len() != names.len() {
                        return Err(format!("`{}` has {} sizes there, {} elsewhere", input.name, items.len(), names.len()));
                    }
                    for (name, v) in names.iter().zip(items) {
                        let Some(x) = v.as_int() else {
                            return Err(format!("a size in `{}` is not known statically", input.name));
                        };
                        put(&mut dims, name, x as f64)?;
                    }
                }
                (_, Val::Unknown) => {
                    return Err(format!("the value of `{}` is not known statically", input.name));
                }
                _ => {
                    return Err(format!("`{}` is passed something else than the entry expects", input.name));
                }
            }
        }
        for (j, name) in inits.iter().enumerate() {
            match o.inits.get(j) {
                Some(Val::Int(x)) => put(&mut dims, name, *x as f64)?,
                Some(Val::Float(x)) => put(&mut dims, name, *x)?,
                _ => {
                    return Err(format!("the constructor argument `{name}` is not known statically"));
                }
            }
        }
        // A module built with `dtype=torch.float16` holds half-precision parameters: its float dtype,
        // where no tensor argument names one (indices are integers).
        let floats = |d: &String| d.starts_with("float") || d == "bfloat16";
        if dtype.as_ref().is_none_or(|d| !floats(d)) {
            dtype = o.ctor_dtype.clone().filter(floats).or(dtype);
        }
        Ok((dims, dtype, o.origin.to_string()))
    }

    /// The dtype when the call sites say none: an assert on an input (or the `if x.dtype == ...` branch
    /// the kernel's launch is in), else the output's allocation, else float32. Also its provenance
    /// line, recorded only where it is used.
    fn default_dtype(&self) -> (String, String, String) {
        let floats = |d: &str| d.starts_with("float") || d == "bfloat16";
        if let Some((p, (d, o))) = self.facts.dtypes.iter().find(|(_, (d, _))| floats(d)) {
            return (d.clone(), o.to_string(), format!("{d}: `{p}`'s dtype, {o}"));
        }
        if let Some((d, o)) = self.facts.out_dtype.clone().filter(|(d, _)| floats(d)) {
            return (d.clone(), format!("the output's allocation, {o}"), format!("{d}: the dtype the output is allocated with, {o}"));
        }
        ("float32".into(), "the default (nothing names a dtype)".into(), "float32: nothing in the code names one".into())
    }

    fn divisors(&self, inputs: &[Input]) -> BTreeMap<String, i64> {
        let mut out: BTreeMap<String, i64> = BTreeMap::new();
        for (key, m, _) in &self.facts.divisors {
            let name = self.name_of_key(key, inputs);
            let e = out.entry(name).or_insert(1);
            *e = lcm(*e, *m);
        }
        out
    }

    fn name_of_key(&self, key: &str, _inputs: &[Input]) -> String {
        if let Some((p, a)) = key.split_once(':')
            && let Ok(a) = a.parse::<usize>()
        {
            return self.dim_name(p, a);
        }
        let uf = &self.facts.uf;
        let root = uf.find(key);
        uf.order
            .iter()
            .find(|k| uf.find(k) == root && k.contains(':') && !k.starts_with("site:"))
            .and_then(|k| k.split_once(':'))
            .and_then(|(p, a)| a.parse().ok().map(|a| self.dim_name(p, a)))
            .unwrap_or_else(|| key.to_string())
    }

    fn divisor_origin(&self, name: &str) -> Option<&Origin> {
        self.facts.divisors.iter().find(|(k, _, _)| self.name_of_key(k, &[]) == name).map(|(_, _, o)| o)
    }

    /// Where a dimension's name or equality was read in the code, or the call site that named it.
    fn class_origin(&self, name: &str) -> Option<Origin> {
        if let Some(o) = self.facts.origins.get(name) {
            return Some(o.clone());
        }
        let uf = &self.facts.uf;
        let root = uf
            .order
            .iter()
            .find(|k| k.split_once(':').and_then(|(p, a)| a.parse::<usize>().ok().map(|a| self.dim_name(p, a) == name)).unwrap_or(false))?;
        let root = uf.find(root);
        uf.order
            .iter()
            .filter(|k| uf.find(k) == root)
            .find_map(|k| self.facts.origins.get(k))
            .cloned()
            .or_else(|| self.obs.first().map(|o| o.origin.clone()))
    }
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_') && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

fn lcm(a: i64, b: i64) -> i64 {
    if a == 0 || b == 0 { a.max(b) } else { a / gcd(a, b) * b }
}

fn round_up(v: i64, m: i64) -> i64 {
    if m <= 1 { v } else { (v + m - 1) / m * m }
}

/// Elements of the largest tensor a variant makes: its largest input, or a table or weight its module
/// is built with (the two largest of the constructor's sizes, `num_embeddings × embedding_dim`), which
/// the inputs alone do not show (a few thousand indices into a table of 131M values).
fn footprint(dims: &BTreeMap<String, f64>, inputs: &[Input], inits: &[String]) -> i64 {
    let mut sizes: Vec<i64> =
        inits.iter().filter_map(|k| dims.get(k)).filter(|v| **v >= 2.0 && v.fract() == 0.0).map(|v| *v as i64).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let table = sizes.iter().take(2).fold(1i64, |p, v| p.saturating_mul(*v));
    largest(dims, inputs).max(if sizes.is_empty() { 0 } else { table })
}

/// Elements of the largest tensor input of a variant.
fn largest(dims: &BTreeMap<String, f64>, inputs: &[Input]) -> i64 {
    inputs
        .iter()
        .filter_map(|i| match &i.kind {
            InputKind::Tensor { shape, .. } => Some(largest_of(shape, dims)),
            InputKind::Scalar { .. } | InputKind::Sizes { .. } => None,
        })
        .max()
        .unwrap_or(0)
}

/// Small variants check correctness (`ci`), the largest is timed (`bench-gpu`). When every size seen
/// is too large for the interpreter, the smallest is scaled down for `ci` (and says so).
fn families(
    all: Vec<(BTreeMap<String, f64>, String, String)>,
    inputs: &[Input],
    inits: &[String],
    divisors: &BTreeMap<String, i64>,
    notes: &mut Vec<String>,
) -> Vec<Variant> {
    let size = |d: &BTreeMap<String, f64>| footprint(d, inputs, inits);
    let mut sorted = all;
    sorted.sort_by_key(|(d, _, _)| size(d));
    let mut ci: Vec<&(BTreeMap<String, f64>, String, String)> = Vec::new();
    // one per dtype first, then more sizes
    for v in sorted.iter().filter(|v| size(&v.0) <= CI_MAX_ELEMENTS) {
        if ci.len() < CI_MAX_VARIANTS && !ci.iter().any(|c| c.1 == v.1) {
            ci.push(v);
        }
    }
    for v in sorted.iter().filter(|v| size(&v.0) <= CI_MAX_ELEMENTS) {
        if ci.len() < CI_MAX_VARIANTS && !ci.iter().any(|c| std::ptr::eq(*c, v)) {
            ci.push(v);
        }
    }
    let mut out: Vec<Variant> =
        ci.iter().map(|(d, t, o)| Variant { family: "ci".into(), dims: d.clone(), dtype: t.clone(), origin: o.clone() }).collect();
    if out.is_empty() {
        let (d, t, o) = &sorted[0];
        let scaled = scale_down(d, inputs, inits, divisors);
        notes.push(format!(
            "every size seen is large for the CPU interpreter; `ci` uses {} (scaled down from {})",
            fmt_sizes(&scaled, inputs),
            fmt_sizes(d, inputs)
        ));
        out.push(Variant { family: "ci".into(), dims: scaled, dtype: t.clone(), origin: format!("scaled down from {o}") });
    }
    let (d, t, o) = sorted.last().expect("at least one variant");
    let bench = if o.starts_with(DEFAULT_ORIGIN) {
        // No size is known at all: time a large problem (a size the user gave is never changed).
        let mut big = d.clone();
        let shape_dims = shape_dims(inputs);
        let rank = inputs
            .iter()
            .filter_map(|i| if let InputKind::Tensor { shape, .. } = &i.kind { Some(shape.len()) } else { None })
            .max()
            .unwrap_or(1);
        // About 2^24 elements in the largest tensor, whatever its rank (4096² at rank 2, 256³ at
        // rank 3, 64⁴ at rank 4): every dimension at 256 made a rank-4 input of 2^32 elements.
        let target = 1i64 << (24 / rank.max(1));
        for k in &shape_dims {
            if let Some(v) = big.get_mut(k) {
                *v = round_up(target, divisors.get(k).copied().unwrap_or(1)) as f64;
            }
        }
        Variant { family: "bench-gpu".into(), dims: big, dtype: t.clone(), origin: format!("{o}; larger sizes for timing") }
    } else if size(d) < TIMING_MIN_ELEMENTS && !o.contains("xeforge: dims") && !o.contains("tool.xeforge") {
        // Every size seen is a smoke test's (`matmul(torch.randn(100, 72), ...)` under `__main__`): a
        // GPU call there is launch-bound and no config can show. Timed at about 2^24 elements instead,
        // every size scaled by one factor (their ratios kept); the checks keep the sizes seen.
        let n = largest(d, inputs).max(1) as f64;
        let rank = inputs
            .iter()
            .filter_map(|i| match &i.kind {
                InputKind::Tensor { shape, .. } if largest_of(shape, d) == n as i64 => Some(shape.len()),
                _ => None,
            })
            .max()
            .unwrap_or(1)
            .max(1);
        let factor = ((1u64 << 24) as f64 / n).powf(1.0 / rank as f64);
        // Every size of the tensors, and every other number the call gave the same value (a module's
        // `hidden_size` beside its input's last dimension): the code may rely on them being equal.
        let shape = shape_dims(inputs);
        let scaled: Vec<f64> = d.iter().filter(|(k, v)| shape.contains(k) && **v >= 2.0).map(|(_, v)| *v).collect();
        // One new value per old one, a multiple of what every key of that value must divide by.
        let step = |v: f64| {
            d.iter().filter(|(_, x)| **x == v).fold(1i64, |m, (k, _)| {
                let q = divisors.get(k).copied().unwrap_or(1).max(1);
                m / gcd(m, q) * q
            })
        };
        let mut big = d.clone();
        for v in big.values_mut() {
            if scaled.contains(v) && v.fract() == 0.0 {
                *v = round_up((*v * factor).round() as i64, step(*v)) as f64;
            }
        }
        notes.push(format!(
            "the sizes seen are small to time on a GPU (the largest tensor has {n} elements, a call is launch-bound): \
             `bench-gpu` scales them ×{factor:.0} to {} (give `# xeforge: dims` above the entry to time your own)",
            fmt_sizes(&big, inputs)
        ));
        Variant { family: "bench-gpu".into(), dims: big, dtype: t.clone(), origin: format!("{o}; scaled up for timing") }
    } else {
        Variant { family: "bench-gpu".into(), dims: d.clone(), dtype: t.clone(), origin: o.clone() }
    };
    out.push(bench);
    out
}

/// Elements of one tensor of `shape` under `dims`.
fn largest_of(shape: &[String], dims: &BTreeMap<String, f64>) -> i64 {
    shape.iter().map(|x| dims.get(x).copied().unwrap_or(1.0) as i64).product()
}

/// The dimension names the tensor inputs' shapes use, in input order (repeats kept).
fn shape_dims(inputs: &[Input]) -> Vec<String> {
    inputs
        .iter()
        .flat_map(|i| match &i.kind {
            InputKind::Tensor { shape, .. } => shape.clone(),
            _ => Vec::new(),
        })
        .collect()
}

/// The sizes of a variant (its tensors' dimensions), for a note: scalars such as `eps` or a flag are
/// not sizes and are never scaled.
fn fmt_sizes(d: &BTreeMap<String, f64>, inputs: &[Input]) -> String {
    let sizes = shape_dims(inputs);
    d.iter().filter(|(k, _)| sizes.contains(k)).map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

fn scale_down(d: &BTreeMap<String, f64>, inputs: &[Input], inits: &[String], divisors: &BTreeMap<String, i64>) -> BTreeMap<String, f64> {
    let shape_dims = shape_dims(inputs);
    let mut out = d.clone();
    for _ in 0..64 {
        if footprint(&out, inputs, inits) <= CI_MAX_ELEMENTS {
            break;
        }
        // halve the largest size still above its floor (an input's, or a module's table's)
        let Some((k, v)) = out
            .iter()
            .filter(|(k, v)| (shape_dims.contains(k) || inits.contains(k)) && **v as i64 > divisors.get(*k).copied().unwrap_or(1).max(16))
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(k, v)| (k.clone(), *v))
        else {
            break;
        };
        let m = divisors.get(&k).copied().unwrap_or(1);
        let half = round_up(((v as i64) / 2).max(1), m).max(m);
        if half as f64 >= v {
            break;
        }
        // Sizes the call site gave the same value (a hidden size in `x` and in `w`) stay equal:
        // the code may rely on it where it does not say so.
        let twins: Vec<String> = out
            .iter()
            .filter(|(j, x)| **x == v && d.get(*j) == d.get(&k) && divisors.get(*j).copied().unwrap_or(1) == m)
            .map(|(j, _)| j.clone())
            .collect();
        for j in twins {
            out.insert(j, half as f64);
        }
        out.insert(k, half as f64);
    }
    out
}

/// The first file beside `path` (same directory, `.py`, at most [`BESIDE_FILES`] of them, in name
/// order) that launches a kernel named `kernel` (`kernel[grid](...)` or `mod.kernel[grid](...)`),
/// and the launch's 1-based line: a kernel module and its wrapper module are a common split, and the
/// user needs to hear where the launch is rather than that there is none.
fn launched_beside(path: &Path, kernel: &str) -> Option<(String, usize)> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "py") && p.file_name() != path.file_name())
        .collect();
    files.sort();
    files.into_iter().take(BESIDE_FILES).find_map(|p| {
        let text = std::fs::read_to_string(&p).ok().filter(|t| t.len() <= BESIDE_BYTES && t.contains(kernel))?;
        let o = crate::cover::outline::Outline::build(&text);
        let l = o.launches.iter().find(|l| l.targets(kernel))?;
        let line = text[..l.range.start].matches('\n').count() + 1;
        Some((p.file_name()?.to_string_lossy().to_string(), line))
    })
}

/// How many files beside a kernel's file, and how large, are read to find where it is launched.
const BESIDE_FILES: usize = 64;
const BESIDE_BYTES: usize = 512 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, y_ptr, n, B: tl.constexpr):\n    pass\n\ndef double(x):\n    y = torch.empty_like(x)\n    k[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), B=64)\n    return y\n\n";

    fn entry_of(rest: &str) -> (String, bool) {
        let p = infer(Path::new("k.py"), &format!("{KERNEL}{rest}"), None).unwrap();
        (p.entry.name.clone(), p.is_complete())
    }

    #[test]
    fn a_module_whose_call_sites_give_sizes_becomes_the_entry() {
        let rest = "class Doubler(torch.nn.Module):\n    def forward(self, x):\n        return double(x)\n\nif __name__ == '__main__':\n    m = Doubler()\n    m(torch.randn(4096, 8))\n";
        assert_eq!(entry_of(rest), ("Doubler.forward".to_string(), true));
    }

    #[test]
    fn a_caller_that_takes_nothing_is_not_an_entry() {
        // `demo()` makes its own input: entering through it would time its torch.randn too.
        let rest = "def demo():\n    n = int(input())\n    return double(torch.randn(n))\n";
        assert_eq!(entry_of(rest), ("double".to_string(), false));
    }
}
