//! Adapted copies of a grammar for engines that refuse some of Lark's features.
//!
//! Two rewrites, both on the Lark text:
//!
//! - **Priorities dropped**: `NAME.2:` and `rule.3:` become `NAME:` and `rule:`. A terminal
//!   priority only breaks ties of the same lexeme, so the terminals' languages do not change,
//!   but which terminal a tied lexeme becomes may: the copy can accept other texts. The corpus
//!   says whether it does (see the tests).
//! - **Lazy regexes rewritten to greedy ones**: munch (like Python's `re`) reads `/".*?"/` as
//!   the shortest lexeme, which engines without lazy quantifiers cannot express. Each regex with
//!   a lazy quantifier is replaced by the first candidate whose terminals match exactly the same
//!   lexemes under munch's semantics, checked by walking the product of the two terminals'
//!   DFAs: first the regex with its lazy markers removed (right whenever the language is
//!   prefix-free, as in `"(?:[^"\\]|\\.)*?"`), then the delimiter form (`".*?"` →
//!   `"[^"\n]*"`, `/\*[\s\S]*?\*\/` → `/\*(?:[^*]|\*+[^*/])*\*+\/`). A regex no candidate
//!   matches is kept lazy and named in [`Adapted::kept_lazy`].
//!
//! [`adapt`] returns the copy with what it changed, so the report can say which engine ran
//! which copy.

use std::fmt;

use munch_glr::grammar::Grammar;
use munch_glr::lark::{self, LoadConfig};
use munch_lexer::dfa::{Lexer, LexerConfig, TerminalSpec};
use munch_lexer::LexState;

/// An adapted copy of a grammar and what was changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adapted {
    /// The adapted Lark text.
    pub text: String,
    /// Each priority dropped, as written (`HEX_LIT.2`).
    pub priorities_dropped: Vec<String>,
    /// Each lazy regex rewritten: (before, after).
    pub lazy_rewritten: Vec<(String, String)>,
    /// Lazy regexes no greedy candidate matched exactly.
    pub kept_lazy: Vec<String>,
}

impl Adapted {
    /// Whether the copy differs from the original.
    pub fn changed(&self) -> bool {
        !self.priorities_dropped.is_empty() || !self.lazy_rewritten.is_empty()
    }

    /// One line saying what changed (`priorities dropped: A.2, b.3; lazy → greedy: /x*?y/ →
    /// /[^y]*y/`), or `unchanged`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.priorities_dropped.is_empty() {
            parts.push(format!(
                "priorities dropped: {}",
                self.priorities_dropped.join(", ")
            ));
        }
        if !self.lazy_rewritten.is_empty() {
            let pairs: Vec<String> = self
                .lazy_rewritten
                .iter()
                .map(|(a, b)| format!("{a} → {b}"))
                .collect();
            parts.push(format!("lazy → greedy: {}", pairs.join(", ")));
        }
        if !self.kept_lazy.is_empty() {
            parts.push(format!("kept lazy: {}", self.kept_lazy.join(", ")));
        }
        if parts.is_empty() {
            "unchanged".to_string()
        } else {
            parts.join("; ")
        }
    }
}

/// Why a grammar could not be adapted.
#[derive(Debug)]
pub struct AdaptError(String);

impl fmt::Display for AdaptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AdaptError {}

