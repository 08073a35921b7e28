//! [`Grammar`]: a grammar source and the options it is read with.
//!
//! A `Grammar` is only a description: its text is read when it is made (from a file, munch's
//! built-in grammars or SynCode's), but it is parsed and checked by [`crate::Compiled::new`],
//! which reports a grammar error with its `file:line:column`, the source line and a caret.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use munch_glr::lark::{self, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig, Postlex};

use crate::error::{CompileError, CompileErrorKind};
use munch_glr::parser::{ParserBuildError, ParserBuildErrorKind};
use munch_schema::{Relaxation, SchemaOptions, TerminalOrigin};

/// A grammar to compile: Lark text with its start rules and where its `%import`s are found.
///
/// ```
/// let g = munch::Grammar::lark("start: \"a\"+").with_start("start");
/// assert_eq!(g.name(), "<grammar>");
/// let json = munch::Grammar::builtin("json").unwrap();
/// assert_eq!(json.name(), "builtin:json");
/// ```
#[derive(Clone)]
pub struct Grammar {
    name: String,
    text: Vec<u8>,
    start: Vec<String>,
    /// Folders searched for `%import`ed grammar files, before the built-in modules.
    import_paths: Vec<PathBuf>,
    /// The folder of the grammar's file (relative imports), if it came from one.
    base_dir: Option<PathBuf>,
    /// Lark's bundled grammars (`%import python`); found by [`lark_grammars_dir`] when unset.
    lark_grammars: Option<PathBuf>,
    /// What a lenient JSON Schema compile dropped.
    relaxations: Vec<Relaxation>,
    /// For a JSON Schema's grammar: the subschema each terminal was written for.
    origins: Vec<TerminalOrigin>,
    /// The post-lexer (Lark's `postlex=`) when one was set: it overrides the parser
    /// configuration's, [`Postlex::None`] included.
    postlex: Option<Postlex>,
    /// The most bytes of Lark text, imports included ([`LoadConfig::max_grammar_bytes`]).
    max_bytes: usize,
}

impl fmt::Debug for Grammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grammar")
            .field("name", &self.name)
            .field("start", &self.start)
            .field("postlex", &self.postlex)
            .field("bytes", &self.text.len())
            .finish()
    }
}

impl Grammar {
    /// Lark grammar text; errors name it `<grammar>` (see [`Grammar::with_name`]).
    pub fn lark(text: impl Into<String>) -> Grammar {
        Grammar::lark_bytes(text.into().into_bytes())
    }

    /// Lark grammar text as bytes (invalid UTF-8 is reported, with its place, when compiled).
    pub fn lark_bytes(text: impl Into<Vec<u8>>) -> Grammar {
        Grammar {
            name: "<grammar>".to_string(),
            text: text.into(),
            start: vec!["start".to_string()],
            import_paths: Vec::new(),
            base_dir: None,
            lark_grammars: None,
            relaxations: Vec::new(),
            origins: Vec::new(),
            postlex: None,
            max_bytes: LoadConfig::default().max_grammar_bytes,
        }
    }

    /// The grammar of the JSON texts valid under a JSON Schema (JSON text, a `serde_json::Value`),
    /// in the whitespace, separator and property-order profile of `options`; named `<schema>`.
    /// A keyword that cannot be compiled exactly is an error naming it and its JSON pointer
    /// (or, with `options.lenient`, a [`Grammar::relaxations`] entry).
    ///
    /// ```
    /// let g = munch::Grammar::from_json_schema(
    ///     r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#,
    ///     &munch::SchemaOptions::default(),
    /// )
    /// .unwrap();
    /// assert!(g.relaxations().is_empty());
    /// ```
    pub fn from_json_schema(
        schema: impl SchemaSource,
        options: &SchemaOptions,
    ) -> Result<Grammar, CompileError> {
        let c = schema
            .compile(options)
            .map_err(|e| CompileError::new(CompileErrorKind::Schema(e)))?;
        let mut g = Grammar::lark(c.lark().to_string()).with_name("<schema>");
        g.relaxations = c.relaxations().to_vec();
        g.origins = c.terminal_origins().to_vec();
        Ok(g)
    }

