//! Pass 3: nullable nonterminals and FIRST sets (an analysis; the CFG is unchanged).
//!
//! After this pass [`Analysis::is_nullable`] tells whether a nonterminal derives ε and
//! [`Analysis::first_contains`] whether it derives a string starting with a given terminal.

use munch_lexer::TerminalId;

use super::{Cfg, NonterminalId, Symbol};

/// Nullable and FIRST for every nonterminal of a [`Cfg`].
#[derive(Clone, Debug)]
pub struct Analysis {
    nullable: Vec<bool>,
    /// FIRST sets as bit rows of `words` u64s each.
    first: Vec<u64>,
    words: usize,
}

impl Analysis {
    /// Computes both by fixpoint iteration.
    pub fn new(cfg: &Cfg) -> Self {
        let n = cfg.nonterminal_len();
        let mut nullable = vec![false; n];
        let mut changed = true;
        while changed {
            changed = false;
            for p in cfg.productions() {
                if !nullable[p.lhs.as_usize()]
                    && p.rhs.iter().all(|s| match s {
                        Symbol::Terminal(_) => false,
                        Symbol::Nonterminal(m) => nullable[m.as_usize()],
                    })
                {
                    nullable[p.lhs.as_usize()] = true;
                    changed = true;
                }
            }
        }
        let words = cfg.terminal_len().div_ceil(64).max(1);
        let mut first = vec![0u64; n * words];
        changed = true;
        while changed {
            changed = false;
            for p in cfg.productions() {
                let lhs = p.lhs.as_usize();
                for s in &p.rhs {
                    match *s {
                        Symbol::Terminal(t) => {
                            let (w, b) = (t.as_usize() / 64, t.as_usize() % 64);
                            let cell = &mut first[lhs * words + w];
                            if *cell & (1 << b) == 0 {
                                *cell |= 1 << b;
                                changed = true;
                            }
                            break;
                        }
                        Symbol::Nonterminal(m) => {
                            let m = m.as_usize();
                            if m != lhs {
                                for w in 0..words {
                                    let add = first[m * words + w] & !first[lhs * words + w];
                                    if add != 0 {
                                        first[lhs * words + w] |= add;
                                        changed = true;
                                    }
                                }
                            }
                            if !nullable[m] {
                                break;
                            }
                        }
                    }
                }
            }
        }
        Self {
            nullable,
            first,
            words,
        }
    }

    /// Whether `n` derives the empty string.
    pub fn is_nullable(&self, n: NonterminalId) -> bool {
        self.nullable[n.as_usize()]
    }

    /// Whether every symbol of `seq` derives ε (true for the empty sequence).
    pub fn is_nullable_seq(&self, seq: &[Symbol]) -> bool {
        seq.iter().all(|s| match s {
            Symbol::Terminal(_) => false,
            Symbol::Nonterminal(n) => self.is_nullable(*n),
        })
    }

    /// Whether `n` derives a string that starts with `t`.
    pub fn first_contains(&self, n: NonterminalId, t: TerminalId) -> bool {
        let (w, b) = (t.as_usize() / 64, t.as_usize() % 64);
        w < self.words && self.first[n.as_usize() * self.words + w] & (1 << b) != 0
    }

    /// The FIRST set of `n`, in increasing id order.
    pub fn first(&self, n: NonterminalId) -> impl Iterator<Item = TerminalId> + '_ {
        let row = &self.first[n.as_usize() * self.words..(n.as_usize() + 1) * self.words];
        row.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits & (1u64 << b) != 0)
                .map(move |b| TerminalId::from_usize(w * 64 + b))
        })
    }
}
