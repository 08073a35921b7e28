//! Lark's `PythonIndenter` post-lexer inside the byte-level commit.
//!
//! # What Lark does
//!
//! `lark.indenter.Indenter` sits between the lexer and the parser. It keeps a stack of
//! indentation widths (`[0]` at the start) and a bracket depth. On a newline token (`_NEWLINE`
//! in Lark's python.lark, `_NL` in SynCode's): inside brackets the token is dropped; otherwise
//! it is passed on, and the width of the text after the token's last `'\n'` (each space 1, each
//! tab 8; other characters 0) is compared with the top of the stack: deeper pushes it and emits
//! `_INDENT`; shallower pops, emitting `_DEDENT` per level, down to a level that must equal the
//! width (else `DedentError`); a newline token without `'\n'` (Lark's `_NEWLINE` made of a
//! comment alone, at the end of a file) fails too (the `rsplit` finds no newline). Open brackets (`LPAR`, `LSQB`, `LBRACE`) raise the depth after
//! they are passed on, close ones lower it. At the end of the input one `_DEDENT` per level above
//! 0 comes before the end.
//!
//! # How munch does it
//!
//! The streaming lexer hands a lexeme to the parser at every byte where it completes a terminal
//! (see the `state` module), so the newline lexeme `"\n    "` completes the newline terminal at
//! each of its bytes, each time with another width; only the branch whose next byte does not
//! extend the lexeme survives (longest match). Each head therefore carries an [`IndentCtx`]: the
//! stack, the bracket depth, and the width of the lexeme it is reading (spaces and tabs since
//! its last `'\n'`). The context is part of the head's identity. When a group of heads completes
//! the newline terminal, the shift is the indenter's sequence for that width: nothing (inside
//! brackets), `NL`, `NL _INDENT`, or `NL _DEDENT`×k; a width that matches no level kills the
//! branch, so an inconsistent dedent is a rejection at the first byte after the newline lexeme
//! (the byte where every other branch has died too). Acceptance shifts the final `_DEDENT`s
//! before asking the tables whether the input may end. Rollback restores the heads, so it
//! restores their contexts.
//!
//! Liveness (the mask contract) reads the context in one place only: a head inside a lexeme
//! that may still become the newline terminal is live inside brackets (the newline will be
//! dropped); otherwise the newline counts as shiftable when the tables can shift it, whatever
//! width the lexeme will end with. This is what makes every token whose lexing completes no
//! newline lexeme independent of the context (see `munch_glr::mask::IndentFix`).

use std::fmt;
use std::sync::Arc;

use munch_lexer::TerminalId;

use crate::grammar::Grammar;

/// A post-lexer, as Lark's `postlex=` option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Postlex {
    /// None: the lexer's terminals go straight to the parser.
    #[default]
    None,
    /// Lark's `PythonIndenter` (see the [module docs](self)).
    Python,
}

impl Postlex {
    /// The name used on the command line and in Python (`none`, `python`).
    pub fn name(self) -> &'static str {
        match self {
            Postlex::None => "none",
            Postlex::Python => "python",
        }
    }

    /// The post-lexer named `name` (`none`, `python`).
    pub fn from_name(name: &str) -> Option<Postlex> {
        match name {
            "none" => Some(Postlex::None),
            "python" => Some(Postlex::Python),
            _ => None,
        }
    }
}

impl fmt::Display for Postlex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The terminals a post-lexer needs that the grammar lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostlexError {
    /// The post-lexer.
    pub postlex: Postlex,
    /// What is missing, by name (`_NEWLINE or _NL`, `_INDENT`, `_DEDENT`).
    pub missing: Vec<String>,
}

impl fmt::Display for PostlexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "postlex {} needs the newline terminal (named `_NEWLINE` or `_NL`) and \
             `%declare _INDENT _DEDENT`; the grammar has no {}",
            self.postlex,
            self.missing.join(", ")
        )
    }
}

impl std::error::Error for PostlexError {}

/// Lark's `PythonIndenter` tab length.
pub const TAB_LEN: u32 = 8;

/// What a terminal does to the bracket depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bracket {
    None,
    Open,
    Close,
}

/// The compiled indenter: the terminal ids it reads and emits.
#[derive(Clone, Debug)]
pub struct Indenter {
    nl: TerminalId,
    indent: TerminalId,
    dedent: TerminalId,
    brackets: Vec<Bracket>,
}

