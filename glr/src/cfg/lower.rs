//! Pass 1: EBNF expressions → flat BNF productions.
//!
//! After this pass every production is `lhs -> symbol*`; rule `i` of the grammar is nonterminal
//! `i`, helpers come after. Tree-shaping marks (`?rule`, `!rule`, `_rule`, `-> alias`) and rule
//! priorities are dropped: they never change which texts are recognised. `A -> A` productions are
//! dropped too (they add no string).
//!
//! How each operator becomes BNF, chosen so that LALR(1) tables stay as deterministic as Lark's
//! for the grammars written for Lark:
//!
//! - `Alt` and `Optional` inside a sequence are distributed (`a [b] c` → `a b c | a c`), as Lark
//!   does, as long as one sequence yields at most [`DISTRIBUTE_LIMIT`] alternatives; past that the
//!   widest operands become helper nonterminals, so the expansion stays linear.
//! - `x+` → helper `P -> x | P x` (left-recursive, so LR stacks stay shallow); `x*` → `(x+)?`.
//! - `x ~ n..m` → `n` copies of `x`, then a chain of `m - n` nested optional helpers.
//!
//! Expression nesting is bounded by [`MAX_NESTING`] (the recursion here is on the Rust stack) and
//! the total size by [`NormalizeConfig::max_cfg_symbols`].

use munch_lexer::TerminalId;

use super::{Cfg, NonterminalId, NormalizeConfig, NormalizeError, Origin, Production, Symbol};
use crate::grammar::{Expr, Grammar, RuleId};

/// The most alternatives one sequence may distribute into before helpers are introduced.
pub const DISTRIBUTE_LIMIT: usize = 16;

/// The deepest expression nesting accepted.
pub const MAX_NESTING: usize = 200;

type Alts = Vec<Vec<Symbol>>;

struct Lowerer<'g> {
    grammar: &'g Grammar,
    nonterminals: Vec<super::Nonterminal>,
    productions: Vec<Production>,
    symbols: usize,
    limit: usize,
    rule: RuleId,
    helper_count: usize,
}

/// Lowers `grammar` to BNF (no symbol is removed: see [`super::reduce`]).
pub fn lower(grammar: &Grammar, config: &NormalizeConfig) -> Result<Cfg, NormalizeError> {
    let mut nonterminals = Vec::with_capacity(grammar.rules.len());
    for (i, rule) in grammar.rules.iter().enumerate() {
        let id = RuleId::new(i).ok_or_else(|| NormalizeError::too_large(u32::MAX as usize))?;
        nonterminals.push(super::Nonterminal {
            name: rule.name.clone(),
            origin: Origin::Rule(id),
        });
    }
    if grammar.start.as_usize() >= grammar.rules.len() {
        return Err(NormalizeError::bad_id("<start>"));
    }
    let mut l = Lowerer {
        grammar,
        nonterminals,
        productions: Vec::new(),
        symbols: 0,
        limit: config.max_cfg_symbols,
        rule: grammar.start,
        helper_count: 0,
    };
    for (i, rule) in grammar.rules.iter().enumerate() {
        l.rule = RuleId::new(i).expect("checked above");
        l.helper_count = 0;
        let alts = l.alts(&rule.expr, 0)?;
        let lhs = NonterminalId::from_usize(i);
        for rhs in alts {
            l.push(lhs, rhs)?;
        }
    }
    let terminal_names = grammar.terminals.iter().map(|t| t.name.clone()).collect();
    Ok(Cfg::from_parts(
        terminal_names,
        l.nonterminals,
        l.productions,
        NonterminalId::from_usize(grammar.start.as_usize()),
    ))
}

