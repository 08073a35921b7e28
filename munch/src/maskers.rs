//! Building each masker of a [`MaskerKind`]: the one place that knows the masker crates'
//! constructors, configurations and artifact formats.

use std::sync::Arc;

use munch_glr::mask::{Masker, Oracle};
use munch_glr::parser::Parser;
use munch_vocab::Vocabulary;

use crate::compiled::{Config, MaskerKind};
use crate::error::{CompileError, CompileErrorKind};

/// A built masker, its sizes and its artifact writer.
pub(crate) struct Built {
    pub(crate) masker: Arc<dyn Masker>,
    /// The masker's own sizes (token classes, tables, automaton states).
    pub(crate) stats: serde_json::Map<String, serde_json::Value>,
    /// Writes the masker as an artifact, for maskers that have a format.
    pub(crate) save: Option<Saver>,
}

/// Writes a built masker's artifact.
pub(crate) type Saver = Box<dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()> + Send + Sync>;

impl Built {
    fn plain(masker: Arc<dyn Masker>, stats: serde_json::Value) -> Built {
        Built {
            masker,
            stats: match stats {
                serde_json::Value::Object(m) => m,
                _ => serde_json::Map::new(),
            },
            save: None,
        }
    }
}

/// Wraps a masker crate's build or load error.
#[cfg(any(feature = "spanner", feature = "wda"))]
fn build_error<E: std::error::Error + Send + Sync + 'static>(
    masker: MaskerKind,
) -> impl FnOnce(E) -> CompileError {
    move |e| {
        CompileError::new(CompileErrorKind::Build {
            masker,
            source: Box::new(e),
        })
    }
}

/// Builds the masker `kind` for `parser`'s grammar over `vocab`, its tables within
/// `config`'s `max_memory` bytes where it has tables (on demand where `config` says `lazy`).
pub(crate) fn construct(
    kind: MaskerKind,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    config: &Config,
) -> Result<Built, CompileError> {
    let max_memory = config.get_max_memory();
    // Unused when every optional masker is compiled out.
    let _ = (parser, max_memory);
    match kind {
        MaskerKind::Oracle => Ok(Built::plain(
            Arc::new(Oracle::new(Arc::clone(vocab))),
            serde_json::json!({}),
        )),
        #[cfg(feature = "trie")]
        MaskerKind::Trie => {
            // The walk over one representative per token class gives the same masks with a
            // much lower tail; if the class tables exceed their budget, walk every token.
            // On demand: no classes, the walk over every token (nothing built ahead).
            let config = munch_masker_trie::TrieConfig {
                classes: !config.get_lazy(),
                spans: spans_config(max_memory),
            };
            let masker =
                munch_masker_trie::TrieMasker::new(Arc::clone(parser), Arc::clone(vocab), &config)
                    .unwrap_or_else(|_| {
                        munch_masker_trie::TrieMasker::without_classes(
                            Arc::clone(parser),
                            Arc::clone(vocab),
                        )
                    });
            let s = masker.stats();
            Ok(Built::plain(
                Arc::new(masker),
                serde_json::json!({ "token_classes": s.token_classes }),
            ))
        }
        #[cfg(feature = "spanner")]
        MaskerKind::Spanner => {
            let mut config = munch_masker_spanner::SpannerConfig {
                spans: spans_config(max_memory),
                ..Default::default()
            };
            if let Some(bytes) = max_memory {
                config.max_table_bytes = bytes;
            }
            let masker = munch_masker_spanner::SpannerMasker::new(
                Arc::clone(parser),
                Arc::clone(vocab),
                &config,
            )
            .map_err(build_error(kind))?;
            let s = masker.stats();
            let stats = serde_json::json!({
                "token_classes": s.token_classes,
                "lexer_points": s.points,
                "realisable_spans": s.realisable_spans,
                "terminal_spans": s.terminal_spans,
                "table_entries": s.table_entries,
                "table_bytes": s.heap_bytes,
            });
            Ok(Built::plain(Arc::new(masker), stats))
        }
        #[cfg(feature = "wda")]
        MaskerKind::Wda if config.get_lazy() => {
            let mut wda = munch_masker_wda::WdaConfig {
                spans: spans_config(max_memory),
                ..Default::default()
            };
            if let Some(bytes) = max_memory {
                // The whole masker, its cache included, is held to it.
                wda.max_memory = bytes;
                wda.cache_capacity = bytes;
            }
            let masker =
                munch_masker_wda::LazyWdaMasker::new(Arc::clone(parser), Arc::clone(vocab), &wda)
                    .map_err(build_error(kind))?;
            // When its cache thrashes it hands over to a masker that needs no tables.
            #[cfg(feature = "trie")]
            let masker =
                masker.with_fallback(Arc::new(munch_masker_trie::TrieMasker::without_classes(
                    Arc::clone(parser),
                    Arc::clone(vocab),
                )));
            let s = masker.stats();
            let stats = serde_json::json!({
                "lazy": true,
                "token_classes": s.token_classes,
                "blocks": s.blocks,
                "table_bytes": s.table_bytes,
                "cache_capacity": s.cache_capacity,
            });
            Ok(Built::plain(Arc::new(masker), stats))
        }
        #[cfg(feature = "wda")]
        MaskerKind::Wda => {
            let mut config = munch_masker_wda::WdaConfig {
                spans: spans_config(max_memory),
                ..Default::default()
            };
            if let Some(bytes) = max_memory {
                config.max_memory = bytes;
            }
            let masker =
                munch_masker_wda::WdaMasker::new(Arc::clone(parser), Arc::clone(vocab), &config)
                    .map_err(build_error(kind))?;
            Ok(wda(masker))
        }
    }
}

/// The token spans' budgets, with `max_memory` (when set) as the most bytes of their tables:
/// every masker but the oracle builds them first, so the budget holds for them too.
#[cfg(any(feature = "trie", feature = "spanner", feature = "wda"))]
fn spans_config(max_memory: Option<usize>) -> munch_tokens::SpansConfig {
    let mut spans = munch_tokens::SpansConfig::default();
    if let Some(bytes) = max_memory {
        spans.max_bytes = bytes;
    }
    spans
}

/// Reads the artifact of a `kind` masker for `parser`'s grammar over `vocab`.
pub(crate) fn load(
    kind: MaskerKind,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    reader: &mut dyn std::io::Read,
) -> Result<Built, CompileError> {
    let _ = (parser, vocab, &reader);
    match kind {
        #[cfg(feature = "wda")]
        MaskerKind::Wda => {
            let mut r = reader;
            munch_masker_wda::WdaMasker::load(Arc::clone(parser), Arc::clone(vocab), &mut r)
                .map(wda)
                .map_err(|e| CompileError::new(CompileErrorKind::Artifact(Box::new(e))))
        }
        _ => Err(CompileError::new(CompileErrorKind::NoArtifact(kind))),
    }
}

/// A built or loaded wda with its sizes and artifact writer.
#[cfg(feature = "wda")]
fn wda(masker: munch_masker_wda::WdaMasker) -> Built {
    let s = masker.stats();
    let stats = serde_json::json!({
        "token_classes": s.token_classes,
        "states": s.states,
        "edges": s.edges,
        "distinct_weights": s.distinct_weights,
        "table_bytes": s.heap_bytes,
    });
    // The masker and its artifact writer share one automaton.
    let writer = Arc::new(masker);
    let mut built = Built::plain(Arc::clone(&writer) as Arc<dyn Masker>, stats);
    built.save = Some(Box::new(move |w: &mut dyn std::io::Write| {
        let mut w = w;
        writer.save(&mut w)
    }));
    built
}
