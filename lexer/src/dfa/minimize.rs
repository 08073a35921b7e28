//! Hopcroft minimisation of the lexer DFA.
//!
//! Two states are merged iff every byte string leads them to states that accept the same
//! terminals with the same look-ahead fail set and the same [`Dfa::kinds`] (which decide
//! where the lexer goes back to a lexeme of literals or of ignored terminals, in the pending
//! states built on the minimal DFA). That is the only observable behaviour: `can_grow`, `reachable`, `extends` and
//! laziness (already folded into the transitions by the subset construction) are all functions
//! of it. In particular every state that can never accept again merges with [`DEAD`], so after
//! minimisation "dead" is the single state id [`DEAD`].
//!
//! Written by hand: regex-automata's minimiser works on its own DFA type, which the lexer does
//! not use (see the determiniser's docs).

use ahash::AHashMap;

use super::determinize::{Dfa, FailSet, DEAD};

/// The minimal DFA equivalent to `dfa`, with `DEAD` = 0 and the other states numbered in
/// breadth-first order from the start (which is 1 unless the start is dead).
pub(crate) fn minimize(dfa: &Dfa) -> Dfa {
    let partition = hopcroft(dfa);
    rebuild(dfa, &partition.block_of, partition.block_len(), &[]).0
}

/// The minimal DFA equivalent to `dfa` from its start and from each of `roots` too (states no
/// byte string leads to from the start: the pending states), numbered as [`minimize`] numbers
/// them and then in breadth-first order from each root in turn; with the new id of every state
/// of `dfa` ([`DEAD`] for those that can never accept).
pub(crate) fn minimize_with_roots(dfa: &Dfa, roots: &[u32]) -> (Dfa, Vec<u32>) {
    let partition = hopcroft(dfa);
    rebuild(dfa, &partition.block_of, partition.block_len(), roots)
}

/// Merges the byte classes that every state of `dfa` treats alike: the same target from every
/// state, the same look-ahead failures, and lowest bytes of the same UTF-8 kind (ASCII,
/// continuation, lead: what `class_lo` is read for). The classes come from the NFA's ranges, and
/// many of those never tell two bytes apart once determinised (a range split by a pattern
/// whose states are never reached on its own); every later step costs per class. Returns the
/// new class of each old one, numbered in order of their lowest classes (so `class_lo` keeps
/// each merged class's lowest byte), or `None` when no two classes merge.
pub(crate) fn merge_classes(dfa: &mut Dfa, class_lo: &mut Vec<u8>) -> Option<Vec<u8>> {
    let (n, k) = (dfa.state_len(), dfa.class_len);
    let with_fails: Vec<usize> = (0..n).filter(|&s| dfa.fail[s] != FailSet::EMPTY).collect();
    // A column read on its own strides through the whole table: past what a cache holds, the
    // columns are checked in one pass over the rows instead.
    let (new_of_old, first_of_new) = if dfa.table.len() > 1 << 16 {
        classes_by_rows(dfa, class_lo, &with_fails)
    } else {
        None
    }
    .unwrap_or_else(|| classes_by_columns(dfa, class_lo, &with_fails));
    let k2 = first_of_new.len();
    if k2 == k {
        return None;
    }
    let mut table = Vec::with_capacity(n * k2);
    for row in dfa.table.chunks_exact(k) {
        table.extend(first_of_new.iter().map(|&c| row[c]));
    }
    for fail in &mut dfa.fail {
        if *fail != FailSet::EMPTY {
            let mut merged = FailSet::EMPTY;
            for (c2, &c) in first_of_new.iter().enumerate() {
                if fail.contains(c as u8) {
                    merged.insert(c2 as u8);
                }
            }
            *fail = merged;
        }
    }
    dfa.table = table;
    dfa.class_len = k2;
    *class_lo = first_of_new.iter().map(|&c| class_lo[c]).collect();
    Some(new_of_old)
}

/// The UTF-8 kind of a class's lowest byte: ASCII, continuation, lead.
fn byte_kind(lo: u8) -> u8 {
    match lo {
        0..=0x7F => 0,
        0x80..=0xBF => 1,
        _ => 2,
    }
}

