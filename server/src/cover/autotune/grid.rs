//! Which tuned name each literal of a launch grid stands for, so the grid can read the tuned value
//! from `META`. Grids are found where people write them: inline (`k[(triton.cdiv(M, 32), ...)]`, a
//! `lambda`), in a `grid = ...` assignment, in a local `def grid(meta)`, or returned by a helper
//! called at the launch (`k[_grid(M, N)]`, inlined into a lambda). Factors are `cdiv(D, 32)`,
//! `(D + 31) // 32` (the 31 is the tile minus one) and `(D + 32 - 1) // 32`; a literal outside a
//! factor is read on its own.
//!
//! When a literal's value is taken by several tuned names, the kernel decides ([`super::pairing`]):
//! the dimension it divides (`M` → the tile compared with `M`), else the axis it sits on. What is left
//! open is enumerated as readings, most plausible first; the stage verifies them on variants that a
//! wrong reading fails.

use super::bind::Bound;
use super::pairing::Pairing;
use crate::cover::outline::{Function, LaunchSite, Outline, slice};
use crate::syntax::{named_children, node_text};
use crate::text::TextRange;
use tree_sitter::Node;

/// Where a grid expression lives and how it is rewritten.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// The file range replaced.
    pub target: TextRange,
    /// The expression text read (a helper's return value with its arguments substituted).
    pub text: String,
    /// The meta-parameter name already bound (`lambda meta:`, `def grid(meta)`); None wraps in `lambda META:`.
    pub meta: Option<String>,
    /// Index of the launch this grid belongs to (for argument → parameter mapping).
    pub launch: usize,
}

