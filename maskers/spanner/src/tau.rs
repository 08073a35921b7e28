//! Terminal spans: what the parser sees of a lexical span, interned and arranged in a trie.
//!
//! A lexical span (`munch_tokens::Span`) is a list of emitted lexer states and an open
//! end state. The parser only sees, of an emitted state, its accepted terminals (tied terminals
//! fork; an ignored one leaves the stack as it is), and of the end state, its reachable
//! terminals (the span leaves a stack live iff one of them is ignored or shiftable there). So
//! many lexical spans are one **terminal span** `τ = (A₁ … A_k, R)`: [`AccSet`]s and a
//! [`ReachSet`], each interned. A terminal span that no stack can take (an emitted lexeme whose
//! terminals the grammar never shifts nor ignores, an end that can complete none) is not made
//! at all.
//!
//! Terminal spans share prefixes, so they are leaves of a trie over accepted-set ids: the
//! classification walks it once per LR state and the online check memoises per trie node.

use ahash::AHashMap;
use munch_glr::lr::ClassTables;
use munch_glr::parser::Parser;
use munch_lexer::{LexState, TerminalId};

const UNSET: u32 = u32::MAX;
const NONE: u32 = u32::MAX - 1;

/// The terminals of one emitted lexeme, as the parser takes them.
#[derive(Debug)]
pub(crate) struct AccSet {
    /// Terminals the parser may shift (lookahead indices), sorted.
    pub terms: Box<[u32]>,
    /// Some tied terminal is ignored: the lexeme may also leave the stack as it is.
    pub skip: bool,
}

/// The terminals the open lexeme at the end of a span can still complete.
#[derive(Debug)]
pub(crate) struct ReachSet {
    /// Terminals the parser may shift (lookahead indices), sorted.
    pub terms: Box<[u32]>,
    /// The same as a bitset over lookahead indices ([`Taus::lookahead_words`] words).
    pub bits: Box<[u64]>,
    /// Some of them is ignored: every stack the emitted lexemes leave is live.
    pub any: bool,
}

/// A node of the trie of terminal spans.
#[derive(Debug, Default)]
pub(crate) struct TauNode {
    /// The parent node and the accepted set on the edge from it (the root's are 0).
    pub parent: u32,
    pub acc: u32,
    /// `(accepted set, child)`, in insertion order.
    pub children: Vec<(u32, u32)>,
    /// `(reach set, terminal span)` of the spans whose emitted lexemes spell this node's path.
    pub leaves: Vec<(u32, u32)>,
}

/// A terminal span: its trie node (the emitted lexemes) and its reach set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tau {
    pub node: u32,
    pub reach: u32,
}

/// Interned accepted sets, reach sets and terminal spans, for one parser.
pub(crate) struct Taus {
    pub accs: Vec<AccSet>,
    pub reaches: Vec<ReachSet>,
    pub nodes: Vec<TauNode>,
    pub taus: Vec<Tau>,
    acc_index: AHashMap<(Box<[u32]>, bool), u32>,
    reach_index: AHashMap<(Box<[u32]>, bool), u32>,
    /// Per lexer state: its accepted set and reach set, once asked for (`UNSET`; `NONE` when
    /// no stack can take it).
    acc_of_state: Vec<u32>,
    reach_of_state: Vec<u32>,
    child_index: AHashMap<(u32, u32), u32>,
    tau_index: AHashMap<(u32, u32), u32>,
    /// Per terminal: ignored.
    ignored: Vec<bool>,
    /// Terminals at or past this index are not the CFG's: never shifted.
    cfg_terminals: usize,
    /// Per terminal of the CFG: its class, the terminal of the tables the spans are read
    /// with; one more than the last class is `$`.
    class: Vec<u32>,
    lookaheads: usize,
}

impl Taus {
    /// Terminal spans of `parser`'s lexemes, their terminals read as classes of `lr`.
    pub(crate) fn new(parser: &Parser, lr: &ClassTables) -> Self {
        let ignored = (0..parser.terminal_len())
            .map(|t| parser.is_ignored(TerminalId::from_usize(t)))
            .collect();
        let class = (0..parser.cfg().terminal_len())
            .map(|t| {
                lr.terminal(TerminalId::from_usize(t))
                    .expect("the CFG's terminals have classes")
            })
            .collect();
        Taus {
            accs: Vec::new(),
            reaches: Vec::new(),
            nodes: vec![TauNode::default()],
            taus: Vec::new(),
            acc_index: AHashMap::new(),
            reach_index: AHashMap::new(),
            acc_of_state: vec![UNSET; parser.lexer().state_len()],
            reach_of_state: vec![UNSET; parser.lexer().state_len()],
            child_index: AHashMap::new(),
            tau_index: AHashMap::new(),
            ignored,
            cfg_terminals: parser.cfg().terminal_len(),
            class,
            lookaheads: lr.tables().eof_index() as usize + 1,
        }
    }