/// [`merge_classes`]' classes, found column against column: the new class of each column and
/// the first column of each new class. A fingerprint per column, in one pass over the rows;
/// equal fingerprints are then checked column against column. `with_fails`: the states with
/// look-ahead failures.
fn classes_by_columns(dfa: &Dfa, class_lo: &[u8], with_fails: &[usize]) -> (Vec<u8>, Vec<usize>) {
    let k = dfa.class_len;
    let mut prints = vec![0u32; k];
    for row in dfa.table.chunks_exact(k) {
        for (p, &t) in prints.iter_mut().zip(row) {
            *p = p.rotate_left(7) ^ t;
        }
    }
    let alike = |a: usize, b: usize| {
        byte_kind(class_lo[a]) == byte_kind(class_lo[b])
            && dfa.table.chunks_exact(k).all(|row| row[a] == row[b])
            && with_fails
                .iter()
                .all(|&s| dfa.fail[s].contains(a as u8) == dfa.fail[s].contains(b as u8))
    };
    let mut new_of_old = Vec::with_capacity(k);
    let mut first_of_new: Vec<usize> = Vec::new();
    for c in 0..k {
        let same = first_of_new
            .iter()
            .position(|&f| prints[f] == prints[c] && alike(f, c));
        let id = same.unwrap_or_else(|| {
            first_of_new.push(c);
            first_of_new.len() - 1
        });
        new_of_old.push(id as u8);
    }
    (new_of_old, first_of_new)
}

/// [`classes_by_columns`]' result, found in passes over the rows: a fingerprint per column
/// (its targets, its look-ahead failures, its kind of byte), then each column checked against
/// the first column of its fingerprint, all at once. `None` where two different columns share
/// a fingerprint.
fn classes_by_rows(
    dfa: &Dfa,
    class_lo: &[u8],
    with_fails: &[usize],
) -> Option<(Vec<u8>, Vec<usize>)> {
    let k = dfa.class_len;
    let mix = |p: u64, x: u64| p.rotate_left(7) ^ x;
    let mut prints: Vec<u64> = class_lo
        .iter()
        .map(|&lo| u64::from(byte_kind(lo)))
        .collect();
    for row in dfa.table.chunks_exact(k) {
        for (p, &t) in prints.iter_mut().zip(row) {
            *p = mix(*p, u64::from(t));
        }
    }
    for &s in with_fails {
        for (c, p) in prints.iter_mut().enumerate() {
            *p = mix(*p, u64::from(dfa.fail[s].contains(c as u8)));
        }
    }
    let mut new_of_old = Vec::with_capacity(k);
    let mut first_of_new: Vec<usize> = Vec::new();
    // `(column, first column of its fingerprint)`, where those differ.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for c in 0..k {
        match first_of_new.iter().position(|&f| prints[f] == prints[c]) {
            Some(id) => {
                pairs.push((c, first_of_new[id]));
                new_of_old.push(id as u8);
            }
            None => {
                first_of_new.push(c);
                new_of_old.push((first_of_new.len() - 1) as u8);
            }
        }
    }
    // Equal columns have equal fingerprints: if every column equals the first of its
    // fingerprint, the classes are the fingerprints'.
    let exact = pairs
        .iter()
        .all(|&(c, f)| byte_kind(class_lo[c]) == byte_kind(class_lo[f]))
        && dfa
            .table
            .chunks_exact(k)
            .all(|row| pairs.iter().all(|&(c, f)| row[c] == row[f]))
        && with_fails.iter().all(|&s| {
            let fail = &dfa.fail[s];
            pairs
                .iter()
                .all(|&(c, f)| fail.contains(c as u8) == fail.contains(f as u8))
        });
    exact.then_some((new_of_old, first_of_new))
}

/// A partition of the states into blocks, each a contiguous range of `elems`.
struct Partition {
    elems: Vec<u32>,
    /// Where each state sits in `elems`.
    loc: Vec<u32>,
    block_of: Vec<u32>,
    start: Vec<u32>,
    end: Vec<u32>,
    /// Per block: how many of its first elements are marked by the current splitter.
    marked: Vec<u32>,
}

impl Partition {
    fn block_len(&self) -> usize {
        self.start.len()
    }

    /// Moves `state` into its block's marked prefix.
    fn mark(&mut self, state: u32) {
        let b = self.block_of[state as usize] as usize;
        let pos = self.loc[state as usize];
        let first_unmarked = self.start[b] + self.marked[b];
        if pos < first_unmarked {
            return;
        }
        let other = self.elems[first_unmarked as usize];
        self.elems.swap(pos as usize, first_unmarked as usize);
        self.loc[other as usize] = pos;
        self.loc[state as usize] = first_unmarked;
        self.marked[b] += 1;
    }

