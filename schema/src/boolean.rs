//! Boolean combinations of terminal regexes: the strings every `include` regex matches and no
//! `exclude` regex matches, written back as one regex.
//!
//! An object's keys are split by what decides their values: a declared name takes its
//! property's schema, a key that `patternProperties` patterns match takes theirs (all of them),
//! and any other key the additional properties' schema. So the key terminals are intersections
//! and differences of regexes, which regex syntax cannot state and no regex library computes;
//! this module computes them on automata:
//!
//! 1. Each regex (parsed by `regex-syntax`) becomes a Thompson NFA over the *intervals* of code
//!    points that no regex tells apart (the boundaries of every class and literal), so an
//!    automaton's alphabet is small whatever the classes.
//! 2. Each NFA is determinised, and the DFAs are run side by side from their start states (a
//!    product): a pair of states accepts when every included DFA accepts and no excluded one
//!    does.
//! 3. States that reach no accepting state are dropped (an empty result is `None`), the rest
//!    minimised (Moore's refinement).
//! 4. State elimination writes the automaton back as a regex in Python's `re` syntax, the
//!    dialect of the Lark text the emitter writes; every character outside `[0-9A-Za-z]` is a
//!    hex escape.
//!
//! The regexes must be greedy and free of look-around (the emitter's key regexes are). The
//! states of every automaton and the length of the regex written are bounded ([`Budget`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use regex_syntax::hir::{Class, Hir, HirKind};

/// The most states of any automaton, transitions of any DFA, and the longest regex, one
/// combination may make.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// States of an NFA, a DFA or the product.
    pub states: usize,
    /// Transitions of a DFA or the product (states times intervals of the alphabet).
    pub cells: usize,
    /// Bytes of the regex written.
    pub bytes: usize,
}

/// Why a combination was not written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BoolError {
    /// A regex uses something the automata do not model (look-around, a lazy repetition, a
    /// byte class beyond ASCII), or does not parse.
    Unsupported(String),
    /// An automaton would exceed the [`Budget`].
    TooBig,
    /// The product automaton fits, but the regex written from it would exceed the [`Budget`]
    /// (or nest deeper than the grammar reader takes).
    Unwritable,
}

impl std::fmt::Display for BoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoolError::Unsupported(what) => write!(f, "the key regexes use {what}"),
            BoolError::TooBig => write!(f, "the automaton exceeds its budget"),
            BoolError::Unwritable => write!(f, "the regex written exceeds its budget"),
        }
    }
}

/// The strings every regex of `include` matches (whole) and none of `exclude` does, as one
/// regex; `None` when there are none. `include` must not be empty.
pub(crate) fn combine(
    include: &[String],
    exclude: &[String],
    budget: Budget,
) -> Result<Option<String>, BoolError> {
    assert!(!include.is_empty(), "combine needs a regex to include");
    let hirs = include
        .iter()
        .chain(exclude)
        .map(|r| {
            regex_syntax::ParserBuilder::new()
                .build()
                .parse(r)
                .map_err(|e| {
                    BoolError::Unsupported(format!("syntax the automata do not read ({e})"))
                })
        })
        .collect::<Result<Vec<Hir>, _>>()?;
    let alphabet = Alphabet::of(&hirs)?;
    let dfas = hirs
        .iter()
        .map(|h| {
            let nfa = Nfa::of(h, &alphabet, budget.states)?;
            Dfa::of(&nfa, alphabet.len(), budget)
        })
        .collect::<Result<Vec<Dfa>, _>>()?;
    let product = Dfa::product(&dfas, include.len(), budget)?;
    let Some(live) = product.trimmed() else {
        return Ok(None);
    };
    // Minimising shortens the regex; a DFA too large to minimise in the budget is written as is.
    let minimal = live
        .minimised(budget.cells.saturating_mul(WORK_PER_CELL))
        .unwrap_or(live);
    minimal.regex(&alphabet, budget.bytes).map(Some)
}

/// Appends `(end, to)` to `runs`, or extends the last run to `end` when it has the same
/// successor.
fn push_run<K: PartialEq>(runs: &mut Vec<(usize, Option<K>)>, end: usize, to: Option<K>) {
    match runs.last_mut() {
        Some(last) if last.1 == to => last.0 = end,
        _ => runs.push((end, to)),
    }
}

