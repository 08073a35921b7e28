//! The grammar model: what the Lark front end produces and normalisation consumes.
//!
//! A [`Grammar`] is EBNF-level: each rule has one [`Expr`] (alternatives, sequences, `?`, `*`,
//! `+`, bounded repetition) over terminals and rules. Templates are already instantiated,
//! `%import`s resolved, `%override`/`%extend` applied, and every terminal's pattern inlined into
//! one `regex-syntax` HIR (terminals made of other terminals are expanded), so the lexer can be
//! built from [`Grammar::terminal_specs`] without knowing anything about Lark.
//!
//! Invariants a `Grammar` upholds (the front end checks them and reports located errors):
//! - every [`TerminalId`] and [`RuleId`] in an expression is in range;
//! - the terminal list holds exactly the terminals some rule reachable from `start` uses, plus the
//!   `%ignore`d ones and `%declare`d ones that are used (in that id space, anonymous literals such
//!   as `"if"` inside rules are terminals too, deduplicated by pattern);
//! - no terminal pattern matches the empty string;
//! - every rule reachable from `start` derives some finite string.

use munch_lexer::TerminalId;
use regex_syntax::hir::Hir;

use crate::span::Span;

munch_vocab::define_id!(
    /// A rule (nonterminal) of the grammar: an index into [`Grammar::rules`].
    RuleId
);

/// A context-free grammar with lexical terminals, as loaded from Lark.
#[derive(Clone, Debug)]
pub struct Grammar {
    /// Terminals, indexed by [`TerminalId`].
    pub terminals: Vec<Terminal>,
    /// Rules, indexed by [`RuleId`].
    pub rules: Vec<Rule>,
    /// The start rule (Lark's `start` unless configured otherwise).
    pub start: RuleId,
}

/// One terminal.
#[derive(Clone, Debug)]
pub struct Terminal {
    /// The terminal's name: the Lark name (`NAME`, `_NL`), or Lark's generated name for an
    /// anonymous literal (`IF`, `LPAR`, `__ANON_3`).
    pub name: String,
    /// The pattern, or why there is none (a `%declare`d terminal, or a regex feature such as
    /// look-around that a DFA lexer cannot express). The lexer never produces a terminal
    /// without a pattern; loading succeeds, and building a parser for a grammar that uses one
    /// reports it.
    pub pattern: Result<TerminalPattern, NoPattern>,
    /// Lexer priority (`NAME.2` → 2; default 0). Higher wins a tie on the same lexeme.
    pub priority: i32,
    /// Whether `%ignore` names this terminal: it separates lexemes and reaches no parser.
    pub ignored: bool,
    /// Where the terminal is defined (for anonymous literals: its first use).
    pub span: Span,
}

/// Why a terminal has no pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoPattern {
    /// `%declare`d: produced by something other than the lexer (Python's `_INDENT`).
    Declared,
    /// The regex uses a feature a DFA cannot express; the string says which (e.g.
    /// "look-ahead `(?!...)`").
    Unsupported(String),
}

/// A terminal's pattern.
#[derive(Clone, Debug)]
pub struct TerminalPattern {
    /// The pattern over Unicode text (the lexer compiles it to UTF-8 bytes). Case-insensitive
    /// literals and regex flags are already folded in.
    pub hir: Hir,
    /// `true` when the terminal is a plain string literal (possibly `i`), which beats a regex on
    /// a tie of the same lexeme (keywords over identifiers).
    pub is_literal: bool,
    /// The pattern as written, for diagnostics (`"if"`, `/[a-z]+/i`).
    pub source: String,
}

/// One rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The rule's name as written (templates instantiated get a name such as `sep{item,COMMA}`, as Lark names them).
    pub name: String,
    /// The rule's body.
    pub expr: Expr,
    /// Rule priority (`rule.2`); orders results, never changes the language.
    pub priority: i32,
    /// `?rule`: inlined into its parent when it has one child (tree shaping only).
    pub expand_single: bool,
    /// `_rule`: always inlined (tree shaping only).
    pub inline: bool,
    /// `!rule`: keep all tokens (tree shaping only).
    pub keep_all_tokens: bool,
    /// Where the rule is defined.
    pub span: Span,
}

/// A rule body, EBNF-level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// The empty sequence.
    Empty,
    /// A terminal.
    Terminal(TerminalId),
    /// A rule.
    Rule(RuleId),
    /// A sequence, in order.
    Seq(Vec<Expr>),
    /// Alternatives; each may carry a `-> alias` (tree shaping only).
    Alt(Vec<Alternative>),
    /// `[x]` or `x?`: zero or one.
    Optional(Box<Expr>),
    /// `x*`.
    Star(Box<Expr>),
    /// `x+`.
    Plus(Box<Expr>),
    /// `x ~ min..max` (also `x ~ n`, with `min == max`).
    Repeat {
        /// The repeated expression.
        expr: Box<Expr>,
        /// Least number of repetitions.
        min: u32,
        /// Greatest number of repetitions (`>= min`).
        max: u32,
    },
}

/// One alternative of an [`Expr::Alt`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alternative {
    /// The alternative's body.
    pub expr: Expr,
    /// `-> alias`, if any.
    pub alias: Option<String>,
}

impl Grammar {
    /// The number of terminals.
    pub fn terminal_len(&self) -> usize {
        self.terminals.len()
    }

    /// The number of rules.
    pub fn rule_len(&self) -> usize {
        self.rules.len()
    }

    /// The terminal with id `id`.
    pub fn terminal(&self, id: TerminalId) -> &Terminal {
        &self.terminals[id.as_usize()]
    }

    /// The rule with id `id`.
    pub fn rule(&self, id: RuleId) -> &Rule {
        &self.rules[id.as_usize()]
    }

    /// The terminals without a pattern (`%declare`d ones such as Python's `_INDENT`, or regexes
    /// with look-around), which munch's lexer cannot produce.
    pub fn terminals_without_pattern(&self) -> impl Iterator<Item = (TerminalId, &NoPattern)> + '_ {
        self.terminals.iter().enumerate().filter_map(|(i, t)| {
            t.pattern
                .as_ref()
                .err()
                .map(|why| (TerminalId::from_usize(i), why))
        })
    }

    /// The lexer's view of the terminals, in [`TerminalId`] order.
    pub fn terminal_specs(&self) -> Vec<munch_lexer::dfa::TerminalSpec> {
        self.terminals
            .iter()
            .map(|t| munch_lexer::dfa::TerminalSpec {
                name: t.name.clone(),
                hir: t.pattern.as_ref().ok().map(|p| p.hir.clone()),
                is_literal: t.pattern.as_ref().is_ok_and(|p| p.is_literal),
                priority: t.priority,
                ignored: t.ignored,
            })
            .collect()
    }
}
