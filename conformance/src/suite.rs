//! The conformance corpus: one format of cases, run by every masker and the oracle.
//!
//! Like regex's `testdata/*.toml` and its runner, this module holds a test *format* and its
//! runner, and no tests: the cases are TOML files under `conformance/cases/`, and
//! `conformance/tests/corpus.rs` runs all of them through every masker munch has.
//!
//! # Contents
//!
//! - [The case format](#the-case-format): what a file under `cases/` says.
//! - [What a run checks](#what-a-run-checks): teacher forcing, the comparisons, expectations.
//! - [Synthetic vocabularies](#synthetic-vocabularies): the small vocabularies named
//!   `synthetic:NAME`.
//! - [Adding a masker](#adding-a-masker).
//!
//! The principal types: a [`CaseFile`] holds [`CaseSpec`]s as written; [`CaseSpec::expand`]
//! (with [`Resources`], which loads each grammar and tokenizer once) turns one spec into
//! concrete [`Case`]s, one per tokenizer and text; [`run`] runs one case through a set of
//! [`Compiled`](munch::Compiled) maskers and returns a [`CaseReport`] or the first
//! [`Disagreement`].
//!
//! # The case format
//!
//! One file per group (`json.toml`, `go.toml`, `tricky.toml`, ...), holding an array of
//! `[[case]]` tables. Each case is a grammar, a list of tokenizers and a set of texts, with one
//! expectation for all of them:
//!
//! ```toml
//! [[case]]
//! name = "dangling-else"                   # unique within the file
//! grammar = "builtin:tricky"               # builtin:NAME | syncode:NAME | inline Lark text
//! tokenizers = ["synthetic:code", "llama3"]
//! text = "if (x) if (y) z = 1; else print z;"   # one text, or a list of texts
//! expect = "accept"                        # accept | reject | any
//! ```
//!
//! The keys:
//!
//! | key | meaning |
//! |---|---|
//! | `name` | the case's name, unique within its file; reports call it `FILE/NAME` |
//! | `grammar` | `builtin:NAME` (munch's own, `grammars/*.lark`), `syncode:NAME` (SynCode 0.4.16's, fetched once), `schema:{...}` (a JSON Schema, default options), `regex:PATTERN`, or the text of a Lark grammar (any string without one of those prefixes; TOML's `'''` strings keep backslashes) |
//! | `tokenizers` | real tokenizer names for [`Vocabulary::load`] (`llama2 llama3 qwen3 gemma3 gptoss`) and `synthetic:NAME` ([below](#synthetic-vocabularies)) |
//! | `text` | a text or a list of texts, inline |
//! | `source` | instead of `text`: `corpus:LANG:N`, `N` real files spread over the corpus by [`corpus::files`] for `LANG` (`go java json sql`), or `generated:N:SEED`, `N` random sentences of the grammar rendered to text, replayable by `SEED` |
//! | `expect` | `accept`: every text is a sentence of the grammar; `reject`: no text is; `any`: either (the maskers are compared, nothing else is asserted) |
//! | `reject_at_byte` | with `reject` and one text: the first byte that cannot continue the text (its length when the text is a viable prefix that is not a sentence) |
//! | `max_bytes` | with `corpus:`: the largest file taken (default 4000) |
//! | `separator` | with `generated:`: the text between lexemes (default `" "`, which every grammar here ignores) |
//! | `oracle_every` | the oracle's period for this case, overriding the runner's (`1`: every step) |
//! | `start` | the start rule, when not `start` |
//! | `postlex` | `python`: Lark's `PythonIndenter` on the terminals |
//! | `prefer_shift` | `true`: shift/reduce conflicts resolved by shifting, as Lark's LALR parser does |
//!
//! A rejection point is a byte offset, not a step, because steps depend on the tokenizer. Real
//! files that the grammar rejects are fine as `any` cases (SynCode's Go and Java grammars reject
//! many real files): the maskers are compared at every step up to and including the step where
//! the forced token is refused.
//!
//! # What a run checks
//!
//! [`run`] teacher-forces the text's token sequence — the tokenizer's own encoding
//! ([`Vocabulary::encode`]) — through a [`Matcher`](munch::Matcher) of each masker, walked in
//! step by [`munch::teacher::Teacher`] as every tool walks a text. A checker walks the same text
//! with a matcher of the oracle ([`MaskerKind::Oracle`](munch::MaskerKind::Oracle)), and at
//! every step, before the forced token is accepted:
//!
//! 1. every masker computes its mask, and all masks must be identical;
//! 2. once in every `oracle_every` steps (in the middle of each period, so at every step when
//!    the period is one) and at the step where the text is refused, the oracle computes the
//!    exact mask too, and every mask must equal it;
//! 3. at every step, a few tokens (some random ids, some the maskers allow) are checked against
//!    the contract directly — clone the state, commit the token, test liveness — so that the
//!    oracle has a word at steps it does not run at in full;
//! 4. the forced token is accepted by a fork of the oracle's matcher: every masker must allow it
//!    iff that succeeds (the contract on the one token that matters most);
//! 5. at the end of the text, every end-of-sequence token must be allowed iff the state accepts.
//!
//! A run stops at the first token the parser refuses; where the text first fails is then found
//! byte by byte. The maskers' matchers must stop at the same step (and accept the same
//! sentences). The outcome ([`Outcome`]) must meet the case's expectation. The first
//! difference of any kind is a [`Disagreement`], whose `Display` prints the case, the step, the
//! token id, its bytes, the text just before it and each side's verdict.
//!
//! # Synthetic vocabularies
//!
//! Real tokenizers have 32k–262k tokens; the oracle costs one commit per token, so on them it
//! runs at sampled steps. The synthetic vocabularies are small enough for the oracle at every
//! step, and are built to hit the lexing corners ([`synthetic`], from the test kit's
//! [`vocab`](munch_testkit::vocab)):
//!
//! - `synthetic:bytes`: the 256 single bytes: every step is one byte, so every inhibited
//!   terminal and every partial lexeme is seen by the maskers.
//! - `synthetic:code`: every byte plus multi-byte tokens that span terminals (`x = `, `":`),
//!   overlap keywords (`if`, `iff`, ` if`, `if(`), make `+`/`++`/`+=`/`+++`, open and close
//!   comments (`/*`, `*/ `), split UTF-8 characters (`\xc3`, `\xe6\x97`), and one token twice.
//! - `synthetic:utf8`: ASCII plus every non-ASCII byte alone and pieces of characters that
//!   straddle character boundaries, but no whole multi-byte character: its encoding splits
//!   every non-ASCII character across tokens.
//!
//! Each has one end-of-sequence token and one other special token (which no mask may allow).
//! Their encoding is greedy longest match ([`Vocabulary::from_token_bytes`]).
//!
//! # Adding a masker
//!
//! [`run`] takes the maskers as [`Compiled`](munch::Compiled) grammars, all compiled for the
//! case's parser and vocabulary. `conformance/tests/corpus.rs` compiles one per
//! [`MaskerKind`](munch::MaskerKind) but the oracle, so a masker that munch's front door knows
//! is in the corpus run without a line here.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toml::Spanned;

