"""The interpreter computes what the device computes: TF32 dots, and a grid's programs run concurrently.

`child/interpreter.py` makes the Triton interpreter round fp32 `tl.dot` operands to TF32 where a GPU
would (Triton's default input precision), and keeps each program's plain stores from the other
programs of its launch until the launch ends or the program performs an atomic. The kernels run in
a subprocess of their own (`install` changes Triton and torch for the whole process, as in a
worker), all in one, and report what they computed; each test reads its part.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import HARNESS

KERNELS = r"""
import json

import numpy as np
import torch
import triton
import triton.language as tl

from xeforge_harness.child import interpreter

interpreter.install()
torch.manual_seed(0)
out = {}


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr, PRECISION: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    if PRECISION == "default":
        c = tl.dot(a, b)
    else:
        c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + r[:, None] * N + r[None, :], c)


N = 64
a, b = torch.randn(N, N), torch.randn(N, N)
exact = (a.double() @ b.double()).numpy()
tf32 = (torch.from_numpy(interpreter.tf32_round(a.numpy())).double() @ torch.from_numpy(interpreter.tf32_round(b.numpy())).double()).numpy()
for precision in ("default", "tf32", "ieee", "tf32x3"):
    c = torch.empty(N, N)
    dot_kernel[(1,)](a, b, c, N=N, PRECISION=precision)
    c = c.double().numpy()
    scale = np.abs(exact).max()
    out[f"dot_{precision}"] = {
        "err_exact": float(np.abs(c - exact).max() / scale),
        "err_tf32": float(np.abs(c - tf32).max() / scale),
    }
# fp16 inputs: the dot is not touched
h_a, h_b = a.half(), b.half()
c = torch.empty(N, N)
dot_kernel[(1,)](h_a, h_b, c, N=N, PRECISION="default")
ref = (h_a.double() @ h_b.double()).numpy()
out["dot_fp16_err"] = float(np.abs(c.double().numpy() - ref).max() / np.abs(ref).max())


@triton.jit
def racy_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    running = tl.load(out_ptr)
    tl.store(out_ptr, running + tl.sum(x, axis=0))


@triton.jit
def atomic_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


x = torch.rand(5003) + 0.5  # every block's sum is far from 0
blocks = [float(x[i : i + 1024].double().sum()) for i in range(0, 5003, 1024)]
for name, kernel in (("racy", racy_sum), ("atomic", atomic_sum)):
    total = torch.zeros(1)
    kernel[(triton.cdiv(5003, 1024),)](x, total, 5003, BLOCK=1024)
    out[f"sum_{name}"] = float(total[0])
out["sum_exact"] = sum(blocks)
out["sum_last_block"] = blocks[-1]


