//! Synthetic vocabularies: small, committed, and built to hit the lexing corners, so that tests
//! can run the oracle at every step and need no tokenizer download.
//!
//! Every vocabulary here ends with its end-of-sequence token (the last id); the text tokens come
//! before it in the order given, so a test can name a token by its position.
//!
//! - [`with_eos`] builds one from a list of tokens; [`every_byte`] and [`printable`] are the
//!   usual first ids (a byte-fallback vocabulary has all 256 bytes; printable ASCII keeps a
//!   vocabulary small when the grammar needs nothing else).
//! - [`bytes`], [`bytes_and`] and [`printable_and`] are those first ids, then multi-byte words,
//!   then EOS.
//! - [`corners`] is the word list of the maskers' tests: tokens that span terminals, overlap
//!   keywords, make the `+`/`++`/`+=` family, open and close comments, and split UTF-8
//!   characters.
//! - [`sparse`] holds a few words at the top of the largest vocabulary munch takes.
//! - [`synthetic`] builds the conformance corpus's `synthetic:NAME` vocabularies ([`SYNTHETIC`]).

use std::sync::Arc;

use munch_vocab::{TokenId, Vocabulary};

/// Builds a vocabulary of `tokens` in id order (`None`: a special token, such as a `<pad>`,
/// that is not end-of-sequence), then an end-of-sequence token, the last id.
///
/// # Panics
/// When a token is empty or too long (see [`Vocabulary::from_token_bytes`]).
pub fn with_eos(tokens: impl IntoIterator<Item = Option<Vec<u8>>>) -> Arc<Vocabulary> {
    let mut tokens: Vec<Option<Vec<u8>>> = tokens.into_iter().collect();
    let eos = TokenId::from_usize(tokens.len());
    tokens.push(None);
    Arc::new(Vocabulary::from_token_bytes(tokens, vec![eos]).expect("a valid test vocabulary"))
}

/// The 256 single bytes, in byte order (token `b` is the byte `b`).
pub fn every_byte() -> Vec<Option<Vec<u8>>> {
    (0..=255u8).map(|b| Some(vec![b])).collect()
}

/// The 95 printable ASCII bytes, space to `~`, in byte order.
pub fn printable() -> Vec<Option<Vec<u8>>> {
    (0x20..0x7fu8).map(|b| Some(vec![b])).collect()
}

/// Every single byte (token `b` is the byte `b`) and EOS (id 256).
pub fn bytes() -> Arc<Vocabulary> {
    with_eos(every_byte())
}

/// Every single byte (ids 0–255), then `words`, then EOS.
pub fn bytes_and<W: AsRef<[u8]>>(words: &[W]) -> Arc<Vocabulary> {
    with_eos(every_byte().into_iter().chain(words_of(words)))
}

/// The printable ASCII bytes (ids 0–94), then `words`, then EOS.
pub fn printable_and<W: AsRef<[u8]>>(words: &[W]) -> Arc<Vocabulary> {
    with_eos(printable().into_iter().chain(words_of(words)))
}

/// A vocabulary of the largest size munch takes ([`Vocabulary::MAX_LEN`] ids) holding only
/// `words` and EOS: EOS is the last id, `words[i]` is the id `i + 2` places before it, every
/// other id is a special token. For the builds whose cost must follow the text tokens, not the
/// ids.
pub fn sparse<W: AsRef<[u8]>>(words: &[W]) -> Arc<Vocabulary> {
    let last = Vocabulary::MAX_LEN - 1;
    let mut tokens: Vec<Option<Vec<u8>>> = vec![None; Vocabulary::MAX_LEN];
    for (i, w) in words.iter().enumerate() {
        tokens[last - 1 - i] = Some(w.as_ref().to_vec());
    }
    let eos = TokenId::from_usize(last);
    Arc::new(Vocabulary::from_token_bytes(tokens, vec![eos]).expect("a valid test vocabulary"))
}

fn words_of<W: AsRef<[u8]>>(words: &[W]) -> impl Iterator<Item = Option<Vec<u8>>> + '_ {
    words.iter().map(|w| Some(w.as_ref().to_vec()))
}

