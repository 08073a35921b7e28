//! Choosing a masker by name at run time.
//!
//! Every masker munch knows is listed in [`KINDS`] with the cargo feature that compiles it in.
//! [`build`] turns a name into a `Box<dyn Masker>` for a parser and a vocabulary, and says how
//! long the build took; [`check`] validates a name without building (for failing fast before a
//! tokenizer is loaded).
//!
//! | name | feature | |
//! |---|---|---|
//! | `trie` | `trie` (default) | the reference masker: a walk of the vocabulary trie |
//! | `spanner` | `spanner` | GreatGramma: per (lexer point, LR state) tables of always-accepted token classes and context-dependent spans |
//! | `wda` | `wda` | one weighted automaton read over the parser stack; compiled artifacts (`munch compile -o`) |
//! | `oracle` | — | brute force (one commit per vocabulary token): exact and slow |
//!
//! Adding a masker: set `implemented: true` in its [`KINDS`] entry and construct it in the
//! `cfg`-gated arm of `construct`.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use munch_glr::mask::{Masker, Oracle};
use munch_glr::parser::Parser;
use munch_lexer::vocab::Vocabulary;

/// A masker munch knows by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskerKind {
    /// The name given on the command line.
    pub name: &'static str,
    /// The cargo feature of the `munch` crate that compiles it in (`None`: always there).
    pub feature: Option<&'static str>,
    /// Whether its crate has an implementation yet.
    pub implemented: bool,
    /// Whether the feature is on in this build.
    pub compiled: bool,
    /// Whether a built masker can be written to a file (`munch compile -o`).
    pub has_artifact: bool,
}

impl MaskerKind {
    /// Whether [`build`] can make this masker in this build.
    pub fn is_available(&self) -> bool {
        self.implemented && self.compiled
    }
}

/// Every masker munch knows, the oracle last.
pub const KINDS: &[MaskerKind] = &[
    MaskerKind {
        name: "trie",
        feature: Some("trie"),
        implemented: true,
        compiled: cfg!(feature = "trie"),
        has_artifact: false,
    },
    MaskerKind {
        name: "spanner",
        feature: Some("spanner"),
        implemented: true,
        compiled: cfg!(feature = "spanner"),
        has_artifact: false,
    },
    MaskerKind {
        name: "wda",
        feature: Some("wda"),
        implemented: true,
        compiled: cfg!(feature = "wda"),
        has_artifact: true,
    },
    MaskerKind {
        name: "oracle",
        feature: None,
        implemented: true,
        compiled: true,
        has_artifact: false,
    },
];

/// The kind named `name`, if munch knows one.
pub fn kind(name: &str) -> Option<&'static MaskerKind> {
    KINDS.iter().find(|k| k.name == name)
}

/// The maskers this build can make, except the oracle (which is too slow to be anyone's
/// default): what `munch demo` measures.
pub fn compiled() -> impl Iterator<Item = &'static MaskerKind> {
    KINDS
        .iter()
        .filter(|k| k.is_available() && k.name != "oracle")
}

