//! Terminal HIRs → one combined byte-level NFA, and the byte classes of all terminals.
//!
//! Each terminal's HIR is checked (no look-around; laziness noted), compiled on its own with
//! regex-automata's Thompson compiler (which lowers Unicode classes to UTF-8 byte sequences), and
//! copied into one flat node array that the subset construction walks. Keeping each terminal's
//! nodes separate — rather than one multi-pattern NFA — is what lets the determiniser track
//! matches and laziness per terminal.

use std::borrow::Cow;
use std::cell::RefCell;

use regex_automata::nfa::thompson::{self, State, WhichCaptures};
use regex_automata::util::primitives::StateID;
use regex_syntax::hir::{Hir, HirKind, Look};

use super::error::{LexerBuildError, LexerBuildErrorKind};
use super::look::{self, LookAroundKind};
use super::meet;
use super::{LexerConfig, TerminalSpec};
use crate::TerminalId;

/// One byte range of a [`Node::Bytes`] and the node it leads to.
///
/// After [`Nfa::ranges_to_classes`], `lo` and `hi` are byte-class ids instead of bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Range {
    pub lo: u8,
    pub hi: u8,
    pub next: u32,
}

/// A node of the combined NFA. Ids are global across terminals.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// Consumes one byte in one of the (disjoint) ranges.
    Bytes(Box<[Range]>),
    /// Moves without consuming to any of these nodes.
    Eps(Box<[u32]>),
    /// The owning terminal matches here.
    Match,
    /// Look-around assertion `look` (an index into [`Nfa::looks`]), then `next`.
    Look { look: u32, next: u32 },
    /// The asserted pattern of look-around `.0` matches here.
    SubMatch(u32),
    /// A dead end (e.g. an empty class).
    Fail,
}

/// Every terminal's NFA in one node array.
#[derive(Debug)]
pub(crate) struct Nfa {
    pub nodes: Vec<Node>,
    /// The terminal each node belongs to.
    pub owner: Vec<TerminalId>,
    /// The start node of each terminal that has a pattern.
    pub starts: Vec<u32>,
    /// Per terminal: whether its pattern has a non-greedy repetition.
    pub lazy: Vec<bool>,
    /// Some terminal has a non-greedy repetition.
    pub any_lazy: bool,
    /// Every look-around assertion, in terminal order; its asserted pattern's nodes are in
    /// `nodes`, owned by the terminal.
    pub looks: Vec<LookSub>,
    /// Per terminal: whether its pattern has a look-behind assertion.
    pub behind: Vec<bool>,
    /// Approximate heap bytes of `nodes` and `owner`.
    pub memory: usize,
}

/// One look-around assertion of the combined NFA.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LookSub {
    pub kind: LookAroundKind,
    /// The start node of the asserted pattern.
    pub start: u32,
}

/// What a walk over one HIR found.
struct HirFacts {
    lazy: bool,
    look: Option<Look>,
    /// A reserved look-around group (see [`super::look`]).
    look_around: bool,
    /// The nesting depth (a leaf is depth 1).
    depth: usize,
}

/// Walks `hir` with an explicit stack (HIRs built by hand may be deeper than the parser's nest
/// limit allows, so no recursion).
fn hir_facts(hir: &Hir) -> HirFacts {
    let mut facts = HirFacts {
        lazy: false,
        look: None,
        look_around: false,
        depth: 0,
    };
    let mut stack = vec![(hir, 1)];
    while let Some((h, depth)) = stack.pop() {
        facts.depth = facts.depth.max(depth);
        match h.kind() {
            HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => {}
            HirKind::Look(look) => {
                facts.look = Some(*look);
                return facts;
            }
            HirKind::Repetition(rep) => {
                facts.lazy |= !rep.greedy;
                stack.push((&rep.sub, depth + 1));
            }
            HirKind::Capture(cap) => {
                facts.look_around |= cap.name.as_deref().and_then(look::kind_of).is_some();
                stack.push((&cap.sub, depth + 1))
            }
            HirKind::Concat(subs) | HirKind::Alternation(subs) => {
                stack.extend(subs.iter().map(|s| (s, depth + 1)))
            }
        }
    }
    facts
}

