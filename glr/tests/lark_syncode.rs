//! SynCode 0.4.16's ten grammars load unmodified, and the terminals munch keeps agree with
//! Lark's own compilation of the same text.
//!
//! The expectations were computed with Lark 1.3.1 (`Lark(src, parser='lalr', lexer='basic')`:
//! `p.terminals` names, `p.ignore_tokens`, the terminals whose pattern is a `PatternStr`, and
//! non-zero priorities) and pasted here. munch additionally keeps `%declare`d terminals that
//! rules use (Python's `_INDENT` and `_DEDENT`), which Lark leaves out of `p.terminals`.

use std::collections::BTreeSet;

use munch_glr::grammar::NoPattern;
use munch_lexer::dfa::{Lexer, LexerConfig};
use munch_testkit::grammar::syncode_grammar;

/// One grammar's expectations; `terminals`, `ignore` and `literals` are names separated by
/// white space.
struct Expect {
    name: &'static str,
    terminals: &'static str,
    ignore: &'static str,
    literals: &'static str,
    priorities: &'static [(&'static str, i32)],
}

const EXPECT: &[Expect] = &[
    // json: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "json",
        terminals: "COLON COMMA EMPTY_STRING FALSE LBRACE LSQB NONEMPTY_STRING NULL RBRACE RSQB \
            SIGNED_NUMBER TRUE WS",
        ignore: "WS",
        literals: "COLON COMMA FALSE LBRACE LSQB NULL RBRACE RSQB TRUE",
        priorities: &[],
    },
    // go: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "go",
        terminals: "AMPERSAND BANG BINARY_LIT BREAK CASE CHAR_LIT CIRCUMFLEX COLON COMMA CONST \
            CONTINUE DECIMAL_LIT DEFAULT DEFER DOT ELSE EOC EOF EOS EQUAL FALLTHROUGH \
            FLOAT_LIT FOR FUNC GO GOTO HEX_LIT IF IMPORT INTERFACE INTERPRETED_STRING_LIT \
            LBRACE LESSTHAN LPAR LSQB MAP MINUS MORETHAN NAME NIL OCTAL_LIT PACKAGE PERCENT \
            PLUS RANGE RAW_STRING_LIT RBRACE RETURN RPAR RSQB SELECT SEMICOLON SLASH STAR \
            STRUCT SWITCH TILDE TYPE VAR VBAR __ANON_0 __ANON_1 __ANON_10 __ANON_11 \
            __ANON_12 __ANON_13 __ANON_14 __ANON_16 __ANON_17 __ANON_18 __ANON_19 __ANON_2 \
            __ANON_20 __ANON_21 __ANON_22 __ANON_23 __ANON_24 __ANON_25 __ANON_3 __ANON_4 \
            __ANON_5 __ANON_6 __ANON_7 __ANON_8 __ANON_9 __IGNORE_0 __IGNORE_1",
        ignore: "__IGNORE_0 __IGNORE_1",
        literals: "AMPERSAND BANG BREAK CASE CIRCUMFLEX COLON COMMA CONST CONTINUE DEFAULT DEFER \
            DOT ELSE EOC EOF EQUAL FALLTHROUGH FOR FUNC GO GOTO IF IMPORT INTERFACE LBRACE \
            LESSTHAN LPAR LSQB MAP MINUS MORETHAN NIL PACKAGE PERCENT PLUS RANGE RBRACE \
            RETURN RPAR RSQB SELECT SEMICOLON SLASH STAR STRUCT SWITCH TILDE TYPE VAR VBAR \
            __ANON_0 __ANON_1 __ANON_10 __ANON_11 __ANON_12 __ANON_13 __ANON_14 __ANON_16 \
            __ANON_17 __ANON_18 __ANON_19 __ANON_2 __ANON_20 __ANON_21 __ANON_22 __ANON_23 \
            __ANON_24 __ANON_25 __ANON_3 __ANON_4 __ANON_5 __ANON_6 __ANON_7 __ANON_8 \
            __ANON_9",
        priorities: &[
            ("BINARY_LIT", 2),
            ("FLOAT_LIT", 2),
            ("HEX_LIT", 2),
            ("OCTAL_LIT", 2),
        ],
    },
    // java: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "java",
        terminals: "ABSTRACT AMPERSAND BANG BLOCK_COMMENT BOOLEAN BREAK BYTE CASE CATCH CHAR \
            CIRCUMFLEX CLASS CNAME COLON COMMA CONTINUE DEFAULT DIGIT DO DOT DOUBLE ELSE \
            EQUAL EXTENDS FALSE FINAL FINALLY FLOAT FOR IF IMPLEMENTS IMPORT INSTANCEOF INT \
            INTERFACE LBRACE LESSTHAN LINE_COMMENT LONG LPAR LSQB MINUS MORETHAN NATIVE NEW \
            NULL PACKAGE PERCENT PLUS PRIVATE PROTECTED PUBLIC QMARK RBRACE RETURN RPAR RSQB \
            SEMICOLON SHORT SLASH STAR STATIC SUPER SWITCH SYNCHRONIZED THIS THROW THROWS \
            TILDE TRANSIENT TRUE TRY VBAR VOLATILE WHILE WS __ANON_0 __ANON_1 __ANON_10 \
            __ANON_11 __ANON_12 __ANON_13 __ANON_14 __ANON_15 __ANON_16 __ANON_17 __ANON_18 \
            __ANON_19 __ANON_2 __ANON_20 __ANON_21 __ANON_22 __ANON_23 __ANON_24 __ANON_3 \
            __ANON_4 __ANON_5 __ANON_6 __ANON_7 __ANON_8 __ANON_9",
        ignore: "BLOCK_COMMENT LINE_COMMENT WS",
        literals: "ABSTRACT AMPERSAND BANG BOOLEAN BREAK BYTE CASE CATCH CHAR CIRCUMFLEX CLASS \
            COLON COMMA CONTINUE DEFAULT DO DOT DOUBLE ELSE EQUAL EXTENDS FALSE FINAL \
            FINALLY FLOAT FOR IF IMPLEMENTS IMPORT INSTANCEOF INT INTERFACE LBRACE LESSTHAN \
            LONG LPAR LSQB MINUS MORETHAN NATIVE NEW NULL PACKAGE PERCENT PLUS PRIVATE \
            PROTECTED PUBLIC QMARK RBRACE RETURN RPAR RSQB SEMICOLON SHORT SLASH STAR STATIC \
            SUPER SWITCH SYNCHRONIZED THIS THROW THROWS TILDE TRANSIENT TRUE TRY VBAR \
            VOLATILE WHILE __ANON_10 __ANON_11 __ANON_12 __ANON_13 __ANON_14 __ANON_15 \
            __ANON_16 __ANON_17 __ANON_18 __ANON_19 __ANON_2 __ANON_20 __ANON_21 __ANON_22 \
            __ANON_23 __ANON_24 __ANON_3 __ANON_4 __ANON_5 __ANON_6 __ANON_7 __ANON_8 \
            __ANON_9",
        priorities: &[],
    },
    // sql: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "sql",
        terminals: "AGGREGATION ALL AND AS ASC BETWEEN BY CASE CAST CNAME COALESCE COMMA CROSS \
            CURRENT DENSE_RANK DESC DISTINCT DOT ELSE END EQUAL ESCAPED_STRING EXCEPT EXISTS \
            FALSE FLOAT FOLLOWING FROM GROUP HAVING IN INTERSECT INT_NUMBER IS JOIN \
            JOIN_EXPR LESSTHAN LIKE LIMIT LPAR MINUS MORETHAN NOT NOW NULL OFFSET ON OR \
            ORDER OVER PARTITION PLUS PRECEDING RANGE RANK ROW ROWS RPAR SELECT \
            SELECT_CONSTRAINT SEMICOLON SLASH SQL_COMMENT STAR THEN TODAY TRUE TYPENAME \
            UNBOUNDED UNION WHEN WHERE WINDOW WS __ANON_0 __ANON_1 __ANON_2 __ANON_3 \
            __ANON_4",
        ignore: "SQL_COMMENT WS",
        literals:
            "ALL AND AS ASC BETWEEN BY CASE CAST COALESCE COMMA CROSS CURRENT DENSE_RANK DESC \
            DISTINCT DOT ELSE END EQUAL EXCEPT EXISTS FALSE FOLLOWING FROM GROUP HAVING IN \
            INTERSECT IS JOIN LESSTHAN LIKE LIMIT LPAR MINUS MORETHAN NOT NOW NULL OFFSET ON \
            OR ORDER OVER PARTITION PLUS PRECEDING RANGE RANK ROW ROWS RPAR SELECT SEMICOLON \
            SLASH STAR THEN TODAY TRUE UNBOUNDED UNION WHEN WHERE WINDOW __ANON_0 __ANON_1 \
            __ANON_2 __ANON_3",
        priorities: &[
            ("AGGREGATION", 8),
            ("JOIN_EXPR", 5),
            ("SELECT_CONSTRAINT", 9),
        ],
    },
    // c: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "c",
        terminals:
            "CHAR COMMA ELSE EQUAL FLOAT FOR IF INT LBRACE LESSTHAN LPAR MINUS MORETHAN NAME \
            NEWLINE PLUS RBRACE RETURN RPAR SEMICOLON SLASH STAR VOID WHILE WS __ANON_0 \
            __ANON_1 __ANON_2 __ANON_3 __ANON_4 __ANON_5 __ANON_6",
        ignore: "WS",
        literals: "CHAR COMMA ELSE EQUAL FLOAT FOR IF INT LBRACE LESSTHAN LPAR MINUS MORETHAN \
            NEWLINE PLUS RBRACE RETURN RPAR SEMICOLON SLASH STAR VOID WHILE __ANON_0 \
            __ANON_1 __ANON_2 __ANON_3",
        priorities: &[],
    },
    // calc: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "calc",
        terminals: "LPAR MINUS NUMBER PLUS RPAR SLASH STAR WS",
        ignore: "WS",
        literals: "LPAR MINUS PLUS RPAR SLASH STAR",
        priorities: &[],
    },
    // tiny: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "tiny",
        terminals: "C D",
        ignore: "",
        literals: "C D",
        priorities: &[],
    },
    // prover9: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "prover9",
        terminals: "COMMA COMMENT LPAR PREDICATE RPAR VAR WS __ANON_0 __ANON_1 __ANON_10 __ANON_2 \
            __ANON_3 __ANON_4 __ANON_5 __ANON_6 __ANON_7 __ANON_8 __ANON_9",
        ignore: "WS",
        literals:
            "COMMA LPAR RPAR __ANON_0 __ANON_1 __ANON_10 __ANON_2 __ANON_3 __ANON_4 __ANON_5 \
            __ANON_6 __ANON_7 __ANON_8 __ANON_9",
        priorities: &[("PREDICATE", -1), ("VAR", -1)],
    },
    // invariants: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "invariants",
        terminals: "CHAR CIRCUMFLEX COLON COMMA FALSE IDENTIFIER INTEGER INVARIANT LESSTHAN LOOP \
            LPAR MINUS MORETHAN NEWLINE PERCENT PLUS QMARK REAL RPAR SEMICOLON SLASH STAR \
            STRING TILDE TRUE __ANON_0 __ANON_1 __ANON_2 __ANON_3 __ANON_4 __ANON_5 __ANON_6 \
            __ANON_7 __ANON_8 __IGNORE_0",
        ignore: "__IGNORE_0",
        literals:
            "CIRCUMFLEX COLON COMMA FALSE INVARIANT LESSTHAN LOOP LPAR MINUS MORETHAN NEWLINE \
            PERCENT PLUS QMARK RPAR SEMICOLON SLASH STAR TILDE TRUE __ANON_0 __ANON_1 \
            __ANON_2 __ANON_3 __ANON_4 __ANON_5 __ANON_6 __ANON_7 __ANON_8",
        priorities: &[("IDENTIFIER", -1)],
    },
    // python: Lark 1.3.1, parser='lalr', lexer='basic'
    Expect {
        name: "python",
        terminals: "AMPERSAND AND AS ASSERT ASYNC AT AWAIT BREAK CIRCUMFLEX CLASS COLON COMMA \
            COMMENT CONTINUE DEC_NUMBER DEF DEL DOT ELIF ELSE EOF EQUAL EXCEPT FALSE FINALLY \
            FLOAT_NUMBER FOR FROM GLOBAL HEX_NUMBER IF IMPORT IN IS LAMBDA LBRACE LESSTHAN \
            LONG_STRING LPAR LSQB MINUS MORETHAN NAME NONE NONLOCAL NOT OCT_NUMBER OR PASS \
            PERCENT PLUS RAISE RBRACE RETURN RPAR RSQB SEMICOLON SLASH STAR STRING TILDE \
            TRUE TRY VBAR WHILE WITH WS_INLINE YIELD _NL __ANON_0 __ANON_1 __ANON_10 \
            __ANON_11 __ANON_12 __ANON_13 __ANON_14 __ANON_15 __ANON_16 __ANON_17 __ANON_18 \
            __ANON_19 __ANON_2 __ANON_20 __ANON_21 __ANON_22 __ANON_23 __ANON_3 __ANON_4 \
            __ANON_5 __ANON_6 __ANON_7 __ANON_8 __ANON_9 __IGNORE_1",
        ignore: "COMMENT WS_INLINE __IGNORE_1",
        literals: "AMPERSAND AND AS ASSERT ASYNC AT AWAIT BREAK CIRCUMFLEX CLASS COLON COMMA \
            CONTINUE DEF DEL DOT ELIF ELSE EOF EQUAL EXCEPT FALSE FINALLY FOR FROM GLOBAL IF \
            IMPORT IN IS LAMBDA LBRACE LESSTHAN LPAR LSQB MINUS MORETHAN NONE NONLOCAL NOT \
            OR PASS PERCENT PLUS RAISE RBRACE RETURN RPAR RSQB SEMICOLON SLASH STAR TILDE \
            TRUE TRY VBAR WHILE WITH YIELD __ANON_0 __ANON_1 __ANON_10 __ANON_11 __ANON_12 \
            __ANON_13 __ANON_14 __ANON_15 __ANON_16 __ANON_17 __ANON_18 __ANON_19 __ANON_2 \
            __ANON_20 __ANON_21 __ANON_22 __ANON_23 __ANON_3 __ANON_4 __ANON_5 __ANON_6 \
            __ANON_7 __ANON_8 __ANON_9",
        priorities: &[("FLOAT_NUMBER", 2), ("HEX_NUMBER", 2), ("OCT_NUMBER", 2)],
    },
];

