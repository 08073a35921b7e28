//! Longest match over whole UTF-8 characters in the parser (issue 28): an inhibited terminal
//! dies only when a whole character extends its lexeme. Expected outcomes were checked with
//! Lark (`lark` 1.x, `parser="lalr"`, contextual lexer), which matches characters.

use std::sync::Arc;

use munch_glr::mask::{Masker, Oracle};
use munch_glr::parser::{CommitErrorKind, Parser, ParserState};
use munch_testkit::grammar::parser;
use munch_vocab::{TokenId, Vocabulary};

/// Issue 28's grammar, with pairs separated by `;`.
const KEY_VAL: &str = r#"
start: pair (";" pair)*
pair: KEY "→" VAL
KEY: /[a-zé]+/
VAL: /[^\x00-\x7f;→ ]+/
"#;

/// Characters of 2 and 4 bytes that begin like one that extends the lexeme.
const TIMES_GRIN: &str = r#"
start: item+
item: WORD "×" WORD | GRIN "😐"
WORD: /[a-zà-ÿ]+/
GRIN: /[😀-😏]+/
%ignore " "
"#;

/// Committing `text` byte by byte: `Ok(accepting)`, or the offset of the byte it was refused
/// at; committing it at once must succeed or fail alike.
fn run(p: &Arc<Parser>, text: &[u8]) -> Result<bool, usize> {
    let mut whole = ParserState::new(p.clone());
    let at_once = whole.commit_bytes(text);
    if let Err(e) = &at_once {
        assert!(
            matches!(e.kind(), CommitErrorKind::Rejected { .. }),
            "{e:?}"
        );
    }
    let mut state = ParserState::new(p.clone());
    let mut by_byte = Ok(());
    for (i, &b) in text.iter().enumerate() {
        if state.commit_bytes(&[b]).is_err() {
            by_byte = Err(i);
            break;
        }
    }
    assert_eq!(
        at_once.is_ok(),
        by_byte.is_ok(),
        "{text:?}: at once vs byte by byte"
    );
    by_byte.map(|()| state.is_accepting())
}

#[test]
fn the_issue_example_is_accepted() {
    let p = parser(KEY_VAL);
    for text in ["é→日本語", "é→日本語;ab→€", "aé→日;é→é"] {
        assert_eq!(run(&p, text.as_bytes()), Ok(true), "{text}");
    }
    // Incomplete, but every prefix of a sentence is live, inside `→` too.
    for n in 1..="é→日".len() {
        assert_eq!(
            run(&p, &"é→日".as_bytes()[..n]),
            Ok(n == "é→日".len()),
            "{n}"
        );
    }
}

#[test]
fn a_character_that_extends_the_lexeme_still_kills_the_inhibited_terminal() {
    let p = parser(KEY_VAL);
    // `é€` is one VAL lexeme, which cannot begin a pair. After E2 82 no character is left that
    // could end the KEY `é`: every one is a VAL character.
    assert_eq!(run(&p, "é€".as_bytes()), Err(3));
    // `→` cannot be a VAL: refused on its last byte.
    assert_eq!(run(&p, "é→→".as_bytes()), Err(7));
    // A byte that completes no character.
    assert_eq!(run(&p, b"\xC3\xA9\xE2x"), Err(3));
}

#[test]
fn heads_inside_the_character_are_in_a_pending_state() {
    let p = parser(KEY_VAL);
    let lexer = p.lexer();
    let mut state = ParserState::new(p.clone());
    state.commit_bytes(b"\xC3\xA9\xE2").unwrap();
    // The VAL lexeme `é` + E2 cannot begin a pair: only the head that handed `é` over as a
    // KEY is left, reading E2 in a pending state, with no inhibitor of its own.
    let heads: Vec<_> = state.heads().collect();
    assert_eq!(heads.len(), 1);
    let h = &heads[0];
    assert!(lexer.inside_char(h.lex_state()));
    assert!(lexer.accepted(h.lex_state()).is_empty());
    assert_eq!(h.inhibitor(), None);
    assert!(!h.lexeme_is_empty());
    state.commit_bytes(b"\x86\x92").unwrap();
    assert!(state.is_live() && !state.is_accepting());
}

