//! Pass 3: nullable nonterminals and FIRST sets (an analysis; the CFG is unchanged).
//!
//! After this pass [`Analysis::is_nullable`] tells whether a nonterminal derives ε and
//! [`Analysis::first_contains`] whether it derives a string starting with a given terminal.

use munch_lexer::TerminalId;
use munch_vocab::bits;

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
        let nullable = derives_all(cfg, |_| false);
        // FIRST(lhs) ⊇ {t} for a terminal, and ⊇ FIRST(m) for a nonterminal m, after a nullable
        // prefix of a right-hand side.
        let words = cfg.terminal_len().div_ceil(64).max(1);
        let mut first = vec![0u64; n * words];
        let mut feeds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for p in cfg.productions() {
            let lhs = p.lhs.as_usize();
            for s in &p.rhs {
                match *s {
                    Symbol::Terminal(t) => {
                        bits::insert(&mut first[lhs * words..(lhs + 1) * words], t.as_usize());
                        break;
                    }
                    Symbol::Nonterminal(m) => {
                        let m = m.as_usize();
                        if m != lhs {
                            feeds[m].push(lhs);
                        }
                        if !nullable[m] {
                            break;
                        }
                    }
                }
            }
        }
        let mut queued = vec![true; n];
        let mut pending: Vec<usize> = (0..n).collect();
        while let Some(m) = pending.pop() {
            queued[m] = false;
            for &lhs in &feeds[m] {
                let mut changed = false;
                for w in 0..words {
                    let add = first[m * words + w] & !first[lhs * words + w];
                    if add != 0 {
                        first[lhs * words + w] |= add;
                        changed = true;
                    }
                }
                if changed && !queued[lhs] {
                    queued[lhs] = true;
                    pending.push(lhs);
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
        let row = n.as_usize() * self.words;
        bits::contains(&self.first[row..row + self.words], t.as_usize())
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

/// The nonterminals that derive a string of terminals each accepted by `terminal` (with a
/// rejecting `terminal`: the nullable ones; with "not ignored": the productive ones).
///
/// A worklist over the productions that use each newly found nonterminal, rather than passes
/// over every production until nothing changes: a chain of unit rules would take one pass per
/// link (quadratic in the grammar's size).
pub(crate) fn derives_all(cfg: &Cfg, terminal: impl Fn(&TerminalId) -> bool) -> Vec<bool> {
    let n = cfg.nonterminal_len();
    let mut uses: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, p) in cfg.productions().iter().enumerate() {
        for s in &p.rhs {
            if let Symbol::Nonterminal(m) = s {
                if uses[m.as_usize()].last() != Some(&i) {
                    uses[m.as_usize()].push(i);
                }
            }
        }
    }
    let mut found = vec![false; n];
    let mut pending: Vec<usize> = (0..cfg.productions().len()).collect();
    while let Some(i) = pending.pop() {
        let p = &cfg.productions()[i];
        if !found[p.lhs.as_usize()]
            && p.rhs.iter().all(|s| match s {
                Symbol::Terminal(t) => terminal(t),
                Symbol::Nonterminal(m) => found[m.as_usize()],
            })
        {
            found[p.lhs.as_usize()] = true;
            pending.extend(uses[p.lhs.as_usize()].iter().copied());
        }
    }
    found
}
