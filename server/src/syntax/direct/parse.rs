//! Recursive descent over the tokens, giving each construct the shape tree-sitter-python's grammar
//! gives it (its precedences, hidden rules, aliases and fields). Constructs it does not model
//! (match statements, async, py2 print, type parameters, ...) return `Unsure`.

use super::build::{Builder, Pre};
use super::{Unsure, unsure};

use super::ids::Syms;
use super::lex::{K, Tok};

type R<T = usize> = Result<T, Unsure>;

/// Anonymous kinds of the tokens the parser tests for, looked up once per parse.
struct Ops {
    lparen: u16,
    rparen: u16,
    lbrack: u16,
    rbrack: u16,
    lbrace: u16,
    rbrace: u16,
    comma: u16,
    colon: u16,
    semicolon: u16,
    assign: u16,
    dot: u16,
    ellipsis: u16,
    arrow: u16,
    walrus: u16,
    star: u16,
    dstar: u16,
    at: u16,
    slash: u16,
    plus: u16,
    minus: u16,
    tilde: u16,
    bar: u16,
    not_in: u16,
    is_not: u16,
    backslash: u16,
    /// Binary operator precedence by anonymous kind (0: not one).
    bin: Vec<u8>,
    /// Comparison operators by anonymous kind.
    cmp: Vec<bool>,
    /// Augmented assignment operators by anonymous kind.
    aug: Vec<bool>,
}

struct Kw {
    false_: u16,
    none: u16,
    true_: u16,
    and: u16,
    as_: u16,
    assert: u16,
    break_: u16,
    class: u16,
    continue_: u16,
    def: u16,
    del: u16,
    elif: u16,
    else_: u16,
    except: u16,
    finally: u16,
    for_: u16,
    from: u16,
    global: u16,
    if_: u16,
    import: u16,
    in_: u16,
    is: u16,
    lambda: u16,
    nonlocal: u16,
    not: u16,
    or: u16,
    pass: u16,
    raise: u16,
    return_: u16,
    try_: u16,
    while_: u16,
    with: u16,
    yield_: u16,
    future: u16,
}

const POWER: u8 = 21;

/// Nesting beyond which the parser declines: its recursion must stay far inside a worker thread's
/// stack (tree-sitter, which keeps its own stack, takes such files).
const MAX_DEPTH: usize = 200;

fn ops(s: &Syms) -> Ops {
    let n = s.k.decorator.max(s.k.module).max(400) as usize + 1;
    let mut bin = vec![0u8; n.max(1024)];
    for (op, p) in [
        ("|", 14),
        ("&", 15),
        ("^", 16),
        ("<<", 17),
        (">>", 17),
        ("+", 18),
        ("-", 18),
        ("*", 19),
        ("@", 19),
        ("/", 19),
        ("%", 19),
        ("//", 19),
        ("**", POWER),
    ] {
        bin[s.op(op) as usize] = p;
    }
    let mut cmp = vec![false; bin.len()];
    for op in ["<", "<=", "==", "!=", ">=", ">", "<>"] {
        cmp[s.op(op) as usize] = true;
    }
    cmp[s.kw("in") as usize] = true;
    let mut aug = vec![false; bin.len()];
    for op in ["+=", "-=", "*=", "/=", "@=", "//=", "%=", "**=", ">>=", "<<=", "&=", "^=", "|="] {
        aug[s.op(op) as usize] = true;
    }
    Ops {
        lparen: s.op("("),
        rparen: s.op(")"),
        lbrack: s.op("["),
        rbrack: s.op("]"),
        lbrace: s.op("{"),
        rbrace: s.op("}"),
        comma: s.op(","),
        colon: s.op(":"),
        semicolon: s.op(";"),
        assign: s.op("="),
        dot: s.op("."),
        ellipsis: s.op("..."),
        arrow: s.op("->"),
        walrus: s.op(":="),
        star: s.op("*"),
        dstar: s.op("**"),
        at: s.op("@"),
        slash: s.op("/"),
        plus: s.op("+"),
        minus: s.op("-"),
        tilde: s.op("~"),
        bar: s.op("|"),
        not_in: s.op("not in"),
        is_not: s.op("is not"),
        backslash: s.op("\\"),
        bin,
        cmp,
        aug,
    }
}

fn kws(s: &Syms) -> Kw {
    Kw {
        false_: s.kw("False"),
        none: s.kw("None"),
        true_: s.kw("True"),
        and: s.kw("and"),
        as_: s.kw("as"),
        assert: s.kw("assert"),
        break_: s.kw("break"),
        class: s.kw("class"),
        continue_: s.kw("continue"),
        def: s.kw("def"),
        del: s.kw("del"),
        elif: s.kw("elif"),
        else_: s.kw("else"),
        except: s.kw("except"),
        finally: s.kw("finally"),
        for_: s.kw("for"),
        from: s.kw("from"),
        global: s.kw("global"),
        if_: s.kw("if"),
        import: s.kw("import"),
        in_: s.kw("in"),
        is: s.kw("is"),
        lambda: s.kw("lambda"),
        nonlocal: s.kw("nonlocal"),
        not: s.kw("not"),
        or: s.kw("or"),
        pass: s.kw("pass"),
        raise: s.kw("raise"),
        return_: s.kw("return"),
        try_: s.kw("try"),
        while_: s.kw("while"),
        with: s.kw("with"),
        yield_: s.kw("yield"),
        future: s.kw("__future__"),
    }
}

struct P<'a> {
    b: Builder<'a>,
    s: &'a Syms,
    o: &'static Ops,
    kw: &'static Kw,
    src: &'a [u8],
}

/// The operator and keyword tables, built once from the grammar's ids.
fn tables(s: &Syms) -> &'static (Ops, Kw) {
    static TABLES: std::sync::OnceLock<(Ops, Kw)> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| (ops(s), kws(s)))
}

/// The tree of `toks`, or where the parser gave up (the byte offset of its next token).
pub fn parse(text: &str, toks: &[Tok], s: &Syms) -> Result<Vec<Pre>, (Unsure, usize)> {
    let b = Builder::new(toks, s.k.module, s.k.comment, s.k.line_continuation);
    let (o, kw) = tables(s);
    let mut p = P { b, s, o, kw, src: text.as_bytes() };
    let mut run = || -> R<()> {
        while p.peek().k != K::Eof {
            p.statement()?;
        }
        Ok(())
    };
    let at = |p: &P| p.peek().start as usize;
    match run() {
        Ok(()) => p.b.finish(text.len() as u32).map_err(|u| (u, text.len())),
        Err(u) => Err((u, at(&p))),
    }
}

/// How tree-sitter reads `*` in a list, as observed: its GLR parse chooses between the
/// `list_splat` of an expression and a starred name that trailers then apply to, and the choice
/// varies with the position.
#[derive(Clone, Copy, PartialEq)]
enum Star {
    /// Argument lists, tuples, sets: `*` takes an expression (`*x.shape` is `*(x.shape)`).
    Full,
    /// First item of a bare list (`a = *x.shape, 1`): `(*x).shape`.
    First,
    /// Later items of a bare list: only `*name` before a separator, which reads the same either
    /// way (`*[a]` is an error there).
    Bare,
    /// Items of `[...]`: as `Bare`, and also `*[...]`, `*(...)` before a separator.
    List,
}