fn set<'a>(it: impl IntoIterator<Item = &'a str>) -> BTreeSet<&'a str> {
    it.into_iter().collect()
}

#[test]
fn every_syncode_grammar_loads_with_larks_terminals() {
    assert_eq!(
        EXPECT.iter().map(|e| e.name).collect::<Vec<_>>(),
        munch_grammars::syncode::NAMES
    );
    for e in EXPECT {
        let g = syncode_grammar(e.name);
        let declared: Vec<&str> = g
            .terminals_without_pattern()
            .filter(|(_, why)| **why == NoPattern::Declared)
            .map(|(id, _)| g.terminal(id).name.as_str())
            .collect();
        let expected_declared: &[&str] = if e.name == "python" {
            &["_INDENT", "_DEDENT"]
        } else {
            &[]
        };
        assert_eq!(
            declared, expected_declared,
            "{}: declared terminals",
            e.name
        );

        let names = set(g.terminals.iter().map(|t| t.name.as_str()));
        let mut expected = set(e.terminals.split_whitespace());
        expected.extend(expected_declared);
        assert_eq!(names, expected, "{}: terminal names", e.name);
        assert_eq!(
            g.terminal_len(),
            e.terminals.split_whitespace().count() + expected_declared.len(),
            "{}: no terminal twice",
            e.name
        );

        let ignored = set(g
            .terminals
            .iter()
            .filter(|t| t.ignored)
            .map(|t| t.name.as_str()));
        assert_eq!(
            ignored,
            set(e.ignore.split_whitespace()),
            "{}: ignored",
            e.name
        );

        let literals = set(g
            .terminals
            .iter()
            .filter(|t| t.pattern.as_ref().is_ok_and(|p| p.is_literal))
            .map(|t| t.name.as_str()));
        assert_eq!(
            literals,
            set(e.literals.split_whitespace()),
            "{}: literals",
            e.name
        );

        let priorities: BTreeSet<(&str, i32)> = g
            .terminals
            .iter()
            .filter(|t| t.priority != 0)
            .map(|t| (t.name.as_str(), t.priority))
            .collect();
        assert_eq!(
            priorities,
            e.priorities.iter().copied().collect(),
            "{}: priorities",
            e.name
        );
    }
}