/// The code points cut into intervals that no class or literal of the regexes splits.
struct Alphabet {
    /// Interval `i` is `starts[i]..starts[i + 1]`; the last ends past `char::MAX`.
    starts: Vec<u32>,
}

impl Alphabet {
    fn of(hirs: &[Hir]) -> Result<Alphabet, BoolError> {
        let mut cuts = BTreeSet::from([0u32, 0x11_0000]);
        for h in hirs {
            for (lo, hi) in ranges_in(h)? {
                cuts.insert(lo);
                cuts.insert(hi + 1);
            }
        }
        let mut starts: Vec<u32> = cuts.into_iter().collect();
        starts.pop();
        Ok(Alphabet { starts })
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    /// The intervals making up `lo..=hi`.
    fn of_range(&self, lo: u32, hi: u32) -> std::ops::Range<usize> {
        let first = self.starts.partition_point(|&s| s <= lo) - 1;
        let end = self.starts.partition_point(|&s| s <= hi);
        first..end
    }

    /// Interval `i` as `(first, last)` code points.
    fn bounds(&self, i: usize) -> (u32, u32) {
        let end = self.starts.get(i + 1).copied().unwrap_or(0x11_0000);
        (self.starts[i], end - 1)
    }
}

/// Every code-point range a regex's classes and literals name, checking what the automata
/// model.
fn ranges_in(h: &Hir) -> Result<Vec<(u32, u32)>, BoolError> {
    let mut out = Vec::new();
    let mut stack = vec![h];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Empty => {}
            HirKind::Literal(lit) => {
                let text = std::str::from_utf8(&lit.0)
                    .map_err(|_| BoolError::Unsupported("a literal that is not UTF-8".into()))?;
                out.extend(text.chars().map(|c| (c as u32, c as u32)));
            }
            HirKind::Class(c) => out.extend(class_ranges(c)?),
            HirKind::Look(_) => return Err(BoolError::Unsupported("look-around".into())),
            HirKind::Repetition(r) => {
                if !r.greedy {
                    return Err(BoolError::Unsupported("a lazy repetition".into()));
                }
                stack.push(&r.sub);
            }
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => stack.extend(hs),
        }
    }
    Ok(out)
}

fn class_ranges(c: &Class) -> Result<Vec<(u32, u32)>, BoolError> {
    match c {
        Class::Unicode(u) => Ok(u
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect()),
        Class::Bytes(b) => b
            .ranges()
            .iter()
            .map(|r| {
                if r.end() > 0x7f {
                    Err(BoolError::Unsupported("a byte class beyond ASCII".into()))
                } else {
                    Ok((r.start() as u32, r.end() as u32))
                }
            })
            .collect(),
    }
}

/// A Thompson NFA over the alphabet's intervals: state 0 starts, `accept` accepts.
struct Nfa {
    eps: Vec<Vec<u32>>,
    /// Per state: (first interval, end interval, target).
    edges: Vec<Vec<(u32, u32, u32)>>,
    accept: u32,
}

impl Nfa {
    fn of(h: &Hir, alphabet: &Alphabet, max_states: usize) -> Result<Nfa, BoolError> {
        let mut nfa = Nfa {
            eps: vec![Vec::new()],
            edges: vec![Vec::new()],
            accept: 0,
        };
        let mut b = NfaBuilder {
            nfa: &mut nfa,
            alphabet,
            max_states,
        };
        let end = b.fragment(h, 0)?;
        nfa.accept = end;
        Ok(nfa)
    }
}

struct NfaBuilder<'a> {
    nfa: &'a mut Nfa,
    alphabet: &'a Alphabet,
    max_states: usize,
}

