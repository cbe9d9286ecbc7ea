use super::parse;
use crate::syntax::{self, flat::FlatTree};

/// The direct parse, where it answers, is tree-sitter's tree; returns whether it answered.
#[track_caller]
fn agrees(text: &str) -> bool {
    let Some(direct) = parse(text) else { return false };
    let ts = FlatTree::new(&syntax::parse(text));
    if let Some(d) = ts.first_difference(&direct) {
        panic!(
            "direct parse differs from tree-sitter ({d}; left: tree-sitter) on:\n{text}\n--- tree-sitter:\n{}--- direct:\n{}",
            ts.describe(text),
            direct.describe(text)
        );
    }
    true
}

fn fixtures() -> Vec<(std::path::PathBuf, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "py")
                && let Ok(t) = std::fs::read_to_string(&p)
            {
                out.push((p, t));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_fixture_is_parsed_as_tree_sitter_parses_it() {
    let files = fixtures();
    let direct = files.iter().filter(|(_, t)| agrees(t)).count();
    // Most fixtures are plain Triton code; the parser must take nearly all of them.
    assert!(direct * 10 >= files.len() * 9, "only {direct} of {} fixtures parsed directly", files.len());
}

#[test]
fn edited_fixtures_agree_or_fall_back() {
    // Edits that break the syntax, move indentation or insert comments and continuations at
    // spread positions: the parser either agrees with tree-sitter or declines.
    for (_, text) in fixtures() {
        // The same file with CRLF line ends.
        agrees(&text.replace('\n', "\r\n"));
        for i in 1..12 {
            let Some(cut) = (text.len() * i / 12..text.len()).find(|c| text.is_char_boundary(*c)) else { continue };
            for edit in ["x", "(", "\n", "  # note\n", " \\\n", ":", "'", "\n    y = 1\n", "\n# c\n", ",", " if a else b", "**"] {
                let mut t = text.clone();
                t.insert_str(cut, edit);
                agrees(&t);
            }
        }
    }
}

#[test]
fn shapes_tree_sitter_gives() {
    let cases = [
        "",
        "        \n",
        "\n\n",
        "\n\n# only a comment\n",
        "x = 1",
        "x = 1\n",
        "@triton.jit  # c0\ndef f(x):  # c1\n    # c2\n    y = x  # c3\n    # c4\n# c5\n    # c6\nz = 1\n",
        "def f(x: int, y: Optional[int] = None, *args, z: int | None = 3, **kw) -> torch.Tensor: pass\n",
        "def f(a, /, b, *, c): pass\n",
        "x: tl.constexpr = 3\n",
        "try:\n    pass\nexcept ValueError as e:\n    pass\nexcept (A, B):\n    pass\nexcept:\n    pass\nelse:\n    pass\nfinally:\n    pass\n",
        "with open(f) as fh, g():\n    pass\n",
        "with (open(f) as fh, g()):\n    pass\n",
        "a not in b is not c < d\n",
        "print(x, end='')\n",
        "lambda x, y=1, *a, **k: x + y\n",
        "a[1:2, :, None, ::2]\n",
        "(a)\n(a,)\n()\n(*a, b)\n",
        "[x for x in y if x for z in w]\n{k: v for k, v in d.items()}\n{a, b}\n{}\n{**a, 'b': 1}\n",
        "f(*a, **k, x=1)\nf(x for x in y)\n",
        "a, b = c, d\na, = b\na = b = c\nx += 1\nf(a), g(b)\nx = a,\nb = 1\n",
        "def g():\n    return a, b\n",
        "del a, b\nassert a, 'msg'\nglobal a, b\n",
        "import a.b as c, d\nfrom . import x\nfrom ..a.b import (c, d as e,)\nfrom a import *\nfrom __future__ import annotations\n",
        "class A(B, metaclass=M):\n    x = 1\n",
        "for i, (a, b) in enumerate(z):\n    pass\nelse:\n    pass\n",
        "while True:\n    break\nif a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n",
        "-x ** 2\nnot a and b or c\na if b else c\n(x := 5)\n...\n",
        "f\"a{b!r:>10}c{{d}}\" 'e' b'\\x00\\q' r'\\n'\nf\"{x=}\"\n\"\"\"doc\nstring\"\"\"\n",
        "a.b.c(d)[e].f\n1 + 2 * 3 - 4 // 5 % 6 @ 7 | 8 & 9 ^ 10 << 11 >> 12\n",
        "1j + 1.5j + 0x1F + 1_000 + 1. + .5 + 1e-5\n",
        "x = [\n    1,  # one\n    2,\n]\n",
        "if x:\n    a = 1\n\n    # trailing\nelse:\n    pass\n",
        "def f():\n    if a:\n        b\n      # between\n    c\n",
        "x = 1 + \\\n    2\n",
        "def f():\n\tx = 1\n\tif x:\n\t\treturn x\n",
        "import a\r\n\r\ndef f(x):  # c\r\n    \"\"\"doc\r\n    more\"\"\"\r\n    y = x + \\\r\n        1\r\n    # trailing\r\n    return y\r\n",
        "x = [\r\n    1,  # one\r\n\r\n    'a\\\r\nb',\r\n]\r\n# end\r\n",
    ];
    for c in cases {
        assert!(agrees(c), "fell back at {:?} on:\n{c}", super::LAST_UNSURE.with(|l| l.get()));
    }
}

#[test]
fn unions_of_generic_types_and_relative_imports_of_three_dots() {
    for c in [
        "def f(a: tuple[int] | None = None, b: List[int] | None, c: Dict[str, int] = 1): pass\n",
        "x: Optional[tuple[int, int]] | None | int = None\n",
        "x: A[int] | B[int] | None = None\ny: A[int] | None | B[int] = None\nz: A[int] | b.c = 1\n",
        "def g() -> tuple[int, int] | Dict[str, int] | None: pass\n",
        "from ...a.b import c\nfrom .... import d\nfrom . import e\n",
        "x = [1, *[a, b], *(c, d)]\n",
    ] {
        assert!(agrees(c), "fell back at {:?} on:\n{c}", super::LAST_UNSURE.with(|l| l.get()));
    }
}

#[test]
fn what_tree_sitter_reads_as_errors_is_left_to_it() {
    // tree-sitter reads these as errors; the direct parse must not answer.
    for c in [
        "y = a, *[c for c in d]\n",
        "y = a, *[c, d]\n",
        "r = *[c], 1\n",
        "if a:\n    @dec\n# c\n    def f(): pass\n",
        "if a:\n    @dec\n  # c\n    def f(): pass\n",
        "a, b,\nc = 1\n",
        "a,\nc = 1\n",
    ] {
        assert!(!agrees(c), "answered:\n{c}");
    }
}

#[test]
fn operator_table_matches_its_list() {
    use super::ids::{OPS, op_at};
    for (i, op) in OPS.iter().enumerate().take(48) {
        assert_eq!(op_at(op.as_bytes()), Some((i, op.len())), "{op}");
        assert_eq!(op_at(format!("{op} x").as_bytes()), Some((i, op.len())), "{op}");
    }
    assert_eq!(op_at(b"$"), None);
    for (i, w) in super::ids::KEYWORDS.iter().enumerate() {
        assert_eq!(super::ids::keyword_index(w.as_bytes()), Some(i), "{w}");
    }
    assert_eq!(super::ids::keyword_index(b"iff"), None);
}

#[test]
fn deep_nesting_is_declined_not_a_stack_overflow() {
    // Run on a thread with a small stack, as a worker thread might have.
    let t = std::thread::Builder::new().stack_size(1 << 20);
    t.spawn(|| {
        for (open, close) in [("(", ")"), ("[", "]"), ("{", "}"), ("-", ""), ("not ", ""), ("f(", ")"), ("lambda: ", "")] {
            let text = format!("x = {}1{}\n", open.repeat(5000), close.repeat(5000));
            assert!(parse(&text).is_none(), "{open}");
        }
        let mut nested = String::new();
        for d in 0..400 {
            nested += &format!("{}if x:\n", "    ".repeat(d));
        }
        nested += &format!("{}pass\n", "    ".repeat(400));
        assert!(parse(&nested).is_none());
        let fstrings = format!("x = {}1{}\n", "f'{".repeat(3000), "}'".repeat(3000));
        assert!(parse(&fstrings).is_none());
        // Ordinary depth is still parsed.
        assert!(agrees(&format!("x = {}1{}\n", "(".repeat(40), ")".repeat(40))));
    })
    .unwrap()
    .join()
    .unwrap();
}

#[test]
fn line_shuffles_of_fixtures_agree_or_fall_back() {
    // Lines dropped, repeated, swapped and re-indented at pseudo-random places (a fixed seed): the
    // parser agrees with tree-sitter on whatever text results, or declines it.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };
    let mut answered = 0;
    for (_, text) in fixtures() {
        let lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
        if lines.is_empty() {
            continue;
        }
        let rounds = std::env::var("XF_SHUFFLES").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
        for _ in 0..rounds {
            let mut l = lines.clone();
            let last = l.len() - 1;
            let (a, b) = (next(l.len()).min(last), next(l.len()).min(last));
            match next(5) {
                0 => drop(l.remove(a)),
                1 => l.insert(a, lines[b].clone()),
                2 => l.swap(a, b),
                3 => l[a] = "        \n".to_string(),
                _ => l[a] = format!("    {}", l[a]),
            }
            answered += usize::from(agrees(&l.concat()));
        }
        assert!(parse("x = 1\0\n").is_none());
    }
    assert!(answered > 100, "only {answered} variants answered");
}
