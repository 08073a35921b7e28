//! Minimisation of the Parser DWA (Moore's partition refinement on a machine with outputs on
//! its transitions), and the per-state set of classes still undecided.
//!
//! Two states are equivalent iff every stack gives the same output from both. Refinement starts
//! with one block and splits by the signature `(default output, block of the default target,
//! [(x, output, block of target)])`, where entries that behave like the default are left out
//! so that the signature is a function of the behaviour, not of how sparse the list happens to
//! be. When a round splits nothing, the blocks are the equivalence classes.

use ahash::AHashMap;

use crate::bits::{Weight, Weights, EMPTY};
use crate::determinize::{Dfa, StateId, DEAD};

/// Minimises `dfa`; returns the minimal automaton and the map old state → new state. The dead
/// state stays state 0.
pub(crate) fn minimize(dfa: &Dfa) -> (Dfa, Vec<StateId>) {
    let n = dfa.state_len();
    let mut block: Vec<u32> = vec![0; n];
    let mut blocks = 1usize;
    loop {
        let mut index: AHashMap<Vec<u32>, u32> = AHashMap::with_capacity(blocks * 2);
        let mut next: Vec<u32> = Vec::with_capacity(n);
        let mut sig: Vec<u32> = Vec::new();
        for s in 0..n {
            sig.clear();
            // The old block keeps refinement monotone: states once apart stay apart.
            sig.push(block[s]);
            let (dw, dt) = dfa.default[s];
            let db = block[dt as usize];
            sig.push(dw);
            sig.push(db);
            for &(x, w, t) in &dfa.edges[s] {
                let tb = block[t as usize];
                if (w, tb) != (dw, db) {
                    sig.extend_from_slice(&[x, w, tb]);
                }
            }
            let id = index.len() as u32;
            let b = *index.entry(sig.clone()).or_insert(id);
            next.push(b);
        }
        let count = index.len();
        block = next;
        if count == blocks {
            break;
        }
        blocks = count;
    }
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
