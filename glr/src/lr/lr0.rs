//! The LR(0) automaton: item sets (by kernel) and their transitions.
//!
//! Symbols are numbered in one space ([`Grammar0`]): terminals `0..terminal_len`, then end of
//! input (`eof`), then nonterminals; the augmented start `S' -> S $` is the last production and
//! its nonterminal the last one. The transition on `$` out of the state holding `S' -> S · $` is
//! not built: that state is marked accepting instead, so the automaton has the textbook number
//! of states.

use std::collections::hash_map::Entry;

use ahash::AHashMap;

use super::LrBuildError;
use crate::cfg::{Cfg, Symbol};

/// An LR(0) item: production index and dot position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Item {
    pub prod: u32,
    pub dot: u32,
}

/// The CFG in the numbering the LR construction uses.
pub(crate) struct Grammar0 {
    pub terminal_len: u32,
    /// `terminal_len` is `$`; nonterminal `n` is symbol `nt_base + n`.
    pub nt_base: u32,
    pub nonterminal_len: u32,
    pub rhs: Vec<Vec<u32>>,
    /// Productions of each nonterminal.
    pub by_lhs: Vec<Vec<u32>>,
    pub nullable: Vec<bool>,
}

impl Grammar0 {
    pub fn new(cfg: &Cfg, nullable: impl Fn(usize) -> bool) -> Self {
        let terminal_len = cfg.terminal_len() as u32;
        let nt_base = terminal_len + 1;
        let start_prime = cfg.nonterminal_len() as u32;
        let sym = |s: &Symbol| match *s {
            Symbol::Terminal(t) => t.as_u32(),
            Symbol::Nonterminal(n) => nt_base + n.as_usize() as u32,
        };
        let mut rhs: Vec<Vec<u32>> = cfg
            .productions()
            .iter()
            .map(|p| p.rhs.iter().map(sym).collect())
            .collect();
        let mut lhs: Vec<u32> = cfg
            .productions()
            .iter()
            .map(|p| p.lhs.as_usize() as u32)
            .collect();
        rhs.push(vec![nt_base + cfg.start().as_usize() as u32, terminal_len]);
        lhs.push(start_prime);
        let mut by_lhs = vec![Vec::new(); start_prime as usize + 1];
        for (p, &l) in lhs.iter().enumerate() {
            by_lhs[l as usize].push(p as u32);
        }
        let mut nullable: Vec<bool> = (0..cfg.nonterminal_len()).map(nullable).collect();
        nullable.push(false);
        Self {
            terminal_len,
            nt_base,
            nonterminal_len: start_prime + 1,
            rhs,
            by_lhs,
            nullable,
        }
    }

    pub fn eof(&self) -> u32 {
        self.terminal_len
    }

    pub fn augmented(&self) -> u32 {
        (self.rhs.len() - 1) as u32
    }

    pub fn is_nonterminal(&self, sym: u32) -> bool {
        sym >= self.nt_base
    }

    pub fn after_dot(&self, item: Item) -> Option<u32> {
        self.rhs[item.prod as usize].get(item.dot as usize).copied()
    }

    pub fn symbol_len(&self) -> u32 {
        self.nt_base + self.nonterminal_len
    }
}

/// One LR(0) state.
pub(crate) struct State0 {
    pub kernel: Vec<Item>,
    /// Transitions sorted by symbol.
    pub transitions: Vec<(u32, u32)>,
    /// Holds `S' -> S · $`.
    pub accepting: bool,
}

pub(crate) struct Lr0 {
    pub states: Vec<State0>,
}

