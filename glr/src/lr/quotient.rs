//! [`Quotient`]: the LR tables up to what a run of the parser can tell apart, with states and
//! terminals that no sequence of actions distinguishes merged.
//!
//! Two states are equivalent when they accept alike, shift equivalent terminals to equivalent
//! states, reduce to the same nonterminal by the same number of symbols on equivalent
//! lookaheads, and go to equivalent states on every nonterminal; two terminals are equivalent
//! when every state shifts them to equivalent states (or neither) and every reduction's
//! lookahead set holds both or neither. The largest such equivalence is found by partition
//! refinement from one class of each, both partitions refined in turn until neither splits.
//!
//! Mapping states and terminals to their classes is then a homomorphism of the tables: a
//! stack of states and a sequence of terminals, mapped, has exactly the runs (shifts,
//! reductions by nonterminal and length, accepts) of the original, mapped. Which production a
//! reduction uses is not kept: two reductions to the same nonterminal by the same length do
//! the same to the stack. So anything a masker computes from the runs alone (whether a
//! terminal sequence can be parsed from a stack) is the same on the quotient, and a keyword
//! set `("k0" | … | "k7999")*` (16,003 states, 8,000 terminals) becomes a few states and one
//! terminal.

use std::sync::Arc;

use ahash::AHashMap;
use munch_lexer::TerminalId;
use munch_vocab::bits;

use super::{dense_index, Action, LrState, LrTables};
use crate::parser::Parser;

/// The LR tables with equivalent states and equivalent terminals merged (see the
/// [module docs](self)): built by [`Quotient::new`], `Send + Sync`.
#[derive(Clone, Debug)]
pub struct Quotient {
    tables: LrTables,
    /// Per state of the original tables: its class, a state of `tables`.
    state_class: Vec<u32>,
    /// Per lookahead index of the original tables (`$` last): its class, a lookahead index of
    /// `tables` (`$` stays last, alone).
    lookahead_class: Vec<u32>,
}

/// The most refinement rounds: real grammars' tables settle in a few; a quotient that has not
/// settled by then is not used (its classes would be too coarse).
const MAX_ROUNDS: usize = 256;

impl Quotient {
    /// The quotient of `tables`, or `None` when no two states and no two terminals are
    /// equivalent (or the refinement does not settle within its rounds): then the tables are
    /// their own quotient.
    pub fn new(tables: &LrTables) -> Option<Quotient> {
        let (state_class, state_len, terminal_class, terminal_len) = classes(tables)?;
        if state_len == tables.state_len() && terminal_len == tables.terminal_len as usize {
            return None;
        }
        let mut lookahead_class = terminal_class;
        lookahead_class.push(terminal_len as u32);
        let quotient = build(
            tables,
            &state_class,
            state_len,
            &lookahead_class,
            terminal_len,
        );
        Some(Quotient {
            tables: quotient,
            state_class,
            lookahead_class,
        })
    }

    /// The merged tables: one state per class of states, one terminal per class of terminals
    /// (`$` is [`eof_index`](LrTables::eof_index), as always). Their
    /// [`cfg`](LrTables::cfg) is the original grammar's, whose nonterminals and productions
    /// they keep; its terminals are not theirs. The start state's class is
    /// [`LrState::START`].
    pub fn tables(&self) -> &LrTables {
        &self.tables
    }

    /// The class of the original tables' state `s`.
    #[inline]
    pub fn state_class(&self, s: LrState) -> LrState {
        LrState(self.state_class[s.as_usize()])
    }

    /// The class of the original tables' lookahead index `k` (a terminal id, or their
    /// `eof_index`).
    #[inline]
    pub fn lookahead_class(&self, k: u32) -> u32 {
        self.lookahead_class[k as usize]
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.tables.heap_bytes()
            + (self.state_class.capacity() + self.lookahead_class.capacity()) * 4
    }
}

/// The LR tables a masker reads: its parser's [`Quotient`] where it merges states or
/// terminals, else the parser's own; with the maps from the parser's terminals and states to
/// the classes. `Send + Sync`.
#[derive(Debug)]
pub struct ClassTables {
    parser: Arc<Parser>,
    quotient: Option<Quotient>,
    /// Made on first use ([`ClassTables::regex_readings`]).
    readings: std::sync::OnceLock<RegexReadings>,
}