    /// The grammar whose sentences are the whole matches of an ECMA-262 regex (`^`/`$` at its
    /// ends are redundant); named `regex:PATTERN`.
    pub fn from_regex(pattern: &str) -> Result<Grammar, CompileError> {
        let text = munch_schema::regex_grammar(pattern)
            .map_err(|e| CompileError::new(CompileErrorKind::Schema(e)))?;
        Ok(Grammar::lark(text).with_name(format!("regex:{pattern}")))
    }

    /// What a lenient JSON Schema compile relaxed (empty for other grammars).
    pub fn relaxations(&self) -> &[Relaxation] {
        &self.relaxations
    }

    /// The Lark grammar in the file at `path`; errors name the file.
    pub fn lark_file(path: impl AsRef<Path>) -> Result<Grammar, CompileError> {
        let path = path.as_ref();
        let text = read_source(path)?;
        let mut g = Grammar::lark_bytes(text).with_name(path.display().to_string());
        g.base_dir = Some(
            path.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
        );
        Ok(g)
    }

    /// One of munch's own grammars (`json`, `tricky`), named `builtin:NAME`.
    pub fn builtin(name: &str) -> Result<Grammar, CompileError> {
        let name = name.strip_prefix("builtin:").unwrap_or(name);
        match munch_grammars::builtin(name) {
            Some(g) => {
                Ok(Grammar::lark(g.source.to_string()).with_name(format!("builtin:{}", g.name)))
            }
            None => Err(CompileError::new(CompileErrorKind::UnknownGrammar(
                format!("builtin:{name}"),
            ))),
        }
    }

    /// One of SynCode's grammars (`json go java sql c calc tiny prover9 invariants python`),
    /// named `syncode:NAME`; fetched once into munch's cache (see `munch_grammars::syncode`).
    /// Needs the `syncode` feature (on by default).
    #[cfg(feature = "syncode")]
    pub fn syncode(name: &str) -> Result<Grammar, CompileError> {
        let name = name.strip_prefix("syncode:").unwrap_or(name);
        if !munch_grammars::syncode::NAMES.contains(&name) {
            return Err(CompileError::new(CompileErrorKind::UnknownGrammar(
                format!("syncode:{name}"),
            )));
        }
        let text = munch_grammars::syncode::grammar(name)
            .map_err(|e| CompileError::new(CompileErrorKind::Io(e.to_string())))?;
        Ok(Grammar::lark(text).with_name(format!("syncode:{name}")))
    }

    /// The grammar a command-line argument names: an existing file, `schema:FILE` (a JSON Schema,
    /// default [`SchemaOptions`]), `regex:PATTERN`, `syncode:NAME` (with the `syncode` feature),
    /// `builtin:NAME`, or a bare built-in name when no such file exists.
    pub fn from_arg(arg: &str) -> Result<Grammar, CompileError> {
        if let Some(path) = arg.strip_prefix("schema:") {
            let text = String::from_utf8(read_source(Path::new(path))?).map_err(|_| {
                CompileError::new(CompileErrorKind::Io(format!("{path}: not UTF-8 text")))
            })?;
            return Ok(
                Grammar::from_json_schema(text.as_str(), &SchemaOptions::default())?.with_name(arg),
            );
        }
        if let Some(pattern) = arg.strip_prefix("regex:") {
            return Grammar::from_regex(pattern);
        }
        // Any readable path that is not a folder: a regular file, or a pipe such as
        // `<(cat g.lark)` (read once, within MAX_SOURCE_BYTES).
        if Path::new(arg).exists() && !Path::new(arg).is_dir() {
            return Grammar::lark_file(arg);
        }
        #[cfg(feature = "syncode")]
        if arg.starts_with("syncode:") {
            return Grammar::syncode(arg);
        }
        Grammar::builtin(arg)
            .map_err(|_| CompileError::new(CompileErrorKind::UnknownGrammar(arg.to_string())))
    }

    /// The same grammar starting at rule `start` (Lark's default is `start`).
    pub fn with_start(mut self, start: impl Into<String>) -> Grammar {
        self.start = vec![start.into()];
        self
    }

