//! [`Compiled`]: a grammar compiled for a vocabulary with one masker, shared by every sequence
//! that uses that grammar; [`MaskerKind`] and [`Config`] choose the masker and its budgets.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use munch_glr::mask::{MaskCache, Masker};
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
    background: bool,
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
            background: false,
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

    /// The most bytes a table masker's build may hold at once: the token spans' tables while
    /// they are built, then everything the spanner's or the wda's build holds (the spans, the
    /// wda's construction, the tables kept; the on-demand wda's tables and cache together);
    /// the vocabulary and the parser are not counted. `None` keeps their defaults. The trie and the oracle build no tables.
    pub fn max_memory(mut self, bytes: Option<usize>) -> Config {
        self.max_memory = bytes;
        self
    }

    /// Whether the wda builds its automaton on demand (`true`: the lexical side up front, in
    /// milliseconds, and each state the first time a mask reads it, in a cache of 256 MiB by
    /// default; with [`Config::max_memory`], the lexical side and the cache together stay
    /// within it) rather than whole before the first
    /// mask (`false`, the default: seconds for a programming language, but no mask ever waits,
    /// and an artifact can be saved). With the trie masker, `true` builds no token classes: the
    /// walk goes over every token of the vocabulary (nothing built beyond the parser; a longer
    /// tail). The masks are the same. The spanner and the oracle ignore it.
    pub fn lazy(mut self, lazy: bool) -> Config {
        self.lazy = lazy;
        self
    }

    /// Whether [`Compiled::new`] returns as soon as the parser is built (`true`), masking with
    /// the trie walk over every token (it builds nothing ahead: the first mask in about 0.2 ms
    /// with a 128k vocabulary) while a thread builds the masker asked for, or its fallback; each
    /// matcher switches to it at its first mask after the build ends (the masks are the same).
    /// [`Compiled::wait`] waits for the build and returns its error, if any; until then
    /// [`Compiled::masker_kind`], [`Compiled::stats`] and [`Compiled::save`] describe the
    /// build so far. For grammars that arrive with requests (JSON Schemas). Without the `trie`
    /// feature the build stays in the foreground.
    pub fn background(mut self, background: bool) -> Config {
        self.background = background;
        self
    }

    /// The parser's build and commit budgets.
    pub fn parser(mut self, config: ParserConfig) -> Config {
        self.parser = config;
        self
    }

    /// The most steps a matcher keeps for [`crate::Matcher::rollback`] (the parser's
    /// `max_rollback`, 4,096 by default): older ones are forgotten, so that a long generation
    /// holds bounded memory, and rolling back to them is an error naming the budget.
    pub fn max_rollback(mut self, steps: usize) -> Config {
        self.parser.max_rollback = steps;
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

    /// Whether the masker is built in the background.
    pub fn get_background(&self) -> bool {
        self.background
    }

    /// The most steps a matcher keeps for rollback.
    pub fn get_max_rollback(&self) -> usize {
        self.parser.max_rollback
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
    /// What the build made: set by the constructor, or when a background build ends.
    done: Arc<OnceLock<Result<Done, CompileError>>>,
    /// During a background build (and after it failed): the walk that masks meanwhile.
    early: Option<Done>,
    /// The background build's thread, until [`Compiled::wait`] joins it.
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The mask caches of dropped matchers, for the next ones (see [`Compiled::take_cache`]).
    spare_caches: Mutex<Vec<MaskCache>>,
}

/// The most caches of dropped matchers a [`Compiled`] keeps (the wda's take a megabyte
/// each): enough for a server's matchers that end and begin between steps, while a larger
/// batch's caches are freed when it ends.
const SPARE_CACHES: usize = 16;

/// A masker's build: what it is, why it is not the one asked for, its figures and artifact.
struct Done {
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
            .field("masker", &self.masker_kind())
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
            self.current().stats.parser_time,
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
        #[cfg(feature = "trie")]
        if config.background {
            return Ok(Compiled::background(
                grammar,
                parser,
                parser_time,
                vocab,
                config,
            ));
        }
        let (masker, done) = Compiled::construct(&parser, parser_time, &vocab, config)?;
        Ok(Compiled::assemble(
            grammar,
            parser,
            vocab,
            masker,
            Ok(done),
            None,
        ))
    }

    /// Builds the masker of `config`, or its fallback when that fails.
    fn construct(
        parser: &Arc<Parser>,
        parser_time: Duration,
        vocab: &Arc<Vocabulary>,
        config: &Config,
    ) -> Result<(Arc<dyn Masker>, Done), CompileError> {
        let started = Instant::now();
        let (built, kind, fell_back) =
            match crate::maskers::construct(config.masker, parser, vocab, config) {
                Ok(built) => (built, config.masker, None),
                Err(why) => match config.fallback {
                    Some(fallback) if fallback != config.masker => {
                        let built = match crate::maskers::construct(fallback, parser, vocab, config)
                        {
                            Ok(built) => built,
                            Err(e) => {
                                return Err(CompileError::new(CompileErrorKind::FallbackFailed {
                                    wanted: Box::new(why),
                                    fallback: Box::new(e),
                                }))
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
        let masker = Arc::clone(&built.masker);
        let done = Compiled::done(parser, kind, built, fell_back, parser_time, masker_time);
        Ok((masker, done))
    }

    /// Returns at once with the walk over every token, and builds `config`'s masker on a
    /// thread (see [`Config::background`]).
    #[cfg(feature = "trie")]
    fn background(
        grammar: &str,
        parser: Arc<Parser>,
        parser_time: Duration,
        vocab: Arc<Vocabulary>,
        config: &Config,
    ) -> Compiled {
        let started = Instant::now();
        let walk: Arc<dyn Masker> = Arc::new(munch_masker_trie::TrieMasker::without_classes(
            Arc::clone(&parser),
            Arc::clone(&vocab),
        ));
        let early = crate::maskers::Built {
            masker: Arc::clone(&walk),
            stats: serde_json::Map::new(),
            save: None,
        };
        let early = Compiled::done(
            &parser,
            MaskerKind::Trie,
            early,
            None,
            parser_time,
            started.elapsed(),
        );
        let later = Arc::new(OnceLock::new());
        let masker: Arc<dyn Masker> =
            Arc::new(crate::handover::Handover::new(walk, Arc::clone(&later)));
        let done = Arc::new(OnceLock::new());
        let (cell, config) = (Arc::clone(&done), config.clone());
        let (p, v) = (Arc::clone(&parser), Arc::clone(&vocab));
        let thread = std::thread::Builder::new()
            .name("munch-build".into())
            .spawn(move || {
                let built = Compiled::construct(&p, parser_time, &v, &config);
                let built = built.map(|(masker, done)| {
                    // Matchers switch at their next mask.
                    let _ = later.set(crate::handover::Later::new(masker));
                    done
                });
                let _ = cell.set(built);
            });
        let compiled = Compiled {
            inner: Arc::new(Inner {
                grammar: grammar.to_string(),
                parser,
                vocab,
                masker,
                done,
                early: Some(early),
                thread: Mutex::new(None),
                spare_caches: Mutex::new(Vec::new()),
            }),
        };
        match thread {
            Ok(handle) => {
                *compiled
                    .inner
                    .thread
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some(handle)
            }
            // No thread to build on: the walk masks for good, and `wait` says why.
            Err(e) => {
                let _ = compiled
                    .inner
                    .done
                    .set(Err(CompileError::new(CompileErrorKind::Io(format!(
                        "cannot start the background build: {e}"
                    )))));
            }
        }
        compiled
    }

    /// A build's figures.
    fn done(
        parser: &Parser,
        kind: MaskerKind,
        built: crate::maskers::Built,
        fell_back: Option<FellBack>,
        parser_time: Duration,
        masker_time: Duration,
    ) -> Done {
        let stats = BuildStats {
            parser_time,
            masker_time,
            terminals: parser.terminal_len(),
            lexer_states: parser.lexer().state_len(),
            lr_states: parser.lr_state_len(),
            conflicts: parser.conflict_len(),
            masker: built.stats,
        };
        Done {
            kind,
            fell_back,
            stats,
            artifact: built.save,
        }
    }

    fn assemble(
        grammar: &str,
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        masker: Arc<dyn Masker>,
        done: Result<Done, CompileError>,
        early: Option<Done>,
    ) -> Compiled {
        Compiled {
            inner: Arc::new(Inner {
                grammar: grammar.to_string(),
                parser,
                vocab,
                masker,
                done: Arc::new(OnceLock::from(done)),
                early,
                thread: Mutex::new(None),
                spare_caches: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The build that masks now: the finished one, or the walk during (or after a failed)
    /// background build.
    fn current(&self) -> &Done {
        match (self.inner.done.get(), &self.inner.early) {
            (Some(Ok(done)), _) => done,
            (_, Some(early)) => early,
            (Some(Err(_)) | None, None) => unreachable!("a foreground build is done or failed"),
        }
    }

    /// Waits for a background build (see [`Config::background`]) and returns its error: the
    /// masks then stay the walk's, which are exact. Returns at once for other builds.
    pub fn wait(&self) -> Result<(), &CompileError> {
        // The lock is held through the join, so that a second caller waits for the first's
        // join rather than finding no thread and returning before the build ends.
        let mut thread = self.inner.thread.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(handle) = thread.take() {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
        drop(thread);
        match self.inner.done.get() {
            Some(Err(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Whether the masker asked for (or its fallback) is built; `false` only during a
    /// background build.
    pub fn is_ready(&self) -> bool {
        matches!(self.inner.done.get(), Some(Ok(_)))
    }

    /// Writes the compiled masker as an artifact, to be read back by [`Compiled::load`] with the
    /// same grammar and vocabulary (the wda's format: versioned, checksummed, fingerprinted with
    /// both).
    pub fn save(&self, w: &mut dyn std::io::Write) -> Result<(), CompileError> {
        let _ = self.wait();
        let done = self.current();
        match &done.artifact {
            Some(save) => {
                save(w).map_err(|e| CompileError::new(CompileErrorKind::Artifact(e.into())))
            }
            None => Err(CompileError::new(CompileErrorKind::NoArtifact(done.kind))),
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
        let masker = Arc::clone(&built.masker);
        let done = Compiled::done(&parser, kind, built, None, parser_time, masker_time);
        Ok(Compiled::assemble(
            grammar.name(),
            parser,
            vocab,
            masker,
            Ok(done),
            None,
        ))
    }

    /// A matcher at the start of the text, stopping at the vocabulary's EOS tokens.
    pub fn matcher(&self) -> Matcher {
        Matcher::new(self)
    }

    /// The masker built (the fallback's kind when [`Compiled::fell_back`] is set).
    pub fn masker_kind(&self) -> MaskerKind {
        self.current().kind
    }

    /// Why the masker asked for was not built, when the fallback was.
    pub fn fell_back(&self) -> Option<&FellBack> {
        self.current().fell_back.as_ref()
    }

    /// What the compilation built and cost.
    pub fn stats(&self) -> &BuildStats {
        &self.current().stats
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

    /// A mask cache for a new matcher: one a dropped matcher left, or a new one. A masker's
    /// cache is made with every buffer a mask may need already written (the wda's holds a
    /// megabyte of result slots), which would cost each new matcher hundreds of microseconds;
    /// reuse is sound because what a cache remembers is keyed by GSS node ids, which are never
    /// reused, or by contents.
    pub(crate) fn take_cache(&self) -> MaskCache {
        let spare = self
            .inner
            .spare_caches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        spare.unwrap_or_else(|| self.masker().create_cache())
    }

    /// Keeps a dropped matcher's cache for the next one, up to [`SPARE_CACHES`].
    pub(crate) fn give_cache(&self, cache: MaskCache) {
        let mut spare = self
            .inner
            .spare_caches
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if spare.len() < SPARE_CACHES {
            spare.push(cache);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    use munch_testkit::vocab::{every_byte, with_eos};

    fn spare(compiled: &Compiled) -> usize {
        compiled.inner.spare_caches.lock().unwrap().len()
    }

    #[test]
    fn dropped_matchers_leave_their_caches_to_the_next_ones() {
        let vocab = with_eos(every_byte());
        let config = Config::new().masker(MaskerKind::Trie).fallback(None);
        let grammar = Grammar::builtin("json").unwrap();
        let compiled = Compiled::new(&grammar, vocab, &config).unwrap();
        let (a, b) = (compiled.matcher(), compiled.matcher());
        let c = a.fork();
        assert_eq!(spare(&compiled), 0);
        drop((a, b, c));
        assert_eq!(spare(&compiled), 3);
        let d = compiled.matcher();
        assert_eq!(spare(&compiled), 2, "a new matcher takes a spare cache");
        // At most SPARE_CACHES are kept.
        let many: Vec<Matcher> = (0..SPARE_CACHES + 5).map(|_| compiled.matcher()).collect();
        assert_eq!(spare(&compiled), 0);
        drop(many);
        drop(d);
        assert_eq!(spare(&compiled), SPARE_CACHES);
    }
}
