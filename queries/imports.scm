; Imports anywhere in the file (function-local imports bind names too, see corpus edge case 7).
(import_statement) @import
(import_from_statement) @import