use munch_glr::grammar::Grammar;
use munch_glr::parser::{Parser, ParserConfig};
use munch_testkit::generate::{render_text, GenerateConfig, Generator, SeededRng};
use munch_vocab::{TokenId, Vocabulary};

use crate::corpus::{self, Language};

mod run;

pub use munch_testkit::vocab::{synthetic, SYNTHETIC};
pub use run::{run, CaseReport, Disagreement, DisagreementKind, Outcome, Verdict};

/// The largest corpus file a `corpus:` source takes when the case does not say.
pub const DEFAULT_MAX_BYTES: u64 = 4000;

/// The case files shipped with munch: `conformance/cases/`.
pub fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cases")
}

/// Why a case file or a case could not be loaded: a location (file, and a line and column or
/// the case's name when known) and a message.
#[derive(Debug)]
pub struct SuiteError {
    file: PathBuf,
    line_col: Option<(usize, usize)>,
    case: Option<String>,
    message: String,
}

impl SuiteError {
    fn new(file: &Path, message: impl Into<String>) -> Self {
        SuiteError {
            file: file.to_path_buf(),
            line_col: None,
            case: None,
            message: message.into(),
        }
    }

    fn at(mut self, source: &str, offset: usize) -> Self {
        let before = &source[..offset.min(source.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        self.line_col = Some((line, column));
        self
    }

    fn in_case(mut self, case: &str) -> Self {
        self.case = Some(case.to_string());
        self
    }

    /// The case file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The line and column (1-based) of the offending key, when the error has one.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        self.line_col
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SuiteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, column)) = self.line_col {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(case) = &self.case {
            write!(f, " (case `{case}`)")?;
        }
        // Multi-line messages (TOML and grammar errors quote their source) start on a new line.
        if self.message.contains('\n') {
            write!(f, ":\n{}", self.message)
        } else {
            write!(f, ": {}", self.message)
        }
    }
}

impl std::error::Error for SuiteError {}

/// Where a case's grammar comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GrammarRef {
    /// One of munch's own grammars ([`munch_grammars::builtin`]).
    Builtin(String),
    /// One of SynCode's grammars ([`munch_grammars::syncode::grammar`]).
    Syncode(String),
    /// A JSON Schema written in the case file (`schema:{...}`), compiled with the default
    /// options.
    Schema(String),
    /// A regex constraint written in the case file (`regex:PATTERN`).
    Regex(String),
    /// Lark text written in the case file.
    Inline(String),
    /// One of Lark's bundled grammars (`lark:python`: the `python.lark` of the `lark` package,
    /// found by [`munch::lark_grammars_dir`]).
    Lark(String),
}

/// How a case's grammar is read: its start rule, post-lexer and conflict resolution
/// (`start = "file_input"`, `postlex = "python"`, `prefer_shift = true` in a case file).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GrammarOptions {
    /// The start rule, when not `start`.
    pub start: Option<String>,
    /// The post-lexer.
    pub postlex: munch::Postlex,
    /// Shift/reduce conflicts resolved by shifting, as Lark's LALR parser does
    /// (`ParserConfig::prefer_shift`).
    pub prefer_shift: bool,
}