/// JSON pieces that span terminals (`":` closes a string and opens a value) or stop inside one.
const JSON_SPANS: &[&[u8]] = &[
    b"\":", b"\",", b"{\"", b"\"}", b"true", b"tru", b"e,", b"null}", b"]]", b"1.5e",
];

/// Numbers cut at odd places, brackets and separators.
const JSON_PIECES: &[&[u8]] = &[
    b"0.", b".5", b"{}", b"[]", b"[{", b"}]", b"\"\\\"", b"\\u00", b"e+1", b"E-", b" :", b": ",
    b", ",
];

/// Pieces of UTF-8 characters, alone and joined to a neighbour (`é` is `c3 a9`, `α` `ce b1`).
pub const UTF8_SPLIT: &[&[u8]] = &[
    b"\xc3",
    b"\xa9",
    b"\xc3\xa9",
    b"\xe6\x97",
    b"\xa5",
    b"\xce\xb1",
    b"\xce",
    b"\xb1\xce\xb2",
];

/// Inhibited terminals (`+` against `++`, `+=`, `+++`), keyword against identifier ties,
/// comments and statement ends, for [`corners`].
const CORNER_CODE: &[&[u8]] = &[
    b"++", b"+=", b"+++", b"if", b"iff", b" if", b"if(", b"else", b" else ", b"/*", b"*/", b"*/ ",
    b"/**/", b"print", b"PRINT", b"Print ", b"); ", b";\n", b"\"\"", b"\"a\"", b"x = ", b" = 1;",
    b"x++;",
];

/// The words of the maskers' synthetic vocabulary, in its id order: JSON pieces that span
/// terminals, the `+`/`++`/`+=` family, keywords against identifiers, comments, pieces of UTF-8
/// characters, whitespace runs, numbers cut at odd places.
pub fn corners() -> Vec<&'static [u8]> {
    [
        JSON_SPANS,
        CORNER_CODE,
        UTF8_SPLIT,
        &[b"   ", b"\n\n", b"-1", b"--"],
        JSON_PIECES,
    ]
    .concat()
}

/// The names of the conformance corpus's synthetic vocabularies (`synthetic:NAME` in its case
/// files).
pub const SYNTHETIC: &[&str] = &["bytes", "code", "utf8"];

/// Multi-byte tokens of `synthetic:code` after the JSON pieces: they make the `+`/`++`/`+=`
/// family, overlap keywords, open and close comments, and end statements. `"if"` is listed twice:
/// two ids with the same bytes must both be in every mask that has one.
const CODE: &[&[u8]] = &[
    b"\"\"", b"\"a\"",
    // Inhibited terminals: `+` against `++`, `+=`, `+++`; `-` against `--`.
    b"++", b"+=", b"+++", b"--", b"x++;", b"x = ", b" = 1;",
    // Keyword against identifier ties.
    b"if", b"iff", b" if", b"if(", b"if", b"else", b" else ", b"print", b"PRINT", b"Print ",
    // Comments, lazy terminals.
    b"/*", b"*/", b"*/ ", b"/**/", b"//", b"// ", b"\n//",
    // Statement ends and whitespace.
    b"); ", b";\n", b"   ", b"\n\n", b"\n\t", b"\t\t", b"{\n", b"\n}", b"()", b"();",
];

/// Pieces of the SynCode languages (Go, Java, C, SQL), last in `synthetic:code`.
const CODE_LANGUAGES: &[&[u8]] = &[
    b"package",
    b"func",
    b"func ",
    b":=",
    b" :=",
    b"return",
    b"return ",
    b"int",
    b"int ",
    b"public",
    b"class",
    b"static",
    b"void",
    b"String",
    b"SELECT",
    b"SELECT ",
    b" FROM",
    b"FROM ",
    b" WHERE ",
    b"select",
    b"ORDER BY",
    b"count(*)",
    b"==",
    b"!=",
    b"<=",
    b">=",
    b"&&",
    b"||",
    b"->",
    b"...",
];

