//! Normalisation: the EBNF-level [`Grammar`] → a plain BNF [`Cfg`].
//!
//! The principal type is [`Cfg`]: symbols are terminals (the grammar's own [`TerminalId`]s, so
//! the lexer's ids and the parser's agree) and nonterminals ([`NonterminalId`]), and every
//! [`Production`] is a flat `lhs -> rhs` with `rhs: Vec<Symbol>`.
//!
//! [`normalize`] runs these passes, in this order; each module states what holds after it:
//!
//! 1. [`lower`]: `Optional`/`Star`/`Plus`/`Repeat`/`Alt`/`Seq` are expanded. After it: every
//!    production is a flat symbol sequence; tree-shaping marks (`?rule`, `!rule`, `_rule`,
//!    aliases) are gone, since they do not change which texts are recognised.
//! 2. [`reduce`]: unproductive and unreachable symbols are removed; productions that use an
//!    `%ignore`d terminal count as unproductive (the parser never sees one). After it: every
//!    nonterminal is reachable from the start and derives some string of terminals that are not
//!    ignored (or the language is empty and the start has no productions).
//! 3. [`analysis`]: nullable nonterminals and FIRST sets are computed (no change to the CFG).
//!
//! [`patterns`] then checks that every terminal the reduced CFG uses has a pattern, so that a
//! grammar needing a terminal munch's lexer cannot produce (Python's `%declare`d `_INDENT`) is
//! refused when the parser is built instead of answering wrongly.
//!
//! The passes' tests are in `glr/tests/cfg_passes.rs`, one module per pass, with grammars in
//! the test kit's DSL (`munch_testkit::dsl`).

pub mod analysis;
pub mod lower;
pub mod patterns;
pub mod reduce;
pub mod split;

use std::fmt;
use std::ops::Range;

use munch_lexer::TerminalId;

use crate::grammar::{Grammar, RuleId};

munch_vocab::define_id!(
    /// A nonterminal of a [`Cfg`], an index into [`Cfg::nonterminals`]: the grammar's rules keep
    /// their [`RuleId`] index, helper nonterminals made by [`lower`] come after them.
    NonterminalId
);

/// A grammar symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Symbol {
    /// A terminal, with the grammar's (and the lexer's) id.
    Terminal(TerminalId),
    /// A nonterminal.
    Nonterminal(NonterminalId),
}

/// One BNF production `lhs -> rhs`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Production {
    /// The left-hand side.
    pub lhs: NonterminalId,
    /// The right-hand side; empty for an ε-production.
    pub rhs: Vec<Symbol>,
}

/// Where a nonterminal comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A rule of the grammar.
    Rule(RuleId),
    /// A helper made by [`lower`] while expanding an EBNF operator inside that rule.
    Helper(RuleId),
}

/// One nonterminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nonterminal {
    /// Name for diagnostics: the rule's name, or `rule__plus_3` style for helpers.
    pub name: String,
    /// Where it comes from.
    pub origin: Origin,
}

/// A plain BNF context-free grammar over the grammar's terminals.
///
/// Productions are sorted by left-hand side (then right-hand side) and have no duplicates, so the
/// productions of one nonterminal are a contiguous range ([`Cfg::productions_of`]).
#[derive(Clone, Debug)]
pub struct Cfg {
    terminal_names: Vec<String>,
    nonterminals: Vec<Nonterminal>,
    productions: Vec<Production>,
    start: NonterminalId,
    by_lhs: Vec<Range<u32>>,
}

/// Why a grammar could not be normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NormalizeError {
    kind: NormalizeErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum NormalizeErrorKind {
    TooLarge { limit: usize },
    TooDeep { rule: String, limit: usize },
    BadId { rule: String },
}

impl NormalizeError {
    pub(crate) fn too_large(limit: usize) -> Self {
        Self {
            kind: NormalizeErrorKind::TooLarge { limit },
        }
    }
    pub(crate) fn too_deep(rule: &str, limit: usize) -> Self {
        Self {
            kind: NormalizeErrorKind::TooDeep {
                rule: rule.to_string(),
                limit,
            },
        }
    }
    pub(crate) fn bad_id(rule: &str) -> Self {
        Self {
            kind: NormalizeErrorKind::BadId {
                rule: rule.to_string(),
            },
        }
    }
}

impl fmt::Display for NormalizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            NormalizeErrorKind::TooLarge { limit } => write!(
                f,
                "the grammar expands to more than {limit} right-hand-side symbols \
                 (budget `max_cfg_symbols`); check `~ n..m` repetitions"
            ),
            NormalizeErrorKind::TooDeep { rule, limit } => write!(
                f,
                "rule `{rule}` nests expressions deeper than {limit} levels"
            ),
            NormalizeErrorKind::BadId { rule } => write!(
                f,
                "rule `{rule}` refers to a terminal or rule id that does not exist"
            ),
        }
    }
}

