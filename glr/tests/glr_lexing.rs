//! The lexer-integrated parser on grammars LALR(1) cannot handle and on the lexing rules:
//! ambiguity, dangling else, declaration/expression ambiguity, ties, a non-LALR LR(1) grammar,
//! inhibited terminals (`+` vs `++`, keywords vs names), lazy comments; and committing byte by
//! byte must equal committing all at once.

use std::sync::Arc;

use munch_glr::lr::LrState;
use munch_glr::parser::{CommitErrorKind, Parser, ParserConfig, ParserState};
use munch_lexer::TerminalId;
use munch_testkit::dsl;
use munch_testkit::grammar::dsl_parser as parser;

/// (commit succeeded, live, accepting) committing `text` at once, checked equal to committing it
/// byte by byte.
fn run(p: &Arc<Parser>, text: &str) -> (bool, bool, bool) {
    let mut whole = ParserState::new(p.clone());
    let ok = whole.commit_bytes(text.as_bytes()).is_ok();
    let at_once = (ok, whole.is_live(), whole.is_accepting());
    let mut bytewise = ParserState::new(p.clone());
    let mut ok = true;
    for &b in text.as_bytes() {
        if bytewise.commit_bytes(&[b]).is_err() {
            ok = false;
            break;
        }
    }
    let by_byte = if ok {
        (true, bytewise.is_live(), bytewise.is_accepting())
    } else {
        (false, whole.is_live(), whole.is_accepting())
    };
    assert_eq!(at_once, by_byte, "{text:?}: at once vs byte by byte");
    at_once
}

fn accepts(p: &Arc<Parser>, text: &str) -> bool {
    let (ok, _, acc) = run(p, text);
    ok && acc
}

fn prefix_ok(p: &Arc<Parser>, text: &str) -> bool {
    let (ok, live, _) = run(p, text);
    ok && live
}

#[test]
fn ambiguous_expressions() {
    let p = parser("e -> e '+' e | e '*' e | '(' e ')' | 'a'");
    assert!(!p.conflicts().is_empty());
    for t in ["a", "a+a", "a+a*a", "a*a+a*(a+a)*a"] {
        assert!(accepts(&p, t), "{t}");
    }
    for t in ["", "a+", "(a", "a*("] {
        assert!(!accepts(&p, t) && prefix_ok(&p, t), "{t}");
    }
    for t in ["+a", "a)", "aa", "()"] {
        assert!(!prefix_ok(&p, t), "{t}");
    }
}

#[test]
fn dangling_else() {
    let p = parser("s -> 'if' c 'then' s | 'if' c 'then' s 'else' s | 'x'\nc -> 'c'\n%ignore / +/");
    assert_eq!(p.conflicts().len(), 1, "{}", p.tables().render_conflicts());
    assert!(accepts(&p, "if c then if c then x else x"));
    assert!(accepts(&p, "if c then if c then x else x else x"));
    assert!(!accepts(&p, "if c then x else x else x"));
    assert!(prefix_ok(&p, "if c then if c then x else"));
}

#[test]
fn declaration_or_expression() {
    // `a * b;` is a pointer declaration and a multiplication: both parses are kept.
    let p = parser(
        "prog -> stmt+\nstmt -> decl | expr ';'\ndecl -> NAME '*' NAME ';'\n\
         expr -> expr '*' expr | NAME\nNAME: /[a-z]+/\n%ignore / +/",
    );
    assert!(accepts(&p, "a * b;"));
    assert!(accepts(&p, "a * b; a * b * c;"));
    assert!(!accepts(&p, "a * b"));
    assert!(prefix_ok(&p, "a * b"));
    let mut s = ParserState::new(p.clone());
    s.commit_bytes(b"a * b").unwrap();
    assert!(s.head_len() >= 2, "both readings stay alive: {s:?}");
}

