//! The lexer DFA's semantics on hand-written terminal sets: tie-breaking, laziness, UTF-8,
//! growth and reachability, longest match without backtracking, and build errors.

use munch_lexer::dfa::{Lexer, LexerBuildErrorKind, LexerConfig, TerminalSpec};
use munch_lexer::{LexState, TerminalId};
use regex_syntax::hir::Hir;
use regex_syntax::ParserBuilder;

mod common;
use common::{build, build_err, lex, lit, re, walk, with_priority};

/// A case-insensitive literal (`"x"i` in Lark).
fn lit_i(name: &str, text: &str) -> TerminalSpec {
    let hir = ParserBuilder::new()
        .case_insensitive(true)
        .build()
        .parse(&regex_syntax::escape(text))
        .unwrap();
    TerminalSpec {
        hir: Some(hir),
        ..lit(name, text)
    }
}

fn t(i: u32) -> TerminalId {
    TerminalId::from(i)
}

/// The terminals accepted after reading `text` from the start.
fn accepted<'l>(lexer: &'l Lexer, text: &[u8]) -> &'l [TerminalId] {
    lexer.accepted(walk(lexer, text))
}

/// `lex` with each lexeme shown as `text:NAME[,NAME]`.
fn lex_str(lexer: &Lexer, input: &str) -> String {
    match lex(lexer, input) {
        Ok(lexemes) => lexemes
            .iter()
            .map(|(text, names)| format!("{text:?}:{}", names.join(",")))
            .collect::<Vec<_>>()
            .join(" "),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn keywords_beat_identifiers_only_on_the_same_lexeme() {
    let lexer = build(&[lit("IF", "if"), re("NAME", "[a-z]+"), re("WS", " +")]);
    assert_eq!(accepted(&lexer, b"if"), &[t(0)]);
    assert_eq!(accepted(&lexer, b"i"), &[t(1)]);
    assert_eq!(accepted(&lexer, b"iff"), &[t(1)]);
    assert_eq!(
        lex_str(&lexer, "if iffy i"),
        r#""if":IF " ":WS "iffy":NAME " ":WS "i":NAME"#
    );
}

#[test]
fn operators_take_the_longest_match() {
    let lexer = build(&[lit("PLUS", "+"), lit("INC", "++"), lit("ADD_EQ", "+=")]);
    let plus = walk(&lexer, b"+");
    assert_eq!(lexer.accepted(plus), &[t(0)]);
    assert!(lexer.can_grow(plus));
    assert!(lexer.extends(plus, b'+') && lexer.extends(plus, b'='));
    assert!(!lexer.extends(plus, b'-'));
    let inc = walk(&lexer, b"++");
    assert_eq!(lexer.accepted(inc), &[t(1)]);
    assert!(!lexer.can_grow(inc));
    assert_eq!(lex_str(&lexer, "+++=+"), r#""++":INC "+=":ADD_EQ "+":PLUS"#);
    assert_eq!(lex_str(&lexer, "+++"), r#""++":INC "+":PLUS"#);
}

/// A lexeme of literals is gone back to when a longer reading that only literals could
/// complete fails (`..x` beside `...`), never from a reading a regex could complete (`/*`).
#[test]
fn a_lexeme_of_literals_is_gone_back_to_from_a_failed_longer_literal() {
    let specs = [
        lit("DOT", "."),
        lit("ELLIPSIS", "..."),
        re("NAME", "[a-z]+"),
        lit("DIV", "/"),
        re("COMMENT", r"/\*[a-z ]*\*/"),
    ];
    let lexer = build(&specs);
    assert_eq!(lex_str(&lexer, "..x"), r#"".":DOT ".":DOT "x":NAME"#);
    assert_eq!(lex_str(&lexer, ".."), r#"".":DOT ".":DOT"#);
    assert_eq!(lex_str(&lexer, "..."), r#""...":ELLIPSIS"#);
    assert_eq!(
        lex_str(&lexer, "....x"),
        r#""...":ELLIPSIS ".":DOT "x":NAME"#
    );
    // The inhibited `.` goes on, guarded, where `..` extends it; `...` kills it.
    let dot = walk(&lexer, b".");
    assert!(lexer.inhibits(dot));
    let pending = lexer.next_inhibited(dot, b'.');
    assert!(!lexer.is_dead(pending));
    assert_eq!(lexer.accepted(pending), &[t(0)]);
    assert!(lexer.is_dead(lexer.next_inhibited(pending, b'.')));
    // A comment's reading could be completed by a regex: `/` is not gone back to.
    assert_eq!(
        lex_str(&lexer, "/*a*/x/y"),
        r#""/*a*/":COMMENT "x":NAME "/":DIV "y":NAME"#
    );
    assert!(lex_str(&lexer, "/*ax").starts_with("error"));
    // Off: plain longest match, `..x` is an error at `x`.
    let config = LexerConfig {
        backtrack_literals: false,
        ..LexerConfig::default()
    };
    let plain = Lexer::new(&specs, &config).unwrap();
    let err = plain.tokenize(b"..x").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (2, 0));
    assert!(plain.is_dead(plain.next_inhibited(walk(&plain, b"."), b'.')));
    // What it costs here: one pending state (`.` read while `..` may become `...`).
    assert_eq!(plain.state_len() + 1, lexer.state_len());
}

/// Between ignored terminals the same: a space is gone back to when the comment that a space
/// may begin (as in Lark's lark.lark) does not follow.
#[test]
fn an_ignored_lexeme_is_gone_back_to_from_a_failed_longer_ignored_reading() {
    let ignored = |spec: TerminalSpec| TerminalSpec {
        ignored: true,
        ..spec
    };
    let specs = [
        ignored(re("WS", "[ ]+")),
        ignored(re("COMMENT", r"\s*//[^\n]*")),
        re("REGEXP", r"/[a-z]+/"),
        re("NAME", "[a-z]+"),
    ];
    let lexer = build(&specs);
    assert_eq!(
        lex_str(&lexer, "a /x/ b // c"),
        r#""a":NAME " ":WS "/x/":REGEXP " ":WS "b":NAME " // c":COMMENT"#
    );
    assert_eq!(
        lex_str(&lexer, "a  /x/"),
        r#""a":NAME "  ":WS "/x/":REGEXP"#
    );
    // Off: plain longest match, the space's longer reading ` /` fails at `x`.
    let config = LexerConfig {
        backtrack_ignored: false,
        ..LexerConfig::default()
    };
    let plain = Lexer::new(&specs, &config).unwrap();
    let err = plain.tokenize(b"a /x/").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (3, 1));
}

#[test]
fn priority_beats_literalness_and_may_be_negative() {
    // A higher-priority regex beats a literal.
    let lexer = build(&[lit("IF", "if"), with_priority(re("NAME", "[a-z]+"), 2)]);
    assert_eq!(accepted(&lexer, b"if"), &[t(1)]);
    // A negative-priority literal loses to a default-priority regex.
    let lexer = build(&[with_priority(lit("IF", "if"), -1), re("NAME", "[a-z]+")]);
    assert_eq!(accepted(&lexer, b"if"), &[t(1)]);
    // Among negative priorities the higher one still wins.
    let lexer = build(&[
        with_priority(re("A", "[a-z]+"), -3),
        with_priority(re("B", "[a-c]+"), -2),
    ]);
    assert_eq!(accepted(&lexer, b"ab"), &[t(1)]);
    assert_eq!(accepted(&lexer, b"ax"), &[t(0)]);
}

#[test]
fn ties_of_equal_rank_all_remain_sorted() {
    let lexer = build(&[
        re("HEX", "[0-9a-f]+"),
        re("DEC", "[0-9]+"),
        lit("ZERO", "0"),
        lit("ZERO_TOO", "0"),
    ]);
    assert_eq!(accepted(&lexer, b"12"), &[t(0), t(1)]);
    assert_eq!(accepted(&lexer, b"1f"), &[t(0)]);
    // Two literals tie on "0" and beat both regexes.
    assert_eq!(accepted(&lexer, b"0"), &[t(2), t(3)]);
    assert_eq!(lexer.tokenize(b"0").unwrap().len(), 1);
}

#[test]
fn ignored_terminals_tie_like_any_other() {
    let mut ws = re("WS", "[ \t]+");
    ws.ignored = true;
    let lexer = build(&[ws, re("SPACES", " +"), re("NAME", "[a-z]+")]);
    // Both match "  " with equal rank: both remain, the parser decides.
    assert_eq!(accepted(&lexer, b"  "), &[t(0), t(1)]);
    assert_eq!(accepted(&lexer, b" \t"), &[t(0)]);
    // tokenize reports ignored lexemes too.
    assert_eq!(lex_str(&lexer, "a \tb"), r#""a":NAME " \t":WS "b":NAME"#);
    // With a lower priority the ignored terminal drops out of the tie.
    let mut ws = with_priority(re("WS", "[ \t]+"), -1);
    ws.ignored = true;
    let lexer = build(&[ws, re("SPACES", " +")]);
    assert_eq!(accepted(&lexer, b"  "), &[t(1)]);
}

#[test]
fn lazy_block_comment_ends_at_the_first_close() {
    let lexer = build(&[
        re("COMMENT", r"/\*(.|\n)*?\*/"),
        lit("STAR", "*"),
        lit("SLASH", "/"),
        re("NAME", "[a-z]+"),
        re("WS", "[ \n]+"),
    ]);
    assert!(lexer.is_lazy(t(0)));
    assert!(!lexer.is_lazy(t(3)));
    let closed = walk(&lexer, b"/* a\n */");
    assert_eq!(lexer.accepted(closed), &[t(0)]);
    assert!(!lexer.can_grow(closed), "a lazy match cannot be extended");
    assert_eq!(
        lex_str(&lexer, "/* a\n */ b */"),
        r#""/* a\n */":COMMENT " ":WS "b":NAME " ":WS "*":STAR "/":SLASH"#
    );
    // Inside the comment, "*/" is always reachable.
    let inside = walk(&lexer, b"/* x");
    assert!(lexer.accepted(inside).is_empty());
    assert!(lexer.reachable(inside).contains(t(0)));
}

#[test]
fn lazy_string_vs_greedy_string() {
    let lazy = build(&[re("STRING", r#"".*?""#)]);
    assert!(lazy.is_lazy(t(0)));
    assert_eq!(
        lex_str(&lazy, r#""a""b""#),
        r#""\"a\"":STRING "\"b\"":STRING"#
    );
    let greedy = build(&[re("STRING", r#"".*""#)]);
    assert!(!greedy.is_lazy(t(0)));
    assert_eq!(lex_str(&greedy, r#""a""b""#), r#""\"a\"\"b\"":STRING"#);
    // The greedy one cannot end early and backtrack: `"a"x` runs on past the only match.
    assert_eq!(
        lex_str(&greedy, r#""a"x"#),
        "error: no terminal matches at byte 4"
    );
}

#[test]
fn case_insensitive_literal_is_still_a_literal() {
    let lexer = build(&[lit_i("SELECT", "select"), re("NAME", "[a-zA-Z]+")]);
    assert_eq!(accepted(&lexer, b"SeLeCt"), &[t(0)]);
    assert_eq!(accepted(&lexer, b"select"), &[t(0)]);
    assert_eq!(accepted(&lexer, b"selects"), &[t(1)]);
}

#[test]
fn multi_byte_utf8_terminals() {
    let lexer = build(&[
        re("GREEK", "[α-ω]+"),
        lit("PARTY", "🎉"),
        re("ANY", "[^α-ω🎉]"),
    ]);
    assert_eq!(
        lex_str(&lexer, "αβγ🎉xω"),
        r#""αβγ":GREEK "🎉":PARTY "x":ANY "ω":GREEK"#
    );
    // Half of "α" (0xCE 0xB1) accepts nothing but lives.
    let half = walk(&lexer, &[0xCE]);
    assert!(!lexer.is_dead(half) && lexer.accepted(half).is_empty());
    assert!(lexer.reachable(half).contains(t(0)));
    // Three of the emoji's four bytes: PARTY, or ANY by another emoji of the same block
    // (U+1F388 shares the prefix); never GREEK.
    let three = walk(&lexer, &"🎉".as_bytes()[..3]);
    assert_eq!(
        lexer.reachable(three).iter().collect::<Vec<_>>(),
        [t(1), t(2)]
    );
    assert_eq!(accepted(&lexer, "🎉".as_bytes()), &[t(1)]);
    assert_eq!(accepted(&lexer, "🎈".as_bytes()), &[t(2)]);
    // Invalid UTF-8 matches no Unicode class.
    let err = lexer.tokenize(b"\xCE\xB1\xFF").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (2, 2));
    // A truncated character at the end of input: the half "β" extends the GREEK lexeme, and
    // the lexer does not back up to "α".
    let err = lexer.tokenize(b"\xCE\xB1\xCE").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (3, 0));
}

#[test]
fn raw_byte_patterns_are_refused() {
    // Lookahead is a whole character, so lexemes must be whole characters: a pattern that can
    // match invalid UTF-8 is refused, naming the terminal. ASCII byte classes are fine.
    let bytes = |pattern: &str, name: &str| {
        let hir = ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap();
        let mut spec = re(name, "x");
        spec.hir = Some(hir);
        spec
    };
    let err = build_err(&[re("A", "a"), bytes(r"(?-u:\xFF+)", "FF")]);
    match err.kind() {
        LexerBuildErrorKind::Unsupported {
            terminal,
            name,
            what,
        } => {
            assert_eq!((*terminal, name.as_str()), (t(1), "FF"));
            assert!(what.contains("UTF-8"), "{what}");
        }
        other => panic!("{other:?}"),
    }
    let mut half = lit("HALF", "x");
    half.hir = Some(Hir::literal(&"→".as_bytes()[..2]));
    assert!(Lexer::new(&[half], &LexerConfig::default()).is_err());
    let lexer = build(&[bytes(r"(?-u:[a-z]+)", "ASCII")]);
    assert_eq!(lexer.tokenize(b"ab").unwrap().len(), 1);
}

#[test]
fn reachable_and_can_grow() {
    let lexer = build(&[
        lit("IF", "if"),
        lit("INT", "int"),
        re("NAME", "[a-z]+"),
        re("NUM", "[0-9]+"),
    ]);
    let set = |s: LexState| {
        lexer
            .reachable(s)
            .iter()
            .map(|x| x.as_u32())
            .collect::<Vec<_>>()
    };
    assert_eq!(set(lexer.start()), [0, 1, 2, 3]);
    assert_eq!(set(walk(&lexer, b"i")), [0, 1, 2]);
    assert_eq!(set(walk(&lexer, b"in")), [1, 2]);
    assert_eq!(set(walk(&lexer, b"int")), [1, 2]);
    assert_eq!(set(walk(&lexer, b"inx")), [2]);
    assert_eq!(set(walk(&lexer, b"4")), [3]);
    assert!(set(walk(&lexer, b"4a")).is_empty());
    assert!(lexer.can_grow(walk(&lexer, b"int")));
    assert!(lexer.can_grow(lexer.start()));
    assert!(!lexer.can_grow(lexer.dead()));

    // A bounded terminal stops growing.
    let lexer = build(&[re("AB", "ab?")]);
    assert!(lexer.can_grow(walk(&lexer, b"a")));
    let ab = walk(&lexer, b"ab");
    assert!(!lexer.can_grow(ab) && !lexer.is_dead(ab));
    assert_eq!(lexer.reachable(ab).iter().collect::<Vec<_>>(), [t(0)]);
}

#[test]
fn dead_state_is_absorbing_and_empty() {
    let lexer = build(&[re("NAME", "[a-z]+"), lit("EQ", "==")]);
    let dead = lexer.dead();
    assert!(lexer.is_dead(dead));
    assert!(lexer.accepted(dead).is_empty());
    assert!(lexer.reachable(dead).is_empty());
    assert!(!lexer.can_grow(dead));
    for b in 0..=255u8 {
        assert!(lexer.is_dead(lexer.next(dead, b)));
    }
    assert!(lexer.is_dead(walk(&lexer, b"=a")));
    assert!(!lexer.is_dead(walk(&lexer, b"=")));
    // Every state that is not dead can still reach a terminal.
    for s in 0..lexer.state_len() {
        let s = LexState::from(s as u32);
        assert_eq!(lexer.is_dead(s), lexer.reachable(s).is_empty());
    }
}

#[test]
fn byte_classes_agree_with_transitions() {
    let lexer = build(&[
        re("NAME", "[a-zA-Z_][a-zA-Z_0-9]*"),
        re("NUM", "[0-9]+"),
        lit("ARROW", "->"),
        re("GREEK", "[α-ω]+"),
    ]);
    assert!(lexer.class_len() >= 2 && lexer.class_len() <= 256);
    for s in 0..lexer.state_len() {
        let s = LexState::from(s as u32);
        for b in 0..=255u8 {
            let c = lexer.byte_class(b);
            assert!((c as usize) < lexer.class_len());
            assert_eq!(lexer.next(s, b), lexer.next_class(s, c));
        }
    }
    // Letters are one class, digits another.
    assert_eq!(lexer.byte_class(b'b'), lexer.byte_class(b'y'));
    assert_ne!(lexer.byte_class(b'b'), lexer.byte_class(b'7'));
}

/// Bytes that no state tells apart share a class even where the patterns' ranges cut them
/// apart: `\t`, `\n` and `\r` split the control bytes into three ranges, which are dead
/// everywhere alike. Bytes that begin characters of different kinds never merge.
#[test]
fn bytes_no_state_tells_apart_share_a_class() {
    let lexer = build(&[
        re("WS", "[ \\t\\n\\r]+"),
        re("STR", "\"[^\"\\x00-\\x1f]*\""),
    ]);
    let control = lexer.byte_class(0x00);
    assert_eq!(lexer.byte_class(0x0B), control);
    assert_eq!(lexer.byte_class(0x0E), control);
    assert_eq!(lexer.byte_class(0x1F), control);
    assert_ne!(lexer.byte_class(b'\t'), control);
    // Inside a string, letters and continuation bytes both go on, but a lexeme's lookahead
    // reads them differently (a continuation byte never begins a character).
    assert_ne!(lexer.byte_class(b'a'), lexer.byte_class(0x80));
    assert_ne!(lexer.byte_class(b'a'), lexer.byte_class(0xC3));
    // The merged classes lead every state where their bytes do.
    for s in 0..lexer.state_len() {
        let s = LexState::from(s as u32);
        for b in 0..=255u8 {
            assert_eq!(lexer.next(s, b), lexer.next_class(s, lexer.byte_class(b)));
            assert_eq!(
                lexer.next_inhibited(s, b),
                lexer.next_inhibited_class(s, lexer.byte_class(b))
            );
        }
    }
    assert_eq!(
        lex(&lexer, "\"a\u{e9}\"\t\"\"").unwrap(),
        [
            ("\"a\u{e9}\"".to_string(), vec!["STR".to_string()]),
            ("\t".to_string(), vec!["WS".to_string()]),
            ("\"\"".to_string(), vec!["STR".to_string()]),
        ]
    );
    assert!(lex(&lexer, "\"a\u{b}\"").is_err());
}

#[test]
fn no_backtracking_to_a_shorter_match() {
    let lexer = build(&[lit("A", "a"), lit("ABC", "abc"), re("D", "d")]);
    assert_eq!(lex_str(&lexer, "abcad"), r#""abc":ABC "a":A "d":D"#);
    // "ab" is alive (it may become "abc") but accepts nothing, and "a" is not revisited.
    let err = lexer.tokenize(b"abd").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (2, 0));
    assert_eq!(err.to_string(), "no terminal matches at byte 2");
    // At end of input the same holds.
    let err = lexer.tokenize(b"aab").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (3, 1));
    // A byte no terminal starts with.
    let err = lexer.tokenize(b"a?").unwrap_err();
    assert_eq!((err.offset, err.lexeme_start), (1, 1));
    assert_eq!(lexer.tokenize(b"").unwrap(), vec![]);
}

#[test]
fn terminals_without_pattern_never_match() {
    let declared = TerminalSpec {
        hir: None,
        ..lit("DECLARED", "x")
    };
    let lexer = build(&[declared.clone(), re("NAME", "[a-z]+"), declared]);
    assert_eq!(lexer.terminal_len(), 3);
    assert_eq!(lexer.terminal(t(2)).name, "DECLARED");
    assert_eq!(accepted(&lexer, b"x"), &[t(1)]);
    assert_eq!(
        lexer.reachable(lexer.start()).iter().collect::<Vec<_>>(),
        [t(1)]
    );
    // With no pattern at all, the start state is dead.
    let lexer = build(&[TerminalSpec {
        hir: None,
        ..lit("DECLARED", "x")
    }]);
    assert!(lexer.is_dead(lexer.start()));
    assert_eq!(lexer.state_len(), 1);
    assert_eq!(lexer.tokenize(b"x").unwrap_err().offset, 0);
    let lexer = build(&[]);
    assert_eq!(lexer.terminal_len(), 0);
    assert!(lexer.tokenize(b"").unwrap().is_empty());
}

#[test]
fn look_around_is_a_typed_error_naming_the_terminal() {
    for (pattern, shown) in [
        (r"\bfoo", r"`\b`"),
        (r"foo\B", r"`\B`"),
        ("^foo", r"`^` or `\A` (the start of the text"),
        ("foo$", r"`$` or `\Z` (the end of the text"),
        ("(?m:foo$)", "`$` under the `m` flag"),
    ] {
        let err = build_err(&[re("OK", "[a-z]+"), re("BAD", pattern)]);
        match err.kind() {
            LexerBuildErrorKind::Unsupported {
                terminal,
                name,
                what,
            } => {
                assert_eq!(*terminal, t(1));
                assert_eq!(name, "BAD");
                assert!(what.starts_with("the anchor or boundary "), "{what}");
                assert!(what.contains(shown), "{pattern}: {what}");
            }
            other => panic!("{pattern}: unexpected {other:?}"),
        }
        assert_eq!(err.terminal(), Some(t(1)));
        assert!(err.to_string().contains("BAD"), "{err}");
    }
}

#[test]
fn empty_match_is_a_typed_error() {
    for pattern in ["a*", "(a|)", "a?b?", "(?:ab)*?"] {
        let err = build_err(&[re("E", pattern)]);
        assert_eq!(
            err.kind(),
            &LexerBuildErrorKind::EmptyMatch {
                terminal: t(0),
                name: "E".to_string()
            },
            "{pattern}"
        );
    }
    // Nullable parts are fine when the whole is not.
    assert!(Lexer::new(&[re("E", "a*b")], &LexerConfig::default()).is_ok());
}

#[test]
fn budgets_are_typed_errors() {
    // The classic exponential blow-up: the 13th byte from the end must be 'a'.
    let specs = [re("BLOWUP", "[ab]*a[ab]{12}")];
    let config = LexerConfig {
        max_states: 1000,
        ..LexerConfig::default()
    };
    let err = Lexer::new(&specs, &config).unwrap_err();
    assert_eq!(
        err.kind(),
        &LexerBuildErrorKind::TooManyStates { limit: 1000 }
    );
    assert!(err.to_string().contains("max_states = 1000"), "{err}");
    // Enough states: it builds, and minimisation keeps 2^13 live states + dead.
    let config = LexerConfig {
        max_states: 20_000,
        ..LexerConfig::default()
    };
    let lexer = Lexer::new(&specs, &config).unwrap();
    assert_eq!(lexer.state_len(), (1 << 13) + 1);

    let config = LexerConfig {
        max_build_memory: 10_000,
        ..LexerConfig::default()
    };
    let err = Lexer::new(&[re("W", r"\w+")], &config).unwrap_err();
    assert_eq!(
        err.kind(),
        &LexerBuildErrorKind::TooMuchMemory { limit: 10_000 }
    );

    let config = LexerConfig {
        nfa_size_limit: 10_000,
        ..LexerConfig::default()
    };
    let err = Lexer::new(&[re("OK", "a"), re("BIG", r"\w{50}")], &config).unwrap_err();
    assert_eq!(
        err.kind(),
        &LexerBuildErrorKind::NfaTooBig {
            terminal: t(1),
            name: "BIG".to_string(),
            limit: 10_000
        }
    );
}

#[test]
fn dfa_is_minimal_for_equivalent_patterns() {
    // "abc": dead, start, a, ab, abc.
    assert_eq!(build(&[lit("ABC", "abc")]).state_len(), 5);
    let a = build(&[re("X", "ab|ac")]);
    let b = build(&[re("X", "a[bc]")]);
    assert_eq!(a.state_len(), b.state_len());
    assert_eq!(a.state_len(), 4);
    // Keywords sharing prefixes with an identifier terminal.
    let lexer = build(&[lit("IF", "if"), lit("IN", "in"), re("NAME", "[a-z]+")]);
    // dead, start, "i", "if", "in", NAME-only.
    assert_eq!(lexer.state_len(), 6);
}

/// Drives the fork described in the module docs by hand, branch by branch, and returns the
/// lexemes of the branches that end at the end of `input` with a complete lexeme.
fn forked_lexemes(lexer: &Lexer, input: &[u8]) -> Vec<Vec<(usize, usize)>> {
    // Each branch: (lexer state, lexemes so far, lexeme start, inhibited-by state).
    type Branch = (LexState, Vec<(usize, usize)>, usize, Option<LexState>);
    let mut branches: Vec<Branch> = vec![(lexer.start(), vec![], 0, None)];
    for (i, &b) in input.iter().enumerate() {
        let mut next_branches = Vec::new();
        for (s, lexemes, start, inhibited) in branches {
            let n = match inhibited {
                Some(by) => lexer.next_inhibited(by, b),
                None => lexer.next(s, b),
            };
            if lexer.is_dead(n) {
                continue;
            }
            if !lexer.accepted(n).is_empty() {
                let mut done = lexemes.clone();
                done.push((start, i + 1));
                if lexer.inhibits(n) {
                    next_branches.push((lexer.start(), done, i + 1, Some(n)));
                    next_branches.push((n, lexemes, start, None));
                } else {
                    next_branches.push((lexer.start(), done, i + 1, None));
                }
            } else {
                next_branches.push((n, lexemes, start, None));
            }
        }
        branches = next_branches;
    }
    branches
        .into_iter()
        .filter(|(s, _, _, _)| *s == lexer.start())
        .map(|(_, lexemes, _, _)| lexemes)
        .collect()
}

#[test]
fn inhibited_branch_protocol_matches_tokenize() {
    let check = |lexer: &Lexer, inputs: &[&str]| {
        for input in inputs {
            let bytes = input.as_bytes();
            let expected: Vec<Vec<(usize, usize)>> = match lexer.tokenize(bytes) {
                Ok(lexemes) => vec![lexemes.iter().map(|l| (l.start, l.end)).collect()],
                Err(_) => vec![],
            };
            assert_eq!(forked_lexemes(lexer, bytes), expected, "{input}");
        }
    };
    let lexer = build(&[
        lit("PLUS", "+"),
        lit("INC", "++"),
        re("NUM", "[0-9]+"),
        re("FLOAT", r"[0-9]+\.[0-9]+"),
        lit("DOT", "."),
    ]);
    check(&lexer, &["1+2", "1++", "12.5+.", "1.", "+++", "1..2"]);
    // Characters of 2, 3 and 4 bytes that begin like a character extending the lexeme.
    let lexer = build(&[
        re("KEY", "[a-zé]+"),
        lit("ARROW", "→"),
        re("VAL", "[^\\x00-\\x7f;→ ]+"),
        lit("TIMES", "×"),
        re("WORD", "[a-zà-ÿ]+"),
        re("EMOJI", "[😀-😏]+"),
        lit("NEUTRAL", "😐"),
        lit("SEMI", ";"),
    ]);
    check(
        &lexer,
        &[
            "é→日本語;",
            "é€",
            "a×b",
            "aàb×",
            "😀😐",
            "😀😁😐😐",
            "é→",
            "→→",
            "ab→cd",
        ],
    );
}

#[test]
fn java_sized_terminal_set_builds_and_lexes() {
    #[rustfmt::skip]
    const KEYWORDS: &[&str] = &[
        "abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class",
        "const", "continue", "default", "do", "double", "else", "enum", "extends", "final",
        "finally", "float", "for", "goto", "if", "implements", "import", "instanceof", "int",
        "interface", "long", "native", "new", "package", "private", "protected", "public",
        "return", "short", "static", "strictfp", "super", "switch", "synchronized", "this",
        "throw", "throws", "transient", "try", "void", "volatile", "while", "true", "false",
        "null", "var", "yield", "record", "sealed", "permits",
    ];
    const OPERATORS: &[&str] = &[
        "(", ")", "{", "}", "[", "]", ";", ",", ".", "...", "@", "::", "=", ">", "<", "!", "~",
        "?", ":", "->", "==", "<=", ">=", "!=", "&&", "||", "++", "--", "+", "-", "*", "/", "&",
        "|", "^", "%", "<<", "+=", "-=", "*=", "/=", "&=", "|=", "^=", "%=", "<<=", ">>=", ">>>=",
    ];
    let mut specs: Vec<TerminalSpec> = KEYWORDS
        .iter()
        .map(|k| lit(&k.to_uppercase(), k))
        .chain(OPERATORS.iter().map(|o| lit(&format!("OP{o}"), o)))
        .collect();
    let regexes = [
        ("IDENT", r"[\p{L}_$][\p{L}\p{N}_$]*"),
        ("DECIMAL", r"(0|[1-9][0-9_]*)[lL]?"),
        ("HEX", r"0[xX][0-9a-fA-F_]+[lL]?"),
        ("FLOAT", r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?[fFdD]?"),
        ("CHAR", r"'([^'\\\n]|\\.)'"),
        ("STRING", r#""([^"\\\n]|\\.)*""#),
        ("TEXT_BLOCK", r#""""(.|\n)*?""""#),
        ("LINE_COMMENT", r"//[^\n]*"),
        ("BLOCK_COMMENT", r"/\*(.|\n)*?\*/"),
        ("WS", r"[ \t\r\n]+"),
    ];
    for (name, pattern) in regexes {
        let mut spec = re(name, pattern);
        spec.ignored = name.ends_with("COMMENT") || name == "WS";
        specs.push(spec);
    }
    assert!(specs.len() > 100);
    let lexer = build(&specs);
    let id = |name: &str| specs.iter().position(|s| s.name == name).unwrap();
    let input = "public class Ünïcode { /* c */ int x = 0x1F + 2.5f; // done\n \
                 String s = \"a\\\"b\"; x >>>= 2; }";
    let lexemes = lexer.tokenize(input.as_bytes()).unwrap();
    let text: Vec<&str> = lexemes
        .iter()
        .filter(|l| !lexer.terminal(l.terminals[0]).ignored)
        .map(|l| &input[l.start..l.end])
        .collect();
    assert_eq!(
        text,
        [
            "public",
            "class",
            "Ünïcode",
            "{",
            "int",
            "x",
            "=",
            "0x1F",
            "+",
            "2.5f",
            ";",
            "String",
            "s",
            "=",
            "\"a\\\"b\"",
            ";",
            "x",
            ">>>=",
            "2",
            ";",
            "}"
        ]
    );
    assert_eq!(lexemes[0].terminals.as_slice(), &[t(id("PUBLIC") as u32)]);
    let ident = lexemes
        .iter()
        .find(|l| &input[l.start..l.end] == "Ünïcode")
        .unwrap();
    assert_eq!(ident.terminals.as_slice(), &[t(id("IDENT") as u32)]);
}

#[test]
fn deep_patterns_hit_the_nest_limit_not_the_stack() {
    use regex_syntax::hir::{Capture, Repetition};
    // Alternate captures, repetitions and concatenations, `depth` levels deep, by hand (the
    // regex-syntax parser would refuse this nesting).
    let deep = |depth: usize| {
        let mut hir = Hir::literal(*b"a");
        for level in 1..depth {
            hir = match level % 3 {
                0 => Hir::capture(Capture {
                    index: 1,
                    name: None,
                    sub: Box::new(hir),
                }),
                1 => Hir::repetition(Repetition {
                    min: 1,
                    max: None,
                    greedy: true,
                    sub: Box::new(hir),
                }),
                _ => Hir::concat(vec![Hir::literal(*b"b"), hir]),
            };
        }
        TerminalSpec {
            hir: Some(hir),
            ..re("DEEP", "x")
        }
    };
    let config = LexerConfig::default();
    // At the limit it builds on a test thread's stack.
    let lexer = Lexer::new(&[deep(config.nest_limit)], &config).unwrap();
    assert!(!lexer.is_dead(walk(&lexer, b"b")));
    let err = Lexer::new(&[re("OK", "a"), deep(config.nest_limit + 1)], &config).unwrap_err();
    assert_eq!(
        err.kind(),
        &LexerBuildErrorKind::TooDeep {
            terminal: t(1),
            name: "DEEP".to_string(),
            limit: config.nest_limit
        }
    );
}

#[test]
fn pattern_with_an_empty_class_never_matches() {
    let lexer = build(&[re("NOTHING", r"a\P{any}"), re("A", "a")]);
    assert_eq!(accepted(&lexer, b"a"), &[t(1)]);
    assert_eq!(
        lexer.reachable(lexer.start()).iter().collect::<Vec<_>>(),
        [t(1)]
    );
    assert!(!lexer.can_grow(walk(&lexer, b"a")));
}

#[test]
fn walk_reads_one_lexeme() {
    let lexer = build(&[lit("IF", "if"), re("NAME", "[a-z]+")]);
    assert_eq!(lexer.walk(lexer.start(), b"if"), walk(&lexer, b"if"));
    let i = lexer.walk(lexer.start(), b"i");
    assert_eq!(lexer.walk(i, b"f"), walk(&lexer, b"if"));
    assert!(lexer.is_dead(lexer.walk(lexer.start(), b"i f")));
    assert_eq!(lexer.walk(i, b""), i);
}