impl ClassTables {
    /// The classes of `parser`'s tables.
    pub fn new(parser: Arc<Parser>) -> ClassTables {
        let quotient = Quotient::new(parser.tables());
        ClassTables {
            parser,
            quotient,
            readings: std::sync::OnceLock::new(),
        }
    }

    /// The parser.
    pub fn parser(&self) -> &Arc<Parser> {
        &self.parser
    }

    /// The tables: their states and terminals are classes.
    #[inline]
    pub fn tables(&self) -> &LrTables {
        match &self.quotient {
            Some(q) => q.tables(),
            None => self.parser.tables(),
        }
    }

    /// The class of the parser's terminal `t`, a terminal of [`tables`](ClassTables::tables);
    /// `None` for a terminal the grammar's rules do not use (an `%ignore`d one, say), which the
    /// parser never shifts.
    #[inline]
    pub fn terminal(&self, t: TerminalId) -> Option<u32> {
        if t.as_u32() >= self.parser.tables().eof_index() {
            return None;
        }
        Some(match &self.quotient {
            Some(q) => q.lookahead_class(t.as_u32()),
            None => t.as_u32(),
        })
    }

    /// What tells a lexeme's terminal `t` apart for a masker reading these classes: its class
    /// if the parser may shift it; an ignored terminal is itself (it leaves the stack as it
    /// is, which no class does); the others (never shifted, never ignored) are one key.
    /// Lexemes whose terminals have the same keys do the same to every stack.
    pub fn lexeme_key(&self, t: TerminalId) -> u32 {
        const IGNORED: u32 = 1 << 31;
        if self.parser.is_ignored(t) {
            IGNORED | t.as_u32()
        } else {
            self.terminal(t).unwrap_or(IGNORED - 1)
        }
    }

    /// The class of the parser's LR state `s`: a state of [`tables`](ClassTables::tables).
    #[inline]
    pub fn state(&self, s: LrState) -> LrState {
        match &self.quotient {
            Some(q) => q.state_class(s),
            None => s,
        }
    }

    /// Per class of states, the parser's states in it, ascending; `None` when the classes are
    /// the states.
    pub fn members(&self) -> Option<Vec<Vec<u32>>> {
        let q = self.quotient.as_ref()?;
        let mut members = vec![Vec::new(); q.tables().state_len()];
        for (s, &c) in q.state_class.iter().enumerate() {
            members[c as usize].push(s as u32);
        }
        Some(members)
    }

    /// Heap bytes of the quotient (the parser's own tables are the parser's).
    pub fn heap_bytes(&self) -> usize {
        self.quotient.as_ref().map_or(0, Quotient::heap_bytes)
            + self.readings.get().map_or(0, RegexReadings::heap_bytes)
    }

    /// Where the class of a stand-in (a literal tied with a regex, read as the literal where a
    /// state has an action on it, as the regex elsewhere) is exactly its regex's class: made on
    /// first use, empty without stand-ins.
    pub fn regex_readings(&self) -> &RegexReadings {
        self.readings.get_or_init(|| RegexReadings::new(self))
    }
}

/// Where a stand-in's class reads exactly as its regex's ([`ClassTables::regex_readings`]).
///
/// A stand-in's column takes the literal's actions in the states with an action on the literal,
/// the regex's elsewhere, and a run decides again in every state its reductions reach. So from
/// a state `x`, taking the stand-in is taking the regex, on every stack, when neither `x` nor
/// any state that the regex's reductions can reach from `x` has an action on the literal: the
/// run then reads the regex's actions throughout, and its shift pushes the regex's target. The
/// states reachable are over-approximated from the tables alone (a reduction by `m` symbols
/// from `z` may expose any state with a path of `m` transitions to `z`), so that an answer of
/// "exact" holds for every stack. Summaries keyed by terminal and state (the wda's templates)
/// then share the regex's work wherever the stand-in is read as the regex: a keyword's class
/// costs nothing where the parser cannot take the keyword. The walk has a budget
/// ([`READINGS_WORK`]); past it, the stand-ins left are read as themselves, which is always
/// exact.
#[derive(Clone, Debug, Default)]
pub struct RegexReadings {
    /// Per terminal class of a stand-in: the regex's class, and the states (classes) from
    /// which a run may meet the literal's actions, as bits: elsewhere the stand-in's class is
    /// read as the regex's.
    by_class: Vec<Option<(u32, Box<[u64]>)>>,
}

