//! The results file (`peers.json`): the run's settings and one [`Run`] per (engine, grammar,
//! tokenizer).

use serde::{Deserialize, Serialize};

use super::job::{Text, TextOutcome};
use super::stats::Latency;

/// Everything one benchmark run measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Results {
    /// munch's version.
    pub munch_version: String,
    /// When the run started, seconds since the Unix epoch.
    pub started_unix: u64,
    /// The machine.
    pub machine: Machine,
    /// The limits the run kept to.
    pub settings: Settings,
    /// Things a reader must know (limits hit, copies used, versions pinned).
    pub notes: Vec<String>,
    /// The grammars and what their adapted copies changed.
    pub grammars: Vec<GrammarInfo>,
    /// The tokenizers.
    pub tokenizers: Vec<TokenizerInfo>,
    /// One per (engine, grammar, tokenizer).
    pub runs: Vec<Run>,
}

/// The machine the run was made on.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Machine {
    /// Logical CPUs.
    pub cpus: usize,
    /// The CPU model, where the system says.
    pub cpu_model: String,
    /// The 1-minute load average when the run started.
    pub load_average: f64,
}

/// The run's limits.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Settings {
    /// Texts per grammar.
    pub max_files: usize,
    /// Tokens per text (longer texts are cut).
    pub max_tokens_per_text: usize,
    /// Tokens per (grammar, tokenizer) over all its texts.
    pub max_tokens: usize,
    /// Time limit of one run (build and trace), seconds.
    pub timeout_s: u64,
}

/// A grammar of the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GrammarInfo {
    /// SynCode's name.
    pub name: String,
    /// Where it comes from (`syncode 0.4.16`).
    pub source: String,
    /// What the adapted copy changed.
    pub adapted: String,
    /// The texts (file names).
    pub texts: Vec<String>,
}

/// A tokenizer of the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TokenizerInfo {
    /// munch's name for it.
    pub name: String,
    /// Its number of ids.
    pub vocab_size: usize,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Built and traced (texts may still have been rejected: see `texts_accepted`).
    #[default]
    Ok,
    /// The engine could not build the grammar (with either copy).
    BuildError,
    /// The run hit the time limit.
    Timeout,
    /// The worker died (a panic, an abort, a signal) or could not be started.
    Crashed,
}

/// One engine on one grammar and tokenizer.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Run {
    /// The engine (`munch-trie`, `llguidance`, …).
    pub engine: String,
    /// Its version.
    pub engine_version: String,
    /// Its settings, in words.
    pub settings: String,
    /// The grammar.
    pub grammar: String,
    /// Which copy it ran: `original` or `adapted`.
    pub grammar_copy: String,
    /// The tokenizer.
    pub tokenizer: String,
    /// The tokenizer's number of ids.
    pub vocab_size: usize,
    /// How the run ended.
    pub status: Status,
    /// The error, for any status but `ok`; for an `ok` run on the adapted copy, why the
    /// original was refused.
    pub error: Option<String>,
    /// Grammar-independent set-up for the tokenizer, seconds.
    pub prepare_s: f64,
    /// Grammar build for the tokenizer, seconds.
    pub build_s: f64,
    /// Resident memory before the build, MiB.
    pub rss_before_build_mib: f64,
    /// Peak resident memory of the worker process, MiB.
    pub peak_rss_mib: f64,
    /// Texts traced.
    pub texts: usize,
    /// Texts whose every forced token was allowed and committed, and whose end accepts.
    pub texts_accepted: usize,
    /// Masks computed.
    pub steps: usize,
    /// Why texts were rejected (at most a few).
    pub rejections: Vec<String>,
    /// Mask latency.
    pub mask: Option<Latency>,
    /// Commit latency.
    pub commit: Option<Latency>,
    /// Mask latency on the steps that every engine traced on this grammar and tokenizer (see
    /// [`super::stats::common_steps`]): engines that refuse a text stop it early, and their
    /// own figures then pool other steps than the rest's. `None` with fewer than two engines
    /// traced.
    #[serde(default)]
    pub mask_common: Option<Latency>,
    /// The mask latency CDF, `[µs, fraction]`.
    pub mask_cdf: Vec<[f64; 2]>,
    /// Wall time of the worker, seconds.
    pub wall_s: f64,
    /// The first mask's latency, µs (with `build_s`, the time to first mask).
    #[serde(default)]
    pub first_mask_us: Option<f64>,
    /// For a schema's instances: how the engine's answers compare with the validator's labels.
    #[serde(default)]
    pub instances: Option<InstanceCounts>,
}

/// An engine's answers on a schema's labelled instances: an instance is accepted when every
/// token was allowed and committed and the end accepts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceCounts {
    /// Valid instances.
    pub valid: usize,
    /// Valid instances accepted.
    pub valid_accepted: usize,
    /// Invalid instances.
    pub invalid: usize,
    /// Invalid instances rejected.
    pub invalid_rejected: usize,
    /// The instances answered wrongly, by name (at most a few).
    pub wrong: Vec<String>,
}

impl InstanceCounts {
    /// The most wrong answers named.
    const WRONG_KEPT: usize = 8;

    /// Compares `outcomes` (in the order of `texts`) with the texts' labels.
    pub fn count(texts: &[Text], outcomes: &[TextOutcome]) -> InstanceCounts {
        let mut c = InstanceCounts::default();
        for (text, outcome) in texts.iter().zip(outcomes) {
            let Some(valid) = text.expect_valid else {
                continue;
            };
            let right = outcome.accepted == valid;
            if valid {
                c.valid += 1;
                c.valid_accepted += usize::from(right);
            } else {
                c.invalid += 1;
                c.invalid_rejected += usize::from(right);
            }
            if !right && c.wrong.len() < Self::WRONG_KEPT {
                c.wrong.push(text.name.clone());
            }
        }
        c
    }
}
