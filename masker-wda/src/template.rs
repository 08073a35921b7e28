//! Templates: what the GLR parser does to a stack while it takes one terminal, read top-down,
//! summarised per (control, LR state) so that unbounded reduction chains stay finite.
//!
//! # Controls and continuations
//!
//! A token realises a *span* from a lexer point: lexemes it completes, then an open lexeme. On
//! the parser side a span is a chain of *continuations* ([`Conts`]): a continuation says which
//! *controls* may come next — a control `(T, κ)` is "take terminal `T` (reductions under
//! lookahead `T`, then the shift of `T`), then go on with continuation `κ`" — and whether the
//! span already *succeeds* without any further terminal. A lexeme whose tied terminals are
//! `{T1, T2}` offers both controls; an `%ignore`d one among them offers the continuation's own
//! controls too (the stack is left alone). The open lexeme at the end offers `(T, FIN)` for every
//! terminal it can still complete ([`FIN`] succeeds at once), and succeeds outright if it can
//! complete an ignored terminal. Continuations are interned by what they offer, so spans that
//! end alike share them.
//!
//! # Summaries
//!
//! The stack is read top-down. For a control `c` and an LR state `x` on top, with nothing
//! known below `x`, the *summary* `S(c, x)` is the set of outcomes of every run of the GLR
//! parser (every action, conflicts included):
//!
//! - [`SUCC`]: the span succeeds without popping `x`;
//! - an *exit* `(c', A, r)`: a reduction popped `x` while control `c'` was active; `r` more
//!   states must be popped below `x`, then the parser goes to `goto(q, A)` on the state `q` it
//!   exposes.
//!
//! `S` is the least solution of
//!
//! ```text
//! S(c, x) ∋ (c, A, m-1)          for reduce A → α, |α| = m ≥ 1, in actions(x, T)
//! S(c, x) ⊇ C(c, goto(x, A), x)  for reduce A → ε in actions(x, T)
//! S(c, x) ⊇ C(c2, t, x)          for shift t in actions(x, T), c2 offered by κ
//! S(c, x) ∋ SUCC                 for shift t in actions(x, T) when κ succeeds
//! C(c, y, x) = { SUCC            for SUCC ∈ S(c, y)
//!              , (c', A, r-1)    for (c', A, r ≥ 1) ∈ S(c, y)
//!              , C(c', goto(x, A), x)  for (c', A, 0) ∈ S(c, y) }
//! ```
//!
//! where `C(c, y, x)` is "state `y` pushed on `x`" (`T` and `κ` are `c`'s). The unknowns range
//! over a finite set (controls × LR states) and the outcomes too (controls × nonterminals ×
//! production lengths, plus `SUCC`), and the equations are monotone, so the worklist below
//! reaches the least fixpoint. This is exact for every grammar shape: a right-recursive chain
//! is a sequence of exits read one stack state at a time, an ε-rule or a unit cycle is a cycle
//! among unknowns over the same `x` (a push that the fixpoint closes instead of unrolling), and
//! the content pushed above `x` never needs to be remembered, because after a reduction pops
//! below it the rest of the run depends only on the state `goto(q, A)` it reaches. Nothing is
//! truncated.
//!
//! The summaries are computed lazily (only the unknowns the determiniser asks for), and a
//! completed unknown never changes: adding unknowns later only adds equations for them.

use ahash::{AHashMap, AHashSet};
use munch_glr::cfg::NonterminalId;
use munch_glr::lr::{Action, LrState, LrTables};

/// A control: an index into [`Conts::ctrl`].
pub(crate) type Ctrl = u32;
/// A continuation: an index into [`Conts`].
pub(crate) type Cont = u32;
/// An outcome: [`SUCC`], or `1 + exit index` ([`Templates::exit`]).
pub(crate) type Outcome = u32;

/// The outcome "the span succeeds".
pub(crate) const SUCC: Outcome = 0;
/// The continuation that succeeds at once.
pub(crate) const FIN: Cont = 0;
/// The continuation that never succeeds.
pub(crate) const NEVER: Cont = 1;

/// Interned continuations and controls (see the [module docs](self)).
#[derive(Clone, Debug)]
pub(crate) struct Conts {
    /// Per continuation: the controls it offers (sorted) and whether it succeeds outright.
    offers: Vec<(Box<[Ctrl]>, bool)>,
    index: AHashMap<(Box<[Ctrl]>, bool), Cont>,
    /// Per control: (terminal, continuation after its shift).
    ctrls: Vec<(u32, Cont)>,
    ctrl_index: AHashMap<(u32, Cont), Ctrl>,
}

impl Conts {
    pub(crate) fn new() -> Self {
        let mut c = Conts {
            offers: Vec::new(),
            index: AHashMap::new(),
            ctrls: Vec::new(),
            ctrl_index: AHashMap::new(),
        };
        let fin = c.intern(Vec::new(), true);
        let never = c.intern(Vec::new(), false);
        debug_assert_eq!((fin, never), (FIN, NEVER));
        c
    }

