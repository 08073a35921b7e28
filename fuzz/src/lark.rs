//! The `grammar_load` target: [`load`] on arbitrary bytes and on near-valid Lark text returns a
//! grammar that keeps its documented invariants, or an error whose location is right; it never
//! panics, and a loaded grammar goes on through [`Parser::new`] (with small budgets) and a
//! commit without panicking either.
//!
//! Near-valid text is generated from Lark's own grammar: rules (with `?`, `!`, `_`, priorities,
//! templates, aliases), terminals (literals with escapes and the `i` flag, Python regexes with
//! flags, look-around and back-references, `"a".."z"` ranges, terminals made of terminals) and
//! directives (`%ignore`, `%import common`, `%declare`, `%override`, `%extend`, unknown ones),
//! with names drawn from small pools and every name used then (mostly) defined, so that most
//! texts load; half of them are then damaged by a few random edits, and a tenth of the cases
//! are raw bytes.

use std::fmt;
use std::fmt::Write;

use arbitrary::{Arbitrary, Result, Unstructured};
use munch_glr::cfg::NormalizeConfig;
use munch_glr::grammar::{Expr, Grammar};
use munch_glr::lark::{load, ErrorKind, GrammarError, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_glr::span::Span;
use munch_lexer::dfa::LexerConfig;
use munch_testkit::generate::{render_text, GenerateConfig, Generator, SeededRng};

use crate::repro::{bytes_literal, Repro};

/// Longest grammar text, in bytes.
pub const MAX_LEN: usize = 4096;

/// One `grammar_load` case: the grammar text.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct LarkCase {
    /// The text handed to [`load`] (at most [`MAX_LEN`] bytes).
    pub text: Vec<u8>,
}

const RULES: &[&str] = &["start", "a", "b", "_c", "?expr", "!item"];
const TERMS: &[&str] = &["A", "B", "_C", "NUMBER", "WS", "ID"];
const COMMON: &[&str] = &[
    "NUMBER",
    "WS",
    "CNAME",
    "ESCAPED_STRING",
    "INT",
    "SIGNED_NUMBER",
    "C_COMMENT",
    "_EXP",
];
/// String literal bodies: mostly valid, a few bad escapes and a lone surrogate.
const LITERAL_BODIES: &[&str] = &[
    "a",
    "if",
    "(",
    ")",
    ",",
    "+",
    "é",
    "\\\"",
    "\\\\",
    "\\n",
    "\\t",
    "\\x41",
    "\\u00e9",
    " ",
    "ab",
    "€",
    "\\U0001F600",
];
const BAD_LITERAL_BODIES: &[&str] = &["\\x4", "\\q", "\\ud800", "\\U0011FFFF", "\\"];
/// Python regex pieces munch translates, and whether each matches the empty string.
const REGEX_SNIPPETS: &[(&str, bool)] = &[
    ("[a-z]+", false),
    ("\\d+", false),
    ("\\w", false),
    ("\\s*", true),
    ("(?i:ab)", false),
    ("a*?b", false),
    (".+?", false),
    ("[^\"\\\\]*", true),
    ("\\x41", false),
    ("\\u00e9", false),
    ("x{2,3}", false),
    ("x{,3}", true),
    ("x{3}", false),
    ("[\\]]", false),
    ("(?#note)", true),
    ("(?s:.)", false),
    (".", false),
    ("\\/", false),
    ("é+", false),
    ("\\\\", false),
    ("(a|bc)", false),
    ("(?P<n>x)", false),
    ("[+-]?", true),
    ("\\.", false),
    ("\\t", false),
];
/// Python regex pieces a DFA cannot express or that are malformed.
const BAD_REGEX_SNIPPETS: &[&str] = &[
    "(?=x)y",
    "(?!x)",
    "(?<=a)b",
    "(a)\\1",
    "(?P<n>x)(?P=n)",
    "\\Z",
    "^a$",
    "\\b",
    "a|",
    "()",
    "[[:alpha:]]",
    "\\N{DASH}",
    "\\p{L}",
    "[z-a]",
    "(",
    "*",
    "a{99999}",
    "x*",
];
const EDIT_PIECES: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "\"",
    "/",
    ":",
    "\n",
    "%",
    "~",
    "..",
    "->",
    "|",
    "é",
    ".",
    "?",
    "*",
    "+",
    "-1",
    "99999999999",
    "_",
    "\\",
    "#",
    "start",
    "A",
];