/// The adapted copy of Lark grammar `text` (see the module docs). The original must load in
/// munch: its terminals are the reference the rewrites are checked against.
pub fn adapt(text: &str) -> Result<Adapted, AdaptError> {
    let original = load(text).map_err(|e| AdaptError(format!("the original: {e}")))?;
    let (mut current, priorities_dropped) = drop_priorities(text);
    let mut lazy_rewritten = Vec::new();
    let mut kept_lazy = Vec::new();
    // Rewrite one regex at a time, checking every terminal after each: a regex can be part of
    // several terminals (`_STRING_INNER` inside `STRING`).
    let mut from = 0;
    while let Some(literal) = regex_literals(&current)
        .into_iter()
        .find(|l| l.start >= from && has_lazy(l.body(&current)))
    {
        let body = literal.body(&current).to_string();
        let before = current[literal.start..literal.end].to_string();
        let mut chosen = None;
        for candidate in candidates(&body) {
            let replacement = format!("/{candidate}/{}", literal.flags(&current));
            let mut trial = current.clone();
            trial.replace_range(literal.start..literal.end, &replacement);
            if same_terminal_languages(&original, &trial) {
                chosen = Some((trial, replacement));
                break;
            }
        }
        match chosen {
            Some((trial, replacement)) => {
                from = literal.start + replacement.len();
                current = trial;
                lazy_rewritten.push((before, replacement));
            }
            None => {
                from = literal.end;
                kept_lazy.push(before);
            }
        }
    }
    Ok(Adapted {
        text: current,
        priorities_dropped,
        lazy_rewritten,
        kept_lazy,
    })
}

fn load(text: &str) -> Result<Grammar, String> {
    let config = LoadConfig {
        file_name: "adapted.lark".to_string(),
        ..LoadConfig::default()
    };
    lark::load(text.as_bytes(), &config).map_err(|e| e.to_string())
}

/// `text` without rule and terminal priorities, and the priorities removed (`NAME.2`).
fn drop_priorities(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut dropped = Vec::new();
    for line in text.split_inclusive('\n') {
        match priority_at(line) {
            Some((name_end, dot_end)) => {
                dropped.push(
                    line[..dot_end]
                        .trim_start()
                        .trim_start_matches(['?', '!'])
                        .to_string(),
                );
                out.push_str(&line[..name_end]);
                out.push_str(&line[dot_end..]);
            }
            None => out.push_str(line),
        }
    }
    (out, dropped)
}

/// For a definition line `  ?name.N :`, the end of the name and the end of `.N`.
fn priority_at(line: &str) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    if i < bytes.len() && (bytes[i] == b'?' || bytes[i] == b'!') {
        i += 1;
    }
    let name_start = i;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    if i == name_start || !(bytes[name_start].is_ascii_alphabetic() || bytes[name_start] == b'_') {
        return None;
    }
    let name_end = i;
    if bytes.get(i) != Some(&b'.') {
        return None;
    }
    i += 1;
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i == digits {
        return None;
    }
    let dot_end = i;
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    (bytes.get(i) == Some(&b':')).then_some((name_end, dot_end))
}

/// A `/body/flags` regex literal in a Lark text, by byte offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RegexLiteral {
    /// The opening `/`.
    start: usize,
    /// The closing `/`.
    close: usize,
    /// Past the flags.
    end: usize,
}

impl RegexLiteral {
    fn body<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start + 1..self.close]
    }

    fn flags<'t>(&self, text: &'t str) -> &'t str {
        &text[self.close + 1..self.end]
    }
}

/// Every regex literal of a Lark text, skipping strings and `//` comments.
fn regex_literals(text: &str) -> Vec<RegexLiteral> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'/' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if i >= bytes.len() || bytes[i] != b'/' {
                    continue;
                }
                let close = i;
                i += 1;
                while i < bytes.len() && b"imslux".contains(&bytes[i]) {
                    i += 1;
                }
                out.push(RegexLiteral {
                    start,
                    close,
                    end: i,
                });
            }
            _ => i += 1,
        }
    }
    out
}

/// The byte offsets of the lazy `?` markers in a regex body (the `?` right after a quantifier,
/// outside classes and escapes).
fn lazy_markers(body: &str) -> Vec<usize> {
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut after_quantifier = false;
    let mut in_class = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' {
            i += 2;
            after_quantifier = false;
            continue;
        }
        if in_class {
            if b == b']' {
                in_class = false;
            }
            i += 1;
            continue;
        }
        match b {
            b'[' => {
                in_class = true;
                // `[]...]` and `[^]...]` hold a literal `]`.
                if bytes.get(i + 1) == Some(&b'^') {
                    i += 1;
                }
                if bytes.get(i + 1) == Some(&b']') {
                    i += 1;
                }
                after_quantifier = false;
            }
            b'?' if after_quantifier => {
                out.push(i);
                after_quantifier = false;
            }
            b'*' | b'+' | b'?' | b'}' => after_quantifier = true,
            b'(' if bytes.get(i + 1) == Some(&b'?') => {
                // `(?:`, `(?i)`: the `?` is no quantifier.
                i += 2;
                after_quantifier = false;
                continue;
            }
            _ => after_quantifier = false,
        }
        i += 1;
    }
    out
}

