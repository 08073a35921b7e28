//! The front door as an engine uses it: `Compiled` and `Matcher` on small synthetic
//! vocabularies, every masker of the build against the oracle, and a property test that draft
//! validation, rollback, fork and the batch calls agree with plain sequential accepts.

use std::sync::Arc;

use munch::{
    batch, CompileErrorKind, Compiled, Config, Grammar, MaskerKind, Matcher, MatcherErrorKind,
    TokenId, TokenMask, Vocabulary,
};
use munch_testkit::vocab::{every_byte, with_eos};
use proptest::prelude::*;

/// Every byte, a few JSON words, a special token (`<pad>`-like, id 266) and EOS (the last id).
fn vocab() -> Arc<Vocabulary> {
    let words = [
        "{\"", "\": ", "true", "null", ", ", "[1", "\"}", "ab", "{}", "]}",
    ];
    let mut tokens = every_byte();
    tokens.extend(words.map(|t| Some(t.as_bytes().to_vec())));
    tokens.push(None);
    with_eos(tokens)
}

const PAD: u32 = 266;
const EOS: u32 = 267;

fn tok(s: &str) -> u32 {
    let v = vocab();
    (0..v.len() as u32)
        .rev()
        .find(|&t| v.token_bytes(TokenId::from(t)) == Some(s.as_bytes()))
        .unwrap()
}

fn compile(grammar: &Grammar, kind: MaskerKind) -> Compiled {
    let config = Config::new().masker(kind).fallback(None);
    Compiled::new(grammar, vocab(), &config).unwrap()
}

fn json() -> Grammar {
    Grammar::builtin("json").unwrap()
}

fn allowed(mask: &TokenMask) -> Vec<u32> {
    mask.iter().map(|t| t.as_u32()).collect()
}

#[test]
fn every_masker_fills_rows_as_the_oracle_and_pads_with_zeros() {
    let oracle = compile(&json(), MaskerKind::Oracle);
    let text = ["{\"", "a", "\": ", "[1", ", ", "true", "]}"];
    for &kind in MaskerKind::ALL {
        let compiled = compile(&json(), kind);
        assert_eq!(compiled.masker_kind(), kind);
        let words = compiled.bitmask_words();
        assert_eq!(words, 268usize.div_ceil(32));
        let mut matcher = compiled.matcher();
        let mut reference = oracle.matcher();
        // A model's logits padded past the tokenizer: three more words, dirty.
        let mut row = vec![u32::MAX; words + 3];
        for step in 0..=text.len() {
            matcher.fill_next_token_bitmask(&mut row).unwrap();
            let expected = reference.next_token_mask();
            assert_eq!(&row[..words], expected.words(), "{kind} at step {step}");
            assert_eq!(&row[words..], &[0, 0, 0], "{kind}: padding words");
            if let Some(t) = text.get(step) {
                matcher.accept_token(tok(t)).unwrap();
                reference.accept_token(tok(t)).unwrap();
            }
        }
        assert!(matcher.is_accepting());
        let mut short = vec![0; words - 1];
        let err = matcher.fill_next_token_bitmask(&mut short).unwrap_err();
        assert_eq!(
            err.kind(),
            &MatcherErrorKind::BitmaskTooShort {
                words: words - 1,
                needed: words
            }
        );
    }
}

#[test]
fn matchers_after_dropped_ones_mask_as_the_oracle() {
    // A new matcher takes the cache a dropped one left (what that cache remembers of the first
    // text must not leak into the masks of the next).
    let oracle = compile(&json(), MaskerKind::Oracle);
    let texts: [&[&str]; 3] = [
        &["{\"", "a", "\": ", "[1", ", ", "true", "]}"],
        &["{\"", "ab", "\": ", "null", "}"],
        &["[1", ", ", "{}", "]"],
    ];
    for &kind in MaskerKind::ALL {
        let compiled = compile(&json(), kind);
        for round in 0..2 {
            for text in texts {
                let mut matcher = compiled.matcher();
                let mut reference = oracle.matcher();
                for step in 0..=text.len() {
                    let (got, expected) = (matcher.next_token_mask(), reference.next_token_mask());
                    assert_eq!(
                        allowed(&got),
                        allowed(&expected),
                        "{kind}, round {round}, {text:?} at step {step}"
                    );
                    if let Some(t) = text.get(step) {
                        matcher.accept_token(tok(t)).unwrap();
                        reference.accept_token(tok(t)).unwrap();
                    }
                }
            }
        }
    }
}