impl RegexReadings {
    fn new(classes: &ClassTables) -> RegexReadings {
        RegexReadings::within(classes, READINGS_WORK)
    }

    /// The readings found within `budget` steps.
    fn within(classes: &ClassTables, budget: usize) -> RegexReadings {
        let stand_ins = classes.parser.lexer().stand_ins();
        if stand_ins.is_empty() {
            return RegexReadings::default();
        }
        let tables = classes.tables();
        let state_len = tables.state_len();
        let words = state_len.div_ceil(64);
        // Per state: the states with a transition (shift or goto) to it.
        let mut pred: Vec<Vec<u32>> = vec![Vec::new(); state_len];
        for q in 0..state_len {
            let shifts = tables.shift_start[q] as usize..tables.shift_start[q + 1] as usize;
            for a in &tables.shifts[shifts] {
                if let Action::Shift(to) = a {
                    pred[to.as_usize()].push(q as u32);
                }
            }
            for (_, to) in tables.state_gotos(LrState(q as u32)) {
                pred[to.as_usize()].push(q as u32);
            }
        }
        for p in &mut pred {
            p.sort_unstable();
            p.dedup();
        }
        // Per regex class: the reversed edges `z → goto(q, A)` of its reductions.
        let mut reached_from: AHashMap<u32, Vec<Vec<u32>>> = AHashMap::new();
        let mut work = 0usize;
        let mut by_class: Vec<Option<(u32, Box<[u64]>)>> = vec![None; tables.eof_index() as usize];
        for si in stand_ins {
            let (Some(c), Some(l), Some(r)) = (
                classes.terminal(si.terminal),
                classes.terminal(si.literal),
                classes.terminal(si.regex),
            ) else {
                continue;
            };
            if c == r || by_class[c as usize].is_some() {
                continue;
            }
            if !reached_from.contains_key(&r) {
                let Some(back) = reduction_edges_back(tables, &pred, r, &mut work, budget) else {
                    break;
                };
                reached_from.insert(r, back);
            }
            let back = &reached_from[&r];
            work += state_len + back.iter().map(Vec::len).sum::<usize>() + words;
            if work > budget {
                break;
            }
            // The states from which a run on the regex's actions may meet the literal's.
            let mut meets = vec![0u64; words];
            let mut stack: Vec<u32> = (0..state_len as u32)
                .filter(|&z| !tables.actions_at(LrState(z), l).is_empty())
                .collect();
            for &z in &stack {
                bits::insert(&mut meets, z as usize);
            }
            while let Some(z) = stack.pop() {
                for &y in &back[z as usize] {
                    if bits::insert(&mut meets, y as usize) {
                        stack.push(y);
                    }
                }
            }
            by_class[c as usize] = Some((r, meets.into()));
        }
        RegexReadings { by_class }
    }

    /// How to read terminal class `t` from state class `x`: the regex's class where `t` is a
    /// stand-in's class read exactly as it there, else `t`.
    #[inline]
    pub fn reading(&self, t: u32, x: u32) -> u32 {
        match self.by_class.get(t as usize) {
            Some(Some((r, meets))) if !bits::contains(meets, x as usize) => *r,
            _ => t,
        }
    }

    /// Whether some class is read as another anywhere.
    pub fn is_empty(&self) -> bool {
        self.by_class.iter().all(Option::is_none)
    }

    fn heap_bytes(&self) -> usize {
        self.by_class.capacity() * std::mem::size_of::<Option<(u32, Box<[u64]>)>>()
            + self
                .by_class
                .iter()
                .flatten()
                .map(|(_, b)| b.len() * 8)
                .sum::<usize>()
    }
}

/// The most steps [`RegexReadings::new`] takes (a state or an edge visited, a word of bits
/// made): past it, the stand-ins not yet done are read as themselves, which is always exact,
/// so that a grammar built to make the walk long cannot stall a build.
const READINGS_WORK: usize = 1 << 26;