/// How a factor's name was settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Basis {
    /// Only one tuned name has this value.
    Only,
    /// The kernel compares or divides this dimension by the tile.
    Dim(String),
    /// The kernel lays this tile along this launch axis.
    Axis(usize),
    /// The kernel does not say: every candidate is a reading.
    Open,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Factor {
    pub source: usize,
    pub axis: usize,
    /// The host expression divided by the tile, when the literal divides one.
    pub dividend: Option<String>,
    pub value: i64,
    /// (range in the source text, written as the tile minus one).
    pub literals: Vec<(TextRange, bool)>,
    pub candidates: Vec<String>,
    pub basis: Basis,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct GridPlan {
    pub sources: Vec<Source>,
    pub factors: Vec<Factor>,
}

/// Readings beyond this many are not tried (the most plausible come first).
pub const MAX_READINGS: usize = 6;

/// Grid sources of every launch of `kernel`, and the factors in them whose literals (or host names
/// bound to them) tuned names take; `bound[i]` is what launch `i` passes for the tuned names.
pub fn read(
    text: &str,
    outline: &Outline,
    kernel: &Function,
    launches: &[&LaunchSite],
    bound: &[Vec<Bound>],
    pairing: &Pairing,
) -> GridPlan {
    let tree = crate::syntax::parse(text);
    let mut plan = GridPlan::default();
    for (li, l) in launches.iter().enumerate() {
        let Some(src) = source_of(text, &tree, outline, l, li) else {
            continue;
        };
        if plan.sources.iter().any(|s| s.target == src.target) {
            continue; // two launches sharing one `grid` function or variable
        }
        let idx = plan.sources.len();
        plan.factors.extend(factors(&src.text, idx, bound.get(li).map(Vec::as_slice).unwrap_or_default()));
        plan.sources.push(src);
    }
    for f in &mut plan.factors {
        let launch = launches.get(plan.sources[f.source].launch).copied();
        settle(f, kernel, launch, text, pairing);
    }
    plan
}

fn settle(f: &mut Factor, kernel: &Function, launch: Option<&LaunchSite>, text: &str, pairing: &Pairing) {
    if f.candidates.len() <= 1 {
        f.basis = Basis::Only;
        return;
    }
    let mut dims: Vec<String> = Vec::new();
    if let (Some(d), Some(l)) = (&f.dividend, launch) {
        for (i, a) in l.args.iter().enumerate() {
            if slice(text, a.value).trim() == d.as_str() {
                match &a.name {
                    Some(n) => dims.push(n.clone()),
                    None => {
                        if let Some(p) = kernel.params.get(i) {
                            dims.push(p.name.clone());
                        }
                    }
                }
            }
        }
        dims.push(d.clone());
    }
    for d in dims {
        if let Some(set) = pairing.by_dim.get(&d) {
            let c: Vec<String> = f.candidates.iter().filter(|n| set.contains(*n)).cloned().collect();
            if c.len() == 1 {
                f.candidates = c;
                f.basis = Basis::Dim(d);
                return;
            }
        }
    }
    if let Some(set) = pairing.by_axis.get(&f.axis) {
        let c: Vec<String> = f.candidates.iter().filter(|n| set.contains(*n)).cloned().collect();
        if c.len() == 1 {
            f.candidates = c;
            f.basis = Basis::Axis(f.axis);
            return;
        }
        if c.len() > 1 {
            f.candidates = c; // narrowed, still open
        }
    }
    f.basis = Basis::Open;
    // Most plausible first: a tile named after the dimension it divides (`M` ~ BLOCK_M).
    let hint = f.dividend.as_deref().and_then(|d| d.chars().last()).map(|c| c.to_ascii_uppercase());
    f.candidates.sort_by_key(|n| (hint.is_none_or(|h| !n.to_ascii_uppercase().ends_with(h)), n.clone()));
}

impl GridPlan {
    /// Every reading (one name per factor), most plausible first, at most [`MAX_READINGS`]. Factors of
    /// one grid axis that divide different dimensions take different names.
    pub fn readings(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = vec![Vec::new()];
        for (i, f) in self.factors.iter().enumerate() {
            let mut next = Vec::new();
            for r in &out {
                for c in &f.candidates {
                    let clash = self.factors[..i].iter().zip(r).any(|(g, name)| {
                        name == c
                            && g.source == f.source
                            && g.axis == f.axis
                            && g.dividend.is_some()
                            && f.dividend.is_some()
                            && g.dividend != f.dividend
                    });
                    if !clash {
                        let mut r2 = r.clone();
                        r2.push(c.clone());
                        next.push(r2);
                    }
                }
            }
            next.truncate(64);
            out = next;
        }
        out.truncate(MAX_READINGS);
        out
    }

    pub fn is_open(&self) -> bool {
        self.factors.iter().any(|f| f.basis == Basis::Open)
    }

    /// Names that open factors may take: the ones a verification config must set apart.
    pub fn open_names(&self) -> Vec<String> {
        let mut v: Vec<String> =
            self.factors.iter().filter(|f| f.basis == Basis::Open).flat_map(|f| f.candidates.iter().cloned()).collect();
        v.sort();
        v.dedup();
        v
    }

    /// One line per factor, for the evidence: `cdiv(M, 32) → BLOCK_M (the kernel compares M with it)`.
    pub fn describe(&self, reading: &[String]) -> Vec<String> {
        self.factors
            .iter()
            .zip(reading)
            .map(|(f, n)| {
                let what = match &f.dividend {
                    Some(d) => format!("{d} / {} on axis {}", f.value, f.axis),
                    None => format!("{} on axis {}", f.value, f.axis),
                };
                let why = match &f.basis {
                    Basis::Only => "the only tuned name with that value".to_string(),
                    Basis::Dim(d) => format!("the kernel bounds {d} with it"),
                    Basis::Axis(a) => format!("the kernel lays it along program_id({a})"),
                    Basis::Open => format!("one reading of {}", f.candidates.join(" / ")),
                };
                format!("{what} → {n} ({why})")
            })
            .collect()
    }

    /// Edits that make every grid read the tuned values under `reading`.
    pub fn edits(&self, reading: &[String]) -> Vec<(TextRange, String)> {
        self.rewrite(reading, |_, meta, name, minus_one| Some(from_meta(meta, name, minus_one)))
    }

    /// Edits that write one config's values into the grids under `reading`: a grid written in the
    /// launch itself (`inline(source)`) gets the numbers, and stays a plain expression. A grid defined
    /// elsewhere (a variable, a local `def`) may serve other launches, another kernel's too, which
    /// keep their own values: it reads `META` as in [`GridPlan::edits`], from each launch's keywords.
    /// `value` gives a tuned name's integer value.
    pub fn pinned_edits(
        &self,
        reading: &[String],
        inline: impl Fn(&Source) -> bool,
        value: impl Fn(&str) -> Option<i64>,
    ) -> Vec<(TextRange, String)> {
        self.rewrite(reading, |s, meta, name, minus_one| {
            if inline(s) {
                value(name).map(|v| if minus_one { v - 1 } else { v }.to_string())
            } else {
                Some(from_meta(meta, name, minus_one))
            }
        })
    }

    /// Each grid source with its tile literals replaced by `by(source, meta name, tuned name, minus
    /// one)`; a plain expression turned into `lambda META:` where a replacement names `META`.
    fn rewrite(&self, reading: &[String], by: impl Fn(&Source, &str, &str, bool) -> Option<String>) -> Vec<(TextRange, String)> {
        let mut out = Vec::new();
        for (si, s) in self.sources.iter().enumerate() {
            let meta = s.meta.clone().unwrap_or_else(|| "META".into());
            let mut reps: Vec<(TextRange, String)> = Vec::new();
            for (f, name) in self.factors.iter().zip(reading).filter(|(f, _)| f.source == si) {
                for (r, minus_one) in &f.literals {
                    if let Some(v) = by(s, &meta, name, *minus_one) {
                        reps.push((*r, v));
                    }
                }
            }
            if reps.is_empty() {
                continue;
            }
            let reads_meta = reps.iter().any(|(_, v)| v.contains(&format!("{meta}[")));
            reps.sort_by_key(|(r, _)| r.start);
            let mut body = String::new();
            let mut at = 0;
            for (r, v) in reps {
                if r.start < at || r.end > s.text.len() {
                    continue;
                }
                body.push_str(&s.text[at..r.start]);
                body.push_str(&v);
                at = r.end;
            }
            body.push_str(&s.text[at..]);
            let new = if s.meta.is_some() || !reads_meta { body } else { format!("lambda META: {}", body.trim()) };
            out.push((s.target, new));
        }
        out
    }
}

/// Whether `expr` is a tuple without its parentheses (`a, b` or `a,`): a comma outside any bracket.
fn bare_tuple(expr: &str) -> bool {
    let mut depth = 0i32;
    for c in expr.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// A tuned name read from the grid's meta-parameter (`META['BLOCK']`, or `(META['BLOCK'] - 1)`).
fn from_meta(meta: &str, name: &str, minus_one: bool) -> String {
    if minus_one { format!("({meta}['{name}'] - 1)") } else { format!("{meta}['{name}']") }
}

/// The grid expression of a launch, wherever it is written.
fn source_of(text: &str, tree: &tree_sitter::Tree, outline: &Outline, l: &LaunchSite, launch: usize) -> Option<Source> {
    let g = slice(text, l.grid).trim();
    let is_name = !g.is_empty() && g.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !is_name {
        if let Some(src) = helper_call(text, outline, l, g, launch) {
            return Some(src);
        }
        // `k[a, b]` launches on the tuple `(a, b)`: read (and rewritten) as that tuple, so its
        // items are axes and a lambda returns all of them.
        let own = if bare_tuple(g) { format!("({g})") } else { slice(text, l.grid).to_string() };
        return Some(Source { target: l.grid, text: own, meta: lambda_param(g), launch });
    }
    // The nearest definition before the launch: `def g(meta): return ...` or `g = ...`.
    let mut best: Option<Source> = None;
    let mut best_at = 0;
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.start_byte() >= l.range.start {
            continue;
        }
        match n.kind() {
            "function_definition" if n.child_by_field_name("name").is_some_and(|x| node_text(text, x) == g) => {
                if let Some(ret) = single_return(n) {
                    let param = n
                        .child_by_field_name("parameters")
                        .and_then(|p| named_children(p).next())
                        .map(|p| node_text(text, p).split([':', '=']).next().unwrap_or("").trim().to_string());
                    if n.start_byte() >= best_at {
                        best_at = n.start_byte();
                        let r = crate::syntax::range(ret);
                        best = Some(Source { target: r, text: slice(text, r).to_string(), meta: param.filter(|p| !p.is_empty()), launch });
                    }
                }
            }
            "assignment" if n.child_by_field_name("left").is_some_and(|x| node_text(text, x) == g) => {
                if let Some(right) = n.child_by_field_name("right")
                    && n.start_byte() >= best_at
                {
                    best_at = n.start_byte();
                    let r = crate::syntax::range(right);
                    let t = slice(text, r);
                    best = Some(Source { target: r, text: t.to_string(), meta: lambda_param(t), launch });
                }
            }
            _ => {}
        }
        stack.extend(named_children(n));
    }
    best
}

/// `k[_grid(M, N)]` with `def _grid(m, n): return (...)` in the file: the return value with the
/// arguments put in, to become a lambda at the launch.
fn helper_call(text: &str, outline: &Outline, l: &LaunchSite, g: &str, launch: usize) -> Option<Source> {
    let tree = crate::syntax::parse(g);
    let expr = first_expression(tree.root_node())?;
    if expr.kind() != "call" {
        return None;
    }
    let name = node_text(g, expr.child_by_field_name("function")?);
    let f = outline.function(name)?;
    let args: Vec<String> = named_children(expr.child_by_field_name("arguments")?).map(|a| node_text(g, a).to_string()).collect();
    let def_src = slice(text, f.range);
    let def_tree = crate::syntax::parse(def_src);
    let def = find_kind(def_tree.root_node(), "function_definition")?;
    let ret = single_return(def)?;
    let body = node_text(def_src, ret);
    let params: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    if params.len() != args.len() {
        return None;
    }
    let substituted = substitute(body, &params, &args);
    Some(Source { target: l.grid, text: substituted, meta: None, launch })
}

fn substitute(expr: &str, params: &[&str], args: &[String]) -> String {
    let tree = crate::syntax::parse(expr);
    let mut reps: Vec<(usize, usize, String)> = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.kind() == "identifier" {
            if let Some(i) = params.iter().position(|p| *p == node_text(expr, n)) {
                reps.push((n.start_byte(), n.end_byte(), format!("({})", args[i])));
            }
            continue;
        }
        if n.kind() == "attribute" {
            if let Some(o) = n.child_by_field_name("object") {
                stack.push(o);
            }
            continue;
        }
        stack.extend(named_children(n));
    }
    reps.sort_by_key(|r| r.0);
    let mut out = String::new();
    let mut at = 0;
    for (s, e, v) in reps {
        // A bare name needs no parentheses.
        let v = if v[1..v.len() - 1].chars().all(|c| c.is_alphanumeric() || c == '_') { v[1..v.len() - 1].to_string() } else { v };
        out.push_str(&expr[at..s]);
        out.push_str(&v);
        at = e;
    }
    out.push_str(&expr[at..]);
    out
}