impl Indenter {
    /// The indenter of `postlex` over `grammar`'s terminals (`None` for [`Postlex::None`]).
    pub(crate) fn new(
        grammar: &Grammar,
        postlex: Postlex,
    ) -> Result<Option<Indenter>, PostlexError> {
        if postlex == Postlex::None {
            return Ok(None);
        }
        let find = |name: &str| {
            grammar
                .terminals
                .iter()
                .position(|t| t.name == name)
                .map(TerminalId::from_usize)
        };
        let nl = find("_NEWLINE").or_else(|| find("_NL"));
        let indent = find("_INDENT");
        let dedent = find("_DEDENT");
        let mut missing = Vec::new();
        if nl.is_none() {
            missing.push("`_NEWLINE` or `_NL`".to_string());
        }
        if indent.is_none() {
            missing.push("`_INDENT`".to_string());
        }
        if dedent.is_none() {
            missing.push("`_DEDENT`".to_string());
        }
        let (Some(nl), Some(indent), Some(dedent)) = (nl, indent, dedent) else {
            return Err(PostlexError { postlex, missing });
        };
        let brackets = grammar
            .terminals
            .iter()
            .map(|t| match t.name.as_str() {
                "LPAR" | "LSQB" | "LBRACE" => Bracket::Open,
                "RPAR" | "RSQB" | "RBRACE" => Bracket::Close,
                _ => Bracket::None,
            })
            .collect();
        Ok(Some(Indenter {
            nl,
            indent,
            dedent,
            brackets,
        }))
    }

    /// The newline terminal (`_NEWLINE` or `_NL`).
    pub fn newline(&self) -> TerminalId {
        self.nl
    }

    /// `_INDENT`.
    pub fn indent(&self) -> TerminalId {
        self.indent
    }

    /// `_DEDENT`.
    pub fn dedent(&self) -> TerminalId {
        self.dedent
    }

    /// Whether `t` is made by the indenter rather than the lexer (`_INDENT`, `_DEDENT`).
    pub fn emits(&self, t: TerminalId) -> bool {
        t == self.indent || t == self.dedent
    }

    pub(crate) fn bracket(&self, t: TerminalId) -> Bracket {
        self.brackets
            .get(t.as_usize())
            .copied()
            .unwrap_or(Bracket::None)
    }
}

/// The bracket depth after terminal `t` from `depth` (`None`: unknown, at least 1), for
/// the masks' lexer-only walks: an open bracket from an unknown depth stays unknown, a close
/// one from an unknown depth is unknown too (it may reach 0, which `None` then over-states).
pub(crate) fn indent_bracket_delta(
    ind: &Indenter,
    t: TerminalId,
    depth: Option<u32>,
) -> Option<u32> {
    match (ind.bracket(t), depth) {
        (Bracket::None, d) => d,
        (Bracket::Open, Some(d)) => Some(d + 1),
        (Bracket::Open, None) => None,
        (Bracket::Close, Some(0)) => Some(0),
        (Bracket::Close, Some(1)) => Some(0),
        (Bracket::Close, Some(d)) => Some(d - 1),
        (Bracket::Close, None) => None,
    }
}

/// The indenter's part of a head: the stack of widths above the base 0, the bracket depth and
/// the width of the lexeme being read. Equal for heads that behave alike (part of a head's
/// identity).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct IndentCtx {
    /// The widths above the base level 0, innermost last (shared between heads).
    levels: Option<Arc<[u32]>>,
    /// Open brackets not yet closed.
    paren: u32,
    /// Spaces and tabs (×8) since the last `'\n'` of the current lexeme (0 when it is empty).
    width: u32,
    /// Whether the current lexeme holds a `'\n'` (Lark's indenter fails on a newline token
    /// without one, such as Lark's `_NEWLINE` made of a comment alone at the end of a file).
    newline: bool,
}

/// What a completed newline lexeme does, in Lark's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NlAction {
    /// Inside brackets: dropped.
    Drop,
    /// `NL`, then `_INDENT`.
    Indent,
    /// `NL`, then `_DEDENT` `k` times (`k` may be 0).
    Dedent(u32),
    /// `DedentError`: the width matches no enclosing level.
    Error,
}

impl NlAction {
    /// A small number naming the action (shift memo keys).
    pub(crate) fn tag(self) -> u32 {
        match self {
            NlAction::Drop => 1,
            NlAction::Indent => 2,
            NlAction::Error => 3,
            NlAction::Dedent(k) => 4 + k,
        }
    }
}

impl IndentCtx {
    /// The widths above the base level 0, innermost last.
    pub fn levels(&self) -> &[u32] {
        self.levels.as_deref().unwrap_or(&[])
    }

    /// The innermost level (0 at the base).
    pub fn top(&self) -> u32 {
        self.levels().last().copied().unwrap_or(0)
    }

    /// The bracket depth.
    pub fn paren_level(&self) -> u32 {
        self.paren
    }

    /// The width of the lexeme being read (spaces, and tabs as 8, since its last `'\n'`).
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The context after reading byte `b` into a lexeme (`fresh`: the lexeme was empty).
    #[inline]
    pub(crate) fn read(&self, b: u8, fresh: bool) -> IndentCtx {
        let w = if fresh { 0 } else { self.width };
        let newline = (!fresh && self.newline) || b == b'\n';
        let width = match b {
            b'\n' => 0,
            b' ' => w.saturating_add(1),
            b'\t' => w.saturating_add(TAB_LEN),
            _ => w,
        };
        IndentCtx {
            levels: self.levels.clone(),
            paren: self.paren,
            width,
            newline,
        }
    }

