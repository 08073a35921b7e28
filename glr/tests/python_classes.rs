//! Lark regexes mean what Python's `re` means: `\w` and `\s` follow Python's definitions, not
//! regex-syntax's. Expected values were checked with Python 3.11's `re.fullmatch`.

use munch_glr::lark::{load, LoadConfig};
use munch_lexer::dfa::{Lexer, LexerConfig};

fn lexer(pattern: &str) -> Lexer {
    let source = format!("start: T\nT: /{pattern}/\n");
    let grammar = load(source.as_bytes(), &LoadConfig::default()).unwrap();
    Lexer::new(&grammar.terminal_specs(), &LexerConfig::default()).unwrap()
}

fn matches(lexer: &Lexer, text: &str) -> bool {
    let s = lexer.walk(lexer.start(), text.as_bytes());
    !lexer.is_dead(s) && !lexer.accepted(s).is_empty()
}

#[test]
fn word_class_is_pythons() {
    let outside = lexer(r"\w");
    let inside = lexer(r"[\w]");
    let negated = lexer(r"[^\W]");
    for (ch, python) in [
        ("a", true),
        ("é", true),
        ("1", true),
        ("_", true),
        ("\u{0663}", true),  // ARABIC-INDIC DIGIT THREE (Nd)
        ("\u{2167}", true),  // ROMAN NUMERAL EIGHT (Nl)
        ("\u{00bd}", true),  // VULGAR FRACTION ONE HALF (No)
        ("\u{0301}", false), // COMBINING ACUTE ACCENT (Mn): regex-syntax's \w has it
        ("\u{ff3f}", false), // FULLWIDTH LOW LINE (Pc): regex-syntax's \w has it
        ("\u{200d}", false), // ZERO WIDTH JOINER (Join_Control): regex-syntax's \w has it
    ] {
        for (name, l) in [("\\w", &outside), ("[\\w]", &inside), ("[^\\W]", &negated)] {
            assert_eq!(matches(l, ch), python, "{name} on {ch:?}");
        }
    }
}

#[test]
fn space_class_is_pythons() {
    let outside = lexer(r"\s");
    let not_space = lexer(r"\S");
    for (ch, python) in [
        ("\u{1c}", true), // FILE SEPARATOR: Python's \s has it, White_Space does not
        ("\u{1f}", true),
        (" ", true),
        ("\u{85}", true),
        ("\u{3000}", true),
        ("\u{200b}", false),
    ] {
        assert_eq!(matches(&outside, ch), python, "\\s on {ch:?}");
        assert_eq!(matches(&not_space, ch), !python, "\\S on {ch:?}");
    }
}