fn find_kind<'a>(n: Node<'a>, kind: &str) -> Option<Node<'a>> {
    if n.kind() == kind {
        return Some(n);
    }
    named_children(n).find_map(|c| find_kind(c, kind))
}

fn single_return(def: Node) -> Option<Node> {
    let body = def.child_by_field_name("body")?;
    let rets: Vec<Node> = named_children(body).filter(|s| s.kind() == "return_statement").collect();
    if rets.len() != 1 {
        return None;
    }
    named_children(rets[0]).next()
}

fn lambda_param(t: &str) -> Option<String> {
    let rest = t.trim_start().strip_prefix("lambda")?;
    let p = rest.split(':').next()?.trim();
    (!p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_')).then(|| p.to_string())
}

fn first_expression(root: Node) -> Option<Node> {
    let stmt = named_children(root).next()?;
    if stmt.kind() == "expression_statement" { named_children(stmt).next() } else { None }
}

/// Which tuned names a leaf of a grid stands for: an integer their value, a name the host variable
/// they were passed through.
struct Owners<'a>(&'a [Bound]);

impl Owners<'_> {
    fn of(&self, src: &str, n: Node) -> Vec<String> {
        let names = |keep: &dyn Fn(&Bound) -> bool| -> Vec<String> {
            let mut v: Vec<String> = self.0.iter().filter(|b| keep(b)).map(|b| b.name.clone()).collect();
            v.dedup();
            v
        };
        match n.kind() {
            "integer" => match int(src, n) {
                Some(x) => names(&|b| b.value.as_int() == Some(x)),
                None => Vec::new(),
            },
            "identifier" | "attribute" if !super::bind::is_field(n) => {
                let t = node_text(src, n);
                names(&|b| b.via.as_deref() == Some(t))
            }
            _ => Vec::new(),
        }
    }
}