    /// The context of a head whose lexeme is empty (the width forgotten).
    pub(crate) fn at_lexeme_start(&self) -> IndentCtx {
        IndentCtx {
            levels: self.levels.clone(),
            paren: self.paren,
            width: 0,
            newline: false,
        }
    }

    /// What a newline lexeme of this context's width does.
    pub fn nl_action(&self) -> NlAction {
        if self.paren > 0 {
            return NlAction::Drop;
        }
        if !self.newline {
            // `token.rsplit('\n', 1)[1]` raises in Lark: the text is refused.
            return NlAction::Error;
        }
        let w = self.width;
        if w > self.top() {
            return NlAction::Indent;
        }
        let levels = self.levels();
        let mut k = 0u32;
        let mut i = levels.len();
        while i > 0 && w < levels[i - 1] {
            i -= 1;
            k += 1;
        }
        let level = if i == 0 { 0 } else { levels[i - 1] };
        if level == w {
            NlAction::Dedent(k)
        } else {
            NlAction::Error
        }
    }

    /// The context after a newline lexeme with action `a` (not `Error`), lexeme empty.
    pub(crate) fn after_nl(&self, a: NlAction) -> IndentCtx {
        let levels = match a {
            NlAction::Drop | NlAction::Error | NlAction::Dedent(0) => self.levels.clone(),
            NlAction::Indent => {
                let mut v = self.levels().to_vec();
                v.push(self.width);
                Some(v.into())
            }
            NlAction::Dedent(k) => {
                let l = self.levels();
                let keep = l.len() - (k as usize).min(l.len());
                (keep > 0).then(|| l[..keep].into())
            }
        };
        IndentCtx {
            levels,
            paren: self.paren,
            width: 0,
            newline: false,
        }
    }

    /// The context after a bracket terminal (lexeme empty). A close bracket at depth 0 (which
    /// Lark's indenter asserts never happens) leaves the depth at 0.
    pub(crate) fn after_bracket(&self, b: Bracket) -> IndentCtx {
        let paren = match b {
            Bracket::None => self.paren,
            Bracket::Open => self.paren.saturating_add(1),
            Bracket::Close => self.paren.saturating_sub(1),
        };
        IndentCtx {
            levels: self.levels.clone(),
            paren,
            width: 0,
            newline: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(levels: &[u32], paren: u32, width: u32) -> IndentCtx {
        IndentCtx {
            levels: (!levels.is_empty()).then(|| levels.into()),
            paren,
            width,
            newline: true,
        }
    }

    #[test]
    fn actions_follow_lark() {
        assert_eq!(ctx(&[], 0, 0).nl_action(), NlAction::Dedent(0));
        assert_eq!(ctx(&[], 0, 4).nl_action(), NlAction::Indent);
        assert_eq!(ctx(&[4], 0, 4).nl_action(), NlAction::Dedent(0));
        assert_eq!(ctx(&[4, 8], 0, 0).nl_action(), NlAction::Dedent(2));
        assert_eq!(ctx(&[4, 8], 0, 4).nl_action(), NlAction::Dedent(1));
        assert_eq!(ctx(&[4, 8], 0, 2).nl_action(), NlAction::Error);
        assert_eq!(ctx(&[4, 8], 0, 6).nl_action(), NlAction::Error);
        assert_eq!(ctx(&[4, 8], 1, 2).nl_action(), NlAction::Drop);
        let comment_alone = IndentCtx {
            newline: false,
            ..ctx(&[], 0, 0)
        };
        assert_eq!(comment_alone.nl_action(), NlAction::Error);
        let c = ctx(&[4, 8], 0, 4);
        assert_eq!(c.after_nl(NlAction::Dedent(1)).levels(), &[4]);
        assert_eq!(ctx(&[4], 0, 9).after_nl(NlAction::Indent).levels(), &[4, 9]);
        assert_eq!(
            ctx(&[4], 0, 0).after_nl(NlAction::Dedent(1)),
            IndentCtx::default()
        );
    }

    #[test]
    fn widths_count_spaces_and_tabs_after_the_last_newline() {
        let mut c = IndentCtx::default();
        for (i, &b) in b"\n  # x\n \t".iter().enumerate() {
            c = c.read(b, i == 0);
        }
        assert_eq!(c.width(), 1 + TAB_LEN);
        let mut c = IndentCtx::default();
        for (i, &b) in b"# a b".iter().enumerate() {
            c = c.read(b, i == 0);
        }
        assert_eq!(c.width(), 2);
    }
}
