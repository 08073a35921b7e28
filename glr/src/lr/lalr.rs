//! LALR(1) lookaheads by DeRemer–Pennello, extended to right-nulled reductions (RNGLR).
//!
//! For each nonterminal transition `x = (p, A)` of the LR(0) automaton:
//!
//! - `DR(x)`: the terminals shifted right after `A` (out of `goto(p, A)`), plus `$` when that
//!   state accepts;
//! - `Read(x) = DR(x) ∪ ⋃ { Read(y) | x reads y }` where `(p, A) reads (goto(p, A), C)` for a
//!   nullable `C`;
//! - `Follow(x) = Read(x) ∪ ⋃ { Follow(y) | x includes y }` where `(q, A) includes (p, B)` when
//!   `B -> β A γ`, `γ` nullable and `p --β--> q`.
//!
//! Both unions are computed by the `digraph` traversal (strongly connected components share one
//! set), iteratively so that deep relations cannot overflow the stack.
//!
//! Reductions: for `B -> X1..Xn` and each transition `(p, B)`, walking `p --X1..Xi--> q` gives
//! the item `B -> X1..Xi · Xi+1..Xn` in `q`. When `Xi+1..Xn` is nullable, `q` gets a reduction of
//! `B` with length `i` on `Follow(p, B)`. With `i = n` these are the LALR(1) reductions; with
//! `i < n` they are the right-nulled reductions that RNGLR needs to handle ε-rules and hidden
//! recursion without reducing through ε-edges built at the current position.

use ahash::AHashMap;
use munch_vocab::bits;

use super::lr0::{Grammar0, Lr0};

/// A terminal bitset row of `words` u64s inside a flat vector.
struct Rows {
    words: usize,
    bits: Vec<u64>,
}

impl Rows {
    fn new(rows: usize, bits: usize) -> Self {
        let words = bits.div_ceil(64).max(1);
        Self {
            words,
            bits: vec![0; rows * words],
        }
    }
    fn set(&mut self, row: usize, bit: u32) {
        let words = self.words;
        bits::insert(&mut self.bits[row * words..(row + 1) * words], bit as usize);
    }
    fn row(&self, row: usize) -> &[u64] {
        &self.bits[row * self.words..(row + 1) * self.words]
    }
    fn union_into(&mut self, dst: usize, src: usize) {
        if dst != src {
            for w in 0..self.words {
                self.bits[dst * self.words + w] |= self.bits[src * self.words + w];
            }
        }
    }
    fn copy(&mut self, dst: usize, src: usize) {
        if dst != src {
            for w in 0..self.words {
                self.bits[dst * self.words + w] = self.bits[src * self.words + w];
            }
        }
    }
}

/// One reduction found: in `state`, reduce production `prod` by its first `len` symbols on
/// every lookahead of `Follow(transition)`.
struct Lookback {
    state: u32,
    prod: u32,
    len: u32,
    transition: u32,
}

/// A reduce entry of the table: in `state`, reduce `prod` by `len` symbols on every lookahead of
/// lookahead set `set`.
pub(crate) struct Reduce {
    pub state: u32,
    pub prod: u32,
    pub len: u32,
    pub set: u32,
}

/// The reductions of the table with their lookahead sets, each distinct set stored once.
pub(crate) struct Reductions {
    pub reduces: Vec<Reduce>,
    /// Set `i` is `sets[i * words..(i + 1) * words]`, a bitset over lookahead indices.
    pub sets: Vec<u64>,
    pub words: usize,
}

impl Reductions {
    /// Every set by content, for [`Reductions::intern_set`].
    pub fn set_index(&self) -> AHashMap<Vec<u64>, u32> {
        self.sets
            .chunks(self.words.max(1))
            .enumerate()
            .map(|(i, set)| (set.to_vec(), i as u32))
            .collect()
    }

    /// The id of the set `set` (`words` words), added when `index` (its [`Reductions::set_index`],
    /// kept up to date here) does not hold it.
    pub fn intern_set(&mut self, index: &mut AHashMap<Vec<u64>, u32>, set: Vec<u64>) -> u32 {
        if let Some(&id) = index.get(&set) {
            return id;
        }
        let id = (self.sets.len() / self.words.max(1)) as u32;
        self.sets.extend_from_slice(&set);
        index.insert(set, id);
        id
    }
}