#[test]
fn a_lazy_trie_builds_no_classes_and_masks_alike() {
    let config = |lazy| {
        Config::new()
            .masker(MaskerKind::Trie)
            .lazy(lazy)
            .fallback(None)
    };
    let eager = Compiled::new(&json(), vocab(), &config(false)).unwrap();
    let lazy = Compiled::new(&json(), vocab(), &config(true)).unwrap();
    assert!(eager.stats().masker["token_classes"].as_u64().is_some());
    assert!(lazy.stats().masker["token_classes"].is_null());
    let (mut a, mut b) = (eager.matcher(), lazy.matcher());
    for (step, t) in ["{\"", "ab", "\": ", "[1", ", ", "null", "]}"]
        .iter()
        .enumerate()
    {
        assert_eq!(
            allowed(&a.next_token_mask()),
            allowed(&b.next_token_mask()),
            "step {step}"
        );
        a.accept_token(tok(t)).unwrap();
        b.accept_token(tok(t)).unwrap();
    }
    assert_eq!(allowed(&a.next_token_mask()), allowed(&b.next_token_mask()));
}

#[test]
fn refused_calls_say_why_and_change_nothing() {
    let compiled = compile(&json(), MaskerKind::cheapest());
    let mut m = compiled.matcher();
    m.accept_token(tok("{\"")).unwrap();
    let before = m.next_token_mask();
    let cases = [
        (100_000, "out of range"),
        (PAD, "special token"),
        (EOS, "not a sentence"),
        // A control character cannot be inside a string.
        (1, "not allowed"),
    ];
    for (token, said) in cases {
        let err = m.accept_token(token).unwrap_err();
        assert!(err.to_string().contains(said), "{token}: {err}");
        assert_eq!(m.accepted_len(), 1);
        assert_eq!(
            m.next_token_mask(),
            before,
            "refusing {token} changed the matcher"
        );
    }
    assert!(matches!(
        m.accept_token(100_000).unwrap_err().kind(),
        MatcherErrorKind::UnknownToken {
            token: 100_000,
            vocab_len: 268
        }
    ));
    assert!(matches!(
        m.accept_token(PAD).unwrap_err().kind(),
        MatcherErrorKind::SpecialToken(_)
    ));
    // accept_tokens is all or nothing.
    let err = m
        .accept_tokens(&[u32::from(b'k'), tok("\": "), u32::from(b'x')])
        .unwrap_err();
    assert!(matches!(err.kind(), MatcherErrorKind::Rejected { .. }));
    assert_eq!(m.accepted_len(), 1);
    assert!(m.accept_bytes(b"k\": nul").is_ok());
    assert!(m.accept_string("!").is_err());
    assert_eq!(m.accepted_len(), 2);
    let err = m.rollback(3).unwrap_err();
    assert_eq!(
        err.kind(),
        &MatcherErrorKind::RollbackTooFar {
            requested: 3,
            available: 2
        }
    );
}

