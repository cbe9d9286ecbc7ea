"""AI Bench specs: what loads, and how a bad spec is named."""

import pytest
from conftest import FIXTURES, PROBLEMS
from xeforge_harness.spec import SpecError, eval_formula, find_spec_for, load_spec, parse_spec_text


def test_every_example_problem_has_a_loadable_spec():
    for kernel in sorted(PROBLEMS.glob("*.py")):
        if kernel.stem.endswith("_reference"):
            continue
        spec_path = find_spec_for(str(kernel))
        assert spec_path is not None, kernel.name
        spec = load_spec(spec_path)
        assert spec.resolve_family(None) == "ci"
        assert spec.variants("ci")


def test_dims_list_expands_into_one_variant_each():
    spec = load_spec(str(PROBLEMS / "softmax.yaml"))
    names = [v.name for v in spec.variants("ci")]
    assert names == ["ci[0]", "ci[1]"]
    assert spec.variants("ci")[1].dims == {"ROWS": 3, "COLS": 64}


def test_inherit_dtype_takes_the_variant_dtype():
    spec = load_spec(str(PROBLEMS / "softmax.yaml"))
    v = spec.variants("ci")[0]
    assert spec.input_dtype(v, "x") == "float32"
    assert spec.input_shape(v, "x") == (8, 100)


def test_inits_resolve_from_the_variant_dims():
    spec = load_spec(str(PROBLEMS / "conv2d.yaml"))
    assert spec.init_args(spec.variants("ci")[0]) == [2, 2, 3]


def test_xe_forge_extensions_named_families_default_variant_and_tolerances():
    spec = parse_spec_text(
        """
inputs: {X: {shape: [N], dtype: float16}}
bench-gpu-old:
  - params: [X]
    dims: {N: 64}
    rtol: 1e-3          # YAML 1.1 reads this as a string; it is still a number
    atol: 0.5
default_variant: bench-gpu-old
"""
    )
    assert spec.resolve_family(None) == "bench-gpu-old"
    v = spec.variants("bench-gpu-old")[0]
    assert (v.rtol, v.atol) == (1e-3, 0.5)


def test_a_float_dim_written_without_a_dot_is_still_a_number():
    spec = parse_spec_text(
        """
inputs: {X: {shape: [N], dtype: float32}, eps: {value: eps}}
ci:
  - params: [X, eps]
    dims: {N: 64, eps: 1e-5}   # YAML 1.1 reads 1e-5 as a string
"""
    )
    assert spec.variants("ci")[0].dims == {"N": 64, "eps": 1e-5}
    with pytest.raises(SpecError, match="expected a number"):
        parse_spec_text("inputs: {X: {shape: [N], dtype: float32}}\nci:\n  - params: [X]\n    dims: {N: big}\n")


def test_a_tuple_of_sizes_is_passed_as_a_tuple_of_ints():
    spec = parse_spec_text(
        """
inputs: {X: {shape: [M, N], dtype: float32}, normalized_shape: {value: [N]}, window: {value: [3, K]}}
ci:
  - params: [X, normalized_shape, window]
    dims: {M: 4, N: 64, K: 5}
"""
    )
    v = spec.variants("ci")[0]
    assert spec.scalar_value(v, "normalized_shape") == (64,)
    assert spec.scalar_value(v, "window") == (3, 5)
    bad = "inputs: {X: {shape: [N]}, s: {value: %s}}\nci:\n  - params: [X, s]\n    dims: {N: 8%s}\n"
    with pytest.raises(SpecError, match=r"inputs.s.value\[0\].*a size or a dimension name"):
        parse_spec_text(bad % ("[-1]", ""))
    with pytest.raises(SpecError, match=r"inputs.s.value\[1\].*names no dimension"):
        parse_spec_text(bad % ("[N, K]", ""))
    with pytest.raises(SpecError, match="a size must be a non-negative integer"):
        parse_spec_text(bad % ("[K]", ", K: 2.5"))


def test_formulas_are_arithmetic_over_dims_only():
    assert eval_formula("2*M*N*K", {"M": 2, "N": 3, "K": 4}) == 48
    assert eval_formula("(M + 1) // 2", {"M": 7}) == 4
    with pytest.raises(ValueError):
        eval_formula("__import__('os').getcwd()", {})
    with pytest.raises(ValueError):
        eval_formula("Q * 2", {"M": 1})


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("inputs: {x: {shape: [N], dtype: float33}}\nci: [{params: [x], dims: {N: 4}}]", "inputs.x.dtype"),
        ("inputs: {x: {shape: [N], dtype: float32}}\nci: [{params: [x], dims: {M: 4}}]", "ci[0].dims"),
        ("inputs: {x: {shape: [N], dtype: float32}}\nci: [{params: [y], dims: {N: 4}}]", "ci[0].params[0]"),
        ("inputs: {x: {shape: [N], dtype: float32}}\nci: [{params: [x], dims: {N: four}}]", "ci[0].dims.N"),
        ("inputs: {x: {shape: [N], dtype: float32}}\nci: [{params: [x], dims: {N: 4}, rtol: loose}]", "ci[0].rtol"),
        ("inputs: {x: {shape: [N], dtype: float32}}\nci: [{params: [x], dims: {N: 4}, flop: 'N*Q'}]", "ci[0].flop"),
        ("inputs: {x: {shape: [N], dtype: inherit}}\nci: [{params: [x], dims: {N: 4}}]", "ci[0].dtype"),
        ("inputs: {x: {shape: [N], dtype: float32}}\nci: [{params: [x], dims: {N: 4}}]\ndefault_variant: bench", "default_variant"),
        ("inputs: {x: {shape: [N], dtype: float32}}\nci: {params: [x]}", "ci"),
        ("inputs: {x: {shape: [N], dtype: float32}}", "<root>"),
        ("inputs: {x: {shape: [N], dtype: float32}}\ninits: [{dim: C}]\nci: [{params: [x], dims: {N: 4}}]", "inits[0].dim"),
        ("inputs: [x, y]\nci: []", "inputs"),
        ("ci: [\n  - oops", "<file>"),
        ("inputs: {x: {shape: [N], dtype: float32}}\nbackward: yes please\nci: [{params: [x], dims: {N: 4}}]", "backward"),
    ],
)
def test_a_bad_spec_names_the_field(text, field):
    with pytest.raises(SpecError) as info:
        parse_spec_text(text, "p.yaml")
    assert info.value.field == field
    assert f"'{field}'" in str(info.value)