    /// Splits terminals into those the parser may shift and whether one is ignored; `None`
    /// when neither (no stack can take them).
    fn split(&self, terms: impl Iterator<Item = TerminalId>) -> Option<(Box<[u32]>, bool)> {
        let mut shiftable = Vec::new();
        let mut ignored = false;
        for t in terms {
            if self.ignored.get(t.as_usize()).copied().unwrap_or(false) {
                ignored = true;
            } else if t.as_usize() < self.cfg_terminals {
                shiftable.push(self.class[t.as_usize()]);
            }
        }
        if shiftable.is_empty() && !ignored {
            return None;
        }
        shiftable.sort_unstable();
        shiftable.dedup();
        Some((shiftable.into_boxed_slice(), ignored))
    }

    /// The accepted set of an emitted lexeme with terminals `terms`; `None` when no stack can
    /// take it.
    pub(crate) fn intern_acc(&mut self, terms: impl Iterator<Item = TerminalId>) -> Option<u32> {
        let key = self.split(terms)?;
        let next = self.accs.len() as u32;
        let id = *self.acc_index.entry(key.clone()).or_insert(next);
        if id == next {
            self.accs.push(AccSet {
                terms: key.0,
                skip: key.1,
            });
        }
        Some(id)
    }

    /// The reach set of an open lexeme that can complete `terms`; `None` when no stack can
    /// take it.
    pub(crate) fn intern_reach(&mut self, terms: impl Iterator<Item = TerminalId>) -> Option<u32> {
        let key = self.split(terms)?;
        let next = self.reaches.len() as u32;
        let id = *self.reach_index.entry(key.clone()).or_insert(next);
        if id == next {
            let mut bits = vec![0u64; self.lookahead_words()];
            for &t in key.0.iter() {
                bits[t as usize / 64] |= 1 << (t % 64);
            }
            self.reaches.push(ReachSet {
                terms: key.0,
                bits: bits.into_boxed_slice(),
                any: key.1,
            });
        }
        Some(id)
    }

    /// Words of a bitset over the lookahead indices of the tables the spans are read with
    /// (terminal classes and `$`).
    pub(crate) fn lookahead_words(&self) -> usize {
        self.lookaheads.div_ceil(64)
    }

    /// [`Taus::intern_acc`] of lexer state `s`'s accepted terminals, memoised per state.
    pub(crate) fn acc_of_state(&mut self, parser: &Parser, s: LexState) -> Option<u32> {
        let known = self.acc_of_state[s.as_usize()];
        if known != UNSET {
            return (known != NONE).then_some(known);
        }
        let id = self.intern_acc(parser.lexer().accepted(s).iter().copied());
        self.acc_of_state[s.as_usize()] = id.unwrap_or(NONE);
        id
    }

    /// [`Taus::intern_reach`] of lexer state `s`'s reachable terminals, memoised per state.
    pub(crate) fn reach_of_state(&mut self, parser: &Parser, s: LexState) -> Option<u32> {
        let known = self.reach_of_state[s.as_usize()];
        if known != UNSET {
            return (known != NONE).then_some(known);
        }
        let id = self.intern_reach(parser.lexer().reachable(s).iter());
        self.reach_of_state[s.as_usize()] = id.unwrap_or(NONE);
        id
    }

    /// The terminal span `(accs, reach)`.
    pub(crate) fn intern(&mut self, accs: &[u32], reach: u32) -> u32 {
        let mut node = 0u32;
        for &a in accs {
            let next = self.nodes.len() as u32;
            let parent = node;
            node = *self.child_index.entry((parent, a)).or_insert(next);
            if node == next {
                self.nodes.push(TauNode {
                    parent,
                    acc: a,
                    ..TauNode::default()
                });
                self.nodes[parent as usize].children.push((a, next));
            }
        }
        let next = self.taus.len() as u32;
        let id = *self.tau_index.entry((node, reach)).or_insert(next);
        if id == next {
            self.taus.push(Tau { node, reach });
            self.nodes[node as usize].leaves.push((reach, id));
        }
        id
    }

    /// The terminal span of a lexical span; `None` when no stack can take it.
    pub(crate) fn of_span(
        &mut self,
        parser: &Parser,
        emitted: &[LexState],
        end: LexState,
    ) -> Option<u32> {
        let mut accs: smallvec::SmallVec<[u32; 8]> = smallvec::SmallVec::new();
        for &e in emitted {
            accs.push(self.acc_of_state(parser, e)?);
        }
        let reach = self.reach_of_state(parser, end)?;
        Some(self.intern(&accs, reach))
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let sets: usize = self
            .accs
            .iter()
            .map(|a| a.terms.len() * 4)
            .chain(
                self.reaches
                    .iter()
                    .map(|r| r.terms.len() * 4 + r.bits.len() * 8),
            )
            .sum();
        let nodes: usize = self
            .nodes
            .iter()
            .map(|n| (n.children.capacity() + n.leaves.capacity()) * 8)
            .sum();
        sets + nodes
            + self.nodes.capacity() * std::mem::size_of::<TauNode>()
            + self.taus.capacity() * std::mem::size_of::<Tau>()
    }
}