#[test]
fn rollback_reaches_back_max_rollback_steps() {
    let config = Config::new()
        .masker(MaskerKind::cheapest())
        .fallback(None)
        .max_rollback(4);
    assert_eq!(config.get_max_rollback(), 4);
    let compiled = Compiled::new(&json(), vocab(), &config).unwrap();
    let mut m = compiled.matcher();
    m.accept_token(u32::from(b'[')).unwrap();
    for _ in 0..100 {
        m.accept_tokens(&[u32::from(b'1'), tok(", ")]).unwrap();
    }
    assert_eq!(m.accepted_len(), 201);
    // The last 4 steps at least can be undone, exactly.
    let mut back = m.fork();
    back.rollback(4).unwrap();
    assert_eq!(back.accepted_len(), 197);
    back.accept_tokens(&[u32::from(b'1'), u32::from(b']')])
        .unwrap();
    assert!(back.is_accepting());
    // Further back than the parser keeps: an error naming the budget, the matcher unchanged.
    let err = m.rollback(100).unwrap_err();
    match err.kind() {
        MatcherErrorKind::RollbackPastLimit {
            requested: 100,
            available,
            limit: 4,
        } => assert!((4..=8).contains(available), "{available}"),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("max_rollback"), "{err}");
    assert_eq!(m.accepted_len(), 201);
    // Further back than the text: the same error as without a limit.
    assert!(matches!(
        m.rollback(202).unwrap_err().kind(),
        MatcherErrorKind::RollbackTooFar { .. }
    ));
}

#[test]
fn a_stop_token_terminates_and_rolls_back() {
    let compiled = compile(&json(), MaskerKind::cheapest());
    let mut m = compiled.matcher();
    m.accept_tokens(&[tok("{}")]).unwrap();
    assert!(m.is_accepting() && !m.is_terminated());
    m.accept_token(EOS).unwrap();
    assert!(m.is_terminated());
    // Only the stop tokens, and only rollback and reset from now on.
    assert_eq!(allowed(&m.next_token_mask()), vec![EOS]);
    assert_eq!(
        m.accept_token(u32::from(b' ')).unwrap_err().kind(),
        &MatcherErrorKind::Terminated
    );
    assert!(m.accept_bytes(b" ").is_err());
    assert_eq!(m.validate_tokens(&[u32::from(b' ')]), 0);
    assert!(m.forced_bytes().is_empty());
    assert_eq!(m.accepted_len(), 2);
    m.rollback(1).unwrap();
    assert!(!m.is_terminated() && m.is_accepting());
    m.accept_token(u32::from(b' ')).unwrap();
    m.reset();
    assert_eq!(m.accepted_len(), 0);
    assert!(!m.is_accepting());
}

#[test]
fn the_engine_chooses_the_stop_tokens() {
    let compiled = compile(&json(), MaskerKind::cheapest());
    // `<pad>` and `!` stop instead of EOS; EOS is never allowed then, `!` never read as text.
    let bang = u32::from(b'!');
    let mut m = Matcher::with_stop_tokens(&compiled, &[PAD, bang, PAD]).unwrap();
    assert_eq!(
        m.stop_tokens().collect::<Vec<_>>(),
        vec![u32::from(b'!'), PAD]
    );
    m.accept_token(tok("[1")).unwrap();
    let mask = m.next_token_mask();
    assert!(!mask.contains(TokenId::from(PAD)) && !mask.contains(TokenId::from(EOS)));
    m.accept_token(u32::from(b']')).unwrap();
    let mask = m.next_token_mask();
    assert!(mask.contains(TokenId::from(PAD)) && mask.contains(TokenId::from(bang)));
    assert!(!mask.contains(TokenId::from(EOS)));
    assert!(matches!(
        m.accept_token(EOS).unwrap_err().kind(),
        MatcherErrorKind::SpecialToken(_)
    ));
    assert_eq!(m.validate_tokens(&[bang, u32::from(b' ')]), 1);
    m.accept_token(bang).unwrap();
    assert!(m.is_terminated());
    assert!(Matcher::with_stop_tokens(&compiled, &[9999]).is_err());
    // No stop token at all: the text never ends.
    let mut endless = Matcher::with_stop_tokens(&compiled, &[]).unwrap();
    endless.accept_token(tok("{}")).unwrap();
    assert!(endless.is_accepting());
    assert_eq!(
        endless.next_token_mask().iter().count(),
        4,
        "only whitespace"
    );
}