/// The factors of one grid expression.
fn factors(src: &str, source: usize, bound: &[Bound]) -> Vec<Factor> {
    let tree = crate::syntax::parse(src);
    let Some(mut expr) = first_expression(tree.root_node()) else {
        return Vec::new();
    };
    if expr.kind() == "lambda" {
        match expr.child_by_field_name("body") {
            Some(b) => expr = b,
            None => return Vec::new(),
        }
    }
    // `(a, b)`, `[a, b]`, `(a,)`: one element per axis; anything else is axis 0.
    let mut inner = expr;
    while inner.kind() == "parenthesized_expression" {
        match named_children(inner).next() {
            Some(c) => inner = c,
            None => break,
        }
    }
    let axes: Vec<Node> =
        if matches!(inner.kind(), "tuple" | "list" | "expression_list") { named_children(inner).collect() } else { vec![expr] };
    let owners = Owners(bound);
    let mut out = Vec::new();
    for (axis, e) in axes.into_iter().enumerate() {
        let mut used: Vec<usize> = Vec::new();
        let mut stack = vec![e];
        let mut found: Vec<Factor> = Vec::new();
        while let Some(n) = stack.pop() {
            if let Some(f) = factor_at(src, n, source, axis, &owners) {
                for (r, _) in &f.literals {
                    used.push(r.start);
                }
                found.push(f);
            }
            stack.extend(named_children(n));
        }
        // Literals outside any factor: `(M // 32) * 4`, a bare split count.
        let mut stack = vec![e];
        while let Some(n) = stack.pop() {
            if matches!(n.kind(), "integer" | "identifier" | "attribute") && !used.contains(&n.start_byte()) {
                let c = owners.of(src, n);
                if !c.is_empty() {
                    found.push(Factor {
                        source,
                        axis,
                        dividend: None,
                        value: value_of(bound, &c[0]),
                        literals: vec![(crate::syntax::range(n), false)],
                        candidates: c,
                        basis: Basis::Open,
                    });
                }
            }
            stack.extend(named_children(n));
        }
        found.sort_by_key(|f| f.literals.first().map(|l| l.0.start).unwrap_or(0));
        out.extend(found);
    }
    out
}

