//! Synthetic grammars exercising every construct of the Lark language, with assertions on the
//! produced `Grammar`: expression shapes, flags, priorities, aliases, template instances,
//! imports, `%ignore`, `%declare`, `%override`, `%extend`, and Lark's names for anonymous
//! terminals (checked against Lark 1.3.1 on the same text).

use munch_glr::grammar::{Expr, Grammar, NoPattern, Rule, Terminal};
use munch_glr::lark::{load, ErrorKind, LoadConfig};

fn grammar(src: &str) -> Grammar {
    load(src.as_bytes(), &LoadConfig::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn rule<'g>(g: &'g Grammar, name: &str) -> &'g Rule {
    g.rules
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no rule {name}"))
}

fn term<'g>(g: &'g Grammar, name: &str) -> &'g Terminal {
    g.terminals
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no terminal {name}"))
}

fn names(g: &Grammar) -> Vec<&str> {
    g.terminals.iter().map(|t| t.name.as_str()).collect()
}

fn rule_names(g: &Grammar) -> Vec<&str> {
    g.rules.iter().map(|r| r.name.as_str()).collect()
}

/// A compact rendering: `(a B)` sequence, `{a | b -> x}` alternatives, `x?`, `x*`, `x+`,
/// `x~2..3`, `ε` empty.
fn show(g: &Grammar, e: &Expr) -> String {
    match e {
        Expr::Empty => "ε".to_string(),
        Expr::Terminal(t) => g.terminal(*t).name.clone(),
        Expr::Rule(r) => g.rule(*r).name.clone(),
        Expr::Seq(v) => format!(
            "({})",
            v.iter().map(|c| show(g, c)).collect::<Vec<_>>().join(" ")
        ),
        Expr::Alt(v) => format!(
            "{{{}}}",
            v.iter()
                .map(|a| match &a.alias {
                    Some(alias) => format!("{} -> {alias}", show(g, &a.expr)),
                    None => show(g, &a.expr),
                })
                .collect::<Vec<_>>()
                .join(" | ")
        ),
        Expr::Optional(c) => format!("{}?", show(g, c)),
        Expr::Star(c) => format!("{}*", show(g, c)),
        Expr::Plus(c) => format!("{}+", show(g, c)),
        Expr::Repeat { expr, min, max } => format!("{}~{min}..{max}", show(g, expr)),
    }
}

fn body(g: &Grammar, name: &str) -> String {
    show(g, &rule(g, name).expr)
}

#[test]
fn ebnf_operators_and_groups() {
    let g = grammar(
        r#"start: a [b] c? d* e+ f~3 g~2..4 (h | i) (j k) ()
a: "a"
b: "b"
c: "c"
d: "d"
e: "e"
f: "f"
g: "g"
h: "h"
i: "i"
j: "j"
k: "k"
"#,
    );
    assert_eq!(
        body(&g, "start"),
        "(a b? c? d* e+ f~3..3 g~2..4 {h | i} j k)",
        "`[x]` and `x?` are optional; a group without an operator is spliced"
    );
    assert_eq!(body(&g, "a"), "A");
}

#[test]
fn alternatives_aliases_and_leading_bar() {
    let g = grammar(
        r#"start: x
     | y -> why
     // a comment between alternatives
     | x y -> both
leading:
    | x
    | y
x: "x"
y: "y"
start2: leading
"#,
    );
    assert_eq!(body(&g, "start"), "{x | y -> why | (x y) -> both}");
    // Not reachable from `start`: dropped.
    assert!(g.rules.iter().all(|r| r.name != "leading"));
    let g = load(
        b"start:\n    | \"x\"\n    | \"y\"\n",
        &LoadConfig::default(),
    )
    .unwrap();
    // As in Lark, a leading `|` adds an empty alternative.
    assert_eq!(body(&g, "start"), "{ε | X | Y}");
}

