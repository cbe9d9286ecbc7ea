; Decorated function definitions: candidate Triton kernels. Which decorator makes a function a
; Triton kernel depends on the file's imports (`@jit` only when bound by `from triton import jit`),
; so the decorator list is judged in Rust (model/kernel.rs).
(decorated_definition
  definition: (function_definition)) @kernel.decorated