/// How a look-around assertion is written, for error messages: as a Lark grammar (Python's
/// `re`) spells it, since that is what its author wrote.
fn look_text(look: Look) -> &'static str {
    match look {
        Look::Start => r"`^` or `\A` (the start of the text: a terminal matches anywhere in it)",
        Look::End => r"`$` or `\Z` (the end of the text: a terminal matches anywhere in it)",
        Look::StartLF => "`^` under the `m` flag (the start of a line)",
        Look::EndLF => "`$` under the `m` flag (the end of a line)",
        Look::StartCRLF => "`(?mR:^)`",
        Look::EndCRLF => "`(?mR:$)`",
        Look::WordAscii => r"`(?-u:\b)`",
        Look::WordAsciiNegate => r"`(?-u:\B)`",
        Look::WordUnicode => r"`\b`",
        Look::WordUnicodeNegate => r"`\B`",
        Look::WordStartAscii => r"`(?-u:\b{start})`",
        Look::WordEndAscii => r"`(?-u:\b{end})`",
        Look::WordStartUnicode => r"`\b{start}`",
        Look::WordEndUnicode => r"`\b{end}`",
        Look::WordStartHalfAscii => r"`(?-u:\b{start-half})`",
        Look::WordEndHalfAscii => r"`(?-u:\b{end-half})`",
        Look::WordStartHalfUnicode => r"`\b{start-half}`",
        Look::WordEndHalfUnicode => r"`\b{end-half}`",
    }
}

impl Nfa {
    /// Checks and compiles every terminal.
    pub fn build(specs: &[TerminalSpec], config: &LexerConfig) -> Result<Nfa, LexerBuildError> {
        let mut nfa = Nfa {
            nodes: Vec::new(),
            owner: Vec::new(),
            starts: Vec::new(),
            lazy: vec![false; specs.len()],
            any_lazy: false,
            looks: Vec::new(),
            behind: vec![false; specs.len()],
            memory: 0,
        };
        // Intersections first: their parts are lexers of their own, built with this thread's
        // compiler.
        let mut meets: Vec<Option<meet::Product>> = Vec::with_capacity(specs.len());
        for (index, spec) in specs.iter().enumerate() {
            let product = match spec.hir.as_ref().and_then(meet::parts) {
                Some((all, none)) => Some(meet::product(
                    TerminalId::from_usize(index),
                    &spec.name,
                    &all,
                    &none,
                    config,
                )?),
                None => None,
            };
            meets.push(product);
        }
        COMPILER.with_borrow_mut(|compiler| nfa.add_terminals(compiler, specs, &meets, config))?;
        nfa.any_lazy = nfa.lazy.iter().any(|&l| l);
        debug_assert!(nfa.owner.windows(2).all(|w| w[0] <= w[1]));
        Ok(nfa)
    }