#[test]
fn forced_bytes_are_what_every_continuation_starts_with() {
    let g = Grammar::lark(
        "start: \"{\" \"\\\"name\\\"\" \":\" NAME \"}\"\nNAME: /[a-z]+/\n%ignore \" \"\n",
    );
    let compiled = compile(&g, MaskerKind::cheapest());
    let mut m = compiled.matcher();
    // `{` may be followed by spaces, so nothing is forced at the start.
    assert_eq!(m.forced_bytes(), b"");
    m.accept_bytes(b"{").unwrap();
    assert_eq!(m.forced_bytes(), b"");
    m.accept_bytes(b"\"").unwrap();
    assert_eq!(m.forced_bytes(), b"name\"");
    assert_eq!(m.forced_string(), "name\"");
    m.accept_bytes(b"name\": ab").unwrap();
    // Inside NAME, another letter, a space or `}` may come.
    assert_eq!(m.forced_bytes(), b"");
    // A forced string stops before an incomplete character.
    let g = Grammar::lark("start: \"λx\" | \"λy\"\n");
    let m = compile(&g, MaskerKind::cheapest()).matcher();
    assert_eq!(m.forced_bytes(), "λ".as_bytes());
    let g = Grammar::lark("start: \"aλ\" | \"aν\"\n");
    let m = compile(&g, MaskerKind::cheapest()).matcher();
    // λ and ν share their first byte.
    assert_eq!(m.forced_bytes(), b"a\xce");
    assert_eq!(m.forced_string(), "a");
}

#[test]
fn a_failed_build_falls_back_and_says_why() {
    let table_maskers: Vec<MaskerKind> = MaskerKind::ALL
        .iter()
        .copied()
        .filter(|&k| k != MaskerKind::cheapest() && k != MaskerKind::Oracle)
        .collect();
    for kind in table_maskers {
        let tiny = Config::new().masker(kind).max_memory(Some(1));
        let err = Compiled::new(&json(), vocab(), &tiny.clone().fallback(None)).unwrap_err();
        assert!(
            matches!(err.kind(), CompileErrorKind::Build { masker, .. } if *masker == kind),
            "{err}"
        );
        // The token spans every table masker builds first are held to its budget too: the
        // error names the masker's budget.
        let budget = match kind.to_string().as_str() {
            "wda" => "max_memory",
            "spanner" => "max_table_bytes",
            _ => "max_bytes",
        };
        assert!(err.to_string().contains(budget), "{err}");
        let compiled = Compiled::new(
            &json(),
            vocab(),
            &tiny.fallback(Some(MaskerKind::cheapest())),
        )
        .unwrap();
        assert_eq!(compiled.masker_kind(), MaskerKind::cheapest());
        let fell = compiled.fell_back().expect("the fallback is reported");
        assert_eq!((fell.wanted, fell.used), (kind, MaskerKind::cheapest()));
        let said = fell.to_string();
        assert!(
            said.contains("could not be built") && said.contains("instead"),
            "{said}"
        );
    }
    let ok = compile(&json(), MaskerKind::best());
    assert!(ok.fell_back().is_none());
    // The on-demand wda too: the spans' build first, then its tables and cache as a whole.
    let lazy = Config::new()
        .masker(MaskerKind::Wda)
        .lazy(true)
        .fallback(None);
    let err = Compiled::new(&json(), vocab(), &lazy.clone().max_memory(Some(1))).unwrap_err();
    assert!(err.to_string().contains("max_memory"), "{err}");
    let budget = 20 << 20;
    let compiled = Compiled::new(&json(), vocab(), &lazy.max_memory(Some(budget))).unwrap();
    let stats = &compiled.stats().masker;
    let (tables, capacity) = (
        stats["table_bytes"].as_u64(),
        stats["cache_capacity"].as_u64(),
    );
    assert_eq!(
        capacity,
        tables.map(|t| (budget as u64 - t) / 2),
        "{stats:?}"
    );
}