/// Per state `z`: the states `x` whose reductions under lookahead `k` may reach `z` in one
/// step (`z = goto(q, A)` for a `q` with a path of the reduction's length to `x`); `None` when
/// `work` passes `budget`.
fn reduction_edges_back(
    tables: &LrTables,
    pred: &[Vec<u32>],
    k: u32,
    work: &mut usize,
    budget: usize,
) -> Option<Vec<Vec<u32>>> {
    let state_len = tables.state_len();
    let mut back: Vec<Vec<u32>> = vec![Vec::new(); state_len];
    let mut layer: Vec<u32> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    let mut mark = vec![u32::MAX; state_len];
    let mut round = 0u32;
    for x in 0..state_len {
        for a in tables.actions_at(LrState(x as u32), k).iter() {
            let Action::Reduce { lhs, len, .. } = *a else {
                continue;
            };
            layer.clear();
            layer.push(x as u32);
            for _ in 0..len {
                round += 1;
                next.clear();
                for &z in &layer {
                    *work += 1 + pred[z as usize].len();
                    for &q in &pred[z as usize] {
                        if mark[q as usize] != round {
                            mark[q as usize] = round;
                            next.push(q);
                        }
                    }
                }
                std::mem::swap(&mut layer, &mut next);
                if *work > budget {
                    return None;
                }
            }
            *work += layer.len();
            for &q in &layer {
                if let Some(g) = tables.goto(LrState(q), lhs) {
                    back[g.as_usize()].push(x as u32);
                }
            }
        }
    }
    for b in &mut back {
        b.sort_unstable();
        b.dedup();
    }
    Some(back)
}

