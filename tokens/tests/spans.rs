//! `munch_tokens` against a direct per-token simulation of the lexer.
//!
//! The reference ([`simulate`]) reads one token's bytes from one point exactly as the module
//! docs state the semantics, byte by byte, with no trie and no sharing. Every test compares the
//! built tables with it: each class's span from each point is every member's simulated span
//! (soundness), two classes differ somewhere (minimality), the inverse lists exactly the
//! classes per span, and `expand` sets exactly the members' bits.
//!
//! Random cases are seeded ([`SEED`]) so a failure replays; proptest shrinks it and prints the
//! lexer's patterns and the vocabulary.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use munch_lexer::dfa::{Lexer, LexerConfig, TerminalSpec};
use munch_lexer::{LexState, TerminalId};
use munch_testkit::lexers;
use munch_tokens::{
    ClassId, ClassSet, ExpandCache, LexPoint, PointId, PointSpanner, SpanId, SpansBudget,
    SpansConfig, TokenClasses, TokenSpans,
};
use munch_vocab::{TokenId, Vocabulary};
use proptest::prelude::*;

/// Change to explore other cases; a failure prints its minimal input either way.
const SEED: u64 = 0x6d75_6e63_685f_7370;

/// A terminal: pattern, literal-ness, priority, ignored.
type Term = (&'static str, bool, i32, bool);

fn lexer(terms: &[(String, bool, i32, bool)]) -> Lexer {
    lexer_with(terms, false)
}

/// The lexer of `terms`, going back to lazy matches if `backtrack_lazy`.
fn lexer_with(terms: &[(String, bool, i32, bool)], backtrack_lazy: bool) -> Lexer {
    let specs: Vec<TerminalSpec> = terms
        .iter()
        .enumerate()
        .map(
            |(i, (pattern, is_literal, priority, ignored))| TerminalSpec {
                is_literal: *is_literal,
                priority: *priority,
                ignored: *ignored,
                ..lexers::re(&format!("T{i}"), pattern)
            },
        )
        .collect();
    let config = LexerConfig {
        backtrack_lazy,
        ..LexerConfig::default()
    };
    lexers::build_with(&specs, &config)
}

fn lexer_of(terms: &[Term]) -> Lexer {
    let owned: Vec<(String, bool, i32, bool)> = terms
        .iter()
        .map(|&(p, l, pr, ig)| (p.to_string(), l, pr, ig))
        .collect();
    lexer(&owned)
}

fn vocab_of(tokens: &[&[u8]]) -> Vocabulary {
    Vocabulary::from_token_bytes(tokens.iter().map(|t| Some(t.to_vec())).collect(), vec![])
        .expect("test vocabularies build")
}

/// A simulated span: the accepted terminals of each lexeme every reading emitted, the end
/// state of the reading that emitted nothing more, and the other readings (the accepted
/// terminals of their further lexemes, and their state), sorted.
type SimSpan = (Vec<Vec<TerminalId>>, LexState, Vec<SimFork>);
type SimFork = (Vec<Vec<TerminalId>>, LexState);

/// Reads `bytes` from `point` as the module docs define it, one byte at a time, following
/// every reading.
fn simulate(lexer: &Lexer, point: LexPoint, bytes: &[u8]) -> Option<SimSpan> {
    // The readings: state and emitted lexemes.
    let mut readings: BTreeSet<(LexState, Vec<Vec<TerminalId>>)> =
        BTreeSet::from([(point.state, Vec::new())]);
    for (i, &b) in bytes.iter().enumerate() {
        let mut next = BTreeSet::new();
        for (s, emitted) in readings {
            if let (0, Some(inh)) = (i, point.inhibitor) {
                next.insert((lexer.next_inhibited(inh, b), emitted));
                continue;
            }
            next.insert((lexer.next(s, b), emitted.clone()));
            if !lexer.accepted(s).is_empty() {
                // The lexeme ends before `b`: `b` starts the next one.
                let mut emitted = emitted;
                emitted.push(lexer.accepted(s).to_vec());
                next.insert((lexer.next_inhibited(s, b), emitted));
            }
        }
        readings = next
            .into_iter()
            .filter(|(s, _)| !lexer.is_dead(*s))
            .collect();
    }
    let first = readings.first()?.1.clone();
    let common = readings.iter().fold(first.len(), |n, (_, e)| {
        n.min(
            e.iter()
                .zip(&first[..n])
                .take_while(|(a, b)| a == b)
                .count(),
        )
    });
    let mut end = lexer.dead();
    let mut forks = Vec::new();
    for (s, e) in readings {
        if e.len() == common && lexer.is_dead(end) {
            end = s;
        } else {
            forks.push((e[common..].to_vec(), s));
        }
    }
    forks.sort();
    Some((first[..common].to_vec(), end, forks))
}

/// The points as the module docs list them, rebuilt from the lexer.
fn expected_points(lexer: &Lexer) -> Vec<LexPoint> {
    let states = || (0..lexer.state_len()).map(LexState::from_usize);
    let mut points: Vec<LexPoint> = states()
        .filter(|&s| !lexer.is_dead(s))
        .map(|state| LexPoint {
            state,
            inhibitor: None,
        })
        .collect();
    if !lexer.is_dead(lexer.start()) {
        points.extend(states().filter(|&s| lexer.inhibits(s)).map(|inh| LexPoint {
            state: lexer.start(),
            inhibitor: Some(inh),
        }));
    }
    points
}

/// Checks every table of `spans` against the simulation; returns the classes as lists of
/// token ids, for tests that look at particular tokens.
fn check(lexer: &Lexer, vocab: &Vocabulary, spans: &TokenSpans) -> Vec<Vec<u32>> {
    let points = expected_points(lexer);
    assert_eq!(spans.points(), &points[..], "points");
    for (i, &p) in points.iter().enumerate() {
        assert_eq!(spans.point(p), Some(PointId::from_usize(i)));
        assert_eq!(spans.point_at(PointId::from_usize(i)), p);
    }
    assert_eq!(
        spans.point(LexPoint {
            state: lexer.dead(),
            inhibitor: None
        }),
        None
    );

    let classes = spans.classes();
    // Soundness: every member of every class realises the class's span from every point.
    let mut signature: BTreeMap<Vec<Option<SimSpan>>, ClassId> = BTreeMap::new();
    let mut realised = BTreeSet::new();
    for c in 0..classes.len() {
        let c = ClassId::from_usize(c);
        let members = classes.members(c);
        assert!(!members.is_empty());
        assert_eq!(classes.representative(c), members[0]);
        assert!(members.windows(2).all(|w| w[0] < w[1]));
        let mut row = Vec::new();
        for (i, &p) in points.iter().enumerate() {
            let got = spans.span_of(PointId::from_usize(i), c).map(|s| {
                realised.insert(s);
                let span = spans.span(s);
                let emitted: Vec<Vec<TerminalId>> = span
                    .emitted
                    .iter()
                    .map(|&e| lexer.accepted(e).to_vec())
                    .collect();
                let mut forks: Vec<SimFork> = span
                    .forks
                    .iter()
                    .map(|f| {
                        let lexemes = f.lexemes.iter().map(|&e| lexer.accepted(e).to_vec());
                        (lexemes.collect(), f.state)
                    })
                    .collect();
                forks.sort();
                (emitted, span.end, forks)
            });
            for &t in members {
                let bytes = vocab.token_bytes(t).expect("members have bytes");
                let want = simulate(lexer, p, bytes);
                assert_eq!(got, want, "token {t} ({bytes:?}) from {p:?}");
            }
            row.push(got);
        }
        // Minimality: no two classes behave alike everywhere.
        if let Some(other) = signature.insert(row, c) {
            panic!("classes {other:?} and {c:?} realise the same spans everywhere");
        }
    }
    assert_eq!(realised.len(), spans.span_len(), "every span is realised");
    // Spans are distinct.
    let distinct: BTreeSet<_> = (0..spans.span_len())
        .map(|s| {
            let span = spans.span(munch_tokens::SpanId::from_usize(s));
            (span.emitted.to_vec(), span.end, span.forks.to_vec())
        })
        .collect();
    assert_eq!(distinct.len(), spans.span_len());

    // Class membership covers exactly the text tokens.
    let mut all = Vec::new();
    for t in 0..vocab.len() {
        let t = TokenId::from_usize(t);
        match (vocab.token_bytes(t), classes.class_of(t)) {
            (Some(_), Some(c)) => {
                assert!(classes.members(c).contains(&t));
                all.push(t);
            }
            (None, None) => {}
            (b, c) => panic!("token {t}: bytes {b:?}, class {c:?}"),
        }
    }
    assert_eq!(classes.token_len(), all.len());

    // The inverse lists each span's classes.
    for i in 0..points.len() {
        let p = PointId::from_usize(i);
        let inverse = spans.inverse(p);
        assert!(inverse.windows(2).all(|w| w[0].0 < w[1].0));
        let mut seen = ClassSet::new(classes.len());
        for (s, set) in inverse {
            assert!(!set.is_empty());
            assert!(!seen.intersects(set));
            seen.union_with(set);
            for c in set.iter() {
                assert_eq!(spans.span_of(p, c), Some(*s));
            }
        }
        for c in 0..classes.len() {
            let c = ClassId::from_usize(c);
            assert_eq!(seen.contains(c), spans.span_of(p, c).is_some());
        }
    }
    (0..classes.len())
        .map(|c| {
            classes
                .members(ClassId::from_usize(c))
                .iter()
                .map(|t| t.as_u32())
                .collect()
        })
        .collect()
}

/// `expand` and `expand_cached` (with `cache`, which has seen earlier sets) of `set` against
/// setting each member's bit.
fn check_expand(spans: &TokenSpans, set: &ClassSet, cache: &mut ExpandCache) {
    let classes = spans.classes();
    let mut want = vec![0u32; classes.word_len()];
    for c in set.iter() {
        for t in classes.members(c) {
            want[t.as_usize() / 32] |= 1 << (t.as_usize() % 32);
        }
    }
    // Garbage in the output words must be overwritten.
    let mut got = vec![0xdead_beef_u32; classes.word_len()];
    classes.expand(set, &mut got);
    assert_eq!(got, want, "expand {set:?}");
    let mut got = vec![0x1234_5678_u32; classes.word_len()];
    classes.expand_cached(cache, set, &mut got);
    assert_eq!(got, want, "expand_cached {set:?}");
}

/// Builds the spans, and checks that the classes-only build (which walks only the points
/// without an inhibitor) finds the same partition, on one thread and on two.
fn build(lexer: &Lexer, vocab: &Vocabulary) -> TokenSpans {
    let spans = TokenSpans::build(lexer, vocab, &SpansConfig::default()).expect("small builds fit");
    for threads in [1, 2] {
        let config = SpansConfig {
            threads,
            ..SpansConfig::default()
        };
        let classes = TokenClasses::build(lexer, vocab, &config).expect("small builds fit");
        assert_eq!(classes.len(), spans.classes().len(), "classes-only build");
        // Classes are numbered by their lowest member: in id order, each class first met is
        // the next number.
        let mut next = 0;
        for (t, _) in vocab.text_tokens() {
            let c = classes
                .class_of(t)
                .expect("a text token has a class")
                .as_usize();
            assert!(c <= next, "class {c} met before class {next}");
            next = next.max(c + 1);
        }
        assert_eq!(next, classes.len());
        // The expansion's tables are built at the first expansion, not by the build.
        if classes.is_empty() {
            continue;
        }
        let before = classes.heap_bytes();
        let mut set = classes.empty_set();
        set.insert(ClassId::from_usize(0));
        let mut words = vec![0; classes.word_len()];
        classes.expand(&set, &mut words);
        assert!(
            classes.heap_bytes() > before,
            "expansion tables built on first use"
        );
        let (lowest, _) = vocab.text_tokens().next().expect("a text token");
        assert_ne!(
            words[lowest.as_usize() / 32] & (1 << (lowest.as_u32() % 32)),
            0
        );
        for t in 0..vocab.len() {
            let t = TokenId::from_usize(t);
            assert_eq!(
                classes.class_of(t),
                spans.classes().class_of(t),
                "classes-only build, token {t:?}"
            );
        }
    }
    spans
}

/// The point `(state, inhibitor)` of `spans`, which must have it.
fn point(spans: &TokenSpans, state: LexState, inhibitor: Option<LexState>) -> PointId {
    spans
        .point(LexPoint { state, inhibitor })
        .unwrap_or_else(|| panic!("no point ({state:?}, {inhibitor:?})"))
}

fn class_of(spans: &TokenSpans, t: u32) -> ClassId {
    spans
        .classes()
        .class_of(TokenId::from(t))
        .expect("text token")
}

/// Identifiers, a keyword, numbers, spaces (ignored), one operator.
const SMALL: &[Term] = &[
    ("if", true, 0, false),
    ("[a-z]+", false, 0, false),
    ("[0-9]+", false, 0, false),
    (" +", false, 0, true),
    ("=|==", false, 0, false),
];

#[test]
fn identifiers_keywords_and_spaces() {
    let lexer = lexer_of(SMALL);
    // 0 a, 1 b, 2 ab, 3 if, 4 " a", 5 " b", 6 "=", 7 "==", 8 "1", 9 "12", 10 "a=", 11 "?"
    let vocab = vocab_of(&[
        b"a", b"b", b"ab", b"if", b" a", b" b", b"=", b"==", b"1", b"12", b"a=", b"?",
    ]);
    let spans = build(&lexer, &vocab);
    check(&lexer, &vocab, &spans);
    // Letters are interchangeable, spaces before them too; "if" is not a plain identifier.
    assert_eq!(class_of(&spans, 0), class_of(&spans, 1));
    assert_eq!(class_of(&spans, 0), class_of(&spans, 2));
    assert_eq!(class_of(&spans, 4), class_of(&spans, 5));
    assert_ne!(class_of(&spans, 0), class_of(&spans, 3));
    assert_eq!(class_of(&spans, 8), class_of(&spans, 9));
    // "=" can grow into "==", "==" cannot: different end states.
    assert_ne!(class_of(&spans, 6), class_of(&spans, 7));
    // "?" is dead from everywhere: its own class.
    let q = class_of(&spans, 11);
    assert!((0..spans.points().len()).all(|p| spans.span_of(PointId::from_usize(p), q).is_none()));
    // From the identifier state, " a" emits the identifier (a state accepting only [a-z]+)
    // and then the ignored space, and ends in an identifier.
    let ident = lexer.next(lexer.start(), b'a');
    let p = point(&spans, ident, None);
    let span = spans.span(spans.span_of(p, class_of(&spans, 4)).unwrap());
    let names: Vec<Vec<TerminalId>> = span
        .emitted
        .iter()
        .map(|&s| lexer.accepted(s).to_vec())
        .collect();
    assert_eq!(
        names,
        [vec![TerminalId::from(1)], vec![TerminalId::from(3)]]
    );
    assert_eq!(span.end, ident);
}

#[test]
fn inhibitor_points_kill_tokens_that_extend_the_lexeme() {
    let lexer = lexer_of(SMALL);
    let vocab = vocab_of(&[b"a", b"=", b" ", b"1", b"=="]);
    let spans = build(&lexer, &vocab);
    check(&lexer, &vocab, &spans);
    // After the identifier "x" was handed over inhibited, "a" would extend it: dead; " " and
    // "=" start new lexemes.
    let ident = lexer.next(lexer.start(), b'x');
    let p = spans
        .point(LexPoint {
            state: lexer.start(),
            inhibitor: Some(ident),
        })
        .expect("an accepting state that can grow is an inhibitor point");
    assert_eq!(spans.span_of(p, class_of(&spans, 0)), None);
    let eq = spans.span_of(p, class_of(&spans, 1)).unwrap();
    assert_eq!(spans.span(eq).emitted, &[]);
    assert_eq!(spans.span(eq).end, lexer.next(lexer.start(), b'='));
    // "==" cannot grow: no inhibitor point for it, nor for a state that accepts nothing.
    let eqeq = lexer.walk(lexer.start(), b"==");
    assert!(spans
        .point(LexPoint {
            state: lexer.start(),
            inhibitor: Some(eqeq)
        })
        .is_none());
    // An inhibitor point's state is always the start state.
    assert!(spans
        .point(LexPoint {
            state: ident,
            inhibitor: Some(ident)
        })
        .is_none());
}

#[test]
fn ties_keep_every_terminal_and_literals_win() {
    // "ab" is matched by a literal and two regexes of equal priority; "ba" by two regexes.
    let lexer = lexer_of(&[
        ("ab", true, 0, false),
        ("[ab]+", false, 0, false),
        ("[ab][ab]", false, 0, false),
        (";", false, 0, false),
    ]);
    let vocab = vocab_of(&[b"ab;", b"ba;", b"aa;", b"bb;", b"ab"]);
    let spans = build(&lexer, &vocab);
    check(&lexer, &vocab, &spans);
    let start = point(&spans, lexer.start(), None);
    let emitted = |t: u32| {
        let s = spans.span_of(start, class_of(&spans, t)).unwrap();
        lexer.accepted(spans.span(s).emitted[0]).to_vec()
    };
    assert_eq!(emitted(0), [TerminalId::from(0)]);
    assert_eq!(emitted(1), [TerminalId::from(1), TerminalId::from(2)]);
    // Same tie on the same lexeme length: one class.
    assert_eq!(class_of(&spans, 1), class_of(&spans, 2));
    assert_eq!(class_of(&spans, 1), class_of(&spans, 3));
    assert_ne!(class_of(&spans, 0), class_of(&spans, 1));
}

#[test]
fn emitted_lexemes_are_named_by_their_terminals() {
    // Hex and decimal numbers are one terminal reached through different states: tokens that
    // differ only in which of those states the number ended in are one class.
    let lexer = lexer_of(&[
        ("0x[0-9a-f]+|[0-9]+", false, 0, false),
        (",", true, 0, false),
    ]);
    // From inside a number, "0xf," and "12," differ ("0x1" + "0xf," dies at the second x), so
    // the tokens start with the separator.
    let vocab = vocab_of(&[b",0xf,", b",12,", b"0xf", b"12"]);
    let spans = build(&lexer, &vocab);
    check(&lexer, &vocab, &spans);
    assert_ne!(
        lexer.walk(lexer.start(), b"0xf"),
        lexer.walk(lexer.start(), b"12")
    );
    assert_eq!(class_of(&spans, 0), class_of(&spans, 1));
    assert_ne!(class_of(&spans, 2), class_of(&spans, 3));
}

#[test]
fn tokens_that_split_utf8_characters() {
    // A string literal of any characters, and an identifier of letters including é.
    let lexer = lexer_of(&[
        ("\"[^\"]*\"", false, 0, false),
        ("[a-zé]+", false, 0, false),
        (" ", false, 0, true),
    ]);
    let e_acute = "é".as_bytes();
    let euro = "€".as_bytes();
    let vocab = vocab_of(&[
        &e_acute[..1],
        &e_acute[1..],
        e_acute,
        &euro[..1],
        &euro[..2],
        &euro[2..],
        b"\"",
        b"a\"",
        &[e_acute[1], b'"'],
        b"\xff",
    ]);
    let spans = build(&lexer, &vocab);
    check(&lexer, &vocab, &spans);
    // The lead byte of é is alive from the start state (an identifier may start with é) and
    // inside a string; its continuation byte alone is dead from both, and alive right after
    // the lead byte.
    let point = |state| point(&spans, state, None);
    let start = point(lexer.start());
    let inside = point(lexer.next(lexer.start(), b'"'));
    let after_lead = point(lexer.next(lexer.start(), e_acute[0]));
    let (lead, cont) = (class_of(&spans, 0), class_of(&spans, 1));
    assert!(spans.span_of(start, lead).is_some());
    assert!(spans.span_of(inside, lead).is_some());
    assert_eq!(spans.span_of(start, cont), None);
    assert_eq!(spans.span_of(inside, cont), None);
    let whole = spans.span(spans.span_of(after_lead, cont).unwrap());
    assert_eq!(whole.end, lexer.walk(lexer.start(), e_acute));
    // 0xFF is never UTF-8: dead everywhere, like no other token here.
    let ff = class_of(&spans, 9);
    assert_eq!(spans.classes().members(ff), &[TokenId::from(9)]);
}

#[test]
fn tokens_ending_inside_a_character_that_may_end_the_lexeme() {
    // Issue 28's terminals: after `é`, E2 may begin `→` (no VAL character) or a VAL character.
    let lexer = lexer_of(&[
        ("[a-zé]+", false, 0, false),
        ("→", true, 0, false),
        ("[^\\x00-\\x7f;→ ]+", false, 0, false),
        (";", true, 0, false),
    ]);
    let arrow = "→".as_bytes();
    let e_acute = "é".as_bytes();
    let vocab = vocab_of(&[
        b"\xC3\xA9\xE2",         // 0: é and the lead byte of →
        b"\x86\x92",             // 1: the rest of →
        b"\x86\x92\xE6\x97\xA5", // 2: the rest of →, then 日
        "日本語".as_bytes(),     // 3
        &arrow[..2],             // 4: two bytes of →
        &arrow[2..],             // 5
        b"\xC3\xA9",             // 6: é
        "é€".as_bytes(),         // 7
        b";",                    // 8
        &arrow[..1],             // 9
        "€".as_bytes(),          // 10
    ]);
    let spans = build(&lexer, &vocab);
    check(&lexer, &vocab, &spans);
    let start = point(&spans, lexer.start(), None);
    // From the start, `é` + E2 reads `é` going on (a VAL lexeme inside a character) or ending
    // (KEY or VAL), with the pending state after E2.
    let span = spans.span(spans.span_of(start, class_of(&spans, 0)).unwrap());
    assert!(span.emitted.is_empty());
    assert_eq!(span.end, lexer.walk(lexer.start(), b"\xC3\xA9\xE2"));
    let [fork] = span.forks else {
        panic!("one fork: {:?}", span.forks);
    };
    let e = lexer.walk(lexer.start(), e_acute);
    assert_eq!(fork.lexemes.len(), 1);
    assert_eq!(lexer.accepted(fork.lexemes[0]), lexer.accepted(e));
    assert_eq!(fork.state, lexer.next_inhibited(e, 0xE2));
    // From that pending state, the rest of → completes the arrow; from the VAL lexeme it is
    // dead.
    let pending = point(&spans, fork.state, None);
    let rest = spans.span(spans.span_of(pending, class_of(&spans, 1)).unwrap());
    assert_eq!(rest.end, lexer.walk(lexer.start(), arrow));
    let going_on = point(&spans, span.end, None);
    assert_eq!(spans.span_of(going_on, class_of(&spans, 1)), None);
    // `é€` is one VAL lexeme: no fork once the character is complete.
    let span = spans.span(spans.span_of(start, class_of(&spans, 7)).unwrap());
    assert!(span.emitted.is_empty() && span.forks.is_empty());
    // After `é` was handed over inhibited, E2 leaves the pending state.
    let inhibited = point(&spans, lexer.start(), Some(e));
    let lead = spans.span(spans.span_of(inhibited, class_of(&spans, 9)).unwrap());
    assert_eq!(lead.end, fork.state);
    assert_eq!(spans.span_of(inhibited, class_of(&spans, 10)), None);
}

/// SynCode's `_NL` shape: `NL` loops around a lazy `#{…}#` comment, so after `\n` the branch
/// that handed `NL` over reads `#`, `{`, a word… in guarded pending states while the comment
/// is undecided; and a vocabulary whose tokens read it several ways: 0 `"\n#{a"`, 1 `"}"`,
/// 2 `"#"`, 3 `"}#"`, 4 `"\n"`, 5 `"a}b"`.
fn lazy_comment() -> (Lexer, Vocabulary) {
    let terms: Vec<(String, bool, i32, bool)> = [
        ("\n(?:\n|#\\{(?:.|\n)*?\\}#)*", false),
        ("#", true),
        ("\\{", true),
        ("\\}", true),
        ("[a-z]+", false),
    ]
    .iter()
    .map(|&(p, l)| (p.to_string(), l, 0, false))
    .collect();
    let lexer = lexer_with(&terms, true);
    let vocab = vocab_of(&[b"\n#{a", b"}", b"#", b"}#", b"\n", b"a}b"]);
    (lexer, vocab)
}

#[test]
fn readings_of_a_lexer_that_goes_back_to_lazy_matches() {
    let (lexer, vocab) = lazy_comment();
    assert!(lexer.backtracks());
    let spans = build(&lexer, &vocab);
    check(&lexer, &vocab, &spans);
    let start = point(&spans, lexer.start(), None);
    // "\n#{a": the comment going on, or `NL # {` emitted and a word open.
    let span = spans.span(spans.span_of(start, class_of(&spans, 0)).unwrap());
    assert!(span.emitted.is_empty());
    assert_eq!(span.end, lexer.walk(lexer.start(), b"\n#{a"));
    let [fork] = span.forks else {
        panic!("one other reading: {:?}", span.forks);
    };
    let names: Vec<&[TerminalId]> = fork.lexemes.iter().map(|&e| lexer.accepted(e)).collect();
    let t = TerminalId::from;
    assert_eq!(names, [&[t(0)][..], &[t(1)], &[t(2)]]);
    assert_eq!(lexer.accepted(fork.state), [t(4)]);
    assert!(
        lexer.inhibits(fork.state),
        "a guarded word is handed over inhibited"
    );
    // From the guarded word, "}#" ends the comment: the guarded branch dies, so the token
    // emits the word and `}` and is dead... only on that reading; from the comment's state it
    // closes the comment.
    let guarded = point(&spans, fork.state, None);
    assert_eq!(spans.span_of(guarded, class_of(&spans, 3)), None);
    let comment = point(&spans, span.end, None);
    let closed = spans.span(spans.span_of(comment, class_of(&spans, 3)).unwrap());
    assert!(closed.emitted.is_empty() && closed.forks.is_empty());
    assert_eq!(closed.end, lexer.walk(lexer.start(), b"\n#{a}#"));
    // "a}b" from the guarded `{`: the word and `}` are emitted and `b` is open, all guarded
    // (the comment's reading is the guard inside these states, not a reading of this point).
    let hash = lexer.next_inhibited(lexer.walk(lexer.start(), b"\n"), b'#');
    let brace = lexer.next_inhibited(hash, b'{');
    assert!(lexer.inhibits(brace));
    let after_brace = point(&spans, lexer.start(), Some(brace));
    let span = spans.span(spans.span_of(after_brace, class_of(&spans, 5)).unwrap());
    assert_eq!(span.emitted.len(), 2);
    assert!(span.forks.is_empty());
}

#[test]
fn special_tokens_have_no_class_and_expand_clears_them() {
    let lexer = lexer_of(SMALL);
    let tokens = vec![
        Some(b"a".to_vec()),
        None,
        Some(b"b".to_vec()),
        Some(b" ".to_vec()),
        None,
    ];
    let vocab = Vocabulary::from_token_bytes(tokens, vec![TokenId::from(4)]).unwrap();
    let spans = build(&lexer, &vocab);
    let classes = check(&lexer, &vocab, &spans);
    assert_eq!(classes, [vec![0, 2], vec![3]]);
    let all = ClassSet::full(spans.classes().len());
    check_expand(&spans, &all, &mut ExpandCache::new());
    let mut words = vec![u32::MAX; 1];
    spans.classes().expand(&all, &mut words);
    assert_eq!(words, [0b1101]);
}

#[test]
fn empty_vocabulary_and_lexer_without_tokens() {
    let lexer = lexer_of(SMALL);
    let vocab = Vocabulary::from_token_bytes(vec![None], vec![TokenId::from(0)]).unwrap();
    let spans = build(&lexer, &vocab);
    assert_eq!(spans.classes().len(), 0);
    assert_eq!(spans.span_len(), 0);
    let mut words = vec![7u32];
    spans.classes().expand(&ClassSet::new(0), &mut words);
    assert_eq!(words, [0]);
}

#[test]
fn expand_of_many_sets_over_a_larger_vocabulary() {
    let lexer = lexer_of(SMALL);
    // 300 tokens over a few shapes, so that classes have members in many words.
    let shapes: [&[u8]; 7] = [b"ab", b" x", b"=", b"==", b"12", b"if", b"a ="];
    let tokens: Vec<Vec<u8>> = (0..300)
        .map(|i| {
            let mut t = shapes[(i * 7 + i / 5) % shapes.len()].to_vec();
            t.resize(t.len() + i % 3, b'z');
            t
        })
        .collect();
    let refs: Vec<&[u8]> = tokens.iter().map(|t| &t[..]).collect();
    let vocab = vocab_of(&refs);
    let spans = build(&lexer, &vocab);
    check(&lexer, &vocab, &spans);
    let n = spans.classes().len();
    assert!(n > 3);
    // A small cache, so that entries are replaced and sets are met again.
    let mut cache = ExpandCache::with_capacity(3);
    for mask in (0u32..(1 << n.min(10))).chain((0..64).map(|i| (i * 37) % 11)) {
        let mut set = ClassSet::new(n);
        for c in 0..n.min(10) {
            if mask & (1 << c) != 0 {
                set.insert(ClassId::from_usize(c));
            }
        }
        check_expand(&spans, &set, &mut cache);
    }
}

/// The lexer steps that fill the forks' rows (a token's several readings) have a budget of
/// their own: a lexer whose readings multiply with every byte stops there, not after minutes.
#[test]
fn fork_work_is_a_budget_of_its_own() {
    let (lexer, vocab) = lazy_comment();
    let tight = SpansConfig {
        max_fork_work: 1,
        ..SpansConfig::default()
    };
    let e = TokenSpans::build(&lexer, &vocab, &tight).unwrap_err();
    assert_eq!(e.budget(), SpansBudget::ForkWork);
    assert!(e.to_string().contains("max_fork_work"), "{e}");
    let e = TokenClasses::build(&lexer, &vocab, &tight).unwrap_err();
    assert_eq!(e.budget(), SpansBudget::ForkWork);
    // The default leaves such a lexer room.
    assert!(TokenSpans::build(&lexer, &vocab, &SpansConfig::default()).is_ok());
}

#[test]
fn budgets_are_typed_errors() {
    let lexer = lexer_of(SMALL);
    let vocab = vocab_of(&[b"a", b"1", b"=", b" ", b"if"]);
    let err = |config: SpansConfig| TokenSpans::build(&lexer, &vocab, &config).unwrap_err();
    let e = err(SpansConfig {
        max_classes: 2,
        ..SpansConfig::default()
    });
    assert_eq!(e.budget(), SpansBudget::Classes);
    assert_eq!(e.limit(), 2);
    assert!(e.to_string().contains("max_classes"), "{e}");
    let e = err(SpansConfig {
        max_spans: 3,
        ..SpansConfig::default()
    });
    assert_eq!(e.budget(), SpansBudget::Spans);
    let e = err(SpansConfig {
        max_work: 10,
        ..SpansConfig::default()
    });
    assert_eq!(e.budget(), SpansBudget::Work);
    assert!(e.to_string().contains("max_work"), "{e}");
    // Every table is charged: one thread makes the most held at once exact, so the build
    // fits a budget of exactly that and no less.
    let one_thread = |max_bytes| SpansConfig {
        max_bytes,
        threads: 1,
        ..SpansConfig::default()
    };
    let needed = TokenSpans::build(&lexer, &vocab, &one_thread(usize::MAX))
        .unwrap()
        .build_bytes();
    let spans = TokenSpans::build(&lexer, &vocab, &one_thread(needed)).unwrap();
    assert_eq!(spans.build_bytes(), needed);
    assert!(spans.heap_bytes() <= needed);
    let e = err(one_thread(needed - 1));
    assert_eq!(e.budget(), SpansBudget::Bytes);
    assert_eq!(e.limit(), needed as u64 - 1);
    assert!(e.to_string().contains("max_bytes"), "{e}");
}

#[test]
fn a_point_spanners_span_table_refuses_past_its_budget_and_stays_whole() {
    let lexer = lexer_of(SMALL);
    let vocab = Arc::new(vocab_of(&[b"a", b"1", b"=", b" ", b"if", b"a=", b"1 "]));
    let spans = build(&lexer, &vocab);
    let total = spans.span_len();
    let config = SpansConfig {
        max_spans: total - 1,
        ..SpansConfig::default()
    };
    let spanner = PointSpanner::new(&lexer, Arc::clone(&vocab), &config, &|t| t.as_u32()).unwrap();
    let mut ids = spanner.span_ids();
    let mut of = Vec::new();
    let mut refused = None;
    for &at in spans.points().iter().chain(spans.points()) {
        match spanner.walk(at, &mut ids, &mut of) {
            Ok(walked) => assert!(walked),
            Err(e) => refused = Some(e),
        }
        // Every id handed out names a span in the table, refused or not.
        assert!(ids.span_len() < total);
        for s in of.iter().flatten() {
            assert!(s.as_usize() < ids.span_len());
            let _ = ids.span(*s);
        }
    }
    assert_eq!(refused.map(|e| e.budget()), Some(SpansBudget::Spans));
}

#[test]
fn more_points_than_one_block() {
    // A keyword list makes many lexer states: more than one block of points.
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec",
    ];
    let mut terms: Vec<(String, bool, i32, bool)> = words
        .iter()
        .map(|w| (w.to_string(), true, 0, false))
        .collect();
    terms.push(("[a-z]+".to_string(), false, 0, false));
    terms.push((" ".to_string(), false, 0, true));
    let lexer = lexer(&terms);
    assert!(lexer.state_len() > munch_tokens::BLOCK + 1);
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    for w in words {
        for cut in 1..=w.len() {
            tokens.push(w.as_bytes()[..cut].to_vec());
            tokens.push(format!(" {}", &w[cut - 1..]).into_bytes());
        }
    }
    let refs: Vec<&[u8]> = tokens.iter().map(|t| &t[..]).collect();
    let vocab = vocab_of(&refs);
    let spans = build(&lexer, &vocab);
    check(&lexer, &vocab, &spans);
    // The same tables whatever the number of threads.
    for threads in [1, 3] {
        let config = SpansConfig {
            threads,
            ..SpansConfig::default()
        };
        let other = TokenSpans::build(&lexer, &vocab, &config).unwrap();
        let n = spans.classes().len();
        assert_eq!(other.classes().len(), n);
        assert_eq!(other.span_len(), spans.span_len());
        for t in 0..vocab.len() {
            let t = TokenId::from_usize(t);
            assert_eq!(other.classes().class_of(t), spans.classes().class_of(t));
        }
        for s in 0..spans.span_len() {
            let s = munch_tokens::SpanId::from_usize(s);
            assert_eq!(other.span(s), spans.span(s));
        }
        for p in 0..spans.points().len() {
            let p = PointId::from_usize(p);
            for c in 0..n {
                let c = ClassId::from_usize(c);
                assert_eq!(other.span_of(p, c), spans.span_of(p, c));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random lexers and vocabularies.

fn config(cases: u32) -> ProptestConfig {
    munch_testkit::props::seeded(cases, SEED)
}

/// Pattern atoms over a few ASCII characters, `é` and `ü` (which share their lead byte),
/// including negated classes and `.` (which take multi-byte characters byte by byte).
fn any_pattern() -> impl Strategy<Value = String> {
    let atom = prop::sample::select(vec![
        "a", "b", "c", " ", "é", "[ab]", "[^a]", ".", "[a-c é]", "\"", "[^é]", "ü",
    ])
    .prop_map(str::to_string);
    atom.prop_recursive(3, 10, 3, |inner| {
        prop_oneof![
            3 => prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.concat()),
            2 => prop::collection::vec(inner.clone(), 2..3)
                .prop_map(|v| format!("(?:{})", v.join("|"))),
            2 => (inner, prop::sample::select(vec!["*", "+", "?", "*?", "+?", "{1,2}"]))
                .prop_map(|(p, op)| format!("(?:{p}){op}")),
        ]
    })
}

fn any_terms() -> impl Strategy<Value = Vec<(String, bool, i32, bool)>> {
    let literal = prop::collection::vec(prop::sample::select(vec!["a", "b", "é", " "]), 1..4)
        .prop_map(|v| (v.concat(), true));
    let term = (
        prop_oneof![literal, any_pattern().prop_map(|p| (p, false))],
        prop_oneof![3 => Just(0), 1 => -1..=1i32],
        prop::bool::weighted(0.2),
    )
        .prop_map(|((p, l), pr, ig)| (p, l, pr, ig));
    prop::collection::vec(term, 1..5).prop_map(|terms| {
        // The lexer refuses patterns that match the empty string; drop them.
        terms
            .into_iter()
            .filter(|(p, ..)| {
                !regex::Regex::new(&format!("^(?:{p})$"))
                    .unwrap()
                    .is_match("")
            })
            .collect()
    })
}

const PIECES: &[&[u8]] = &[
    b"a",
    b"b",
    b"c",
    b" ",
    b"\"",
    b"x",
    b"\xC3",
    b"\xA9",
    "é".as_bytes(),
    "ü".as_bytes(),
    b"\xBC",
    b"\xFF",
];

fn any_vocab() -> impl Strategy<Value = Vec<Option<Vec<u8>>>> {
    let token = prop::collection::vec(prop::sample::select(PIECES), 1..5).prop_map(|p| p.concat());
    prop::collection::vec(prop::option::weighted(0.95, token), 1..60)
}

proptest! {
    #![proptest_config(config(200))]

    /// Every table equals the direct simulation, classes are exact, and `expand` is exact.
    #[test]
    fn spans_equal_a_direct_simulation(
        terms in any_terms(),
        tokens in any_vocab(),
        picks in prop::collection::vec(any::<u64>(), 4),
        backtrack_lazy in any::<bool>(),
    ) {
        prop_assume!(!terms.is_empty());
        let lexer = lexer_with(&terms, backtrack_lazy);
        let vocab = Vocabulary::from_token_bytes(tokens, vec![]).unwrap();
        let spans = build(&lexer, &vocab);
        check(&lexer, &vocab, &spans);
        let n = spans.classes().len();
        let mut cache = ExpandCache::with_capacity(2);
        // Each set twice, so that the cache's exact and nearest paths both run.
        for bits in picks.iter().chain(&picks).copied() {
            let mut set = ClassSet::new(n);
            for c in 0..n {
                if bits.rotate_left(c as u32) & 1 == 1 {
                    set.insert(ClassId::from_usize(c));
                }
            }
            check_expand(&spans, &set, &mut cache);
        }
    }
}

/// Every token's span from every point, as a point spanner computes it (one point at a
/// time) and as the whole build does, `key` naming the lexemes in both.
fn check_point_spanner(
    lexer: &Lexer,
    vocab: &Vocabulary,
    key: &(dyn Fn(TerminalId) -> u32 + Sync),
) {
    let config = SpansConfig::default();
    let all = TokenSpans::build_keyed(lexer, vocab, &config, key).unwrap();
    let spanner = PointSpanner::new(lexer, Arc::new(vocab.clone()), &config, key).unwrap();
    assert_eq!(TokenSpans::lexer_points(lexer), all.points());
    // Token `t`'s span from `at` in the whole build.
    let whole = |at: LexPoint, t: TokenId| {
        let p = all.point(at).unwrap();
        all.classes()
            .class_of(t)
            .and_then(|c| all.span_of(p, c))
            .map(|s| all.span(s))
    };
    for &at in all.points() {
        let one = spanner.spans_at(at).unwrap().expect("a point of the lexer");
        for t in 0..vocab.len() {
            let t = TokenId::from_usize(t);
            let alone = one.span_of(t).map(|s| one.span(s));
            assert_eq!(whole(at, t), alone, "token {t:?} from {at:?}");
        }
    }
    // One table of spans across every point: the same spans, and one id per span content
    // (walked twice, so that the second walk meets only known spans).
    let mut ids = spanner.span_ids();
    let mut of = Vec::new();
    let mut id_of: HashMap<String, SpanId> = HashMap::new();
    for &at in all.points().iter().chain(all.points()) {
        assert!(spanner.walk(at, &mut ids, &mut of).unwrap());
        for t in 0..vocab.len() {
            let t = TokenId::from_usize(t);
            let shared = of[t.as_usize()];
            assert_eq!(
                whole(at, t),
                shared.map(|s| ids.span(s)),
                "token {t:?} from {at:?}"
            );
            if let Some(s) = shared {
                let id = *id_of.entry(format!("{:?}", ids.span(s))).or_insert(s);
                assert_eq!(id, s, "one span, two ids");
            }
        }
    }
    assert_eq!(ids.span_len(), id_of.len());
    // A point the lexer does not have: none.
    let dead = LexPoint {
        state: lexer.dead(),
        inhibitor: None,
    };
    assert!(spanner.spans_at(dead).unwrap().is_none());
    assert!(!spanner.walk(dead, &mut ids, &mut of).unwrap());
    assert!(of.is_empty());
}

proptest! {
    #![proptest_config(config(100))]

    /// A point spanner's spans are the whole build's, point by point.
    #[test]
    fn a_point_spanner_computes_the_spans_of_the_whole_build(
        terms in any_terms(),
        tokens in any_vocab(),
        backtrack_lazy in any::<bool>(),
        merge in any::<bool>(),
    ) {
        prop_assume!(!terms.is_empty());
        let lexer = lexer_with(&terms, backtrack_lazy);
        let vocab = Vocabulary::from_token_bytes(tokens, vec![]).unwrap();
        // Lexemes named by their own terminals, or the first two terminals as one key.
        let key = move |t: TerminalId| if merge && t.as_u32() < 2 { 0 } else { t.as_u32() + 1 };
        check_point_spanner(&lexer, &vocab, &key);
    }
}

#[test]
fn a_point_spanner_on_forks_and_pending_states() {
    // Tokens ending inside a character that may or may not extend the lexeme, and lazy
    // matches read back: the spans with forks.
    let lexer = lexer_of(&[
        ("[a-zé]+", false, 0, false),
        (" ", false, 0, true),
        ("é", true, 0, false),
    ]);
    let e = "é".as_bytes();
    let vocab = vocab_of(&[b"a", &e[..1], &e[1..], e, b"a\xc3", b" a", b"aa "]);
    check_point_spanner(&lexer, &vocab, &|t| t.as_u32());
}

#[test]
fn keyed_lexemes_merge_spans_that_differ_only_in_equal_keys() {
    // Two keywords of one key: after either, a token emits the same lexeme.
    let lexer = lexer_of(&[
        ("k1", true, 0, false),
        ("k2", true, 0, false),
        (" ", false, 0, true),
    ]);
    let vocab = vocab_of(&[b"k1 ", b"k2 ", b" k1", b"k1", b"k2", b" "]);
    let plain = TokenSpans::build(&lexer, &vocab, &SpansConfig::default()).unwrap();
    let key = |t: TerminalId| if t.as_usize() < 2 { 0 } else { 1 + t.as_u32() };
    let keyed = TokenSpans::build_keyed(&lexer, &vocab, &SpansConfig::default(), &key).unwrap();
    assert!(keyed.span_len() < plain.span_len());
    // "k1 " and "k2 " from the start: one emitted lexeme of the shared key, the same end.
    let start = point(&keyed, lexer.start(), None);
    let span = |t: usize| {
        let c = keyed.classes().class_of(TokenId::from_usize(t)).unwrap();
        keyed.span_of(start, c).unwrap()
    };
    assert_eq!(span(0), span(1));
    let emitted = keyed.span(span(0)).emitted;
    assert_eq!(emitted.len(), 1);
    let accepted: Vec<usize> = lexer
        .accepted(emitted[0])
        .iter()
        .map(|t| t.as_usize())
        .collect();
    assert!(accepted == [0] || accepted == [1], "{accepted:?}");
    // Each emitted lexeme is named by a state whose terminals have the lexeme's keys.
    for s in 0..keyed.span_len() {
        for &e in keyed.span(munch_tokens::SpanId::from_usize(s)).emitted {
            assert!(!lexer.accepted(e).is_empty());
        }
    }
}