impl NfaBuilder<'_> {
    fn state(&mut self) -> Result<u32, BoolError> {
        if self.nfa.eps.len() >= self.max_states {
            return Err(BoolError::TooBig);
        }
        self.nfa.eps.push(Vec::new());
        self.nfa.edges.push(Vec::new());
        Ok(self.nfa.eps.len() as u32 - 1)
    }

    fn ranges(&mut self, from: u32, ranges: &[(u32, u32)]) -> Result<u32, BoolError> {
        let to = self.state()?;
        for &(lo, hi) in ranges {
            let r = self.alphabet.of_range(lo, hi);
            self.nfa.edges[from as usize].push((r.start as u32, r.end as u32, to));
        }
        Ok(to)
    }

    /// Adds `h` reading from state `from`; returns the state where it ends.
    fn fragment(&mut self, h: &Hir, from: u32) -> Result<u32, BoolError> {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => Ok(from),
            HirKind::Literal(lit) => {
                let text = std::str::from_utf8(&lit.0)
                    .map_err(|_| BoolError::Unsupported("a literal that is not UTF-8".into()))?;
                let mut at = from;
                for c in text.chars() {
                    at = self.ranges(at, &[(c as u32, c as u32)])?;
                }
                Ok(at)
            }
            HirKind::Class(c) => self.ranges(from, &class_ranges(c)?),
            HirKind::Capture(c) => self.fragment(&c.sub, from),
            HirKind::Concat(hs) => {
                let mut at = from;
                for h in hs {
                    at = self.fragment(h, at)?;
                }
                Ok(at)
            }
            HirKind::Alternation(hs) => {
                let end = self.state()?;
                for h in hs {
                    let start = self.state()?;
                    self.nfa.eps[from as usize].push(start);
                    let e = self.fragment(h, start)?;
                    self.nfa.eps[e as usize].push(end);
                }
                Ok(end)
            }
            HirKind::Repetition(r) => {
                let mut at = from;
                for _ in 0..r.min {
                    at = self.fragment(&r.sub, at)?;
                }
                match r.max {
                    None => {
                        // A loop through a fresh state, so that nothing else reaches into it.
                        let hub = self.state()?;
                        self.nfa.eps[at as usize].push(hub);
                        let e = self.fragment(&r.sub, hub)?;
                        self.nfa.eps[e as usize].push(hub);
                        Ok(hub)
                    }
                    Some(max) => {
                        let end = self.state()?;
                        self.nfa.eps[at as usize].push(end);
                        for _ in r.min..max {
                            at = self.fragment(&r.sub, at)?;
                            self.nfa.eps[at as usize].push(end);
                        }
                        Ok(end)
                    }
                }
            }
        }
    }
}

/// A complete DFA over the alphabet's intervals: state 0 is dead, state 1 starts.
struct Dfa {
    symbols: usize,
    next: Vec<u32>,
    accept: Vec<bool>,
}

/// NFA edges the subset construction may look at per transition cell of its budget.
const WORK_PER_CELL: usize = 16;

const DEAD: u32 = 0;
const START: u32 = 1;

impl Dfa {
    fn len(&self) -> usize {
        self.accept.len()
    }

    fn step(&self, s: u32, a: usize) -> u32 {
        self.next[s as usize * self.symbols + a]
    }

    /// The subset construction.
    fn of(nfa: &Nfa, symbols: usize, budget: Budget) -> Result<Dfa, BoolError> {
        let mut seen = vec![false; nfa.eps.len()];
        let mut closure = |set: &mut Vec<u32>| {
            for &q in set.iter() {
                seen[q as usize] = true;
            }
            let mut i = 0;
            while i < set.len() {
                for &t in &nfa.eps[set[i] as usize] {
                    if !seen[t as usize] {
                        seen[t as usize] = true;
                        set.push(t);
                    }
                }
                i += 1;
            }
            for &q in set.iter() {
                seen[q as usize] = false;
            }
            set.sort_unstable();
        };
        let mut start = vec![0u32];
        closure(&mut start);
        let accepts = |set: &Vec<u32>| set.binary_search(&nfa.accept).is_ok();
        // Edges looked at, bounded like the transitions' cells (a set may hold every state).
        let mut work = 0usize;
        let mut cuts: Vec<usize> = Vec::new();
        Dfa::explore(start, symbols, budget, accepts, |set, runs| {
            // No edge of the set starts or ends inside a piece between two cuts, so each piece
            // has one target set: symbols in a piece are stepped together.
            cuts.clear();
            cuts.extend([0, symbols]);
            for &q in set {
                let edges = &nfa.edges[q as usize];
                cuts.extend(
                    edges
                        .iter()
                        .flat_map(|&(lo, hi, _)| [lo as usize, hi as usize]),
                );
            }
            cuts.sort_unstable();
            cuts.dedup();
            for piece in cuts.windows(2) {
                let a = piece[0];
                let mut to: Vec<u32> = Vec::new();
                for &q in set {
                    work += nfa.edges[q as usize].len() + 1;
                    if work > budget.cells.saturating_mul(WORK_PER_CELL) {
                        return Err(BoolError::TooBig);
                    }
                    for &(lo, hi, t) in &nfa.edges[q as usize] {
                        if (lo as usize..hi as usize).contains(&a) {
                            to.push(t);
                        }
                    }
                }
                to.sort_unstable();
                to.dedup();
                closure(&mut to);
                push_run(runs, piece[1], (!to.is_empty()).then_some(to));
            }
            Ok(())
        })
    }