impl Lr0 {
    pub fn build(g: &Grammar0, max_states: usize) -> Result<Lr0, LrBuildError> {
        // Per nonterminal, the nonterminals that start one of its productions. Closures follow
        // these edges per state (each nonterminal once, by `nt_mark`); listing every nonterminal's
        // whole left closure up front would be quadratic on a chain of unit rules.
        let nts = g.nonterminal_len as usize;
        let mut corner: Vec<Vec<u32>> = Vec::with_capacity(nts);
        for b in 0..nts {
            let mut list: Vec<u32> = Vec::new();
            for &p in &g.by_lhs[b] {
                if let Some(&s) = g.rhs[p as usize].first() {
                    if g.is_nonterminal(s) {
                        list.push(s - g.nt_base);
                    }
                }
            }
            list.sort_unstable();
            list.dedup();
            corner.push(list);
        }

        let start_kernel = vec![Item {
            prod: g.augmented(),
            dot: 0,
        }];
        let mut index: AHashMap<Vec<Item>, u32> = AHashMap::new();
        index.insert(start_kernel.clone(), 0);
        let mut states = vec![State0 {
            kernel: start_kernel,
            transitions: Vec::new(),
            accepting: false,
        }];
        let mut nt_mark = vec![u32::MAX; nts];
        let mut by_symbol: Vec<Vec<Item>> = vec![Vec::new(); g.symbol_len() as usize];
        let mut touched: Vec<u32> = Vec::new();
        let mut walk: Vec<u32> = Vec::new();
        let mut i = 0;
        while i < states.len() {
            let stamp = i as u32;
            // Closure = kernel + all productions of the left closures of nonterminals after dots.
            let mut items = states[i].kernel.clone();
            for k in 0..states[i].kernel.len() {
                if let Some(s) = g.after_dot(states[i].kernel[k]) {
                    if g.is_nonterminal(s) {
                        let c = s - g.nt_base;
                        if nt_mark[c as usize] != stamp {
                            nt_mark[c as usize] = stamp;
                            walk.push(c);
                        }
                    }
                }
            }
            while let Some(c) = walk.pop() {
                for &p in &g.by_lhs[c as usize] {
                    items.push(Item { prod: p, dot: 0 });
                }
                for &d in &corner[c as usize] {
                    if nt_mark[d as usize] != stamp {
                        nt_mark[d as usize] = stamp;
                        walk.push(d);
                    }
                }
            }
            let mut accepting = false;
            for &item in &items {
                if let Some(s) = g.after_dot(item) {
                    if s == g.eof() {
                        accepting = true;
                        continue;
                    }
                    if by_symbol[s as usize].is_empty() {
                        touched.push(s);
                    }
                    by_symbol[s as usize].push(Item {
                        prod: item.prod,
                        dot: item.dot + 1,
                    });
                }
            }
            touched.sort_unstable();
            let mut transitions = Vec::with_capacity(touched.len());
            for &s in &touched {
                let mut kernel = std::mem::take(&mut by_symbol[s as usize]);
                kernel.sort_unstable();
                kernel.dedup();
                // One hash per transition: kernels can hold thousands of items.
                let next = match index.entry(kernel) {
                    Entry::Occupied(e) => *e.get(),
                    Entry::Vacant(e) => {
                        let n = states.len();
                        if n >= max_states {
                            return Err(LrBuildError::too_many_states(max_states));
                        }
                        states.push(State0 {
                            kernel: e.key().clone(),
                            transitions: Vec::new(),
                            accepting: false,
                        });
                        e.insert(n as u32);
                        n as u32
                    }
                };
                transitions.push((s, next));
            }
            touched.clear();
            states[i].transitions = transitions;
            states[i].accepting = accepting;
            i += 1;
        }
        Ok(Lr0 { states })
    }

    pub fn goto(&self, state: u32, sym: u32) -> Option<u32> {
        let t = &self.states[state as usize].transitions;
        t.binary_search_by_key(&sym, |&(s, _)| s)
            .ok()
            .map(|i| t[i].1)
    }
}

/// All items of `kernel`'s closure, for diagnostics.
pub(crate) fn closure(g: &Grammar0, kernel: &[Item]) -> Vec<Item> {
    let mut items = kernel.to_vec();
    let mut seen = vec![false; g.nonterminal_len as usize];
    let mut k = 0;
    while k < items.len() {
        if let Some(s) = g.after_dot(items[k]) {
            if g.is_nonterminal(s) && !seen[(s - g.nt_base) as usize] {
                seen[(s - g.nt_base) as usize] = true;
                for &p in &g.by_lhs[(s - g.nt_base) as usize] {
                    items.push(Item { prod: p, dot: 0 });
                }
            }
        }
        k += 1;
    }
    items
}