#[test]
fn keyword_and_identifier_ties() {
    // A literal beats a regex on the same lexeme where the parser takes the literal: at the
    // start `if` is IF, so `if` alone is refused; after IF only a NAME follows, and there `if`
    // is a NAME (Lark's contextual lexer).
    let source = "s -> 'if' NAME | NAME\nNAME: /[a-z]+/\n%ignore / +/";
    let p = parser(source);
    assert!(accepts(&p, "if x"));
    assert!(accepts(&p, "iff"));
    assert!(accepts(&p, "ifx"));
    assert!(!accepts(&p, "if"));
    assert!(accepts(&p, "if if"));
    assert!(!prefix_ok(&p, "if if if"));
    // The tables read the stand-in as IF in every state with an action on IF, else as NAME.
    let [stand_in] = p.lexer().stand_ins() else {
        panic!("one stand-in: {:?}", p.lexer().stand_ins());
    };
    let t = p.tables();
    let mut as_literal = 0;
    for s in 0..t.state_len() {
        let s = LrState::new(s).unwrap();
        let acts = |k: TerminalId| {
            t.actions_at(s, k.as_u32())
                .iter()
                .copied()
                .collect::<Vec<_>>()
        };
        let literal = acts(stand_in.literal);
        let want = if literal.is_empty() {
            acts(stand_in.regex)
        } else {
            as_literal += 1;
            literal
        };
        assert_eq!(acts(stand_in.terminal), want, "{s:?}");
    }
    assert!(as_literal > 0 && as_literal < t.state_len());
    // What an error lists is the stand-in as it is read there: after `if` only a name.
    let name_of = |t: TerminalId| p.lexer().terminal(t).name.clone();
    let (literal, regex) = (name_of(stand_in.literal), name_of(stand_in.regex));
    let mut s = ParserState::new(p.clone());
    s.commit_bytes(b"if ").unwrap();
    assert!(s.expected().contains(&regex), "{:?}", s.expected());
    assert!(!s.expected().contains(&literal), "{:?}", s.expected());
    let s = ParserState::new(p.clone());
    assert!(s.expected().contains(&literal), "{:?}", s.expected());
    // Without contextual literals `if` is only IF: `if if` may still become `if iff`, and a
    // space ends the second `if`, which the parser cannot take.
    let config = ParserConfig {
        contextual_literals: false,
        ..ParserConfig::default()
    };
    let p = Arc::new(Parser::new(&dsl::parse(source).unwrap(), &config).unwrap());
    assert!(accepts(&p, "if x"));
    assert!(!accepts(&p, "if"));
    assert!(prefix_ok(&p, "if if"));
    assert!(!prefix_ok(&p, "if if "));
    // Two regexes still tied on a lexeme: both reach the parser, the one that parses survives.
    let p = parser("s -> A 'x' | 'y' B\nA: /[a-c]+/\nB: /[b-d]+/\n%ignore / +/");
    assert!(accepts(&p, "bb x"));
    assert!(accepts(&p, "y bb"));
    assert!(accepts(&p, "y dd"));
    assert!(!prefix_ok(&p, "dd"));
}

#[test]
fn lr1_grammar_that_is_not_lalr1() {
    let p = parser("s -> 'a' e 'c' | 'a' f 'd' | 'b' f 'c' | 'b' e 'd'\ne -> 'e'\nf -> 'e'");
    assert!(
        p.conflicts().iter().any(|c| c.kind() == "reduce/reduce"),
        "{}",
        p.tables().render_conflicts()
    );
    for t in ["aec", "aed", "bec", "bed"] {
        assert!(accepts(&p, t), "{t}");
    }
    for t in ["aee", "ae", "bc"] {
        assert!(!accepts(&p, t), "{t}");
    }
}

#[test]
fn plus_and_plus_plus() {
    let p = parser("s -> '+' '+' 'a' | '++' 'b'\n%ignore / +/");
    assert!(accepts(&p, "++b"));
    // Longest match: `++` is one lexeme, so `++a` is not `+ + a`.
    assert!(!prefix_ok(&p, "++a"));
    assert!(accepts(&p, "+ +a"));
    assert!(!prefix_ok(&p, "+ +b"));
    // After `+` both readings are possible.
    assert!(prefix_ok(&p, "+"));
}

#[test]
fn lazy_comments_end_at_the_first_close() {
    let p = parser(
        "s -> item*\nitem -> COMMENT | NAME\nCOMMENT: /\\/\\*(.|\\n)*?\\*\\//\n\
         NAME: /[a-z]+/\n%ignore / +/",
    );
    assert!(accepts(&p, "/* a */ b"));
    assert!(accepts(&p, "/* a */x/**/"));
    assert!(accepts(&p, "/* a * / b */"));
    // Lazy: the comment ends at the first `*/`, so the rest is not a comment.
    assert!(!prefix_ok(&p, "/* a */ b */"));
    assert!(prefix_ok(&p, "/* a "));
    assert!(!accepts(&p, "/* a "));
}

