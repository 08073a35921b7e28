//! Compiled parsers for tests: a grammar in, an [`Arc<Parser>`] out, with the default
//! [`ParserConfig`] or a given one.
//!
//! A test's grammar is part of the test, so these panic, with the loader's message, when the
//! grammar does not load or build.

use std::sync::Arc;

use munch_glr::grammar::Grammar;
use munch_glr::lark::{load, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig};

use crate::dsl;

/// The parser of the Lark grammar `source`.
///
/// # Panics
/// When the grammar does not load or its parser does not build.
pub fn parser(source: &str) -> Arc<Parser> {
    parser_with(source, &ParserConfig::default())
}

/// The parser of the Lark grammar `source` under `config`.
///
/// # Panics
/// When the grammar does not load or its parser does not build.
pub fn parser_with(source: &str, config: &ParserConfig) -> Arc<Parser> {
    try_parser_with(source, config).unwrap_or_else(|e| panic!("{e}"))
}

/// The parser of the Lark grammar `source` under `config`, or the loader's or the parser
/// builder's message, for tests of grammars that may be refused.
pub fn try_parser_with(source: &str, config: &ParserConfig) -> Result<Arc<Parser>, String> {
    let grammar = load(source.as_bytes(), &LoadConfig::default()).map_err(|e| e.to_string())?;
    Parser::new(&grammar, config)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// The parser of the grammar `source`, written in the test [`dsl`].
///
/// # Panics
/// When the text is not valid DSL or the parser does not build.
pub fn dsl_parser(source: &str) -> Arc<Parser> {
    let grammar = dsl::parse(source).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(Parser::new(&grammar, &ParserConfig::default()).unwrap_or_else(|e| panic!("{e}")))
}

/// The parser of munch's built-in grammar `name` (`json`, `tricky`).
///
/// # Panics
/// When there is no such grammar.
pub fn builtin(name: &str) -> Arc<Parser> {
    let grammar =
        munch_grammars::builtin(name).unwrap_or_else(|| panic!("no built-in grammar {name:?}"));
    parser(grammar.source)
}

/// Keywords tied with a name (each `"if"`, `"while"`, `"else"` is a stand-in: the name where
/// the parser cannot take the keyword), and one state that LALR merges across two contexts:
/// after `A C` the parser reduces `n` on a name (or `D`) only, and the state that reduction
/// reaches, shared with the `B` context, reduces `m2` on `if`. A keyword's column takes that
/// reduction there, so `if` cannot follow `A C`, though a name can.
pub const KEYWORDS_MERGED: &str = r#"start: stmt+
stmt: "if" NAME block | "while" NAME block | NAME "=" NAME ";" | "A" m NAME ";" | "A" m2 "D" ";"
    | "B" m "E" ";" | "B" m2 "if" ";" | "A" "C" "Z" ";"
block: "{" stmt* "}" ("else" "{" stmt* "}")?
m: n
m2: n
n: "C"
NAME: /[a-z]+/
%ignore " "
"#;

/// Texts of the built-in `tricky` grammar that reach its corners: the dangling `else`, a keyword
/// prefix of a name (`iff`), comments, non-ASCII names, a label, a string holding `*/`, and the
/// empty text.
pub const TRICKY_TEXTS: &[&str] = &[
    "if (x) if (y) z = 1; else print z;",
    "x++; x += 1 + 2 * 3; iff = \"a\"; PRINT -x;",
    "/* comment */ α = β; /**/ { ; lbl: ; }",
    "if(a)x=1;else{y=\"*/\";}",
    "",
];

/// SynCode's grammar `name` (`json`, `go`, `java`, `sql`, …), fetched once into the cache and
/// loaded as `NAME.lark` (the name its errors give).
///
/// # Panics
/// When the grammar cannot be fetched or does not load.
pub fn syncode_grammar(name: &str) -> Grammar {
    let source = munch_grammars::syncode::grammar(name)
        .unwrap_or_else(|e| panic!("fetching SynCode's {name}.lark: {e}"));
    let config = LoadConfig {
        file_name: format!("{name}.lark"),
        ..LoadConfig::default()
    };
    load(source.as_bytes(), &config).unwrap_or_else(|e| panic!("{e}"))
}

/// The parser of SynCode's grammar `name` ([`syncode_grammar`]).
///
/// # Panics
/// When the grammar cannot be fetched, or does not load or build.
pub fn syncode(name: &str) -> Arc<Parser> {
    let grammar = syncode_grammar(name);
    Arc::new(Parser::new(&grammar, &ParserConfig::default()).unwrap_or_else(|e| panic!("{e}")))
}