impl GrammarRef {
    fn parse(text: &str) -> GrammarRef {
        if let Some(name) = text.strip_prefix("builtin:") {
            GrammarRef::Builtin(name.trim().to_string())
        } else if let Some(name) = text.strip_prefix("syncode:") {
            GrammarRef::Syncode(name.trim().to_string())
        } else if let Some(schema) = text.strip_prefix("schema:") {
            GrammarRef::Schema(schema.to_string())
        } else if let Some(pattern) = text.strip_prefix("regex:") {
            GrammarRef::Regex(pattern.to_string())
        } else if let Some(name) = text.strip_prefix("lark:") {
            GrammarRef::Lark(name.trim().to_string())
        } else {
            GrammarRef::Inline(text.to_string())
        }
    }
}

impl fmt::Display for GrammarRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrammarRef::Builtin(name) => write!(f, "builtin:{name}"),
            GrammarRef::Syncode(name) => write!(f, "syncode:{name}"),
            GrammarRef::Schema(_) => f.write_str("schema"),
            GrammarRef::Regex(p) => write!(f, "regex:{p}"),
            GrammarRef::Inline(_) => f.write_str("inline"),
            GrammarRef::Lark(name) => write!(f, "lark:{name}"),
        }
    }
}

/// Where a case's vocabulary comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TokenizerRef {
    /// A real tokenizer for [`Vocabulary::load`] (a name or a path).
    Real(String),
    /// One of [`SYNTHETIC`], built by [`synthetic`].
    Synthetic(String),
}

impl fmt::Display for TokenizerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenizerRef::Real(name) => f.write_str(name),
            TokenizerRef::Synthetic(name) => write!(f, "synthetic:{name}"),
        }
    }
}

/// Where a case's texts come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextSource {
    /// Texts written in the case file.
    Inline(Vec<String>),
    /// The first `n` real files of [`corpus::files`], at most `max_bytes` each.
    Corpus {
        /// Their language.
        language: Language,
        /// How many.
        n: usize,
        /// The largest file taken.
        max_bytes: u64,
    },
    /// `n` random sentences of the grammar, rendered with `separator` between lexemes.
    Generated {
        /// How many.
        n: usize,
        /// The seed that replays them.
        seed: u64,
        /// Text between lexemes (an `%ignore`d string).
        separator: String,
    },
}

/// What a case's texts must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Each text is a sentence of the grammar: every forced token is allowed and the end
    /// accepts.
    Accept,
    /// No text is a sentence: some forced token is refused, or the end does not accept.
    Reject {
        /// The first byte that cannot continue the text (its length when the whole text is a
        /// viable prefix), when the case says.
        at_byte: Option<usize>,
    },
    /// Anything: only the maskers are compared.
    Any,
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expect::Accept => f.write_str("accept"),
            Expect::Reject { at_byte: None } => f.write_str("reject"),
            Expect::Reject {
                at_byte: Some(byte),
            } => write!(f, "reject at byte {byte}"),
            Expect::Any => f.write_str("any"),
        }
    }
}

/// One `[[case]]` of a case file, as written (checked, not yet loaded).
#[derive(Clone, Debug)]
pub struct CaseSpec {
    /// The file's stem (`go` for `go.toml`): the group.
    pub group: String,
    /// The case's name, unique within its file.
    pub name: String,
    /// The grammar.
    pub grammar: GrammarRef,
    /// Its start rule and post-lexer.
    pub grammar_options: GrammarOptions,
    /// The tokenizers, in the file's order.
    pub tokenizers: Vec<TokenizerRef>,
    /// The texts.
    pub texts: TextSource,
    /// What the texts must do.
    pub expect: Expect,
    /// The oracle's period for this case, when the file sets one.
    pub oracle_every: Option<usize>,
    file: PathBuf,
}

impl CaseSpec {
    /// `GROUP/NAME`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.group, self.name)
    }
}

/// A parsed case file.
#[derive(Clone, Debug)]
pub struct CaseFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its cases, in order.
    pub cases: Vec<CaseSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    case: Vec<RawCase>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: Spanned<String>,
    grammar: Spanned<String>,
    tokenizers: Spanned<Vec<Spanned<String>>>,
    text: Option<Spanned<OneOrMany>>,
    source: Option<Spanned<String>>,
    expect: Spanned<String>,
    reject_at_byte: Option<Spanned<usize>>,
    max_bytes: Option<Spanned<u64>>,
    separator: Option<Spanned<String>>,
    oracle_every: Option<Spanned<usize>>,
    start: Option<Spanned<String>>,
    postlex: Option<Spanned<String>>,
    prefer_shift: Option<Spanned<bool>>,
}

/// Reads every `*.toml` under `dir`, in file-name order.
pub fn load_dir(dir: &Path) -> Result<Vec<CaseFile>, SuiteError> {
    let entries = std::fs::read_dir(dir).map_err(|e| SuiteError::new(dir, e.to_string()))?;
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).map_err(|e| SuiteError::new(path, e.to_string()))?;
            parse_file(path, &text)
        })
        .collect()
}

