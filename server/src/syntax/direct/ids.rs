//! The grammar's kind and field ids for what the direct parser builds, read from the compiled
//! tree-sitter-python language once, so a node built here carries the id tree-sitter would give it.

use crate::syntax::language;
use std::collections::HashMap;

macro_rules! table {
    ($name:ident, $lookup:expr, { $($f:ident = $s:literal),* $(,)? }) => {
        #[allow(non_snake_case)]
        pub struct $name { $(pub $f: u16),* }
        impl $name {
            fn load(l: &tree_sitter::Language) -> Option<Self> {
                let look = $lookup;
                Some(Self { $($f: look(l, $s)?),* })
            }
        }
    };
}

fn named(l: &tree_sitter::Language, s: &str) -> Option<u16> {
    Some(l.id_for_node_kind(s, true)).filter(|&k| k != 0)
}

fn field(l: &tree_sitter::Language, s: &str) -> Option<u16> {
    l.field_id_for_name(s).map(|f| f.get())
}

table!(Kinds, named, {
    module = "module", identifier = "identifier", integer = "integer", float = "float", string = "string",
    string_start = "string_start", string_content = "string_content", string_end = "string_end",
    escape_sequence = "escape_sequence", escape_interpolation = "escape_interpolation", interpolation = "interpolation",
    type_conversion = "type_conversion", format_specifier = "format_specifier", concatenated_string = "concatenated_string",
    true_ = "true", false_ = "false", none = "none", ellipsis = "ellipsis", comment = "comment",
    line_continuation = "line_continuation", expression_statement = "expression_statement", assignment = "assignment",
    augmented_assignment = "augmented_assignment", attribute = "attribute", call = "call", argument_list = "argument_list",
    keyword_argument = "keyword_argument", subscript = "subscript", slice = "slice", binary_operator = "binary_operator",
    unary_operator = "unary_operator", boolean_operator = "boolean_operator", not_operator = "not_operator",
    comparison_operator = "comparison_operator", conditional_expression = "conditional_expression", list = "list",
    tuple = "tuple", set = "set", dictionary = "dictionary", pair = "pair", parenthesized_expression = "parenthesized_expression",
    list_comprehension = "list_comprehension", set_comprehension = "set_comprehension",
    dictionary_comprehension = "dictionary_comprehension", generator_expression = "generator_expression",
    for_in_clause = "for_in_clause", if_clause = "if_clause", lambda = "lambda", lambda_parameters = "lambda_parameters",
    expression_list = "expression_list", pattern_list = "pattern_list", tuple_pattern = "tuple_pattern",
    list_pattern = "list_pattern", list_splat = "list_splat", dictionary_splat = "dictionary_splat",
    list_splat_pattern = "list_splat_pattern", dictionary_splat_pattern = "dictionary_splat_pattern",
    named_expression = "named_expression", yield_ = "yield", as_pattern = "as_pattern",
    as_pattern_target = "as_pattern_target", import_statement = "import_statement",
    import_from_statement = "import_from_statement", future_import_statement = "future_import_statement",
    aliased_import = "aliased_import", dotted_name = "dotted_name", relative_import = "relative_import",
    import_prefix = "import_prefix", wildcard_import = "wildcard_import", return_statement = "return_statement",
    pass_statement = "pass_statement", break_statement = "break_statement", continue_statement = "continue_statement",
    raise_statement = "raise_statement", assert_statement = "assert_statement", delete_statement = "delete_statement",
    global_statement = "global_statement", nonlocal_statement = "nonlocal_statement", if_statement = "if_statement",
    elif_clause = "elif_clause", else_clause = "else_clause", for_statement = "for_statement",
    while_statement = "while_statement", try_statement = "try_statement", except_clause = "except_clause",
    finally_clause = "finally_clause", with_statement = "with_statement", with_clause = "with_clause",
    with_item = "with_item", function_definition = "function_definition", parameters = "parameters",
    default_parameter = "default_parameter", typed_parameter = "typed_parameter",
    typed_default_parameter = "typed_default_parameter", keyword_separator = "keyword_separator",
    positional_separator = "positional_separator", type_ = "type", generic_type = "generic_type", union_type = "union_type",
    type_parameter = "type_parameter", class_definition = "class_definition", decorated_definition = "decorated_definition",
    decorator = "decorator", block = "block",
});

table!(Fields, field, {
    name = "name", left = "left", right = "right", function = "function", arguments = "arguments", value = "value",
    body = "body", operator = "operator", operators = "operators", object = "object", attribute = "attribute",
    parameters = "parameters", definition = "definition", argument = "argument", type_ = "type",
    module_name = "module_name", key = "key", condition = "condition", alias = "alias", consequence = "consequence",
    alternative = "alternative", subscript = "subscript", cause = "cause", return_type = "return_type",
    superclasses = "superclasses", expression = "expression",
    type_conversion = "type_conversion", format_specifier = "format_specifier",
});

/// Keywords the lexer tells apart from identifiers (soft keywords stay identifiers).
const KEYWORDS: [&str; 36] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
    "pass", "raise", "return", "try", "while", "with", "yield", "__future__",
];

const OPS: [&str; 51] = [
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "==", "!=", "<=", ">=", "<>", "**", "//", "<<", ">>", "+=", "-=", "*=",
    "/=", "@=", "%=", "&=", "^=", "|=", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(", ")", "[", "]",
    "{", "}", ",", ":", ";", "=", ".", "not in", "is not", "\\",
];

pub struct Syms {
    pub k: Kinds,
    pub f: Fields,
    pub colon: u16,
    words: HashMap<&'static [u8], u16>,
    ops: HashMap<&'static str, u16>,
}

impl Syms {
    /// The word's anonymous keyword kind, or `identifier`.
    #[inline]
    pub fn word(&self, w: &[u8]) -> u16 {
        // Keywords are 2..=10 bytes and start with a letter from a short list; most names fail here.
        if w.len() < 2 || w.len() > 10 || !b"FNTabcdefgilnoprtwy_".contains(&w[0]) {
            return self.k.identifier;
        }
        self.words.get(w).copied().unwrap_or(self.k.identifier)
    }

    /// The anonymous kind of a keyword (panics on a name not in the table: a bug here).
    pub fn kw(&self, w: &str) -> u16 {
        self.words[w.as_bytes()]
    }

    pub fn op(&self, op: &str) -> u16 {
        self.ops[op]
    }
}

/// The table, or None when the grammar lacks a kind this parser builds (then tree-sitter parses).
pub fn syms() -> Option<&'static Syms> {
    static SYMS: std::sync::OnceLock<Option<Syms>> = std::sync::OnceLock::new();
    SYMS.get_or_init(|| {
        let l = language();
        let anon = |s: &str| Some(l.id_for_node_kind(s, false)).filter(|&k| k != 0);
        let k = Kinds::load(&l)?;
        let mut words = HashMap::new();
        for w in KEYWORDS {
            // The constants are the tokens of the named `true`, `false` and `none` only.
            let id = match w {
                "True" => k.true_,
                "False" => k.false_,
                "None" => k.none,
                _ => anon(w)?,
            };
            words.insert(w.as_bytes(), id);
        }
        let mut ops = HashMap::new();
        for o in OPS {
            // `...` is the token of the named `ellipsis` only.
            ops.insert(o, if o == "..." { k.ellipsis } else { anon(o)? });
        }
        Some(Syms { k, f: Fields::load(&l)?, colon: ops[":"], words, ops })
    })
    .as_ref()
}
