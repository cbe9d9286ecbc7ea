//! What the kernel's own code says about its tile names: which problem dimension each tile covers
//! (`offs_m < M`, `tl.cdiv(M, BLOCK_M)`, `(..) % M`) and which launch axis it is laid along
//! (`pid_m = tl.program_id(0)` … `pid_m * BLOCK_M + tl.arange(0, BLOCK_M)`), and which scalar
//! parameters are shapes (the autotune key) rather than pointers or floats.
//!
//! A text-and-tree reading of the usual idioms, not a data-flow analysis: where it says nothing, the
//! grid reader enumerates readings and the harness decides between them.

use crate::syntax::{named_children, node_text};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tree_sitter::Node;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Pairing {
    /// Problem dimension (a parameter or local name) → tile names that cover it.
    pub by_dim: BTreeMap<String, BTreeSet<String>>,
    /// Launch axis → tile names laid along it.
    pub by_axis: BTreeMap<usize, BTreeSet<String>>,
    /// Names compared with, divided by or ranged over index values: shapes.
    pub shapes: BTreeSet<String>,
    /// Names used as the base of loaded or stored addresses: pointers.
    pub pointers: BTreeSet<String>,
    /// Of those, the bases of stores and atomics (`written`), of loads and atomics (`read`), and of
    /// atomics alone: an argument both written and read, or updated atomically, changes with every
    /// call, which an autotune search must undo (`restore_value`).
    pub written: BTreeSet<String>,
    pub read: BTreeSet<String>,
    pub atomic: BTreeSet<String>,
}

impl Pairing {
    /// Pointers a call updates rather than overwrites: written and read, or updated atomically.
    pub fn updated(&self) -> BTreeSet<String> {
        self.written.intersection(&self.read).chain(&self.atomic).cloned().collect()
    }
}

/// What a `tl.load`/`tl.store`/`tl.atomic_*` call (or a descriptor's or block pointer's `.load`/`.store`)
/// does to the memory at its address.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Access {
    Load,
    Store,
    Atomic,
}

fn access(callee: &str) -> Option<Access> {
    let last = callee.rsplit('.').next().unwrap_or(callee);
    match last {
        "load" => Some(Access::Load),
        "store" => Some(Access::Store),
        _ if last.starts_with("atomic_") => Some(Access::Atomic),
        _ => None,
    }
}

/// The address a memory call reads: `tl.store(ptrs, ...)`'s first argument (or `pointer=`), or the
/// object of a method call (`desc.store([..], v)`, `bp.load()`).
fn address<'a>(src: &str, call: Node<'a>, args: &[Node<'a>]) -> Option<Node<'a>> {
    let f = call.child_by_field_name("function")?;
    if f.kind() == "attribute"
        && let Some(obj) = f.child_by_field_name("object")
        && !matches!(node_text(src, obj), "tl" | "triton.language" | "language")
    {
        return Some(obj);
    }
    args.iter()
        .copied()
        .find(|a| a.kind() != "keyword_argument")
        .or_else(|| keyword(src, args, "pointer").or_else(|| keyword(src, args, "ptr")))
}

fn keyword<'a>(src: &str, args: &[Node<'a>], name: &str) -> Option<Node<'a>> {
    args.iter()
        .filter(|a| a.kind() == "keyword_argument")
        .find(|a| a.child_by_field_name("name").is_some_and(|n| node_text(src, n) == name))
        .and_then(|a| a.child_by_field_name("value"))
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

fn identifiers<'a>(src: &'a str, n: Node, out: &mut Vec<&'a str>) {
    if n.kind() == "identifier" {
        out.push(node_text(src, n));
        return;
    }
    if n.kind() == "attribute" {
        // `tl.arange`, `x.dtype`: only the object can be a variable.
        if let Some(o) = n.child_by_field_name("object") {
            identifiers(src, o, out);
        }
        return;
    }
    if n.kind() == "keyword_argument" {
        if let Some(v) = n.child_by_field_name("value") {
            identifiers(src, v, out);
        }
        return;
    }
    for c in named_children(n) {
        identifiers(src, c, out);
    }
}

fn ids<'a>(src: &'a str, n: Node) -> Vec<&'a str> {
    let mut v = Vec::new();
    identifiers(src, n, &mut v);
    v
}

/// `tl.program_id(1)` / `tl.program_id(axis=1)` inside `text` → 1.
fn program_axes(text: &str) -> BTreeSet<usize> {
    let t = squeeze(text);
    let mut out = BTreeSet::new();
    let mut rest = t.as_str();
    while let Some(p) = rest.find("program_id(") {
        rest = &rest[p + "program_id(".len()..];
        let arg = rest.strip_prefix("axis=").unwrap_or(rest);
        let digits: String = arg.chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(a) = digits.parse() {
            out.insert(a);
        }
    }
    out
}