impl Lowerer<'_> {
    fn rule_name(&self) -> &str {
        &self.grammar.rules[self.rule.as_usize()].name
    }

    fn push(&mut self, lhs: NonterminalId, rhs: Vec<Symbol>) -> Result<(), NormalizeError> {
        if rhs.len() == 1 && rhs[0] == Symbol::Nonterminal(lhs) {
            return Ok(());
        }
        self.charge(rhs.len() + 1)?;
        self.productions.push(Production { lhs, rhs });
        Ok(())
    }

    fn charge(&mut self, n: usize) -> Result<(), NormalizeError> {
        self.symbols = self.symbols.saturating_add(n);
        if self.symbols > self.limit {
            Err(NormalizeError::too_large(self.limit))
        } else {
            Ok(())
        }
    }

    fn helper(&mut self, what: &str) -> Result<NonterminalId, NormalizeError> {
        self.helper_count += 1;
        let name = format!("{}__{}{}", self.rule_name(), what, self.helper_count);
        let id = NonterminalId::new(self.nonterminals.len())
            .ok_or_else(|| NormalizeError::too_large(self.limit))?;
        self.nonterminals.push(super::Nonterminal {
            name,
            origin: Origin::Helper(self.rule),
        });
        Ok(id)
    }

    /// A single symbol standing for all of `alts` (a helper unless it already is one symbol).
    fn as_symbol(&mut self, alts: Alts, what: &str) -> Result<Symbol, NormalizeError> {
        if alts.len() == 1 && alts[0].len() == 1 {
            return Ok(alts[0][0]);
        }
        let h = self.helper(what)?;
        for rhs in alts {
            self.push(h, rhs)?;
        }
        Ok(Symbol::Nonterminal(h))
    }

    fn alts(&mut self, e: &Expr, depth: usize) -> Result<Alts, NormalizeError> {
        if depth > MAX_NESTING {
            return Err(NormalizeError::too_deep(self.rule_name(), MAX_NESTING));
        }
        Ok(match e {
            Expr::Empty => vec![vec![]],
            Expr::Terminal(t) => {
                if t.as_usize() >= self.grammar.terminals.len() {
                    return Err(NormalizeError::bad_id(self.rule_name()));
                }
                vec![vec![Symbol::Terminal(TerminalId::from_usize(t.as_usize()))]]
            }
            Expr::Rule(r) => {
                if r.as_usize() >= self.grammar.rules.len() {
                    return Err(NormalizeError::bad_id(self.rule_name()));
                }
                vec![vec![Symbol::Nonterminal(NonterminalId::from_usize(
                    r.as_usize(),
                ))]]
            }
            Expr::Alt(alternatives) => {
                let mut out = Vec::new();
                for a in alternatives {
                    out.extend(self.alts(&a.expr, depth + 1)?);
                }
                out
            }
            Expr::Optional(x) => {
                let mut out = self.alts(x, depth + 1)?;
                if !out.iter().any(|a| a.is_empty()) {
                    out.push(vec![]);
                }
                out
            }
            Expr::Plus(x) => {
                let sym = self.plus(x, depth)?;
                vec![vec![sym]]
            }
            Expr::Star(x) => {
                let sym = self.plus(x, depth)?;
                vec![vec![sym], vec![]]
            }
            Expr::Repeat { expr, min, max } => self.repeat(expr, *min, *max, depth)?,
            Expr::Seq(items) => {
                let mut parts = Vec::with_capacity(items.len());
                for item in items {
                    parts.push(self.alts(item, depth + 1)?);
                }
                self.distribute(parts)?
            }
        })
    }

    /// `x+` as a left-recursive helper `P -> x | P x`.
    fn plus(&mut self, x: &Expr, depth: usize) -> Result<Symbol, NormalizeError> {
        let inner = self.alts(x, depth + 1)?;
        let p = self.helper("plus")?;
        for rhs in &inner {
            self.push(p, rhs.clone())?;
            let mut rec = Vec::with_capacity(rhs.len() + 1);
            rec.push(Symbol::Nonterminal(p));
            rec.extend_from_slice(rhs);
            self.push(p, rec)?;
        }
        Ok(Symbol::Nonterminal(p))
    }

    fn repeat(
        &mut self,
        x: &Expr,
        min: u32,
        max: u32,
        depth: usize,
    ) -> Result<Alts, NormalizeError> {
        let (min, max) = (min as usize, (max as usize).max(min as usize));
        // Charge before allocating: `min` copies plus the optional chain.
        self.charge(min.saturating_add(2 * (max - min)))?;
        if max == 0 {
            return Ok(vec![vec![]]);
        }
        let inner = self.alts(x, depth + 1)?;
        let sym = self.as_symbol(inner, "rep")?;
        let mut seq = vec![sym; min];
        // O_1 -> ε | x ; O_k -> ε | x O_{k-1}: at most `max - min` more copies.
        let mut tail: Option<Symbol> = None;
        for _ in min..max {
            let o = self.helper("upto")?;
            self.push(o, vec![])?;
            let mut rhs = vec![sym];
            rhs.extend(tail);
            self.push(o, rhs)?;
            tail = Some(Symbol::Nonterminal(o));
        }
        seq.extend(tail);
        Ok(vec![seq])
    }

    /// The cartesian product of the parts, turning the widest parts into helpers until the
    /// product is at most [`DISTRIBUTE_LIMIT`].
    fn distribute(&mut self, mut parts: Vec<Alts>) -> Result<Alts, NormalizeError> {
        loop {
            let product = parts
                .iter()
                .try_fold(1usize, |acc, p| acc.checked_mul(p.len()))
                .unwrap_or(usize::MAX);
            if product <= DISTRIBUTE_LIMIT {
                break;
            }
            let (widest, _) = parts
                .iter()
                .enumerate()
                .max_by_key(|(_, p)| p.len())
                .expect("a product above the limit has parts");
            let alts = std::mem::take(&mut parts[widest]);
            let sym = self.as_symbol(alts, "group")?;
            parts[widest] = vec![vec![sym]];
        }
        // Each of the (at most DISTRIBUTE_LIMIT) sequences is built once, the last part varying
        // fastest; extending partial products part by part would copy every prefix again for
        // each part (quadratic in a long sequence).
        let product: usize = parts.iter().map(Vec::len).product();
        let mut digits = vec![0usize; parts.len()];
        let mut out: Alts = Vec::with_capacity(product);
        for mut index in 0..product {
            for (digit, part) in digits.iter_mut().zip(&parts).rev() {
                *digit = index % part.len();
                index /= part.len();
            }
            let len = parts.iter().zip(&digits).map(|(p, &d)| p[d].len()).sum();
            let mut seq = Vec::with_capacity(len);
            for (part, &d) in parts.iter().zip(&digits) {
                seq.extend_from_slice(&part[d]);
            }
            out.push(seq);
        }
        Ok(out)
    }
}
