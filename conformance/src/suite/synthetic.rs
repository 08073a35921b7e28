//! Small vocabularies that hit the lexing corners, for the oracle at every step.

use munch_lexer::vocab::Vocabulary;
use munch_lexer::TokenId;

/// The names of the synthetic vocabularies (`synthetic:NAME` in case files).
pub const SYNTHETIC: &[&str] = &["bytes", "code", "utf8"];

/// Multi-byte tokens of `synthetic:code`: they span terminals, overlap keywords, make the
/// `+`/`++`/`+=` family, open and close comments, split UTF-8 characters, and carry pieces of
/// the SynCode languages. `"if"` is listed twice: two ids with the same bytes must both be in
/// every mask that has one.
const CODE: &[&[u8]] = &[
    // JSON pieces and tokens spanning terminals.
    b"\":",
    b"\",",
    b"{\"",
    b"\"}",
    b"true",
    b"tru",
    b"e,",
    b"null}",
    b"]]",
    b"1.5e",
    b"-1",
    b"0.",
    b".5",
    b"{}",
    b"[]",
    b"[{",
    b"}]",
    b"\"\\\"",
    b"\\u00",
    b"e+1",
    b"E-",
    b" :",
    b": ",
    b", ",
    b"\"\"",
    b"\"a\"",
    // Inhibited terminals: `+` against `++`, `+=`, `+++`; `-` against `--`.
    b"++",
    b"+=",
    b"+++",
    b"--",
    b"x++;",
    b"x = ",
    b" = 1;",
    // Keyword against identifier ties.
    b"if",
    b"iff",
    b" if",
    b"if(",
    b"if",
    b"else",
    b" else ",
    b"print",
    b"PRINT",
    b"Print ",
    // Comments, lazy terminals.
    b"/*",
    b"*/",
    b"*/ ",
    b"/**/",
    b"//",
    b"// ",
    b"\n//",
    // Statement ends and whitespace.
    b"); ",
    b";\n",
    b"   ",
    b"\n\n",
    b"\n\t",
    b"\t\t",
    b"{\n",
    b"\n}",
    b"()",
    b"();",
    // UTF-8 split across tokens.
    b"\xc3",
    b"\xa9",
    b"\xc3\xa9",
    b"\xe6\x97",
    b"\xa5",
    b"\xce\xb1",
    b"\xce",
    b"\xb1\xce\xb2",
    // Go, Java, C, SQL pieces.
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
/// tail to ASCII.
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
];

/// The synthetic vocabulary `name` (one of [`SYNTHETIC`]), or `None`.
///
/// Id 0 is a special token that is not end-of-sequence (no mask may allow it); the last id is
/// the end-of-sequence token; text tokens lie between.
pub fn synthetic(name: &str) -> Option<Vocabulary> {
    let mut tokens: Vec<Option<Vec<u8>>> = vec![None];
    match name {
        "bytes" => tokens.extend((0..=255u8).map(|b| Some(vec![b]))),
        "code" => {
            tokens.extend((0..=255u8).map(|b| Some(vec![b])));
            tokens.extend(CODE.iter().map(|t| Some(t.to_vec())));
        }
        "utf8" => {
            tokens.extend((0..=255u8).map(|b| Some(vec![b])));
            tokens.extend(UTF8.iter().map(|t| Some(t.to_vec())));
        }
        _ => return None,
    }
    let eos = TokenId::from_usize(tokens.len());
    tokens.push(None);
    // The lists above are valid by construction (no empty token, EOS is special).
    Some(Vocabulary::from_token_bytes(tokens, vec![eos]).expect("a valid synthetic vocabulary"))
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
}