    /// The continuation offering `ctrls` (any order, duplicates allowed), succeeding outright
    /// iff `succ`.
    pub(crate) fn intern(&mut self, mut ctrls: Vec<Ctrl>, succ: bool) -> Cont {
        ctrls.sort_unstable();
        ctrls.dedup();
        let key = (ctrls.into_boxed_slice(), succ);
        if let Some(&k) = self.index.get(&key) {
            return k;
        }
        let k = self.offers.len() as Cont;
        self.offers.push(key.clone());
        self.index.insert(key, k);
        k
    }

    /// The control "take `terminal`, then `cont`".
    pub(crate) fn ctrl(&mut self, terminal: u32, cont: Cont) -> Ctrl {
        if let Some(&c) = self.ctrl_index.get(&(terminal, cont)) {
            return c;
        }
        let c = self.ctrls.len() as Ctrl;
        self.ctrls.push((terminal, cont));
        self.ctrl_index.insert((terminal, cont), c);
        c
    }

    /// The controls `k` offers.
    pub(crate) fn offers(&self, k: Cont) -> &[Ctrl] {
        &self.offers[k as usize].0
    }

    /// Whether `k` succeeds outright.
    pub(crate) fn succeeds(&self, k: Cont) -> bool {
        self.offers[k as usize].1
    }

    /// `(terminal, continuation)` of control `c`.
    pub(crate) fn control(&self, c: Ctrl) -> (u32, Cont) {
        self.ctrls[c as usize]
    }

    pub(crate) fn len(&self) -> usize {
        self.offers.len()
    }

    pub(crate) fn ctrl_len(&self) -> usize {
        self.ctrls.len()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let offers: usize = self.offers.iter().map(|(c, _)| c.len() * 4 * 2 + 64).sum();
        offers + self.ctrls.len() * 40
    }
}

/// A summary budget was exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SummaryBudget;

enum Task {
    /// Evaluate the direct actions of an unknown.
    Eval(u32),
    /// Map an outcome of some `S(c, y)` through the `x` of unknown `dst` into `dst`.
    Apply(u32, Outcome),
}

/// Lazily computed summaries `S(c, x)` (see the [module docs](self)).
pub(crate) struct Templates<'a> {
    tables: &'a LrTables,
    conts: &'a Conts,
    /// Exits `(control, nonterminal, pops left)`, interned; outcome `1 + i` is exit `i`.
    exits: Vec<(Ctrl, u32, u32)>,
    exit_index: AHashMap<(Ctrl, u32, u32), u32>,
    /// `(control, LR state)` → unknown.
    index: AHashMap<(Ctrl, u32), u32>,
    keys: Vec<(Ctrl, u32)>,
    out: Vec<Vec<Outcome>>,
    out_seen: AHashSet<(u32, Outcome)>,
    /// Unknowns whose value includes this one's, mapped through their own `x`.
    deps: Vec<Vec<u32>>,
    edges: AHashSet<(u32, u32)>,
    tasks: Vec<Task>,
    config_memo: AHashMap<(u32, u32), Box<[Outcome]>>,
    /// Entries (unknowns + outcomes + links) allowed before [`SummaryBudget`].
    max_entries: usize,
    entries: usize,
}

impl<'a> Templates<'a> {
    pub(crate) fn new(tables: &'a LrTables, conts: &'a Conts, max_entries: usize) -> Self {
        Templates {
            tables,
            conts,
            exits: Vec::new(),
            exit_index: AHashMap::new(),
            index: AHashMap::new(),
            keys: Vec::new(),
            out: Vec::new(),
            out_seen: AHashSet::new(),
            deps: Vec::new(),
            edges: AHashSet::new(),
            tasks: Vec::new(),
            config_memo: AHashMap::new(),
            max_entries,
            entries: 0,
        }
    }

    /// The outcome for exit `(c, nt, pops)`.
    pub(crate) fn exit(&mut self, c: Ctrl, nt: u32, pops: u32) -> Outcome {
        let key = (c, nt, pops);
        if let Some(&i) = self.exit_index.get(&key) {
            return i + 1;
        }
        let i = self.exits.len() as u32;
        self.exits.push(key);
        self.exit_index.insert(key, i);
        i + 1
    }

    /// `(control, nonterminal, pops left)` of an exit outcome (not [`SUCC`]).
    pub(crate) fn exit_parts(&self, o: Outcome) -> (Ctrl, u32, u32) {
        self.exits[o as usize - 1]
    }

