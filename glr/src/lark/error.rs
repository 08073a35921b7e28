//! Located grammar errors: [`GrammarError`] (opaque) and its [`ErrorKind`].

use std::fmt;

use crate::span::Span;

use super::source::line_at;

/// What is wrong with a grammar. Each variant carries the names and limits involved, so callers
/// can match on it instead of reading messages.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The source is not UTF-8; the span is the first bad byte.
    InvalidUtf8,
    /// A character that starts no token of the Lark language.
    UnexpectedCharacter {
        /// The character.
        found: char,
    },
    /// A token where the grammar of Lark expects something else.
    UnexpectedToken {
        /// The token as written (or "end of input").
        found: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// A `"` string literal without its closing quote on the same line.
    UnterminatedString,
    /// A `/` regex literal without its closing `/` (a regex spans lines only with the `x` flag).
    UnterminatedRegex,
    /// A `%name` that is not a Lark directive.
    UnknownDirective {
        /// The directive as written, with its `%`.
        name: String,
    },
    /// An opening `(`, `[` or `{` whose closing delimiter is missing.
    UnclosedDelimiter {
        /// The opening delimiter.
        open: char,
    },
    /// A closing `)`, `]` or `}` without a matching opening delimiter.
    UnmatchedDelimiter {
        /// The closing delimiter.
        close: char,
    },
    /// Groups nested deeper than [`super::LoadConfig::max_nesting`].
    NestingTooDeep {
        /// The limit.
        limit: usize,
    },
    /// A bad escape sequence in a string or regex literal (e.g. `\x` without two hex digits).
    BadEscape {
        /// What is wrong.
        message: String,
    },
    /// The string literal `""`, which Lark does not allow.
    EmptyLiteral,
    /// A bad `"a".."z"` range (an end that is not one character, or ends out of order).
    BadCharRange {
        /// What is wrong.
        message: String,
    },
    /// A bad repetition range `x ~ min..max` (`max < min`, or a negative bound).
    BadRepetitionRange {
        /// The lower bound as written.
        min: i64,
        /// The upper bound as written.
        max: i64,
    },
    /// A number (priority or repetition count) too large to represent.
    NumberOutOfRange {
        /// The number as written.
        text: String,
    },
    /// A rule (or template) that is used but never defined.
    UndefinedRule {
        /// The rule's name.
        name: String,
    },
    /// A terminal that is used (or `%ignore`d) but never defined.
    UndefinedTerminal {
        /// The terminal's name.
        name: String,
    },
    /// A second definition of a name; the auxiliary span is the first.
    Duplicate {
        /// The name.
        name: String,
        /// What the name is: "rule", "terminal" or "template parameter".
        what: &'static str,
    },
    /// `%override` or `%extend` of a name that is not defined.
    NothingToModify {
        /// The name.
        name: String,
        /// The directive: "%override" or "%extend".
        directive: &'static str,
    },
    /// A regex literal that Python's `re` (or its translation) rejects.
    BadRegex {
        /// What is wrong.
        message: String,
    },
    /// The start rule is not defined.
    NoStartRule {
        /// The configured start rule.
        name: String,
    },
    /// A terminal defined (directly or through others) in terms of itself.
    TerminalCycle {
        /// The terminal.
        name: String,
        /// The cycle, starting and ending with `name`.
        path: Vec<String>,
    },
    /// A terminal the grammar uses (or ignores) whose pattern matches the empty string.
    EmptyMatch {
        /// The terminal.
        name: String,
    },
    /// A rule reachable from the start rule that derives no finite string.
    NonProductive {
        /// The rule.
        name: String,
    },
    /// An `%import` of a module or name that the built-in library does not have.
    UnknownImport {
        /// The module path as written (`common`).
        module: String,
        /// The name, when the module exists but lacks it.
        name: Option<String>,
    },
    /// `%import` of one of Lark's bundled grammars (`python`, `lark`), which munch reads from
    /// an installed `lark` package, without that package's grammar folder
    /// (`LoadConfig::lark_grammars`).
    BundledGrammarUnavailable {
        /// The module (`python`).
        module: String,
    },
    /// An imported grammar file exists but cannot be read (or is not UTF-8).
    ImportUnreadable {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// A template used with the wrong number of arguments (a rule used with arguments has
    /// zero parameters; a template used bare has zero arguments).
    TemplateArity {
        /// The template.
        name: String,
        /// Its parameter count.
        expected: usize,
        /// The number of arguments given.
        found: usize,
    },
    /// A template parameter that has the name of a defined rule; the auxiliary span is the
    /// rule.
    TemplateParamConflict {
        /// The parameter.
        name: String,
    },
    /// A rule (or template) used inside a terminal's definition.
    RuleInTerminal {
        /// The rule.
        rule: String,
        /// The terminal.
        terminal: String,
    },
    /// A `%declare`d terminal (which has no pattern) used inside another terminal.
    DeclaredInTerminal {
        /// The declared terminal.
        name: String,
        /// The terminal whose definition uses it.
        terminal: String,
    },
    /// An `-> alias` where Lark allows none: inside a group, in a terminal, in `%ignore`, or
    /// on an inlined `_rule`.
    MisplacedAlias {
        /// The alias.
        alias: String,
        /// Where it is: "a group", "a terminal", "%ignore", or "an inlined rule".
        place: &'static str,
    },
    /// `?` on a rule whose name starts with `_` (Lark forbids the combination).
    ConflictingModifiers {
        /// The rule.
        name: String,
    },
    /// A budget of the loader was exceeded.
    LimitExceeded {
        /// What was counted.
        what: &'static str,
        /// The budget.
        limit: usize,
    },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            InvalidUtf8 => write!(f, "the grammar is not valid UTF-8"),
            UnexpectedCharacter { found } => write!(f, "unexpected character {found:?}"),
            UnexpectedToken { found, expected } => {
                write!(f, "unexpected {found}; expected {expected}")
            }
            UnterminatedString => write!(f, "unterminated string literal"),
            UnterminatedRegex => write!(
                f,
                "unterminated regex literal (a regex spans lines only with the `x` flag)"
            ),
            UnknownDirective { name } => write!(f, "unknown directive `{name}`"),
            UnclosedDelimiter { open } => write!(f, "unclosed `{open}`"),
            UnmatchedDelimiter { close } => write!(f, "unmatched `{close}`"),
            NestingTooDeep { limit } => {
                write!(f, "groups nested deeper than the limit of {limit}")
            }
            BadEscape { message } => write!(f, "bad escape: {message}"),
            EmptyLiteral => write!(f, "empty string literals are not allowed"),
            BadCharRange { message } => write!(f, "bad character range: {message}"),
            BadRepetitionRange { min, max } => {
                write!(f, "bad repetition range {min}..{max}")
            }
            NumberOutOfRange { text } => write!(f, "number {text} is out of range"),
            UndefinedRule { name } => write!(f, "rule `{name}` is used but not defined"),
            UndefinedTerminal { name } => {
                write!(f, "terminal `{name}` is used but not defined")
            }
            Duplicate { name, what } => write!(f, "{what} `{name}` is defined more than once"),
            NothingToModify { name, directive } => {
                write!(f, "`{directive}` of `{name}`, which is not defined")
            }
            BadRegex { message } => write!(f, "bad regex: {message}"),
            NoStartRule { name } => write!(f, "the start rule `{name}` is not defined"),
            TerminalCycle { name, path } => write!(
                f,
                "terminal `{name}` is defined through itself ({})",
                path.join(" -> ")
            ),
            EmptyMatch { name } => write!(f, "terminal `{name}` matches the empty string"),
            NonProductive { name } => write!(f, "rule `{name}` derives no finite string"),
            UnknownImport { module, name: None } => write!(
                f,
                "grammar module `{module}` not found (searched the import paths{}; built in: \
                 common, unicode, and Lark's python and lark given its grammar folder)",
                if module.starts_with('.') {
                    " and the grammar's folder"
                } else {
                    ""
                }
            ),
            BundledGrammarUnavailable { module } => write!(
                f,
                "`{module}` is one of Lark's bundled grammars, which munch reads from an \
                 installed lark package: give its `lark/grammars` folder (--lark-grammars DIR, \
                 or MUNCH_LARK_GRAMMARS)"
            ),
            ImportUnreadable { path, message } => write!(f, "cannot read {path}: {message}"),
            UnknownImport {
                module,
                name: Some(name),
            } => write!(f, "module `{module}` has no `{name}`"),
            TemplateArity {
                name,
                expected,
                found,
            } => write!(
                f,
                "`{name}` takes {expected} template argument{}, but {found} {} given",
                if *expected == 1 { "" } else { "s" },
                if *found == 1 { "was" } else { "were" }
            ),
            TemplateParamConflict { name } => {
                write!(f, "template parameter `{name}` has the name of a rule")
            }
            RuleInTerminal { rule, terminal } => write!(
                f,
                "rule `{rule}` is used inside terminal `{terminal}` (terminals are made of terminals only)"
            ),
            DeclaredInTerminal { name, terminal } => write!(
                f,
                "%declare'd terminal `{name}` has no pattern and cannot be used inside terminal `{terminal}`"
            ),
            MisplacedAlias { alias, place } => {
                write!(f, "alias `{alias}` is not allowed in {place}")
            }
            ConflictingModifiers { name } => write!(
                f,
                "rule `{name}` is inlined (it starts with `_`) and cannot use the `?` modifier"
            ),
            LimitExceeded { what, limit } => {
                write!(f, "too many {what} (the limit is {limit})")
            }
        }
    }
}