/// Parses and checks the case file `text`, read from `path` (its stem names the group).
pub fn parse_file(path: &Path, text: &str) -> Result<CaseFile, SuiteError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let error = SuiteError::new(path, e.message().to_string());
        match e.span() {
            Some(span) => error.at(text, span.start),
            None => error,
        }
    })?;
    let group = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("cases")
        .to_string();
    let mut cases: Vec<CaseSpec> = Vec::with_capacity(raw.case.len());
    for case in raw.case {
        let spec = check_case(path, text, &group, case)?;
        if cases.iter().any(|c| c.name == spec.name) {
            return Err(
                SuiteError::new(path, "a case of this name is already in the file")
                    .in_case(&spec.name),
            );
        }
        cases.push(spec);
    }
    Ok(CaseFile {
        path: path.to_path_buf(),
        cases,
    })
}

fn check_case(path: &Path, src: &str, group: &str, raw: RawCase) -> Result<CaseSpec, SuiteError> {
    let name = raw.name.get_ref().clone();
    let fail = |span: std::ops::Range<usize>, message: String| {
        SuiteError::new(path, message)
            .at(src, span.start)
            .in_case(&name)
    };
    if name.is_empty() || name.contains(char::is_whitespace) || name.contains('/') {
        return Err(fail(
            raw.name.span(),
            "a case name is one word without `/`".to_string(),
        ));
    }
    let grammar = GrammarRef::parse(raw.grammar.get_ref());
    match &grammar {
        GrammarRef::Builtin(g) if munch_grammars::builtin(g).is_none() => {
            let known: Vec<&str> = munch_grammars::BUILTIN.iter().map(|b| b.name).collect();
            return Err(fail(
                raw.grammar.span(),
                format!("no builtin grammar `{g}` (there are: {})", known.join(", ")),
            ));
        }
        GrammarRef::Syncode(g) if !munch_grammars::syncode::NAMES.contains(&g.as_str()) => {
            return Err(fail(
                raw.grammar.span(),
                format!(
                    "no SynCode grammar `{g}` (there are: {})",
                    munch_grammars::syncode::NAMES.join(", ")
                ),
            ));
        }
        _ => {}
    }
    let postlex = match &raw.postlex {
        None => munch::Postlex::None,
        Some(p) => munch::Postlex::from_name(p.get_ref()).ok_or_else(|| {
            fail(
                p.span(),
                format!("`postlex` is none or python, not `{}`", p.get_ref()),
            )
        })?,
    };
    let grammar_options = GrammarOptions {
        start: raw.start.as_ref().map(|s| s.get_ref().clone()),
        postlex,
        prefer_shift: raw.prefer_shift.as_ref().is_some_and(|p| *p.get_ref()),
    };
    let mut tokenizers = Vec::new();
    for t in raw.tokenizers.get_ref() {
        let tokenizer = match t.get_ref().strip_prefix("synthetic:") {
            Some(name) if SYNTHETIC.contains(&name) => TokenizerRef::Synthetic(name.to_string()),
            Some(name) => {
                return Err(fail(
                    t.span(),
                    format!(
                        "no synthetic vocabulary `{name}` (there are: {})",
                        SYNTHETIC.join(", ")
                    ),
                ))
            }
            None if t.get_ref().is_empty() => {
                return Err(fail(t.span(), "an empty tokenizer name".to_string()))
            }
            None => TokenizerRef::Real(t.get_ref().clone()),
        };
        tokenizers.push(tokenizer);
    }
    if tokenizers.is_empty() {
        return Err(fail(
            raw.tokenizers.span(),
            "a case needs at least one tokenizer".to_string(),
        ));
    }
    let texts = match (&raw.text, &raw.source) {
        (Some(text), None) => TextSource::Inline(match text.get_ref() {
            OneOrMany::One(t) => vec![t.clone()],
            OneOrMany::Many(ts) if ts.is_empty() => {
                return Err(fail(text.span(), "an empty list of texts".to_string()))
            }
            OneOrMany::Many(ts) => ts.clone(),
        }),
        (None, Some(source)) => {
            parse_source(source.get_ref(), &raw).map_err(|message| fail(source.span(), message))?
        }
        (Some(text), Some(_)) => {
            return Err(fail(
                text.span(),
                "a case has either `text` or `source`, not both".to_string(),
            ))
        }
        (None, None) => {
            return Err(fail(
                raw.name.span(),
                "a case needs `text` or `source`".to_string(),
            ))
        }
    };
    if let Some(m) = &raw.max_bytes {
        if !matches!(texts, TextSource::Corpus { .. }) {
            return Err(fail(
                m.span(),
                "`max_bytes` goes with a `corpus:` source".to_string(),
            ));
        }
    }
    if let Some(s) = &raw.separator {
        if !matches!(texts, TextSource::Generated { .. }) {
            return Err(fail(
                s.span(),
                "`separator` goes with a `generated:` source".to_string(),
            ));
        }
    }
    let expect = match (raw.expect.get_ref().as_str(), &raw.reject_at_byte) {
        ("accept", None) => Expect::Accept,
        ("any", None) => Expect::Any,
        ("reject", None) => Expect::Reject { at_byte: None },
        ("reject", Some(at)) => {
            match &texts {
                TextSource::Inline(ts) if ts.len() == 1 => {
                    if *at.get_ref() > ts[0].len() {
                        return Err(fail(
                            at.span(),
                            format!("the text has only {} bytes", ts[0].len()),
                        ));
                    }
                }
                _ => {
                    return Err(fail(
                        at.span(),
                        "`reject_at_byte` needs exactly one inline text".to_string(),
                    ))
                }
            }
            Expect::Reject {
                at_byte: Some(*at.get_ref()),
            }
        }
        (_, Some(at)) => {
            return Err(fail(
                at.span(),
                "`reject_at_byte` goes with `expect = \"reject\"`".to_string(),
            ))
        }
        (other, None) => {
            return Err(fail(
                raw.expect.span(),
                format!("`expect` is accept, reject or any, not `{other}`"),
            ))
        }
    };
    let oracle_every = match &raw.oracle_every {
        Some(n) if *n.get_ref() == 0 => {
            return Err(fail(n.span(), "`oracle_every` is at least 1".to_string()))
        }
        Some(n) => Some(*n.get_ref()),
        None => None,
    };
    Ok(CaseSpec {
        group: group.to_string(),
        name,
        grammar,
        grammar_options,
        tokenizers,
        texts,
        expect,
        oracle_every,
        file: path.to_path_buf(),
    })
}