    /// Checks and compiles each terminal of `specs` with `compiler`, appending its nodes.
    fn add_terminals(
        &mut self,
        compiler: &mut thompson::Compiler,
        specs: &[TerminalSpec],
        meets: &[Option<meet::Product>],
        config: &LexerConfig,
    ) -> Result<(), LexerBuildError> {
        let nfa = self;
        for (index, spec) in specs.iter().enumerate() {
            let terminal = TerminalId::from_usize(index);
            let Some(hir) = &spec.hir else { continue };
            if let Some(product) = &meets[index] {
                let start = nfa.append_product(terminal, product, config)?;
                if nfa.matches_empty(start) {
                    return Err(LexerBuildError::new(LexerBuildErrorKind::EmptyMatch {
                        terminal,
                        name: spec.name.clone(),
                    }));
                }
                nfa.starts.push(start);
                continue;
            }
            let facts = hir_facts(hir);
            if let Some(look) = facts.look {
                return Err(LexerBuildError::new(LexerBuildErrorKind::Unsupported {
                    terminal,
                    name: spec.name.clone(),
                    what: format!("the anchor or boundary {}", look_text(look)),
                }));
            }
            // Lookahead is a whole character: every lexeme must be whole characters.
            if !hir.properties().is_utf8() {
                return Err(LexerBuildError::new(LexerBuildErrorKind::Unsupported {
                    terminal,
                    name: spec.name.clone(),
                    what: "a pattern that can match invalid UTF-8 (a byte-mode class or literal)"
                        .to_string(),
                }));
            }
            // The Thompson compiler recurses over the HIR: bound the depth before calling it.
            if facts.depth > config.nest_limit {
                return Err(LexerBuildError::new(LexerBuildErrorKind::TooDeep {
                    terminal,
                    name: spec.name.clone(),
                    limit: config.nest_limit,
                }));
            }
            nfa.lazy[index] = facts.lazy;
            let unsupported = |what: String| {
                LexerBuildError::new(LexerBuildErrorKind::Unsupported {
                    terminal,
                    name: spec.name.clone(),
                    what,
                })
            };
            let (main, looks) = if facts.look_around {
                let (main, looks) = look::extract(hir).map_err(&unsupported)?;
                (Cow::Owned(main), looks)
            } else {
                (Cow::Borrowed(hir), Vec::new())
            };
            let base = nfa.looks.len() as u32;
            let compiled = compile(compiler, terminal, spec, &main, !looks.is_empty(), config)?;
            let start = nfa.append(terminal, spec, &compiled, Owned::Terminal(base), config)?;
            for (i, l) in looks.iter().enumerate() {
                let index = base + i as u32;
                if l.kind == LookAroundKind::Ahead {
                    return Err(unsupported(l.kind.syntax().to_string()));
                }
                let sub = compile(compiler, terminal, spec, &l.sub, false, config)?;
                let sub_start = nfa.append(terminal, spec, &sub, Owned::Look(index), config)?;
                nfa.looks.push(LookSub {
                    kind: l.kind,
                    start: sub_start,
                });
                if matches!(l.kind, LookAroundKind::Behind | LookAroundKind::NotBehind) {
                    nfa.behind[terminal.as_usize()] = true;
                    // Bounded, and never reaching before the lexeme's first byte: then the
                    // lexeme read so far decides it.
                    let Some(max) = l.sub.properties().maximum_len() else {
                        return Err(unsupported(format!(
                            "{} of unbounded length",
                            l.kind.syntax()
                        )));
                    };
                    if nfa.min_offset(start, index) < max {
                        return Err(unsupported(format!(
                            "{} that can reach before the start of the lexeme",
                            l.kind.syntax()
                        )));
                    }
                }
            }
            if nfa.matches_empty(start) {
                return Err(LexerBuildError::new(LexerBuildErrorKind::EmptyMatch {
                    terminal,
                    name: spec.name.clone(),
                }));
            }
            nfa.starts.push(start);
        }
        Ok(())
    }