    fn size(&self, b: u32) -> u32 {
        self.end[b as usize] - self.start[b as usize]
    }
}

/// The coarsest partition compatible with the accepted sets and the transitions.
fn hopcroft(dfa: &Dfa) -> Partition {
    let n = dfa.state_len();
    let k = dfa.class_len;

    let live = live_states(dfa);

    // Initial partition: block 0 holds DEAD and every state that is not live; the others
    // group live states by accepted set (and fail set, and whether a terminal other than a
    // literal, or one not ignored, matches them: `Dfa::kinds`).
    let mut by_accepted: AHashMap<(&[crate::TerminalId], FailSet, u8), u32> = AHashMap::new();
    let mut initial = vec![0u32; n];
    for (s, accepted) in dfa.accepted.iter().enumerate() {
        if live[s] {
            let next = by_accepted.len() as u32 + 1;
            let kinds = dfa.kinds.get(s).copied().unwrap_or(0);
            initial[s] = *by_accepted
                .entry((accepted, dfa.fail[s], kinds))
                .or_insert(next);
        }
    }
    debug_assert!(!live[DEAD as usize]);
    let blocks = by_accepted.len() + 1;

    // Every initial block but one is a splitter: splitting by all blocks but one implies
    // splitting by that one too (Hopcroft's argument). The one left out is the block with the
    // most transitions in, which a splitter scans: the dead block where most transitions go
    // to DEAD (a grammar of keywords), the block of a string's content where most bytes go on
    // with it (a string that counts its characters). The result is the coarsest stable
    // partition whichever block is left out.
    let mut in_offsets = vec![0u32; n + 1];
    for &t in &dfa.table {
        in_offsets[t as usize + 1] += 1;
    }
    let mut weight = vec![0u64; blocks];
    for (s, &b) in initial.iter().enumerate() {
        weight[b as usize] += u64::from(in_offsets[s + 1]);
    }
    let mut skipped = 0;
    for (b, &w) in weight.iter().enumerate() {
        if w > weight[skipped] {
            skipped = b;
        }
    }
    // Incoming transitions `(class, source)` of each state, as CSR by target. The dead block
    // never splits (all its states go to it on every class), so when it is left out its
    // states' incoming transitions are never read: only live targets get them.
    let wanted = |t: u32| skipped != 0 || live[t as usize];
    for (t, count) in in_offsets[1..].iter_mut().enumerate() {
        if !wanted(t as u32) {
            *count = 0;
        }
    }
    for i in 1..=n {
        in_offsets[i] += in_offsets[i - 1];
    }
    let mut fill = in_offsets.clone();
    let mut incoming = vec![(0u8, 0u32); in_offsets[n] as usize];
    for (s, row) in dfa.table.chunks_exact(k).enumerate() {
        for (c, &t) in row.iter().enumerate() {
            if wanted(t) {
                let slot = &mut fill[t as usize];
                incoming[*slot as usize] = (c as u8, s as u32);
                *slot += 1;
            }
        }
    }
    drop(fill);

    let mut elems: Vec<u32> = (0..n as u32).collect();
    elems.sort_by_key(|&s| initial[s as usize]);
    let mut p = Partition {
        loc: vec![0; n],
        block_of: initial,
        start: vec![0; blocks],
        end: vec![0; blocks],
        marked: vec![0; blocks],
        elems,
    };
    for (i, &s) in p.elems.iter().enumerate() {
        p.loc[s as usize] = i as u32;
        let b = p.block_of[s as usize] as usize;
        p.end[b] = i as u32 + 1;
    }
    for b in (0..blocks).rev() {
        p.start[b] = if b == 0 { 0 } else { p.end[b - 1] };
    }

    let mut work: Vec<u32> = (0..blocks as u32)
        .filter(|&b| b as usize != skipped)
        .collect();
    let mut in_work = vec![true; blocks];
    in_work[skipped] = false;
    // Splitting by a block `A` splits every block by each class's preimage of `A` in turn,
    // which is splitting it once by each state's *signature*: the set of classes on which
    // it goes into `A`. So each splitter reads its incoming transitions once, gathers the
    // signature of each source, and cuts each block it touches into one part per signature
    // (the states it does not touch, signature empty, are one more part). Of the parts, all
    // are queued if the block was waiting, else all but the largest (Hopcroft's rule, for a
    // split into several parts).
    const NONE: u32 = u32::MAX;
    // Per state: its index in `sources` while the current splitter runs, else NONE.
    let mut slot = vec![NONE; n];
    let mut sources: Vec<u32> = Vec::new();
    let mut signatures: Vec<[u64; 4]> = Vec::new();
    let mut touched: Vec<u32> = Vec::new();
    while let Some(a) = work.pop() {
        in_work[a as usize] = false;
        let members = p.start[a as usize] as usize..p.end[a as usize] as usize;
        sources.clear();
        signatures.clear();
        for &t in &p.elems[members] {
            let t = t as usize;
            for &(c, s) in &incoming[in_offsets[t] as usize..in_offsets[t + 1] as usize] {
                let i = match slot[s as usize] {
                    NONE => {
                        slot[s as usize] = sources.len() as u32;
                        sources.push(s);
                        signatures.push([0; 4]);
                        sources.len() - 1
                    }
                    i => i as usize,
                };
                munch_vocab::bits::insert(&mut signatures[i], usize::from(c));
            }
        }
        // Each block's touched states gathered at its front, in runs of one signature; each
        // run is a part.
        touched.clear();
        for &s in &sources {
            let b = p.block_of[s as usize];
            if p.marked[b as usize] == 0 {
                touched.push(b);
            }
            p.mark(s);
        }
        for &b in &touched {
            let (lo, marked) = (p.start[b as usize] as usize, p.marked[b as usize] as usize);
            let front = &mut p.elems[lo..lo + marked];
            let signature = |s: &u32| signatures[slot[*s as usize] as usize];
            let first = signature(&front[0]);
            if front.iter().any(|s| signature(s) != first) {
                front.sort_unstable_by_key(signature);
                for (i, &s) in front.iter().enumerate() {
                    p.loc[s as usize] = (lo + i) as u32;
                }
            }
            let first = work.len();
            let mut run = lo;
            while run < lo + marked {
                let key = signature(&p.elems[run]);
                let end = run
                    + p.elems[run..lo + marked]
                        .iter()
                        .take_while(|s| signature(s) == key)
                        .count();
                // Cut off `run..end`, unless it is all that is left of the block.
                if end - run == p.size(b) as usize {
                    break;
                }
                let nb = p.start.len() as u32;
                p.start.push(run as u32);
                p.end.push(end as u32);
                p.marked.push(0);
                p.start[b as usize] = end as u32;
                for &s in &p.elems[run..end] {
                    p.block_of[s as usize] = nb;
                }
                in_work.push(false);
                work.push(nb);
                run = end;
            }
            p.marked[b as usize] = 0;
            if work.len() == first || in_work[b as usize] {
                for &nb in &work[first..] {
                    in_work[nb as usize] = true;
                }
                continue;
            }
            // The largest part stays out: the block itself or one cut off from it.
            let mut largest = (p.size(b), None);
            for (w, &nb) in work[first..].iter().enumerate() {
                if p.size(nb) > largest.0 {
                    largest = (p.size(nb), Some(first + w));
                }
            }
            if let Some(w) = largest.1 {
                work[w] = b;
            }
            for &part in &work[first..] {
                in_work[part as usize] = true;
            }
        }
        for &s in &sources {
            slot[s as usize] = NONE;
        }
    }
    p
}

