//! What the harness hands a worker, and what a worker hands back: both JSON files, so that the
//! Python worker (`bench/xgrammar_trace.py`) speaks the same protocol as the Rust ones.
//!
//! A worker is one process per (engine, grammar, tokenizer): its peak memory is its own, a
//! crash or a hang is reported for that run alone, and a time limit can stop it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One run to make: an engine on a grammar copy, a tokenizer and token sequences.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job {
    /// The engine's name (see [`super::engines::ENGINES`]).
    pub engine: String,
    /// The grammar's name (`json`).
    pub grammar: String,
    /// The Lark text this engine runs, or a JSON Schema (see `grammar_kind`).
    pub grammar_text: String,
    /// What `grammar_text` is.
    #[serde(default)]
    pub grammar_kind: GrammarKind,
    /// The tokenizer's name (`llama3`).
    pub tokenizer: String,
    /// Its `tokenizer.json`.
    pub tokenizer_json: PathBuf,
    /// The vocabulary file ([`VocabFile`]) every engine reads token bytes from.
    pub vocab_file: PathBuf,
    /// The texts, tokenized once by munch's `Vocabulary::encode`.
    pub texts: Vec<Text>,
}

/// What a job's grammar text is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrammarKind {
    /// A Lark grammar.
    #[default]
    Lark,
    /// A JSON Schema, which each engine compiles with its own front end.
    JsonSchema,
}

/// One text as a token sequence.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Text {
    /// The file it came from.
    pub name: String,
    /// Its tokens (possibly cut to the step budget).
    pub tokens: Vec<u32>,
    /// Whether the tokens are a prefix of the text (cut by the budget): its end is not checked.
    pub truncated: bool,
    /// For a schema's instance: whether a validator labelled it valid (`None` for the texts
    /// of a grammar, all of which are sentences).
    #[serde(default)]
    pub expect_valid: Option<bool>,
}

/// A vocabulary as every engine reads it: token id → bytes (hex; `null` for special tokens),
/// the EOS ids and the special tokens' names.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VocabFile {
    /// The tokenizer's name.
    pub name: String,
    /// Hex bytes of each id, `None` for special tokens and holes.
    pub tokens: Vec<Option<String>>,
    /// End-of-sequence ids.
    pub eos: Vec<u32>,
    /// Names of the special tokens, by id.
    pub specials: Vec<(u32, String)>,
}

impl VocabFile {
    /// Each id's bytes, `None` for special tokens and holes.
    pub fn token_bytes(&self) -> Result<Vec<Option<Vec<u8>>>, String> {
        self.tokens
            .iter()
            .enumerate()
            .map(|(id, t)| match t {
                None => Ok(None),
                Some(hex) => decode_hex(hex)
                    .map(Some)
                    .ok_or_else(|| format!("token {id}: bad hex {hex:?}")),
            })
            .collect()
    }
}

/// Lower-case hex of `bytes`.
pub fn encode_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// What a worker measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WorkerResult {
    /// The engine's version.
    pub engine_version: String,
    /// Its settings, in words (`no forcing; slicer on; 1 thread`).
    pub settings: String,
    /// Grammar-independent set-up for the tokenizer (llguidance's token environment and
    /// slicer, XGrammar's tokenizer info, munch's vocabulary load), seconds.
    pub prepare_s: f64,
    /// Compiling the grammar for the tokenizer, seconds.
    pub build_s: f64,
    /// Resident memory before the build, MiB (the vocabulary and the texts are loaded).
    pub rss_before_build_mib: f64,
    /// Peak resident memory of the worker, MiB.
    pub peak_rss_mib: f64,
    /// Why the build failed, if it did (then nothing was traced).
    pub error: Option<String>,
    /// How each text went.
    pub texts: Vec<TextOutcome>,
    /// Every mask's latency, ns.
    pub mask_ns: Vec<u64>,
    /// Every commit's latency, ns.
    pub commit_ns: Vec<u64>,
}

/// How one text went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextOutcome {
    /// The file.
    pub name: String,
    /// Masks computed.
    pub steps: usize,
    /// Every forced token was allowed and committed, and (unless truncated) the end accepts.
    pub accepted: bool,
    /// Why not.
    pub why: Option<String>,
}

/// Reads a JSON file into `T`.
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes `value` as JSON to `path`.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    let text = serde_json::to_vec(value).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        let bytes = vec![0u8, 0x7f, 0xff, b'a'];
        assert_eq!(encode_hex(&bytes), "007fff61");
        assert_eq!(decode_hex("007fff61").unwrap(), bytes);
        assert_eq!(decode_hex("0"), None);
        assert_eq!(decode_hex("zz"), None);
        let file = VocabFile {
            name: "t".into(),
            tokens: vec![Some("61".into()), None, Some("x1".into())],
            eos: vec![1],
            specials: vec![(1, "</s>".into())],
        };
        assert!(file.token_bytes().unwrap_err().contains("token 2"));
    }
}