    /// Copies the states of `compiled` reachable from its anchored start into `self`; returns
    /// the global id of that start.
    fn append(
        &mut self,
        terminal: TerminalId,
        spec: &TerminalSpec,
        compiled: &thompson::NFA,
        owned: Owned,
        config: &LexerConfig,
    ) -> Result<u32, LexerBuildError> {
        const UNSEEN: u32 = u32::MAX;
        // Thompson ids → global ids, assigned in discovery order.
        let mut map = vec![UNSEEN; compiled.states().len()];
        let mut order: Vec<StateID> = Vec::new();
        let base = self.nodes.len();
        let mut global = |sid: StateID, order: &mut Vec<StateID>| -> u32 {
            let slot = &mut map[sid.as_usize()];
            if *slot == UNSEEN {
                *slot = (base + order.len()) as u32;
                order.push(sid);
            }
            *slot
        };
        let start = global(compiled.start_anchored(), &mut order);
        let mut i = 0;
        while i < order.len() {
            let node = match compiled.state(order[i]) {
                State::ByteRange { trans } => Node::Bytes(Box::new([Range {
                    lo: trans.start,
                    hi: trans.end,
                    next: global(trans.next, &mut order),
                }])),
                State::Sparse(sparse) => Node::Bytes(
                    sparse
                        .transitions
                        .iter()
                        .map(|t| Range {
                            lo: t.start,
                            hi: t.end,
                            next: global(t.next, &mut order),
                        })
                        .collect(),
                ),
                State::Dense(dense) => {
                    // Runs of bytes with the same target; `StateID::ZERO` means "no transition".
                    let mut ranges: Vec<Range> = Vec::new();
                    for (byte, &next) in dense.transitions.iter().enumerate() {
                        if next == StateID::ZERO {
                            continue;
                        }
                        let byte = byte as u8;
                        let next = global(next, &mut order);
                        match ranges.last_mut() {
                            Some(r) if r.next == next && r.hi.wrapping_add(1) == byte => {
                                r.hi = byte
                            }
                            _ => ranges.push(Range {
                                lo: byte,
                                hi: byte,
                                next,
                            }),
                        }
                    }
                    Node::Bytes(ranges.into_boxed_slice())
                }
                State::Union { alternates } => {
                    Node::Eps(alternates.iter().map(|&s| global(s, &mut order)).collect())
                }
                State::BinaryUnion { alt1, alt2 } => {
                    let (a, b) = (global(*alt1, &mut order), global(*alt2, &mut order));
                    Node::Eps(Box::new([a, b]))
                }
                // Capture group `g >= 1` of a terminal's pattern is its `g`-th look-around
                // (see `look::extract`); its opening slot is where the assertion sits.
                State::Capture {
                    next,
                    group_index,
                    slot,
                    ..
                } => match owned {
                    Owned::Terminal(base)
                        if group_index.as_u32() >= 1 && slot.as_u32() % 2 == 0 =>
                    {
                        Node::Look {
                            look: base + group_index.as_u32() - 1,
                            next: global(*next, &mut order),
                        }
                    }
                    _ => Node::Eps(Box::new([global(*next, &mut order)])),
                },
                State::Fail => Node::Fail,
                State::Match { .. } => match owned {
                    Owned::Terminal(_) => Node::Match,
                    Owned::Look(index) => Node::SubMatch(index),
                },
                // Unreachable: `hir_facts` rejected every look-around before compiling.
                State::Look { look, .. } => {
                    return Err(LexerBuildError::new(LexerBuildErrorKind::Unsupported {
                        terminal,
                        name: spec.name.clone(),
                        what: format!("look-around assertion {look:?}"),
                    }))
                }
            };
            self.push(terminal, node);
            i += 1;
            if self.memory > config.max_build_memory {
                return Err(LexerBuildError::new(LexerBuildErrorKind::TooMuchMemory {
                    limit: config.max_build_memory,
                }));
            }
            // Global node ids are below 2³¹ (the determiniser flags ids with the top bit); the
            // memory budget normally stops long before this.
            if base + order.len() >= (1 << 31) {
                return Err(LexerBuildError::new(LexerBuildErrorKind::TooMuchMemory {
                    limit: config.max_build_memory,
                }));
            }
        }
        Ok(start)
    }

    /// Appends `node`, owned by `terminal`, counting its memory.
    fn push(&mut self, terminal: TerminalId, node: Node) {
        self.memory += std::mem::size_of::<Node>()
            + std::mem::size_of::<TerminalId>()
            + match &node {
                Node::Bytes(r) => r.len() * std::mem::size_of::<Range>(),
                Node::Eps(e) => e.len() * 4,
                _ => 0,
            };
        self.nodes.push(node);
        self.owner.push(terminal);
    }

