; Every call. The model dispatches on the callee's shape:
; `k[grid](...)` launches, `triton.Config(...)`, `triton.autotune(...)(k)`, `tuner(k)`,
; and the mutations (`configs.append(...)`) that make a config list not statically known.
(call
  function: (_) @call.function) @call