/// Why a masker could not be made.
#[derive(Debug)]
pub enum MaskerError {
    /// No masker has this name.
    Unknown(String),
    /// The masker is known but its crate has no implementation yet.
    NotImplemented(&'static str),
    /// The masker exists but its cargo feature is off in this build.
    NotCompiled {
        /// The masker's name.
        name: &'static str,
        /// The feature that compiles it in.
        feature: &'static str,
    },
    /// The masker's build failed (a budget, an unsupported grammar shape).
    Build {
        /// The masker's name.
        name: &'static str,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl fmt::Display for MaskerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaskerError::Unknown(name) => write!(
                f,
                "unknown masker `{name}`: the maskers are {}",
                KINDS
                    .iter()
                    .map(|k| format!("`{}`", k.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            MaskerError::NotImplemented(name) => {
                write!(f, "masker `{name}` is not implemented yet")
            }
            MaskerError::NotCompiled { name, feature } => write!(
                f,
                "masker `{name}` is not compiled in: rebuild munch with `--features {feature}`"
            ),
            MaskerError::Build { name, source } => {
                write!(f, "masker `{name}` could not be built: {source}")
            }
        }
    }
}

impl MaskerError {
    /// Wraps a masker crate's own build or load error as [`MaskerError::Build`] of `name`.
    #[cfg(any(feature = "spanner", feature = "wda"))]
    fn build<E: std::error::Error + Send + Sync + 'static>(
        name: &'static str,
    ) -> impl FnOnce(E) -> MaskerError {
        move |e| MaskerError::Build {
            name,
            source: Box::new(e),
        }
    }
}

impl std::error::Error for MaskerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MaskerError::Build { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

/// The kind named `name` if [`build`] can make it in this build, or why not.
pub fn check(name: &str) -> Result<&'static MaskerKind, MaskerError> {
    let kind = kind(name).ok_or_else(|| MaskerError::Unknown(name.to_string()))?;
    if !kind.implemented {
        // Said before "not compiled": turning the feature on would not help yet.
        return Err(MaskerError::NotImplemented(kind.name));
    }
    if !kind.compiled {
        return Err(MaskerError::NotCompiled {
            name: kind.name,
            feature: kind.feature.unwrap_or(kind.name),
        });
    }
    Ok(kind)
}

/// A masker and what its build cost.
pub struct Built {
    /// The masker.
    pub masker: Box<dyn Masker>,
    /// Wall-clock time of its build (the parser and vocabulary are inputs, not counted).
    pub build_time: Duration,
    /// The masker's own sizes (tables, classes, states), for `munch compile`; empty for maskers
    /// without tables.
    pub stats: serde_json::Map<String, serde_json::Value>,
    /// Writes the compiled masker as an artifact, for maskers that have a format.
    pub save: Option<Saver>,
}

/// Writes a built masker's artifact.
pub type Saver = Box<dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()> + Send + Sync>;

/// Loads a masker from an artifact written by [`Built::save`] for the same grammar and
/// vocabulary; the artifact's own typed error otherwise.
pub fn load(
    name: &str,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    reader: &mut dyn std::io::Read,
) -> Result<Box<dyn Masker>, MaskerError> {
    let kind = check(name)?;
    let _ = (parser, vocab, &reader);
    match kind.name {
        #[cfg(feature = "wda")]
        "wda" => {
            let mut r = reader;
            munch_masker_wda::WdaMasker::load(Arc::clone(parser), Arc::clone(vocab), &mut r)
                .map(|m| Box::new(m) as Box<dyn Masker>)
                .map_err(MaskerError::build(kind.name))
        }
        _ => Err(MaskerError::Build {
            name: kind.name,
            source: format!("masker `{}` has no artifact format", kind.name).into(),
        }),
    }
}

/// Limits a build must keep, beyond each masker's own defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes a table masker's build may hold (the wda's `max_memory`, the spanner's
    /// `max_table_bytes`); `None` keeps their defaults. The trie masker and the oracle build no
    /// tables.
    pub max_memory: Option<usize>,
}

/// Builds the masker named `name` for `parser`'s grammar over `vocab`.
pub fn build(
    name: &str,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
) -> Result<Built, MaskerError> {
    build_with(name, parser, vocab, &Limits::default())
}

/// [`build`] within `limits`.
pub fn build_with(
    name: &str,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    limits: &Limits,
) -> Result<Built, MaskerError> {
    let kind = check(name)?;
    let started = Instant::now();
    let (masker, stats, save) = construct(kind, parser, vocab, limits)?;
    Ok(Built {
        masker,
        build_time: started.elapsed(),
        stats,
        save,
    })
}

/// A masker that [`build_or_fall_back`] made in place of the one asked for.
#[derive(Debug)]
pub struct FellBack {
    /// The masker asked for.
    pub wanted: &'static str,
    /// Why it could not be built (a budget, an unsupported grammar shape).
    pub why: MaskerError,
    /// The masker built instead.
    pub used: &'static str,
}

impl fmt::Display for FellBack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; using masker `{}` instead", self.why, self.used)
    }
}

/// Builds `name`, or `fallback` when `name`'s build fails (a budget hit, a grammar shape it does
/// not support): what an inference engine wants, a masker whatever the grammar, and to be told
/// which. Names that are unknown, not implemented or not compiled in are errors, never a reason
/// to fall back, and so is a failed build of `fallback` itself.
pub fn build_or_fall_back(
    name: &str,
    fallback: &str,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    limits: &Limits,
) -> Result<(Built, Option<FellBack>), MaskerError> {
    let wanted = check(name)?;
    let used = check(fallback)?;
    match build_with(name, parser, vocab, limits) {
        Ok(built) => Ok((built, None)),
        Err(why @ MaskerError::Build { .. }) if used.name != wanted.name => {
            let built = build_with(fallback, parser, vocab, limits)?;
            Ok((
                built,
                Some(FellBack {
                    wanted: wanted.name,
                    why,
                    used: used.name,
                }),
            ))
        }
        Err(e) => Err(e),
    }
}

