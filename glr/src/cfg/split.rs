//! A literal read as copies of a shorter one: the CFG in which a lexeme of the literal `long`,
//! which spells `copies` copies of the literal `short` (`"..."` and `"."`), may stand for those
//! copies.
//!
//! Lark's contextual lexer reads `from ... import x` as three `"."`: after `from` the parser
//! has no action on `"..."`, so that terminal is not among the ones it matches there. munch
//! lexes without the parser, so `"..."` is one lexeme. `split` gives the parser a grammar
//! whose sentences are the original ones with any run of `copies` consecutive `short`s
//! written as one `long`, so every masker, which only sees a CFG and the lexer, follows.
//! The parser applies it to a pair only where no LR state that has an action on `long` can
//! shift all the copies (`Parser::split_literals`): then on every stack at most one of the two
//! readings of a `long` lexeme survives it, so "any reading that parses" is "the literal where
//! the parser has an action on it, else the copies", which is the contextual lexer's choice.
//!
//! The construction is the product of the CFG with a small automaton over its terminals
//! (Bar-Hillel's): state `0` is free, state `c > 0` owes `c` more copies of `short` to a `long`
//! already written. A `short` leaf is written as itself (`0 → 0`), begins a `long`
//! (`0 → copies - 1`, written as `long`) or continues one (`c → c - 1`, written as nothing);
//! every other terminal needs state `0`. Nonterminal `A` becomes `A[p, q]` for each pair of
//! states its leaves can go between; `A[0, 0]` keeps `A`'s id, so a grammar in which no
//! `long` may stand for copies keeps its nonterminals and productions.

use std::collections::{HashMap, VecDeque};

use munch_lexer::TerminalId;
use smallvec::SmallVec;

use super::{Cfg, Nonterminal, NonterminalId, NormalizeError, Production, Symbol};

/// A literal that may stand for copies of a shorter literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitLiteral {
    /// The longer literal (`"..."`).
    pub long: TerminalId,
    /// The shorter literal (`"."`).
    pub short: TerminalId,
    /// How many copies of `short` spell `long` (at least 2).
    pub copies: u8,
}

/// The most copies `split` takes (the product has `copies²` versions of a nonterminal at
/// most).
pub const MAX_COPIES: u8 = 8;

/// The states a leaf of terminal `t` goes to from `from`, each with what it is written as
/// (nothing for a copy inside a `long` written before).
fn steps(s: &SplitLiteral, t: TerminalId, from: u8) -> SmallVec<[(u8, Option<TerminalId>); 2]> {
    let mut out = SmallVec::new();
    if t == s.short {
        if from == 0 {
            out.push((0, Some(t)));
            out.push((s.copies - 1, Some(s.long)));
        } else {
            out.push((from - 1, None));
        }
    } else if from == 0 {
        out.push((0, Some(t)));
    }
    out
}

