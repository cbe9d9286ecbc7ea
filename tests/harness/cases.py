"""The verdict matrix, shared by the pytest suite and the pytest-free GPU driver (no pytest import)."""

# (candidate relative to tests/harness, problem, expected verdict, words the message must contain)
VERDICT_CASES = [
    ("fixtures/add_correct.py", "vector_add", "correct", "correct"),
    ("fixtures/add_off_by_one.py", "vector_add", "incorrect", "outside rtol"),
    ("fixtures/add_zeros.py", "vector_add", "incorrect", "elements outside"),
    ("fixtures/add_in_place.py", "vector_add", "incorrect", "shares its memory"),
    ("fixtures/add_cached.py", "vector_add", "rejected", "launched no Triton kernel"),
    ("fixtures/add_torch.py", "vector_add", "rejected", "aten.add"),
    ("fixtures/conv2d_reflection.py", "conv2d", "rejected", "reaches into the interpreter's internals"),
    ("fixtures/add_patches_torch.py", "vector_add", "rejected", "rebound functions the checks rely on: torch.allclose"),
    # The message names where the candidate was when it was stopped (its stacks are in the log).
    ("fixtures/add_hang.py", "vector_add", "timeout", "(while in candidate:forward; it was at add_hang.py:"),
    ("fixtures/add_segfault.py", "vector_add", "crashed", "SIGSEGV"),
    ("fixtures/add_syntax_error.py", "vector_add", "compile_error", "syntax error at line 7"),
    ("fixtures/add_raises.py", "vector_add", "runtime_error", "deliberate failure"),
    ("problems/softmax.py", "softmax", "correct", "correct"),
    ("problems/matmul.py", "matmul", "correct", "correct"),
    # An autotune search times every config on the caller's tensors: in-place updates need restore_value.
    ("problems/axpy_inplace.py", "axpy_inplace", "correct", "correct"),
    ("fixtures/axpy_autotune_no_restore.py", "axpy_inplace", "incorrect", "changed `y_ptr` in place"),
    ("fixtures/axpy_autotune_restore.py", "axpy_inplace", "correct", "correct"),
    ("fixtures/sum_autotune_no_reset.py", "sum_atomic", "incorrect", "restore_value=['out_ptr']"),
    ("fixtures/sum_autotune_reset.py", "sum_atomic", "correct", "correct"),
    # A kernel launched by an autograd.Function's backward: `backward: true` compares the gradients.
    ("problems/scale_grad.py", "scale_grad", "correct", "correct"),
    ("fixtures/scale_grad_wrong_backward.py", "scale_grad", "incorrect", "(the gradient of `x`)"),
    ("fixtures/scale_grad_torch_backward.py", "scale_grad", "rejected", "aten.einsum"),
    ("fixtures/scale_grad_autotuned.py", "scale_grad", "correct", "correct"),
]


def hang_timeout(on_gpu: bool) -> float:
    # long enough for the reference to compile and run first; the candidate then never returns
    return 30.0 if on_gpu else 8.0
