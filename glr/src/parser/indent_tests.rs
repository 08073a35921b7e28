//! The indenter inside commit: Lark's `_INDENT`/`_DEDENT` stream, brackets, tabs, an
//! inconsistent dedent rejected at its byte, the final dedents, rollback.

use std::sync::Arc;

use crate::lark::{load, LoadConfig};
use crate::parser::{CommitErrorKind, Parser, ParserConfig, ParserState, Postlex};

const GRAMMAR: &str = r#"
start: (_NEWLINE | stmt)*
stmt: simple | compound
simple: expr _NEWLINE
compound: "if" expr ":" suite
suite: simple | _NEWLINE _INDENT stmt+ _DEDENT
expr: NAME | "(" expr ("," expr)* ")" | "[" "]"
NAME: /[a-z]+/
_NEWLINE: ( /\r?\n[\t ]*/ | COMMENT )+
COMMENT: /#[^\n]*/
%ignore /[\t ]+/
%ignore COMMENT
%declare _INDENT _DEDENT
"#;

fn parser() -> Arc<Parser> {
    indented_parser(GRAMMAR)
}

/// The parser of Lark grammar `source` with Lark's `PythonIndenter`.
pub(crate) fn indented_parser(source: &str) -> Arc<Parser> {
    let g = load(source.as_bytes(), &LoadConfig::default()).unwrap();
    let config = ParserConfig {
        postlex: Postlex::Python,
        ..ParserConfig::default()
    };
    Arc::new(Parser::new(&g, &config).unwrap())
}

/// Whether the whole text is accepted, committed byte by byte.
fn accepts(text: &str) -> bool {
    let mut s = ParserState::new(parser());
    for b in text.bytes() {
        if s.commit_bytes(&[b]).is_err() {
            return false;
        }
    }
    s.is_accepting()
}

#[test]
fn blocks_open_and_close() {
    assert!(accepts("a\n"));
    assert!(accepts("if a:\n    b\nc\n"));
    assert!(accepts("if a:\n  if b:\n    c\n  d\ne\n"));
    assert!(
        accepts("if a:\n  if b:\n    c\n"),
        "final dedents at the end"
    );
    assert!(accepts("if a:\n    b\n"));
    assert!(!accepts("if a:\nb\n"), "a block needs an indent");
    assert!(!accepts("a\n    b\n"), "an unexpected indent");
    assert!(accepts("\n\n  \na\n"), "blank lines are one newline lexeme");
}

/// A block whose last statement ends without a newline: the text may end right after it, the
/// final DEDENT closing the block (Lark's indenter emits it at the end of input).
#[test]
fn a_dedent_may_come_right_before_the_end() {
    const G: &str = r#"
start: compound
compound: "if" NAME ":" suite
suite: _NEWLINE _INDENT NAME _DEDENT
NAME: /[a-z]+/
_NEWLINE: /(\r?\n[\t ]*)+/
%ignore " "
%declare _INDENT _DEDENT
"#;
    let g = load(G.as_bytes(), &LoadConfig::default()).unwrap();
    let config = ParserConfig {
        postlex: Postlex::Python,
        ..ParserConfig::default()
    };
    let mut s = ParserState::new(Arc::new(Parser::new(&g, &config).unwrap()));
    for b in "if a:\n  b".bytes() {
        s.commit_bytes(&[b]).unwrap();
    }
    assert!(s.is_accepting());
    assert!(s.clone().commit_bytes(b"c").is_ok(), "b may still grow");
    assert!(s.commit_bytes(b":").is_err());
}

#[test]
fn tabs_count_eight() {
    assert!(accepts("if a:\n\tb\n        c\n"));
    assert!(!accepts("if a:\n\tb\n    c\n"));
}

#[test]
fn brackets_suspend_indentation() {
    assert!(accepts("(a,\n  b,\n\n c)\n"));
    assert!(accepts("if a:\n    (b,\nc)\n    d\n"));
    assert!(!accepts("(a,\n b\n"));
}

#[test]
fn comments_and_their_spaces() {
    assert!(accepts("if a:\n    b\n    # c\n    d\n"));
    assert!(accepts("a\n# c\n"));
    // Without a last newline the text after the last '\n' is "# c": its space counts, an
    // unexpected indent (Lark says the same).
    assert!(!accepts("a\n# c"));
    assert!(accepts("a\n#c"));
    // A newline token that is a comment alone has no '\n': Lark's indenter fails on it.
    assert!(!accepts("a # c"));
}

