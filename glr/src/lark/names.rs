//! Lark's names for anonymous string literals: `"("` → `LPAR`, `"if"` → `IF`, else
//! `__ANON_n`.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, ClassUnicode, HirKind};

/// The name Lark gives a one- or two-character punctuation literal.
pub(crate) fn punctuation_name(value: &str) -> Option<&'static str> {
    Some(match value {
        "." => "DOT",
        "," => "COMMA",
        ":" => "COLON",
        ";" => "SEMICOLON",
        "+" => "PLUS",
        "-" => "MINUS",
        "*" => "STAR",
        "/" => "SLASH",
        "\\" => "BACKSLASH",
        "|" => "VBAR",
        "?" => "QMARK",
        "!" => "BANG",
        "@" => "AT",
        "#" => "HASH",
        "$" => "DOLLAR",
        "%" => "PERCENT",
        "^" => "CIRCUMFLEX",
        "&" => "AMPERSAND",
        "_" => "UNDERSCORE",
        "<" => "LESSTHAN",
        ">" => "MORETHAN",
        "=" => "EQUAL",
        "\"" => "DBLQUOTE",
        "'" => "QUOTE",
        "`" => "BACKQUOTE",
        "~" => "TILDE",
        "(" => "LPAR",
        ")" => "RPAR",
        "{" => "LBRACE",
        "}" => "RBRACE",
        "[" => "LSQB",
        "]" => "RSQB",
        "\n" => "NEWLINE",
        "\r\n" => "CRLF",
        "\t" => "TAB",
        " " => "SPACE",
        _ => return None,
    })
}

/// A Unicode class built from `regex-syntax`'s tables.
fn class(pattern: &str) -> ClassUnicode {
    let hir = regex_syntax::parse(pattern).expect("static class parses");
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => c.clone(),
        _ => ClassUnicode::empty(),
    }
}

fn contains(class: &ClassUnicode, c: char) -> bool {
    let ranges = class.ranges();
    let i = ranges.partition_point(|r| r.end() < c);
    ranges.get(i).is_some_and(|r| r.start() <= c)
}

/// Lark's identifier test (`is_id_start(value[0]) and is_id_continue(value)`): letters, marks
/// and connector punctuation, then also decimal and letter numbers.
pub(crate) fn is_identifier(value: &str) -> bool {
    static START: OnceLock<ClassUnicode> = OnceLock::new();
    static CONTINUE: OnceLock<ClassUnicode> = OnceLock::new();
    let start = START.get_or_init(|| class(r"[\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{Mn}\p{Mc}\p{Pc}_]"));
    let cont = CONTINUE
        .get_or_init(|| class(r"[\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{Mn}\p{Mc}\p{Pc}\p{Nd}\p{Nl}_]"));
    let mut chars = value.chars();
    chars.next().is_some_and(|c| contains(start, c)) && chars.all(|c| contains(cont, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_identifier("if"));
        assert!(is_identifier("_x1"));
        assert!(is_identifier("été"));
        assert!(!is_identifier("1x"));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier(""));
    }

    #[test]
    fn punctuation() {
        assert_eq!(punctuation_name("("), Some("LPAR"));
        assert_eq!(punctuation_name("\r\n"), Some("CRLF"));
        assert_eq!(punctuation_name("=="), None);
    }
}