#[test]
fn python_look_around_terminals_are_lexed() {
    let g = syncode_grammar("python");
    // STRING has `(?!"")`; LONG_STRING `(?<!\\)`; COMMENT and _NL are made of LONG_STRING: all
    // have patterns now, and the lexer takes them.
    let unsupported: Vec<&str> = g
        .terminals_without_pattern()
        .filter(|(_, why)| matches!(why, NoPattern::Unsupported(_)))
        .map(|(id, _)| g.terminal(id).name.as_str())
        .collect();
    assert!(unsupported.is_empty(), "{unsupported:?}");
    let lexer = Lexer::new(&g.terminal_specs(), &LexerConfig::default()).unwrap();
    let text = r#"x = "" + "a" + """b""" + 'c'"#;
    // Tied terminals joined by `|` (COMMENT and _NL are made of LONG_STRING; the parser
    // chooses).
    let names: Vec<String> = lexer
        .tokenize(text.as_bytes())
        .unwrap()
        .iter()
        .map(|l| {
            let names: Vec<&str> = l
                .terminals
                .iter()
                .map(|&t| lexer.terminal(t).name.as_str())
                .collect();
            names.join("|")
        })
        .filter(|n| n != "WS_INLINE")
        .collect();
    assert_eq!(
        names,
        [
            "NAME",
            "EQUAL",
            "STRING",
            "PLUS",
            "STRING",
            "PLUS",
            "COMMENT|_NL|LONG_STRING",
            "PLUS",
            "STRING"
        ]
    );
}