    /// The same grammar with several start rules, as Lark's `start=[...]`: a text is accepted
    /// when any of them derives it. An empty list keeps the current start rules.
    pub fn with_starts<S: Into<String>>(mut self, starts: impl IntoIterator<Item = S>) -> Grammar {
        let starts: Vec<String> = starts.into_iter().map(Into::into).collect();
        if !starts.is_empty() {
            self.start = starts;
        }
        self
    }

    /// The same grammar, also finding `%import`ed files under `dir` (Lark's `import_paths`;
    /// searched in the order added, before the grammar's own folder and the built-in modules).
    pub fn with_import_path(mut self, dir: impl Into<PathBuf>) -> Grammar {
        self.import_paths.push(dir.into());
        self
    }

    /// The same grammar reading Lark's bundled grammars (`%import python`, `%import lark`) from
    /// `dir`, the `lark/grammars` folder of an installed `lark` package.
    pub fn with_lark_grammars(mut self, dir: impl Into<PathBuf>) -> Grammar {
        self.lark_grammars = Some(dir.into());
        self
    }

    /// The same grammar read through post-lexer `postlex`, as Lark's `postlex=`:
    /// [`Postlex::Python`] is Lark's `PythonIndenter` (`_NEWLINE` or `_NL`, `_INDENT`,
    /// `_DEDENT`, brackets, tab length 8), for Lark's and SynCode's python.lark.
    ///
    /// ```
    /// use munch::Postlex;
    /// let text = "start: stmt+\nstmt: NAME _NEWLINE\nNAME: /[a-z]+/\n_NEWLINE: /\\n[ ]*/\n\
    ///             %declare _INDENT _DEDENT";
    /// let g = munch::Grammar::lark(text).with_postlex(Postlex::Python);
    /// assert_eq!(g.postlex(), Postlex::Python);
    /// ```
    ///
    /// Set, it replaces the parser configuration's post-lexer when the parser is built, and
    /// [`Postlex::None`] then turns off one that the configuration asks for.
    pub fn with_postlex(mut self, postlex: Postlex) -> Grammar {
        self.postlex = Some(postlex);
        self
    }

    /// The post-lexer set by [`Grammar::with_postlex`] ([`Postlex::None`] when none was set:
    /// then the parser configuration's applies).
    pub fn postlex(&self) -> Postlex {
        self.postlex.unwrap_or(Postlex::None)
    }

    /// The same grammar loaded with at most `bytes` of Lark text, the imported modules'
    /// included (4 MiB by default); a larger one is a grammar error naming
    /// `max_grammar_bytes`, before anything is parsed.
    pub fn with_max_grammar_bytes(mut self, bytes: usize) -> Grammar {
        self.max_bytes = bytes;
        self
    }

    /// The same grammar under `name` in error messages.
    pub fn with_name(mut self, name: impl Into<String>) -> Grammar {
        self.name = name.into();
        self
    }

    /// The name errors give it: a path, `builtin:NAME`, `syncode:NAME` or `<grammar>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The (first) start rule.
    pub fn start(&self) -> &str {
        self.start.first().map_or("start", String::as_str)
    }

    /// Every start rule.
    pub fn starts(&self) -> &[String] {
        &self.start
    }

    /// The source text.
    pub fn text(&self) -> &[u8] {
        &self.text
    }

    /// Loads the grammar and builds its parser within `config`'s budgets, for tools that need
    /// only the parser (checking a grammar, parsing whole texts).
    /// The grammar's post-lexer, when one was set ([`Grammar::with_postlex`]), replaces
    /// `config.postlex`.
    pub fn build_parser(&self, config: &ParserConfig) -> Result<Arc<Parser>, CompileError> {
        let loaded = self.load()?;
        let mut config = config.clone();
        if let Some(postlex) = self.postlex {
            config.postlex = postlex;
        }
        Parser::new(&loaded, &config)
            .map(Arc::new)
            .map_err(|e| self.parser_error(&loaded, e))
    }