fn value_of(bound: &[Bound], name: &str) -> i64 {
    bound.iter().find(|b| b.name == name).and_then(|b| b.value.as_int()).unwrap_or(0)
}

fn int(src: &str, n: Node) -> Option<i64> {
    node_text(src, n).replace('_', "").parse().ok()
}

/// `cdiv(D, v)` or `(D + v - 1) // v` or `(D + (v-1)) // v` at `n`; `v` a literal or a host name
/// bound to the tile (`(S + BLOCK_S - 1) // BLOCK_S`: both uses of the name are the tile).
fn factor_at(src: &str, n: Node, source: usize, axis: usize, owners: &Owners) -> Option<Factor> {
    match n.kind() {
        "call" => {
            let f = node_text(src, n.child_by_field_name("function")?);
            if !f.ends_with("cdiv") {
                return None;
            }
            let a: Vec<Node> = named_children(n.child_by_field_name("arguments")?).collect();
            if a.len() != 2 {
                return None;
            }
            let c = owners.of(src, a[1]);
            (!c.is_empty()).then(|| Factor {
                source,
                axis,
                dividend: Some(node_text(src, a[0]).trim().to_string()),
                value: value_of(owners.0, &c[0]),
                literals: vec![(crate::syntax::range(a[1]), false)],
                candidates: c,
                basis: Basis::Open,
            })
        }
        "binary_operator" => {
            let op = node_text(src, n.child_by_field_name("operator")?);
            let right = n.child_by_field_name("right")?;
            if op != "//" {
                return None;
            }
            let c = owners.of(src, right);
            if c.is_empty() {
                return None;
            }
            let v = value_of(owners.0, &c[0]);
            let named = matches!(right.kind(), "identifier" | "attribute");
            let mut literals = vec![(crate::syntax::range(right), false)];
            let mut left = n.child_by_field_name("left")?;
            while left.kind() == "parenthesized_expression" {
                left = named_children(left).next()?;
            }
            // Walk the `+`/`-` chain of the dividend: the tile's own terms (v-1, or v in `+ v - 1`;
            // the same name for a named tile, whose `- 1` stays) belong to the factor.
            let mut terms = Vec::new();
            sum_terms(left, &mut terms);
            let mut dividend = None;
            for t in &terms {
                if named {
                    if matches!(t.kind(), "identifier" | "attribute") && node_text(src, *t) == node_text(src, right) {
                        literals.push((crate::syntax::range(*t), false));
                        continue;
                    }
                    if t.kind() == "integer" {
                        continue;
                    }
                } else if t.kind() == "integer" {
                    match int(src, *t) {
                        Some(x) if x == v - 1 => literals.push((crate::syntax::range(*t), true)),
                        Some(x) if x == v => literals.push((crate::syntax::range(*t), false)),
                        _ => {}
                    }
                    continue;
                }
                if dividend.is_none() {
                    dividend = Some(node_text(src, *t).trim().to_string());
                }
            }
            Some(Factor { source, axis, dividend, value: v, literals, candidates: c, basis: Basis::Open })
        }
        _ => None,
    }
}

fn sum_terms<'a>(n: Node<'a>, out: &mut Vec<Node<'a>>) {
    if n.kind() == "binary_operator" {
        let op = n.child_by_field_name("operator").map(|o| o.kind()).unwrap_or("");
        if (op == "+" || op == "-")
            && let (Some(l), Some(r)) = (n.child_by_field_name("left"), n.child_by_field_name("right"))
        {
            sum_terms(l, out);
            sum_terms(r, out);
            return;
        }
    }
    out.push(n);
}
