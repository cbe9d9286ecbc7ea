//! The grammar's kind and field ids for what the direct parser builds, read from the compiled
//! tree-sitter-python language once, so a node built here carries the id tree-sitter would give it.

use crate::syntax::language;

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
pub const KEYWORDS: [&str; 36] = [
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "__future__",
];

/// Operators and punctuation the lexer reads (see [`op_at`]), and the two-word comparison
/// operators and the lone backslash the parser builds.
pub const OPS: [&str; 51] = [
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "==", "!=", "<=", ">=", "<>", "**", "//", "<<", ">>", "+=", "-=", "*=", "/=", "@=",
    "%=", "&=", "^=", "|=", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ";", "=",
    ".", "not in", "is not", "\\",
];

/// The operator at the start of `s`, longest match: its index in [`OPS`] and its length.
pub fn op_at(s: &[u8]) -> Option<(usize, usize)> {
    let (a, b, c) = (s.first().copied()?, s.get(1).copied().unwrap_or(0), s.get(2).copied().unwrap_or(0));
    // Longest first: the arms follow [`OPS`], whose order is longest first.
    Some(match (a, b, c) {
        (b'*', b'*', b'=') => (0, 3),
        (b'/', b'/', b'=') => (1, 3),
        (b'>', b'>', b'=') => (2, 3),
        (b'<', b'<', b'=') => (3, 3),
        (b'.', b'.', b'.') => (4, 3),
        (b'-', b'>', _) => (5, 2),
        (b':', b'=', _) => (6, 2),
        (b'=', b'=', _) => (7, 2),
        (b'!', b'=', _) => (8, 2),
        (b'<', b'=', _) => (9, 2),
        (b'>', b'=', _) => (10, 2),
        (b'<', b'>', _) => (11, 2),
        (b'*', b'*', _) => (12, 2),
        (b'/', b'/', _) => (13, 2),
        (b'<', b'<', _) => (14, 2),
        (b'>', b'>', _) => (15, 2),
        (b'+', b'=', _) => (16, 2),
        (b'-', b'=', _) => (17, 2),
        (b'*', b'=', _) => (18, 2),
        (b'/', b'=', _) => (19, 2),
        (b'@', b'=', _) => (20, 2),
        (b'%', b'=', _) => (21, 2),
        (b'&', b'=', _) => (22, 2),
        (b'^', b'=', _) => (23, 2),
        (b'|', b'=', _) => (24, 2),
        (b'+', _, _) => (25, 1),
        (b'-', _, _) => (26, 1),
        (b'*', _, _) => (27, 1),
        (b'/', _, _) => (28, 1),
        (b'%', _, _) => (29, 1),
        (b'@', _, _) => (30, 1),
        (b'&', _, _) => (31, 1),
        (b'|', _, _) => (32, 1),
        (b'^', _, _) => (33, 1),
        (b'~', _, _) => (34, 1),
        (b'<', _, _) => (35, 1),
        (b'>', _, _) => (36, 1),
        (b'(', _, _) => (37, 1),
        (b')', _, _) => (38, 1),
        (b'[', _, _) => (39, 1),
        (b']', _, _) => (40, 1),
        (b'{', _, _) => (41, 1),
        (b'}', _, _) => (42, 1),
        (b',', _, _) => (43, 1),
        (b':', _, _) => (44, 1),
        (b';', _, _) => (45, 1),
        (b'=', _, _) => (46, 1),
        (b'.', _, _) => (47, 1),
        _ => return None,
    })
}

/// Index in [`KEYWORDS`] of a keyword.
pub fn keyword_index(w: &[u8]) -> Option<usize> {
    // Keywords are 2..=10 bytes and start with a letter from a short list; most names fail here.
    if w.len() < 2 || w.len() > 10 || !b"FNTabcdefgilnoprtwy_".contains(&w[0]) {
        return None;
    }
    // Arms in [`KEYWORDS`] order (a test checks them).
    Some(match w {
        b"False" => 0,
        b"None" => 1,
        b"True" => 2,
        b"and" => 3,
        b"as" => 4,
        b"assert" => 5,
        b"async" => 6,
        b"await" => 7,
        b"break" => 8,
        b"class" => 9,
        b"continue" => 10,
        b"def" => 11,
        b"del" => 12,
        b"elif" => 13,
        b"else" => 14,
        b"except" => 15,
        b"finally" => 16,
        b"for" => 17,
        b"from" => 18,
        b"global" => 19,
        b"if" => 20,
        b"import" => 21,
        b"in" => 22,
        b"is" => 23,
        b"lambda" => 24,
        b"nonlocal" => 25,
        b"not" => 26,
        b"or" => 27,
        b"pass" => 28,
        b"raise" => 29,
        b"return" => 30,
        b"try" => 31,
        b"while" => 32,
        b"with" => 33,
        b"yield" => 34,
        b"__future__" => 35,
        _ => return None,
    })
}

pub struct Syms {
    pub k: Kinds,
    pub f: Fields,
    pub colon: u16,
    pub lbrace: u16,
    pub rbrace: u16,
    pub comma: u16,
    pub assign: u16,
    /// Kind of each of [`KEYWORDS`].
    words: Vec<u16>,
    /// Kind of each of [`OPS`].
    ops: Vec<u16>,
}

impl Syms {
    /// The word's keyword kind, or `identifier`.
    #[inline]
    pub fn word(&self, w: &[u8]) -> u16 {
        keyword_index(w).map_or(self.k.identifier, |i| self.words[i])
    }

    /// The kind of a keyword (panics on a word not in the table: a bug here).
    pub fn kw(&self, w: &str) -> u16 {
        self.words[KEYWORDS.iter().position(|k| *k == w).expect("a keyword")]
    }

    /// The kind of an operator of [`OPS`] (panics on another: a bug here).
    pub fn op(&self, op: &str) -> u16 {
        self.ops[OPS.iter().position(|o| *o == op).expect("an operator")]
    }

    /// The kind of the operator with index `i` in [`OPS`].
    #[inline]
    pub fn op_kind(&self, i: usize) -> u16 {
        self.ops[i]
    }
}

/// The table, or None when the grammar lacks a kind this parser builds (then tree-sitter parses).
pub fn syms() -> Option<&'static Syms> {
    static SYMS: std::sync::OnceLock<Option<Syms>> = std::sync::OnceLock::new();
    SYMS.get_or_init(|| {
        let l = language();
        let anon = |s: &str| Some(l.id_for_node_kind(s, false)).filter(|&k| k != 0);
        let k = Kinds::load(&l)?;
        let mut words = Vec::new();
        for w in KEYWORDS {
            // The constants are the tokens of the named `true`, `false` and `none` only.
            words.push(match w {
                "True" => k.true_,
                "False" => k.false_,
                "None" => k.none,
                _ => anon(w)?,
            });
        }
        let mut ops = Vec::new();
        for o in OPS {
            // `...` is the token of the named `ellipsis` only.
            ops.push(if o == "..." { k.ellipsis } else { anon(o)? });
        }
        let of = |op: &str| OPS.iter().position(|o| *o == op).map(|i| ops[i]);
        let (colon, lbrace, rbrace, comma, assign) = (of(":")?, of("{")?, of("}")?, of(",")?, of("=")?);
        Some(Syms { k, f: Fields::load(&l)?, colon, lbrace, rbrace, comma, assign, words, ops })
    })
    .as_ref()
}