/// Computes every (right-nulled) reduction of the LALR(1) table, or `None` when the reductions
/// (one unit each) and their distinct lookahead sets (one unit per 64-bit word) exceed `max`.
pub(crate) fn reductions(g: &Grammar0, lr0: &Lr0, max: usize) -> Option<Reductions> {
    // Number the nonterminal transitions.
    let mut trans: Vec<(u32, u32)> = Vec::new(); // (p, nonterminal symbol)
    let mut trans_start = Vec::with_capacity(lr0.states.len() + 1);
    for (p, st) in lr0.states.iter().enumerate() {
        trans_start.push(trans.len() as u32);
        for &(sym, _) in &st.transitions {
            if g.is_nonterminal(sym) {
                trans.push((p as u32, sym));
            }
        }
    }
    trans_start.push(trans.len() as u32);
    let index_of = |p: u32, sym: u32| -> Option<u32> {
        let lo = trans_start[p as usize] as usize;
        let hi = trans_start[p as usize + 1] as usize;
        trans[lo..hi]
            .binary_search_by_key(&sym, |&(_, s)| s)
            .ok()
            .map(|i| (lo + i) as u32)
    };
    let bits = g.terminal_len as usize + 1;
    let n = trans.len();

    // DR and reads.
    let mut sets = Rows::new(n, bits);
    let mut reads: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (x, &(p, a)) in trans.iter().enumerate() {
        let r = lr0.goto(p, a).expect("transition exists");
        let rs = &lr0.states[r as usize];
        for &(sym, _) in &rs.transitions {
            if !g.is_nonterminal(sym) {
                sets.set(x, sym);
            } else if g.nullable[(sym - g.nt_base) as usize] {
                reads[x].push(index_of(r, sym).expect("transition exists"));
            }
        }
        if rs.accepting {
            sets.set(x, g.eof());
        }
    }
    digraph(&reads, &mut sets);
    drop(reads);

    // includes and lookback.
    let mut includes: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut lookback = Vec::new();
    for (x, &(p, b)) in trans.iter().enumerate() {
        for &prod in &g.by_lhs[(b - g.nt_base) as usize] {
            let rhs = &g.rhs[prod as usize];
            // nullable_suffix[i]: rhs[i..] is nullable.
            let mut nullable_suffix = vec![true; rhs.len() + 1];
            for i in (0..rhs.len()).rev() {
                let s = rhs[i];
                nullable_suffix[i] = nullable_suffix[i + 1]
                    && g.is_nonterminal(s)
                    && g.nullable[(s - g.nt_base) as usize];
            }
            let mut q = p;
            for i in 0..=rhs.len() {
                if nullable_suffix[i] {
                    lookback.push(Lookback {
                        state: q,
                        prod,
                        len: i as u32,
                        transition: x as u32,
                    });
                }
                if i == rhs.len() {
                    break;
                }
                let s = rhs[i];
                if g.is_nonterminal(s) && nullable_suffix[i + 1] {
                    let y = index_of(q, s).expect("transition exists");
                    includes[y as usize].push(x as u32);
                }
                q = lr0.goto(q, s).expect("transition exists");
            }
        }
    }
    digraph(&includes, &mut sets);

    // One reduction is often looked back from many transitions (a production reached along
    // different paths into the same state): their Follow sets are united first, so that each
    // (state, production, length) is emitted once. The united sets are interned: the states of
    // a keyword set `("k0" | … | "k7999")*` all reduce on the same 8,001 lookaheads, which
    // expanded per state would be 64 M entries and shared are one set.
    lookback.sort_unstable_by_key(|lb| (lb.state, lb.prod, lb.len));
    let words = sets.words;
    let mut out = Reductions {
        reduces: Vec::new(),
        sets: Vec::new(),
        words,
    };
    let mut interned: AHashMap<Box<[u64]>, u32> =
        AHashMap::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4));
    let mut spent = 0usize;
    let mut follow = vec![0u64; words];
    for same in lookback.chunk_by(|a, b| (a.state, a.prod, a.len) == (b.state, b.prod, b.len)) {
        follow.fill(0);
        for lb in same {
            for (f, &word) in follow.iter_mut().zip(sets.row(lb.transition as usize)) {
                *f |= word;
            }
        }
        if follow.iter().all(|&w| w == 0) {
            continue;
        }
        let set = match interned.get(follow.as_slice()) {
            Some(&id) => id,
            None => {
                spent += words;
                if spent > max {
                    return None;
                }
                let id = interned.len() as u32;
                interned.insert(follow.clone().into_boxed_slice(), id);
                out.sets.extend_from_slice(&follow);
                id
            }
        };
        spent += 1;
        if spent > max {
            return None;
        }
        let lb = &same[0];
        out.reduces.push(Reduce {
            state: lb.state,
            prod: lb.prod,
            len: lb.len,
            set,
        });
    }
    Some(out)
}

/// DeRemer–Pennello's `digraph`: `F(x) = F'(x) ∪ ⋃ { F(y) | x R y }`, in place on `sets`, by
/// Tarjan's SCC traversal on an explicit stack.
fn digraph(rel: &[Vec<u32>], sets: &mut Rows) {
    const DONE: u32 = u32::MAX;
    let n = rel.len();
    // 0: unvisited; DONE: finished; else the lowest stack depth reachable.
    let mut depth = vec![0u32; n];
    let mut stack: Vec<u32> = Vec::new();
    // Call frames: (node, next edge, the node's own stack depth).
    let mut calls: Vec<(u32, usize, u32)> = Vec::new();
    for root in 0..n {
        if depth[root] != 0 {
            continue;
        }
        stack.push(root as u32);
        depth[root] = stack.len() as u32;
        calls.push((root as u32, 0, stack.len() as u32));
        while let Some(frame) = calls.last_mut() {
            let xs = frame.0 as usize;
            if let Some(&y) = rel[xs].get(frame.1) {
                frame.1 += 1;
                let ys = y as usize;
                if depth[ys] == 0 {
                    stack.push(y);
                    depth[ys] = stack.len() as u32;
                    calls.push((y, 0, stack.len() as u32));
                } else {
                    depth[xs] = depth[xs].min(depth[ys]);
                    sets.union_into(xs, ys);
                }
                continue;
            }
            let (x, _, d) = calls.pop().expect("frame exists");
            if depth[xs] == d {
                // x is the root of a strongly connected component: its members share its set.
                while let Some(top) = stack.pop() {
                    depth[top as usize] = DONE;
                    sets.copy(top as usize, xs);
                    if top == x {
                        break;
                    }
                }
            }
            if let Some(&(parent, _, _)) = calls.last() {
                let ps = parent as usize;
                depth[ps] = depth[ps].min(depth[xs]);
                sets.union_into(ps, xs);
            }
        }
    }
}