/// The text generator: what it defined and what it referred to.
#[derive(Default)]
struct Doc {
    /// Whether to put faults in (bad escapes, unsupported regexes, reversed ranges, ...).
    faulty: bool,
    out: String,
    /// The terminals the terminal being defined may refer to.
    term_refs: &'static [&'static str],
    defined: Vec<String>,
    used: Vec<String>,
}

impl Doc {
    /// A fault, now and then, in a faulty document.
    fn rare(&self, u: &mut Unstructured<'_>) -> Result<bool> {
        Ok(self.faulty && u.ratio(1, 6)?)
    }

    fn use_name(&mut self, u: &mut Unstructured<'_>, pool: &[&str]) -> Result<()> {
        let name = u.choose(pool)?.trim_start_matches(['?', '!']);
        self.used.push(name.to_string());
        self.out.push_str(name);
        Ok(())
    }

    fn literal(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        self.out.push('"');
        let n = if self.rare(u)? {
            0
        } else {
            u.int_in_range(1..=3)?
        };
        for _ in 0..n {
            let body = if self.rare(u)? {
                u.choose(BAD_LITERAL_BODIES)?
            } else {
                u.choose(LITERAL_BODIES)?
            };
            self.out.push_str(body);
        }
        self.out.push('"');
        if u.ratio(1, 5)? {
            self.out.push('i');
        }
        Ok(())
    }

    fn regex(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        self.out.push('/');
        let mut nullable = true;
        for _ in 0..u.int_in_range(1..=3)? {
            if self.rare(u)? {
                self.out.push_str(u.choose(BAD_REGEX_SNIPPETS)?);
            } else {
                let (piece, empty) = *u.choose(REGEX_SNIPPETS)?;
                self.out.push_str(piece);
                nullable &= empty;
            }
        }
        if nullable {
            self.out.push('z');
        }
        self.out.push('/');
        for flag in ["i", "m", "s", "x", "u", "l"] {
            if u.ratio(1, 10)? {
                self.out.push_str(flag);
            }
        }
        Ok(())
    }

    fn number(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        if self.rare(u)? {
            let n = u.choose(&["99999999999999999999", "-1", "0"])?;
            self.out.push_str(n);
        } else {
            let _ = write!(self.out, "{}", u.int_in_range(1..=4)?);
        }
        Ok(())
    }