fn has_lazy(body: &str) -> bool {
    !lazy_markers(body).is_empty()
}

/// Greedy candidates for a lazy regex body, in the order they are tried.
fn candidates(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut greedy = body.to_string();
    for at in lazy_markers(body).into_iter().rev() {
        greedy.remove(at);
    }
    out.push(greedy);
    if let Some(delimited) = delimiter_form(body) {
        out.push(delimited);
    }
    out
}

/// `P S*? D` with `S` any character (`[\s\S]`, `(.|\n)`, or `.` without newline) and `D` one or
/// two literal characters ending the regex, rewritten as "no `D` inside, then `D`".
fn delimiter_form(body: &str) -> Option<String> {
    const ANY: [(&str, bool); 4] = [
        ("[\\s\\S]*?", true),
        ("(.|\\n)*?", true),
        ("(?:.|\\n)*?", true),
        (".*?", false),
    ];
    let (prefix, rest, with_newline) = ANY.iter().find_map(|(pattern, nl)| {
        body.rfind(pattern)
            .map(|at| (&body[..at], &body[at + pattern.len()..], *nl))
    })?;
    let units = literal_units(rest)?;
    let newline = if with_newline { "" } else { "\\n" };
    match units.as_slice() {
        [d] => Some(format!("{prefix}[^{d}{newline}]*{d}")),
        [a, b] if a != b => Some(format!(
            "{prefix}(?:[^{a}{newline}]|{a}+[^{a}{b}{newline}])*{a}+{b}"
        )),
        _ => None,
    }
}

/// A regex tail made of literal characters (`\*\/`, `"`), one escaped or plain unit each.
fn literal_units(rest: &str) -> Option<Vec<String>> {
    let mut units = Vec::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let e = chars.next()?;
            if e.is_ascii_alphanumeric() {
                // `\d`, `\n`, `\w`: classes or controls, not a plain delimiter.
                return None;
            }
            units.push(format!("\\{e}"));
        } else if "[](){}|.*+?^$".contains(c) {
            return None;
        } else if c == '/' {
            units.push("\\/".to_string());
        } else {
            units.push(c.to_string());
        }
    }
    (!units.is_empty()).then_some(units)
}

/// Whether every terminal of `trial` matches exactly the lexemes of the same terminal of
/// `original` (priorities aside), under munch's lexing semantics.
fn same_terminal_languages(original: &Grammar, trial: &str) -> bool {
    let Ok(trial) = load(trial) else {
        return false;
    };
    let (a, b) = (original.terminal_specs(), trial.terminal_specs());
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x.name == y.name && same_language(x, y))
}

