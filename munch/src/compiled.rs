//! [`Compiled`]: a grammar compiled for a vocabulary with one masker, shared by every sequence
//! that uses that grammar; [`MaskerKind`] and [`Config`] choose the masker and its budgets.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use munch_glr::mask::Masker;
use munch_glr::parser::{Parser, ParserConfig};
use munch_vocab::Vocabulary;

use crate::error::{CompileError, CompileErrorKind};
use crate::grammar::Grammar;
use crate::matcher::Matcher;

/// A masker: how [`crate::Matcher::fill_next_token_bitmask`] computes the allowed tokens. Every
/// masker computes exactly the same masks (the conformance suite checks it); they differ in build
/// time, memory and mask latency. Each variant exists when its cargo feature is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MaskerKind {
    /// A walk of the vocabulary's byte trie: builds in milliseconds, masks in microseconds to a
    /// few milliseconds (feature `trie`).
    #[cfg(feature = "trie")]
    Trie,
    /// GreatGramma's inverse token spanner table (feature `spanner`).
    #[cfg(feature = "spanner")]
    Spanner,
    /// One weighted automaton read over the parser stack: the fastest masks, built ahead (in
    /// seconds for a programming language), with an artifact format (feature `wda`).
    #[cfg(feature = "wda")]
    Wda,
    /// Brute force, one commit per vocabulary token: exact, slow; the reference.
    Oracle,
}

impl MaskerKind {
    /// Every masker of this build, fastest masks first, the oracle last.
    pub const ALL: &'static [MaskerKind] = &[
        #[cfg(feature = "wda")]
        MaskerKind::Wda,
        #[cfg(feature = "spanner")]
        MaskerKind::Spanner,
        #[cfg(feature = "trie")]
        MaskerKind::Trie,
        MaskerKind::Oracle,
    ];

    /// Every masker name munch knows, compiled in or not.
    pub const NAMES: &'static [&'static str] = &["wda", "spanner", "trie", "oracle"];

    /// Its name: `trie`, `spanner`, `wda` or `oracle`.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "trie")]
            MaskerKind::Trie => "trie",
            #[cfg(feature = "spanner")]
            MaskerKind::Spanner => "spanner",
            #[cfg(feature = "wda")]
            MaskerKind::Wda => "wda",
            MaskerKind::Oracle => "oracle",
        }
    }

    /// Whether a compiled masker of this kind can be saved and loaded ([`Compiled::save`]).
    pub fn has_artifact(self) -> bool {
        #[cfg(feature = "wda")]
        if self == MaskerKind::Wda {
            return true;
        }
        false
    }

    /// The default: the fastest masks this build has (wda, else spanner, else trie).
    pub fn best() -> MaskerKind {
        MaskerKind::ALL[0]
    }

    /// The masker that always builds quickly within any budget (the trie where compiled in,
    /// else the oracle): the default fallback.
    pub fn cheapest() -> MaskerKind {
        #[cfg(feature = "trie")]
        return MaskerKind::Trie;
        #[cfg(not(feature = "trie"))]
        return MaskerKind::Oracle;
    }
}

impl fmt::Display for MaskerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MaskerKind {
    type Err = CompileError;

    /// A masker by name; a known masker whose feature is off says which feature to turn on.
    fn from_str(name: &str) -> Result<MaskerKind, CompileError> {
        if let Some(&kind) = MaskerKind::ALL.iter().find(|k| k.name() == name) {
            return Ok(kind);
        }
        Err(CompileError::new(
            match MaskerKind::NAMES.iter().find(|&&n| n == name) {
                Some(&name) => CompileErrorKind::MaskerNotCompiled { name },
                None => CompileErrorKind::UnknownMasker(name.to_string()),
            },
        ))
    }
}