#[test]
fn errors_say_where_and_what() {
    let p = parser("s -> 'a' 'b' 'c'");
    let mut s = ParserState::new(p.clone());
    let err = s.commit_bytes(b"abx").unwrap_err();
    match err.kind() {
        CommitErrorKind::Rejected {
            offset,
            byte,
            expected,
        } => {
            assert_eq!(*offset, 2);
            assert_eq!(*byte, Some(b'x'));
            assert_eq!(expected, &["c".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    // The failed commit left the state untouched.
    assert_eq!(s.commit_len(), 0);
    s.commit_bytes(b"ab").unwrap();
    s.commit_bytes(b"c").unwrap();
    assert!(s.is_accepting());
}

/// A rejection names what could have followed a lexeme that the next bytes went on extending
/// (`;` after `ab`), not only what could extend it.
#[test]
fn a_rejection_names_what_follows_a_lexeme_that_could_end() {
    let p = parser("s -> NAME ';'\nNAME: /[a-z]+/");
    let err = ParserState::new(p).commit_bytes(b"ab!").unwrap_err();
    match err.kind() {
        CommitErrorKind::Rejected {
            offset, expected, ..
        } => {
            assert_eq!(*offset, 2);
            assert!(expected.contains(&";".to_string()), "{expected:?}");
            assert!(expected.contains(&"NAME".to_string()), "{expected:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn budgets_are_typed_errors_and_leave_the_state_unchanged() {
    let g = dsl::parse("e -> e e | 'a' | ε").unwrap();
    let p = Arc::new(
        Parser::new(
            &g,
            &ParserConfig {
                max_nodes_per_step: 3,
                ..ParserConfig::default()
            },
        )
        .unwrap(),
    );
    let mut s = ParserState::new(p);
    let err = s.commit_bytes(b"aaaa").unwrap_err();
    match err.kind() {
        CommitErrorKind::Budget { name, limit, .. } => {
            assert_eq!(*name, "max_nodes_per_step");
            assert_eq!(*limit, 3);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.commit_len(), 0);
    assert!(s.is_accepting());
}

#[test]
fn declared_terminals_are_refused_at_build() {
    let mut g = dsl::parse("s -> 'a' INDENT\nINDENT: 'i'").unwrap();
    g.terminals[0].pattern = Err(munch_glr::grammar::NoPattern::Declared);
    let err = Parser::new(&g, &ParserConfig::default()).unwrap_err();
    assert!(err.to_string().contains("INDENT"), "{err}");
    assert!(err.to_string().contains("indentation-aware"), "{err}");
}

#[test]
fn commit_token_uses_the_vocabulary_bytes() {
    use munch_vocab::TokenId;
    use munch_vocab::Vocabulary;
    let p = parser("e -> e '+' e | 'a'");
    let vocab = Vocabulary::from_token_bytes(
        vec![
            Some(b"a".to_vec()),
            Some(b"+".to_vec()),
            Some(b"a+".to_vec()),
            None,
        ],
        vec![TokenId::from_usize(3)],
    )
    .unwrap();
    let mut s = ParserState::new(p);
    s.commit_token(&vocab, TokenId::from_usize(2)).unwrap();
    assert!(!s.is_accepting());
    s.commit_token(&vocab, TokenId::from_usize(0)).unwrap();
    assert!(s.is_accepting());
    let err = s.commit_token(&vocab, TokenId::from_usize(3)).unwrap_err();
    assert_eq!(
        err.kind(),
        &CommitErrorKind::NotText(TokenId::from_usize(3))
    );
    assert!(s.commit_token(&vocab, TokenId::from_usize(99)).is_err());
    // "a+a" + "a+" would need `a a`.
    assert!(s.commit_token(&vocab, TokenId::from_usize(2)).is_err());
    s.commit_token(&vocab, TokenId::from_usize(1)).unwrap();
    assert_eq!(s.commit_len(), 3);
}

#[test]
fn heads_answer_can_shift_for_maskers() {
    use munch_glr::parser::ShiftCache;
    let p = parser("s -> 'if' NAME ';' | NAME '=' NAME ';'\nNAME: /[a-z]+/\n%ignore / +/");
    let id = |name: &str| {
        (0..p.terminal_len())
            .map(munch_lexer::TerminalId::from_usize)
            .find(|&t| p.terminal_name(t) == name)
            .unwrap()
    };
    let mut s = ParserState::new(p.clone());
    s.commit_bytes(b"x ").unwrap();
    let mut cache = ShiftCache::new();
    // Two heads: the space lexeme ended (empty lexeme, inhibited by it), or more spaces follow.
    assert_eq!(s.head_len(), 2);
    let h = s.heads().find(|h| h.lexeme_is_empty()).unwrap();
    assert!(h.inhibitor().is_some());
    assert!(p.can_shift(h.node(), id("="), &mut cache));
    assert!(!p.can_shift(h.node(), id(";"), &mut cache));
    assert!(!p.can_shift(h.node(), id("NAME"), &mut cache));
    assert!(!p.can_accept(h.node(), &mut cache));
    // Mid-lexeme after `if`: one head still lexing, one inhibited head with IF shifted.
    let mut s = ParserState::new(p.clone());
    s.commit_bytes(b"if").unwrap();
    assert_eq!(s.head_len(), 2);
    let inhibited = s.heads().find(|h| h.inhibitor().is_some()).unwrap();
    assert!(p.can_shift(inhibited.node(), id("NAME"), &mut cache));
    let lexing = s.heads().find(|h| !h.lexeme_is_empty()).unwrap();
    assert!(p.can_shift(lexing.node(), id("NAME"), &mut cache));
    assert!(!p.can_shift(lexing.node(), id(";"), &mut cache));
    assert!(!p.can_shift(inhibited.node(), id(";"), &mut cache));
}