    pub(crate) fn tables(&self) -> &'a LrTables {
        self.tables
    }

    pub(crate) fn conts(&self) -> &'a Conts {
        self.conts
    }

    /// Approximate heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.entries * 48 + self.exits.len() * 40 + self.config_memo.len() * 48
    }

    /// `S(c, x)`, computed to the fixpoint if it was not yet.
    pub(crate) fn summary(&mut self, c: Ctrl, x: LrState) -> Result<&[Outcome], SummaryBudget> {
        let u = self.unknown(c, x.as_u32())?;
        self.run()?;
        Ok(&self.out[u as usize])
    }

    /// The outcomes below `x` of pushing `goto(x, nt)` on `x` under control `c` (the closure
    /// `C(c, goto(x, nt), x)`); empty when the goto is undefined.
    pub(crate) fn config_out(
        &mut self,
        c: Ctrl,
        nt: u32,
        x: LrState,
    ) -> Result<Box<[Outcome]>, SummaryBudget> {
        let exit = self.exit(c, nt, 0);
        if let Some(v) = self.config_memo.get(&(exit, x.as_u32())) {
            return Ok(v.clone());
        }
        let mut result: Vec<Outcome> = Vec::new();
        let mut seen: AHashSet<(Ctrl, u32)> = AHashSet::new();
        let mut stack: Vec<(Ctrl, u32)> = Vec::new();
        if let Some(g) = self.tables.goto(x, NonterminalId::from_usize(nt as usize)) {
            stack.push((c, g.as_u32()));
            seen.insert((c, g.as_u32()));
        }
        while let Some((c1, y)) = stack.pop() {
            let u = self.unknown(c1, y)?;
            self.run()?;
            for i in 0..self.out[u as usize].len() {
                let o = self.out[u as usize][i];
                if o == SUCC {
                    result.push(SUCC);
                    continue;
                }
                let (c2, a, r) = self.exit_parts(o);
                if r > 0 {
                    let e = self.exit(c2, a, r - 1);
                    result.push(e);
                } else if let Some(g) = self.tables.goto(x, NonterminalId::from_usize(a as usize)) {
                    if seen.insert((c2, g.as_u32())) {
                        stack.push((c2, g.as_u32()));
                    }
                }
            }
        }
        result.sort_unstable();
        result.dedup();
        let result = result.into_boxed_slice();
        self.entries += result.len() + 1;
        self.config_memo.insert((exit, x.as_u32()), result.clone());
        if self.entries > self.max_entries {
            return Err(SummaryBudget);
        }
        Ok(result)
    }

    fn unknown(&mut self, c: Ctrl, x: u32) -> Result<u32, SummaryBudget> {
        if let Some(&u) = self.index.get(&(c, x)) {
            return Ok(u);
        }
        let u = self.keys.len() as u32;
        self.index.insert((c, x), u);
        self.keys.push((c, x));
        self.out.push(Vec::new());
        self.deps.push(Vec::new());
        self.tasks.push(Task::Eval(u));
        self.entries += 1;
        if self.entries > self.max_entries {
            return Err(SummaryBudget);
        }
        Ok(u)
    }

    fn add(&mut self, u: u32, o: Outcome) -> Result<(), SummaryBudget> {
        if self.out_seen.insert((u, o)) {
            self.out[u as usize].push(o);
            for &v in &self.deps[u as usize] {
                self.tasks.push(Task::Apply(v, o));
            }
            self.entries += 1;
            if self.entries > self.max_entries {
                return Err(SummaryBudget);
            }
        }
        Ok(())
    }

    /// `dst ⊇ C(c, y, x_dst)`: every outcome of `S(c, y)`, now and later, mapped into `dst`.
    fn link(&mut self, c: Ctrl, y: u32, dst: u32) -> Result<(), SummaryBudget> {
        let src = self.unknown(c, y)?;
        if self.edges.insert((src, dst)) {
            self.deps[src as usize].push(dst);
            for &o in &self.out[src as usize] {
                self.tasks.push(Task::Apply(dst, o));
            }
            self.entries += 1;
        }
        Ok(())
    }

    fn run(&mut self) -> Result<(), SummaryBudget> {
        let tables = self.tables;
        let conts = self.conts;
        while let Some(task) = self.tasks.pop() {
            match task {
                Task::Eval(u) => {
                    let (c, x) = self.keys[u as usize];
                    let (t, k) = conts.control(c);
                    let xs = LrState::new(x as usize).expect("LR state ids fit");
                    for &a in tables.actions_at(xs, t) {
                        match a {
                            Action::Shift(to) => {
                                for &c2 in conts.offers(k) {
                                    self.link(c2, to.as_u32(), u)?;
                                }
                                if conts.succeeds(k) {
                                    self.add(u, SUCC)?;
                                }
                            }
                            Action::Reduce { lhs, len: 0, .. } => {
                                if let Some(g) = tables.goto(xs, lhs) {
                                    self.link(c, g.as_u32(), u)?;
                                }
                            }
                            Action::Reduce { lhs, len, .. } => {
                                let e = self.exit(c, lhs.as_usize() as u32, len - 1);
                                self.add(u, e)?;
                            }
                            Action::Accept => {}
                        }
                    }
                }
                Task::Apply(dst, o) => {
                    if o == SUCC {
                        self.add(dst, SUCC)?;
                        continue;
                    }
                    let (c2, a, r) = self.exit_parts(o);
                    if r > 0 {
                        let e = self.exit(c2, a, r - 1);
                        self.add(dst, e)?;
                    } else {
                        let x = self.keys[dst as usize].1;
                        let xs = LrState::new(x as usize).expect("LR state ids fit");
                        if let Some(g) = tables.goto(xs, NonterminalId::from_usize(a as usize)) {
                            self.link(c2, g.as_u32(), dst)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