/// How to compile: the masker, what to fall back to when its build fails, and budgets.
///
/// ```
/// use munch::{Config, MaskerKind};
/// let config = Config::new()
///     .masker(MaskerKind::best())
///     .fallback(Some(MaskerKind::cheapest()))
///     .max_memory(Some(512 << 20));
/// assert_eq!(config.get_masker(), MaskerKind::best());
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    masker: MaskerKind,
    fallback: Option<MaskerKind>,
    max_memory: Option<usize>,
    lazy: bool,
    parser: ParserConfig,
}

impl Default for Config {
    fn default() -> Self {
        let masker = MaskerKind::best();
        let fallback = MaskerKind::cheapest();
        Config {
            masker,
            fallback: (fallback != masker).then_some(fallback),
            max_memory: None,
            lazy: false,
            parser: ParserConfig::default(),
        }
    }
}

impl Config {
    /// The defaults: the best masker of this build, falling back to the cheapest, the maskers'
    /// own memory budgets and the parser's default budgets.
    pub fn new() -> Config {
        Config::default()
    }

    /// The masker to build.
    pub fn masker(mut self, kind: MaskerKind) -> Config {
        self.masker = kind;
        self
    }

    /// The masker to build instead when the first one's build fails (a budget, a grammar shape
    /// it does not support); [`Compiled::fell_back`] then says why. `None`: fail instead.
    pub fn fallback(mut self, kind: Option<MaskerKind>) -> Config {
        self.fallback = kind;
        self
    }

    /// The most bytes a table masker's build may hold (the wda's automaton, the spanner's
    /// tables); `None` keeps their defaults. The trie and the oracle build no tables.
    pub fn max_memory(mut self, bytes: Option<usize>) -> Config {
        self.max_memory = bytes;
        self
    }

    /// Whether the wda builds its automaton on demand (`true`: the lexical side up front, in
    /// milliseconds, and each state the first time a mask reads it, in a cache of
    /// [`Config::max_memory`] bytes, 256 MiB by default) rather than whole before the first
    /// mask (`false`, the default: seconds for a programming language, but no mask ever waits,
    /// and an artifact can be saved). The masks are the same. Other maskers ignore it.
    pub fn lazy(mut self, lazy: bool) -> Config {
        self.lazy = lazy;
        self
    }

    /// The parser's build and commit budgets.
    pub fn parser(mut self, config: ParserConfig) -> Config {
        self.parser = config;
        self
    }

    /// The masker to build.
    pub fn get_masker(&self) -> MaskerKind {
        self.masker
    }

    /// The fallback masker.
    pub fn get_fallback(&self) -> Option<MaskerKind> {
        self.fallback
    }

    /// The memory budget of table maskers.
    pub fn get_max_memory(&self) -> Option<usize> {
        self.max_memory
    }

    /// Whether the wda is built on demand.
    pub fn get_lazy(&self) -> bool {
        self.lazy
    }
}

/// A masker built in place of the one asked for.
#[derive(Debug)]
pub struct FellBack {
    /// The masker asked for.
    pub wanted: MaskerKind,
    /// Why it could not be built.
    pub why: CompileError,
    /// The masker built instead.
    pub used: MaskerKind,
}

impl fmt::Display for FellBack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; using masker `{}` instead", self.why, self.used)
    }
}

/// What a compilation built and what it cost.
#[derive(Clone, Debug)]
pub struct BuildStats {
    /// Loading the grammar and building its parser (zero when the parser was given).
    pub parser_time: Duration,
    /// Building the masker (or loading its artifact).
    pub masker_time: Duration,
    /// Terminals of the grammar.
    pub terminals: usize,
    /// States of the lexer DFA.
    pub lexer_states: usize,
    /// States of the LR automaton.
    pub lr_states: usize,
    /// Conflicts of the LALR(1) table (kept: the parser is GLR).
    pub conflicts: usize,
    /// The masker's own sizes (token classes, table entries and bytes, automaton states).
    pub masker: serde_json::Map<String, serde_json::Value>,
}