fn parse_source(source: &str, raw: &RawCase) -> Result<TextSource, String> {
    let parts: Vec<&str> = source.split(':').collect();
    let number = |s: &str, what: &str| {
        s.parse::<u64>()
            .map_err(|_| format!("`{s}` is not a number ({what})"))
    };
    match parts.as_slice() {
        ["corpus", language, n] => {
            let language = match *language {
                "go" => Language::Go,
                "java" => Language::Java,
                "json" => Language::Json,
                "sql" => Language::Sql,
                other => return Err(format!("no corpus for `{other}` (go, java, json, sql)")),
            };
            Ok(TextSource::Corpus {
                language,
                n: number(n, "how many files")? as usize,
                max_bytes: raw
                    .max_bytes
                    .as_ref()
                    .map_or(DEFAULT_MAX_BYTES, |m| *m.get_ref()),
            })
        }
        ["generated", n, seed] => Ok(TextSource::Generated {
            n: number(n, "how many sentences")? as usize,
            seed: number(seed, "the seed")?,
            separator: raw
                .separator
                .as_ref()
                .map_or_else(|| " ".to_string(), |s| s.get_ref().clone()),
        }),
        _ => Err(format!(
            "a source is `corpus:LANG:N` or `generated:N:SEED`, not `{source}`"
        )),
    }
}

/// One concrete run: a parser, a vocabulary, a text and its token sequence, an expectation.
#[derive(Clone)]
pub struct Case {
    /// `GROUP/NAME`.
    pub id: String,
    /// Which of the spec's texts (0-based) and how many there are.
    pub text_index: (usize, usize),
    /// Where the text came from: `inline`, a file path, `generated:SEED #i`.
    pub origin: String,
    /// The grammar, as the spec named it.
    pub grammar: GrammarRef,
    /// The tokenizer, as the spec named it.
    pub tokenizer: TokenizerRef,
    /// The parser of the case's grammar.
    pub parser: Arc<Parser>,
    /// The vocabulary every masker of the run must be built for.
    pub vocab: Arc<Vocabulary>,
    /// The text.
    pub text: String,
    /// Its tokens, by the tokenizer's own encoding.
    pub tokens: Vec<TokenId>,
    /// What the text must do.
    pub expect: Expect,
    /// The spec's oracle period, when it sets one.
    pub oracle_every: Option<usize>,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Case")
            .field("id", &self.id)
            .field("tokenizer", &self.tokenizer)
            .field("origin", &self.origin)
            .field("tokens", &self.tokens.len())
            .field("expect", &self.expect)
            .finish()
    }
}

impl fmt::Display for Case {
    /// `GROUP/NAME [TOKENIZER] text I of N (ORIGIN)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{}] text {} of {} ({})",
            self.id,
            self.tokenizer,
            self.text_index.0 + 1,
            self.text_index.1,
            self.origin
        )
    }
}

/// Grammars, parsers and vocabularies, each loaded once for all the cases that name it.
#[derive(Default)]
pub struct Resources {
    grammars: HashMap<(GrammarRef, GrammarOptions), (Arc<Grammar>, Arc<Parser>)>,
    vocabs: HashMap<TokenizerRef, Arc<Vocabulary>>,
}