    /// The error [`Grammar::build_parser`] reports when building the parser of `loaded` (this
    /// grammar's [`Grammar::load`]) failed with `e`: located in the grammar's file, or, for a
    /// JSON Schema's grammar whose lexer exceeds a budget, at the subschemas whose strings
    /// make it ([`CompileErrorKind::SchemaLexer`]) rather than at a line of the generated
    /// text.
    pub fn parser_error(
        &self,
        loaded: &munch_glr::grammar::Grammar,
        e: ParserBuildError,
    ) -> CompileError {
        let origins: Vec<TerminalOrigin> = match e.kind() {
            ParserBuildErrorKind::Lexer(le) => match le.terminal() {
                Some(t) => {
                    let name = &loaded.terminal(t).name;
                    self.origins
                        .iter()
                        .filter(|o| &o.name == name)
                        .cloned()
                        .collect()
                }
                None => {
                    let mut shaped: Vec<TerminalOrigin> = Vec::new();
                    for o in self.origins.iter().filter(|o| !o.keywords.is_empty()) {
                        if !shaped.iter().any(|s| s.pointer == o.pointer) {
                            shaped.push(o.clone());
                        }
                    }
                    // The likeliest causes first: strings that count their characters, then
                    // those a pattern or format spells (the sort is stable).
                    let rank = |o: &TerminalOrigin| {
                        let has = |k: &[&str]| o.keywords.iter().any(|w| k.contains(w));
                        if has(&["maxLength", "minLength"]) {
                            0
                        } else if has(&["pattern", "format"]) {
                            1
                        } else {
                            2
                        }
                    };
                    shaped.sort_by_key(rank);
                    shaped
                }
            },
            _ => Vec::new(),
        };
        if origins.is_empty() {
            return CompileError::new(CompileErrorKind::Parser(e.in_file(&self.name)));
        }
        CompileError::new(CompileErrorKind::SchemaLexer {
            schema: self.name.clone(),
            origins,
            source: Box::new(e),
        })
    }

    /// Parses the Lark text into munch's grammar model.
    pub fn load(&self) -> Result<munch_glr::grammar::Grammar, CompileError> {
        let config = LoadConfig {
            start: self.start.clone(),
            file_name: self.name.clone(),
            import_paths: self.import_paths.clone(),
            base_dir: self.base_dir.clone(),
            // Only `%import` reads the folder; finding it lists a directory, which a grammar
            // without imports (every JSON Schema's) need not pay for.
            lark_grammars: self
                .lark_grammars
                .clone()
                .or_else(|| may_import(&self.text).then(lark_grammars_dir).flatten()),
            max_grammar_bytes: self.max_bytes,
            ..LoadConfig::default()
        };
        lark::load(&self.text, &config)
            .map_err(|e| CompileError::new(CompileErrorKind::Grammar(Box::new(e))))
    }
}

/// Whether Lark text may hold an `%import` statement (a cheap over-approximation: the
/// word anywhere, comments and strings included).
fn may_import(text: &[u8]) -> bool {
    text.windows(b"%import".len()).any(|w| w == b"%import")
}

/// The most bytes read from a grammar or schema file: a longer or endless one (a pipe that
/// never closes, `/dev/zero`) is an error naming the limit, read no further.
pub(crate) const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// A grammar or schema file's bytes, at most [`MAX_SOURCE_BYTES`]; errors name the file.
fn read_source(path: &Path) -> Result<Vec<u8>, CompileError> {
    munch_vocab::read_bounded(path, MAX_SOURCE_BYTES).map_err(|e| {
        let why = match e {
            munch_vocab::ReadError::TooLong { .. } => format!(
                "longer than {MAX_SOURCE_BYTES} bytes, the most munch reads from a grammar or schema file"
            ),
            e => e.to_string(),
        };
        CompileError::new(CompileErrorKind::Io(format!("{}: {why}", path.display())))
    })
}

/// Where Lark's bundled grammars are when none is given: `$MUNCH_LARK_GRAMMARS`, else the
/// `lark` package in munch's cache virtualenv (`lark-venv`, made by the conformance suite).
/// munch ships its own `common` and `unicode` but not Lark's `python` and `lark` grammars,
/// which are Lark's work.
pub fn lark_grammars_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MUNCH_LARK_GRAMMARS").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let lib = munch_vocab::cache::cache_dir()
        .join("lark-venv")
        .join("lib");
    let mut pythons: Vec<PathBuf> = std::fs::read_dir(&lib)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("python"))
        })
        .collect();
    pythons.sort();
    pythons
        .into_iter()
        .map(|p| p.join("site-packages").join("lark").join("grammars"))
        .find(|d| d.join("python.lark").is_file())
}