    /// Appends the nodes of an intersection's product automaton (see [`meet`]); returns its
    /// start. A state that accepts is an ε-node to its byte node and the match.
    fn append_product(
        &mut self,
        terminal: TerminalId,
        product: &meet::Product,
        config: &LexerConfig,
    ) -> Result<u32, LexerBuildError> {
        let base = self.nodes.len();
        let n = product.states.len();
        let accepting = product.states.iter().filter(|s| s.1).count();
        if base + 2 * n + 2 >= 1 << 31 {
            return Err(LexerBuildError::new(LexerBuildErrorKind::TooMuchMemory {
                limit: config.max_build_memory,
            }));
        }
        let ranges = |runs: &[meet::Run]| -> Box<[Range]> {
            runs.iter()
                .map(|&(lo, hi, to)| Range {
                    lo,
                    hi,
                    next: (base + to as usize) as u32,
                })
                .collect()
        };
        let mut nodes: Vec<Node> = Vec::with_capacity(n + accepting + 1);
        let mut extra: Vec<Node> = Vec::with_capacity(accepting);
        let match_node = (base + n + accepting) as u32;
        if n == 0 {
            // Nothing is accepted: a start that goes nowhere.
            nodes.push(Node::Fail);
        }
        for (runs, accepts) in &product.states {
            if *accepts {
                let bytes = (base + n + extra.len()) as u32;
                nodes.push(Node::Eps(Box::new([bytes, match_node])));
                extra.push(Node::Bytes(ranges(runs)));
            } else {
                nodes.push(Node::Bytes(ranges(runs)));
            }
        }
        nodes.extend(extra);
        if n > 0 {
            nodes.push(Node::Match);
        }
        for node in nodes {
            self.push(terminal, node);
        }
        if self.memory > config.max_build_memory {
            return Err(LexerBuildError::new(LexerBuildErrorKind::TooMuchMemory {
                limit: config.max_build_memory,
            }));
        }
        Ok(base as u32)
    }

    /// Whether the ε-closure of `start` holds a match.
    fn matches_empty(&self, start: u32) -> bool {
        let mut seen = ahash::AHashSet::new();
        let mut stack = vec![start];
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            match &self.nodes[n as usize] {
                Node::Match => return true,
                Node::Eps(next) => stack.extend(next.iter().copied()),
                Node::Look { next, .. } => stack.push(*next),
                Node::Bytes(_) | Node::Fail | Node::SubMatch(_) => {}
            }
        }
        false
    }

    /// The fewest bytes read from `start` before look-around `look` is reached (0-1 breadth-first
    /// search: a byte costs 1, an ε move 0); `usize::MAX` if it is never reached.
    fn min_offset(&self, start: u32, look: u32) -> usize {
        let mut dist: ahash::AHashMap<u32, usize> = ahash::AHashMap::new();
        let mut deque = std::collections::VecDeque::from([(start, 0usize)]);
        while let Some((n, d)) = deque.pop_front() {
            if dist.get(&n).is_some_and(|&old| old <= d) {
                continue;
            }
            dist.insert(n, d);
            match &self.nodes[n as usize] {
                Node::Look { look: l, .. } if *l == look => return d,
                Node::Look { next, .. } => deque.push_front((*next, d)),
                Node::Eps(next) => next.iter().for_each(|&m| deque.push_front((m, d))),
                Node::Bytes(ranges) => ranges.iter().for_each(|r| deque.push_back((r.next, d + 1))),
                Node::Match | Node::SubMatch(_) | Node::Fail => {}
            }
        }
        usize::MAX
    }

    /// The coarsest byte classes such that every range of every node is a union of classes.
    pub fn byte_classes(&self) -> ByteClasses {
        // `boundary[b]`: a class starts at byte `b`.
        let mut boundary = [false; 256];
        boundary[0] = true;
        for node in &self.nodes {
            if let Node::Bytes(ranges) = node {
                for r in ranges.iter() {
                    boundary[r.lo as usize] = true;
                    if r.hi < 255 {
                        boundary[r.hi as usize + 1] = true;
                    }
                }
            }
        }
        let mut map = [0u8; 256];
        let mut class = 0u8;
        for b in 1..256 {
            if boundary[b] {
                class += 1;
            }
            map[b] = class;
        }
        ByteClasses {
            map,
            len: class as usize + 1,
        }
    }

    /// Rewrites every range from bytes to class ids.
    pub fn ranges_to_classes(&mut self, classes: &ByteClasses) {
        for node in &mut self.nodes {
            if let Node::Bytes(ranges) = node {
                for r in ranges.iter_mut() {
                    r.lo = classes.get(r.lo);
                    r.hi = classes.get(r.hi);
                }
            }
        }
    }
}

