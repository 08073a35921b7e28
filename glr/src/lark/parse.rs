//! Lark grammar text → [`File`] syntax tree.
//!
//! Recursive descent over the language Lark's own `load_grammar.py` accepts. Recursion happens
//! only at `(`, `[` and template `{`, and each of those counts against
//! [`super::LoadConfig::max_nesting`], so no input can exhaust the stack.

use super::ast::*;
use super::error::ErrorKind;
use super::lex::{Directive, Lexer, Tok, Token};
use super::RawError;

/// Parses `src` into statements.
pub(crate) fn parse(src: &str, max_nesting: usize) -> Result<File, RawError> {
    parse_at(src, 0, max_nesting)
}

/// Parses `src[start..]` into statements, with positions in `src` (an imported module's text
/// appended to the others: see `imports::Sources`).
pub(crate) fn parse_at(src: &str, start: usize, max_nesting: usize) -> Result<File, RawError> {
    let mut p = Parser {
        src,
        lexer: Lexer::new_at(src, start),
        peeked: None,
        depth: 0,
        max_nesting,
        last_end: start,
    };
    p.file()
}

struct Parser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    peeked: Option<Token>,
    depth: usize,
    max_nesting: usize,
    /// The end of the last atom parsed (for expression positions).
    last_end: usize,
}

fn err(kind: ErrorKind, pos: Pos) -> RawError {
    RawError {
        kind,
        pos,
        aux: None,
    }
}

fn pos(t: Token) -> Pos {
    Pos {
        start: t.start,
        end: t.end,
    }
}

impl<'a> Parser<'a> {
    fn peek(&mut self) -> Result<Token, RawError> {
        if let Some(t) = self.peeked {
            return Ok(t);
        }
        let t = self
            .lexer
            .next_token()
            .map_err(|(kind, start, end)| err(kind, Pos { start, end }))?;
        self.peeked = Some(t);
        Ok(t)
    }

    fn bump(&mut self) -> Result<Token, RawError> {
        let t = self.peek()?;
        self.peeked = None;
        Ok(t)
    }