#[test]
fn syncode_rules_are_all_reachable_and_ids_in_range() {
    for name in munch_grammars::syncode::NAMES {
        let g = syncode_grammar(name);
        assert_eq!(g.rule(g.start).name, "start", "{name}");
        // Every rule is reachable from start (the loader drops the others).
        let mut seen = vec![false; g.rule_len()];
        let mut stack = vec![g.start];
        seen[g.start.as_usize()] = true;
        while let Some(r) = stack.pop() {
            let mut refs = Vec::new();
            walk(&g.rule(r).expr, &mut |e| match e {
                munch_glr::grammar::Expr::Rule(d) => refs.push(*d),
                munch_glr::grammar::Expr::Terminal(t) => {
                    assert!(
                        t.as_usize() < g.terminal_len(),
                        "{name}: terminal id in range"
                    )
                }
                _ => {}
            });
            for d in refs {
                assert!(d.as_usize() < g.rule_len(), "{name}: rule id in range");
                if !seen[d.as_usize()] {
                    seen[d.as_usize()] = true;
                    stack.push(d);
                }
            }
        }
        assert!(seen.iter().all(|&s| s), "{name}: unreachable rule kept");
    }
}

fn walk(e: &munch_glr::grammar::Expr, f: &mut dyn FnMut(&munch_glr::grammar::Expr)) {
    use munch_glr::grammar::Expr::*;
    f(e);
    match e {
        Empty | Terminal(_) | Rule(_) => {}
        Seq(v) => v.iter().for_each(|c| walk(c, f)),
        Alt(v) => v.iter().for_each(|a| walk(&a.expr, f)),
        Optional(c) | Star(c) | Plus(c) => walk(c, f),
        Repeat { expr, .. } => walk(expr, f),
    }
}