/// One source line with a caret, ready to print.
#[derive(Clone, Debug)]
struct Snippet {
    line: u32,
    /// The line's text (lossy UTF-8, tabs kept, possibly windowed with `…`).
    text: String,
    /// Characters before the caret (a copy of the text's prefix with non-tabs turned to
    /// spaces, so tabs line up).
    pad: String,
    /// Caret length in characters, at least one.
    width: usize,
}

/// Lines longer than this are shown as a window around the span.
const MAX_SHOWN: usize = 160;

impl Snippet {
    fn new(src: &[u8], span: Span) -> Self {
        let (line_start, line) = line_at(src, span.start);
        let text = String::from_utf8_lossy(line);
        let chars: Vec<char> = text.chars().collect();
        let col = (span.column as usize).saturating_sub(1).min(chars.len());
        // Caret width: the span's characters on this line.
        let line_end = (line_start + line.len()).max(span.start);
        let span_end_in_line = span.end.clamp(span.start, line_end);
        let width = String::from_utf8_lossy(&src[span.start.min(src.len())..span_end_in_line])
            .chars()
            .count()
            .max(1);
        let (lo, hi) = if chars.len() <= MAX_SHOWN {
            (0, chars.len())
        } else {
            let lo = col.saturating_sub(MAX_SHOWN / 3);
            (lo, (lo + MAX_SHOWN).min(chars.len()))
        };
        let mut shown = String::new();
        let mut pad = String::new();
        if lo > 0 {
            shown.push('…');
            pad.push(' ');
        }
        shown.extend(&chars[lo..hi]);
        if hi < chars.len() {
            shown.push('…');
        }
        pad.extend(
            chars[lo..col.max(lo)]
                .iter()
                .map(|&c| if c == '\t' { '\t' } else { ' ' }),
        );
        let width = width.min(hi.saturating_sub(col).max(1));
        Self {
            line: span.line,
            text: shown,
            pad,
            width,
        }
    }