impl Resources {
    /// Nothing loaded yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The grammar and parser of `grammar`, loading them on first use.
    pub fn grammar(
        &mut self,
        grammar: &GrammarRef,
        options: &GrammarOptions,
    ) -> Result<(Arc<Grammar>, Arc<Parser>), String> {
        let key = (grammar.clone(), options.clone());
        if let Some((g, p)) = self.grammars.get(&key) {
            return Ok((Arc::clone(g), Arc::clone(p)));
        }
        let source = match grammar {
            GrammarRef::Builtin(name) => munch::Grammar::builtin(name),
            GrammarRef::Syncode(name) => munch::Grammar::syncode(name),
            GrammarRef::Schema(schema) => {
                munch::Grammar::from_json_schema(schema.as_str(), &munch::SchemaOptions::default())
            }
            GrammarRef::Regex(pattern) => munch::Grammar::from_regex(pattern),
            GrammarRef::Inline(text) => {
                Ok(munch::Grammar::lark(text.clone()).with_name("inline grammar"))
            }
            GrammarRef::Lark(name) => {
                // On a fresh machine the cache's virtualenv with Lark does not exist yet:
                // make it (what the Lark-agreement tests use) and look again.
                let dir = match munch::lark_grammars_dir() {
                    Some(dir) => dir,
                    None => {
                        crate::lark::python().map_err(|e| e.to_string())?;
                        munch::lark_grammars_dir()
                            .ok_or("no lark package found for Lark's grammars")?
                    }
                };
                munch::Grammar::lark_file(dir.join(format!("{name}.lark")))
            }
        }
        .map_err(|e| e.to_string())?;
        let source = source
            .with_starts(options.start.iter().cloned())
            .with_postlex(options.postlex)
            .with_prefer_shift(options.prefer_shift);
        let loaded = source.load().map_err(|e| e.to_string())?;
        let config = ParserConfig {
            postlex: options.postlex,
            prefer_shift: options.prefer_shift,
            ..ParserConfig::default()
        };
        let parser = Parser::new(&loaded, &config).map_err(|e| e.to_string())?;
        let entry = (Arc::new(loaded), Arc::new(parser));
        self.grammars.insert(key, entry.clone());
        Ok(entry)
    }

    /// The vocabulary of `tokenizer`, loading it on first use.
    pub fn vocabulary(&mut self, tokenizer: &TokenizerRef) -> Result<Arc<Vocabulary>, String> {
        if let Some(v) = self.vocabs.get(tokenizer) {
            return Ok(Arc::clone(v));
        }
        let vocab = match tokenizer {
            TokenizerRef::Real(name) => {
                Arc::new(Vocabulary::load(name).map_err(|e| e.to_string())?)
            }
            TokenizerRef::Synthetic(name) => {
                synthetic(name).ok_or_else(|| format!("no synthetic vocabulary `{name}`"))?
            }
        };
        self.vocabs.insert(tokenizer.clone(), Arc::clone(&vocab));
        Ok(vocab)
    }
}

impl CaseSpec {
    /// The concrete cases of this spec: one per tokenizer and text (tokenizer-major), each
    /// text encoded by its tokenizer.
    pub fn expand(&self, resources: &mut Resources) -> Result<Vec<Case>, SuiteError> {
        let fail = |message: String| SuiteError::new(&self.file, message).in_case(&self.name);
        let (grammar, parser) = resources
            .grammar(&self.grammar, &self.grammar_options)
            .map_err(|e| fail(format!("grammar {}: {e}", self.grammar)))?;
        let texts = self.texts(&grammar, &parser).map_err(fail)?;
        let mut cases = Vec::new();
        for tokenizer in &self.tokenizers {
            let vocab = resources
                .vocabulary(tokenizer)
                .map_err(|e| fail(format!("tokenizer {tokenizer}: {e}")))?;
            for (i, (origin, text)) in texts.iter().enumerate() {
                let tokens = vocab
                    .encode(text)
                    .map_err(|e| fail(format!("encoding {origin} with {tokenizer}: {e}")))?;
                cases.push(Case {
                    id: self.id(),
                    text_index: (i, texts.len()),
                    origin: origin.clone(),
                    grammar: self.grammar.clone(),
                    tokenizer: tokenizer.clone(),
                    parser: Arc::clone(&parser),
                    vocab: Arc::clone(&vocab),
                    text: text.clone(),
                    tokens,
                    expect: self.expect,
                    oracle_every: self.oracle_every,
                });
            }
        }
        Ok(cases)
    }

    /// The texts with their origins.
    fn texts(&self, grammar: &Grammar, parser: &Parser) -> Result<Vec<(String, String)>, String> {
        match &self.texts {
            TextSource::Inline(texts) => Ok(texts
                .iter()
                .map(|t| ("inline".to_string(), t.clone()))
                .collect()),
            TextSource::Corpus {
                language,
                n,
                max_bytes,
            } => {
                let files = corpus::files(*language, *n, *max_bytes).map_err(|e| e.to_string())?;
                if files.is_empty() {
                    return Err(format!("the {language:?} corpus has no file to offer"));
                }
                files
                    .iter()
                    .map(|path| {
                        let bytes =
                            std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
                        // Tokenizers encode text: a file that is not UTF-8 is read lossily.
                        let text = String::from_utf8_lossy(&bytes).into_owned();
                        Ok((path.display().to_string(), text))
                    })
                    .collect()
            }
            TextSource::Generated { n, seed, separator } => {
                generated(grammar, parser, *n, *seed, separator.as_bytes())
            }
        }
    }
}

