//! How a token's string in `tokenizer.json` spells its bytes.
//!
//! Two conventions cover the tokenizers munch targets:
//!
//! - **Byte-level** (GPT-2, Llama 3, Qwen, gpt-oss): every byte is written as one printable
//!   character. Bytes that are printable Latin-1 (`!`..=`~`, `¡`..=`¬`, `®`..=`ÿ`) stand for
//!   themselves; the other 68 bytes, in increasing order, are written as U+0100, U+0101, …
//!   (so a space is `Ġ` U+0120 and a newline `Ċ` U+010A).
//! - **SentencePiece** (Llama 2, Gemma): `▁` (U+2581) is a space, `<0xNN>` is the byte-fallback
//!   token for the single byte `NN`, and everything else is UTF-8 text.
//!
//! The byte-level table is a few lines of arithmetic, written here rather than taken from the
//! `tokenizers` crate, which keeps it private.

/// The SentencePiece whitespace mark, U+2581 LOWER ONE EIGHTH BLOCK.
pub(crate) const SP_SPACE: char = '\u{2581}';

/// Whether byte-level BPE writes byte `b` as itself.
#[inline]
const fn is_printable(b: u8) -> bool {
    matches!(b, 0x21..=0x7e | 0xa1..=0xac | 0xae..=0xff)
}

/// The character byte-level BPE writes for byte `b` (the inverse of [`char_to_byte`]).
#[cfg(test)]
pub(crate) fn byte_to_char(b: u8) -> char {
    if is_printable(b) {
        return char::from(b);
    }
    // Rank of `b` among the non-printable bytes: 0x00..=0x20, 0x7f..=0xa0, 0xad.
    let rank = match b {
        0x00..=0x20 => b as u32,
        0x7f..=0xa0 => 33 + (b - 0x7f) as u32,
        _ => 67, // 0xad, the only other non-printable byte
    };
    char::from_u32(256 + rank).unwrap_or('\u{100}')
}

/// The byte a byte-level character stands for, or `None` if `c` is not in the alphabet.
pub(crate) fn char_to_byte(c: char) -> Option<u8> {
    let c = c as u32;
    if c < 256 {
        let b = c as u8;
        return is_printable(b).then_some(b);
    }
    match c - 256 {
        rank @ 0..=32 => Some(rank as u8),
        rank @ 33..=66 => Some(0x7f + (rank - 33) as u8),
        67 => Some(0xad),
        _ => None,
    }
}

/// The bytes of a byte-level token string, or the first character outside the alphabet.
pub(crate) fn byte_level_bytes(token: &str) -> Result<Vec<u8>, char> {
    token.chars().map(|c| char_to_byte(c).ok_or(c)).collect()
}

/// The byte of a SentencePiece byte-fallback token `<0xNN>` (two hex digits), if `token` is one.
pub(crate) fn byte_fallback(token: &str) -> Option<u8> {
    let hex = token.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

/// The bytes of a SentencePiece token string: `▁` → space, everything else as UTF-8.
/// Byte-fallback tokens are handled by the caller with [`byte_fallback`].
pub(crate) fn sentencepiece_bytes(token: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(token.len());
    for c in token.chars() {
        if c == SP_SPACE {
            out.push(b' ');
        } else {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_table_is_a_bijection_on_256_characters() {
        let mut seen = std::collections::HashSet::new();
        for b in 0..=255u8 {
            let c = byte_to_char(b);
            assert!(seen.insert(c), "byte {b:#x} shares its character");
            assert_eq!(char_to_byte(c), Some(b));
        }
        // Known characters of the GPT-2 alphabet.
        assert_eq!(char_to_byte('Ġ'), Some(b' '));
        assert_eq!(char_to_byte('Ċ'), Some(b'\n'));
        assert_eq!(char_to_byte('ĉ'), Some(b'\t'));
        assert_eq!(char_to_byte('Ā'), Some(0));
        assert_eq!(char_to_byte('ġ'), Some(0x7f));
        assert_eq!(char_to_byte('Ń'), Some(0xad));
        assert_eq!(char_to_byte('a'), Some(b'a'));
        assert_eq!(char_to_byte('é'), Some(0xe9));
        // Outside the alphabet: a raw space, a raw control byte, U+0144 and above.
        assert_eq!(char_to_byte(' '), None);
        assert_eq!(char_to_byte('\n'), None);
        assert_eq!(char_to_byte('\u{ad}'), None);
        assert_eq!(char_to_byte('ń'), None);
        assert_eq!(char_to_byte('▁'), None);
        assert_eq!(byte_level_bytes("ĠhelloĊ"), Ok(b" hello\n".to_vec()));
        // "é" as UTF-8 is C3 A9, written "Ã©".
        assert_eq!(byte_level_bytes("Ã©"), Ok("é".as_bytes().to_vec()));
        assert_eq!(byte_level_bytes("a b"), Err(' '));
    }

    #[test]
    fn sentencepiece_pieces() {
        assert_eq!(byte_fallback("<0x0A>"), Some(b'\n'));
        assert_eq!(byte_fallback("<0xff>"), Some(0xff));
        assert_eq!(byte_fallback("<0x0A"), None);
        assert_eq!(byte_fallback("<0xA>"), None);
        assert_eq!(byte_fallback("<0x0AB>"), None);
        assert_eq!(byte_fallback("<0x+A>"), None);
        assert_eq!(sentencepiece_bytes("▁the"), b" the");
        assert_eq!(sentencepiece_bytes("▁▁"), b"  ");
        assert_eq!(sentencepiece_bytes("日本"), "日本".as_bytes());
    }
}
