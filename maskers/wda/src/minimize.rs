//! Minimisation of the Parser DWA (partition refinement on a machine with outputs on its
//! transitions), and the per-state set of classes still undecided.
//!
//! Two states are equivalent iff every stack gives the same output from both. Refinement starts
//! with one block and splits a block by its members' signatures `(default output, block of the
//! default target, [(x, output, block of target)])`, where entries that behave like the default
//! are left out so that the signature is a function of the behaviour, not of how sparse the
//! list happens to be. Only blocks with a member whose successor changed block since they were
//! last split are looked at again, so a split costs the blocks it can change rather than a pass
//! over every state; when none is left, the blocks are the equivalence classes.

use crate::bits::{Weight, Weights, EMPTY};
use crate::determinize::{Dfa, StateId, DEAD};

/// Minimises `dfa`; returns the minimal automaton and the map old state → new state. The dead
/// state stays state 0.
pub(crate) fn minimize(dfa: &Dfa) -> (Dfa, Vec<StateId>) {
    let (block, blocks) = coarsest(dfa);
    // Renumber so that the dead state's block is 0, others in order of first appearance.
    let mut renum: Vec<u32> = vec![u32::MAX; blocks];
    renum[block[DEAD as usize] as usize] = 0;
    let mut len = 1u32;
    let mut rep: Vec<usize> = vec![DEAD as usize];
    for (s, &b) in block.iter().enumerate() {
        if renum[b as usize] == u32::MAX {
            renum[b as usize] = len;
            len += 1;
            rep.push(s);
        }
    }
    let map: Vec<StateId> = block.iter().map(|&b| renum[b as usize]).collect();
    let mut out = Dfa {
        default: Vec::with_capacity(rep.len()),
        edges: Vec::with_capacity(rep.len()),
    };
    for &s in &rep {
        let (dw, dt) = dfa.default[s];
        let dt = map[dt as usize];
        out.default.push((dw, dt));
        out.edges.push(
            dfa.edges[s]
                .iter()
                .map(|&(x, w, t)| (x, w, map[t as usize]))
                .filter(|&(_, w, t)| (w, t) != (dw, dt))
                .collect(),
        );
    }
    (out, map)
}

/// The coarsest partition of `dfa`'s states that its signatures do not split: each state's
/// block, and the number of blocks.
fn coarsest(dfa: &Dfa) -> (Vec<u32>, usize) {
    let n = dfa.state_len();
    // Each state's predecessors (by default or listed edges), as CSR; repeats are harmless.
    let mut pred_start = vec![0u32; n + 1];
    for s in 0..n {
        pred_start[dfa.default[s].1 as usize + 1] += 1;
        for &(_, _, t) in &dfa.edges[s] {
            pred_start[t as usize + 1] += 1;
        }
    }
    for i in 0..n {
        pred_start[i + 1] += pred_start[i];
    }
    let mut fill = pred_start.clone();
    let mut preds = vec![0u32; pred_start[n] as usize];
    for s in 0..n {
        let targets = std::iter::once(dfa.default[s].1).chain(dfa.edges[s].iter().map(|e| e.2));
        for t in targets {
            preds[fill[t as usize] as usize] = s as u32;
            fill[t as usize] += 1;
        }
    }
    drop(fill);

    let mut block = vec![0u32; n];
    let mut members: Vec<Vec<u32>> = vec![(0..n as u32).collect()];
    let mut dirty: Vec<u32> = vec![0];
    let mut is_dirty = vec![true];
    // A block's signatures, one after another in `sigs`, member `i`'s at `at[i]..at[i + 1]`.
    let mut sigs: Vec<u32> = Vec::new();
    let mut at: Vec<usize> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut moved: Vec<u32> = Vec::new();
    while let Some(b) = dirty.pop() {
        is_dirty[b as usize] = false;
        let list = std::mem::take(&mut members[b as usize]);
        sigs.clear();
        at.clear();
        for &s in &list {
            at.push(sigs.len());
            let (dw, dt) = dfa.default[s as usize];
            let db = block[dt as usize];
            sigs.extend_from_slice(&[dw, db]);
            for &(x, w, t) in &dfa.edges[s as usize] {
                let tb = block[t as usize];
                if (w, tb) != (dw, db) {
                    sigs.extend_from_slice(&[x, w, tb]);
                }
            }
        }
        at.push(sigs.len());
        let sig = |i: usize| &sigs[at[i]..at[i + 1]];
        order.clear();
        order.extend(0..list.len());
        order.sort_unstable_by(|&i, &j| sig(i).cmp(sig(j)));
        // Runs of equal signatures: the largest keeps the block's id, each other becomes a
        // new block, and the blocks of its members' predecessors are looked at again.
        runs.clear();
        let mut lo = 0;
        for hi in 1..=order.len() {
            if hi == order.len() || sig(order[hi]) != sig(order[lo]) {
                runs.push((lo, hi));
                lo = hi;
            }
        }
        let keep = (0..runs.len())
            .max_by_key(|&r| (runs[r].1 - runs[r].0, std::cmp::Reverse(r)))
            .unwrap_or(0);
        moved.clear();
        for (r, &(lo, hi)) in runs.iter().enumerate() {
            let mut group: Vec<u32> = order[lo..hi].iter().map(|&i| list[i]).collect();
            group.sort_unstable();
            if r == keep {
                members[b as usize] = group;
                continue;
            }
            let nb = members.len() as u32;
            for &s in &group {
                block[s as usize] = nb;
            }
            moved.extend_from_slice(&group);
            members.push(group);
            is_dirty.push(false);
        }
        // After every new id is given, so that a predecessor's block is its new one.
        for &s in &moved {
            let s = s as usize;
            for &p in &preds[pred_start[s] as usize..pred_start[s + 1] as usize] {
                let pb = block[p as usize] as usize;
                if !is_dirty[pb] {
                    is_dirty[pb] = true;
                    dirty.push(pb as u32);
                }
            }
        }
    }
    (block, members.len())
}