#[test]
fn rule_flags_and_priorities() {
    let g = grammar(
        r#"start: a b _c d e
?a: "a"
!b.2: "b"
_c.-1: "c"
!?d: "d"
?!e: "e"
"#,
    );
    let flags = |n: &str| {
        let r = rule(&g, n);
        (r.expand_single, r.keep_all_tokens, r.inline, r.priority)
    };
    assert_eq!(flags("start"), (false, false, false, 0));
    assert_eq!(flags("a"), (true, false, false, 0));
    assert_eq!(flags("b"), (false, true, false, 2));
    assert_eq!(flags("_c"), (false, false, true, -1));
    assert_eq!(flags("d"), (true, true, false, 0));
    assert_eq!(flags("e"), (true, true, false, 0));
}

#[test]
fn terminal_priorities_and_definitions() {
    let g = grammar(
        r#"start: HI LO NAME
HI.3: "hi"
LO.-2: /lo+/
NAME: LETTER (LETTER | DIGIT)*
LETTER: "a".."z"
DIGIT: "0".."9"
"#,
    );
    assert_eq!(term(&g, "HI").priority, 3);
    assert_eq!(term(&g, "LO").priority, -2);
    assert_eq!(term(&g, "NAME").priority, 0);
    // Terminals only used inside other terminals are inlined, not kept.
    assert_eq!(names(&g), ["HI", "LO", "NAME"]);
    assert_eq!(
        term(&g, "NAME").pattern.as_ref().unwrap().source,
        "LETTER (LETTER | DIGIT)*"
    );
}

#[test]
fn anonymous_terminal_names_follow_lark() {
    // Lark 1.3.1 names these: ADD (reused), LPAR, RPAR, IF, __ANON_0 (regex), WHILE (i flag),
    // __ANON_1 ("if"i: `IF` is taken), COMMA, __ANON_2 ("=="), __ANON_0 reused for the same
    // regex, __ANON_3 for the range.
    let g = grammar(
        r#"start: "+" "(" ")" "if" /[0-9]+/ "while"i "if"i "," "==" /[0-9]+/ "a".."f"
ADD: "+"
"#,
    );
    assert_eq!(
        names(&g),
        [
            "ADD", "LPAR", "RPAR", "IF", "__ANON_0", "WHILE", "__ANON_1", "COMMA", "__ANON_2",
            "__ANON_3"
        ]
    );
    assert_eq!(
        body(&g, "start"),
        "(ADD LPAR RPAR IF __ANON_0 WHILE __ANON_1 COMMA __ANON_2 __ANON_0 __ANON_3)"
    );
    // A defined terminal with the same literal is reused even when defined after its use; the
    // later of two equal definitions wins, as in Lark.
    let g = grammar("start: \"x\" \"y\"\nX1: \"x\"\nX2: \"x\"\nWHY: \"y\"\n");
    assert_eq!(names(&g), ["X2", "WHY"]);
    // The uppercased name is taken by a regex terminal: the literal gets __ANON_0.
    let g = grammar("start: \"if\" IF\nIF: /if/\n");
    assert_eq!(names(&g), ["IF", "__ANON_0"]);
}

#[test]
fn templates_are_instantiated_per_argument_list() {
    let g = grammar(
        r#"start: _sep{item, ","} ";" pair{NUMBER, "x"} pair{NUMBER, "x"} wrap{_sep{item, ";"}}
_sep{x, sep}: x (sep x)*
pair{a, b}: a b a
wrap{inner}: "(" inner ")"
item: NUMBER
NUMBER: /[0-9]+/
"#,
    );
    // Lark's instance names: the template and its arguments' names. Lark visits the deepest
    // uses first, so the `";"` nested in `wrap{…}` is named (and its `_sep` instance created)
    // before the `","` and the `";"` at the top.
    assert_eq!(
        rule_names(&g),
        [
            "start",
            "item",
            "_sep{item,SEMICOLON}",
            "_sep{item,COMMA}",
            "pair{NUMBER,X}",
            "wrap{_sep{item,SEMICOLON}}"
        ]
    );
    assert_eq!(
        names(&g),
        ["NUMBER", "SEMICOLON", "COMMA", "X", "LPAR", "RPAR"]
    );
    assert_eq!(
        body(&g, "start"),
        "(_sep{item,COMMA} SEMICOLON pair{NUMBER,X} pair{NUMBER,X} wrap{_sep{item,SEMICOLON}})"
    );
    assert_eq!(body(&g, "_sep{item,COMMA}"), "(item (COMMA item)*)");
    assert_eq!(body(&g, "pair{NUMBER,X}"), "(NUMBER X NUMBER)");
    assert_eq!(
        body(&g, "wrap{_sep{item,SEMICOLON}}"),
        "(LPAR _sep{item,SEMICOLON} RPAR)"
    );
    assert!(
        rule(&g, "_sep{item,COMMA}").inline,
        "instances of `_sep` are inlined"
    );
    assert!(!rule(&g, "pair{NUMBER,X}").inline);
}