    fn text(&self, t: Token) -> &'a str {
        &self.src[t.start..t.end]
    }

    fn name(&self, t: Token) -> Name {
        Name {
            text: self.text(t).to_string(),
            pos: pos(t),
        }
    }

    /// An "unexpected token" error at `t`.
    fn unexpected(&self, t: Token, expected: &'static str) -> RawError {
        let found = match t.tok {
            Tok::Eof => "end of input".to_string(),
            Tok::Newline => "end of line".to_string(),
            Tok::NewlineOr => "`|` on a new line".to_string(),
            _ => {
                let text = self.text(t);
                if text.chars().count() > 40 {
                    let cut: String = text.chars().take(40).collect();
                    format!("`{cut}…`")
                } else {
                    format!("`{text}`")
                }
            }
        };
        let mut p = pos(t);
        if matches!(t.tok, Tok::Newline | Tok::NewlineOr) {
            // Point at the line end, not at the blank lines after it.
            p.end = p.start + 1;
        }
        err(ErrorKind::UnexpectedToken { found, expected }, p)
    }

    fn expect(&mut self, tok: Tok, expected: &'static str) -> Result<Token, RawError> {
        let t = self.peek()?;
        if t.tok == tok {
            self.bump()
        } else {
            Err(self.unexpected(t, expected))
        }
    }

    /// The end of a statement: a newline or the end of input.
    fn end_of_statement(&mut self) -> Result<(), RawError> {
        let t = self.peek()?;
        match t.tok {
            Tok::Newline => {
                self.bump()?;
                Ok(())
            }
            Tok::Eof => Ok(()),
            Tok::RPar | Tok::RBra | Tok::RBrace => Err(err(
                ErrorKind::UnmatchedDelimiter {
                    close: self.text(t).chars().next().unwrap_or(')'),
                },
                pos(t),
            )),
            _ => Err(self.unexpected(t, "`|`, a newline, or more of the expression")),
        }
    }

    fn enter(&mut self, at: Token) -> Result<(), RawError> {
        self.depth += 1;
        if self.depth > self.max_nesting {
            return Err(err(
                ErrorKind::NestingTooDeep {
                    limit: self.max_nesting,
                },
                pos(at),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn file(&mut self) -> Result<File, RawError> {
        let mut file = File::default();
        loop {
            let t = self.peek()?;
            let item = match t.tok {
                Tok::Eof => return Ok(file),
                Tok::Newline => {
                    self.bump()?;
                    continue;
                }
                Tok::Modifiers | Tok::Rule => Item::Rule(self.rule_def()?),
                Tok::Terminal => Item::Term(self.term_def()?),
                Tok::Directive(d) => {
                    self.bump()?;
                    self.directive(d, t)?
                }
                _ => return Err(self.unexpected(t, "a rule or terminal definition")),
            };
            file.items.push(item);
        }
    }

    fn number(&mut self) -> Result<Number, RawError> {
        let t = self.expect(Tok::Number, "a number")?;
        Ok(Number {
            value: self.text(t).parse::<i64>().ok(),
            negative: self.text(t).starts_with('-'),
            pos: pos(t),
        })
    }

    fn priority(&mut self) -> Result<Option<Number>, RawError> {
        if self.peek()?.tok == Tok::Dot {
            self.bump()?;
            Ok(Some(self.number()?))
        } else {
            Ok(None)
        }
    }

    fn rule_def(&mut self) -> Result<RuleDef, RawError> {
        let mut expand_single = false;
        let mut keep_all_tokens = false;
        let mut modifiers = None;
        if self.peek()?.tok == Tok::Modifiers {
            let t = self.bump()?;
            let m = self.text(t);
            expand_single = m.contains('?');
            keep_all_tokens = m.contains('!');
            modifiers = Some(pos(t));
        }
        let name_tok = self.expect(Tok::Rule, "a rule name")?;
        let name = self.name(name_tok);
        let mut params = Vec::new();
        if self.peek()?.tok == Tok::LBrace {
            let open = self.bump()?;
            loop {
                let t = self.peek()?;
                match t.tok {
                    Tok::Rule => {
                        self.bump()?;
                        params.push(self.name(t));
                    }
                    Tok::Newline | Tok::Eof => {
                        return Err(err(ErrorKind::UnclosedDelimiter { open: '{' }, pos(open)))
                    }
                    _ => return Err(self.unexpected(t, "a lowercase template parameter")),
                }
                let t = self.peek()?;
                match t.tok {
                    Tok::Comma => {
                        self.bump()?;
                    }
                    Tok::RBrace => {
                        self.bump()?;
                        break;
                    }
                    Tok::Newline | Tok::Eof => {
                        return Err(err(ErrorKind::UnclosedDelimiter { open: '{' }, pos(open)))
                    }
                    _ => return Err(self.unexpected(t, "`,` or `}`")),
                }
            }
        }
        let priority = self.priority()?;
        self.expect(Tok::Colon, "`:` (a definition needs a colon)")?;
        let body = self.expansions()?;
        self.end_of_statement()?;
        Ok(RuleDef {
            name,
            expand_single,
            keep_all_tokens,
            modifiers,
            params,
            priority,
            body,
        })
    }

    fn term_def(&mut self) -> Result<TermDef, RawError> {
        let name_tok = self.expect(Tok::Terminal, "a terminal name")?;
        let name = self.name(name_tok);
        let priority = self.priority()?;
        self.expect(Tok::Colon, "`:` (a definition needs a colon)")?;
        let body = self.expansions()?;
        self.end_of_statement()?;
        Ok(TermDef {
            name,
            priority,
            body,
        })
    }

    fn directive(&mut self, d: Directive, at: Token) -> Result<Item, RawError> {
        match d {
            Directive::Ignore => {
                let t = self.peek()?;
                if matches!(t.tok, Tok::Newline | Tok::Eof) {
                    return Err(self.unexpected(t, "what to ignore"));
                }
                let body = self.expansions()?;
                self.end_of_statement()?;
                Ok(Item::Ignore(body))
            }
            Directive::Declare => {
                let mut names = Vec::new();
                loop {
                    let t = self.peek()?;
                    match t.tok {
                        Tok::Rule | Tok::Terminal => {
                            self.bump()?;
                            names.push((self.name(t), t.tok == Tok::Terminal));
                        }
                        _ if !names.is_empty() => break,
                        _ => return Err(self.unexpected(t, "a name to declare")),
                    }
                }
                self.end_of_statement()?;
                Ok(Item::Declare(names))
            }
            Directive::Override | Directive::Extend => {
                let t = self.peek()?;
                let def = match t.tok {
                    Tok::Modifiers | Tok::Rule => Def::Rule(self.rule_def()?),
                    Tok::Terminal => Def::Term(self.term_def()?),
                    _ => return Err(self.unexpected(t, "a rule or terminal definition")),
                };
                Ok(if d == Directive::Override {
                    Item::Override(def)
                } else {
                    Item::Extend(def)
                })
            }
            Directive::Import => self.import(at),
        }
    }

    fn import_name(&mut self) -> Result<Name, RawError> {
        let t = self.peek()?;
        match t.tok {
            Tok::Rule | Tok::Terminal => {
                self.bump()?;
                Ok(self.name(t))
            }
            _ => Err(self.unexpected(t, "a name to import")),
        }
    }

    fn import(&mut self, at: Token) -> Result<Item, RawError> {
        let mut relative = false;
        if self.peek()?.tok == Tok::Dot {
            self.bump()?;
            relative = true;
        }
        let mut path = vec![self.import_name()?];
        while self.peek()?.tok == Tok::Dot {
            self.bump()?;
            path.push(self.import_name()?);
        }
        let t = self.peek()?;
        let names = match t.tok {
            Tok::LPar => {
                let open = self.bump()?;
                let mut names = Vec::new();
                loop {
                    let t = self.peek()?;
                    if matches!(t.tok, Tok::Newline | Tok::Eof) {
                        return Err(err(ErrorKind::UnclosedDelimiter { open: '(' }, pos(open)));
                    }
                    names.push((self.import_name()?, None));
                    let t = self.peek()?;
                    match t.tok {
                        Tok::Comma => {
                            self.bump()?;
                        }
                        Tok::RPar => {
                            self.bump()?;
                            break;
                        }
                        Tok::Newline | Tok::Eof => {
                            return Err(err(ErrorKind::UnclosedDelimiter { open: '(' }, pos(open)))
                        }
                        _ => return Err(self.unexpected(t, "`,` or `)`")),
                    }
                }
                names
            }
            _ => {
                if path.len() < 2 {
                    return Err(self.unexpected(t, "`.NAME` or `(NAME, …)` after the module"));
                }
                let name = path.pop().expect("path has two names");
                let alias = if t.tok == Tok::Arrow {
                    self.bump()?;
                    Some(self.import_name()?)
                } else {
                    None
                };
                vec![(name, alias)]
            }
        };
        let end = self.peek()?;
        self.end_of_statement()?;
        Ok(Item::Import(Import {
            relative,
            module: path,
            names,
            pos: Pos {
                start: at.start,
                end: end.start.max(at.end),
            },
        }))
    }

    /// Alternatives, up to (not including) what cannot continue them.
    fn expansions(&mut self) -> Result<Expansions, RawError> {
        let first = self.alt()?;
        let mut pos = first.pos;
        let mut alts = vec![first];
        loop {
            let t = self.peek()?;
            if !matches!(t.tok, Tok::Or | Tok::NewlineOr) {
                break;
            }
            self.bump()?;
            let alt = self.alt()?;
            pos = pos.to(alt.pos);
            alts.push(alt);
        }
        Ok(Expansions { alts, pos })
    }

    fn alt(&mut self) -> Result<Alt, RawError> {
        let start = self.peek()?.start;
        let mut items = Vec::new();
        while matches!(
            self.peek()?.tok,
            Tok::LPar | Tok::LBra | Tok::Rule | Tok::Terminal | Tok::Str | Tok::Regex
        ) {
            items.push(self.expr()?);
        }
        let mut end = items.last().map_or(start, |e: &Expr| e.pos.end);
        let mut alias = None;
        if self.peek()?.tok == Tok::Arrow {
            self.bump()?;
            let t = self.peek()?;
            if t.tok != Tok::Rule {
                return Err(self.unexpected(t, "a lowercase alias name"));
            }
            self.bump()?;
            alias = Some(self.name(t));
            end = t.end;
        }
        Ok(Alt {
            items,
            alias,
            pos: Pos { start, end },
        })
    }

    fn expr(&mut self) -> Result<Expr, RawError> {
        let atom_start = self.peek()?.start;
        let atom = self.atom()?;
        let mut end = self.last_end;
        let t = self.peek()?;
        let op = match t.tok {
            Tok::Op(c) => {
                self.bump()?;
                end = t.end;
                Some(match c {
                    '?' => Op::Opt,
                    '*' => Op::Star,
                    _ => Op::Plus,
                })
            }
            Tok::Tilde => {
                self.bump()?;
                let min = self.number()?;
                let max = if self.peek()?.tok == Tok::DotDot {
                    self.bump()?;
                    self.number()?
                } else {
                    min
                };
                end = max.pos.end;
                Some(Op::Repeat { min, max })
            }
            _ => None,
        };
        Ok(Expr {
            atom,
            op,
            pos: Pos {
                start: atom_start,
                end,
            },
        })
    }

    fn atom(&mut self) -> Result<Atom, RawError> {
        let t = self.peek()?;
        match t.tok {
            Tok::LPar | Tok::LBra => {
                self.bump()?;
                self.enter(t)?;
                let body = self.expansions()?;
                let (close, open) = if t.tok == Tok::LPar {
                    (Tok::RPar, '(')
                } else {
                    (Tok::RBra, '[')
                };
                let c = self.peek()?;
                if c.tok != close {
                    return Err(match c.tok {
                        Tok::RPar | Tok::RBra | Tok::RBrace => err(
                            ErrorKind::UnmatchedDelimiter {
                                close: self.text(c).chars().next().unwrap_or(')'),
                            },
                            pos(c),
                        ),
                        Tok::Newline | Tok::Eof => {
                            err(ErrorKind::UnclosedDelimiter { open }, pos(t))
                        }
                        _ => self
                            .unexpected(c, "`|`, more of the expression, or the closing delimiter"),
                    });
                }
                self.bump()?;
                self.leave();
                self.last_end = c.end;
                Ok(if t.tok == Tok::LPar {
                    Atom::Group(body)
                } else {
                    Atom::Maybe(body)
                })
            }
            _ => Ok(Atom::Value(self.value()?)),
        }
    }

    fn value(&mut self) -> Result<Value, RawError> {
        let t = self.bump()?;
        self.last_end = t.end;
        match t.tok {
            Tok::Terminal => Ok(Value::Terminal(self.name(t))),
            Tok::Rule => {
                let name = self.name(t);
                if self.peek()?.tok != Tok::LBrace {
                    return Ok(Value::Rule(name));
                }
                let open = self.bump()?;
                self.enter(open)?;
                let mut args = Vec::new();
                loop {
                    let a = self.peek()?;
                    match a.tok {
                        Tok::Rule | Tok::Terminal | Tok::Str | Tok::Regex => {
                            args.push(self.value()?)
                        }
                        Tok::Newline | Tok::Eof => {
                            return Err(err(ErrorKind::UnclosedDelimiter { open: '{' }, pos(open)))
                        }
                        _ => return Err(self.unexpected(a, "a template argument")),
                    }
                    let c = self.peek()?;
                    match c.tok {
                        Tok::Comma => {
                            self.bump()?;
                        }
                        Tok::RBrace => {
                            self.bump()?;
                            self.leave();
                            self.last_end = c.end;
                            break;
                        }
                        Tok::RPar | Tok::RBra => {
                            return Err(err(
                                ErrorKind::UnmatchedDelimiter {
                                    close: self.text(c).chars().next().unwrap_or(')'),
                                },
                                pos(c),
                            ))
                        }
                        Tok::Newline | Tok::Eof => {
                            return Err(err(ErrorKind::UnclosedDelimiter { open: '{' }, pos(open)))
                        }
                        _ => return Err(self.unexpected(c, "`,` or `}`")),
                    }
                }
                Ok(Value::Template {
                    name,
                    args,
                    pos: Pos {
                        start: t.start,
                        end: self.last_end,
                    },
                })
            }
            Tok::Str | Tok::Regex => {
                let lit = Literal {
                    kind: if t.tok == Tok::Str {
                        LitKind::Str
                    } else {
                        LitKind::Regex
                    },
                    raw: self.text(t).to_string(),
                    pos: pos(t),
                };
                if t.tok == Tok::Str && self.peek()?.tok == Tok::DotDot {
                    self.bump()?;
                    let to_tok = self.expect(Tok::Str, "a string literal after `..`")?;
                    self.last_end = to_tok.end;
                    let to = Literal {
                        kind: LitKind::Str,
                        raw: self.text(to_tok).to_string(),
                        pos: pos(to_tok),
                    };
                    return Ok(Value::Range {
                        from: lit,
                        to,
                        pos: Pos {
                            start: t.start,
                            end: to_tok.end,
                        },
                    });
                }
                Ok(Value::Literal(lit))
            }
            _ => Err(self.unexpected(t, "a name or a literal")),
        }
    }
}