    fn render(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gutter = self.line.to_string();
        writeln!(f, "{gutter} | {}", self.text)?;
        write!(
            f,
            "{} | {}{}",
            " ".repeat(gutter.len()),
            self.pad,
            "^".repeat(self.width)
        )
    }
}

/// A grammar that cannot be loaded: what is wrong ([`GrammarError::kind`]), where
/// ([`GrammarError::span`]), and for duplicates where the name was first defined
/// ([`GrammarError::auxiliary_span`]).
///
/// `Display` renders `FILE:LINE:COL: error: MESSAGE`, the source line with a `^^^` caret under
/// the span, and for an auxiliary span a `note` with its own line and caret.
#[derive(Clone, Debug)]
pub struct GrammarError {
    // Boxed: errors travel in `Result`s and are rare.
    inner: Box<Inner>,
}

#[derive(Clone, Debug)]
struct Inner {
    kind: ErrorKind,
    span: Span,
    auxiliary: Option<Span>,
    file_name: String,
    snippet: Snippet,
    auxiliary_snippet: Option<Snippet>,
}

impl GrammarError {
    /// An error of `kind` at `span` of `src`.
    pub(crate) fn new(kind: ErrorKind, span: Span, src: &[u8], file_name: &str) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                span,
                auxiliary: None,
                file_name: file_name.to_string(),
                snippet: Snippet::new(src, span),
                auxiliary_snippet: None,
            }),
        }
    }

    /// The same error with an auxiliary span (the first definition of a duplicate, …).
    pub(crate) fn with_auxiliary(mut self, span: Span, src: &[u8]) -> Self {
        self.inner.auxiliary = Some(span);
        self.inner.auxiliary_snippet = Some(Snippet::new(src, span));
        self
    }

    /// What is wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// Where: the offending text.
    pub fn span(&self) -> Span {
        self.inner.span
    }

    /// A second location that explains the first: where a duplicate name was first defined,
    /// or the rule a template parameter collides with.
    pub fn auxiliary_span(&self) -> Option<Span> {
        self.inner.auxiliary
    }
}

impl fmt::Display for GrammarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.inner;
        writeln!(
            f,
            "{}:{}:{}: error: {}",
            e.file_name, e.span.line, e.span.column, e.kind
        )?;
        e.snippet.render(f)?;
        if let (Some(span), Some(snippet)) = (e.auxiliary, &e.auxiliary_snippet) {
            let what = match e.kind {
                ErrorKind::TemplateParamConflict { .. } => "the rule is defined here",
                _ => "first defined here",
            };
            writeln!(f)?;
            writeln!(
                f,
                "{}:{}:{}: note: {what}",
                e.file_name, span.line, span.column
            )?;
            snippet.render(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for GrammarError {}