    /// One atom with its operator; `terminal` restricts atoms to a terminal body's.
    fn item(&mut self, u: &mut Unstructured<'_>, depth: u32, terminal: bool) -> Result<()> {
        let choice = if depth == 0 {
            u.int_in_range(0..=4)?
        } else {
            u.int_in_range(0..=8)?
        };
        match choice {
            0 if !terminal => self.use_name(u, RULES)?,
            0 | 1 if !terminal => self.use_name(u, TERMS)?,
            // A terminal refers only to terminals after it in the pool: no cycles.
            0 | 1 if !self.term_refs.is_empty() && !self.rare(u)? => {
                let refs = self.term_refs;
                self.use_name(u, refs)?
            }
            0 | 1 if self.faulty => self.use_name(u, TERMS)?,
            0 | 1 => self.literal(u)?,
            2 => self.literal(u)?,
            3 => self.regex(u)?,
            4 => {
                // Ends in order, but for the rare bad one.
                let (lo, hi) = if self.rare(u)? {
                    ("\"z\"", "\"a\"")
                } else {
                    *u.choose(&[
                        ("\"a\"", "\"z\""),
                        ("\"0\"", "\"9\""),
                        ("\"a\"", "\"é\""),
                        ("\"\\x41\"", "\"\\u00e9\""),
                    ])?
                };
                let _ = write!(self.out, "{lo}..{hi}");
            }
            5 | 6 => {
                self.out.push('(');
                self.alternatives(u, depth - 1, terminal, false)?;
                self.out.push(')');
            }
            7 => {
                self.out.push('[');
                self.alternatives(u, depth - 1, terminal, false)?;
                self.out.push(']');
            }
            _ if terminal => self.literal(u)?,
            _ => {
                // Template arguments are single values, without operators.
                self.out.push_str("sep{");
                match u.int_in_range(0..=2)? {
                    0 => self.use_name(u, RULES)?,
                    1 => self.use_name(u, TERMS)?,
                    _ => self.literal(u)?,
                }
                self.out.push_str(", ");
                self.literal(u)?;
                self.out.push('}');
            }
        }
        match u.int_in_range(0..=11)? {
            0 => self.out.push('?'),
            1 => self.out.push('*'),
            2 => self.out.push('+'),
            3 => {
                self.out.push_str(" ~ ");
                self.number(u)?;
            }
            4 if self.rare(u)? => {
                self.out.push_str(" ~ ");
                self.number(u)?;
                self.out.push_str("..");
                self.number(u)?;
            }
            4 => {
                let min = u.int_in_range(0..=3)?;
                let _ = write!(self.out, " ~ {min}..{}", min + u.int_in_range(0..=2)?);
            }
            _ => {}
        }
        Ok(())
    }

    /// Alternatives of item sequences; `top` allows `-> alias`.
    fn alternatives(
        &mut self,
        u: &mut Unstructured<'_>,
        depth: u32,
        terminal: bool,
        top: bool,
    ) -> Result<()> {
        for a in 0..u.int_in_range(1..=3)? {
            if a > 0 {
                self.out.push_str(" | ");
            }
            let n = if self.rare(u)? {
                0
            } else {
                u.int_in_range(1..=3)?
            };
            for i in 0..n {
                if i > 0 {
                    self.out.push(' ');
                }
                self.item(u, depth, terminal)?;
            }
            if top && !terminal && u.ratio(1, 6)? {
                self.out.push_str(" -> alias");
            }
        }
        Ok(())
    }

