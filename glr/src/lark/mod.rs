//! The Lark grammar language: text → [`crate::grammar::Grammar`].
//!
//! [`load`] reads a Lark grammar (bytes, which must be UTF-8) and returns the EBNF-level
//! [`Grammar`] with every terminal's pattern as one `regex-syntax` HIR, or a [`GrammarError`]
//! with a kind, a span, and a `Display` that shows the source line with a caret.
//!
//! ```
//! use munch_glr::lark::{load, LoadConfig};
//!
//! let g = load(br#"
//! start: "(" NUMBER ("," NUMBER)* ")"
//! %import common.NUMBER
//! %import common.WS
//! %ignore WS
//! "#, &LoadConfig::default()).unwrap();
//! let names: Vec<_> = g.terminals.iter().map(|t| t.name.as_str()).collect();
//! // Named as Lark names them, in the order Lark creates them.
//! assert_eq!(names, ["NUMBER", "WS", "COMMA", "LPAR", "RPAR"]);
//!
//! let err = load(b"start: foo\n", &LoadConfig::default()).unwrap_err();
//! assert_eq!(err.to_string(), "\
//! <grammar>:1:8: error: rule `foo` is used but not defined
//! 1 | start: foo
//!   |        ^^^");
//! ```
//!
//! # The language
//!
//! All of Lark's grammar language, with Lark's meaning: rules and terminals; `?rule`, `!rule`
//! and `_rule`; `-> alias`; `[x]`, `x?`, `x*`, `x+`, `x ~ n`, `x ~ n..m`; groups and
//! alternatives (a leading `|` adds an empty alternative, as in Lark); string literals with
//! escapes and the `i` flag; regex literals `/…/imsxul` in Python syntax (translated to
//! `regex-syntax`; `lark/pyre.rs` lists every difference it handles); `"a".."z"` ranges; terminals made of terminals; priorities
//! `.N` (any integer, as in Lark); `%ignore`; `%import mod.X [-> Y]`, `%import .mod.X` and
//! `%import mod (A, B)` of grammar files, from the import paths and the grammar's folder, with
//! munch's own `common` and `unicode` built in and Lark's `python` and `lark` read from an
//! installed `lark` package (see `imports.rs`); several start rules; `%declare`; `%override`; `%extend`; templates `name{a, b}`; `//` and `#`
//! comments. Anonymous literals in rules become terminals named as Lark names them (`IF`,
//! `LPAR`, `__ANON_0`).
//!
//! Regexes that a DFA cannot express (look-around, back-references) load as terminals without
//! a pattern ([`crate::grammar::NoPattern::Unsupported`]).
//!
//! # Differences from Lark
//!
//! - Lark drops unused rules by repeatedly removing rules no *other* rule mentions; munch keeps
//!   exactly the rules reachable from the start rule (and so possibly fewer terminals).
//! - munch also rejects a reachable rule that derives no finite string, and checks every
//!   terminal definition and literal, used or not.
//! - Lark rejects a grammar whose expansion to BNF yields the same production twice ("Rules
//!   defined twice", e.g. `a: "x"? | "x"`); munch keeps the EBNF and accepts it.
//! - A `%declare`d terminal's name is never given to an anonymous literal.
//! - An anonymous regex literal reuses a defined terminal only when that terminal is a single
//!   literal with the same source and flags (Lark also compares joined regexes of composite
//!   terminals).
//! - `"^".."z"` is the range of characters `^`–`z` (Lark pastes the ends into a regex class,
//!   where a leading `^` negates it).
//! - `\ud800`-style lone surrogates are rejected (a Rust string cannot hold them).

mod ast;
mod common;
mod defs;
mod error;
mod imports;
mod lex;
mod literal;
mod lower;
mod names;
mod order;
mod parse;
mod pyre;
mod source;
mod terminals;

pub use error::{ErrorKind, GrammarError};

use std::path::PathBuf;

use crate::grammar::Grammar;
use crate::span::Span;

/// How to load a grammar.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    /// The start rules (Lark's default: `start`). With several, a text is accepted when any
    /// of them derives it (Lark parses with one start at a time, chosen per call).
    pub start: Vec<String>,
    /// The deepest nesting of groups (`(`, `[`, template `{`) the parser accepts; deeper input
    /// is a [`ErrorKind::NestingTooDeep`] error. It also bounds regex nesting and the depth of
    /// terminals built from terminals. The parser recurses once per level, so very large values
    /// trade this protection for stack.
    pub max_nesting: usize,
    /// The file name shown in error messages.
    pub file_name: String,
    /// Folders searched first for `%import`ed modules (Lark's `import_paths`).
    pub import_paths: Vec<PathBuf>,
    /// The folder of the grammar's file, where relative imports (`%import .mod.x`) look; the
    /// current folder when `None`.
    pub base_dir: Option<PathBuf>,
    /// The `grammars` folder of an installed `lark` package, for `%import python` and
    /// `%import lark` (munch builds in `common` and `unicode` only).
    pub lark_grammars: Option<PathBuf>,
    /// The most bytes of grammar text, the imported modules' included (4 MiB by default: a
    /// generated grammar of 8,000 keywords is 79 KB, SynCode's largest 12 KB). A larger
    /// grammar is an [`ErrorKind::LimitExceeded`] error before anything is parsed, where
    /// lowering and table construction would take seconds.
    pub max_grammar_bytes: usize,
    /// Keep the reserved intersection groups of regex terminals
    /// ([`munch_lexer::dfa::meet_name`]: the lexemes must match, or must not match, the
    /// group's pattern too). For grammars a front end generates (munch's JSON Schema
    /// compiler). Off by default, and then such a group name is a [`ErrorKind::BadRegex`]
    /// error: read as a plain group, a schema's terminal loaded from its Lark text would take
    /// more than the schema allows.
    pub meets: bool,
}

