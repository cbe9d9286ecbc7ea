; Assignments anywhere: module constants, kernel aliases (`k = triton.autotune(...)(kernel)`),
; tuner objects (`tuner = triton.autotune(...)`) and local values a launch reads.
(assignment
  left: (_) @assignment.left
  right: (_) @assignment.right) @assignment

; In-place updates (`configs += [...]`, `x[i] = ...` is an assignment with a subscript target):
; a name updated this way has no single static value.
(augmented_assignment
  left: (identifier) @mutation)

; `global X` in a function: X is rebound at run time, so its module-level value is not static.
(global_statement
  (identifier) @mutation)