#[test]
fn templates_can_pass_templates_and_parameters_on() {
    let g = grammar(
        r#"start: twice{item}
twice{x}: once{x} once{x}
once{y}: y "!"
item: "i"
"#,
    );
    assert_eq!(body(&g, "twice{item}"), "(once{item} once{item})");
    assert_eq!(body(&g, "once{item}"), "(item BANG)");
}

#[test]
fn imports_from_common() {
    let g = grammar(
        r#"start: NUMBER NUM CNAME ESCAPED_STRING
%import common.NUMBER
%import common.INT -> NUM
%import common (CNAME, ESCAPED_STRING, WS)
%ignore WS
"#,
    );
    // In the module's order, as Lark gives them (`INT` comes before `NUMBER` in `common`).
    assert_eq!(
        names(&g),
        ["NUM", "NUMBER", "ESCAPED_STRING", "CNAME", "WS"]
    );
    assert!(term(&g, "WS").ignored);
    assert!(!term(&g, "NUMBER").ignored);
    assert!(g.terminals.iter().all(|t| t.pattern.is_ok()));
}

#[test]
fn ignore_names_literals_regexes_and_lists() {
    let g = grammar(
        r#"start: "a"
%ignore " "
%ignore /\t+/
%ignore COMMENT | NL
%ignore COMMENT
COMMENT: /#[^\n]*/
NL: "\n"
"#,
    );
    // Lark numbers `__IGNORE_n` by the position in the list of `%ignore`s.
    assert_eq!(
        names(&g),
        ["__IGNORE_0", "__IGNORE_1", "__IGNORE_2", "COMMENT", "A"]
    );
    assert!(g.terminals.iter().all(|t| t.ignored == (t.name != "A")));
    // `NL` is only part of `__IGNORE_2`: not kept on its own.
    assert!(g.terminals.iter().all(|t| t.name != "NL"));
}

#[test]
fn declare_override_extend() {
    let g = grammar(
        r#"start: item+ _INDENT
item: "a"
TOKEN: "t"
%declare _INDENT
%override item: "b" | TOKEN
%extend item: "c"
%extend TOKEN: "u"
"#,
    );
    assert_eq!(body(&g, "item"), "{C | B | TOKEN}");
    assert_eq!(
        term(&g, "_INDENT").pattern.as_ref().err(),
        Some(&NoPattern::Declared)
    );
    assert_eq!(
        term(&g, "TOKEN").pattern.as_ref().unwrap().source,
        "\"u\" | \"t\""
    );
    // `"a"` was overridden away.
    assert!(g.terminals.iter().all(|t| t.name != "A"));
}

#[test]
fn unused_rules_and_terminals_are_dropped() {
    let g = grammar(
        r#"start: a
a: "x" | B
b: "never" a
c: c "loop"
B: "b"
UNUSED: "u"
"#,
    );
    assert_eq!(rule_names(&g), ["start", "a"]);
    assert_eq!(names(&g), ["B", "X"]);
    assert_eq!(g.rule(g.start).name, "start");
}