/// A masker with its stats and artifact writer, as [`construct`] returns it.
type Constructed = (
    Box<dyn Masker>,
    serde_json::Map<String, serde_json::Value>,
    Option<Saver>,
);

/// The constructor of each available masker; [`check`] has ruled out the others.
fn construct(
    kind: &MaskerKind,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    limits: &Limits,
) -> Result<Constructed, MaskerError> {
    // Unused when every optional masker is compiled out.
    let _ = (parser, limits);
    let none = serde_json::Map::new;
    match kind.name {
        "oracle" => Ok((Box::new(Oracle::new(Arc::clone(vocab))), none(), None)),
        #[cfg(feature = "trie")]
        "trie" => {
            // The walk over one representative per token class gives the same masks with a
            // much lower tail; if the class tables exceed their budget, walk every token.
            match munch_masker_trie::TrieMasker::with_classes(
                Arc::clone(parser),
                Arc::clone(vocab),
                &munch_lexer::spans::SpansConfig::default(),
            ) {
                Ok(m) => {
                    let classes = m.classes().map_or(0, |c| c.len());
                    let stats = serde_json::json!({ "token_classes": classes });
                    Ok((Box::new(m), into_map(stats), None))
                }
                Err(_) => Ok((
                    Box::new(munch_masker_trie::TrieMasker::new(
                        Arc::clone(parser),
                        Arc::clone(vocab),
                    )),
                    into_map(serde_json::json!({ "token_classes": null })),
                    None,
                )),
            }
        }
        #[cfg(feature = "spanner")]
        "spanner" => {
            let mut config = munch_masker_spanner::SpannerConfig::default();
            if let Some(bytes) = limits.max_memory {
                config.max_table_bytes = bytes;
            }
            let masker = munch_masker_spanner::SpannerMasker::with_config(
                Arc::clone(parser),
                Arc::clone(vocab),
                &config,
            )
            .map_err(MaskerError::build(kind.name))?;
            let s = masker.stats();
            let stats = serde_json::json!({
                "token_classes": s.token_classes,
                "lexer_points": s.points,
                "realisable_spans": s.realisable_spans,
                "terminal_spans": s.terminal_spans,
                "table_entries": s.table_entries,
                "table_bytes": s.heap_bytes,
            });
            Ok((Box::new(masker), into_map(stats), None))
        }
        #[cfg(feature = "wda")]
        "wda" => {
            let mut config = munch_masker_wda::WdaConfig::default();
            if let Some(bytes) = limits.max_memory {
                config.max_memory = bytes;
            }
            let masker = Arc::new(
                munch_masker_wda::WdaMasker::new(Arc::clone(parser), Arc::clone(vocab), &config)
                    .map_err(MaskerError::build(kind.name))?,
            );
            let s = masker.stats();
            let stats = serde_json::json!({
                "token_classes": s.token_classes,
                "states": s.states,
                "edges": s.edges,
                "distinct_weights": s.distinct_weights,
                "table_bytes": s.heap_bytes,
            });
            let writer = Arc::clone(&masker);
            let save: Saver = Box::new(move |w: &mut dyn std::io::Write| {
                let mut w = w;
                writer.save(&mut w)
            });
            Ok((Box::new(ArcMasker(masker)), into_map(stats), Some(save)))
        }
        _ => Err(MaskerError::NotImplemented(kind.name)),
    }
}

/// A shared masker as a `Box<dyn Masker>` (the artifact writer holds the other reference).
#[cfg(feature = "wda")]
struct ArcMasker<M>(Arc<M>);

#[cfg(feature = "wda")]
impl<M: Masker> Masker for ArcMasker<M> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn vocabulary(&self) -> &Vocabulary {
        self.0.vocabulary()
    }
    fn create_cache(&self) -> munch_glr::mask::MaskCache {
        self.0.create_cache()
    }
    fn fill_mask(
        &self,
        cache: &mut munch_glr::mask::MaskCache,
        state: &munch_glr::parser::ParserState,
        mask: &mut munch_glr::mask::TokenMask,
    ) {
        self.0.fill_mask(cache, state, mask)
    }
}

