//! Property tests of the lexer DFA against the `regex` crate.
//!
//! Random small regexes (over a few ASCII and multi-byte characters, with classes, `.`,
//! alternation, greedy and lazy repetition) and random inputs over the same characters plus
//! stray bytes. The oracle is the `regex` crate used in the dumbest way: a full match is
//! `^(?:pat)$` tried on each prefix, and "the lexeme can still grow into a match" is the same
//! test on a *prefix pattern* derived from the generator's syntax tree (see [`Re::prefix`]).
//!
//! Runs are seeded ([`SEED`]) so a failure replays; proptest shrinks it and prints the case.

use munch_lexer::dfa::{Lexer, LexerBuildErrorKind, LexerConfig, TerminalSpec};
use munch_lexer::{LexState, TerminalId};
use munch_testkit::re::{FirstEvent, Re, BOUNDS};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use regex::bytes::Regex;
use regex_syntax::hir::Hir;

/// Change to explore other cases; a failure prints its minimal input either way.
const SEED: u64 = 0x6d75_6e63_685f_6466;

fn config(cases: u32) -> ProptestConfig {
    munch_testkit::props::seeded(cases, SEED)
}

/// The characters patterns are built from: ASCII, a newline (which `.` does not match), and
/// 2- and 3-byte UTF-8 (`é` and `ü` share their first byte).
const CHARS: &[char] = &['a', 'b', 'c', '\n', 'é', 'ü', '€'];

/// Input pieces: the pattern characters, one `.` alone matches, a lone UTF-8 lead byte and a
/// byte that is never UTF-8.
const PIECES: &[&[u8]] = &[
    b"a",
    b"b",
    b"c",
    b"\n",
    "é".as_bytes(),
    "ü".as_bytes(),
    "€".as_bytes(),
    b"x",
    b"\xC3",
    b"\xFF",
];

/// Characters that share their first byte, and one ASCII letter: where a character that
/// begins like one that extends a lexeme may not extend it.
const SHARED: &[char] = &['a', 'é', 'ü', 'ý'];

/// Input pieces over [`SHARED`], with their bytes alone too.
const SHARED_PIECES: &[&[u8]] = &[
    b"a",
    "é".as_bytes(),
    "ü".as_bytes(),
    "ý".as_bytes(),
    b"\xC3",
    b"\xA9",
];

fn any_re() -> impl Strategy<Value = Re> {
    any_re_over(CHARS)
}

fn any_re_over(chars: &'static [char]) -> impl Strategy<Value = Re> {
    let any_char = move || prop::sample::select(chars);
    let atom = prop_oneof![
        4 => any_char().prop_map(Re::Char),
        1 => prop::collection::vec(any_char(), 1..3).prop_map(Re::Set),
        1 => prop::collection::vec(any_char(), 1..3).prop_map(Re::NotSet),
        1 => Just(Re::Dot),
    ];
    let bounds = prop::sample::select(BOUNDS);
    atom.prop_recursive(3, 12, 3, move |inner| {
        prop_oneof![
            3 => prop::collection::vec(inner.clone(), 2..4).prop_map(Re::Cat),
            2 => prop::collection::vec(inner.clone(), 2..4).prop_map(Re::Alt),
            2 => (inner, bounds.clone(), prop::bool::weighted(0.3)).prop_map(
                |(sub, (min, max), lazy)| Re::Rep {
                    sub: Box::new(sub),
                    min,
                    max,
                    lazy,
                }
            ),
        ]
    })
}

fn any_input() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(PIECES), 0..14).prop_map(|pieces| pieces.concat())
}

/// One terminal of a generated set.
#[derive(Clone, Debug)]
struct Term {
    re: Re,
    is_literal: bool,
    priority: i32,
    ignored: bool,
}

fn any_term() -> impl Strategy<Value = Term> {
    any_term_over(&['a', 'b', 'é', 'ü'], CHARS)
}