def test_invalid_yaml_reports_the_line():
    with pytest.raises(SpecError) as info:
        parse_spec_text("ci:\n  - params: [x\n  - dims: {}\n")
    assert "line" in str(info.value)


def test_asking_for_a_missing_family_names_the_families_there_are():
    spec = load_spec(str(PROBLEMS / "vector_add.yaml"))
    with pytest.raises(SpecError) as info:
        spec.resolve_family("bench-xpu")
    assert info.value.field == "family"
    assert "ci, bench-gpu" in str(info.value)


def test_fixture_specs_are_bad_in_the_way_their_names_say():
    for name, field in (("bad_dtype.yaml", "inputs.x.dtype"), ("bad_dims.yaml", "ci[0].dims")):
        with pytest.raises(SpecError) as info:
            load_spec(str(FIXTURES / name))
        assert info.value.field == field


def test_a_missing_spec_file_is_a_spec_error():
    with pytest.raises(SpecError) as info:
        load_spec(str(FIXTURES / "no_such.yaml"))
    assert info.value.field == "<file>"


def test_the_edge_variant_doubles_every_size_plus_one_and_keeps_equal_sizes_equal():
    spec = parse_spec_text(
        "inputs:\n  a: {shape: [M, K]}\n  b: {shape: [K, N]}\n  c: {shape: [R]}\n"
        "ci:\n  - params: [a, b, c]\n    dims: {M: 64, K: 64, N: 65, R: 8}\n"
    )
    base = spec.variants("ci")[0]
    edge = spec.edge_variant(base)
    assert edge is not None and edge.name == "edges:ci[0]"
    # Equal sizes stay equal, each doubled plus one (64 -> 129; N's 65 -> 131); a size under 16 grows by one.
    assert edge.dims == {"M": 129, "K": 129, "N": 131, "R": 9}
    assert spec.variant_by_name("edges:ci[0]") == edge
    assert spec.input_shape(edge, "a") == (129, 129)


def test_no_edge_variant_where_nothing_moves_or_the_spec_says_edges_false():
    small = parse_spec_text("inputs:\n  x: {shape: [N]}\nci:\n  - params: [x]\n    dims: {N: 1}\n")
    assert small.edge_variant(small.variants("ci")[0]) is None
    off = parse_spec_text("edges: false\ninputs:\n  x: {shape: [N]}\nci:\n  - params: [x]\n    dims: {N: 1000}\n")
    assert off.edge_variant(off.variants("ci")[0]) is None
    with pytest.raises(SpecError, match="edges"):
        parse_spec_text("edges: sometimes\ninputs:\n  x: {shape: [N]}\nci:\n  - params: [x]\n    dims: {N: 1000}\n")


def test_an_edge_size_another_dim_already_has_moves_to_the_next_odd_one():
    spec = parse_spec_text("inputs:\n  x: {shape: [A, B]}\nci:\n  - params: [x]\n    dims: {A: 32, B: 65}\n")
    assert spec.edge_variant(spec.variants("ci")[0]).dims == {"A": 67, "B": 131}


def test_small_sizes_grow_by_one_to_the_next_free_value_and_a_size_of_one_stays():
    # conv2d's ci sizes are all under 16: channels, image, filter (C=OC stay equal; 3 is K's, so 2 -> 4).
    spec = parse_spec_text("inputs:\n  x: {shape: [N, C, H, W]}\nci:\n  - params: [x]\n    dims: {N: 1, C: 2, H: 7, W: 6, OC: 2, K: 3}\n")
    assert spec.edge_variant(spec.variants("ci")[0]).dims == {"N": 1, "C": 4, "H": 8, "W": 9, "OC": 4, "K": 5}


def test_a_salted_edge_variant_grows_further_by_its_salt_and_is_rebuilt_from_its_name():
    spec = parse_spec_text("inputs:\n  x: {shape: [M, N]}\nci:\n  - params: [x]\n    dims: {M: 64, N: 64, K: 3}\n")
    base = spec.variants("ci")[0]
    drawn = [spec.edge_variant(base, salt=s) for s in range(1, 40)]
    for edge in drawn:
        m, n, k = edge.dims["M"], edge.dims["N"], edge.dims["K"]
        assert m == n and m % 2 == 1 and 131 <= m <= 129 + 2 * 16 and 4 <= k < 8, edge.dims
        assert spec.variant_by_name(edge.name) == edge
    assert len({e.dims["M"] for e in drawn}) > 4  # not one size every run