/// Per state, the classes some path from it can still output: the union of the outputs of
/// every transition reachable from it (a backward fixpoint; the automaton may have cycles).
#[allow(clippy::needless_range_loop)] // parallel per-state arrays
pub(crate) fn undecided(dfa: &Dfa, weights: &mut Weights) -> Vec<Weight> {
    let n = dfa.state_len();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut u: Vec<Weight> = vec![EMPTY; n];
    for s in 0..n {
        let (dw, dt) = dfa.default[s];
        u[s] = weights.union(u[s], dw);
        preds[dt as usize].push(s as u32);
        for &(_, w, t) in &dfa.edges[s] {
            u[s] = weights.union(u[s], w);
            preds[t as usize].push(s as u32);
        }
    }
    for p in &mut preds {
        p.sort_unstable();
        p.dedup();
    }
    let mut queued = vec![true; n];
    let mut work: Vec<u32> = (0..n as u32).collect();
    while let Some(t) = work.pop() {
        queued[t as usize] = false;
        let ut = u[t as usize];
        if ut == EMPTY {
            continue;
        }
        for &p in &preds[t as usize] {
            let merged = weights.union(u[p as usize], ut);
            if merged != u[p as usize] {
                u[p as usize] = merged;
                if !queued[p as usize] {
                    queued[p as usize] = true;
                    work.push(p);
                }
            }
        }
    }
    u
}

#[cfg(test)]
mod tests {
    use ahash::AHashMap;
    use proptest::prelude::*;

    use super::*;

    /// Moore's rounds: every state's signature (its block first) each round, until a round
    /// splits nothing. The reference the worklist refinement must agree with.
    fn moore(dfa: &Dfa) -> Vec<u32> {
        let n = dfa.state_len();
        let mut block = vec![0u32; n];
        let mut blocks = 1;
        loop {
            let mut index: AHashMap<Vec<u32>, u32> = AHashMap::new();
            let next: Vec<u32> = (0..n)
                .map(|s| {
                    let (dw, dt) = dfa.default[s];
                    let db = block[dt as usize];
                    let mut sig = vec![block[s], dw, db];
                    for &(x, w, t) in &dfa.edges[s] {
                        if (w, block[t as usize]) != (dw, db) {
                            sig.extend_from_slice(&[x, w, block[t as usize]]);
                        }
                    }
                    let id = index.len() as u32;
                    *index.entry(sig).or_insert(id)
                })
                .collect();
            block = next;
            if index.len() == blocks {
                return block;
            }
            blocks = index.len();
        }
    }

    /// A DFA of `n` states over inputs `0..4` and outputs `0..3` from `raw`: few outputs and
    /// targets, so that many states are equivalent; state 0 loops to itself with no output.
    fn dfa_from(n: usize, raw: &[(u8, u8, u8, u8, u8)]) -> Dfa {
        let mut dfa = Dfa {
            default: vec![(EMPTY, DEAD)],
            edges: vec![Vec::new()],
        };
        for s in 1..n {
            let pick = |i: usize| raw[(s * 5 + i) % raw.len()];
            let (dw, dt, ..) = pick(0);
            let default = (u32::from(dw % 3), u32::from(dt) % n as u32);
            let mut edges: Vec<(u32, Weight, StateId)> = (0..4u32)
                .filter_map(|x| {
                    let (on, w, t, ..) = pick(1 + x as usize);
                    let e = (u32::from(w % 3), u32::from(t) % n as u32);
                    (on % 2 == 0 && e != default).then_some((x, e.0, e.1))
                })
                .collect();
            edges.sort_unstable();
            dfa.default.push(default);
            dfa.edges.push(edges);
        }
        dfa
    }

    proptest! {
        /// Two states share a block in the worklist refinement iff they do in Moore's.
        #[test]
        fn the_worklist_refinement_is_moores_partition(
            n in 1usize..40,
            raw in prop::collection::vec(any::<(u8, u8, u8, u8, u8)>(), 1..200),
        ) {
            let dfa = dfa_from(n, &raw);
            let (ours, blocks) = coarsest(&dfa);
            let reference = moore(&dfa);
            let mut pairs: AHashMap<u32, u32> = AHashMap::new();
            for (&a, &b) in ours.iter().zip(&reference) {
                prop_assert_eq!(*pairs.entry(a).or_insert(b), b);
            }
            prop_assert_eq!(pairs.len(), blocks);
            prop_assert_eq!(blocks, reference.iter().max().map_or(0, |&m| m as usize + 1));
        }
    }
}