/// A terminal: a literal over `literal_chars` or a regex over `chars`.
fn any_term_over(
    literal_chars: &'static [char],
    chars: &'static [char],
) -> impl Strategy<Value = Term> {
    // Literals over fewer characters, and mostly priority 0, so that ties with regexes are
    // common.
    let literal = prop::collection::vec(prop::sample::select(literal_chars), 1..4)
        .prop_map(|cs| Re::Cat(cs.into_iter().map(Re::Char).collect()));
    (
        prop_oneof![
            literal.prop_map(|re| (re, true)),
            any_re_over(chars).prop_map(|re| (re, false))
        ],
        prop_oneof![3 => Just(0), 1 => -1..=1i32],
        prop::bool::weighted(0.2),
    )
        .prop_map(|((re, is_literal), priority, ignored)| Term {
            re,
            is_literal,
            priority,
            ignored,
        })
}

/// The `regex`-crate view of one terminal, and for a lazy one the backtracking search of
/// [`Re::first_event`].
struct Oracle {
    re: Re,
    full: Regex,
    prefix: Regex,
    /// `^(?:pat)`: the regex crate's leftmost-first match, Python's `re.match`.
    first: Regex,
    lazy: bool,
}

/// Steps for [`Re::first_event`]: far more than the small cases here need.
const STEPS: u64 = 10_000_000;

impl Oracle {
    fn new(re: &Re) -> Oracle {
        Oracle {
            re: re.clone(),
            full: Regex::new(&format!("^(?:{})$", re.pattern())).unwrap(),
            prefix: Regex::new(&format!("^(?:{})$", re.prefix())).unwrap(),
            first: Regex::new(&format!("^(?:{})", re.pattern())).unwrap(),
            lazy: re.is_lazy(),
        }
    }

    /// The end of the leftmost-first match at the start of `text`.
    fn leftmost_first(&self, text: &[u8]) -> Option<usize> {
        self.first.find(text).map(|m| m.end())
    }

    /// Whether the terminal completes on `text[..l]` (a lazy one where a leftmost-first search
    /// of a text starting with `text[..l]` records a match at `l`: its match on `text[..l]`
    /// ends there).
    fn matches(&self, text: &[u8], l: usize) -> bool {
        l > 0
            && if self.lazy {
                self.leftmost_first(&text[..l]) == Some(l)
            } else {
                self.full.is_match(&text[..l])
            }
    }

    /// Whether `text[..l]` is or can still grow into a completion of the terminal (a lazy
    /// one: the leftmost-first search on `text[..l]` first meets a match at `l` or a path that
    /// needs more text).
    fn viable(&self, text: &[u8], l: usize) -> bool {
        if self.lazy {
            match self
                .re
                .first_event(&text[..l], STEPS)
                .expect("search budget")
            {
                FirstEvent::MoreText => true,
                FirstEvent::Match(m) => m == l && l > 0,
                FirstEvent::NoMatch => false,
            }
        } else {
            self.prefix.is_match(&text[..l])
        }
    }
}

/// The HIR of a generated terminal: literals the way a grammar loader builds them.
fn hir_of(term: &Term) -> Hir {
    match (&term.re, term.is_literal) {
        (Re::Cat(cs), true) => {
            let text: String = cs
                .iter()
                .map(|c| match c {
                    Re::Char(c) => *c,
                    _ => unreachable!("literals are made of characters"),
                })
                .collect();
            Hir::literal(text.as_bytes())
        }
        _ => regex_syntax::Parser::new()
            .parse(&term.re.pattern())
            .unwrap(),
    }
}

fn spec(i: usize, term: &Term) -> TerminalSpec {
    TerminalSpec {
        name: format!("T{i}"),
        hir: Some(hir_of(term)),
        is_literal: term.is_literal,
        priority: term.priority,
        ignored: term.ignored,
    }
}

/// The lexer's tie-breaking, restated.
fn tie_break(terms: &[Term], matched: &[usize]) -> Vec<TerminalId> {
    let Some(best) = matched.iter().map(|&i| terms[i].priority).max() else {
        return vec![];
    };
    let top: Vec<usize> = matched
        .iter()
        .copied()
        .filter(|&i| terms[i].priority == best)
        .collect();
    let any_literal = top.iter().any(|&i| terms[i].is_literal);
    top.into_iter()
        .filter(|&i| !any_literal || terms[i].is_literal)
        .map(|i| TerminalId::from(i as u32))
        .collect()
}