#[test]
fn two_and_four_byte_characters() {
    let p = parser(TIMES_GRIN);
    for text in ["a×b", "é×à", "😀😐", "😀😁😐 a×b"] {
        assert_eq!(run(&p, text.as_bytes()), Ok(true), "{text}");
    }
    // `ü` extends the WORD `a`: no `×` follows.
    assert_eq!(run(&p, "aü".as_bytes()), Ok(false));
    assert_eq!(run(&p, "aü×".as_bytes()), Ok(false));
    // `😁` extends the GRIN: `😐` must follow.
    assert_eq!(run(&p, "😀😁".as_bytes()), Ok(false));
    // A GRIN after a GRIN is refused on the last byte of the second: until then it might
    // have been `😐`.
    assert_eq!(run(&p, "😀 😀".as_bytes()), Err(8));
}

#[test]
fn a_look_ahead_terminal_before_a_pending_character() {
    let p = parser(
        r#"
start: num "×" num
num: DEC | ZW
DEC: /0(?![1-9])/
ZW: /0[à-ÿ]/
"#,
    );
    assert_eq!(run(&p, "0×0".as_bytes()), Ok(true));
    assert_eq!(run(&p, "0à×0é".as_bytes()), Ok(true));
    // After the second number only the end may follow: `×` begins like a ZW character, and is
    // refused on its last byte.
    assert_eq!(run(&p, "0×0×".as_bytes()), Err(5));
    assert_eq!(run(&p, "01×0".as_bytes()), Err(1));
}

/// The oracle's mask after `prefix`, as the texts of the allowed tokens of `tokens`.
fn allowed(p: &Arc<Parser>, tokens: &[&[u8]], prefix: &[u8]) -> Vec<String> {
    let vocab = Arc::new(
        Vocabulary::from_token_bytes(tokens.iter().map(|t| Some(t.to_vec())).collect(), vec![])
            .unwrap(),
    );
    let oracle = Oracle::new(Arc::clone(&vocab));
    let mut state = ParserState::new(p.clone());
    state.commit_bytes(prefix).unwrap();
    let mask = oracle.mask(&mut oracle.create_cache(), &state);
    (0..vocab.len())
        .map(TokenId::from_usize)
        .filter(|&t| mask.contains(t))
        .map(|t| {
            format!(
                "{:?}",
                String::from_utf8_lossy(vocab.token_bytes(t).unwrap())
            )
        })
        .collect()
}

#[test]
fn oracle_masks_inside_the_arrow() {
    let p = parser(KEY_VAL);
    let tokens: &[&[u8]] = &[
        b"\xE2",             // 0: the lead byte of → (and of €)
        b"\xE2\x86",         // 1: two bytes of →
        b"\xE2\x82",         // 2: two bytes of €
        "→".as_bytes(),      // 3
        "€".as_bytes(),      // 4
        b"\x86\x92",         // 5: the rest of →
        b"\x86\x92\xE6\x97", // 6: the rest of →, and most of 日
        b"\x82\xAC",         // 7: the rest of €
        "é".as_bytes(),      // 8
        b"\xC3\xA9\xE2",     // 9: é and the lead byte of →
        b";",                // 10
    ];
    let show = |ids: &[usize]| -> Vec<String> {
        ids.iter()
            .map(|&i| format!("{:?}", String::from_utf8_lossy(tokens[i])))
            .collect()
    };
    // After `é`: whatever begins `→`, or goes on with the KEY.
    assert_eq!(allowed(&p, tokens, "é".as_bytes()), show(&[0, 1, 3, 8, 9]));
    // After `é` + E2: the rest of `→` only.
    assert_eq!(allowed(&p, tokens, b"\xC3\xA9\xE2"), show(&[5, 6]));
    // After `é→`: any VAL character (`é` too), pieces of it included.
    assert_eq!(
        allowed(&p, tokens, "é→".as_bytes()),
        show(&[0, 1, 2, 4, 8, 9])
    );
}

#[test]
fn lark_hex_escapes_are_characters() {
    // Lark's regexes are Python `str` patterns: `\xff` is the character ÿ, never the byte, so
    // the front end gives the lexer UTF-8 patterns (it refuses byte-mode ones).
    let p = parser(r#"start: /\xff+/"#);
    assert_eq!(run(&p, "ÿÿ".as_bytes()), Ok(true));
    assert_eq!(run(&p, b"\xff"), Err(0));
}