/// Pieces of UTF-8 characters for `synthetic:utf8`: never a whole multi-byte character, so the
/// encoding splits every one of them; some straddle a character boundary or join a character's
/// tail or head to ASCII. Some end on the first bytes of `→`, `×` and `😀`..`😐` right after a
/// whole character: a token that ends where the next character may or may not extend the
/// lexeme (issue 28's `é→日本語`).
const UTF8: &[&[u8]] = &[
    b" \xc3",
    b"\xa9 ",
    b"\xa9\"",
    b"\xe6\x97",
    b"\xa5\xe6",
    b"\xb1\xce",
    b"\xce",
    b"\xf0\x9f",
    b"\xa6\x80",
    b"\x9f\xa6",
    b"\xe2\x80",
    b"\"\xe6",
    b"\xbd\xe6",
    b"\xa9\xe2",
    b"\xe2\x86",
    b"\x92\xe6",
    b"a\xc3",
    b"\x9f\x98",
    b"\x80\xf0\x9f\x98",
];

/// The conformance corpus's synthetic vocabulary `name` (one of [`SYNTHETIC`]), or `None`.
///
/// Id 0 is a special token that is not end-of-sequence (no mask may allow it); the last id is
/// the end-of-sequence token; text tokens lie between:
///
/// - `bytes`: the 256 single bytes;
/// - `code`: every byte, then JSON pieces that span terminals, the `+`/`++`/`+=` family, keyword
///   ties, comments, statement ends, pieces of UTF-8 characters and pieces of Go, Java, C and
///   SQL;
/// - `utf8`: every byte, then pieces of UTF-8 characters that are never a whole multi-byte
///   character.
pub fn synthetic(name: &str) -> Option<Arc<Vocabulary>> {
    let words: Vec<&[u8]> = match name {
        "bytes" => Vec::new(),
        "code" => [
            JSON_SPANS,
            &[b"-1"],
            JSON_PIECES,
            CODE,
            UTF8_SPLIT,
            CODE_LANGUAGES,
        ]
        .concat(),
        "utf8" => UTF8.to_vec(),
        _ => return None,
    };
    let special = std::iter::once(None);
    Some(with_eos(
        special.chain(every_byte()).chain(words_of(&words)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_synthetic_vocabulary_builds_and_spells_any_text() {
        for name in SYNTHETIC {
            let v = synthetic(name).unwrap();
            assert_eq!(v.eos(), &[TokenId::from_usize(v.len() - 1)]);
            assert!(v.is_special(TokenId::from_usize(0)));
            let text = "if (x) { y = \"é日🦀\"; }";
            let tokens = v.encode(text).unwrap();
            let spelled: Vec<u8> = tokens
                .iter()
                .flat_map(|&t| v.token_bytes(t).unwrap().to_vec())
                .collect();
            assert_eq!(spelled, text.as_bytes());
        }
        assert!(synthetic("nope").is_none());
    }

    #[test]
    fn utf8_splits_every_multibyte_character() {
        let v = synthetic("utf8").unwrap();
        let text = "é日🦀 αβ";
        for t in v.encode(text).unwrap() {
            let bytes = v.token_bytes(t).unwrap();
            // No token holds a whole character that is more than one byte long.
            assert!(
                std::str::from_utf8(bytes).map_or(true, |s| s.is_ascii()),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn eos_is_last_and_words_follow_the_first_ids() {
        let v = bytes_and(&["ab", "c d"]);
        assert_eq!(v.len(), 259);
        assert_eq!(v.token_bytes(TokenId::from(256)), Some(&b"ab"[..]));
        assert_eq!(v.eos(), &[TokenId::from(258)]);
        let v = printable_and(&[b"\n"]);
        assert_eq!(v.token_bytes(TokenId::from(0)), Some(&b" "[..]));
        assert_eq!(v.token_bytes(TokenId::from(95)), Some(&b"\n"[..]));
        assert_eq!(bytes().eos(), &[TokenId::from(256)]);
    }
}