@triton.jit
def locked_accumulate(x_ptr, partial_ptr, lock_ptr, count_ptr, N, GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    # Triton's layer-norm backward tutorial: each row adds itself into its group's partial sum under
    # the group's spin lock; the partial buffer is uninitialised, so the group's first writer stores.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
    group = row % GROUPS
    lock = lock_ptr + group
    count = count_ptr + group
    partial = partial_ptr + group * N + cols
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(count) == 0:
        tl.atomic_xchg(count, 1)
    else:
        x += tl.load(partial, mask=mask)
    tl.store(partial, x, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


ROWS, COLS, GROUPS = 37, 50, 4
rows = torch.randn(ROWS, COLS)
partial = torch.full((GROUPS, COLS), float("nan"))
lock = torch.zeros(GROUPS, dtype=torch.int32)
count = torch.zeros(GROUPS, dtype=torch.int32)
locked_accumulate[(ROWS,)](rows, partial, lock, count, COLS, GROUPS=GROUPS, BLOCK=64)
expected = torch.stack([rows[g::GROUPS].double().sum(0) for g in range(GROUPS)])
out["lock_err"] = float((partial.double() - expected).abs().max())
out["lock_released"] = lock.tolist()


@triton.jit
def last_program_sums(x_ptr, partial_ptr, counter_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Each program stores its block's sum, then takes a ticket; the last one sums the partials.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))
    ticket = tl.atomic_add(counter_ptr, 1)
    if ticket == tl.num_programs(0) - 1:
        r = tl.arange(0, 8)
        tl.store(out_ptr, tl.sum(tl.load(partial_ptr + r, mask=r < tl.num_programs(0), other=0.0), axis=0))


x = torch.rand(5003) + 0.5
total = torch.zeros(1)
last_program_sums[(5,)](x, torch.full((5,), float("nan")), torch.zeros(1, dtype=torch.int32), total, 5003, BLOCK=1024)
out["last_program_sum"] = float(total[0])
out["last_program_exact"] = float(x.double().sum())


@triton.jit
def store_then_load(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    # Each program writes twice its block's even elements into y, then reads its whole block of y back:
    # its own stores where it stored, memory where it did not (the odd elements, and past n `other`).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside)
    tl.store(y_ptr + offs, 2 * x, mask=inside & (offs % 2 == 0))
    tl.store(y_ptr + offs, 3 * x, mask=inside & (offs % 4 == 0))  # a later store over an earlier one
    back = tl.load(y_ptr + offs, mask=inside, other=-7.0)
    tl.store(z_ptr + offs, back + 1, mask=inside)


n = 1000
x = torch.randn(n)
y = torch.full((n,), -1.0)
z = torch.empty(n)
store_then_load[(triton.cdiv(n, 128),)](x, y, z, n, BLOCK=128)
i = torch.arange(n)
want_y = torch.where(i % 4 == 0, 3 * x, torch.where(i % 2 == 0, 2 * x, torch.full((n,), -1.0)))
out["own_y_err"] = float((y - want_y).abs().max())
out["own_z_err"] = float((z - (want_y + 1)).abs().max())


@triton.jit
def add_blocks(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


x, y = torch.randn(5003), torch.randn(5003)
o = torch.empty(5003)
add_blocks[(triton.cdiv(5003, 256),)](x, y, o, 5003, BLOCK=256)
out["disjoint_equal"] = bool(torch.equal(o, x + y))

# --- bounds (child/bounds.py): accesses outside every argument of a launch ---
from xeforge_harness.child import guard  # noqa: E402


def oob_during(fn):
    start = len(guard.OOB.seen)
    fn()
    return guard.OOB.seen[start:]


out["oob_masked"] = oob_during(lambda: add_blocks[(triton.cdiv(5003, 256),)](x, y, o, 5003, BLOCK=256))


@triton.jit
def copy_unmasked(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs) * 2)


src_store = torch.randn(4096)  # x has room past the end of the output: only the store runs over
out["oob_store"] = oob_during(lambda: copy_unmasked[(4,)](src_store, torch.zeros(1000), BLOCK=256))
dst_big = torch.zeros(1024)
out["oob_store_past_view"] = oob_during(lambda: copy_unmasked[(4,)](torch.randn(1024), dst_big[:1000], BLOCK=256))
tail = torch.full((1024,), 5.0)
out["oob_read"] = oob_during(lambda: copy_unmasked[(4,)](torch.randn(1000), tail, BLOCK=256))
out["read_past_end_gives_zero"] = bool((tail[1000:] == 0).all())


@triton.jit
def gather_rows(table_ptr, o_ptr, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    base = tl.load(table_ptr + i).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + i * BLOCK + offs, tl.load(base + offs))


rows = [torch.randn(64) for _ in range(3)]
table = torch.tensor([r.data_ptr() for r in rows], dtype=torch.int64)
gathered = torch.empty(3 * 64)
out["oob_pointer_table"] = oob_during(lambda: gather_rows[(3,)](table, gathered, BLOCK=64))
out["pointer_table_equal"] = bool(torch.equal(gathered, torch.cat(rows)))




@triton.jit
def both_write(o_ptr, n, BLOCK: tl.constexpr):
    # Program 0 and program 1 each write every element, with their own id: a write-write race.
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.zeros((BLOCK,), tl.float32) + tl.program_id(0), mask=offs < n)


@triton.jit
def same_value(o_ptr, n, BLOCK: tl.constexpr):
    # Every program writes the same value to element 0 (a benign overlap), and its own block.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.zeros((BLOCK,), tl.float32) + 1.0, mask=offs < n)
    tl.store(o_ptr, 1.0)


start = len(guard.RACES.seen)
both_write[(2,)](torch.empty(64), 64, BLOCK=64)
out["races_both_write"] = guard.RACES.seen[start:]
start = len(guard.RACES.seen)
same_value[(4,)](torch.empty(256), 256, BLOCK=64)
add_blocks[(triton.cdiv(5003, 256),)](x, y, o, 5003, BLOCK=256)
out["races_benign"] = guard.RACES.seen[start:]


@triton.jit
def exchange(o_ptr, lock_ptr):
    # Every program leaves its own id in o[0] by an exchange (the last one wins, on a GPU any one),
    # and releases a lock with the value every program writes (0: not a race).
    tl.atomic_xchg(o_ptr, tl.program_id(0))
    tl.atomic_xchg(lock_ptr, 0)


start = len(guard.RACES.seen)
exchange[(3,)](torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32))
out["races_exchange"] = guard.RACES.seen[start:]

# --- bf16 arithmetic: on the values, not the interpreter's uint16 bits ---
@triton.jit
def bf16_ops(x_ptr, y_ptr, add_ptr, red_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o)
    y = tl.load(y_ptr + o)
    tl.store(add_ptr + o, x * y + x - (-y))
    tl.store(red_ptr + 0, tl.sum(x, axis=0))
    tl.store(red_ptr + 1, tl.max(x, axis=0))
    tl.store(red_ptr + 2, tl.min(x, axis=0))
    tl.store(red_ptr + 3, tl.argmax(x, axis=0).to(tl.bfloat16))
    tl.store(red_ptr + 4, tl.sum(tl.where(x > y, 1.0, 0.0).to(tl.bfloat16), axis=0))


bx, by = torch.randn(256, dtype=torch.bfloat16), torch.randn(256, dtype=torch.bfloat16)
badd, bred = torch.empty_like(bx), torch.empty(5, dtype=torch.bfloat16)
bf16_ops[(1,)](bx, by, badd, bred, BLOCK=256)
want = bx.float() * by.float() + bx.float() + by.float()
out["bf16_elementwise_err"] = float((badd.float() - want).abs().max() / want.abs().max())
out["bf16_sum"] = [float(bred[0]), float(bx.float().sum())]
out["bf16_max_min"] = [float(bred[1]), float(bx.max()), float(bred[2]), float(bx.min())]
out["bf16_argmax_count"] = [float(bred[3]), int(bx.float().argmax()), float(bred[4]), int((bx > by).sum())]
ba, bb = a.bfloat16(), b.bfloat16()
c = torch.empty(N, N)
dot_kernel[(1,)](ba, bb, c, N=N, PRECISION="default")
want = ba.double() @ bb.double()
out["bf16_dot_err"] = float((c.double() - want).abs().max() / want.abs().max())



@triton.jit
def chained_totals(x_ptr, scratch_ptr, flag_ptr, n, HOW: tl.constexpr, BLOCK: tl.constexpr):
    # Program i adds its block to program i-1's running total, then releases it (an atomic).
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    if HOW == "acquire":
        tl.atomic_add(flag_ptr + pid - 1, 0, mask=pid > 0)  # reads i-1's flag: an acquire
    if HOW == "volatile":
        prev = tl.load(scratch_ptr + pid - 1, mask=pid > 0, other=0.0, volatile=True)
    else:
        prev = tl.load(scratch_ptr + pid - 1, mask=pid > 0, other=0.0)
    tl.store(scratch_ptr + pid, prev + part)
    tl.atomic_xchg(flag_ptr + pid, 1)


x = torch.rand(4 * 256) + 0.5
for how in ("plain", "acquire", "volatile"):
    scratch, flags = torch.zeros(4), torch.zeros(4, dtype=torch.int32)
    chained_totals[(4,)](x, scratch, flags, x.numel(), HOW=how, BLOCK=256)
    out[f"chain_{how}"] = scratch.tolist()
out["chain_blocks"] = [float(x[i : i + 256].double().sum()) for i in range(0, 1024, 256)]

print("RESULT " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def computed(tmp_path_factory) -> dict:
    script = tmp_path_factory.mktemp("device_model") / "kernels.py"  # Triton reads a kernel's source from its file
    script.write_text(KERNELS)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([str(HARNESS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


# --- TF32 -----------------------------------------------------------------------------------------


def test_tf32_rounds_to_nearest_with_ties_away_from_zero_and_keeps_inf_and_nan():
    from xeforge_harness.child.interpreter import tf32_round

    one = np.float32(1.0)
    ulp = np.float32(2.0**-10)  # TF32's unit in the last place at 1
    x = np.array(
        [1 + 2.0**-11, -(1 + 2.0**-11), 1 + 3 * 2.0**-12, 1 + 2.0**-12, 1.0 + 2.0**-10, np.pi, np.inf, -np.inf, np.nan, 3.4028235e38, 0.0],
        dtype=np.float32,
    )
    r = tf32_round(x)
    assert r.dtype == np.float32 and r.shape == x.shape
    assert r[0] == one + ulp and r[1] == -(one + ulp)  # a tie: away from zero (nearest-even would give 1)
    assert r[2] == one + ulp and r[3] == one  # nearest
    assert r[4] == one + ulp  # a TF32 value stays
    assert r[5] == np.float32(3.140625)  # 0x40490FDB -> 0x40490000
    assert np.isposinf(r[6]) and np.isneginf(r[7]) and np.isnan(r[8])
    assert np.isposinf(r[9])  # past TF32's largest finite value
    assert r[10] == 0
    assert (r.view(np.uint32) & 0x1FFF)[np.isfinite(r)].max() == 0


def test_the_dot_precision_is_read_from_triton_s_enum_or_a_string():
    from triton._C.libtriton import ir
    from xeforge_harness.child.interpreter import dot_precision_is_tf32

    assert dot_precision_is_tf32(ir.INPUT_PRECISION.TF32)
    assert not dot_precision_is_tf32(ir.INPUT_PRECISION.IEEE)
    assert not dot_precision_is_tf32(ir.INPUT_PRECISION.TF32x3)
    assert dot_precision_is_tf32("tf32") and dot_precision_is_tf32("TF32")
    assert not dot_precision_is_tf32("ieee") and not dot_precision_is_tf32("tf32x3")
    assert dot_precision_is_tf32(None) and not dot_precision_is_tf32(None, default="ieee")


def test_an_fp32_dot_at_the_default_precision_is_tf32_and_ieee_is_fp32(computed):
    default, explicit, ieee, x3 = (computed[f"dot_{p}"] for p in ("default", "tf32", "ieee", "tf32x3"))
    assert ieee["err_exact"] < 1e-5 and x3["err_exact"] < 1e-5
    # TF32 inputs: about 2**-11 relative error per operand, far outside fp32's
    assert 1e-4 < default["err_exact"] < 1e-2, default
    assert default["err_tf32"] < 1e-5 and explicit == default
    assert computed["dot_fp16_err"] < 1e-5


# --- a grid's programs run concurrently ------------------------------------------------------------


def test_a_racy_load_add_store_loses_the_other_programs_updates(computed):
    assert computed["sum_racy"] == pytest.approx(computed["sum_last_block"], rel=1e-5)
    assert abs(computed["sum_racy"] - computed["sum_exact"]) > 1.0


def test_the_same_sum_with_atomic_add_is_exact(computed):
    assert computed["sum_atomic"] == pytest.approx(computed["sum_exact"], rel=1e-5)


def test_a_spin_lock_around_plain_loads_and_stores_accumulates_exactly(computed):
    assert computed["lock_err"] < 1e-4
    assert computed["lock_released"] == [0, 0, 0, 0]


def test_the_last_program_by_an_atomic_ticket_reads_every_other_program_s_partial(computed):
    assert computed["last_program_sum"] == pytest.approx(computed["last_program_exact"], rel=1e-5)


def test_a_program_sees_its_own_stores_in_its_later_loads(computed):
    assert computed["own_y_err"] == 0 and computed["own_z_err"] == 0


def test_programs_writing_disjoint_blocks_are_unchanged(computed):
    assert computed["disjoint_equal"] is True


# --- bounds ---------------------------------------------------------------------------------------


def test_a_launch_whose_accesses_are_masked_to_its_tensors_is_not_noted(computed):
    assert computed["oob_masked"] == []


def test_a_store_past_the_end_of_a_view_is_noted_and_not_made(computed):
    # The output is a view of 1000 elements of a 1024-element storage: the bound is the storage.
    assert computed["oob_store_past_view"] == []
    noted = computed["oob_store"]
    assert len(noted) == 1 and noted[0].startswith("writes 1 element(s) past the end of `o_ptr` (a (1000,) float32 tensor)"), noted
    assert "in `copy_unmasked`" in noted[0] and "(24 access(es)" in noted[0], noted


def test_a_load_past_the_end_is_noted_and_reads_nothing(computed):
    noted = computed["oob_read"]
    assert len(noted) == 1 and noted[0].startswith("reads 1 element(s) past the end of `x_ptr`"), noted
    assert computed["read_past_end_gives_zero"]  # the masked-off value, not what lies there


def test_a_launch_that_makes_pointers_from_integers_is_not_bounded(computed):
    # A grouped GEMM's table of data_ptr()s reaches tensors the launch was not given, legitimately.
    assert computed["oob_pointer_table"] == []
    assert computed["pointer_table_equal"]


# --- bf16 -----------------------------------------------------------------------------------------


def test_bf16_arithmetic_is_done_on_values_not_bits(computed):
    # The interpreter alone adds bf16 bit patterns (NaN or 1e38 for values near 1).
    assert computed["bf16_elementwise_err"] < 1e-2
    got, want = computed["bf16_sum"]
    assert abs(got - want) <= 0.02 * max(1.0, abs(want))


def test_a_bf16_dot_multiplies_values(computed):
    assert computed["bf16_dot_err"] < 1e-5  # products of bf16 values are exact in fp32


def test_bf16_reductions_and_casts_from_integers_are_exact(computed):
    mx, want_mx, mn, want_mn = computed["bf16_max_min"]
    assert (mx, mn) == (want_mx, want_mn)
    arg, want_arg, count, want_count = computed["bf16_argmax_count"]
    assert (arg, count) == (want_arg, want_count)


# --- races ----------------------------------------------------------------------------------------


def test_two_programs_writing_one_element_different_values_is_a_race(computed):
    noted = computed["races_both_write"]
    assert len(noted) == 1 and noted[0].startswith("has 64 element(s) that two programs of one launch of `both_write`"), noted


def test_programs_writing_the_same_value_or_their_own_blocks_do_not_race(computed):
    assert computed["races_benign"] == []


# --- acquire --------------------------------------------------------------------------------------


def test_a_plain_load_of_another_program_s_release_without_an_acquire_reads_the_old_value(computed):
    # Each program sees 0 for its predecessor's total: its own block only.
    assert computed["chain_plain"] == pytest.approx(computed["chain_blocks"], rel=1e-5)


def test_an_atomic_after_the_release_acquires_it_and_a_volatile_load_reads_memory(computed):
    running = np.cumsum(computed["chain_blocks"]).tolist()
    assert computed["chain_acquire"] == pytest.approx(running, rel=1e-5)
    assert computed["chain_volatile"] == pytest.approx(running, rel=1e-5)


def test_programs_exchanging_one_element_with_different_values_race_and_a_lock_s_release_does_not(computed):
    noted = computed["races_exchange"]
    assert len(noted) == 1 and noted[0].startswith("has 1 element(s) that two programs of one launch of `exchange` set by an atomic"), noted