    /// The DFAs run side by side: accepting where the first `include` accept and the others do
    /// not.
    fn product(dfas: &[Dfa], include: usize, budget: Budget) -> Result<Dfa, BoolError> {
        let accepts = |t: &Vec<u32>| {
            t.iter()
                .zip(dfas)
                .enumerate()
                .all(|(i, (&s, d))| d.accept[s as usize] == (i < include))
        };
        let start = vec![START; dfas.len()];
        let symbols = dfas[0].symbols;
        Dfa::explore(start, symbols, budget, accepts, |t, runs| {
            for a in 0..symbols {
                let to: Vec<u32> = t.iter().zip(dfas).map(|(&q, d)| d.step(q, a)).collect();
                // Dead once an included DFA is.
                push_run(runs, a + 1, (!to[..include].contains(&DEAD)).then_some(to));
            }
            Ok(())
        })
    }

    /// The DFA over the keys reached from `start` by `step` (`None`: dead), numbered as they
    /// are first met. `step` writes a key's successors as runs of symbols ([`push_run`]): each
    /// `(end, successor)` holds from the previous run's end (0 for the first) to `end`.
    fn explore<K: Clone + Eq + std::hash::Hash>(
        start: K,
        symbols: usize,
        budget: Budget,
        accepts: impl Fn(&K) -> bool,
        mut step: impl FnMut(&K, &mut Vec<(usize, Option<K>)>) -> Result<(), BoolError>,
    ) -> Result<Dfa, BoolError> {
        let mut dfa = Dfa {
            symbols,
            next: vec![DEAD; 2 * symbols],
            accept: vec![false, accepts(&start)],
        };
        let mut ids: HashMap<K, u32> = HashMap::from([(start.clone(), START)]);
        // Index 0 stands for the dead state, which has no key.
        let mut keys = vec![start.clone(), start];
        let mut todo = vec![START];
        let mut runs: Vec<(usize, Option<K>)> = Vec::new();
        while let Some(s) = todo.pop() {
            runs.clear();
            step(&keys[s as usize], &mut runs)?;
            let mut from = 0;
            for (end, to) in runs.drain(..) {
                let (lo, hi) = (from, end.min(symbols));
                from = hi;
                let Some(to) = to else {
                    continue;
                };
                let id = match ids.get(&to) {
                    Some(&id) => id,
                    None => {
                        if dfa.len() >= budget.states || dfa.next.len() + symbols > budget.cells {
                            return Err(BoolError::TooBig);
                        }
                        let id = dfa.len() as u32;
                        dfa.accept.push(accepts(&to));
                        dfa.next.extend(std::iter::repeat_n(DEAD, symbols));
                        ids.insert(to.clone(), id);
                        keys.push(to);
                        todo.push(id);
                        id
                    }
                };
                let row = s as usize * symbols;
                dfa.next[row + lo..row + hi].fill(id);
            }
        }
        Ok(dfa)
    }

    /// The same language without the states that reach no accepting state (their edges go to
    /// the dead state); `None` when the start is one of them.
    fn trimmed(mut self) -> Option<Dfa> {
        let n = self.len();
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        for s in 1..n {
            for a in 0..self.symbols {
                let t = self.step(s as u32, a);
                if t != DEAD {
                    preds[t as usize].push(s as u32);
                }
            }
        }
        let mut live = self.accept.clone();
        let mut todo: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
        while let Some(s) = todo.pop() {
            for &p in &preds[s as usize] {
                if !live[p as usize] {
                    live[p as usize] = true;
                    todo.push(p);
                }
            }
        }
        if !live[START as usize] {
            return None;
        }
        for t in self.next.iter_mut() {
            if !live[*t as usize] {
                *t = DEAD;
            }
        }
        Some(self)
    }

