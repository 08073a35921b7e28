//! Longest match over whole UTF-8 characters: a byte that begins a character extending the
//! lexeme does not end an inhibited terminal until the character is complete (issue 28's
//! `é→日本語`, and the same with characters of 2 and 4 bytes and next to a look-ahead).

use munch_lexer::dfa::{look_around_name, Lexer, LexerBuildErrorKind, LexerConfig, LookAroundKind};
use munch_lexer::{LexState, TerminalId};

mod common;
use common::{build, lit, re, walk};

/// `input` lexed, as (text, terminal names) pairs.
fn lex(lexer: &Lexer, input: &str) -> Vec<(String, Vec<String>)> {
    common::lex(lexer, input).unwrap_or_else(|e| panic!("{input:?}: {e:?}"))
}

fn pairs(expected: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    expected
        .iter()
        .map(|(text, names)| {
            (
                text.to_string(),
                names.iter().map(|n| n.to_string()).collect(),
            )
        })
        .collect()
}

/// The issue's terminals: `KEY: /[a-zé]+/`, `"→"`, `VAL: /[^\x00-\x7f;→ ]+/`, `";"`.
fn key_val() -> Lexer {
    build(&[
        re("KEY", "[a-zé]+"),
        lit("ARROW", "→"),
        re("VAL", r"[^\x00-\x7f;→ ]+"),
        lit("SEMI", ";"),
    ])
}

fn t(i: u32) -> TerminalId {
    TerminalId::from(i)
}

/// The states the inhibited branch of `ended` goes through on `bytes`.
fn inhibited_walk(lexer: &Lexer, ended: LexState, bytes: &[u8]) -> Vec<LexState> {
    let mut out = vec![lexer.next_inhibited(ended, bytes[0])];
    for &b in &bytes[1..] {
        out.push(lexer.next(*out.last().unwrap(), b));
    }
    out
}

#[test]
fn three_byte_character_ends_the_lexeme_once_complete() {
    let lexer = key_val();
    // `é` is a KEY and a VAL (a tie the parser resolves); `→` (E2 86 92) is no VAL character,
    // though E2 begins many.
    assert_eq!(
        lex(&lexer, "é→日本語;"),
        pairs(&[
            ("é", &["KEY", "VAL"]),
            ("→", &["ARROW"]),
            ("日本語", &["VAL"]),
            (";", &["SEMI"]),
        ])
    );
    let e = walk(&lexer, "é".as_bytes());
    assert!(lexer.inhibits(e) && !lexer.inside_char(e));
    // E2 extends the VAL lexeme for now: both branches read it.
    let arrow = "→".as_bytes();
    assert!(lexer.extends(e, arrow[0]));
    let branch = inhibited_walk(&lexer, e, arrow);
    for &p in &branch[..2] {
        assert!(!lexer.is_dead(p) && lexer.inside_char(p) && lexer.accepted(p).is_empty());
    }
    assert_eq!(lexer.accepted(branch[2]), &[t(1)]);
    assert_eq!(branch[2], walk(&lexer, arrow));
    assert!(lexer.is_dead(lexer.walk(e, arrow)), "`é→` is no lexeme");
    // `€` (E2 82 AC) is a VAL character: the lexeme goes on. The inhibited branch lives on
    // E2, and dies on 82, not on the first byte: every character that begins E2 82 is a VAL
    // one, so no completion can leave `é` complete.
    let euro = "€".as_bytes();
    let branch = inhibited_walk(&lexer, e, euro);
    assert!(!lexer.is_dead(branch[0]) && lexer.is_dead(branch[1]));
    assert_eq!(lex(&lexer, "é€"), pairs(&[("é€", &["VAL"])]));
    // The pending state can only complete what `→` or a character that is no VAL begins.
    let pending = branch[0];
    assert!(lexer.reachable(pending).contains(t(1)));
}

#[test]
fn two_byte_character() {
    // `×` (C3 97) shares its lead byte with `à`..`ÿ` (C3 A0..BF).
    let lexer = build(&[re("WORD", "[a-zà-ÿ]+"), lit("TIMES", "×")]);
    assert_eq!(
        lex(&lexer, "a×bé×"),
        pairs(&[
            ("a", &["WORD"]),
            ("×", &["TIMES"]),
            ("bé", &["WORD"]),
            ("×", &["TIMES"]),
        ])
    );
    let a = walk(&lexer, b"a");
    let times = "×".as_bytes();
    let pending = lexer.next_inhibited(a, times[0]);
    assert!(lexer.inside_char(pending));
    assert_eq!(lexer.next(pending, times[1]), walk(&lexer, times));
    assert!(lexer.is_dead(lexer.next(pending, "à".as_bytes()[1])));
}

