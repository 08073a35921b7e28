//! Tokens of the Lark grammar language.
//!
//! The token set and its boundaries follow the lexer Lark uses for its own grammar files: names
//! are `_?[a-z][_a-z0-9]*` (rules) and `_?[A-Z][_A-Z0-9]*` (terminals); `//` and `#` start
//! comments; a backslash at the end of a line continues it; a newline followed by blank lines,
//! comments and then `|` continues the alternatives of the definition above (Lark's `_NL_OR`).
//! Written by hand: the grammar language is small and every error needs a location.

use super::error::ErrorKind;

/// A Lark directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Directive {
    Ignore,
    Import,
    Declare,
    Override,
    Extend,
}

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A lowercase name (rule, template, template parameter, alias).
    Rule,
    /// An uppercase name (terminal).
    Terminal,
    /// `!`, `?`, `!?` or `?!` directly before a rule name.
    Modifiers,
    /// `+`, `*` or `?` after an atom.
    Op(char),
    Colon,
    Comma,
    Or,
    Dot,
    DotDot,
    Tilde,
    Arrow,
    LPar,
    RPar,
    LBra,
    RBra,
    LBrace,
    RBrace,
    /// A string literal with its quotes and optional `i` flag.
    Str,
    /// A regex literal with its slashes and flags.
    Regex,
    /// `[+-]?[0-9]+`.
    Number,
    /// The end of a line (with any blank lines and comments after it).
    Newline,
    /// A newline whose next non-blank, non-comment character is `|`: more alternatives.
    NewlineOr,
    Directive(Directive),
    Eof,
}

/// A token: its kind and byte range in the source.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A lexing error: its kind and byte range.
pub(crate) type LexError = (ErrorKind, usize, usize);

/// An on-demand tokenizer (so that a syntax error early in a file is reported before a
/// lexical error late in it).
pub(crate) struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

fn is_rule_start(b: u8) -> bool {
    b == b'_' || b.is_ascii_lowercase()
}

impl<'a> Lexer<'a> {
    /// A tokenizer starting at byte `start` (a character boundary) of `src`.
    pub(crate) fn new_at(src: &'a str, start: usize) -> Self {
        Self {
            src,
            bytes: src.as_bytes(),
            pos: start.min(src.len()),
        }
    }