/// The fields of a JSON object.
#[cfg_attr(
    not(any(feature = "trie", feature = "spanner", feature = "wda")),
    allow(dead_code)
)]
fn into_map(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match v {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use munch_glr::parser::{ParserConfig, ParserState};
    use munch_lexer::TokenId;

    fn json_parser_and_bytes_vocab() -> (Arc<Parser>, Arc<Vocabulary>) {
        let grammar = crate::input::load_grammar("builtin:json").unwrap();
        let parser = Arc::new(Parser::new(&grammar, &ParserConfig::default()).unwrap());
        // Every single byte, a few multi-byte tokens and one EOS.
        let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        for t in ["{\"", "\":", "true", "null", "[1", ", "] {
            tokens.push(Some(t.as_bytes().to_vec()));
        }
        tokens.push(None);
        let eos = TokenId::from_usize(tokens.len() - 1);
        let vocab = Arc::new(Vocabulary::from_token_bytes(tokens, vec![eos]).unwrap());
        (parser, vocab)
    }

    #[test]
    fn names_resolve_to_kinds_or_typed_errors() {
        assert!(matches!(check("nope"), Err(MaskerError::Unknown(_))));
        assert_eq!(
            check("wda").is_ok(),
            cfg!(feature = "wda"),
            "wda is available iff its feature is on"
        );
        assert_eq!(
            check("spanner").is_ok(),
            cfg!(feature = "spanner"),
            "spanner is available iff its feature is on"
        );
        assert_eq!(check("oracle").unwrap().name, "oracle");
        assert_eq!(
            check("trie").is_ok(),
            cfg!(feature = "trie"),
            "trie is available iff its feature is on"
        );
        assert_eq!(
            MaskerError::NotImplemented("wda").to_string(),
            "masker `wda` is not implemented yet"
        );
        let unknown = MaskerError::Unknown("x".into()).to_string();
        for k in KINDS {
            assert!(unknown.contains(k.name), "{unknown}");
        }
        assert!(compiled().all(|k| k.name != "oracle" && k.is_available()));
    }

    #[test]
    fn built_maskers_report_their_names_and_agree() {
        let (parser, vocab) = json_parser_and_bytes_vocab();
        let mut names = vec!["oracle"];
        names.extend(compiled().map(|k| k.name));
        let mut state = ParserState::new(Arc::clone(&parser));
        state.commit_bytes(b"{\"a\": [1, tr").unwrap();
        let mut masks = Vec::new();
        for name in names {
            let built = build(name, &parser, &vocab).unwrap();
            assert_eq!(built.masker.name(), name);
            let mut cache = built.masker.create_cache();
            masks.push((name, built.masker.mask(&mut cache, &state)));
        }
        let (_, oracle) = &masks[0];
        // After `tr` only `u` (of the single bytes) continues `true`.
        let allowed: Vec<Vec<u8>> = oracle
            .iter()
            .map(|t| vocab.token_bytes(t).unwrap().to_vec())
            .collect();
        assert_eq!(allowed, vec![b"u".to_vec()]);
        for (name, mask) in &masks {
            assert_eq!(mask, oracle, "{name} disagrees with the oracle");
        }
    }

    #[test]
    fn a_failed_build_falls_back_and_says_why() {
        let (parser, vocab) = json_parser_and_bytes_vocab();
        let tiny = Limits {
            max_memory: Some(1),
        };
        for name in compiled().map(|k| k.name).filter(|n| *n != "trie") {
            // The table maskers cannot build within one byte; the trie masker has no tables.
            let err = build_with(name, &parser, &vocab, &tiny).err().unwrap();
            assert!(matches!(err, MaskerError::Build { .. }), "{name}: {err}");
            let (built, fell) = build_or_fall_back(name, "oracle", &parser, &vocab, &tiny).unwrap();
            assert_eq!(built.masker.name(), "oracle");
            let fell = fell.unwrap();
            assert_eq!((fell.wanted, fell.used), (name, "oracle"));
            assert!(
                fell.to_string().contains("using masker `oracle` instead"),
                "{fell}"
            );
            // With room to build, the masker asked for.
            let (built, fell) =
                build_or_fall_back(name, "oracle", &parser, &vocab, &Limits::default()).unwrap();
            assert_eq!(built.masker.name(), name);
            assert!(fell.is_none());
            // Falling back to itself is the plain error.
            assert!(build_or_fall_back(name, name, &parser, &vocab, &tiny).is_err());
        }
        // Names are checked before anything is built, the fallback's too.
        let unknown = build_or_fall_back("trie", "nope", &parser, &vocab, &tiny);
        assert!(matches!(unknown, Err(MaskerError::Unknown(_))));
    }
}
