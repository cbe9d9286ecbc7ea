; Reflection that can hide what a module really calls (rule XF901).
; `getattr` is kept only when its name argument is computed; that check is done in Rust.
((call
   function: (identifier) @obfuscation.func) @obfuscation.call
  (#any-of? @obfuscation.func "__import__" "eval" "exec" "getattr"))
((call
   function: (attribute
     object: (identifier) @obfuscation.func)) @obfuscation.call
  (#eq? @obfuscation.func "importlib"))
((import_statement
   name: (dotted_name . (identifier) @obfuscation.func)) @obfuscation.call
  (#eq? @obfuscation.func "importlib"))
((import_from_statement
   module_name: (dotted_name . (identifier) @obfuscation.func)) @obfuscation.call
  (#eq? @obfuscation.func "importlib"))