    /// A name of `pool` not defined yet (rarely one that is: a duplicate).
    fn fresh(&self, u: &mut Unstructured<'_>, pool: &[&'static str]) -> Result<&'static str> {
        let free: Vec<&'static str> = pool
            .iter()
            .copied()
            .filter(|n| {
                !self
                    .defined
                    .iter()
                    .any(|d| d == n.trim_start_matches(['?', '!']))
            })
            .collect();
        if free.is_empty() || self.rare(u)? {
            u.choose(pool).copied()
        } else {
            u.choose(&free).copied()
        }
    }

    fn define(&mut self, name: &str) {
        self.defined
            .push(name.trim_start_matches(['?', '!']).to_string());
    }

    fn rule(&mut self, u: &mut Unstructured<'_>, name: &str) -> Result<()> {
        self.define(name);
        self.out.push_str(name);
        if self.rare(u)? {
            self.out.push('.');
            self.number(u)?;
        }
        self.out.push_str(": ");
        // Lark refuses aliases in inlined (`_`) rules.
        let aliases = !name.starts_with('_') || self.faulty;
        self.alternatives(u, 2, false, aliases)?;
        self.out.push('\n');
        Ok(())
    }

    fn terminal(&mut self, u: &mut Unstructured<'_>, name: &str) -> Result<()> {
        self.define(name);
        let at = TERMS
            .iter()
            .position(|t| *t == name)
            .unwrap_or(TERMS.len() - 1);
        self.term_refs = &TERMS[at + 1..];
        self.out.push_str(name);
        if u.ratio(1, 5)? {
            self.out.push('.');
            self.number(u)?;
        }
        self.out.push_str(": ");
        self.alternatives(u, 1, true, false)?;
        self.term_refs = &[];
        self.out.push('\n');
        Ok(())
    }

    fn directive(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        match u.int_in_range(0..=7)? {
            0 | 1 => {
                self.out.push_str("%ignore ");
                match u.int_in_range(0..=2)? {
                    0 => self.use_name(u, TERMS)?,
                    1 => self.literal(u)?,
                    _ => self.regex(u)?,
                }
            }
            2 | 3 => {
                let name = *u.choose(COMMON)?;
                if u.ratio(1, 3)? {
                    let _ = write!(self.out, "%import common ({name}, WS)");
                    self.define(name);
                    self.define("WS");
                } else if u.ratio(1, 3)? {
                    let alias = *u.choose(TERMS)?;
                    let _ = write!(self.out, "%import common.{name} -> {alias}");
                    self.define(alias);
                } else {
                    let _ = write!(self.out, "%import common.{name}");
                    self.define(name);
                }
            }
            4 => {
                let name = *u.choose(TERMS)?;
                let _ = write!(self.out, "%declare {name}");
                self.define(name);
            }
            5 => {
                let which = *u.choose(&["%override", "%extend"])?;
                let _ = write!(self.out, "{which} ");
                self.use_name(u, &RULES[1..4])?;
                self.out.push_str(": ");
                self.alternatives(u, 1, false, false)?;
            }
            6 => self
                .out
                .push_str(u.choose(&["// note", "# note", "", "%unknown x"])?),
            _ => {
                self.out.push_str("sep{x, s}: x (s x)*");
                self.define("sep");
            }
        }
        self.out.push('\n');
        Ok(())
    }
}

/// A near-valid grammar text: a start rule, a few more definitions and directives, then
/// (mostly) a definition of every name used but not defined.
fn document(u: &mut Unstructured<'_>) -> Result<String> {
    let mut doc = Doc {
        faulty: u.ratio(1, 3)?,
        ..Doc::default()
    };
    if !doc.rare(u)? {
        doc.rule(u, "start")?;
    }
    for _ in 0..u.int_in_range(0..=6)? {
        match u.int_in_range(0..=5)? {
            0 | 1 => {
                let name = doc.fresh(u, RULES)?;
                doc.rule(u, name)?;
            }
            2 | 3 => {
                let name = doc.fresh(u, TERMS)?;
                doc.terminal(u, name)?;
            }
            _ => doc.directive(u)?,
        }
    }
    if !doc.out.contains("sep{x") && doc.out.contains("sep{") && !doc.rare(u)? {
        doc.out.push_str("sep{x, s}: x (s x)*\n");
    }
    // Define what is missing, in a fixed order, with simple bodies.
    let mut missing: Vec<String> = doc
        .used
        .iter()
        .filter(|n| !doc.defined.contains(n))
        .cloned()
        .collect();
    missing.sort();
    missing.dedup();
    for name in missing {
        if doc.rare(u)? {
            continue;
        }
        let first = name.trim_start_matches('_').chars().next().unwrap_or('a');
        if first.is_ascii_uppercase() {
            let _ = writeln!(doc.out, "{name}: \"{}\"", name.to_lowercase());
        } else {
            let _ = writeln!(doc.out, "{name}: \"{name}\"");
        }
    }
    Ok(doc.out)
}