    /// Moore's refinement: states that no string tells apart merged (dead and start keep
    /// their numbers).
    /// `None` where the refinement would take more than `max_work` transition reads (an
    /// unfinished refinement merges states it has not told apart yet, so it is not kept).
    fn minimised(&self, max_work: usize) -> Option<Dfa> {
        let n = self.len();
        let mut class: Vec<u32> = (0..n).map(|s| u32::from(self.accept[s])).collect();
        class[DEAD as usize] = 2;
        let mut count = 0;
        let mut work = 0usize;
        loop {
            work += n * self.symbols;
            if work > max_work {
                return None;
            }
            let mut ids: HashMap<(u32, Vec<u32>), u32> = HashMap::new();
            let next: Vec<u32> = (0..n)
                .map(|s| {
                    let sig = (0..self.symbols)
                        .map(|a| class[self.step(s as u32, a) as usize])
                        .collect();
                    let len = ids.len() as u32;
                    *ids.entry((class[s], sig)).or_insert(len)
                })
                .collect();
            if ids.len() == count {
                break;
            }
            count = ids.len();
            class = next;
        }
        // Renumber: dead 0, start 1, the others in order of first appearance.
        let mut number: HashMap<u32, u32> = HashMap::new();
        number.insert(class[DEAD as usize], DEAD);
        number.entry(class[START as usize]).or_insert(START);
        for &c in &class {
            let len = number.len() as u32;
            number.entry(c).or_insert(len);
        }
        let len = number.len();
        let mut out = Dfa {
            symbols: self.symbols,
            next: vec![DEAD; len * self.symbols],
            accept: vec![false; len],
        };
        for s in 0..n {
            let m = number[&class[s]] as usize;
            out.accept[m] = self.accept[s];
            for a in 0..self.symbols {
                out.next[m * self.symbols + a] = number[&class[self.step(s as u32, a) as usize]];
            }
        }
        Some(out)
    }

    /// The language as a regex, by state elimination (the state with the fewest paths through
    /// it first).
    fn regex(&self, alphabet: &Alphabet, max_bytes: usize) -> Result<String, BoolError> {
        let n = self.len();
        // Nodes: the states 1..n, then a new start `n` and a new final `n + 1`.
        let (first, last) = (n, n + 1);
        // Ordered maps, so that the regex written is the same on every run.
        let mut out: Vec<BTreeMap<usize, Re>> = vec![BTreeMap::new(); n + 2];
        let mut into: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n + 2];
        fn add(
            out: &mut [BTreeMap<usize, Re>],
            into: &mut [BTreeSet<usize>],
            p: usize,
            q: usize,
            r: Re,
        ) {
            out[p].insert(q, r);
            into[q].insert(p);
        }
        add(&mut out, &mut into, first, START as usize, Re::empty());
        for s in 1..n {
            if self.accept[s] {
                add(&mut out, &mut into, s, last, Re::empty());
            }
            let mut by_target: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
            for a in 0..self.symbols {
                let t = self.step(s as u32, a);
                if t != DEAD {
                    by_target.entry(t).or_default().push(a);
                }
            }
            for (t, symbols) in by_target {
                add(
                    &mut out,
                    &mut into,
                    s,
                    t as usize,
                    Re::class(alphabet, &symbols),
                );
            }
        }
        let mut remaining: BTreeSet<usize> = (1..n).collect();
        let mut written = 0usize;
        while let Some(k) = remaining.iter().copied().min_by_key(|&k| {
            let ins = into[k].iter().filter(|&&p| p != k).count();
            let outs = out[k].keys().filter(|&&q| q != k).count();
            (ins * outs, k)
        }) {
            remaining.remove(&k);
            let looped = out[k].remove(&k).map(Re::star);
            into[k].remove(&k);
            let outs: Vec<(usize, Re)> = std::mem::take(&mut out[k]).into_iter().collect();
            for (q, _) in &outs {
                into[*q].remove(&k);
            }
            let ins: Vec<usize> = std::mem::take(&mut into[k]).into_iter().collect();
            for p in ins {
                let Some(rin) = out[p].remove(&k) else {
                    continue;
                };
                let rin = match &looped {
                    Some(l) => rin.then(l),
                    None => rin,
                };
                for (q, rout) in &outs {
                    let path = rin.then(rout);
                    let merged = match out[p].remove(q) {
                        Some(old) => old.or(&path),
                        None => path,
                    };
                    // Each edge, and all the edges written on the way, within the budget.
                    written += merged.text.len();
                    if merged.text.len() > max_bytes
                        || written > max_bytes.saturating_mul(WORK_PER_CELL)
                    {
                        return Err(BoolError::Unwritable);
                    }
                    add(&mut out, &mut into, p, *q, merged);
                }
            }
        }
        let text = out[first].remove(&last).map(|r| r.text).unwrap_or_default();
        // A count written by eliminating states nests a group per character: past a depth the
        // grammar's regex reader refuses, the regex is too big to write.
        let nested = regex_syntax::ast::parse::ParserBuilder::new()
            .nest_limit(MAX_NESTING)
            .build()
            .parse(&text);
        if let Err(e) = nested {
            if matches!(e.kind(), regex_syntax::ast::ErrorKind::NestLimitExceeded(_)) {
                return Err(BoolError::Unwritable);
            }
        }
        Ok(text)
    }
}