    fn peek_at(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    /// Skips spaces, tabs, comments and line continuations (not newlines).
    fn skip_inline(&mut self) {
        loop {
            match self.peek_at(self.pos) {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'#') => self.skip_comment(),
                Some(b'/') if self.peek_at(self.pos + 1) == Some(b'/') => self.skip_comment(),
                Some(b'\\') => {
                    // `\\[ ]*\r?\n` continues the line.
                    let mut i = self.pos + 1;
                    while self.peek_at(i) == Some(b' ') {
                        i += 1;
                    }
                    if self.peek_at(i) == Some(b'\r') {
                        i += 1;
                    }
                    if self.peek_at(i) == Some(b'\n') {
                        self.pos = i + 1;
                    } else {
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    fn skip_comment(&mut self) {
        while let Some(b) = self.peek_at(self.pos) {
            if b == b'\n' {
                break;
            }
            self.pos += 1;
        }
    }

    /// After a newline: skips whitespace (including more newlines) and comments.
    fn skip_blank(&mut self) {
        loop {
            let rest = &self.src[self.pos..];
            let Some(c) = rest.chars().next() else { return };
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else if c == '#' || rest.starts_with("//") {
                self.skip_comment();
            } else {
                return;
            }
        }
    }

    /// The next token.
    pub(crate) fn next_token(&mut self) -> Result<Token, LexError> {
        self.skip_inline();
        let start = self.pos;
        let Some(b) = self.peek_at(start) else {
            return Ok(Token {
                tok: Tok::Eof,
                start,
                end: start,
            });
        };
        let tok = match b {
            b'\n' | b'\r' if b == b'\n' || self.peek_at(start + 1) == Some(b'\n') => {
                self.skip_blank();
                if self.peek_at(self.pos) == Some(b'|') {
                    self.pos += 1;
                    Tok::NewlineOr
                } else {
                    Tok::Newline
                }
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let first = if b == b'_' {
                    self.peek_at(start + 1)
                } else {
                    Some(b)
                };
                let tok = match first {
                    Some(c) if c.is_ascii_lowercase() => Tok::Rule,
                    Some(c) if c.is_ascii_uppercase() => Tok::Terminal,
                    _ => return Err(self.unexpected(start)),
                };
                self.pos = start + if b == b'_' { 2 } else { 1 };
                while let Some(c) = self.peek_at(self.pos) {
                    let ok = match tok {
                        Tok::Rule => c == b'_' || c.is_ascii_lowercase() || c.is_ascii_digit(),
                        _ => c == b'_' || c.is_ascii_uppercase() || c.is_ascii_digit(),
                    };
                    if !ok {
                        break;
                    }
                    self.pos += 1;
                }
                tok
            }
            b'!' | b'?' => {
                let other = if b == b'!' { b'?' } else { b'!' };
                let n1 = self.peek_at(start + 1);
                if n1.is_some_and(is_rule_start) {
                    self.pos += 1;
                    Tok::Modifiers
                } else if n1 == Some(other) && self.peek_at(start + 2).is_some_and(is_rule_start) {
                    self.pos += 2;
                    Tok::Modifiers
                } else if b == b'?' {
                    self.pos += 1;
                    Tok::Op('?')
                } else {
                    return Err(self.unexpected(start));
                }
            }
            b'+' | b'-' if self.peek_at(start + 1).is_some_and(|c| c.is_ascii_digit()) => {
                self.pos += 1;
                self.number()
            }
            b'0'..=b'9' => self.number(),
            b'+' | b'*' => {
                self.pos += 1;
                Tok::Op(b as char)
            }
            b'-' if self.peek_at(start + 1) == Some(b'>') => {
                self.pos += 2;
                Tok::Arrow
            }
            b'.' => {
                if self.peek_at(start + 1) == Some(b'.') {
                    self.pos += 2;
                    Tok::DotDot
                } else {
                    self.pos += 1;
                    Tok::Dot
                }
            }
            b':' | b',' | b'|' | b'~' | b'(' | b')' | b'[' | b']' | b'{' | b'}' => {
                self.pos += 1;
                match b {
                    b':' => Tok::Colon,
                    b',' => Tok::Comma,
                    b'|' => Tok::Or,
                    b'~' => Tok::Tilde,
                    b'(' => Tok::LPar,
                    b')' => Tok::RPar,
                    b'[' => Tok::LBra,
                    b']' => Tok::RBra,
                    b'{' => Tok::LBrace,
                    _ => Tok::RBrace,
                }
            }
            b'"' => self.string()?,
            b'/' => self.regex()?,
            b'%' => self.directive()?,
            _ => return Err(self.unexpected(start)),
        };
        Ok(Token {
            tok,
            start,
            end: self.pos,
        })
    }

    fn unexpected(&self, at: usize) -> LexError {
        let found = self.src[at..].chars().next().unwrap_or('\0');
        (
            ErrorKind::UnexpectedCharacter { found },
            at,
            at + found.len_utf8(),
        )
    }

    fn number(&mut self) -> Tok {
        while self.peek_at(self.pos).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        Tok::Number
    }

    /// `"…"` with `\"` and `\\` escapes, on one line, then an optional `i`.
    fn string(&mut self) -> Result<Tok, LexError> {
        let start = self.pos;
        let mut i = start + 1;
        loop {
            match self.peek_at(i) {
                Some(b'"') => break,
                Some(b'\\') if !matches!(self.peek_at(i + 1), None | Some(b'\n')) => i += 2,
                None | Some(b'\n') => {
                    let end = if self.peek_at(i.wrapping_sub(1)) == Some(b'\r') {
                        i - 1
                    } else {
                        i
                    };
                    return Err((ErrorKind::UnterminatedString, start, end.max(start + 1)));
                }
                Some(_) => i += 1,
            }
        }
        // `i` can land inside a multi-byte character only if the escape skipped its first byte;
        // the loop above only stops on ASCII bytes, so `i` is a boundary.
        self.pos = i + 1;
        if self.peek_at(self.pos) == Some(b'i') {
            self.pos += 1;
        }
        Ok(Tok::Str)
    }

    /// `/…/flags`, where `\/` does not end the regex; newlines inside need the `x` flag.
    fn regex(&mut self) -> Result<Tok, LexError> {
        let start = self.pos;
        let mut i = start + 1;
        let mut first_newline = None;
        loop {
            match self.peek_at(i) {
                Some(b'/') => break,
                Some(b'\\') if self.peek_at(i + 1).is_some() => {
                    if self.peek_at(i + 1) == Some(b'\n') {
                        first_newline.get_or_insert(i + 1);
                    }
                    i += 2;
                }
                Some(b) => {
                    if b == b'\n' {
                        first_newline.get_or_insert(i);
                    }
                    i += 1;
                }
                None => {
                    let end = first_newline.unwrap_or(i);
                    return Err((ErrorKind::UnterminatedRegex, start, end.max(start + 1)));
                }
            }
        }
        let mut j = i + 1;
        while self
            .peek_at(j)
            .is_some_and(|c| matches!(c, b'i' | b'm' | b's' | b'l' | b'u' | b'x'))
        {
            j += 1;
        }
        if let Some(nl) = first_newline {
            if !self.bytes[i + 1..j].contains(&b'x') {
                let end = if self.peek_at(nl.wrapping_sub(1)) == Some(b'\r') {
                    nl - 1
                } else {
                    nl
                };
                return Err((ErrorKind::UnterminatedRegex, start, end.max(start + 1)));
            }
        }
        self.pos = j;
        Ok(Tok::Regex)
    }

    fn directive(&mut self) -> Result<Tok, LexError> {
        let start = self.pos;
        let mut i = start + 1;
        while self
            .peek_at(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            i += 1;
        }
        let d = match &self.src[start..i] {
            "%ignore" => Directive::Ignore,
            "%import" => Directive::Import,
            "%declare" => Directive::Declare,
            "%override" => Directive::Override,
            "%extend" => Directive::Extend,
            name => {
                return Err((
                    ErrorKind::UnknownDirective {
                        name: name.to_string(),
                    },
                    start,
                    i,
                ))
            }
        };
        self.pos = i;
        Ok(Tok::Directive(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<(Tok, &str)> {
        let mut lx = Lexer::new_at(src, 0);
        let mut out = Vec::new();
        loop {
            let t = lx.next_token().expect("lexes");
            if t.tok == Tok::Eof {
                return out;
            }
            out.push((t.tok, &src[t.start..t.end]));
        }
    }

    #[test]
    fn names_modifiers_and_operators() {
        use Tok::*;
        assert_eq!(
            toks("?a.2: _b C* d? -> e"),
            vec![
                (Modifiers, "?"),
                (Rule, "a"),
                (Dot, "."),
                (Number, "2"),
                (Colon, ":"),
                (Rule, "_b"),
                (Terminal, "C"),
                (Op('*'), "*"),
                (Rule, "d"),
                (Op('?'), "?"),
                (Arrow, "->"),
                (Rule, "e"),
            ]
        );
        assert_eq!(toks("!?x"), vec![(Modifiers, "!?"), (Rule, "x")]);
        assert_eq!(
            toks("A.-1 ~ 2..3"),
            vec![
                (Terminal, "A"),
                (Dot, "."),
                (Number, "-1"),
                (Tilde, "~"),
                (Number, "2"),
                (DotDot, ".."),
                (Number, "3"),
            ]
        );
    }

    #[test]
    fn literals_comments_and_newlines() {
        use Tok::*;
        assert_eq!(
            toks(r#"a: "x\"y"i /a\/b/is // c"#),
            vec![
                (Rule, "a"),
                (Colon, ":"),
                (Str, r#""x\"y"i"#),
                (Regex, r"/a\/b/is"),
            ]
        );
        assert_eq!(
            toks("a: b\n\n  // note\n  | c # x\nd"),
            vec![
                (Rule, "a"),
                (Colon, ":"),
                (Rule, "b"),
                (NewlineOr, "\n\n  // note\n  |"),
                (Rule, "c"),
                (Newline, "\n"),
                (Rule, "d"),
            ]
        );
        assert_eq!(
            toks("a \\\n b"),
            vec![(Rule, "a"), (Rule, "b")],
            "a backslash continues the line"
        );
    }

    #[test]
    fn errors_are_located() {
        let err = |src: &str| Lexer::new_at(src, 0).next_token().unwrap_err();
        assert_eq!(err("\"abc\nx").0, ErrorKind::UnterminatedString);
        assert_eq!(err("\"abc\nx").2, 4);
        assert_eq!(err("/abc\n/").0, ErrorKind::UnterminatedRegex);
        assert_eq!(err("/abc\n/").2, 4);
        assert!(Lexer::new_at("/a\nb/x", 0).next_token().is_ok());
        assert_eq!(
            err("%foo x").0,
            ErrorKind::UnknownDirective {
                name: "%foo".into()
            }
        );
        assert_eq!(err("$").0, ErrorKind::UnexpectedCharacter { found: '$' });
        assert_eq!(err("__x").0, ErrorKind::UnexpectedCharacter { found: '_' });
    }
}