fn preorder(root: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        out.push(n);
        let kids: Vec<Node> = named_children(n).collect();
        stack.extend(kids.into_iter().rev());
    }
    out
}

/// Read a kernel's source (its whole `def`) for the tuned names `tiles`.
pub fn read(src: &str, tiles: &[String]) -> Pairing {
    let tree = crate::syntax::parse(src);
    let nodes = preorder(tree.root_node());
    let mut p = Pairing::default();
    let mut axis_of: HashMap<String, BTreeSet<usize>> = HashMap::new();
    let mut tile_of: HashMap<String, BTreeSet<String>> = HashMap::new();
    let mut index: BTreeSet<String> = BTreeSet::new();
    let mut rhs_of: HashMap<String, Node> = HashMap::new();

    // Assignments, in source order: axes, tiles and index-ness flow from right to left.
    for n in &nodes {
        if n.kind() != "assignment" && n.kind() != "augmented_assignment" {
            continue;
        }
        let (Some(left), Some(right)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) else {
            continue;
        };
        if left.kind() != "identifier" {
            continue;
        }
        let name = node_text(src, left).to_string();
        let rtext = node_text(src, right);
        let rids = ids(src, right);
        let mut axes = program_axes(rtext);
        for id in &rids {
            if let Some(a) = axis_of.get(*id) {
                axes.extend(a.iter().copied());
            }
        }
        let squeezed = squeeze(rtext);
        let mut own: BTreeSet<String> = BTreeSet::new();
        for t in tiles {
            let laid = squeezed.contains(&format!("*{t}+")) || squeezed.contains(&format!("*{t})")) || squeezed.ends_with(&format!("*{t}"));
            if squeezed.contains(&format!("arange(0,{t})")) && laid && !axes.is_empty() {
                own.insert(t.clone());
                for a in &axes {
                    p.by_axis.entry(*a).or_default().insert(t.clone());
                }
            }
        }
        for id in &rids {
            if let Some(t) = tile_of.get(*id) {
                own.extend(t.iter().cloned());
            }
        }
        let is_index = squeezed.contains("arange(") || squeezed.contains("program_id(") || rids.iter().any(|i| index.contains(*i));
        if n.kind() == "assignment" {
            if !axes.is_empty() {
                axis_of.insert(name.clone(), axes);
            }
            if !own.is_empty() {
                tile_of.insert(name.clone(), own);
            }
            // A loaded value, or random numbers drawn at the indices (`tl.rand(seed, offs)`), is data:
            // what it is compared with (a dropout's `p`) is no shape.
            let data = ["load(", "rand(", "randn(", "randint(", "rand4x(", "randn4x(", "randint4x("];
            if is_index && !data.iter().any(|d| squeezed.contains(d)) {
                index.insert(name.clone());
            }
            rhs_of.insert(name, right);
        }
    }

    let has_index = |ns: &[&str]| ns.iter().any(|i| index.contains(*i));
    let tiles_in = |ns: &[&str]| -> BTreeSet<String> { ns.iter().filter_map(|i| tile_of.get(*i)).flatten().cloned().collect() };
    let mut shape_seeds: BTreeSet<String> = BTreeSet::new();
    for n in &nodes {
        match n.kind() {
            "comparison_operator" => {
                let kids: Vec<Node> = named_children(*n).collect();
                for w in kids.windows(2) {
                    let (l, r) = (ids(src, w[0]), ids(src, w[1]));
                    for (a, b, bn) in [(&l, &r, w[1]), (&r, &l, w[0])] {
                        if has_index(a) {
                            shape_seeds.extend(b.iter().map(|s| s.to_string()));
                            if bn.kind() == "identifier" {
                                let t = tiles_in(a);
                                if !t.is_empty() {
                                    p.by_dim.entry(node_text(src, bn).to_string()).or_default().extend(t);
                                }
                            }
                        }
                    }
                }
            }
            "binary_operator" => {
                let op = n.child_by_field_name("operator").map(|o| node_text(src, o)).unwrap_or("");
                let (Some(l), Some(r)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) else {
                    continue;
                };
                if op == "%" || op == "//" {
                    let li = ids(src, l);
                    if has_index(&li) {
                        shape_seeds.extend(ids(src, r).iter().map(|s| s.to_string()));
                        if op == "%" && r.kind() == "identifier" {
                            let t = tiles_in(&li);
                            if !t.is_empty() {
                                p.by_dim.entry(node_text(src, r).to_string()).or_default().extend(t);
                            }
                        }
                    }
                }
                // `(D + B - 1) // B`: D is covered by tiles of B.
                if op == "//"
                    && r.kind() == "identifier"
                    && tiles.iter().any(|t| t == node_text(src, r))
                    && let Some(d) = ids(src, l).first().filter(|d| !tiles.iter().any(|t| t == *d))
                {
                    p.by_dim.entry(d.to_string()).or_default().insert(node_text(src, r).to_string());
                    shape_seeds.insert(d.to_string());
                }
            }
            "call" => {
                let f = n.child_by_field_name("function").map(|f| node_text(src, f)).unwrap_or("");
                let Some(args) = n.child_by_field_name("arguments") else {
                    continue;
                };
                let a: Vec<Node> = named_children(args).collect();
                if f.ends_with("cdiv") && a.len() == 2 {
                    shape_seeds.extend(ids(src, a[0]).iter().map(|s| s.to_string()));
                    if a[0].kind() == "identifier" && tiles.iter().any(|t| t == node_text(src, a[1])) {
                        p.by_dim.entry(node_text(src, a[0]).to_string()).or_default().insert(node_text(src, a[1]).to_string());
                    }
                } else if f == "range" || f.ends_with("static_range") {
                    for x in a.iter().take(2) {
                        shape_seeds.extend(ids(src, *x).iter().map(|s| s.to_string()));
                    }
                } else if let Some(how) = access(f)
                    && let Some(at) = address(src, *n, &a)
                    && let Some(base) = leftmost(src, at)
                {
                    p.pointers.insert(base.to_string());
                    if how != Access::Load {
                        p.written.insert(base.to_string());
                    }
                    if how != Access::Store {
                        p.read.insert(base.to_string());
                    }
                    if how == Access::Atomic {
                        p.atomic.insert(base.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    // Pointers flow back through `ptrs = base + offsets` and `X += offset`.
    for set in [&mut p.pointers, &mut p.written, &mut p.read, &mut p.atomic] {
        let mut changed = true;
        while changed {
            changed = false;
            for (name, rhs) in &rhs_of {
                if set.contains(name)
                    && let Some(base) = leftmost(src, *rhs)
                {
                    changed |= set.insert(base.to_string());
                }
            }
        }
    }
    // Shapes flow back through local names (`P = BATCH * H * W`), never through loaded values.
    let mut shapes = shape_seeds;
    let mut changed = true;
    while changed {
        changed = false;
        for (name, rhs) in &rhs_of {
            if shapes.contains(name) && !index.contains(name) && !node_text(src, *rhs).contains("load(") {
                for id in ids(src, *rhs) {
                    changed |= shapes.insert(id.to_string());
                }
            }
        }
    }
    p.shapes = shapes;
    p
}

/// The name an address is built on: `X` in `X + offs`, `(X + o)[:, None]`, `X.to(...)`,
/// `tl.make_block_ptr(base=X, ...)`, `tl.advance(bp, ...)`, `tl.make_tensor_descriptor(X, ...)`.
fn leftmost<'a>(src: &'a str, n: Node) -> Option<&'a str> {
    match n.kind() {
        "identifier" => Some(node_text(src, n)),
        "binary_operator" => leftmost(src, n.child_by_field_name("left")?),
        "parenthesized_expression" => leftmost(src, named_children(n).next()?),
        "subscript" => leftmost(src, n.child_by_field_name("value")?),
        "call" => {
            let f = n.child_by_field_name("function")?;
            let args: Vec<Node> = named_children(n.child_by_field_name("arguments")?).collect();
            let callee = node_text(src, f);
            let last = callee.rsplit('.').next().unwrap_or(callee);
            if matches!(last, "make_block_ptr" | "make_tensor_descriptor" | "_experimental_make_tensor_descriptor" | "advance") {
                let base = keyword(src, &args, "base").or_else(|| args.iter().copied().find(|a| a.kind() != "keyword_argument"))?;
                leftmost(src, base)
            } else if last == "to" && f.kind() == "attribute" {
                leftmost(src, f.child_by_field_name("object")?)
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_2d_tile_kernel_pairs_dims_and_axes() {
        let src = "def k(A, C, M, N, K, s, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):\n    pid_m = tl.program_id(0)\n    pid_n = tl.program_id(axis=1)\n    rm = pid_m * BM + tl.arange(0, BM)\n    rn = pid_n * BN + tl.arange(0, BN)\n    rk = tl.arange(0, BK)\n    for k0 in range(0, K, BK):\n        a = tl.load(A + rm[:, None] * s + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K))\n    tl.store(C + rm[:, None] * s + rn[None, :], a, mask=rn[None, :] < N)\n";
        let p = read(src, &names(&["BM", "BN", "BK"]));
        assert_eq!(p.by_dim["M"], ["BM".to_string()].into());
        assert_eq!(p.by_dim["N"], ["BN".to_string()].into());
        assert!(!p.by_dim.contains_key("K"), "rk is not laid along an axis: {p:?}");
        assert_eq!(p.by_axis[&0], ["BM".to_string()].into());
        assert_eq!(p.by_axis[&1], ["BN".to_string()].into());
        assert!(p.pointers.contains("A") && p.pointers.contains("C"));
        assert!(p.shapes.contains("M") && p.shapes.contains("N") && p.shapes.contains("K"));
        assert!(!p.shapes.contains("s"));
    }

    #[test]
    fn floats_and_pointers_are_not_shapes() {
        let src = "def k(output, input, stride, n_cols, eps, BLOCK: tl.constexpr):\n    row = tl.program_id(0)\n    cols = tl.arange(0, BLOCK)\n    x = tl.load(input + row * stride + cols, mask=cols < n_cols)\n    y = x / tl.sqrt(tl.sum(x * x) + eps)\n    y = tl.where(y > 0, y, 0.0)\n    tl.store(output + row * stride + cols, y, mask=cols < n_cols)\n";
        let p = read(src, &names(&["BLOCK"]));
        assert!(p.shapes.contains("n_cols"));
        assert!(!p.shapes.contains("eps"), "{:?}", p.shapes);
        assert!(p.pointers.contains("output") && p.pointers.contains("input"));
    }

    #[test]
    fn a_probability_compared_with_random_numbers_is_not_a_shape() {
        let src = "def k(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):\n    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n\n    x = tl.load(x_ptr + offsets, mask=mask)\n    r = tl.rand(seed, offsets)\n    keep = r > p\n    tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=mask)\n";
        let p = read(src, &names(&["BLOCK"]));
        assert!(p.shapes.contains("n") && !p.shapes.contains("p"), "{:?}", p.shapes);
    }

    /// The kernel's parameters a call updates (locals on the way there are in the set too).
    fn updated(src: &str) -> Vec<String> {
        let params = &src[src.find('(').unwrap() + 1..src.find(')').unwrap()];
        let params: Vec<&str> = params.split(',').map(|p| p.split(':').next().unwrap().trim()).collect();
        read(src, &names(&["BLOCK"])).updated().into_iter().filter(|n| params.contains(&n.as_str())).collect()
    }

    #[test]
    fn an_argument_loaded_and_stored_is_updated_and_an_output_is_not() {
        let axpy = "def k(y_ptr, x_ptr, a, n, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    y = tl.load(y_ptr + offs, mask=offs < n)\n    x = tl.load(x_ptr + offs, mask=offs < n)\n    tl.store(y_ptr + offs, y + a * x, mask=offs < n)\n";
        assert_eq!(updated(axpy), names(&["y_ptr"]));
        let add = "def k(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))\n";
        assert_eq!(updated(add), Vec::<String>::new());
    }

    #[test]
    fn an_atomic_target_is_updated_through_locals_and_rebinding() {
        let sum = "def k(X, Out, stride, n, BLOCK: tl.constexpr):\n    row = tl.program_id(0)\n    X += row * stride\n    cols = tl.arange(0, BLOCK)\n    x = tl.load(X + cols, mask=cols < n, other=0.0)\n    dst = Out + row\n    tl.atomic_add(dst, tl.sum(x, axis=0))\n";
        assert_eq!(updated(sum), names(&["Out"]));
    }

    #[test]
    fn block_pointers_and_descriptors_lead_back_to_their_base() {
        let bp = "def k(A, n, BLOCK: tl.constexpr):\n    p = tl.make_block_ptr(base=A, shape=(n,), strides=(1,), offsets=(0,), block_shape=(BLOCK,), order=(0,))\n    v = tl.load(p)\n    tl.store(tl.advance(p, (0,)), v * 2)\n";
        assert_eq!(updated(bp), names(&["A"]));
        let desc = "def k(A, B, n, BLOCK: tl.constexpr):\n    a = tl.make_tensor_descriptor(A, shape=[n], strides=[1], block_shape=[BLOCK])\n    b = tl.make_tensor_descriptor(B, shape=[n], strides=[1], block_shape=[BLOCK])\n    b.store([0], a.load([0]))\n";
        let p = read(desc, &names(&["BLOCK"]));
        assert_eq!((p.written.contains("B"), p.read.contains("A"), p.updated().is_empty()), (true, true, true), "{p:?}");
    }
}
