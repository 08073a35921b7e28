//! A tiny text form of grammars, for tests and examples (not Lark: see [`munch_glr::lark`]).
//!
//! ```text
//! # a comment
//! expr -> expr '+' term | term        # a rule; the first rule is the start
//!       | '-' expr                    # a line starting with `|` continues the rule above
//! term -> NUM ('*' NUM)* | [ 'x' ] ε  # groups, optional, ?, *, +, ~ n, ~ n..m, ε
//! NUM: /[0-9]+/                       # a named terminal (regex); `NAME.2: ...` sets a priority
//! IF: 'if'                            # a named literal terminal
//! %ignore /[ ]+/                      # an ignored terminal (also `%ignore NAME`)
//! ```
//!
//! Quoted literals in rules (`'+'` or `"+"`) are anonymous terminals named by their text and
//! deduplicated by it. Identifiers name a terminal if one is defined with that name, else a rule.

use std::fmt;

use munch_lexer::TerminalId;
use regex_syntax::hir::Hir;

use munch_glr::grammar::{Alternative, Expr, Grammar, Rule, RuleId, Terminal, TerminalPattern};
use munch_glr::span::Span;

/// A DSL text that could not be read: the 1-based line and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DslError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DslError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for DslError {}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Lit(String),
    Regex(String),
    Num(u32),
    Punct(&'static str),
}

fn tokenize(line: &str, lineno: usize) -> Result<Vec<Tok>, DslError> {
    let err = |m: String| DslError {
        line: lineno,
        message: m,
    };
    let mut out = Vec::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '#' {
            break;
        } else if c == '\'' || c == '"' || c == '/' {
            let quote = c;
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(err(format!("unterminated {quote}"))),
                    Some(&'\\') if quote != '/' => {
                        s.extend(chars.get(i + 1));
                        i += 2;
                    }
                    Some(&'\\') => {
                        // Keep regex escapes, except `\/` which only protects the delimiter.
                        match chars.get(i + 1) {
                            Some(&'/') => s.push('/'),
                            Some(&n) => {
                                s.push('\\');
                                s.push(n);
                            }
                            None => return Err(err("unterminated /".into())),
                        }
                        i += 2;
                    }
                    Some(&ch) if ch == quote => {
                        i += 1;
                        break;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        i += 1;
                    }
                }
            }
            out.push(if quote == '/' {
                Tok::Regex(s)
            } else {
                Tok::Lit(s)
            });
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            out.push(Tok::Num(
                text.parse()
                    .map_err(|_| err(format!("number {text} too large")))?,
            ));
        } else if c.is_alphanumeric() || c == '_' || c == '%' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if word == "ε" {
                out.push(Tok::Punct("ε"));
            } else {
                out.push(Tok::Ident(word));
            }
        } else {
            let rest: String = chars[i..].iter().take(2).collect();
            let p = [
                "->", "..", "|", "(", ")", "[", "]", "?", "*", "+", "~", ":", ".",
            ]
            .into_iter()
            .find(|p| rest.starts_with(p))
            .ok_or_else(|| err(format!("unexpected character {c:?}")))?;
            i += p.chars().count();
            out.push(Tok::Punct(p));
        }
    }
    Ok(out)
}

struct Builder {
    terminals: Vec<Terminal>,
    rule_names: Vec<String>,
}

impl Builder {
    fn terminal_id(&self, name: &str) -> Option<TerminalId> {
        self.terminals
            .iter()
            .position(|t| t.name == name)
            .map(TerminalId::from_usize)
    }

    fn add_terminal(
        &mut self,
        name: String,
        pattern: TerminalPattern,
        priority: i32,
    ) -> TerminalId {
        self.terminals.push(Terminal {
            name,
            pattern: Ok(pattern),
            priority,
            ignored: false,
            span: Span::default(),
        });
        TerminalId::from_usize(self.terminals.len() - 1)
    }

    fn literal(&mut self, text: &str) -> TerminalId {
        if let Some(i) = self.terminals.iter().position(|t| {
            t.pattern
                .as_ref()
                .is_ok_and(|p| p.is_literal && p.source == format!("{text:?}"))
                && t.name == text
        }) {
            return TerminalId::from_usize(i);
        }
        self.add_terminal(text.to_string(), literal_pattern(text), 0)
    }
}

fn literal_pattern(text: &str) -> TerminalPattern {
    TerminalPattern {
        hir: Hir::literal(text.as_bytes()),
        is_literal: true,
        source: format!("{text:?}"),
    }
}

fn regex_pattern(re: &str, line: usize) -> Result<TerminalPattern, DslError> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(re)
        .map_err(|e| DslError {
            line,
            message: format!("bad regex /{re}/: {e}"),
        })?;
    Ok(TerminalPattern {
        hir,
        is_literal: false,
        source: format!("/{re}/"),
    })
}

fn pattern_of(tok: &Tok, line: usize) -> Result<TerminalPattern, DslError> {
    match tok {
        Tok::Lit(s) if !s.is_empty() => Ok(literal_pattern(s)),
        Tok::Regex(r) => regex_pattern(r, line),
        _ => Err(DslError {
            line,
            message: "expected a non-empty 'literal' or /regex/".into(),
        }),
    }
}