/// What an appended NFA is: a terminal's pattern whose look-arounds are numbered from `.0`
/// on, or the asserted pattern of look-around `.0`.
#[derive(Clone, Copy)]
enum Owned {
    Terminal(u32),
    Look(u32),
}

thread_local! {
    /// The Thompson compiler of this thread's lexer builds: scratch space that each compile
    /// resets, kept for its buffers. The first Unicode class a compiler meets allocates and
    /// fills a UTF-8 state map of 10,000 entries (about 400 KB); a fresh compiler per build
    /// would pay that on every schema, where it is a large part of the NFA's cost.
    static COMPILER: RefCell<thompson::Compiler> = RefCell::new(thompson::Compiler::new());
}

/// Compiles one terminal's HIR with `compiler`, within the NFA budget; `captures` keeps the
/// capture states (the look-around positions).
fn compile(
    compiler: &mut thompson::Compiler,
    terminal: TerminalId,
    spec: &TerminalSpec,
    hir: &Hir,
    captures: bool,
    config: &LexerConfig,
) -> Result<thompson::NFA, LexerBuildError> {
    let limit = config.nfa_size_limit;
    compiler
        .configure(
            thompson::Config::new()
                .which_captures(if captures {
                    WhichCaptures::All
                } else {
                    WhichCaptures::None
                })
                .nfa_size_limit(Some(limit)),
        )
        .build_from_hir(hir)
        .map_err(|err| {
            // Size is the only way a look-free HIR can fail to compile without captures; the
            // fallback keeps the compiler's own words for anything else.
            let kind = if err.size_limit().is_some() {
                LexerBuildErrorKind::NfaTooBig {
                    terminal,
                    name: spec.name.clone(),
                    limit,
                }
            } else {
                LexerBuildErrorKind::Unsupported {
                    terminal,
                    name: spec.name.clone(),
                    what: format!("pattern ({err})"),
                }
            };
            LexerBuildError::new(kind)
        })
}

/// A partition of the 256 bytes into classes that no terminal tells apart.
#[derive(Clone, Debug)]
pub(crate) struct ByteClasses {
    map: [u8; 256],
    len: usize,
}

impl ByteClasses {
    /// The class of `byte`.
    #[inline]
    pub fn get(&self, byte: u8) -> u8 {
        self.map[byte as usize]
    }

    /// The number of classes (1..=256).
    pub fn len(&self) -> usize {
        self.len
    }

    /// The byte → class map.
    pub fn map(&self) -> &[u8; 256] {
        &self.map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pattern: &str) -> TerminalSpec {
        TerminalSpec {
            name: pattern.to_string(),
            hir: Some(regex_syntax::Parser::new().parse(pattern).unwrap()),
            is_literal: false,
            priority: 0,
            ignored: false,
        }
    }

    #[test]
    fn classes_split_at_range_edges() {
        let nfa = Nfa::build(&[spec("[a-c]x"), spec("b+")], &LexerConfig::default()).unwrap();
        let classes = nfa.byte_classes();
        // Classes: ..` | a | b | c | d..w | x | y..
        assert_eq!(classes.len(), 7);
        assert_eq!(classes.get(0), classes.get(b'`'));
        assert_ne!(classes.get(b'a'), classes.get(b'b'));
        assert_ne!(classes.get(b'b'), classes.get(b'c'));
        assert_eq!(classes.get(b'd'), classes.get(b'w'));
        assert_ne!(classes.get(b'w'), classes.get(b'x'));
        assert_eq!(classes.get(b'y'), classes.get(255));
    }

    #[test]
    fn laziness_and_look_found_in_nested_hir() {
        let lazy = hir_facts(&regex_syntax::Parser::new().parse("a(b|(c+?))").unwrap());
        assert!(lazy.lazy && lazy.look.is_none());
        let greedy = hir_facts(&regex_syntax::Parser::new().parse("a(b|(c+))*").unwrap());
        assert!(!greedy.lazy);
        let look = hir_facts(&regex_syntax::Parser::new().parse(r"a(b|c\b)").unwrap());
        assert_eq!(look.look, Some(Look::WordUnicode));
    }
}