impl BuildStats {
    /// Every figure as one JSON object (durations in milliseconds).
    pub fn to_json(&self) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        map.insert("parser_ms".into(), ms(self.parser_time).into());
        map.insert("masker_ms".into(), ms(self.masker_time).into());
        map.insert("terminals".into(), self.terminals.into());
        map.insert("lexer_states".into(), self.lexer_states.into());
        map.insert("lr_states".into(), self.lr_states.into());
        map.insert("conflicts".into(), self.conflicts.into());
        for (k, v) in &self.masker {
            map.insert(k.clone(), v.clone());
        }
        serde_json::Value::Object(map)
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A grammar compiled for a vocabulary with one masker: the object an inference engine keeps per
/// grammar and shares between the sequences (and threads) that use it.
///
/// `Send + Sync`; `clone` is one reference count. Each sequence gets its own
/// [`Matcher`] from [`Compiled::matcher`].
#[derive(Clone)]
pub struct Compiled {
    inner: Arc<Inner>,
}

struct Inner {
    grammar: String,
    parser: Arc<Parser>,
    vocab: Arc<Vocabulary>,
    masker: Arc<dyn Masker>,
    kind: MaskerKind,
    fell_back: Option<FellBack>,
    stats: BuildStats,
    artifact: Option<crate::maskers::Saver>,
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled")
            .field("grammar", &self.inner.grammar)
            .field("vocabulary", &self.inner.vocab.name())
            .field("masker", &self.inner.kind)
            .finish_non_exhaustive()
    }
}

impl Compiled {
    /// Compiles `grammar` for `vocab` as `config` says: loads the grammar, builds its parser,
    /// then the masker (or the fallback, when the masker's build fails).
    pub fn new(
        grammar: &Grammar,
        vocab: Arc<Vocabulary>,
        config: &Config,
    ) -> Result<Compiled, CompileError> {
        let started = Instant::now();
        let parser = grammar.build_parser(&config.parser)?;
        Compiled::build(grammar.name(), parser, started.elapsed(), vocab, config)
    }

    /// Compiles an already built parser for `vocab` (tools that share one parser between
    /// maskers).
    pub fn from_parser(
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        config: &Config,
    ) -> Result<Compiled, CompileError> {
        Compiled::build("<parser>", parser, Duration::ZERO, vocab, config)
    }

    /// The same grammar and vocabulary with another masker (the parser is shared, not rebuilt).
    pub fn with_masker(&self, config: &Config) -> Result<Compiled, CompileError> {
        Compiled::build(
            &self.inner.grammar,
            Arc::clone(&self.inner.parser),
            self.inner.stats.parser_time,
            Arc::clone(&self.inner.vocab),
            config,
        )
    }

    fn build(
        grammar: &str,
        parser: Arc<Parser>,
        parser_time: Duration,
        vocab: Arc<Vocabulary>,
        config: &Config,
    ) -> Result<Compiled, CompileError> {
        let started = Instant::now();
        let (built, kind, fell_back) =
            match crate::maskers::construct(config.masker, &parser, &vocab, config) {
                Ok(built) => (built, config.masker, None),
                Err(why) => match config.fallback {
                    Some(fallback) if fallback != config.masker => {
                        let built =
                            match crate::maskers::construct(fallback, &parser, &vocab, config) {
                                Ok(built) => built,
                                Err(e) => {
                                    return Err(CompileError::new(
                                        CompileErrorKind::FallbackFailed {
                                            wanted: Box::new(why),
                                            fallback: Box::new(e),
                                        },
                                    ))
                                }
                            };
                        let fell = FellBack {
                            wanted: config.masker,
                            why,
                            used: fallback,
                        };
                        (built, fallback, Some(fell))
                    }
                    _ => return Err(why),
                },
            };
        let masker_time = started.elapsed();
        Ok(Compiled::assemble(
            grammar,
            parser,
            vocab,
            kind,
            built,
            fell_back,
            parser_time,
            masker_time,
        ))
    }