/// Longest match with one character of lookahead, computed from the oracles prefix by prefix:
/// read while some terminal is viable; if that stops inside a character, back up to the last
/// character boundary (at most three bytes); emit there. An error is where the longest match
/// stopped, or, after backing up, where the longer reading stopped if no later.
/// Lexemes as (start, end, terminals); an error as (offset, lexeme start).
#[allow(clippy::type_complexity)]
/// With `backtrack`, a reading that ends on no match goes back to its last match if a lazy
/// terminal completes it ([`LexerConfig::backtrack_lazy`]).
fn reference_tokenize(
    terms: &[Term],
    oracles: &[Oracle],
    input: &[u8],
    backtrack: bool,
) -> Result<Vec<(usize, usize, Vec<TerminalId>)>, (usize, usize)> {
    let alive = |lexeme: &[u8]| oracles.iter().any(|o| o.viable(lexeme, lexeme.len()));
    let accepted = |lexeme: &[u8]| {
        let matched: Vec<usize> = (0..terms.len())
            .filter(|&t| oracles[t].matches(lexeme, lexeme.len()))
            .collect();
        tie_break(terms, &matched)
    };
    // A lexeme of literals (ignored terminals) is gone back to when only literals (ignored
    // terminals) were viable on the longer reading (`LexerConfig::backtrack_literals` and
    // `backtrack_ignored`, on in every config here).
    let backs_up = |accepted: &Vec<TerminalId>, longer: &[u8]| {
        let within = |kind: &dyn Fn(&Term) -> bool| {
            accepted.iter().all(|t| kind(&terms[t.as_usize()]))
                && (0..terms.len())
                    .filter(|&t| oracles[t].viable(longer, longer.len()))
                    .all(|t| kind(&terms[t]))
        };
        (backtrack && accepted.iter().any(|t| oracles[t.as_usize()].lazy))
            || within(&|t| t.is_literal)
            || within(&|t| t.ignored)
    };
    munch_testkit::lexing::longest_match_lazy(input, alive, accepted, backs_up)
}

/// Builds the lexer for `terms`, which must not match the empty string.
fn lexer_of(terms: &[Term]) -> Lexer {
    lexer_with(terms, false)
}

/// [`lexer_of`], going back to lazy matches if `backtrack`.
fn lexer_with(terms: &[Term], backtrack: bool) -> Lexer {
    let specs: Vec<TerminalSpec> = terms.iter().enumerate().map(|(i, t)| spec(i, t)).collect();
    let config = LexerConfig {
        backtrack_lazy: backtrack,
        ..LexerConfig::default()
    };
    Lexer::new(&specs, &config).unwrap()
}

/// `tokenize` of both configurations against the reference.
fn check_tokenize(terms: &[Term], input: &[u8]) -> Result<(), TestCaseError> {
    let oracles: Vec<Oracle> = terms.iter().map(|t| Oracle::new(&t.re)).collect();
    for backtrack in [false, true] {
        let lexer = lexer_with(terms, backtrack);
        let expected = reference_tokenize(terms, &oracles, input, backtrack);
        let got = lexer
            .tokenize(input)
            .map(|ls| {
                ls.into_iter()
                    .map(|l| (l.start, l.end, l.terminals.to_vec()))
                    .collect()
            })
            .map_err(|e| (e.offset, e.lexeme_start));
        let patterns: Vec<String> = terms.iter().map(|t| t.re.pattern()).collect();
        prop_assert_eq!(
            got,
            expected,
            "{:?} {:?} on {:?} (backtrack {})",
            terms
                .iter()
                .map(|t| (t.is_literal, t.priority, t.ignored))
                .collect::<Vec<_>>(),
            patterns,
            input,
            backtrack
        );
    }
    Ok(())
}

/// Drops the terminals that match the empty string (a build error, tested separately).
fn non_empty(terms: Vec<Term>) -> Vec<Term> {
    terms
        .into_iter()
        .filter(|t| !Oracle::new(&t.re).full.is_match(b""))
        .collect()
}