#[test]
fn names_and_grammar_errors_are_typed() {
    assert!(matches!(
        "nope".parse::<MaskerKind>().unwrap_err().kind(),
        CompileErrorKind::UnknownMasker(_)
    ));
    for &kind in MaskerKind::ALL {
        assert_eq!(kind.name().parse::<MaskerKind>().unwrap(), kind);
    }
    let err = Compiled::new(
        &Grammar::lark("start: \"a\" (\n").with_name("bad.lark"),
        vocab(),
        &Config::new(),
    )
    .unwrap_err();
    assert!(matches!(err.kind(), CompileErrorKind::Grammar(_)));
    assert!(err.to_string().starts_with("bad.lark:1:"), "{err}");
}

#[cfg(feature = "wda")]
#[test]
fn artifacts_round_trip_and_refuse_another_vocabulary() {
    let compiled = compile(&json(), MaskerKind::Wda);
    let mut bytes = Vec::new();
    compiled.save(&mut bytes).unwrap();
    let loaded = Compiled::load(
        &json(),
        vocab(),
        MaskerKind::Wda,
        &mut bytes.as_slice(),
        &Config::new(),
    )
    .unwrap();
    let (mut a, mut b) = (compiled.matcher(), loaded.matcher());
    for t in ["{\"", "a", "\": ", "null"] {
        assert_eq!(a.next_token_mask(), b.next_token_mask());
        a.accept_token(tok(t)).unwrap();
        b.accept_token(tok(t)).unwrap();
    }
    let other = munch_testkit::vocab::bytes();
    let err = Compiled::load(
        &json(),
        other,
        MaskerKind::Wda,
        &mut bytes.as_slice(),
        &Config::new(),
    )
    .unwrap_err();
    assert!(matches!(err.kind(), CompileErrorKind::Artifact(_)), "{err}");
    let trie = compile(&json(), MaskerKind::cheapest());
    if !MaskerKind::cheapest().has_artifact() {
        assert!(matches!(
            trie.save(&mut Vec::new()).unwrap_err().kind(),
            CompileErrorKind::NoArtifact(_)
        ));
    }
}

#[test]
fn batch_shapes_are_checked() {
    let compiled = compile(&json(), MaskerKind::cheapest());
    let words = compiled.bitmask_words();
    let mut ms: Vec<Matcher> = (0..3).map(|_| compiled.matcher()).collect();
    let mut bitmask = vec![0u32; 4 * words];
    let twice = batch::fill_next_token_bitmask(&mut ms, &mut bitmask, words, Some(&[0, 2, 0]));
    assert!(twice.unwrap_err().to_string().contains("named twice"));
    let out = batch::fill_next_token_bitmask(&mut ms, &mut bitmask, words, Some(&[0, 4, 1]));
    assert!(out.unwrap_err().to_string().contains("out of range"));
    let ragged = batch::fill_next_token_bitmask(&mut ms, &mut bitmask[1..], words, None);
    assert!(ragged.is_err());
    assert!(batch::accept_token(&mut ms, &[1, 2]).is_err());
    // Rows not named are left as they are.
    bitmask.fill(7);
    batch::fill_next_token_bitmask(&mut ms, &mut bitmask, words, Some(&[3, 0, 2])).unwrap();
    assert!(bitmask[words..2 * words].iter().all(|&w| w == 7));
    assert_eq!(&bitmask[..words], &bitmask[3 * words..]);
}