    #[allow(clippy::too_many_arguments)] // the parts of a `Compiled`, named once here
    fn assemble(
        grammar: &str,
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        kind: MaskerKind,
        built: crate::maskers::Built,
        fell_back: Option<FellBack>,
        parser_time: Duration,
        masker_time: Duration,
    ) -> Compiled {
        let stats = BuildStats {
            parser_time,
            masker_time,
            terminals: parser.terminal_len(),
            lexer_states: parser.lexer().state_len(),
            lr_states: parser.lr_state_len(),
            conflicts: parser.conflicts().len(),
            masker: built.stats,
        };
        Compiled {
            inner: Arc::new(Inner {
                grammar: grammar.to_string(),
                parser,
                vocab,
                masker: built.masker,
                kind,
                fell_back,
                stats,
                artifact: built.save,
            }),
        }
    }

    /// Writes the compiled masker as an artifact, to be read back by [`Compiled::load`] with the
    /// same grammar and vocabulary (the wda's format: versioned, checksummed, fingerprinted with
    /// both).
    pub fn save(&self, w: &mut dyn std::io::Write) -> Result<(), CompileError> {
        match &self.inner.artifact {
            Some(save) => {
                save(w).map_err(|e| CompileError::new(CompileErrorKind::Artifact(e.into())))
            }
            None => Err(CompileError::new(CompileErrorKind::NoArtifact(
                self.inner.kind,
            ))),
        }
    }

    /// Reads an artifact written by [`Compiled::save`] for `grammar` and `vocab` with masker
    /// `kind`. A corrupt artifact, or one made for another grammar or vocabulary, is an error.
    pub fn load(
        grammar: &Grammar,
        vocab: Arc<Vocabulary>,
        kind: MaskerKind,
        reader: &mut dyn std::io::Read,
        config: &Config,
    ) -> Result<Compiled, CompileError> {
        let started = Instant::now();
        let parser = grammar.build_parser(&config.parser)?;
        let parser_time = started.elapsed();
        let started = Instant::now();
        let built = crate::maskers::load(kind, &parser, &vocab, reader)?;
        let masker_time = started.elapsed();
        Ok(Compiled::assemble(
            grammar.name(),
            parser,
            vocab,
            kind,
            built,
            None,
            parser_time,
            masker_time,
        ))
    }

    /// A matcher at the start of the text, stopping at the vocabulary's EOS tokens.
    pub fn matcher(&self) -> Matcher {
        Matcher::new(self)
    }

    /// The masker built (the fallback's kind when [`Compiled::fell_back`] is set).
    pub fn masker_kind(&self) -> MaskerKind {
        self.inner.kind
    }

    /// Why the masker asked for was not built, when the fallback was.
    pub fn fell_back(&self) -> Option<&FellBack> {
        self.inner.fell_back.as_ref()
    }

    /// What the compilation built and cost.
    pub fn stats(&self) -> &BuildStats {
        &self.inner.stats
    }

    /// The grammar's name (a path, `builtin:NAME`, ...).
    pub fn grammar_name(&self) -> &str {
        &self.inner.grammar
    }

    /// The vocabulary.
    pub fn vocabulary(&self) -> &Arc<Vocabulary> {
        &self.inner.vocab
    }

    /// The parser, for tools that look inside.
    pub fn parser(&self) -> &Arc<Parser> {
        &self.inner.parser
    }

    /// The masker, for tools that call it directly.
    pub fn masker(&self) -> &dyn Masker {
        self.inner.masker.as_ref()
    }

    /// The number of `u32` words of one bitmask row for this vocabulary: `ceil(len / 32)`.
    pub fn bitmask_words(&self) -> usize {
        self.inner.vocab.len().div_ceil(32)
    }
}

// The promise of the type's docs.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Compiled>();
};