#[test]
fn configurable_start() {
    let config = LoadConfig {
        start: vec!["other".to_string()],
        ..LoadConfig::default()
    };
    let g = load(b"start: \"s\"\nother: \"o\"\n", &config).unwrap();
    assert_eq!(rule_names(&g), ["other"]);
    assert_eq!(names(&g), ["O"]);
    let err = load(b"begin: \"s\"\n", &LoadConfig::default()).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::NoStartRule {
            name: "start".to_string()
        }
    );
}

#[test]
fn several_start_rules_accept_what_any_derives() {
    let config = LoadConfig {
        start: vec!["a".to_string(), "b".to_string(), "a".to_string()],
        ..LoadConfig::default()
    };
    let g = load(b"a: \"x\" b?\nb: \"y\"\nc: \"z\"\n", &config).unwrap();
    // One inlined rule chooses among the start rules (a repeated name counts once).
    assert_eq!(g.rule(g.start).name, "__start");
    assert!(g.rule(g.start).inline);
    assert_eq!(rule_names(&g), ["a", "b", "__start"]);
    assert_eq!(names(&g), ["X", "Y"]);
    let config = LoadConfig {
        start: vec!["a".to_string(), "nope".to_string()],
        ..LoadConfig::default()
    };
    let err = load(b"a: \"x\"\n", &config).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::NoStartRule {
            name: "nope".to_string()
        }
    );
}

#[test]
fn comments_continuations_and_line_endings() {
    let g = grammar("# a hash comment\r\nstart: \"a\" \\\r\n  \"b\" // trailing\r\n  | \"c\"\r\n");
    assert_eq!(body(&g, "start"), "{(A B) | C}");
}

#[test]
fn spans_point_at_definitions() {
    let g = grammar("\nstart: \"x\" NAME\nNAME: /[a-z]+/\n");
    let s = rule(&g, "start").span;
    assert_eq!((s.line, s.column, s.end - s.start), (2, 1, 5));
    let n = term(&g, "NAME").span;
    assert_eq!((n.line, n.column), (3, 1));
    // An anonymous literal: its first use.
    let x = term(&g, "X").span;
    assert_eq!((x.line, x.column, x.end - x.start), (2, 8, 3));
}

#[test]
fn deep_but_allowed_nesting_loads() {
    let depth = LoadConfig::default().max_nesting;
    let src = format!("start: {}\"x\"{}\n", "(".repeat(depth), ")".repeat(depth));
    let g = grammar(&src);
    assert_eq!(body(&g, "start"), "X");
    let src = format!(
        "start: {}\"x\"{}\n",
        "(".repeat(depth + 1),
        ")".repeat(depth + 1)
    );
    let err = load(src.as_bytes(), &LoadConfig::default()).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::NestingTooDeep { limit: depth });
    // Optional groups and template arguments nest as deep.
    let src = format!(
        "start: {}\"x\"{}\n",
        "[(".repeat(depth / 2),
        ")]".repeat(depth / 2)
    );
    let g = grammar(&src);
    assert!(matches!(rule(&g, "start").expr, Expr::Optional(_)));
    let src = format!(
        "start: {}A{}\nt{{x}}: x \"!\"\nA: \"a\"\n",
        "t{".repeat(depth),
        "}".repeat(depth)
    );
    let g = grammar(&src);
    assert_eq!(g.rule_len(), depth + 1, "one instance per level");
}

#[test]
fn priorities_are_any_integer_as_in_lark() {
    let g = grammar(
        "start: A B C D E\nA.5000000000: \"a\"\nB.4294967296: \"b\"\nC.-5000000000: \"c\"\n\
         D: \"d\"\nE.3: \"e\"\nbig.99999999999999999999999: \"x\"\n",
    );
    // Beyond `i32`, priorities keep their order and their order against 0 as ranks.
    let p = |name: &str| term(&g, name).priority;
    assert_eq!([p("A"), p("B"), p("C"), p("D"), p("E")], [3, 2, -1, 0, 1]);
    // Within `i32` they are kept as written.
    let g = grammar("start: A B\nA.2147483647: \"a\"\nB.-7: \"b\"\n");
    assert_eq!(term(&g, "A").priority, i32::MAX);
    assert_eq!(term(&g, "B").priority, -7);
}