/// `n` random sentences of the grammar, rendered to UTF-8 text; draws that cannot be rendered
/// (a terminal with no lexeme that lexes back alone, or bytes that are not UTF-8) are skipped,
/// up to `20 n` draws.
fn generated(
    grammar: &Grammar,
    parser: &Parser,
    n: usize,
    seed: u64,
    separator: &[u8],
) -> Result<Vec<(String, String)>, String> {
    let generator = Generator::new(parser.cfg());
    let mut rng = SeededRng::new(seed);
    let config = GenerateConfig {
        max_depth: 10,
        max_len: 120,
    };
    let mut out = Vec::new();
    for draw in 0..n.saturating_mul(20) {
        if out.len() == n {
            break;
        }
        let Some(sentence) = generator.sentence(&mut rng, &config) else {
            return Err("the grammar's language is empty".to_string());
        };
        let Some(bytes) = render_text(grammar, parser.lexer(), &sentence, separator, &mut rng, 20)
        else {
            continue;
        };
        if let Ok(text) = String::from_utf8(bytes) {
            out.push((format!("generated:{seed} draw {draw}"), text));
        }
    }
    if out.is_empty() {
        return Err(format!("no sentence could be rendered in {} draws", n * 20));
    }
    Ok(out)
}

/// The oracle period of each text of a group sharing one vocabulary of `vocab_len` tokens, for
/// [`run`], so that the group's oracle steps (one commit per vocabulary token each) fit `budget`
/// commits: every step if they all fit, else the budget's steps spread over the texts, one per
/// text first (a text left without one gets `usize::MAX`: the oracle only at a refused token).
pub fn oracle_periods(vocab_len: usize, steps: &[usize], budget: usize) -> Vec<usize> {
    let total: usize = steps.iter().sum();
    let oracle_steps = budget / vocab_len.max(1);
    if oracle_steps >= total {
        return vec![1; steps.len()];
    }
    let oracle_steps = oracle_steps.max(1);
    steps
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            // Text i's share: the budget dealt out round-robin.
            let share = oracle_steps / steps.len() + usize::from(i < oracle_steps % steps.len());
            if share == 0 {
                usize::MAX
            } else {
                n.div_ceil(share).max(1)
            }
        })
        .collect()
}

/// Renders reports as a table: one row per case and tokenizer, then totals.
pub fn summary_table(reports: &[CaseReport]) -> String {
    use std::fmt::Write;
    let mut rows: Vec<(String, String, Row)> = Vec::new();
    for r in reports {
        let tokenizer = r.tokenizer.to_string();
        match rows
            .iter_mut()
            .find(|(id, t, _)| *id == r.id && *t == tokenizer)
        {
            Some((_, _, row)) => row.add(r),
            None => {
                let mut row = Row::default();
                row.add(r);
                rows.push((r.id.clone(), tokenizer, row));
            }
        }
    }
    let mut total = Row::default();
    for r in reports {
        total.add(r);
    }
    let width = rows
        .iter()
        .map(|(id, _, _)| id.len())
        .max()
        .unwrap_or(0)
        .max(20);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$} {:<16} {:>5} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>9} {:>9}  maskers",
        "case",
        "tokenizer",
        "texts",
        "accepted",
        "bytes",
        "steps",
        "oracle",
        "spot",
        "vocab",
        "masks(s)",
        "oracle(s)"
    );
    let mut line = |id: &str, tokenizer: &str, row: &Row| {
        let _ = writeln!(
            out,
            "{:<width$} {:<16} {:>5} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>9.2} {:>9.2}  {}",
            id,
            tokenizer,
            row.texts,
            row.accepted,
            row.bytes,
            row.steps,
            row.oracle_steps,
            row.spot_checks,
            row.vocab_len,
            row.masker_time.as_secs_f64(),
            row.oracle_time.as_secs_f64(),
            row.maskers.join(",")
        );
    };
    for (id, tokenizer, row) in &rows {
        line(id, tokenizer, row);
    }
    line(&format!("total ({} cases)", rows.len()), "", &total);
    out
}

#[derive(Default)]
struct Row {
    texts: usize,
    accepted: usize,
    bytes: usize,
    steps: usize,
    oracle_steps: usize,
    spot_checks: usize,
    vocab_len: usize,
    masker_time: std::time::Duration,
    oracle_time: std::time::Duration,
    maskers: Vec<String>,
}