/// Reads a grammar written in the DSL above.
pub fn parse(src: &str) -> Result<Grammar, DslError> {
    // Join continuation lines, keeping the line number of each definition.
    let mut defs: Vec<(usize, Vec<Tok>)> = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let toks = tokenize(line, i + 1)?;
        if toks.is_empty() {
            continue;
        }
        if toks[0] == Tok::Punct("|") {
            match defs.last_mut() {
                Some((_, prev)) => prev.extend(toks),
                None => {
                    return Err(DslError {
                        line: i + 1,
                        message: "`|` continues nothing".into(),
                    })
                }
            }
        } else {
            defs.push((i + 1, toks));
        }
    }
    let mut b = Builder {
        terminals: Vec::new(),
        rule_names: Vec::new(),
    };
    let mut ignores = Vec::new();
    let mut rule_defs = Vec::new();
    for (line, toks) in defs {
        let err = |m: &str| DslError {
            line,
            message: m.to_string(),
        };
        match toks.as_slice() {
            [Tok::Ident(kw), rest @ ..] if kw == "%ignore" => ignores.push((line, rest.to_vec())),
            [Tok::Ident(name), Tok::Punct(":"), pat] => {
                let p = pattern_of(pat, line)?;
                b.add_terminal(name.clone(), p, 0);
            }
            [Tok::Ident(name), Tok::Punct("."), Tok::Num(prio), Tok::Punct(":"), pat] => {
                let p = pattern_of(pat, line)?;
                let prio = i32::try_from(*prio).map_err(|_| err("priority too large"))?;
                b.add_terminal(name.clone(), p, prio);
            }
            [Tok::Ident(name), Tok::Punct("->"), rest @ ..] => {
                if b.rule_names.contains(name) {
                    return Err(err(&format!("rule {name} defined twice")));
                }
                b.rule_names.push(name.clone());
                rule_defs.push((line, rest.to_vec()));
            }
            _ => {
                return Err(err(
                    "expected `name -> ...`, `NAME: pattern` or `%ignore ...`",
                ))
            }
        }
    }
    if rule_defs.is_empty() {
        return Err(DslError {
            line: 1,
            message: "no rules".into(),
        });
    }
    let mut rules = Vec::new();
    for (i, (line, toks)) in rule_defs.iter().enumerate() {
        let mut p = ExprParser {
            toks,
            pos: 0,
            line: *line,
            b: &mut b,
            depth: 0,
        };
        let expr = p.alts()?;
        if p.pos != toks.len() {
            return Err(DslError {
                line: *line,
                message: format!("unexpected {:?}", toks[p.pos]),
            });
        }
        rules.push(Rule {
            name: b.rule_names[i].clone(),
            expr,
            priority: 0,
            expand_single: false,
            inline: false,
            keep_all_tokens: false,
            span: Span {
                line: *line as u32,
                ..Span::default()
            },
        });
    }
    for (line, toks) in ignores {
        match toks.as_slice() {
            [Tok::Ident(name)] => {
                let t = b.terminal_id(name).ok_or_else(|| DslError {
                    line,
                    message: format!("unknown terminal {name}"),
                })?;
                b.terminals[t.as_usize()].ignored = true;
            }
            [pat] => {
                let p = pattern_of(pat, line)?;
                let name = format!("__IGNORE{}", b.terminals.len());
                let t = b.add_terminal(name, p, 0);
                b.terminals[t.as_usize()].ignored = true;
            }
            _ => {
                return Err(DslError {
                    line,
                    message: "expected `%ignore NAME` or `%ignore /re/`".into(),
                })
            }
        }
    }
    Ok(Grammar {
        terminals: b.terminals,
        rules,
        start: RuleId::new(0).expect("0 fits"),
    })
}

struct ExprParser<'a> {
    toks: &'a [Tok],
    pos: usize,
    line: usize,
    b: &'a mut Builder,
    depth: usize,
}