impl<'a> Arbitrary<'a> for LarkCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut text = if u.ratio(1, 10)? {
            let n = u.int_in_range(0..=256)?;
            let raw = u.bytes(n.min(u.len()))?;
            // Mostly printable ASCII, so that the raw input gets past UTF-8 validation.
            if u.ratio(3, 4)? {
                raw.iter().map(|&b| 0x20 + b % 0x5f).collect()
            } else {
                raw.to_vec()
            }
        } else {
            document(u)?.into_bytes()
        };
        if u.ratio(1, 2)? {
            for _ in 0..u.int_in_range(1..=3)? {
                if text.is_empty() {
                    break;
                }
                let at = u.int_in_range(0..=text.len())?;
                match u.int_in_range(0..=2)? {
                    0 => {
                        let piece = u.choose(EDIT_PIECES)?;
                        text.splice(at..at, piece.bytes());
                    }
                    1 => {
                        let end = (at + u.int_in_range(1..=8)?).min(text.len());
                        text.drain(at..end);
                    }
                    _ => {
                        let end = (at + u.int_in_range(1..=16)?).min(text.len());
                        let copy = text[at..end].to_vec();
                        text.splice(at..at, copy);
                    }
                }
            }
        }
        text.truncate(MAX_LEN);
        Ok(LarkCase { text })
    }
}

impl Repro for LarkCase {
    fn repro(&self, out: &mut String) {
        out.push_str("LarkCase { text: ");
        out.push_str(&bytes_literal(&self.text));
        out.push_str(".to_vec() }");
    }
}

impl fmt::Debug for LarkCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let comment: Vec<String> = String::from_utf8_lossy(&self.text)
            .lines()
            .map(|l| format!("| {l}"))
            .collect();
        f.write_str(&crate::repro::test_text(
            "grammar_load_regression",
            "lark::check",
            self,
            &comment,
        ))
    }
}

/// Budgets small enough for fuzzing; exceeding one is a typed error, which is fine.
pub fn small_parser_config() -> ParserConfig {
    ParserConfig {
        max_lr_states: 2_000,
        max_lr_actions: 1_000_000,
        max_heads: 200,
        max_nodes_per_step: 10_000,
        max_work_per_commit: 1_000_000,
        max_rollback: 1_000,
        lexer: LexerConfig {
            max_states: 5_000,
            max_build_memory: 64 << 20,
            ..LexerConfig::default()
        },
        normalize: NormalizeConfig {
            max_cfg_symbols: 20_000,
        },
        ..ParserConfig::default()
    }
}

/// Runs the `grammar_load` check; `Err` describes what is wrong.
pub fn check(case: &LarkCase) -> std::result::Result<(), String> {
    let src = &case.text;
    match load(src, &LoadConfig::default()) {
        Ok(g) => {
            check_grammar(&g, src)?;
            exercise(&g);
            Ok(())
        }
        Err(e) => check_error(&e, src),
    }
}

fn check_span(what: &str, span: Span, src: &[u8]) -> std::result::Result<(), String> {
    if span.start > span.end || span.end > src.len() {
        return Err(format!(
            "{what}: span {span:?} is not inside the {}-byte source",
            src.len()
        ));
    }
    let prefix = &src[..span.start];
    let Ok(prefix_text) = std::str::from_utf8(prefix) else {
        return Err(format!(
            "{what}: span {span:?} starts inside a character or after invalid UTF-8"
        ));
    };
    if let Ok(s) = std::str::from_utf8(src) {
        if !s.is_char_boundary(span.end) {
            return Err(format!("{what}: span {span:?} ends inside a character"));
        }
    }
    let line = 1 + prefix.iter().filter(|&&b| b == b'\n').count();
    let line_start = prefix_text.rfind('\n').map_or(0, |i| i + 1);
    let column = 1 + prefix_text[line_start..].chars().count();
    if (span.line as usize, span.column as usize) != (line, column) {
        return Err(format!(
            "{what}: span {span:?} says line {} column {}, its start is at line {line} column \
             {column}",
            span.line, span.column
        ));
    }
    Ok(())
}