/// The deepest nesting (regex-syntax's measure) a written regex may have: well inside the
/// grammar reader's limit on a terminal, which holds the regex inside a few groups of its own.
const MAX_NESTING: u32 = 240;

/// A regex being written: its text and what it needs around it to be concatenated or starred.
#[derive(Clone, Debug)]
struct Re {
    text: String,
    /// An alternation at the top: needs a group inside a concatenation.
    alternation: bool,
    /// One class, character or group: a quantifier may follow it directly.
    atom: bool,
}

impl Re {
    fn empty() -> Re {
        Re {
            text: String::new(),
            alternation: false,
            atom: false,
        }
    }

    fn class(alphabet: &Alphabet, symbols: &[usize]) -> Re {
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for &a in symbols {
            let (lo, hi) = alphabet.bounds(a);
            match ranges.last_mut() {
                Some(last) if last.1 + 1 == lo => last.1 = hi,
                _ => ranges.push((lo, hi)),
            }
        }
        let text = if let [(lo, hi)] = ranges[..] {
            if lo == hi {
                escape(lo)
            } else {
                format!("[{}-{}]", escape(lo), escape(hi))
            }
        } else {
            let mut t = String::from("[");
            for (lo, hi) in ranges {
                t.push_str(&escape(lo));
                if hi > lo {
                    t.push('-');
                    t.push_str(&escape(hi));
                }
            }
            t.push(']');
            t
        };
        Re {
            text,
            alternation: false,
            atom: true,
        }
    }

    fn group(&self) -> String {
        format!("(?:{})", self.text)
    }

    fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    fn then(&self, other: &Re) -> Re {
        if self.is_empty() {
            return other.clone();
        }
        if other.is_empty() {
            return self.clone();
        }
        let part = |r: &Re| {
            if r.alternation {
                r.group()
            } else {
                r.text.clone()
            }
        };
        Re {
            text: format!("{}{}", part(self), part(other)),
            alternation: false,
            atom: false,
        }
    }

    fn or(&self, other: &Re) -> Re {
        if self.text == other.text {
            return self.clone();
        }
        match (self.is_empty(), other.is_empty()) {
            (true, _) | (_, true) => {
                let some = if self.is_empty() { other } else { self };
                some.quantified('?')
            }
            _ => Re {
                text: format!("{}|{}", self.text, other.text),
                alternation: true,
                atom: false,
            },
        }
    }

    fn star(self) -> Re {
        if self.is_empty() {
            return self;
        }
        self.quantified('*')
    }

    /// `self` under the quantifier `op`, grouped unless it is an atom.
    fn quantified(&self, op: char) -> Re {
        let inner = if self.atom {
            self.text.clone()
        } else {
            self.group()
        };
        Re {
            text: format!("{inner}{op}"),
            alternation: false,
            atom: false,
        }
    }
}