impl ExprParser<'_> {
    fn err(&self, m: String) -> DslError {
        DslError {
            line: self.line,
            message: m,
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn alts(&mut self) -> Result<Expr, DslError> {
        self.depth += 1;
        if self.depth > 100 {
            return Err(self.err("nesting too deep".into()));
        }
        let mut alts = vec![self.seq()?];
        while self.peek() == Some(&Tok::Punct("|")) {
            self.pos += 1;
            alts.push(self.seq()?);
        }
        self.depth -= 1;
        Ok(if alts.len() == 1 {
            alts.pop().expect("one")
        } else {
            Expr::Alt(
                alts.into_iter()
                    .map(|expr| Alternative { expr, alias: None })
                    .collect(),
            )
        })
    }

    fn seq(&mut self) -> Result<Expr, DslError> {
        let mut items = Vec::new();
        while let Some(t) = self.peek() {
            if matches!(t, Tok::Punct("|") | Tok::Punct(")") | Tok::Punct("]")) {
                break;
            }
            if let Some(e) = self.postfix()? {
                items.push(e);
            }
        }
        Ok(match items.len() {
            0 => Expr::Empty,
            1 => items.pop().expect("one"),
            _ => Expr::Seq(items),
        })
    }

    /// An atom with its postfix operators; `None` for `ε`.
    fn postfix(&mut self) -> Result<Option<Expr>, DslError> {
        let tok = self.peek().cloned().expect("caller checked");
        self.pos += 1;
        let mut e = match tok {
            Tok::Punct("ε") => return Ok(None),
            Tok::Lit(s) if !s.is_empty() => Expr::Terminal(self.b.literal(&s)),
            Tok::Regex(r) => {
                let p = regex_pattern(&r, self.line)?;
                let name = format!("/{r}/");
                let id = match self.b.terminal_id(&name) {
                    Some(id) => id,
                    None => self.b.add_terminal(name, p, 0),
                };
                Expr::Terminal(id)
            }
            Tok::Ident(name) => {
                if let Some(t) = self.b.terminal_id(&name) {
                    Expr::Terminal(t)
                } else if let Some(r) = self.b.rule_names.iter().position(|n| *n == name) {
                    Expr::Rule(RuleId::new(r).expect("fits"))
                } else {
                    return Err(self.err(format!("unknown name {name}")));
                }
            }
            Tok::Punct("(") => {
                let inner = self.alts()?;
                self.expect(")")?;
                inner
            }
            Tok::Punct("[") => {
                let inner = self.alts()?;
                self.expect("]")?;
                Expr::Optional(Box::new(inner))
            }
            other => return Err(self.err(format!("unexpected {other:?}"))),
        };
        loop {
            match self.peek() {
                Some(Tok::Punct("?")) => e = Expr::Optional(Box::new(e)),
                Some(Tok::Punct("*")) => e = Expr::Star(Box::new(e)),
                Some(Tok::Punct("+")) => e = Expr::Plus(Box::new(e)),
                Some(Tok::Punct("~")) => {
                    self.pos += 1;
                    let min = self.num()?;
                    let max = if self.peek() == Some(&Tok::Punct("..")) {
                        self.pos += 1;
                        self.num()?
                    } else {
                        min
                    };
                    if max < min {
                        return Err(self.err(format!("~ {min}..{max}: max below min")));
                    }
                    e = Expr::Repeat {
                        expr: Box::new(e),
                        min,
                        max,
                    };
                    continue;
                }
                _ => break,
            }
            self.pos += 1;
        }
        Ok(Some(e))
    }

    fn num(&mut self) -> Result<u32, DslError> {
        match self.peek() {
            Some(&Tok::Num(n)) => {
                self.pos += 1;
                Ok(n)
            }
            _ => Err(self.err("expected a number".into())),
        }
    }

    fn expect(&mut self, p: &'static str) -> Result<(), DslError> {
        if self.peek() == Some(&Tok::Punct(p)) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(format!("expected `{p}`")))
        }
    }
}

/// The DSL text of a grammar drawn as numbers (by a property test): nonterminal `i` is `n{i}`
/// with the productions `rules[i]`; in a production, symbol `s` is `terminals[s]` when
/// `s < terminals.len()`, else nonterminal `(s - terminals.len()) % rules.len()`; an empty
/// production is `ε`. A last rule `unused -> …` names every terminal, so that each has an id
/// whatever the rules use. `terminals` are DSL spellings: `'a'` or the name of a terminal the
/// caller defines after this text.
pub fn from_rules(rules: &[Vec<Vec<u8>>], terminals: &[&str]) -> String {
    let n = rules.len();
    let mut s = String::new();
    for (i, prods) in rules.iter().enumerate() {
        let alts: Vec<String> = prods
            .iter()
            .map(|p| {
                if p.is_empty() {
                    return "ε".to_string();
                }
                p.iter()
                    .map(|&sym| match terminals.get(sym as usize) {
                        Some(t) => t.to_string(),
                        None => format!("n{}", (sym as usize - terminals.len()) % n),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        s.push_str(&format!("n{i} -> {}\n", alts.join(" | ")));
    }
    s.push_str(&format!("unused -> {}\n", terminals.join(" ")));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rules_terminals_and_ignores() {
        let g = parse(
            "s -> s '+' s | NUM\n   | '(' s ')'\nNUM.2: /[0-9]+/\n%ignore /[ ]+/\n%ignore NUM",
        )
        .unwrap();
        assert_eq!(g.rules.len(), 1);
        let names: Vec<_> = g.terminals.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["NUM", "+", "(", ")", "__IGNORE4"]);
        assert_eq!(g.terminals[0].priority, 2);
        assert!(g.terminals[0].ignored && g.terminals[4].ignored);
        assert!(g.terminals[1].pattern.as_ref().unwrap().is_literal);
        match &g.rules[0].expr {
            Expr::Alt(a) => assert_eq!(a.len(), 3),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_carry_the_line() {
        let e = parse("s -> a\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("unknown name a"));
        let e = parse("s -> 'a'\nt -> ('b'").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("s -> /[/").unwrap_err();
        assert!(e.message.contains("bad regex"));
    }
}