/// `cfg` with `split.long` standing for `split.copies` copies of `split.short` anywhere they
/// are consecutive in a derivation; `None` when no derivation has them in a row (the grammar
/// would not change). Fails past `max_symbols` right-hand-side symbols in all.
pub(crate) fn split(
    cfg: &Cfg,
    s: &SplitLiteral,
    max_symbols: usize,
) -> Result<Option<Cfg>, NormalizeError> {
    assert!((2..=MAX_COPIES).contains(&s.copies), "copies out of range");
    let k = s.copies as usize;
    let n = cfg.nonterminal_len();
    // pairs[a]: bit `p * k + q` when `A[p, q]` derives some string.
    let mut pairs = vec![0u64; n];
    let mut changed = true;
    while changed {
        changed = false;
        for prod in cfg.productions() {
            for p in 0..k {
                let mut reach = 1u64 << p;
                for &sym in &prod.rhs {
                    reach = advance(s, &pairs, k, sym, reach);
                    if reach == 0 {
                        break;
                    }
                }
                let lhs = prod.lhs.as_usize();
                for q in 0..k {
                    let bit = 1u64 << (p * k + q);
                    if reach & (1 << q) != 0 && pairs[lhs] & bit == 0 {
                        pairs[lhs] |= bit;
                        changed = true;
                    }
                }
            }
        }
    }

    let mut nonterminals: Vec<Nonterminal> = cfg.nonterminals().to_vec();
    let mut ids: HashMap<(NonterminalId, u8, u8), NonterminalId> = HashMap::new();
    let mut queue: VecDeque<(NonterminalId, u8, u8)> = VecDeque::new();
    for a in 0..n {
        let a = NonterminalId::from_usize(a);
        ids.insert((a, 0, 0), a);
        queue.push_back((a, 0, 0));
    }
    let mut productions: Vec<Production> = Vec::new();
    let mut symbols = 0usize;
    while let Some((a, p, q)) = queue.pop_front() {
        let lhs = ids[&(a, p, q)];
        for prod in &cfg.productions()[cfg.productions_of(a)] {
            // back[i]: the states from which the rest `rhs[i..]` can end in `q`.
            let len = prod.rhs.len();
            let mut back = vec![0u64; len + 1];
            back[len] = 1 << q;
            for i in (0..len).rev() {
                for from in 0..k {
                    if advance(s, &pairs, k, prod.rhs[i], 1 << from) & back[i + 1] != 0 {
                        back[i] |= 1 << from;
                    }
                }
            }
            if back[0] & (1 << p) == 0 {
                continue;
            }
            // Every run of states through the right-hand side, depth first.
            let mut stack: Vec<(usize, u8, Vec<Symbol>)> = vec![(0, p, Vec::new())];
            while let Some((i, at, rhs)) = stack.pop() {
                if i == len {
                    symbols += rhs.len();
                    if symbols > max_symbols {
                        return Err(NormalizeError::too_large(max_symbols));
                    }
                    productions.push(Production { lhs, rhs });
                    continue;
                }
                let mut next = |to: u8, written: Option<Symbol>| {
                    if back[i + 1] & (1 << to) != 0 {
                        let mut rhs = rhs.clone();
                        rhs.extend(written);
                        stack.push((i + 1, to, rhs));
                    }
                };
                match prod.rhs[i] {
                    Symbol::Terminal(t) => {
                        for (to, written) in steps(s, t, at) {
                            next(to, written.map(Symbol::Terminal));
                        }
                    }
                    Symbol::Nonterminal(m) => {
                        for to in 0..k as u8 {
                            if pairs[m.as_usize()] & (1 << (at as usize * k + to as usize)) == 0 {
                                continue;
                            }
                            let id = *ids.entry((m, at, to)).or_insert_with(|| {
                                let base = cfg.nonterminal(m);
                                nonterminals.push(Nonterminal {
                                    name: format!("{}[{at},{to}]", base.name),
                                    origin: base.origin.clone(),
                                });
                                queue.push_back((m, at, to));
                                NonterminalId::from_usize(nonterminals.len() - 1)
                            });
                            next(to, Some(Symbol::Nonterminal(id)));
                        }
                    }
                }
            }
        }
    }
    let split = Cfg::from_parts(
        (0..cfg.terminal_len())
            .map(|t| cfg.terminal_name(TerminalId::from_usize(t)).to_string())
            .collect(),
        nonterminals,
        productions,
        cfg.start(),
    );
    // Every production comes back as it was (each leaf written as itself), so the same count
    // is the same grammar.
    let same = split.nonterminal_len() == n && split.productions().len() == cfg.productions().len();
    Ok((!same).then_some(split))
}

/// The states reachable after `sym` from the states of `reach` (bit sets).
fn advance(s: &SplitLiteral, pairs: &[u64], k: usize, sym: Symbol, reach: u64) -> u64 {
    let mut out = 0u64;
    for from in 0..k {
        if reach & (1 << from) == 0 {
            continue;
        }
        match sym {
            Symbol::Terminal(t) => {
                for (to, _) in steps(s, t, from as u8) {
                    out |= 1 << to;
                }
            }
            Symbol::Nonterminal(m) => {
                let row = (pairs[m.as_usize()] >> (from * k)) & ((1u64 << k) - 1);
                out |= row;
            }
        }
    }
    out
}