/// Per state: whether some byte string leads it to an accepting state.
///
/// The subset construction numbers states breadth-first, so successors mostly come later and a
/// few backward sweeps over the rows settle it (a state is live if it accepts or has a live
/// successor; after the first sweep only states not yet live are read). Where eight sweeps
/// still change something, a backward search over distinct predecessors finishes it in linear
/// time. A sweep reads only rows; building the predecessors writes an entry per edge.
fn live_states(dfa: &Dfa) -> Vec<bool> {
    const SWEEPS: usize = 8;
    let n = dfa.state_len();
    let k = dfa.class_len;
    let mut live: Vec<bool> = dfa.accepted.iter().map(|a| !a.is_empty()).collect();
    for _ in 0..SWEEPS {
        let mut changed = false;
        for s in (0..n).rev() {
            if !live[s]
                && dfa.table[s * k..(s + 1) * k]
                    .iter()
                    .any(|&t| live[t as usize])
            {
                live[s] = true;
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
    let preds = distinct_predecessors(dfa);
    let mut stack: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
    while let Some(t) = stack.pop() {
        for &s in preds.of(t) {
            if !live[s as usize] {
                live[s as usize] = true;
                stack.push(s);
            }
        }
    }
    live
}

/// The distinct predecessors of each state, as CSR.
pub(crate) struct Predecessors {
    offsets: Vec<usize>,
    sources: Vec<u32>,
}

impl Predecessors {
    /// The states with a transition to `t`, each once, in increasing order.
    pub fn of(&self, t: u32) -> &[u32] {
        &self.sources[self.offsets[t as usize]..self.offsets[t as usize + 1]]
    }
}

/// Builds [`Predecessors`] for `dfa`: two passes over the table, counting then placing each
/// distinct edge (sources come out in increasing order, as the states are scanned).
pub(crate) fn distinct_predecessors(dfa: &Dfa) -> Predecessors {
    let n = dfa.state_len();
    let k = dfa.class_len;
    // `last[t]`: one more than the last state seen with a transition to `t`, so that a row's
    // repeated targets count once.
    let mut last = vec![0u32; n];
    let mut offsets = vec![0usize; n + 1];
    for s in 0..n {
        for &t in &dfa.table[s * k..(s + 1) * k] {
            if last[t as usize] != s as u32 + 1 {
                last[t as usize] = s as u32 + 1;
                offsets[t as usize + 1] += 1;
            }
        }
    }
    for i in 1..=n {
        offsets[i] += offsets[i - 1];
    }
    last.fill(0);
    let mut fill = offsets[..n].to_vec();
    let mut sources = vec![0u32; offsets[n]];
    for s in 0..n {
        for &t in &dfa.table[s * k..(s + 1) * k] {
            if last[t as usize] != s as u32 + 1 {
                last[t as usize] = s as u32 + 1;
                sources[fill[t as usize]] = s as u32;
                fill[t as usize] += 1;
            }
        }
    }
    Predecessors { offsets, sources }
}

/// The quotient DFA of `dfa` by `block_of`, renumbered (see [`minimize_with_roots`]), and the
/// new id of each state of `dfa`.
fn rebuild(dfa: &Dfa, block_of: &[u32], block_len: usize, roots: &[u32]) -> (Dfa, Vec<u32>) {
    const UNSET: u32 = u32::MAX;
    let k = dfa.class_len;
    let mut rep = vec![UNSET; block_len];
    for (s, &b) in block_of.iter().enumerate() {
        if rep[b as usize] == UNSET {
            rep[b as usize] = s as u32;
        }
    }
    let mut new_id = vec![UNSET; block_len];
    // The blocks in their new order, which is also the breadth-first queue: `order[head..]`
    // are still to be searched.
    let mut order: Vec<u32> = Vec::with_capacity(block_len);
    let mut head = 0;
    let firsts = [DEAD, dfa.start];
    for (i, &root) in firsts.iter().chain(roots).enumerate() {
        let b = block_of[root as usize];
        if new_id[b as usize] == UNSET {
            new_id[b as usize] = order.len() as u32;
            order.push(b);
        }
        if i == 0 {
            continue; // The start follows the dead state before any search.
        }
        while let Some(&b) = order.get(head) {
            head += 1;
            let s = rep[b as usize] as usize;
            for &t in &dfa.table[s * k..(s + 1) * k] {
                let tb = block_of[t as usize];
                if new_id[tb as usize] == UNSET {
                    new_id[tb as usize] = order.len() as u32;
                    order.push(tb);
                }
            }
        }
    }
    let map: Vec<u32> = block_of
        .iter()
        .map(|&b| match new_id[b as usize] {
            UNSET => DEAD,
            id => id,
        })
        .collect();
    // Every target of a block searched was found: `map` is its new id.
    let mut table = Vec::with_capacity(order.len() * k);
    let mut accepted = Vec::with_capacity(order.len());
    let mut fail = Vec::with_capacity(order.len());
    let mut kinds = Vec::new();
    for &b in &order {
        let s = rep[b as usize] as usize;
        table.extend(
            dfa.table[s * k..(s + 1) * k]
                .iter()
                .map(|&t| map[t as usize]),
        );
        accepted.push(dfa.accepted[s].clone());
        fail.push(dfa.fail[s]);
        if !dfa.kinds.is_empty() {
            kinds.push(dfa.kinds.get(s).copied().unwrap_or(0));
        }
    }
    let dfa = Dfa {
        class_len: k,
        table,
        accepted,
        fail,
        start: new_id[block_of[dfa.start as usize] as usize],
        kinds,
    };
    (dfa, map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TerminalId;

    /// A DFA over one class from a transition list and accepted terminals per state.
    fn dfa(next: &[u32], accepted: &[&[u32]], start: u32) -> Dfa {
        Dfa {
            class_len: 1,
            table: next.to_vec(),
            accepted: accepted
                .iter()
                .map(|a| a.iter().map(|&t| TerminalId::from(t)).collect())
                .collect(),
            fail: vec![FailSet::EMPTY; next.len()],
            start,
            kinds: Vec::new(),
        }
    }

    #[test]
    fn merges_equivalent_and_never_accepting_states() {
        // 0 dead; 1 → 2 → 3 → 4 → 3, accepting {0} at 2 and 4 only, so 1 ≡ 3 and 2 ≡ 4;
        // 5 → 6 → 5 never accepts and is unreachable.
        let d = dfa(
            &[0, 2, 3, 4, 3, 6, 5],
            &[&[], &[], &[0], &[], &[0], &[], &[]],
            1,
        );
        let m = minimize(&d);
        assert_eq!(m.state_len(), 3);
        assert_eq!(m.start, 1);
        assert_eq!(m.table[DEAD as usize], DEAD);
        let s2 = m.table[1] as usize;
        assert_eq!(&*m.accepted[s2], &[TerminalId::from(0)]);
        assert!(m.accepted[1].is_empty());
        assert_eq!(m.table[s2], 1);
    }

    #[test]
    fn splits_by_distance_to_acceptance() {
        // A chain 1 → 2 → 3 → 4 → 0 accepting only at 4: no two states are equivalent.
        let d = dfa(&[0, 2, 3, 4, 0], &[&[], &[], &[], &[], &[7]], 1);
        let m = minimize(&d);
        assert_eq!(m.state_len(), 5);
        // A chain that never reaches acceptance collapses into the dead state.
        let d = dfa(&[0, 2, 3, 0], &[&[], &[], &[], &[]], 1);
        assert_eq!(minimize(&d).state_len(), 1);
    }

    #[test]
    fn keeps_distinct_accepted_sets_apart() {
        // 1 → 2 → 0 and 1' = 3 → 4 → 0 with different terminals at 2 and 4: nothing merges
        // except nothing (3, 4 unreachable from the start and dropped).
        let d = dfa(&[0, 2, 0, 4, 0], &[&[], &[], &[0], &[], &[1]], 1);
        let m = minimize(&d);
        assert_eq!(m.state_len(), 3);
        let s2 = m.table[1] as usize;
        assert_eq!(&*m.accepted[s2], &[TerminalId::from(0)]);
    }

    #[test]
    fn liveness_settles_where_sweeps_do_not() {
        // A chain numbered against the sweeps: state s goes to s - 1 and only state 1 accepts,
        // so each backward sweep reaches one more state and the predecessor search finishes.
        // State 40 can never accept (it loops on itself).
        let mut next: Vec<u32> = (0..40).map(|s: u32| s.saturating_sub(1)).collect();
        next.push(40);
        let mut accepted: Vec<&[u32]> = vec![&[]; 41];
        accepted[1] = &[3];
        let d = dfa(&next, &accepted, 39);
        let live = live_states(&d);
        assert!(!live[0] && !live[40]);
        assert!(live[1..40].iter().all(|&l| l));
        // Nothing merges: the distance to acceptance tells every state apart.
        assert_eq!(minimize(&d).state_len(), 40);
        // Numbered with the sweeps, the same chain settles without the search.
        let next: Vec<u32> = (0..40)
            .map(|s: u32| if s == 0 { 0 } else { (s + 1) % 40 })
            .collect();
        let mut accepted: Vec<&[u32]> = vec![&[]; 40];
        accepted[39] = &[3];
        let live = live_states(&dfa(&next, &accepted, 1));
        assert!(!live[0] && live[1..].iter().all(|&l| l));
    }

    #[test]
    fn start_that_cannot_accept_is_dead() {
        let d = dfa(&[0, 2, 1], &[&[], &[], &[]], 1);
        let m = minimize(&d);
        assert_eq!(m.state_len(), 1);
        assert_eq!(m.start, DEAD);
    }
}
