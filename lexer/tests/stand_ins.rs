//! Stand-ins (`Lexer::with_stand_ins`): a literal that wins a tie against exactly one regex of
//! its priority is accepted as a terminal of its own, which names the literal and the regex;
//! every other lexeme is accepted as before.

use munch_lexer::dfa::{Lexer, LexerConfig, StandIn, TerminalSpec};
use munch_lexer::TerminalId;

mod common;
use common::{lit, re, walk, with_priority};

fn id(i: usize) -> TerminalId {
    TerminalId::from_usize(i)
}

/// The lexer of `specs` with every literal offered a stand-in.
fn with_stand_ins(specs: &[TerminalSpec]) -> Lexer {
    let literals: Vec<TerminalId> = (0..specs.len()).map(id).collect();
    Lexer::with_stand_ins(specs.to_vec(), &LexerConfig::default(), &literals).unwrap()
}

/// The terminals accepted after `text` read from the start.
fn accepted(lexer: &Lexer, text: &str) -> Vec<TerminalId> {
    lexer.accepted(walk(lexer, text.as_bytes())).to_vec()
}

#[test]
fn a_keyword_that_a_name_also_matches_is_its_stand_in() {
    let specs = [
        lit("IF", "if"),
        lit("PLUS", "+"),
        re("NAME", "[a-z_]+"),
        lit("US", "_"),
    ];
    let lexer = with_stand_ins(&specs);
    // Two stand-ins, numbered after the four terminals in the literals' order.
    let want = [
        StandIn {
            terminal: id(4),
            literal: id(0),
            regex: id(2),
        },
        StandIn {
            terminal: id(5),
            literal: id(3),
            regex: id(2),
        },
    ];
    assert_eq!(lexer.stand_ins(), want);
    assert_eq!(lexer.terminal_len(), 6);
    assert_eq!(lexer.terminal(id(4)).name, "IF");
    assert!(lexer.terminal(id(4)).hir.is_none());
    assert_eq!(accepted(&lexer, "if"), [id(4)]);
    assert_eq!(accepted(&lexer, "_"), [id(5)]);
    // No regex matches `+`; `iff` and `i` are names.
    assert_eq!(accepted(&lexer, "+"), [id(1)]);
    assert_eq!(accepted(&lexer, "iff"), [id(2)]);
    assert_eq!(accepted(&lexer, "i"), [id(2)]);
    // Without stand-ins the literal wins, as before.
    let plain = Lexer::new(&specs, &LexerConfig::default()).unwrap();
    assert!(plain.stand_ins().is_empty());
    assert_eq!(plain.terminal_len(), 4);
    assert_eq!(accepted(&plain, "if"), [id(0)]);
}

#[test]
fn a_literal_against_several_regexes_or_none_of_its_priority_is_itself() {
    // Two regexes of the literal's priority match `ab`: no stand-in.
    let lexer = with_stand_ins(&[lit("AB", "ab"), re("A", "[a-b]+"), re("B", "[a-z]+")]);
    assert!(lexer.stand_ins().is_empty());
    assert_eq!(accepted(&lexer, "ab"), [id(0)]);
    // The literal wins by priority, not by being a literal: no stand-in.
    let lexer = with_stand_ins(&[with_priority(lit("AB", "ab"), 2), re("W", "[a-z]+")]);
    assert!(lexer.stand_ins().is_empty());
    assert_eq!(accepted(&lexer, "ab"), [id(0)]);
    // A regex of higher priority wins the tie: the literal is never accepted.
    let lexer = with_stand_ins(&[lit("AB", "ab"), with_priority(re("W", "[a-z]+"), 2)]);
    assert!(lexer.stand_ins().is_empty());
    assert_eq!(accepted(&lexer, "ab"), [id(1)]);
}

#[test]
fn only_the_literals_offered_get_stand_ins() {
    let specs = [lit("IF", "if"), lit("DO", "do"), re("NAME", "[a-z]+")];
    let lexer =
        Lexer::with_stand_ins(specs.to_vec(), &LexerConfig::default(), &[id(1), id(2)]).unwrap();
    // `NAME` is not a literal; `IF` was not offered.
    assert_eq!(
        lexer.stand_ins(),
        [StandIn {
            terminal: id(3),
            literal: id(1),
            regex: id(2),
        }]
    );
    assert_eq!(accepted(&lexer, "if"), [id(0)]);
    assert_eq!(accepted(&lexer, "do"), [id(3)]);
}