/// The classes of states and of terminals (`$` left out): `(class per state, number of state
/// classes, class per terminal, number of terminal classes)`, classes numbered by their first
/// member; `None` if the refinement did not settle.
fn classes(t: &LrTables) -> Option<(Vec<u32>, usize, Vec<u32>, usize)> {
    let state_len = t.state_len();
    let terminal_len = t.terminal_len as usize;
    let set_len = t.lookahead_set_len();
    // Per terminal: the states that shift it, with their targets, by state.
    let mut shifted_by: Vec<Vec<(u32, u32)>> = vec![Vec::new(); terminal_len];
    for s in 0..state_len {
        for i in t.shift_start[s] as usize..t.shift_start[s + 1] as usize {
            if let Action::Shift(to) = t.shifts[i] {
                shifted_by[t.shift_keys[i] as usize].push((s as u32, to.0));
            }
        }
    }
    // Per lookahead set: its members; per terminal, the sets that hold it (fixed: the first
    // round splits the terminals by them).
    let members: Vec<Vec<u32>> = (0..set_len)
        .map(|set| {
            let words = &t.lookahead_sets[set * t.set_words..(set + 1) * t.set_words];
            (0..=t.terminal_len)
                .filter(|&k| bits::contains(words, k as usize))
                .collect()
        })
        .collect();
    let mut in_sets: Vec<Vec<u32>> = vec![Vec::new(); terminal_len];
    for (set, ks) in members.iter().enumerate() {
        for &k in ks {
            if (k as usize) < terminal_len {
                in_sets[k as usize].push(set as u32);
            }
        }
    }

    let mut state_class = vec![0u32; state_len];
    let mut terminal_class = vec![0u32; terminal_len];
    let (mut state_classes, mut terminal_classes) = (1, usize::from(terminal_len > 0));
    let mut first = true;
    for _ in 0..MAX_ROUNDS {
        // Terminals, by their class, the classes their shifts reach from each state, and (in
        // the first round) the sets that hold them.
        let mut index: AHashMap<Vec<u32>, u32> = AHashMap::new();
        let mut sig = Vec::new();
        let mut next_terminal = Vec::with_capacity(terminal_len);
        for k in 0..terminal_len {
            sig.clear();
            sig.push(terminal_class[k]);
            for &(s, to) in &shifted_by[k] {
                sig.extend_from_slice(&[s, state_class[to as usize]]);
            }
            if first {
                sig.push(u32::MAX);
                sig.extend_from_slice(&in_sets[k]);
            }
            let id = index.len() as u32;
            next_terminal.push(*index.entry(sig.clone()).or_insert(id));
        }
        let new_terminal_classes = index.len();
        terminal_class = next_terminal;

        // Each lookahead set as the classes it holds, interned.
        let mut set_index: AHashMap<Vec<u32>, u32> = AHashMap::new();
        let set_class: Vec<u32> = members
            .iter()
            .map(|ks| {
                let mut cs: Vec<u32> = ks
                    .iter()
                    .map(|&k| {
                        if (k as usize) < terminal_len {
                            terminal_class[k as usize]
                        } else {
                            u32::MAX
                        }
                    })
                    .collect();
                cs.sort_unstable();
                cs.dedup();
                let id = set_index.len() as u32;
                *set_index.entry(cs).or_insert(id)
            })
            .collect();

        // States, by their class, acceptance, shifts, reductions and gotos, in classes.
        index.clear();
        let mut next_state = Vec::with_capacity(state_len);
        let mut part: Vec<[u32; 3]> = Vec::new();
        for s in 0..state_len {
            sig.clear();
            sig.push(state_class[s]);
            sig.push(u32::from(t.accepting[s]));
            part.clear();
            for i in t.shift_start[s] as usize..t.shift_start[s + 1] as usize {
                if let Action::Shift(to) = t.shifts[i] {
                    let k = t.shift_keys[i] as usize;
                    part.push([terminal_class[k], state_class[to.as_usize()], 0]);
                }
            }
            push_sorted(&mut sig, &mut part);
            for i in t.reduce_start[s] as usize..t.reduce_start[s + 1] as usize {
                if let Action::Reduce { lhs, len, .. } = t.reduces[i] {
                    part.push([
                        lhs.as_usize() as u32,
                        len,
                        set_class[t.reduce_sets[i] as usize],
                    ]);
                }
            }
            push_sorted(&mut sig, &mut part);
            for i in t.goto_start[s] as usize..t.goto_start[s + 1] as usize {
                let (n, to) = t.gotos[i];
                sig.extend_from_slice(&[n, state_class[to.as_usize()]]);
            }
            let id = index.len() as u32;
            next_state.push(*index.entry(sig.clone()).or_insert(id));
        }
        let new_state_classes = index.len();
        state_class = next_state;
        let settled = !first
            && new_state_classes == state_classes
            && new_terminal_classes == terminal_classes;
        state_classes = new_state_classes;
        terminal_classes = new_terminal_classes;
        first = false;
        if settled {
            return Some((state_class, state_classes, terminal_class, terminal_classes));
        }
    }
    None
}

/// Appends `part` to `sig` sorted, without repeats, and a separator; clears `part`.
fn push_sorted(sig: &mut Vec<u32>, part: &mut Vec<[u32; 3]>) {
    part.sort_unstable();
    part.dedup();
    for p in part.iter() {
        sig.extend_from_slice(p);
    }
    sig.push(u32::MAX);
    part.clear();
}