proptest! {
    #![proptest_config(config(300))]

    /// One terminal alone: along every prefix of the input, the DFA is alive exactly while the
    /// prefix can grow into a match, accepts exactly on full matches (the first one for a lazy
    /// terminal), and so finds the regex crate's longest (lazy: shortest) matching prefix.
    #[test]
    fn single_terminal_agrees_with_regex(re in any_re(), input in any_input()) {
        let pattern = re.pattern();
        let oracle = Oracle::new(&re);
        let term = Term { re: re.clone(), is_literal: false, priority: 0, ignored: false };
        let built = Lexer::new(&[spec(0, &term)], &LexerConfig::default());
        if oracle.full.is_match(b"") {
            let err = built.unwrap_err();
            let is_empty_match = matches!(err.kind(), LexerBuildErrorKind::EmptyMatch { .. });
            prop_assert!(is_empty_match, "{}: {:?}", pattern, err);
            return Ok(());
        }
        let lexer = built.unwrap();
        let t0 = TerminalId::from(0);
        prop_assert_eq!(lexer.is_lazy(t0), re.is_lazy(), "{}", pattern);

        let mut s = lexer.start();
        let mut found = None;
        for l in 0..=input.len() {
            if l > 0 {
                s = lexer.next(s, input[l - 1]);
            }
            let viable = oracle.viable(&input, l);
            prop_assert_eq!(!lexer.is_dead(s), viable, "{} alive at {:?}", pattern, &input[..l]);
            if lexer.is_dead(s) {
                break;
            }
            let accepts = lexer.accepted(s).contains(&t0);
            prop_assert_eq!(accepts, oracle.matches(&input, l), "{} on {:?}", pattern, &input[..l]);
            if accepts {
                found = Some(l);
            }
        }
        // A lazy terminal's lexeme is its last match before its threads die: Python's
        // `re.match` on the whole input.
        let expected = if oracle.lazy {
            oracle.leftmost_first(&input).filter(|&l| l > 0)
        } else {
            (1..=input.len()).rev().find(|&l| oracle.full.is_match(&input[..l]))
        };
        prop_assert_eq!(found, expected, "{} on {:?}", pattern, input);
        // The backtracking search agrees with the regex crate wherever it finds a match.
        for l in 0..=input.len() {
            match re.first_event(&input[..l], STEPS).expect("search budget") {
                FirstEvent::Match(m) => {
                    prop_assert_eq!(oracle.leftmost_first(&input[..l]), Some(m), "{}", pattern)
                }
                FirstEvent::NoMatch => {
                    prop_assert_eq!(oracle.leftmost_first(&input[..l]), None, "{}", pattern)
                }
                FirstEvent::MoreText => {}
            }
        }
    }

    /// Several terminals: `tokenize` equals the reference longest-match tokenizer.
    #[test]
    fn tokenize_agrees_with_reference(
        terms in prop::collection::vec(any_term(), 1..5).prop_map(non_empty),
        input in any_input(),
    ) {
        prop_assume!(!terms.is_empty());
        check_tokenize(&terms, &input)?;
    }

    /// Several terminals: per-state facts hang together, the DFA is minimal, and along the
    /// input `accepted` is the tie-break of the full matches and `reachable` only holds
    /// terminals the prefix can still grow into.
    #[test]
    fn state_facts_are_consistent(
        terms in prop::collection::vec(any_term(), 1..5).prop_map(non_empty),
        input in any_input(),
    ) {
        prop_assume!(!terms.is_empty());
        let lexer = lexer_of(&terms);
        let states: Vec<LexState> = (0..lexer.state_len()).map(|s| LexState::from(s as u32)).collect();
        for &s in &states {
            let accepted = lexer.accepted(s);
            prop_assert!(accepted.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(accepted.iter().all(|&t| lexer.reachable(s).contains(t)));
            let mut below = munch_lexer::TerminalSet::new(terms.len());
            below.extend(accepted.iter().copied());
            let mut grows = false;
            for c in 0..lexer.class_len() {
                let n = lexer.next_class(s, c as u8);
                below.union_with(lexer.reachable(n));
                grows |= !lexer.is_dead(n);
            }
            prop_assert_eq!(&below, lexer.reachable(s));
            prop_assert_eq!(grows, lexer.can_grow(s));
            prop_assert_eq!(lexer.is_dead(s), lexer.reachable(s).is_empty());
        }
        prop_assert_eq!(moore_block_count(&lexer), lexer.state_len());

        let oracles: Vec<Oracle> = terms.iter().map(|t| Oracle::new(&t.re)).collect();
        let mut s = lexer.start();
        for l in 0..=input.len() {
            if l > 0 {
                s = lexer.next(s, input[l - 1]);
            }
            let matched: Vec<usize> =
                (0..terms.len()).filter(|&t| oracles[t].matches(&input, l)).collect();
            let expected = tie_break(&terms, &matched);
            prop_assert_eq!(lexer.accepted(s), expected.as_slice());
            for t in lexer.reachable(s) {
                prop_assert!(oracles[t.as_usize()].viable(&input, l));
            }
            let any_viable = oracles.iter().any(|o| o.viable(&input, l));
            prop_assert_eq!(!lexer.is_dead(s), any_viable);
        }
    }
}

/// The number of classes of states with the same accepted sets on every suffix, by plain
/// Moore refinement (independent of the lexer's Hopcroft).
fn moore_block_count(lexer: &Lexer) -> usize {
    use std::collections::HashMap;
    let n = lexer.state_len();
    let state = |s: usize| LexState::from(s as u32);
    let mut block: Vec<usize> = {
        let mut ids: HashMap<Vec<TerminalId>, usize> = HashMap::new();
        (0..n)
            .map(|s| {
                let next = ids.len();
                *ids.entry(lexer.accepted(state(s)).to_vec()).or_insert(next)
            })
            .collect()
    };
    loop {
        let mut ids: HashMap<Vec<usize>, usize> = HashMap::new();
        let refined: Vec<usize> = (0..n)
            .map(|s| {
                let mut signature = vec![block[s]];
                signature.extend(
                    (0..lexer.class_len())
                        .map(|c| block[lexer.next_class(state(s), c as u8).as_usize()]),
                );
                // The inhibited branch's first byte too: a pending state's guards show there.
                signature.extend(
                    (0..lexer.class_len())
                        .map(|c| block[lexer.next_inhibited_class(state(s), c as u8).as_usize()]),
                );
                let next = ids.len();
                *ids.entry(signature).or_insert(next)
            })
            .collect();
        let before = block.iter().max().map_or(0, |m| m + 1);
        let after = ids.len();
        block = refined;
        if after == before {
            return after;
        }
    }
}

proptest! {
    #![proptest_config(config(2000))]

    /// Terminals over characters that share their first byte: `tokenize` backs up to the
    /// last character boundary as the reference does.
    #[test]
    fn tokenize_agrees_with_reference_on_shared_lead_bytes(
        terms in prop::collection::vec(any_term_over(SHARED, SHARED), 1..5).prop_map(non_empty),
        input in prop::collection::vec(prop::sample::select(SHARED_PIECES), 0..10)
            .prop_map(|pieces| pieces.concat()),
    ) {
        prop_assume!(!terms.is_empty());
        check_tokenize(&terms, &input)?;
    }
}

proptest! {
    #![proptest_config(config(3000))]

    /// A lazy terminal alone over ASCII: its lexeme (the last accepting state before the DFA
    /// dies, and the first lexeme `tokenize` emits when the lexer goes back to lazy matches)
    /// is the match of a leftmost-first search, Python's `re.match`.
    #[test]
    fn lazy_lexeme_is_the_leftmost_first_match(
        re in any_re_over(&['a', 'b', 'c'])
            .prop_filter("lazy", Re::is_lazy)
            // A terminal must not match the empty string.
            .prop_map(|re| if re.nullable() { Re::Cat(vec![re, Re::Char('c')]) } else { re }),
        input in prop::collection::vec(prop::sample::select(&b"abcx"[..]), 0..12),
    ) {
        let oracle = Oracle::new(&re);
        let term = Term { re: re.clone(), is_literal: false, priority: 0, ignored: false };
        let lexer = lexer_with(&[term], true);
        let expected = oracle.leftmost_first(&input).filter(|&l| l > 0);
        let mut s = lexer.start();
        let mut found = None;
        for (l, &b) in input.iter().enumerate() {
            s = lexer.next(s, b);
            if lexer.is_dead(s) {
                break;
            }
            if !lexer.accepted(s).is_empty() {
                found = Some(l + 1);
            }
        }
        prop_assert_eq!(found, expected, "{} on {:?}", re.pattern(), input);
        if let Ok(lexemes) = lexer.tokenize(&input) {
            let first = lexemes.first().map(|l| l.end);
            prop_assert_eq!(first, expected, "{} on {:?}", re.pattern(), input);
        } else if let Some(e) = expected {
            // The input goes wrong after the first lexeme: the error is past it.
            let err = lexer.tokenize(&input).unwrap_err();
            prop_assert!(err.offset >= e, "{} on {:?}: {:?}", re.pattern(), input, err);
        }
    }
}