/// Whether two terminals match the same lexemes: a walk of the product of their DFAs, bounded.
fn same_language(a: &TerminalSpec, b: &TerminalSpec) -> bool {
    match (&a.hir, &b.hir) {
        (None, None) => return true,
        (Some(x), Some(y)) if x == y => return true,
        (Some(_), Some(_)) => {}
        _ => return false,
    }
    let single = |spec: &TerminalSpec| {
        let spec = TerminalSpec {
            priority: 0,
            ignored: false,
            ..spec.clone()
        };
        Lexer::new(&[spec], &LexerConfig::default()).ok()
    };
    let (Some(la), Some(lb)) = (single(a), single(b)) else {
        return false;
    };
    const MAX_PAIRS: usize = 1_000_000;
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<(LexState, LexState)> = vec![(la.start(), lb.start())];
    while let Some((sa, sb)) = stack.pop() {
        if !seen.insert((sa, sb)) {
            continue;
        }
        if seen.len() > MAX_PAIRS {
            return false;
        }
        if la.accepted(sa).is_empty() != lb.accepted(sb).is_empty() {
            return false;
        }
        for byte in 0..=255u8 {
            let (na, nb) = (la.next(sa, byte), lb.next(sb, byte));
            if !(la.is_dead(na) && lb.is_dead(nb)) {
                stack.push((na, nb));
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_are_dropped_from_rules_and_terminals_only() {
        let text = "start: a b\n?a.3 : X\nb.-1: Y\nX.2: /x+/\nY : \"y.2:\"\n// c.2: z\n";
        let (out, dropped) = drop_priorities(text);
        assert_eq!(
            out,
            "start: a b\n?a : X\nb: Y\nX: /x+/\nY : \"y.2:\"\n// c.2: z\n"
        );
        assert_eq!(dropped, ["a.3", "b.-1", "X.2"]);
    }

    #[test]
    fn lazy_markers_skip_classes_escapes_and_groups() {
        assert_eq!(lazy_markers(r#"".*?""#), [3]);
        assert_eq!(lazy_markers(r"(?:a|b)+?c??"), [8, 11]);
        assert_eq!(lazy_markers(r"[*?]\*?a?"), Vec::<usize>::new());
        assert_eq!(lazy_markers(r"a{2,3}?"), [6]);
    }

    #[test]
    fn regex_literals_skip_strings_and_comments() {
        let text = "A: \"/*' .*? '*/\" // /x*?/\nB: /a\\/b*?/i\n";
        let found: Vec<&str> = regex_literals(text)
            .iter()
            .map(|l| &text[l.start..l.end])
            .collect();
        assert_eq!(found, ["/a\\/b*?/i"]);
    }

    #[test]
    fn delimiter_forms() {
        assert_eq!(delimiter_form(r#"".*?""#).unwrap(), r#""[^"\n]*""#);
        assert_eq!(delimiter_form(r"`.*?`").unwrap(), r"`[^`\n]*`");
        assert_eq!(
            delimiter_form(r"\/\*[\s\S]*?\*\/").unwrap(),
            r"\/\*(?:[^\*]|\*+[^\*\/])*\*+\/"
        );
        assert_eq!(delimiter_form(r"a.*?\d"), None);
    }

    /// Whether `text` is one lexeme of terminal `name` of `grammar` under munch's lexer.
    fn lexes_as(grammar: &str, name: &str, text: &str) -> bool {
        let g = load(grammar).unwrap();
        let specs = g.terminal_specs();
        let id = specs.iter().position(|s| s.name == name).unwrap();
        let lexer = Lexer::new(&specs, &LexerConfig::default()).unwrap();
        lexer
            .tokenize(text.as_bytes())
            .is_ok_and(|l| l.len() == 1 && l[0].terminals.iter().any(|t| t.as_usize() == id))
    }

    #[test]
    fn lazy_regexes_become_equivalent_greedy_ones() {
        let grammar = "start: (S | C | Q)+\nS: /\".*?\"/\nC: /\\/\\*[\\s\\S]*?\\*\\//\n\
                       Q: \"'\" _IN \"'\"\n_IN: /(?:[^'\\\\]|\\\\.)*?/\n%ignore \" \"\n";
        let adapted = adapt(grammar).unwrap();
        assert!(adapted.kept_lazy.is_empty(), "{}", adapted.summary());
        assert_eq!(adapted.lazy_rewritten.len(), 3, "{}", adapted.summary());
        // The escape loop is prefix-free in context: its lazy marker is simply dropped.
        assert!(
            adapted.text.contains(r"/(?:[^'\\]|\\.)*/"),
            "{}",
            adapted.text
        );
        assert!(!regex_literals(&adapted.text)
            .iter()
            .any(|l| has_lazy(l.body(&adapted.text))));
        for (terminal, lexeme) in [("S", "\"a\""), ("C", "/* x * / **/"), ("Q", r"'a\'b'")] {
            assert!(lexes_as(grammar, terminal, lexeme), "{terminal} {lexeme}");
            assert!(
                lexes_as(&adapted.text, terminal, lexeme),
                "{terminal} {lexeme}"
            );
        }
        // Two strings are two lexemes in both (the greedy `".*"` would swallow them as one).
        assert!(!lexes_as(&adapted.text, "S", "\"a\" \"b\""));
    }

    #[test]
    fn a_lazy_regex_without_greedy_equivalent_is_kept() {
        // Shortest match of `a+?` is one `a`: no candidate matches that language... except
        // `a`, which no candidate rule produces; the regex is kept and reported.
        let grammar = "start: A+\nA: /a+?b*/\n";
        let adapted = adapt(grammar).unwrap();
        assert_eq!(adapted.kept_lazy, ["/a+?b*/"]);
        assert!(adapted.lazy_rewritten.is_empty());
    }

    /// Whether munch's parser accepts `text` under `parser`.
    fn accepts(parser: &std::sync::Arc<munch_glr::parser::Parser>, text: &[u8]) -> bool {
        let mut state = munch_glr::parser::ParserState::new(std::sync::Arc::clone(parser));
        state.commit_bytes(text).is_ok() && state.is_accepting()
    }

    /// The adapted copies of SynCode's grammars load in munch. The lazy → greedy rewrite is
    /// exact: the copy accepts exactly the corpus files that the original with only its
    /// priorities dropped accepts. Dropping priorities may change the language (a tie on the
    /// same lexeme goes another way): where no priority was dropped, the copy accepts exactly
    /// the files the original accepts; elsewhere the differences are printed, for the report.
    /// (SynCode's grammars and the Go and Java files are fetched once into the cache.)
    #[test]
    fn adapted_syncode_grammars_accept_the_same_corpus_files() {
        use crate::peers::inputs;
        use munch_glr::parser::{Parser, ParserConfig};
        use std::sync::Arc;
        for name in inputs::GRAMMARS {
            let input = inputs::grammar(name).unwrap();
            let adapted = input.adapted.as_ref().unwrap();
            let build = |text: &str| {
                Arc::new(Parser::new(&load(text).unwrap(), &ParserConfig::default()).unwrap())
            };
            let (no_priorities, _) = drop_priorities(&input.original);
            let original = build(&input.original);
            let unprioritised = build(&no_priorities);
            let copy = build(&adapted.text);
            let files = inputs::text_files(input.language, 12, 6000).unwrap();
            assert!(!files.is_empty(), "{name}: no corpus files");
            let mut accepted = 0;
            for file in &files {
                let text = std::fs::read(file).unwrap();
                let verdict = accepts(&original, &text);
                accepted += usize::from(verdict);
                let without = accepts(&unprioritised, &text);
                assert_eq!(
                    accepts(&copy, &text),
                    without,
                    "{name}: the lazy rewrite changed {}: {}",
                    file.display(),
                    adapted.summary()
                );
                if adapted.priorities_dropped.is_empty() {
                    assert_eq!(without, verdict, "{name}: {}", file.display());
                } else if without != verdict {
                    eprintln!(
                        "{name}: dropping priorities changes {}: original {verdict}, copy {without}",
                        file.display()
                    );
                }
            }
            // The comparison means something only if the original accepts some files.
            assert!(
                accepted > 0,
                "{name}: the original accepts none of {files:?}"
            );
        }
    }

    #[test]
    fn syncode_adaptations_are_what_peers_need() {
        let go = crate::peers::inputs::grammar("go").unwrap();
        let go = go.adapted.unwrap();
        assert!(
            go.priorities_dropped.iter().any(|p| p == "HEX_LIT.2"),
            "{}",
            go.summary()
        );
        assert!(go.kept_lazy.is_empty(), "{}", go.summary());
        assert!(!go.lazy_rewritten.is_empty());
        let java = crate::peers::inputs::grammar("java")
            .unwrap()
            .adapted
            .unwrap();
        assert_eq!(java.lazy_rewritten.len(), 2, "{}", java.summary());
        assert!(java.kept_lazy.is_empty(), "{}", java.summary());
        let json = crate::peers::inputs::grammar("json")
            .unwrap()
            .adapted
            .unwrap();
        assert!(!json.changed(), "{}", json.summary());
    }
}