/// The tables of the classes: each class as its first state, its terminals as their classes.
fn build(
    t: &LrTables,
    state_class: &[u32],
    state_len: usize,
    lookahead_class: &[u32],
    terminal_len: usize,
) -> LrTables {
    let mut representative = vec![u32::MAX; state_len];
    for (s, &c) in state_class.iter().enumerate() {
        if representative[c as usize] == u32::MAX {
            representative[c as usize] = s as u32;
        }
    }
    let set_words = (terminal_len + 1).div_ceil(64).max(1);
    // Each original set as a set of lookahead classes, interned.
    let mut set_index: AHashMap<Vec<u64>, u32> = AHashMap::new();
    let mut lookahead_sets = Vec::new();
    let set_map: Vec<u32> = (0..t.lookahead_set_len())
        .map(|set| {
            let words = &t.lookahead_sets[set * t.set_words..(set + 1) * t.set_words];
            let mut out = vec![0u64; set_words];
            for k in 0..=t.terminal_len {
                if bits::contains(words, k as usize) {
                    bits::insert(&mut out, lookahead_class[k as usize] as usize);
                }
            }
            let id = set_index.len() as u32;
            *set_index.entry(out.clone()).or_insert_with(|| {
                lookahead_sets.extend_from_slice(&out);
                id
            })
        })
        .collect();

    let mut q = LrTables {
        cfg: t.cfg.clone(),
        terminal_len: terminal_len as u32,
        shift_start: Vec::with_capacity(state_len + 1),
        shift_keys: Vec::new(),
        shifts: Vec::new(),
        dense: Vec::new(),
        reduce_start: Vec::with_capacity(state_len + 1),
        reduces: Vec::new(),
        reduce_sets: Vec::new(),
        lookahead_sets,
        set_words,
        accepting: Vec::with_capacity(state_len),
        expanded: Vec::new(),
        expanded_index: Vec::new(),
        expanded_start: Vec::new(),
        expanded_keys: Vec::new(),
        goto_start: Vec::with_capacity(state_len + 1),
        gotos: Vec::new(),
        kernels: vec![Vec::new(); state_len],
        conflicts: std::sync::OnceLock::from(Vec::new()),
    };
    let mut row: Vec<(u32, Action)> = Vec::new();
    let mut reductions: Vec<(Action, u32)> = Vec::new();
    for &r in &representative {
        let r = r as usize;
        q.shift_start.push(q.shifts.len() as u32);
        row.clear();
        for i in t.shift_start[r] as usize..t.shift_start[r + 1] as usize {
            if let Action::Shift(to) = t.shifts[i] {
                let k = lookahead_class[t.shift_keys[i] as usize];
                row.push((k, Action::Shift(LrState(state_class[to.as_usize()]))));
            }
        }
        // Equivalent terminals shift to one class: keep one entry each.
        row.sort_unstable_by_key(|&(k, _)| k);
        row.dedup_by_key(|&mut (k, _)| k);
        for &(k, a) in &row {
            q.shift_keys.push(k);
            q.shifts.push(a);
        }
        q.reduce_start.push(q.reduces.len() as u32);
        reductions.clear();
        for i in t.reduce_start[r] as usize..t.reduce_start[r + 1] as usize {
            reductions.push((t.reduces[i], set_map[t.reduce_sets[i] as usize]));
        }
        reductions.sort_unstable();
        for &(a, set) in &reductions {
            q.reduces.push(a);
            q.reduce_sets.push(set);
        }
        q.accepting.push(t.accepting[r]);
        q.goto_start.push(q.gotos.len() as u32);
        for i in t.goto_start[r] as usize..t.goto_start[r + 1] as usize {
            let (n, to) = t.gotos[i];
            q.gotos.push((n, LrState(state_class[to.as_usize()])));
        }
    }
    q.shift_start.push(q.shifts.len() as u32);
    q.reduce_start.push(q.reduces.len() as u32);
    q.goto_start.push(q.gotos.len() as u32);
    q.dense = dense_index(&q.shift_start, &q.shift_keys, q.terminal_len);
    q.expand(usize::MAX);
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past its budget the walk reads every stand-in as itself (always exact); within it, a
    /// keyword is its name's class where the parser cannot take the keyword.
    #[test]
    fn readings_past_their_budget_read_stand_ins_as_themselves() {
        let parser = crate::parser::chain_tests::parser(
            "start: (\"if\" NAME | NAME \"=\" NAME)+\nNAME: /[a-z]+/\n%ignore \" \"\n",
        )
        .expect("the grammar builds");
        let [stand_in] = parser.lexer().stand_ins() else {
            panic!("one stand-in: {:?}", parser.lexer().stand_ins());
        };
        let classes = ClassTables::new(Arc::clone(&parser));
        let s = classes.terminal(stand_in.terminal).unwrap();
        let name = classes.terminal(stand_in.regex).unwrap();
        let states = 0..classes.tables().state_len() as u32;
        let full = RegexReadings::within(&classes, READINGS_WORK);
        assert!(states.clone().any(|x| full.reading(s, x) == name));
        assert!(states.clone().any(|x| full.reading(s, x) == s));
        let none = RegexReadings::within(&classes, 0);
        assert!(none.is_empty());
        assert!(states.into_iter().all(|x| none.reading(s, x) == s));
    }
}