impl Default for LoadConfig {
    fn default() -> Self {
        Self {
            start: vec!["start".to_string()],
            max_nesting: 256,
            file_name: "<grammar>".to_string(),
            import_paths: Vec::new(),
            base_dir: None,
            lark_grammars: None,
            max_grammar_bytes: 4 << 20,
            meets: false,
        }
    }
}

/// An error before it is located: a kind and byte positions.
#[derive(Debug)]
pub(crate) struct RawError {
    pub(crate) kind: ErrorKind,
    pub(crate) pos: ast::Pos,
    pub(crate) aux: Option<ast::Pos>,
}

/// Loads the Lark grammar `source`.
///
/// Never panics on any input; every failure is a located [`GrammarError`].
pub fn load(source: &[u8], config: &LoadConfig) -> Result<Grammar, GrammarError> {
    let src = match std::str::from_utf8(source) {
        Ok(s) => s,
        Err(e) => return Err(invalid_utf8(source, &e, &config.file_name)),
    };
    let mut sources = imports::Sources::new(src, &config.file_name, config.max_grammar_bytes);
    let located = |sources: &imports::Sources, raw: RawError| {
        let mut kind = raw.kind;
        let text = sources.text.as_str();
        if let ErrorKind::NumberOutOfRange { text: t } = &mut kind {
            if t.is_empty() {
                *t = text
                    .get(raw.pos.start..raw.pos.end)
                    .unwrap_or("")
                    .to_string();
            }
        }
        let place = |p: ast::Pos| {
            let file = sources.file_at(p.start);
            let body = text.get(file.start..file.end).unwrap_or("");
            let span = source::LineIndex::new(body).span(
                body,
                p.start.saturating_sub(file.start),
                p.end.saturating_sub(file.start),
            );
            (span, body, file.name.as_str())
        };
        let (span, body, name) = place(raw.pos);
        let e = GrammarError::new(kind, span, body.as_bytes(), name);
        match raw.aux {
            Some(aux) => {
                let (span, body, _) = place(aux);
                e.with_auxiliary(span, body.as_bytes())
            }
            None => e,
        }
    };
    if src.len() > config.max_grammar_bytes {
        let mut at = config.max_grammar_bytes;
        while !src.is_char_boundary(at) {
            at -= 1;
        }
        let pos = ast::Pos { start: at, end: at };
        let kind = ErrorKind::LimitExceeded {
            what: "bytes of grammar text (`max_grammar_bytes`)",
            limit: config.max_grammar_bytes,
        };
        return Err(located(
            &sources,
            RawError {
                kind,
                pos,
                aux: None,
            },
        ));
    }
    let file = match parse::parse(src, config.max_nesting) {
        Ok(f) => f,
        Err(raw) => return Err(located(&sources, raw)),
    };
    let finder = imports::Finder {
        import_paths: &config.import_paths,
        lark_grammars: config.lark_grammars.as_deref(),
        max_nesting: config.max_nesting,
    };
    let flat = match imports::flatten(file, &mut sources, &finder, config.base_dir.as_deref()) {
        Ok(f) => f,
        Err(raw) => return Err(located(&sources, raw)),
    };
    // Spans of definitions are within their own file.
    let indexes: Vec<source::LineIndex> = sources
        .files
        .iter()
        .map(|f| source::LineIndex::new(sources.text.get(f.start..f.end).unwrap_or("")))
        .collect();
    let span = |p: ast::Pos| {
        let i = sources
            .files
            .partition_point(|f| f.start <= p.start)
            .saturating_sub(1);
        let f = &sources.files[i];
        let body = sources.text.get(f.start..f.end).unwrap_or("");
        indexes[i].span(
            body,
            p.start.saturating_sub(f.start),
            p.end.saturating_sub(f.start),
        )
    };
    lower::lower(&flat, &sources.text, config, &span).map_err(|raw| located(&sources, raw))
}

fn invalid_utf8(source: &[u8], e: &std::str::Utf8Error, file_name: &str) -> GrammarError {
    let at = e.valid_up_to();
    let prefix = &source[..at];
    let line_start = prefix
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = prefix.iter().filter(|&&b| b == b'\n').count() + 1;
    // The prefix is valid UTF-8, so its characters can be counted.
    let column = std::str::from_utf8(&prefix[line_start..]).map_or(0, |s| s.chars().count()) + 1;
    let span = Span {
        start: at,
        end: at + e.error_len().unwrap_or(source.len() - at).max(1),
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    };
    GrammarError::new(ErrorKind::InvalidUtf8, span, source, file_name)
}