#[test]
fn an_inconsistent_dedent_is_rejected_at_its_byte() {
    let mut s = ParserState::new(parser());
    s.commit_bytes(b"if a:\n    if b:\n        c\n").unwrap();
    // Width 2 matches no level, but more spaces could still come.
    s.commit_bytes(b"  ").unwrap();
    let err = s.commit_bytes(b"d").unwrap_err();
    match err.kind() {
        CommitErrorKind::Rejected { offset, byte, .. } => {
            assert_eq!((*offset, *byte), (0, Some(b'd')));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        s.commit_bytes(b"  d\n").is_ok(),
        "width 4 dedents one level"
    );
    assert!(s.is_accepting());
}

#[test]
fn acceptance_needs_the_final_dedents_and_rollback_restores_contexts() {
    let mut s = ParserState::new(parser());
    s.commit_bytes(b"if a:\n").unwrap();
    s.commit_bytes(b"    b\n").unwrap();
    assert!(s.is_accepting());
    s.commit_bytes(b"    ").unwrap();
    s.commit_bytes(b"c\n").unwrap();
    assert!(s.is_accepting());
    s.rollback(2).unwrap();
    // Back at the start of a line inside the block: a deeper line is refused, a level is not.
    let mut deeper = s.clone();
    assert!(deeper.commit_bytes(b"      c\n").is_err());
    let mut same = s.clone();
    same.commit_bytes(b"    c\n").unwrap();
    assert!(same.is_accepting());
    let mut out = s.clone();
    out.commit_bytes(b"c\n").unwrap();
    assert!(out.is_accepting());
}

#[test]
fn a_grammar_without_the_terminals_is_a_typed_error() {
    let g = load(br#"start: "a""#, &LoadConfig::default()).unwrap();
    let config = ParserConfig {
        postlex: Postlex::Python,
        ..ParserConfig::default()
    };
    let err = Parser::new(&g, &config).unwrap_err();
    assert!(
        matches!(err.kind(), crate::parser::ParserBuildErrorKind::Postlex(e) if e.missing.len() == 3),
        "{err}"
    );
    assert!(err.to_string().contains("_INDENT"), "{err}");
}

/// Acceptance after every prefix of indented texts is the final `_DEDENT`s shifted from every
/// head with an empty lexeme, then the end of input, as the GSS answers it: the states whose
/// top has no action on `_DEDENT` (most, inside a block) are refused without reading the GSS,
/// and the answer is the same.
#[test]
fn acceptance_inside_blocks_is_the_dedents_then_the_end() {
    let parser = parser();
    let dedent = parser.indenter().unwrap().dedent();
    let mut cache = crate::parser::ShiftCache::new();
    let (mut in_blocks, mut accepted_in_blocks, mut no_dedent) = (0, 0, 0);
    let texts = [
        "if a:\n    b\n    if c:\n        d\n    e\nf\n",
        "if a:\n  if b:\n    (c,\n d)\n  # e\n  f\n",
        "if a:\n\tb\n        c\n",
    ];
    for text in texts {
        let mut s = ParserState::new(Arc::clone(&parser));
        for b in text.bytes() {
            s.commit_bytes(&[b]).unwrap();
            let mut want = false;
            for h in s.heads().filter(|h| h.lexeme_is_empty()) {
                let levels = h.indent().levels().len();
                if levels > 0 {
                    in_blocks += 1;
                    let top = h.node().state();
                    no_dedent +=
                        usize::from(parser.tables().actions_at(top, dedent.as_u32()).is_empty());
                }
                let mut frontier = vec![h.node().clone()];
                for _ in 0..levels {
                    frontier = parser.shift_frontier(&frontier, dedent).unwrap().to_vec();
                }
                let accepts = frontier.iter().any(|n| parser.can_accept(n, &mut cache));
                accepted_in_blocks += usize::from(accepts && levels > 0);
                want |= accepts;
            }
            assert_eq!(s.is_accepting(), want, "{text:?} at {s:?}");
        }
    }
    assert!(no_dedent > 10, "{no_dedent} of {in_blocks} heads in blocks");
    assert!(accepted_in_blocks > 3, "{accepted_in_blocks} accepted");
}