fn check_error(e: &GrammarError, src: &[u8]) -> std::result::Result<(), String> {
    let what = format!("error {:?}", e.kind());
    let span = e.span();
    if *e.kind() == ErrorKind::InvalidUtf8 {
        let valid = match std::str::from_utf8(src) {
            Ok(_) => return Err(format!("{what} on valid UTF-8")),
            Err(u) => u.valid_up_to(),
        };
        if span.start != valid {
            return Err(format!(
                "{what}: span {span:?}, the first bad byte is at {valid}"
            ));
        }
    }
    check_span(&what, span, src)?;
    if let Some(aux) = e.auxiliary_span() {
        check_span(&format!("{what} (auxiliary)"), aux, src)?;
    }
    let shown = e.to_string();
    let head = format!("<grammar>:{}:{}: error: ", span.line, span.column);
    if !shown.starts_with(&head) || !shown.contains('^') {
        return Err(format!(
            "{what}: Display does not start with {head:?} or has no caret:\n{shown}"
        ));
    }
    Ok(())
}

/// The invariants [`Grammar`] documents.
fn check_grammar(g: &Grammar, src: &[u8]) -> std::result::Result<(), String> {
    if g.start.as_usize() >= g.rules.len() {
        return Err(format!(
            "start {:?} out of {} rules",
            g.start,
            g.rules.len()
        ));
    }
    for (i, t) in g.terminals.iter().enumerate() {
        if let Ok(p) = &t.pattern {
            if p.hir.properties().minimum_len() == Some(0) {
                return Err(format!(
                    "terminal {i} `{}` ({}) matches the empty string",
                    t.name, p.source
                ));
            }
        }
        if t.span.start > t.span.end || t.span.end > src.len() {
            return Err(format!(
                "terminal `{}`: span {:?} out of range",
                t.name, t.span
            ));
        }
    }
    for r in &g.rules {
        if r.span.start > r.span.end || r.span.end > src.len() {
            return Err(format!("rule `{}`: span {:?} out of range", r.name, r.span));
        }
        let mut work = vec![&r.expr];
        while let Some(e) = work.pop() {
            match e {
                Expr::Empty => {}
                Expr::Terminal(t) if t.as_usize() >= g.terminals.len() => {
                    return Err(format!("rule `{}` uses terminal {t} out of range", r.name))
                }
                Expr::Rule(n) if n.as_usize() >= g.rules.len() => {
                    return Err(format!("rule `{}` uses rule {n:?} out of range", r.name))
                }
                Expr::Terminal(_) | Expr::Rule(_) => {}
                Expr::Seq(es) => work.extend(es),
                Expr::Alt(alts) => work.extend(alts.iter().map(|a| &a.expr)),
                Expr::Optional(e) | Expr::Star(e) | Expr::Plus(e) => work.push(e),
                Expr::Repeat { expr, min, max } => {
                    if max < min {
                        return Err(format!("rule `{}`: repeat {min}..{max}", r.name));
                    }
                    work.push(expr);
                }
            }
        }
    }
    Ok(())
}

/// Builds a parser with small budgets and commits a generated sentence: any error is fine, a
/// panic is not.
fn exercise(g: &Grammar) {
    let Ok(parser) = Parser::new(g, &small_parser_config()) else {
        return;
    };
    let parser = std::sync::Arc::new(parser);
    let gen = Generator::new(parser.cfg());
    let mut rng = SeededRng::new(7);
    let config = GenerateConfig {
        max_depth: 6,
        max_len: 16,
    };
    if let Some(sentence) = gen.sentence(&mut rng, &config) {
        if let Some(text) = render_text(g, parser.lexer(), &sentence, b" ", &mut rng, 4) {
            let mut state = ParserState::new(parser.clone());
            let _ = state.commit_bytes(&text[..text.len().min(256)]);
            let _ = state.is_accepting();
        }
    }
    let mut state = ParserState::new(parser);
    let _ = state.commit_bytes(b"a(1, \"x\")");
    let _ = state.is_accepting();
}