#[test]
fn compiled_grammars_are_shared_across_threads() {
    let compiled = compile(&json(), MaskerKind::best());
    let masks: Vec<TokenMask> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let c = compiled.clone();
                s.spawn(move || {
                    let mut m = c.matcher();
                    m.accept_token(tok("[1")).unwrap();
                    m.next_token_mask()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(masks[0], masks[1]);
    assert!(masks[0].contains(TokenId::from(u32::from(b']'))));
}

/// One call an engine makes; `pick` chooses among the allowed tokens (or any id, for refusals).
#[derive(Clone, Debug)]
enum Op {
    /// Accept the `pick`-th allowed token (modulo their number).
    Accept(u16),
    /// Accept any id at all (mostly refused).
    AcceptAny(u16),
    /// Validate a draft of allowed picks followed by one arbitrary id.
    Validate(Vec<u16>, u16),
    /// Roll back up to `n` steps.
    Rollback(u8),
    /// Replace the matcher by a fork of itself (the original goes on being checked too).
    Fork,
    /// Back to the start.
    Reset,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<u16>().prop_map(Op::Accept),
        1 => any::<u16>().prop_map(Op::AcceptAny),
        2 => (prop::collection::vec(any::<u16>(), 0..5), any::<u16>())
            .prop_map(|(d, x)| Op::Validate(d, x)),
        2 => any::<u8>().prop_map(|n| Op::Rollback(n % 5)),
        1 => Just(Op::Fork),
        1 => Just(Op::Reset),
    ]
}

fn nth_allowed(mask: &TokenMask, pick: u16) -> Option<u32> {
    let n = mask.count();
    (n > 0).then(|| mask.iter().nth(pick as usize % n).unwrap().as_u32())
}

/// A fresh matcher that accepted `history`.
fn replay(compiled: &Compiled, history: &[u32]) -> Matcher {
    let mut m = compiled.matcher();
    m.accept_tokens(history).unwrap();
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Whatever an engine calls, a matcher is the replay of the tokens it accepted: same mask,
    /// acceptance and termination; drafts validate to what sequential accepts take; a fork and
    /// the batch calls agree with the one-by-one calls.
    #[test]
    fn every_call_agrees_with_replaying_the_accepted_tokens(
        ops in prop::collection::vec(op(), 1..40),
        kind in prop::sample::select(MaskerKind::ALL.to_vec()),
    ) {
        let compiled = compile(&json(), kind);
        let mut m = compiled.matcher();
        let mut history: Vec<u32> = Vec::new();
        let mut others: Vec<(Matcher, Vec<u32>)> = Vec::new();
        for op in ops {
            let mask = m.next_token_mask();
            match op {
                Op::Accept(pick) => {
                    if let Some(t) = nth_allowed(&mask, pick) {
                        // After termination the mask holds the stop tokens, and only rollback
                        // and reset are accepted.
                        let terminated = m.is_terminated();
                        let accepted = m.accept_token(t);
                        prop_assert_eq!(accepted.is_ok(), !terminated, "token {}", t);
                        if accepted.is_ok() {
                            history.push(t);
                        }
                    }
                }
                Op::AcceptAny(id) => {
                    let t = u32::from(id) % 300;
                    let terminated = m.is_terminated();
                    let ok = m.accept_token(t).is_ok();
                    prop_assert_eq!(ok, mask.contains(TokenId::from(t)) && !terminated);
                    if ok {
                        history.push(t);
                    }
                }
                Op::Validate(picks, last) => {
                    // A draft of allowed tokens along a fork, then one arbitrary id.
                    let mut probe = m.fork();
                    let mut draft = Vec::new();
                    for p in picks {
                        if probe.is_terminated() {
                            break;
                        }
                        let Some(t) = nth_allowed(&probe.next_token_mask(), p) else { break };
                        probe.accept_token(t).unwrap();
                        draft.push(t);
                    }
                    let good = draft.len();
                    let extra = u32::from(last) % 300;
                    let extra_ok = probe.accept_token(extra).is_ok();
                    draft.push(extra);
                    let expected = good + usize::from(extra_ok);
                    prop_assert_eq!(m.validate_tokens(&draft), expected);
                    // Validation changed nothing.
                    prop_assert_eq!(m.accepted_len(), history.len());
                }
                Op::Rollback(n) => {
                    let n = usize::from(n);
                    let ok = m.rollback(n).is_ok();
                    prop_assert_eq!(ok, n <= history.len());
                    if ok {
                        history.truncate(history.len() - n);
                    }
                }
                Op::Fork => {
                    let fork = m.fork();
                    others.push((std::mem::replace(&mut m, fork), history.clone()));
                }
                Op::Reset => {
                    m.reset();
                    history.clear();
                }
            }
            let fresh = replay(&compiled, &history);
            let mut fresh = fresh;
            prop_assert_eq!(m.is_terminated(), fresh.is_terminated());
            prop_assert_eq!(m.is_accepting(), fresh.is_accepting());
            prop_assert_eq!(m.next_token_mask(), fresh.next_token_mask());
        }
        // Forks kept their own texts.
        for (other, h) in &mut others {
            prop_assert_eq!(other.next_token_mask(), replay(&compiled, h).next_token_mask());
        }
        // The batch calls on every matcher agree with the one-by-one calls.
        let mut all: Vec<Matcher> = others.into_iter().map(|(o, _)| o).collect();
        all.push(m);
        let words = compiled.bitmask_words();
        let mut bitmask = vec![u32::MAX; all.len() * words];
        let rows: Vec<usize> = (0..all.len()).rev().collect();
        batch::fill_next_token_bitmask(&mut all, &mut bitmask, words, Some(&rows)).unwrap();
        let mut chosen = Vec::new();
        for (i, m) in all.iter_mut().enumerate() {
            let own = m.next_token_mask();
            let row = rows[i];
            prop_assert_eq!(&bitmask[row * words..(row + 1) * words], own.words());
            chosen.push(nth_allowed(&own, i as u16).unwrap_or(0));
        }
        let singles: Vec<bool> = all
            .iter()
            .zip(&chosen)
            .map(|(m, &t)| m.validate_tokens(&[t]) == 1)
            .collect();
        let results = batch::Pool::new(2)
            .unwrap()
            .accept_token(&mut all, &chosen)
            .unwrap();
        let batched: Vec<bool> = results.iter().map(Result::is_ok).collect();
        prop_assert_eq!(batched, singles);
    }
}

/// A keyword that `NAME` also matches is a name where the parser cannot take the keyword (Lark's
/// contextual lexer), unless the grammar asks for reserved literals; every masker follows.
#[test]
fn keywords_are_names_where_the_parser_cannot_take_them_unless_reserved() {
    let source = "start: \"if\" NAME \":\" | NAME \"=\" NAME\nNAME: /[a-z_]+/\n%ignore \" \"\n";
    let parse = |g: &Grammar, text: &str| {
        let parser = g
            .build_parser(&munch::glr::parser::ParserConfig::default())
            .unwrap();
        munch::parse::parse_text(&parser, text.as_bytes()).is_ok()
    };
    let contextual = Grammar::lark(source);
    let reserved = Grammar::lark(source).with_contextual_literals(false);
    for (text, by_context) in [
        ("if x:", true),
        ("x = if", true),
        ("if = x", false),
        ("if if:", true),
    ] {
        assert_eq!(parse(&contextual, text), by_context, "{text:?}");
    }
    assert!(parse(&reserved, "if x:"));
    assert!(!parse(&reserved, "x = if"));
    assert!(!parse(&reserved, "if if:"));
    // After `x = if` the text ends only where `if` reads as a name; `if if` goes on to `:` only
    // then. Every masker says so.
    for kind in [MaskerKind::Trie, MaskerKind::Spanner, MaskerKind::Wda] {
        for (g, contextual) in [(&contextual, true), (&reserved, false)] {
            let compiled = compile(g, kind);
            let mut m = compiled.matcher();
            m.accept_string("x = if").unwrap();
            assert_eq!(m.is_accepting(), contextual, "{kind:?}");
            let mask = m.next_token_mask();
            assert_eq!(mask.contains(TokenId::from(EOS)), contextual, "{kind:?}");
            let mut m = compiled.matcher();
            m.accept_string("if if").unwrap();
            let mask = m.next_token_mask();
            assert_eq!(
                mask.contains(TokenId::from(tok(":"))),
                contextual,
                "{kind:?}"
            );
        }
    }
}