/// How far an expression reaches.
#[derive(Clone, Copy, PartialEq)]
enum Reach {
    /// Everything `expression` covers.
    Full,
    /// No conditional expression or lambda at the top (comprehension `in`/`if` parts).
    NoCond,
}

impl<'a> P<'a> {
    #[inline]
    fn peek(&self) -> &'a Tok {
        self.b.peek()
    }

    #[inline]
    fn is_op(&self, sym: u16) -> bool {
        let t = self.peek();
        t.k == K::Op && t.sym == sym
    }

    #[inline]
    fn is_kw(&self, sym: u16) -> bool {
        let t = self.peek();
        t.k == K::Name && t.sym == sym
    }

    fn text(&self, t: &Tok) -> &'a [u8] {
        &self.src[t.start as usize..t.end as usize]
    }

    /// Consumes the next token as an anonymous leaf, which must be `sym`.
    fn expect(&mut self, sym: u16) -> R<()> {
        let t = self.peek();
        if !matches!(t.k, K::Op | K::Name) || t.sym != sym {
            return Err(unsure());
        }
        self.b.consume(Some(sym), false, 0);
        Ok(())
    }

    fn hidden(&mut self, k: K) -> R<()> {
        if self.peek().k != k {
            return Err(unsure());
        }
        self.b.consume(None, false, 0);
        Ok(())
    }

    fn identifier(&mut self, field: u16) -> R {
        let t = self.peek();
        if t.k != K::Name || t.sym != self.s.k.identifier {
            return Err(unsure());
        }
        Ok(self.b.consume(Some(self.s.k.identifier), true, field))
    }

    // ---- statements ----

    fn statement(&mut self) -> R<()> {
        if self.b.depth() > MAX_DEPTH {
            return Err(unsure());
        }
        let t = self.peek();
        if t.k == K::Name {
            let kw = &self.kw;
            let sym = t.sym;
            if sym == kw.if_ {
                return self.if_statement();
            } else if sym == kw.for_ {
                return self.for_statement();
            } else if sym == kw.while_ {
                return self.while_statement();
            } else if sym == kw.try_ {
                return self.try_statement();
            } else if sym == kw.with {
                return self.with_statement();
            } else if sym == kw.def {
                return self.function_definition(0);
            } else if sym == kw.class {
                return self.class_definition(0);
            }
        } else if t.k == K::Op && t.sym == self.o.at {
            return self.decorated_definition();
        }
        self.simple_statements()
    }

    fn simple_statements(&mut self) -> R<()> {
        loop {
            self.simple_statement()?;
            if self.is_op(self.o.semicolon) {
                self.expect(self.o.semicolon)?;
                if self.peek().k == K::Newline {
                    break;
                }
                continue;
            }
            break;
        }
        self.hidden(K::Newline)
    }

    fn simple_statement(&mut self) -> R<()> {
        let t = self.peek();
        let (k, kw) = (&self.s.k, &self.kw);
        if t.k == K::Name && t.sym != k.identifier {
            let sym = t.sym;
            if sym == kw.import {
                return self.import_statement();
            } else if sym == kw.from {
                return self.import_from();
            } else if sym == kw.return_ {
                self.b.open(k.return_statement, 0);
                self.expect(sym)?;
                if !self.at_statement_end() {
                    self.expressions(0, true)?;
                }
                return self.b.close().map(drop);
            } else if sym == kw.pass || sym == kw.break_ || sym == kw.continue_ {
                let kind = if sym == kw.pass {
                    k.pass_statement
                } else if sym == kw.break_ {
                    k.break_statement
                } else {
                    k.continue_statement
                };
                self.b.open(kind, 0);
                self.expect(sym)?;
                return self.b.close().map(drop);
            } else if sym == kw.raise {
                self.b.open(k.raise_statement, 0);
                self.expect(sym)?;
                if !self.at_statement_end() && !self.is_kw(self.kw.from) {
                    self.expressions(0, true)?;
                }
                if self.is_kw(self.kw.from) {
                    self.expect(self.kw.from)?;
                    self.expression(self.s.f.cause, Reach::Full)?;
                }
                return self.b.close().map(drop);
            } else if sym == kw.assert {
                self.b.open(k.assert_statement, 0);
                self.expect(sym)?;
                self.expression(0, Reach::Full)?;
                while self.is_op(self.o.comma) {
                    self.expect(self.o.comma)?;
                    self.expression(0, Reach::Full)?;
                }
                return self.b.close().map(drop);
            } else if sym == kw.del {
                self.b.open(k.delete_statement, 0);
                self.expect(sym)?;
                self.expressions(0, true)?;
                return self.b.close().map(drop);
            } else if sym == kw.global || sym == kw.nonlocal {
                self.b.open(if sym == kw.global { k.global_statement } else { k.nonlocal_statement }, 0);
                self.expect(sym)?;
                self.identifier(0)?;
                while self.is_op(self.o.comma) {
                    self.expect(self.o.comma)?;
                    self.identifier(0)?;
                }
                return self.b.close().map(drop);
            }
        }
        if t.k == K::Name && t.sym == k.identifier {
            // Soft keywords that start a statement of their own (match, type, py2 print/exec).
            let word = self.text(t);
            if matches!(word, b"match" | b"type" | b"print" | b"exec" | b"case") {
                let n = self.b.peek2();
                let plain = n.k == K::Newline
                    || (n.k == K::Op
                        && [self.o.lparen, self.o.dot, self.o.assign, self.o.comma, self.o.rparen, self.o.semicolon].contains(&n.sym));
                if !plain || (matches!(word, b"match" | b"type") && n.sym == self.o.lparen) {
                    return Err(unsure());
                }
            }
        }
        self.expression_statement()
    }

    fn at_statement_end(&self) -> bool {
        let t = self.peek();
        t.k == K::Newline || (t.k == K::Op && t.sym == self.o.semicolon)
    }

    fn expression_statement(&mut self) -> R<()> {
        let k = &self.s.k;
        self.b.open(k.expression_statement, 0);
        if self.is_kw(self.kw.yield_) {
            self.yield_expr(0)?;
            self.b.close()?;
            return Ok(());
        }
        let (items, multi) = self.bare_items(0)?;
        let first = items[0];
        // Without `=`, `f(a), g(b)` keeps its expressions as the statement's own children.
        if self.is_op(self.o.assign) || self.is_aug() || (self.is_op(self.o.colon) && !multi) {
            let lhs = self.targets_from(first, &items, multi)?;
            self.assignment_rest(lhs, 0)?;
        }
        self.b.close()?;
        Ok(())
    }

    fn is_aug(&self) -> bool {
        let t = self.peek();
        t.k == K::Op && self.o.aug[t.sym as usize]
    }

    /// Turns the parsed items (from `first` to the end) into an assignment target: one pattern,
    /// or a `pattern_list` of them.
    fn targets_from(&mut self, first: usize, items: &[usize], multi: bool) -> R {
        for &i in items.iter().rev() {
            self.relabel_as_pattern(i)?;
        }
        if multi {
            let w = self.b.wrap(first, self.s.k.pattern_list, 0, 0);
            self.b.close()?;
            Ok(w)
        } else {
            Ok(first)
        }
    }

    /// After the target `lhs`: `= rhs`, `: type [= rhs]` or `op= rhs`, wrapping `lhs`.
    fn assignment_rest(&mut self, lhs: usize, field: u16) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        if self.is_aug() {
            self.b.wrap(lhs, k.augmented_assignment, field, f.left);
            let t = self.peek();
            self.b.consume(Some(t.sym), false, f.operator);
            self.right_hand_side(f.right)?;
            self.b.close()?;
            return Ok(());
        }
        self.b.wrap(lhs, k.assignment, field, f.left);
        if self.is_op(self.o.colon) {
            self.expect(self.o.colon)?;
            self.type_(f.type_)?;
            if !self.is_op(self.o.assign) {
                self.b.close()?;
                return Ok(());
            }
        }
        self.expect(self.o.assign)?;
        self.right_hand_side(f.right)?;
        self.b.close()?;
        Ok(())
    }

    /// A bare comma list up to `=`, an augmented operator or the statement's end: its items (the
    /// first with `field`), and whether it is a list (more than one item, or a trailing comma).
    fn bare_items(&mut self, field: u16) -> R<(Vec<usize>, bool)> {
        let mut items = vec![self.star_expression(field)?];
        let mut trailing = false;
        while self.is_op(self.o.comma) {
            self.expect(self.o.comma)?;
            trailing = true;
            if self.at_statement_end() || self.is_op(self.o.assign) || self.is_aug() {
                break;
            }
            items.push(self.star_item(0, Star::Bare)?);
            trailing = false;
        }
        let multi = items.len() > 1 || trailing;
        Ok((items, multi))
    }

    /// `_right_hand_side`: expression(s), yield, or a further assignment in a chain.
    fn right_hand_side(&mut self, field: u16) -> R<()> {
        if self.is_kw(self.kw.yield_) {
            self.yield_expr(field)?;
            return Ok(());
        }
        let (items, multi) = self.bare_items(field)?;
        let first = items[0];
        if self.is_op(self.o.assign) || self.is_aug() {
            let lhs = self.targets_from(first, &items, multi)?;
            if multi {
                self.b.set_field(lhs, field);
            }
            return self.assignment_rest(lhs, field);
        }
        if multi {
            self.b.wrap(first, self.s.k.expression_list, field, 0);
            self.b.close()?;
        }
        Ok(())
    }

    /// Relabels an expression as the pattern tree-sitter reads in a target position.
    fn relabel_as_pattern(&mut self, idx: usize) -> R<()> {
        let k = &self.s.k;
        let kind = self.b.nodes[idx].kind;
        let to = if kind == k.identifier || kind == k.attribute || kind == k.subscript {
            return Ok(());
        } else if kind == k.tuple {
            k.tuple_pattern
        } else if kind == k.list {
            k.list_pattern
        } else if kind == k.list_splat {
            k.list_splat_pattern
        } else {
            return Err(unsure());
        };
        self.b.relabel(idx, to);
        let depth = self.b.nodes[idx].depth;
        let kids: Vec<usize> = (idx + 1..self.b.nodes.len())
            .take_while(|&i| self.b.nodes[i].depth > depth)
            .filter(|&i| {
                let n = &self.b.nodes[i];
                n.depth == depth + 1 && n.named && n.kind != k.comment && n.kind != k.line_continuation
            })
            .collect();
        if to == k.list_splat_pattern {
            let [c] = kids[..] else { return Err(unsure()) };
            let ck = self.b.nodes[c].kind;
            return if ck == k.identifier || ck == k.attribute || ck == k.subscript { Ok(()) } else { Err(unsure()) };
        }
        for c in kids {
            self.relabel_as_pattern(c)?;
        }
        Ok(())
    }

    fn import_statement(&mut self) -> R<()> {
        self.b.open(self.s.k.import_statement, 0);
        self.expect(self.kw.import)?;
        self.import_list(false)?;
        self.b.close().map(drop)
    }

    fn import_list(&mut self, parens: bool) -> R<()> {
        loop {
            let name = self.dotted_name(self.s.f.name)?;
            if self.is_kw(self.kw.as_) {
                self.b.wrap(name, self.s.k.aliased_import, self.s.f.name, self.s.f.name);
                self.expect(self.kw.as_)?;
                self.identifier(self.s.f.alias)?;
                self.b.close()?;
            }
            if !self.is_op(self.o.comma) {
                return Ok(());
            }
            self.expect(self.o.comma)?;
            if parens && self.is_op(self.o.rparen) {
                return Ok(());
            }
            if !parens && self.at_statement_end() {
                // `import a,` is not Python; tree-sitter accepts it, we need not.
                return Err(unsure());
            }
        }
    }

    fn dotted_name(&mut self, field: u16) -> R {
        self.b.open(self.s.k.dotted_name, field);
        self.identifier(0)?;
        while self.is_op(self.o.dot) {
            self.expect(self.o.dot)?;
            self.identifier(0)?;
        }
        self.b.close()
    }

    fn import_from(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        let t2 = self.b.peek2();
        if t2.k == K::Name && t2.sym == self.kw.future {
            self.b.open(k.future_import_statement, 0);
            self.expect(self.kw.from)?;
            self.expect(self.kw.future)?;
        } else {
            self.b.open(k.import_from_statement, 0);
            self.expect(self.kw.from)?;
            if self.is_op(self.o.dot) || self.is_op(self.o.ellipsis) {
                self.b.open(k.relative_import, f.module_name);
                self.b.open(k.import_prefix, 0);
                // `...` is one token to the lexer, three dots to the grammar here.
                while self.is_op(self.o.dot) || self.is_op(self.o.ellipsis) {
                    if self.is_op(self.o.dot) {
                        self.expect(self.o.dot)?;
                    } else {
                        self.b.consume_split(self.o.dot);
                    }
                }
                self.b.close()?;
                if !self.is_kw(self.kw.import) {
                    self.dotted_name(0)?;
                }
                self.b.close()?;
            } else {
                self.dotted_name(f.module_name)?;
            }
        }
        self.expect(self.kw.import)?;
        if self.is_op(self.o.star) {
            self.b.open(self.s.k.wildcard_import, 0);
            self.expect(self.o.star)?;
            self.b.close()?;
        } else if self.is_op(self.o.lparen) {
            self.expect(self.o.lparen)?;
            self.import_list(true)?;
            self.expect(self.o.rparen)?;
        } else {
            self.import_list(false)?;
        }
        self.b.close().map(drop)
    }

    // ---- compound statements ----

    fn suite(&mut self, field: u16) -> R<()> {
        let k = &self.s.k;
        if self.peek().k == K::Indent {
            self.hidden(K::Indent)?;
            self.b.open(k.block, field);
            while !matches!(self.peek().k, K::Dedent | K::Eof) {
                self.statement()?;
            }
            self.hidden(K::Dedent)?;
            self.b.close()?;
        } else {
            self.b.open(k.block, field);
            self.simple_statements()?;
            self.b.close()?;
        }
        Ok(())
    }

    fn if_statement(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.if_statement, 0);
        self.expect(self.kw.if_)?;
        self.expression(f.condition, Reach::Full)?;
        self.expect(self.o.colon)?;
        self.suite(f.consequence)?;
        while self.is_kw(self.kw.elif) {
            self.b.open(k.elif_clause, f.alternative);
            self.expect(self.kw.elif)?;
            self.expression(f.condition, Reach::Full)?;
            self.expect(self.o.colon)?;
            self.suite(f.consequence)?;
            self.b.close()?;
        }
        if self.is_kw(self.kw.else_) {
            self.else_clause(f.alternative)?;
        }
        self.b.close().map(drop)
    }

    fn else_clause(&mut self, field: u16) -> R<()> {
        self.b.open(self.s.k.else_clause, field);
        self.expect(self.kw.else_)?;
        self.expect(self.o.colon)?;
        self.suite(self.s.f.body)?;
        self.b.close().map(drop)
    }

    fn for_statement(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.for_statement, 0);
        self.expect(self.kw.for_)?;
        self.targets(f.left)?;
        self.expect(self.kw.in_)?;
        self.expressions(f.right, false)?;
        self.loop_rest()
    }

    /// A loop's `: body [else: ...]` and its end.
    fn loop_rest(&mut self) -> R<()> {
        self.expect(self.o.colon)?;
        self.suite(self.s.f.body)?;
        if self.is_kw(self.kw.else_) {
            self.else_clause(self.s.f.alternative)?;
        }
        self.b.close().map(drop)
    }

    fn while_statement(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.while_statement, 0);
        self.expect(self.kw.while_)?;
        self.expression(f.condition, Reach::Full)?;
        self.loop_rest()
    }

    fn try_statement(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.try_statement, 0);
        self.expect(self.kw.try_)?;
        self.expect(self.o.colon)?;
        self.suite(f.body)?;
        while self.is_kw(self.kw.except) {
            self.b.open(k.except_clause, 0);
            self.expect(self.kw.except)?;
            if self.is_op(self.o.star) {
                return Err(unsure());
            }
            if !self.is_op(self.o.colon) {
                let v = self.expression(f.value, Reach::Full)?;
                if self.is_kw(self.kw.as_) {
                    self.b.wrap(v, k.as_pattern, f.value, 0);
                    self.expect(self.kw.as_)?;
                    self.b.open(k.as_pattern_target, f.alias);
                    self.expression(0, Reach::Full)?;
                    self.b.close()?;
                    self.b.close()?;
                } else if self.is_op(self.o.comma) {
                    return Err(unsure());
                }
            }
            self.expect(self.o.colon)?;
            self.suite(0)?;
            self.b.close()?;
        }
        if self.is_kw(self.kw.else_) {
            self.else_clause(0)?;
        }
        if self.is_kw(self.kw.finally) {
            self.b.open(k.finally_clause, 0);
            self.expect(self.kw.finally)?;
            self.expect(self.o.colon)?;
            self.suite(0)?;
            self.b.close()?;
        }
        self.b.close().map(drop)
    }

    fn with_statement(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.with_statement, 0);
        self.expect(self.kw.with)?;
        self.b.open(k.with_clause, 0);
        let parens = self.is_op(self.o.lparen);
        if parens {
            // `with (a as b, c):` and `with (a, b):` read differently; only the first form here.
            if !self.parenthesized_as_follows() {
                return Err(unsure());
            }
            self.expect(self.o.lparen)?;
        }
        loop {
            self.b.open(k.with_item, 0);
            let v = self.expression(f.value, Reach::Full)?;
            if self.is_kw(self.kw.as_) {
                self.b.wrap(v, k.as_pattern, f.value, 0);
                self.expect(self.kw.as_)?;
                self.b.open(k.as_pattern_target, f.alias);
                self.expression(0, Reach::Full)?;
                self.b.close()?;
                self.b.close()?;
            }
            self.b.close()?;
            if !self.is_op(self.o.comma) {
                break;
            }
            self.expect(self.o.comma)?;
            if parens && self.is_op(self.o.rparen) {
                break;
            }
        }
        if parens {
            self.expect(self.o.rparen)?;
        }
        self.b.close()?;
        self.expect(self.o.colon)?;
        self.suite(f.body)?;
        self.b.close().map(drop)
    }

    /// At `*`: whether a bracketed group follows it and then a separator (`*[a, b],`).
    fn bracket_item_follows(&self) -> bool {
        let toks = &self.b.toks[self.b.pos..];
        let real = |i: &mut usize| {
            *i += 1;
            while toks.get(*i).is_some_and(Tok::is_extra) {
                *i += 1;
            }
            toks.get(*i)
        };
        let mut i = 0;
        let Some(open) = real(&mut i) else { return false };
        if open.k != K::Op || (open.sym != self.o.lparen && open.sym != self.o.lbrack) {
            return false;
        }
        let mut depth = 0i32;
        loop {
            let t = &toks[i];
            if t.k == K::Eof {
                return false;
            }
            if t.k == K::Op {
                if t.sym == self.o.lparen || t.sym == self.o.lbrack || t.sym == self.o.lbrace {
                    depth += 1;
                } else if t.sym == self.o.rparen || t.sym == self.o.rbrack || t.sym == self.o.rbrace {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            i += 1;
        }
        real(&mut i).is_some_and(|n| {
            n.k == K::Newline
                || (n.k == K::Op && [self.o.comma, self.o.rbrack, self.o.rparen, self.o.rbrace, self.o.semicolon].contains(&n.sym))
        })
    }

    /// At `(` after `with`: whether an `as` stands directly inside these parentheses.
    fn parenthesized_as_follows(&self) -> bool {
        let mut depth = 0i32;
        for t in &self.b.toks[self.b.pos..] {
            match t.k {
                K::Op if t.sym == self.o.lparen || t.sym == self.o.lbrack || t.sym == self.o.lbrace => depth += 1,
                K::Op if t.sym == self.o.rparen || t.sym == self.o.rbrack || t.sym == self.o.rbrace => {
                    depth -= 1;
                    if depth == 0 {
                        return false;
                    }
                }
                K::Name if depth == 1 && t.sym == self.kw.as_ => return true,
                K::Newline | K::Eof => return false,
                _ => {}
            }
        }
        false
    }

    fn function_definition(&mut self, field: u16) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.function_definition, field);
        self.expect(self.kw.def)?;
        self.identifier(f.name)?;
        if !self.is_op(self.o.lparen) {
            return Err(unsure());
        }
        self.b.open(k.parameters, f.parameters);
        self.expect(self.o.lparen)?;
        self.parameters(self.o.rparen, true)?;
        self.expect(self.o.rparen)?;
        self.b.close()?;
        if self.is_op(self.o.arrow) {
            self.expect(self.o.arrow)?;
            self.type_(f.return_type)?;
        }
        self.expect(self.o.colon)?;
        self.suite(f.body)?;
        self.b.close().map(drop)
    }

    /// Parameters up to `end` (`)` of a def, `:` of a lambda).
    fn parameters(&mut self, end: u16, typed: bool) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        while !self.is_op(end) {
            let t = self.peek();
            if t.k == K::Op && (t.sym == self.o.star || t.sym == self.o.dstar) {
                let n = self.b.peek2();
                if t.sym == self.o.star && n.k == K::Op && (n.sym == self.o.comma || n.sym == end) {
                    self.b.open(k.keyword_separator, 0);
                    self.expect(self.o.star)?;
                    self.b.close()?;
                } else {
                    let kind = if t.sym == self.o.star { k.list_splat_pattern } else { k.dictionary_splat_pattern };
                    self.b.open(kind, 0);
                    self.expect(t.sym)?;
                    self.identifier(0)?;
                    let p = self.b.close()?;
                    if typed && self.is_op(self.o.colon) {
                        self.b.wrap(p, k.typed_parameter, 0, 0);
                        self.expect(self.o.colon)?;
                        self.type_(f.type_)?;
                        self.b.close()?;
                    }
                }
            } else if t.k == K::Op && t.sym == self.o.slash {
                self.b.open(k.positional_separator, 0);
                self.expect(self.o.slash)?;
                self.b.close()?;
            } else {
                let name = self.identifier(0)?;
                if typed && self.is_op(self.o.colon) {
                    let w = self.b.wrap(name, k.typed_parameter, 0, 0);
                    self.expect(self.o.colon)?;
                    self.type_(f.type_)?;
                    if self.is_op(self.o.assign) {
                        self.b.relabel(w, k.typed_default_parameter);
                        self.b.set_field(name + 1, f.name);
                        self.expect(self.o.assign)?;
                        self.expression(f.value, Reach::Full)?;
                    }
                    self.b.close()?;
                } else if self.is_op(self.o.assign) {
                    self.b.wrap(name, k.default_parameter, 0, f.name);
                    self.expect(self.o.assign)?;
                    self.expression(f.value, Reach::Full)?;
                    self.b.close()?;
                }
            }
            if !self.is_op(self.o.comma) {
                break;
            }
            self.expect(self.o.comma)?;
        }
        Ok(())
    }

    fn class_definition(&mut self, field: u16) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.class_definition, field);
        self.expect(self.kw.class)?;
        self.identifier(f.name)?;
        if self.is_op(self.o.lbrack) {
            return Err(unsure());
        }
        if self.is_op(self.o.lparen) {
            self.b.open(k.argument_list, f.superclasses);
            self.argument_list_rest()?;
            self.b.close()?;
        }
        self.expect(self.o.colon)?;
        self.suite(f.body)?;
        self.b.close().map(drop)
    }

    fn decorated_definition(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.decorated_definition, 0);
        while self.is_op(self.o.at) {
            self.b.open(k.decorator, 0);
            self.expect(self.o.at)?;
            self.expression(0, Reach::Full)?;
            self.hidden(K::Newline)?;
            self.b.close()?;
        }
        if self.is_kw(self.kw.def) {
            self.function_definition(f.definition)?;
        } else if self.is_kw(self.kw.class) {
            self.class_definition(f.definition)?;
        } else {
            return Err(unsure());
        }
        self.b.close().map(drop)
    }

    // ---- expressions ----

    /// `_expressions` (an expression, or an `expression_list` of them) with `field` on the
    /// outermost. `star` allows `*x` items.
    fn expressions(&mut self, field: u16, star: bool) -> R<()> {
        let first = if star { self.star_expression(field)? } else { self.expression(field, Reach::Full)? };
        if self.is_op(self.o.comma) {
            self.b.wrap(first, self.s.k.expression_list, field, 0);
            while self.is_op(self.o.comma) {
                self.expect(self.o.comma)?;
                if self.at_list_end() {
                    break;
                }
                if star {
                    self.star_item(0, Star::Bare)?;
                } else {
                    self.expression(0, Reach::Full)?;
                }
            }
            self.b.close()?;
        }
        Ok(())
    }

    fn at_list_end(&self) -> bool {
        let t = self.peek();
        match t.k {
            K::Newline | K::Eof => true,
            K::Op => [self.o.semicolon, self.o.colon, self.o.rparen, self.o.rbrack, self.o.rbrace, self.o.assign].contains(&t.sym),
            K::Name => t.sym == self.kw.from,
            _ => false,
        }
    }

    /// The first item of a bare expression list: an expression or a starred item.
    fn star_expression(&mut self, field: u16) -> R {
        self.star_item(field, Star::First)
    }

    /// An expression or a starred item, read as tree-sitter reads a star there (see [`Star`]).
    fn star_item(&mut self, field: u16, star: Star) -> R {
        if !self.is_op(self.o.star) {
            return self.expression(field, Reach::Full);
        }
        // `*[...]` and `*(...)` before a separator have one reading only: the list_splat of them.
        let star = if star == Star::List && self.bracket_item_follows() { Star::Full } else { star };
        self.b.open(self.s.k.list_splat, field);
        self.expect(self.o.star)?;
        if star == Star::Full {
            self.expression(0, Reach::Full)?;
            return self.b.close();
        }
        self.identifier(0)?;
        let mut x = self.b.close()?;
        if star == Star::First {
            x = self.trailers(x, field)?;
        }
        let t = self.peek();
        let ends = t.k == K::Newline
            || (t.k == K::Op
                && [self.o.comma, self.o.rparen, self.o.rbrack, self.o.rbrace, self.o.assign, self.o.semicolon, self.o.colon]
                    .contains(&t.sym));
        if !ends {
            return Err(unsure());
        }
        Ok(x)
    }

    fn expression(&mut self, field: u16, reach: Reach) -> R {
        if self.b.depth() > MAX_DEPTH {
            return Err(unsure());
        }
        let (k, f) = (&self.s.k, &self.s.f);
        if self.is_kw(self.kw.lambda) {
            if reach != Reach::Full {
                return Err(unsure());
            }
            return self.lambda(field);
        }
        let t = self.peek();
        if t.k == K::Name && t.sym == k.identifier {
            let n = self.b.peek2();
            if n.k == K::Op && n.sym == self.o.walrus {
                self.b.open(k.named_expression, field);
                self.identifier(f.name)?;
                self.expect(self.o.walrus)?;
                self.expression(f.value, Reach::Full)?;
                return self.b.close();
            }
        }
        let x = self.disjunction(field)?;
        if reach == Reach::Full && self.is_kw(self.kw.if_) {
            self.b.wrap(x, k.conditional_expression, field, 0);
            self.expect(self.kw.if_)?;
            self.disjunction(0)?;
            self.expect(self.kw.else_)?;
            self.expression(0, Reach::Full)?;
            self.b.close()?;
        }
        Ok(x)
    }

    fn lambda(&mut self, field: u16) -> R {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.lambda, field);
        self.expect(self.kw.lambda)?;
        if !self.is_op(self.o.colon) {
            self.b.open(k.lambda_parameters, f.parameters);
            self.parameters(self.o.colon, false)?;
            self.b.close()?;
        }
        self.expect(self.o.colon)?;
        self.expression(f.body, Reach::Full)?;
        self.b.close()
    }

    fn disjunction(&mut self, field: u16) -> R {
        self.boolean(field, self.kw.or)
    }

    /// `or` (over `and` operands) or `and` (over `not` operands), left-associative.
    fn boolean(&mut self, field: u16, op: u16) -> R {
        let operand = |p: &mut Self, field| if op == p.kw.or { p.boolean(field, p.kw.and) } else { p.inversion(field) };
        let x = operand(self, field)?;
        while self.is_kw(op) {
            let (k, f) = (&self.s.k, &self.s.f);
            self.b.wrap(x, k.boolean_operator, field, f.left);
            self.b.consume(Some(op), false, f.operator);
            operand(self, f.right)?;
            self.b.close()?;
        }
        Ok(x)
    }

    fn inversion(&mut self, field: u16) -> R {
        if self.b.depth() > MAX_DEPTH {
            return Err(unsure());
        }
        if self.is_kw(self.kw.not) {
            self.b.open(self.s.k.not_operator, field);
            self.expect(self.kw.not)?;
            self.inversion(self.s.f.argument)?;
            return self.b.close();
        }
        self.comparison(field)
    }

    fn comparison(&mut self, field: u16) -> R {
        let x = self.binary(field, 14)?;
        if !self.at_comparison() {
            return Ok(x);
        }
        self.b.wrap(x, self.s.k.comparison_operator, field, 0);
        while self.at_comparison() {
            let t = self.peek();
            let ops = self.s.f.operators;
            if t.sym == self.kw.not || (t.sym == self.kw.is && self.b.peek2().sym == self.kw.not && self.b.peek2().k == K::Name) {
                let (kind, second) = if t.sym == self.kw.not { (self.o.not_in, self.kw.in_) } else { (self.o.is_not, self.kw.not) };
                self.b.open(kind, ops);
                let n = self.b.nodes.len() - 1;
                self.b.nodes[n].named = false;
                self.expect(t.sym)?;
                self.expect(second)?;
                self.b.close()?;
            } else {
                self.b.consume(Some(t.sym), false, ops);
            }
            self.binary(0, 14)?;
        }
        self.b.close()?;
        Ok(x)
    }

    fn at_comparison(&self) -> bool {
        let t = self.peek();
        match t.k {
            K::Op => self.o.cmp[t.sym as usize],
            K::Name => {
                t.sym == self.kw.in_
                    || t.sym == self.kw.is
                    || (t.sym == self.kw.not && {
                        let n = self.b.peek2();
                        n.k == K::Name && n.sym == self.kw.in_
                    })
            }
            _ => false,
        }
    }

    /// Binary operators of precedence `min` and above (precedence climbing; `**` is right
    /// associative), over unary operands.
    fn binary(&mut self, field: u16, min: u8) -> R {
        let x = self.unary(field)?;
        loop {
            let t = self.peek();
            if t.k != K::Op {
                return Ok(x);
            }
            let p = self.o.bin[t.sym as usize];
            if p == 0 || p < min {
                return Ok(x);
            }
            let f = &self.s.f;
            self.b.wrap(x, self.s.k.binary_operator, field, f.left);
            self.b.consume(Some(t.sym), false, f.operator);
            self.binary(f.right, if p == POWER { POWER } else { p + 1 })?;
            self.b.close()?;
        }
    }

    fn unary(&mut self, field: u16) -> R {
        if self.b.depth() > MAX_DEPTH {
            return Err(unsure());
        }
        let t = self.peek();
        if t.k == K::Op && (t.sym == self.o.minus || t.sym == self.o.plus || t.sym == self.o.tilde) {
            self.b.open(self.s.k.unary_operator, field);
            self.b.consume(Some(t.sym), false, self.s.f.operator);
            self.binary(self.s.f.argument, POWER)?;
            return self.b.close();
        }
        self.primary(field)
    }

    /// An atom and its trailers (`.name`, `(args)`, `[subscript]`).
    fn primary(&mut self, field: u16) -> R {
        let x = self.atom(field)?;
        self.trailers(x, field)
    }

    /// Trailers applied to the finished node `x`.
    fn trailers(&mut self, x: usize, field: u16) -> R {
        let (k, f) = (&self.s.k, &self.s.f);
        loop {
            let t = self.peek();
            if t.k != K::Op {
                return Ok(x);
            }
            if t.sym == self.o.dot {
                self.b.wrap(x, k.attribute, field, f.object);
                self.expect(self.o.dot)?;
                self.identifier(f.attribute)?;
                self.b.close()?;
            } else if t.sym == self.o.lparen {
                self.b.wrap(x, k.call, field, f.function);
                self.b.open(k.argument_list, f.arguments);
                self.argument_list_rest()?;
                self.b.close()?;
                self.b.close()?;
            } else if t.sym == self.o.lbrack {
                self.b.wrap(x, k.subscript, field, f.value);
                self.expect(self.o.lbrack)?;
                self.comma_list(self.o.rbrack, Self::subscript_item)?;
                self.expect(self.o.rbrack)?;
                self.b.close()?;
            } else {
                return Ok(x);
            }
        }
    }

    /// `item (, item)* [,]` before `end` (not consumed).
    fn comma_list(&mut self, end: u16, mut item: impl FnMut(&mut Self) -> R<()>) -> R<()> {
        loop {
            item(self)?;
            if !self.is_op(self.o.comma) {
                return Ok(());
            }
            self.expect(self.o.comma)?;
            if self.is_op(end) {
                return Ok(());
            }
        }
    }

    fn subscript_item(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        if self.is_op(self.o.colon) {
            self.b.open(k.slice, f.subscript);
            self.slice_rest()?;
            return self.b.close().map(drop);
        }
        let e = self.expression(f.subscript, Reach::Full)?;
        if self.is_op(self.o.colon) {
            self.b.wrap(e, k.slice, f.subscript, 0);
            self.slice_rest()?;
            self.b.close()?;
        }
        Ok(())
    }

    /// From the first `:` of a slice.
    fn slice_rest(&mut self) -> R<()> {
        self.expect(self.o.colon)?;
        if !self.at_slice_end() {
            self.expression(0, Reach::Full)?;
        }
        if self.is_op(self.o.colon) {
            self.expect(self.o.colon)?;
            if !self.at_slice_end() {
                self.expression(0, Reach::Full)?;
            }
        }
        Ok(())
    }

    fn at_slice_end(&self) -> bool {
        let t = self.peek();
        t.k == K::Op && (t.sym == self.o.comma || t.sym == self.o.rbrack || t.sym == self.o.colon)
    }

    /// From `(` of an argument list already opened (as `argument_list`): its items and `)`;
    /// a lone generator argument turns the node into a `generator_expression`.
    fn argument_list_rest(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        self.expect(self.o.lparen)?;
        let list = self.b.top();
        let mut first = true;
        while !self.is_op(self.o.rparen) {
            let t = self.peek();
            if t.k == K::Op && t.sym == self.o.star {
                self.star_item(0, Star::Full)?;
            } else if t.k == K::Op && t.sym == self.o.dstar {
                self.b.open(k.dictionary_splat, 0);
                self.expect(self.o.dstar)?;
                self.expression(0, Reach::Full)?;
                self.b.close()?;
            } else if t.k == K::Name && {
                let n = self.b.peek2();
                n.k == K::Op && n.sym == self.o.assign
            } {
                let name = self.identifier(0)?;
                self.b.wrap(name, k.keyword_argument, 0, f.name);
                self.expect(self.o.assign)?;
                self.expression(f.value, Reach::Full)?;
                self.b.close()?;
            } else {
                let e = self.expression(0, Reach::Full)?;
                if first && (self.is_kw(self.kw.for_)) {
                    self.comprehension(list, k.generator_expression, e)?;
                    break;
                }
            }
            first = false;
            if !self.is_op(self.o.comma) {
                break;
            }
            self.expect(self.o.comma)?;
        }
        self.expect(self.o.rparen)
    }

    /// The collection `node` (built so far as a list, dictionary, ...) is a comprehension of
    /// `kind` over its first item `body`: its `for`/`if` clauses follow.
    fn comprehension(&mut self, node: usize, kind: u16, body: usize) -> R<()> {
        self.b.relabel(node, kind);
        self.b.set_field(body, self.s.f.body);
        self.comprehension_clauses()
    }

    fn comprehension_clauses(&mut self) -> R<()> {
        let (k, f) = (&self.s.k, &self.s.f);
        loop {
            if self.is_kw(self.kw.for_) {
                self.b.open(k.for_in_clause, 0);
                self.expect(self.kw.for_)?;
                self.targets(f.left)?;
                self.expect(self.kw.in_)?;
                self.expression(f.right, Reach::NoCond)?;
                while self.is_op(self.o.comma) {
                    // The field covers the separators between the items, not a trailing comma.
                    let n = self.b.peek2();
                    let trailing = n.k == K::Op && [self.o.rparen, self.o.rbrack, self.o.rbrace].contains(&n.sym);
                    self.b.consume(Some(self.o.comma), false, if trailing { 0 } else { f.right });
                    if trailing {
                        break;
                    }
                    self.expression(f.right, Reach::NoCond)?;
                }
                self.b.close()?;
            } else if self.is_kw(self.kw.if_) {
                self.b.open(k.if_clause, 0);
                self.expect(self.kw.if_)?;
                self.expression(0, Reach::NoCond)?;
                self.b.close()?;
            } else {
                return Ok(());
            }
        }
    }

    /// Loop targets up to `in`: a pattern or a `pattern_list`.
    fn targets(&mut self, field: u16) -> R<()> {
        let first = self.target(field)?;
        if self.is_op(self.o.comma) {
            self.b.wrap(first, self.s.k.pattern_list, field, 0);
            while self.is_op(self.o.comma) {
                self.expect(self.o.comma)?;
                if self.is_kw(self.kw.in_) {
                    break;
                }
                self.target(0)?;
            }
            self.b.close()?;
        }
        Ok(())
    }

    fn target(&mut self, field: u16) -> R {
        let t = if self.is_op(self.o.star) {
            self.b.open(self.s.k.list_splat, field);
            self.expect(self.o.star)?;
            self.primary(0)?;
            self.b.close()?
        } else {
            self.primary(field)?
        };
        self.relabel_as_pattern(t)?;
        Ok(t)
    }

    fn yield_expr(&mut self, field: u16) -> R {
        self.b.open(self.s.k.yield_, field);
        self.expect(self.kw.yield_)?;
        if self.is_kw(self.kw.from) {
            self.expect(self.kw.from)?;
            self.expression(0, Reach::Full)?;
        } else if !self.at_list_end() {
            self.expressions(0, true)?;
        }
        self.b.close()
    }

    fn atom(&mut self, field: u16) -> R {
        let t = self.peek();
        let k = &self.s.k;
        match t.k {
            K::Name => {
                let kind = if t.sym == k.identifier {
                    k.identifier
                } else if t.sym == self.kw.true_ {
                    k.true_
                } else if t.sym == self.kw.false_ {
                    k.false_
                } else if t.sym == self.kw.none {
                    k.none
                } else {
                    return Err(unsure());
                };
                Ok(self.b.consume(Some(kind), true, field))
            }
            K::Int => Ok(self.b.consume(Some(k.integer), true, field)),
            K::Float => Ok(self.b.consume(Some(k.float), true, field)),
            K::StrStart => {
                let i = self.string(field)?;
                if self.peek().k == K::StrStart {
                    self.b.wrap(i, k.concatenated_string, field, 0);
                    while self.peek().k == K::StrStart {
                        self.string(0)?;
                    }
                    self.b.close()?;
                }
                Ok(i)
            }
            K::Op if t.sym == self.o.ellipsis => Ok(self.b.consume(Some(k.ellipsis), true, field)),
            K::Op if t.sym == self.o.lparen => self.paren(field),
            K::Op if t.sym == self.o.lbrack => self.bracket(field),
            K::Op if t.sym == self.o.lbrace => self.brace(field),
            _ => Err(unsure()),
        }
    }

    /// `(...)`: tuple, parenthesized expression or generator.
    fn paren(&mut self, field: u16) -> R {
        let k = &self.s.k;
        self.b.open(k.parenthesized_expression, field);
        self.expect(self.o.lparen)?;
        let n = self.b.top();
        if self.is_op(self.o.rparen) {
            self.b.relabel(n, k.tuple);
        } else if self.is_kw(self.kw.yield_) {
            self.yield_expr(0)?;
        } else {
            let star = self.is_op(self.o.star);
            let e = self.star_item(0, Star::Full)?;
            if !star && self.is_kw(self.kw.for_) {
                self.comprehension(n, k.generator_expression, e)?;
            } else if self.is_op(self.o.comma) {
                self.b.relabel(n, k.tuple);
                self.collection_rest(self.o.rparen, Star::Full)?;
            } else if star {
                // `(*a)`: a parenthesized_list_splat.
                return Err(unsure());
            }
        }
        self.expect(self.o.rparen)?;
        self.b.close()
    }

    /// After a collection's first element: `, element`... up to (not including) `end`.
    fn collection_rest(&mut self, end: u16, star: Star) -> R<()> {
        while self.is_op(self.o.comma) {
            self.expect(self.o.comma)?;
            if self.is_op(end) {
                break;
            }
            if self.is_kw(self.kw.yield_) {
                self.yield_expr(0)?;
            } else {
                self.star_item(0, star)?;
            }
        }
        Ok(())
    }

    fn bracket(&mut self, field: u16) -> R {
        let k = &self.s.k;
        self.b.open(k.list, field);
        self.expect(self.o.lbrack)?;
        let n = self.b.top();
        if !self.is_op(self.o.rbrack) {
            let star = self.is_op(self.o.star);
            let e = self.star_item(0, Star::List)?;
            if !star && self.is_kw(self.kw.for_) {
                self.comprehension(n, k.list_comprehension, e)?;
            } else {
                self.collection_rest(self.o.rbrack, Star::List)?;
            }
        }
        self.expect(self.o.rbrack)?;
        self.b.close()
    }

    fn brace(&mut self, field: u16) -> R {
        let (k, f) = (&self.s.k, &self.s.f);
        self.b.open(k.dictionary, field);
        self.expect(self.o.lbrace)?;
        let n = self.b.top();
        if self.is_op(self.o.rbrace) {
            self.expect(self.o.rbrace)?;
            return self.b.close();
        }
        if self.is_op(self.o.star) {
            self.b.relabel(n, k.set);
            self.star_item(0, Star::Full)?;
            self.collection_rest(self.o.rbrace, Star::Full)?;
        } else if self.is_op(self.o.dstar) || self.dict_item_follows()? {
            let mut first = true;
            loop {
                if self.is_op(self.o.dstar) {
                    self.b.open(k.dictionary_splat, 0);
                    self.expect(self.o.dstar)?;
                    self.expression(0, Reach::Full)?;
                    self.b.close()?;
                } else {
                    let key = self.expression(f.key, Reach::Full)?;
                    self.b.wrap(key, k.pair, 0, f.key);
                    self.expect(self.o.colon)?;
                    self.expression(f.value, Reach::Full)?;
                    self.b.close()?;
                    if first && self.is_kw(self.kw.for_) {
                        self.comprehension(n, k.dictionary_comprehension, key)?;
                        break;
                    }
                }
                first = false;
                if !self.is_op(self.o.comma) {
                    break;
                }
                self.expect(self.o.comma)?;
                if self.is_op(self.o.rbrace) {
                    break;
                }
            }
        } else {
            let e = self.expression(0, Reach::Full)?;
            if self.is_kw(self.kw.for_) {
                self.comprehension(n, k.set_comprehension, e)?;
            } else {
                self.b.relabel(n, k.set);
                self.collection_rest(self.o.rbrace, Star::Full)?;
            }
        }
        self.expect(self.o.rbrace)?;
        self.b.close()
    }

    /// At the first item of `{...}`: whether a `:` follows the first expression at this depth.
    fn dict_item_follows(&self) -> R<bool> {
        let mut depth = 0i32;
        for t in &self.b.toks[self.b.pos..] {
            if t.k == K::Op {
                if t.sym == self.o.lparen || t.sym == self.o.lbrack || t.sym == self.o.lbrace {
                    depth += 1;
                } else if t.sym == self.o.rparen || t.sym == self.o.rbrack || t.sym == self.o.rbrace {
                    if depth == 0 {
                        return Ok(false);
                    }
                    depth -= 1;
                } else if depth == 0 && t.sym == self.o.colon {
                    return Ok(true);
                } else if depth == 0 && t.sym == self.o.comma {
                    return Ok(false);
                }
            } else if t.k == K::Name && depth == 0 && t.sym == self.kw.for_ {
                return Ok(false);
            } else if t.k == K::Name && depth == 0 && t.sym == self.kw.lambda {
                // A lambda's `:` is not a key's.
                return Err(unsure());
            } else if t.k == K::Eof {
                return Err(unsure());
            }
        }
        Err(unsure())
    }

    fn string(&mut self, field: u16) -> R {
        let (k, f) = (&self.s.k, &self.s.f);
        if self.peek().k != K::StrStart {
            return Err(unsure());
        }
        self.b.open(k.string, field);
        self.b.consume(Some(k.string_start), true, 0);
        loop {
            let t = self.peek();
            match t.k {
                K::StrContent => {
                    let content = self.b.consume(Some(k.string_content), true, 0);
                    while let Some(c) = self.b.toks.get(self.b.pos).filter(|c| matches!(c.k, K::Escape | K::EscInterp | K::Backslash)) {
                        let (kind, named) = match c.k {
                            K::Escape => (k.escape_sequence, true),
                            K::EscInterp => (k.escape_interpolation, true),
                            _ => (self.o.backslash, false),
                        };
                        self.b.consume_kid(content, kind, named);
                    }
                }
                K::StrEnd => {
                    self.b.consume(Some(k.string_end), true, 0);
                    break;
                }
                K::Op if t.sym == self.o.lbrace => {
                    self.b.open(k.interpolation, 0);
                    self.expect(self.o.lbrace)?;
                    if self.is_kw(self.kw.yield_) {
                        return Err(unsure());
                    }
                    self.expressions(f.expression, true)?;
                    if self.is_op(self.o.assign) {
                        self.expect(self.o.assign)?;
                    }
                    if self.peek().k == K::TypeConv {
                        self.b.consume(Some(k.type_conversion), true, f.type_conversion);
                    }
                    if self.is_op(self.o.colon) {
                        self.b.open(k.format_specifier, f.format_specifier);
                        self.expect(self.o.colon)?;
                        if self.peek().k == K::FmtText {
                            self.b.consume(None, false, 0);
                        }
                        self.b.close()?;
                    }
                    self.expect(self.o.rbrace)?;
                    self.b.close()?;
                }
                _ => return Err(unsure()),
            }
        }
        self.b.close()
    }

    /// `name[type, ...]`.
    fn generic_type(&mut self) -> R {
        let k = &self.s.k;
        self.b.open(k.generic_type, 0);
        self.identifier(0)?;
        self.b.open(k.type_parameter, 0);
        self.expect(self.o.lbrack)?;
        self.comma_list(self.o.rbrack, |p| p.type_(0))?;
        self.expect(self.o.rbrack)?;
        self.b.close()?;
        self.b.close()
    }

    /// A `type` node (annotations, return types).
    fn type_(&mut self, field: u16) -> R<()> {
        let k = &self.s.k;
        self.b.open(k.type_, field);
        let t = self.peek();
        let generic = t.k == K::Name && t.sym == k.identifier && {
            let n = self.b.peek2();
            n.k == K::Op && n.sym == self.o.lbrack
        };
        if generic {
            // `G[...]`, and after it `| X` unions (left-associative, each side its own `type`).
            let mut left = self.generic_type()?;
            while self.is_op(self.o.bar) {
                self.b.wrap(left, k.type_, 0, 0);
                self.b.close()?;
                left = self.b.wrap(left, k.union_type, 0, 0);
                self.expect(self.o.bar)?;
                self.b.open(k.type_, 0);
                let generic = self.peek().k == K::Name && self.b.peek2().k == K::Op && self.b.peek2().sym == self.o.lbrack;
                if generic {
                    self.generic_type()?;
                } else {
                    // Any other right side is an expression that takes the rest (`None | int`).
                    self.expression(0, Reach::Full)?;
                }
                self.b.close()?;
                self.b.close()?;
                if !generic {
                    break;
                }
            }
            // What else may follow a generic type inside a larger type is not modelled.
            let n = self.peek();
            let done = n.k == K::Newline
                || (n.k == K::Op && [self.o.comma, self.o.rparen, self.o.assign, self.o.colon, self.o.rbrack].contains(&n.sym));
            if !done {
                return Err(unsure());
            }
        } else {
            if t.k == K::Op && (t.sym == self.o.star || t.sym == self.o.dstar) {
                return Err(unsure());
            }
            self.expression(0, Reach::Full)?;
        }
        self.b.close().map(drop)
    }
}