impl std::error::Error for NormalizeError {}

/// Budgets for [`normalize`].
#[derive(Clone, Debug)]
pub struct NormalizeConfig {
    /// Most right-hand-side symbols (summed over productions) the expansion may produce.
    pub max_cfg_symbols: usize,
}

impl Default for NormalizeConfig {
    fn default() -> Self {
        Self {
            max_cfg_symbols: 2_000_000,
        }
    }
}

/// Runs the passes in order: [`lower`], [`reduce`]. ([`analysis`] is computed on demand by its
/// users.)
pub fn normalize(grammar: &Grammar, config: &NormalizeConfig) -> Result<Cfg, NormalizeError> {
    let lowered = lower::lower(grammar, config)?;
    let ignored: Vec<bool> = grammar.terminals.iter().map(|t| t.ignored).collect();
    Ok(reduce::reduce_ignoring(&lowered, &ignored))
}

impl Cfg {
    /// Builds a CFG from parts: productions are sorted and deduplicated. Every id must be in
    /// range (checked by the passes that call this).
    pub(crate) fn from_parts(
        terminal_names: Vec<String>,
        nonterminals: Vec<Nonterminal>,
        mut productions: Vec<Production>,
        start: NonterminalId,
    ) -> Self {
        productions.sort();
        productions.dedup();
        let mut by_lhs = vec![0..0; nonterminals.len()];
        let mut i = 0;
        while i < productions.len() {
            let lhs = productions[i].lhs.as_usize();
            let mut j = i;
            while j < productions.len() && productions[j].lhs.as_usize() == lhs {
                j += 1;
            }
            by_lhs[lhs] = i as u32..j as u32;
            i = j;
        }
        Self {
            terminal_names,
            nonterminals,
            productions,
            start,
            by_lhs,
        }
    }

    /// Adds a terminal that no production holds (a lexer's stand-in, see
    /// [`munch_lexer::dfa::Lexer::with_stand_ins`]), numbered after the others.
    pub(crate) fn add_terminal(&mut self, name: String) -> TerminalId {
        self.terminal_names.push(name);
        TerminalId::from_usize(self.terminal_names.len() - 1)
    }

    /// The number of terminals (the grammar's; ids below this are valid).
    pub fn terminal_len(&self) -> usize {
        self.terminal_names.len()
    }

    /// The name of terminal `t`.
    pub fn terminal_name(&self, t: TerminalId) -> &str {
        &self.terminal_names[t.as_usize()]
    }

    /// The number of nonterminals.
    pub fn nonterminal_len(&self) -> usize {
        self.nonterminals.len()
    }

    /// All nonterminals, indexed by [`NonterminalId`].
    pub fn nonterminals(&self) -> &[Nonterminal] {
        &self.nonterminals
    }

    /// Nonterminal `n`.
    pub fn nonterminal(&self, n: NonterminalId) -> &Nonterminal {
        &self.nonterminals[n.as_usize()]
    }

    /// All productions, sorted by left-hand side.
    pub fn productions(&self) -> &[Production] {
        &self.productions
    }

    /// The indices (into [`Cfg::productions`]) of the productions of `n`.
    pub fn productions_of(&self, n: NonterminalId) -> Range<usize> {
        let r = &self.by_lhs[n.as_usize()];
        r.start as usize..r.end as usize
    }

    /// The start nonterminal.
    pub fn start(&self) -> NonterminalId {
        self.start
    }

    /// Whether the language is empty (the start derives no terminal string).
    pub fn is_empty_language(&self) -> bool {
        self.productions_of(self.start).is_empty()
    }

    /// The name of a symbol, for diagnostics.
    pub fn symbol_name(&self, s: Symbol) -> &str {
        match s {
            Symbol::Terminal(t) => self.terminal_name(t),
            Symbol::Nonterminal(n) => &self.nonterminal(n).name,
        }
    }

    /// Renders production `p` as `lhs -> a b c` (`lhs -> ε` when empty).
    pub fn display_production(&self, p: usize) -> String {
        let prod = &self.productions[p];
        let mut s = format!("{} ->", self.nonterminal(prod.lhs).name);
        if prod.rhs.is_empty() {
            s.push_str(" ε");
        }
        for &sym in &prod.rhs {
            s.push(' ');
            s.push_str(self.symbol_name(sym));
        }
        s
    }
}

impl fmt::Display for Cfg {
    /// One production per line, in order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in 0..self.productions.len() {
            writeln!(f, "{}", self.display_production(p))?;
        }
        Ok(())
    }
}
