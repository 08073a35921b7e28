//! The syntax tree of a Lark grammar file, as parsed (names unresolved, literals unescaped).
//!
//! Positions are byte ranges (`start..end`) into the source; they become [`crate::span::Span`]s
//! only where a span is reported. Nesting depth is bounded by the parser
//! ([`super::LoadConfig::max_nesting`]), so recursive walks over these trees are stack-safe.

/// A byte range of the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl Pos {
    pub(crate) fn to(self, other: Pos) -> Pos {
        Pos {
            start: self.start,
            end: other.end.max(self.start),
        }
    }
}

/// A name as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Name {
    pub(crate) text: String,
    pub(crate) pos: Pos,
}

/// A grammar file: its statements in order.
#[derive(Debug, Default)]
pub(crate) struct File {
    pub(crate) items: Vec<Item>,
}

/// One statement.
#[derive(Debug)]
pub(crate) enum Item {
    Rule(RuleDef),
    Term(TermDef),
    /// `%override` of a rule or terminal.
    Override(Def),
    /// `%extend` of a rule or terminal.
    Extend(Def),
    /// `%ignore` with its expression.
    Ignore(Expansions),
    Import(Import),
    /// `%declare` with its names, each with whether it is a terminal (kept here because an
    /// imported name's case no longer says: `python__NAME` is a terminal).
    Declare(Vec<(Name, bool)>),
}

/// A rule or terminal definition (for `%override` and `%extend`).
#[derive(Debug)]
pub(crate) enum Def {
    Rule(RuleDef),
    Term(TermDef),
}

/// `?!name{params}.priority: body`.
#[derive(Debug)]
pub(crate) struct RuleDef {
    pub(crate) name: Name,
    /// `?`: inline when it has one child.
    pub(crate) expand_single: bool,
    /// `!`: keep all tokens.
    pub(crate) keep_all_tokens: bool,
    /// The modifiers token, if any (for the `?_rule` error).
    pub(crate) modifiers: Option<Pos>,
    /// Template parameters (empty for a plain rule).
    pub(crate) params: Vec<Name>,
    pub(crate) priority: Option<Number>,
    pub(crate) body: Expansions,
}

/// `NAME.priority: body`.
#[derive(Debug)]
pub(crate) struct TermDef {
    pub(crate) name: Name,
    pub(crate) priority: Option<Number>,
    pub(crate) body: Expansions,
}

/// A number as written (`[+-]?[0-9]+`), parsed when it fits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Number {
    /// `None` when it does not fit an `i64`.
    pub(crate) value: Option<i64>,
    /// Written with a leading `-` (the sign of a value that does not fit).
    pub(crate) negative: bool,
    pub(crate) pos: Pos,
}

/// `%import path.NAME [-> ALIAS]` or `%import path (A, B)`.
#[derive(Debug)]
pub(crate) struct Import {
    /// `.` before the path: relative import.
    pub(crate) relative: bool,
    /// The module path (`common`).
    pub(crate) module: Vec<Name>,
    /// (name, alias) pairs.
    pub(crate) names: Vec<(Name, Option<Name>)>,
    pub(crate) pos: Pos,
}

/// Alternatives: `a | b -> x | c`.
#[derive(Debug)]
pub(crate) struct Expansions {
    pub(crate) alts: Vec<Alt>,
    pub(crate) pos: Pos,
}

/// One alternative: a sequence with an optional alias.
#[derive(Debug)]
pub(crate) struct Alt {
    pub(crate) items: Vec<Expr>,
    pub(crate) alias: Option<Name>,
    pub(crate) pos: Pos,
}

/// An atom with an optional operator.
#[derive(Debug)]
pub(crate) struct Expr {
    pub(crate) atom: Atom,
    pub(crate) op: Option<Op>,
    pub(crate) pos: Pos,
}

/// A postfix operator.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    /// `?`
    Opt,
    /// `*`
    Star,
    /// `+`
    Plus,
    /// `~ min` or `~ min..max`.
    Repeat { min: Number, max: Number },
}

/// An atom.
#[derive(Debug)]
pub(crate) enum Atom {
    /// `( … )`
    Group(Expansions),
    /// `[ … ]`
    Maybe(Expansions),
    Value(Value),
}

/// A value: a name, a template use, a literal or a range.
#[derive(Debug)]
pub(crate) enum Value {
    Terminal(Name),
    Rule(Name),
    /// `name{arg, …}`
    Template {
        name: Name,
        args: Vec<Value>,
        pos: Pos,
    },
    Literal(Literal),
    /// `"a".."z"`
    Range {
        from: Literal,
        to: Literal,
        pos: Pos,
    },
}

impl Value {
    pub(crate) fn pos(&self) -> Pos {
        match self {
            Value::Terminal(n) | Value::Rule(n) => n.pos,
            Value::Template { pos, .. } | Value::Range { pos, .. } => *pos,
            Value::Literal(l) => l.pos,
        }
    }
}

/// Whether a literal is a string or a regex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LitKind {
    Str,
    Regex,
}

/// A string or regex literal as written (`raw` includes quotes or slashes, and flags).
#[derive(Debug, Clone)]
pub(crate) struct Literal {
    pub(crate) kind: LitKind,
    pub(crate) raw: String,
    pub(crate) pos: Pos,
}

impl Literal {
    /// The text between the delimiters.
    pub(crate) fn body(&self) -> &str {
        let close = self.raw.rfind(['"', '/']).unwrap_or(0);
        self.raw.get(1..close).unwrap_or("")
    }

    /// The flags after the closing delimiter.
    pub(crate) fn flags(&self) -> &str {
        let close = self.raw.rfind(['"', '/']).unwrap_or(0);
        self.raw.get(close + 1..).unwrap_or("")
    }
}