/// A JSON Schema as [`Grammar::from_json_schema`] takes it: JSON text or a parsed value.
pub trait SchemaSource {
    /// Compiles the schema.
    fn compile(
        self,
        options: &SchemaOptions,
    ) -> Result<munch_schema::CompiledSchema, munch_schema::SchemaError>;
}

impl SchemaSource for &str {
    fn compile(
        self,
        options: &SchemaOptions,
    ) -> Result<munch_schema::CompiledSchema, munch_schema::SchemaError> {
        munch_schema::compile_str(self, options)
    }
}

impl SchemaSource for &String {
    fn compile(
        self,
        options: &SchemaOptions,
    ) -> Result<munch_schema::CompiledSchema, munch_schema::SchemaError> {
        munch_schema::compile_str(self, options)
    }
}

impl SchemaSource for &serde_json::Value {
    fn compile(
        self,
        options: &SchemaOptions,
    ) -> Result<munch_schema::CompiledSchema, munch_schema::SchemaError> {
        munch_schema::compile(self, options)
    }
}

impl SchemaSource for serde_json::Value {
    fn compile(
        self,
        options: &SchemaOptions,
    ) -> Result<munch_schema::CompiledSchema, munch_schema::SchemaError> {
        munch_schema::compile(&self, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grammar_post_lexer_overrides_the_configuration_both_ways() {
        let text = "start: (NAME _NEWLINE | NAME \":\" _NEWLINE _INDENT start _DEDENT)+\n\
                    NAME: /[a-z]+/\n_NEWLINE: /(\\r?\\n[\\t ]*)+/\n\
                    %declare _INDENT _DEDENT\n";
        let python = ParserConfig {
            postlex: Postlex::Python,
            ..ParserConfig::default()
        };
        // Without the indenter, the declared `_INDENT` and `_DEDENT` have no pattern: the
        // parser is refused.
        let indented = |g: &Grammar, config: &ParserConfig| match g.build_parser(config) {
            Ok(parser) => parser.indenter().is_some(),
            Err(e) => {
                assert!(e.to_string().contains("_INDENT"), "{e}");
                false
            }
        };
        let unset = Grammar::lark(text);
        assert_eq!(unset.postlex(), Postlex::None);
        assert!(indented(&unset, &python), "the configuration's applies");
        assert!(!indented(&unset, &ParserConfig::default()));
        let off = Grammar::lark(text).with_postlex(Postlex::None);
        assert!(!indented(&off, &python), "set to none, it turns it off");
        let on = Grammar::lark(text).with_postlex(Postlex::Python);
        assert!(indented(&on, &ParserConfig::default()));
    }

    #[test]
    fn names_resolve_or_say_what_exists() {
        assert_eq!(Grammar::from_arg("json").unwrap().name(), "builtin:json");
        assert_eq!(
            Grammar::from_arg("builtin:tricky").unwrap().name(),
            "builtin:tricky"
        );
        let err = Grammar::from_arg("no-such-grammar")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no grammar \"no-such-grammar\""), "{err}");
        assert!(err.contains("json"), "{err}");
        #[cfg(feature = "syncode")]
        {
            assert!(err.contains("syncode:NAME"), "{err}");
            let err = Grammar::syncode("cobol").unwrap_err().to_string();
            assert!(err.contains("syncode:cobol"), "{err}");
        }
        let err = Grammar::lark_file("/nonexistent/g.lark")
            .unwrap_err()
            .to_string();
        assert!(err.contains("/nonexistent/g.lark"), "{err}");
    }

    #[test]
    fn the_start_rule_is_the_users() {
        let g = Grammar::lark("value: \"a\" | list\nlist: \"[\" value \"]\"\n");
        // No `start` rule: Lark users name one.
        let err = g.load().unwrap_err().to_string();
        assert!(err.contains("start"), "{err}");
        assert!(g.clone().with_start("value").load().is_ok());
        assert!(g.with_start("list").load().is_ok());
    }

    #[test]
    fn errors_carry_the_grammar_name_and_place() {
        let err = Grammar::lark("start: \"a\" (\n")
            .with_name("mine.lark")
            .load()
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("mine.lark:1:"), "{err}");
        assert!(err.contains('^'), "{err}");
    }
}