/// A code point in a regex of the Lark text: itself when alphanumeric ASCII, a backslash before
/// it when it means something to `re` or ends the regex (`/`), else a hex escape (which Lark
/// evaluates to the character before `re` reads it, so it may only stand for characters that
/// mean nothing to `re`).
fn escape(c: u32) -> String {
    const SPECIAL: &[u8] = br"\^$.|?*+()[]{}-/";
    match c {
        0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a => {
            char::from_u32(c).map(String::from).unwrap_or_default()
        }
        _ if c < 0x80 && SPECIAL.contains(&(c as u8)) => format!("\\{}", c as u8 as char),
        0..=0xff => format!(r"\x{c:02x}"),
        0x100..=0xffff => format!(r"\u{c:04x}"),
        _ => format!(r"\U{c:08x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_equal_successors() {
        let mut runs: Vec<(usize, Option<u32>)> = Vec::new();
        for (end, to) in [
            (2, Some(7)),
            (3, Some(7)),
            (5, None),
            (6, None),
            (9, Some(1)),
        ] {
            push_run(&mut runs, end, to);
        }
        assert_eq!(runs, [(3, Some(7)), (6, None), (9, Some(1))]);
    }

    const BUDGET: Budget = Budget {
        states: 10_000,
        cells: 1 << 24,
        bytes: 1 << 20,
    };

    fn full(re: &str) -> regex_automata::meta::Regex {
        regex_automata::meta::Regex::new(&format!("^(?:{re})$")).expect(re)
    }

    /// `combine` against the regexes themselves on every string over `chars` up to `len`.
    fn check(include: &[&str], exclude: &[&str], chars: &[char], len: usize) {
        let inc: Vec<String> = include.iter().map(|s| s.to_string()).collect();
        let exc: Vec<String> = exclude.iter().map(|s| s.to_string()).collect();
        let out = combine(&inc, &exc, BUDGET).expect("combined");
        let out_re = out.as_deref().map(full);
        let (inc, exc): (Vec<_>, Vec<_>) = (
            include.iter().map(|r| full(r)).collect(),
            exclude.iter().map(|r| full(r)).collect(),
        );
        let mut words = vec![String::new()];
        let mut any = false;
        for _ in 0..=len {
            let mut next = Vec::new();
            for w in &words {
                let want = inc.iter().all(|r| r.is_match(w)) && !exc.iter().any(|r| r.is_match(w));
                any |= want;
                let got = out_re.as_ref().is_some_and(|r| r.is_match(w));
                assert_eq!(got, want, "{w:?}: {include:?} minus {exclude:?} as {out:?}");
                next.extend(chars.iter().map(|c| format!("{w}{c}")));
            }
            words = next;
        }
        if any {
            assert!(out.is_some());
        }
    }

    #[test]
    fn a_difference_takes_out_the_excluded_strings() {
        check(&["[a-c]*"], &["ab", "a"], &['a', 'b', 'c'], 5);
        check(&["\"[a-z]*\""], &["\"x-[a-z]*\""], &['"', 'x', '-', 'y'], 5);
    }

    #[test]
    fn an_intersection_keeps_what_both_match() {
        check(&["[a-c]*a[a-c]*", "[a-c]*b"], &[], &['a', 'b', 'c'], 5);
        check(&["(?:ab)*", "a(?:ba)*b"], &["ab"], &['a', 'b'], 7);
    }

    #[test]
    fn counted_repetitions_and_non_ascii_classes_are_modelled() {
        check(&["[a-zé€]{1,3}"], &["é+", "a{2}"], &['a', 'é', '€', 'z'], 4);
    }

    #[test]
    fn an_empty_combination_is_none() {
        let r = combine(&["ab*".into()], &["a[b]*".into()], BUDGET).unwrap();
        assert_eq!(r, None);
    }

    #[test]
    fn the_budgets_hold() {
        let tight = Budget {
            states: 8,
            ..BUDGET
        };
        assert_eq!(
            combine(&["[a-z]{20}".into()], &[], tight),
            Err(BoolError::TooBig)
        );
        // States times intervals of the alphabet (here 9) bound the transitions.
        let narrow = Budget {
            cells: 20,
            ..BUDGET
        };
        assert_eq!(
            combine(
                &["[a-z][0-9]+".into()],
                &["a[0-9]*".into(), "[b-y]5".into()],
                narrow
            ),
            Err(BoolError::TooBig)
        );
        let short = Budget {
            bytes: 10,
            ..BUDGET
        };
        assert_eq!(
            combine(&["[a-z]*".into()], &["abcdefgh".into()], short),
            Err(BoolError::Unwritable)
        );
        assert!(matches!(
            combine(&["a(?=b)".into()], &[], BUDGET),
            Err(BoolError::Unsupported(_))
        ));
    }
}