#[test]
fn four_byte_character_pending_for_three_bytes() {
    // `😐` (F0 9F 98 90) shares three bytes with `😀`..`😏` (F0 9F 98 80..8F).
    let lexer = build(&[re("GRIN", "[😀-😏]+"), lit("NEUTRAL", "😐")]);
    assert_eq!(
        lex(&lexer, "😀😁😐😐😃"),
        pairs(&[
            ("😀😁", &["GRIN"]),
            ("😐", &["NEUTRAL"]),
            ("😐", &["NEUTRAL"]),
            ("😃", &["GRIN"]),
        ])
    );
    let grin = walk(&lexer, "😀".as_bytes());
    let branch = inhibited_walk(&lexer, grin, "😐".as_bytes());
    assert!(branch[..3].iter().all(|&p| lexer.inside_char(p)));
    assert_eq!(lexer.accepted(branch[3]), &[t(1)]);
    let branch = inhibited_walk(&lexer, grin, "😁".as_bytes());
    assert!(!lexer.is_dead(branch[2]) && lexer.is_dead(branch[3]));
}

#[test]
fn look_ahead_next_to_a_pending_character() {
    // Lark's `/0(?![1-9])/` and a terminal that `0` followed by `à`..`ÿ` begins.
    let lexer = build(&[
        re(
            "DEC",
            &format!(
                "0(?P<{}>[1-9])",
                look_around_name(LookAroundKind::NotAhead, 1)
            ),
        ),
        re("ZW", "0[à-ÿ]"),
        lit("TIMES", "×"),
    ]);
    assert_eq!(
        lex(&lexer, "0×0à"),
        pairs(&[("0", &["DEC"]), ("×", &["TIMES"]), ("0à", &["ZW"])])
    );
    let zero = walk(&lexer, b"0");
    assert!(lexer.has_look_ahead(zero));
    assert!(lexer.is_dead(lexer.next_inhibited(zero, b'1')));
    assert!(lexer.inside_char(lexer.next_inhibited(zero, "×".as_bytes()[0])));
    let err = lexer.tokenize(b"01").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (1, 0));
}

#[test]
fn errors_are_at_the_first_byte_no_branch_reads() {
    let lexer = key_val();
    // `é`, then E2 and `x`: E2 may begin `→` or a VAL character; `x` completes neither.
    let err = lexer.tokenize(b"\xC3\xA9\xE2x").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (3, 0));
    // The input ends inside a character: an error at the end, in the lexeme of `é`.
    let err = lexer.tokenize(b"\xC3\xA9\xE2\x86").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (4, 0));
    // A byte no terminal begins with, after a complete lexeme: the error is in the next one.
    let err = lexer.tokenize(b"\xC3\xA9 ").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (2, 2));

    // A lead byte that extends the lexeme but begins no lexeme of its own: the inhibited
    // branch dies at once, the other on the next byte.
    let lexer = build(&[re("A", "a"), lit("AE", "a€")]);
    assert!(lexer.is_dead(lexer.next_inhibited(walk(&lexer, b"a"), 0xE2)));
    let err = lexer.tokenize(b"a\xE2x").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (2, 0));
}

#[test]
fn ascii_lexers_have_no_pending_states() {
    let lexer = build(&[lit("IF", "if"), re("NAME", "[a-z]+"), re("WS", " +")]);
    for s in (0..lexer.state_len()).map(LexState::from_usize) {
        assert!(!lexer.inside_char(s));
        if !lexer.accepted(s).is_empty() {
            for b in 0..=255u8 {
                let expected = if lexer.extends(s, b) {
                    lexer.dead()
                } else {
                    lexer.next(lexer.start(), b)
                };
                assert_eq!(lexer.next_inhibited(s, b), expected);
            }
        } else {
            assert!(lexer.is_dead(lexer.next_inhibited(s, b'a')));
        }
    }
}

#[test]
fn pending_states_count_against_the_state_budget() {
    let specs = [
        re("KEY", "[a-zé]+"),
        lit("ARROW", "→"),
        re("VAL", r"[^\x00-\x7f;→ ]+"),
    ];
    let full = Lexer::new(&specs, &LexerConfig::default()).unwrap();
    let pending = (0..full.state_len())
        .map(LexState::from_usize)
        .filter(|&s| full.inside_char(s))
        .count();
    assert!(pending > 0);
    let config = LexerConfig {
        max_states: 1_000_000,
        ..LexerConfig::default()
    };
    assert!(Lexer::new(&specs, &config).is_ok());
    // Some budget admits the subset construction but not the pending states.
    let mut saw_budget_error = false;
    for max_states in 1..full.state_len() + 1 {
        let config = LexerConfig {
            max_states,
            ..LexerConfig::default()
        };
        if let Err(e) = Lexer::new(&specs, &config) {
            saw_budget_error = true;
            assert!(matches!(
                e.kind(),
                LexerBuildErrorKind::TooManyStates { limit } if *limit == max_states
            ));
        }
    }
    assert!(saw_budget_error);
}