impl Row {
    fn add(&mut self, r: &CaseReport) {
        self.texts += 1;
        self.accepted += usize::from(r.outcome == Outcome::Accepted);
        self.bytes += r.text_bytes;
        self.steps += r.steps;
        self.oracle_steps += r.oracle_steps;
        self.spot_checks += r.spot_checks;
        self.vocab_len = self.vocab_len.max(r.vocab_len);
        self.masker_time += r.masker_time;
        self.oracle_time += r.oracle_time;
        for m in &r.maskers {
            if !self.maskers.contains(m) {
                self.maskers.push(m.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CaseFile, SuiteError> {
        parse_file(Path::new("cases/demo.toml"), text)
    }

    #[test]
    fn a_case_file_parses_into_specs() {
        let file = parse(
            r#"
[[case]]
name = "one"
grammar = "builtin:json"
tokenizers = ["synthetic:bytes", "llama3"]
text = ["[]", "{}"]
expect = "accept"

[[case]]
name = "two"
grammar = '''
start: "a"+
'''
tokenizers = ["synthetic:code"]
text = "aab"
expect = "reject"
reject_at_byte = 2
oracle_every = 3

[[case]]
name = "three"
grammar = "syncode:go"
tokenizers = ["gemma3"]
source = "corpus:go:5"
max_bytes = 100
expect = "any"
"#,
        )
        .unwrap();
        assert_eq!(file.cases.len(), 3);
        let [one, two, three] = &file.cases[..] else {
            unreachable!()
        };
        assert_eq!(one.id(), "demo/one");
        assert_eq!(one.grammar, GrammarRef::Builtin("json".into()));
        assert_eq!(
            one.tokenizers,
            vec![
                TokenizerRef::Synthetic("bytes".into()),
                TokenizerRef::Real("llama3".into())
            ]
        );
        assert_eq!(
            one.texts,
            TextSource::Inline(vec!["[]".into(), "{}".into()])
        );
        assert_eq!(one.expect, Expect::Accept);
        assert_eq!(two.grammar, GrammarRef::Inline("start: \"a\"+\n".into()));
        assert_eq!(two.expect, Expect::Reject { at_byte: Some(2) });
        assert_eq!(two.oracle_every, Some(3));
        assert_eq!(
            three.texts,
            TextSource::Corpus {
                language: Language::Go,
                n: 5,
                max_bytes: 100
            }
        );
    }

    /// Each mistake is refused with the line and column of the key at fault.
    #[test]
    fn mistakes_are_located() {
        let cases = [
            ("expect = \"maybe\"", 6, "`expect` is accept"),
            ("expect = \"accept\"\nreject_at_byte = 1", 7, "goes with"),
            (
                "expect = \"any\"\nmax_bytes = 5",
                7,
                "goes with a `corpus:`",
            ),
            ("expect = \"any\"\noracle_every = 0", 7, "at least 1"),
            ("expect = \"any\"\ncolour = 1", 7, "unknown field"),
        ];
        for (tail, line, needle) in cases {
            let text = format!(
                "[[case]]\nname = \"x\"\ngrammar = \"builtin:json\"\n\
                 tokenizers = [\"synthetic:bytes\"]\ntext = \"1\"\n{tail}\n"
            );
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line_col().map(|(l, _)| l), Some(line), "{e}");
            assert!(e.to_string().contains(needle), "{e}");
        }
        let bad_fields = [
            ("grammar = \"builtin:nope\"", "no builtin grammar `nope`"),
            ("grammar = \"syncode:cobol\"", "no SynCode grammar"),
        ];
        for (grammar, needle) in bad_fields {
            let text = format!(
                "[[case]]\nname = \"x\"\n{grammar}\ntokenizers = [\"llama3\"]\n\
                 text = \"1\"\nexpect = \"any\"\n"
            );
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line_col(), Some((3, 11)), "{e}");
            assert!(e.to_string().contains(needle), "{e}");
        }
        let e = parse(
            "[[case]]\nname = \"x\"\ngrammar = \"builtin:json\"\n\
             tokenizers = [\"synthetic:big\"]\nsource = \"corpus:go:x\"\nexpect = \"any\"\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("no synthetic vocabulary `big`"),
            "{e}"
        );
        let e = parse(
            "[[case]]\nname = \"x\"\ngrammar = \"builtin:json\"\n\
             tokenizers = [\"llama3\"]\nsource = \"corpus:cobol:1\"\nexpect = \"any\"\n",
        )
        .unwrap_err();
        assert_eq!(e.line_col(), Some((5, 10)), "{e}");
        let twice = "[[case]]\nname = \"x\"\ngrammar = \"builtin:json\"\n\
                     tokenizers = [\"llama3\"]\ntext = \"1\"\nexpect = \"any\"\n";
        let e = parse(&format!("{twice}{twice}")).unwrap_err();
        assert!(e.to_string().contains("already in the file"), "{e}");
        let e = parse("[[case]]\nname = 3\n").unwrap_err();
        assert!(e.line_col().is_some(), "{e}");
    }

    #[test]
    fn reject_at_byte_is_bounded_by_the_text() {
        let e = parse(
            "[[case]]\nname = \"x\"\ngrammar = \"builtin:json\"\n\
             tokenizers = [\"llama3\"]\ntext = \"[1\"\nexpect = \"reject\"\nreject_at_byte = 3\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("only 2 bytes"), "{e}");
    }

    #[test]
    fn oracle_periods_keep_to_the_budget() {
        assert_eq!(oracle_periods(300, &[10, 20], 100_000), vec![1, 1]);
        // Three oracle steps for two texts: two for the first, one for the second.
        assert_eq!(oracle_periods(100_000, &[10, 21], 300_000), vec![5, 21]);
        // One oracle step for three texts: the first text only.
        assert_eq!(
            oracle_periods(262_000, &[10, 20, 30], 100_000),
            vec![10, usize::MAX, usize::MAX]
        );
    }
}
