//! Reading a Hugging Face `tokenizer.json`: which byte convention it uses, every token's exact
//! bytes, its special tokens and EOS ids, and the `tokenizers` encoder patched so that encoding
//! reproduces a text's bytes exactly.
//!
//! The rules are documented in the module docs of [`vocab`](super).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::bytemap::{self, SP_SPACE};
use super::{ByteScheme, VocabError, VocabErrorKind, Vocabulary};
use crate::TokenId;

/// The names of special tokens taken as end-of-sequence: the tokens that end a generated text
/// or a turn in the chat formats of the model families munch targets (Llama 2 `</s>`, Gemma
/// `<eos>` and `<end_of_turn>`, Llama 3 `<|end_of_text|>`, `<|eot_id|>` and `<|eom_id|>`, Qwen
/// `<|endoftext|>` and `<|im_end|>`, gpt-oss `<|return|>`, `<|call|>` and `<|end|>`).
pub const EOS_NAMES: &[&str] = &[
    "</s>",
    "<eos>",
    "<end_of_turn>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|endoftext|>",
    "<|im_end|>",
    "<|return|>",
    "<|call|>",
    "<|end|>",
];

/// One id of the vocabulary as read from the file.
pub(crate) enum Entry {
    /// No token has this id.
    Hole,
    /// A special token, with its string.
    Special(String),
    /// A text token, with its bytes.
    Text(Vec<u8>),
}

/// Everything read from a tokenizer file.
pub(crate) struct Loaded {
    pub(crate) entries: Vec<Entry>,
    pub(crate) eos: Vec<TokenId>,
    pub(crate) scheme: ByteScheme,
    pub(crate) encoder: HfEncoder,
}

/// The `tokenizers` encoder of a file, built on first use.
///
/// Building it parses the whole file again and indexes every merge: several times the cost of
/// reading the vocabulary (in release, on a busy 2-core machine, 1.6 s for Gemma 3's 262k tokens
/// and 515k merges against 0.26 s for the rest of the load), and maskers never encode. The patches are
/// validated when the file is read; only an error of the `tokenizers` library itself can appear
/// at the first encode.
pub(crate) struct HfEncoder {
    source: String,
    /// The file and the patched components, taken by the first build; or why the file's
    /// encoder cannot spell texts exactly (the vocabulary itself loads: masks need only the
    /// tokens' bytes).
    pending: Mutex<Option<Result<Pending, VocabError>>>,
    built: OnceLock<Result<tokenizers::Tokenizer, VocabError>>,
    /// SentencePiece: the byte-fallback token of every byte (a literal `▁` in a text must be
    /// spelled with them, since the tokenizer reads it as a space).
    byte_tokens: Option<Box<[Option<TokenId>; 256]>>,
}

struct Pending {
    json: Vec<u8>,
    normalizer: Option<tokenizers::NormalizerWrapper>,
    pre_tokenizer: Option<tokenizers::PreTokenizerWrapper>,
}

#[derive(Deserialize)]
struct TokenizerFile {
    #[serde(default)]
    added_tokens: Vec<AddedTokenFile>,
    #[serde(default)]
    normalizer: Option<Value>,
    #[serde(default)]
    pre_tokenizer: Option<Value>,
    #[serde(default)]
    decoder: Option<Value>,
    model: ModelFile,
}

#[derive(Deserialize)]
struct AddedTokenFile {
    id: u64,
    content: String,
    #[serde(default)]
    special: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    /// Defaults to `!special`, as in `tokenizers`.
    #[serde(default)]
    normalized: Option<bool>,
}

#[derive(Deserialize)]
struct ModelFile {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    vocab: Option<VocabMap>,
    #[serde(default)]
    byte_fallback: bool,
    #[serde(default)]
    unk_token: Option<String>,
    #[serde(default)]
    continuing_subword_prefix: Option<String>,
    #[serde(default)]
    end_of_word_suffix: Option<String>,
}

/// A BPE vocabulary `{ "token": id, … }`, read without building a JSON value per entry; a list
/// (the Unigram shape) is skipped and remembered as such.
enum VocabMap {
    Map(Vec<(String, u64)>),
    NotAMap,
}

impl<'de> Deserialize<'de> for VocabMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = VocabMap;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map from token string to id")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<VocabMap, A::Error> {
                let mut v = Vec::with_capacity(a.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(entry) = a.next_entry::<String, u64>()? {
                    v.push(entry);
                }
                Ok(VocabMap::Map(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<VocabMap, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(VocabMap::NotAMap)
            }
        }
        d.deserialize_any(V)
    }
}

fn type_of(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The components of a (possibly nested) `Sequence`, in order. `tokenizers` names the list
/// differently for each kind of component.
fn leaves<'a>(v: &'a Value, list_key: &str) -> Vec<&'a Value> {
    let mut out = Vec::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if type_of(v) == "Sequence" {
            if let Some(items) = v.get(list_key).and_then(Value::as_array) {
                stack.extend(items.iter().rev());
            }
        } else {
            out.push(v);
        }
    }
    out
}

/// `Replace` from the string `from` to `to`.
fn is_replace(v: &Value, from: &str, to: &str) -> bool {
    type_of(v) == "Replace"
        && v.get("pattern")
            .and_then(|p| p.get("String"))
            .and_then(Value::as_str)
            == Some(from)
        && v.get("content").and_then(Value::as_str) == Some(to)
}

const SP_SPACE_STR: &str = "\u{2581}";

fn detect_scheme(source: &str, file: &TokenizerFile) -> Result<ByteScheme, VocabError> {
    let model_kind = file.model.kind.as_deref().unwrap_or("");
    if model_kind != "BPE" {
        return Err(VocabError::unsupported(
            source,
            format!("model type {model_kind:?}: only BPE models are read"),
        ));
    }
    for (key, value) in [
        (
            "continuing_subword_prefix",
            &file.model.continuing_subword_prefix,
        ),
        ("end_of_word_suffix", &file.model.end_of_word_suffix),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            return Err(VocabError::unsupported(
                source,
                format!("the BPE model has {key} {v:?}, which is not part of the text"),
            ));
        }
    }
    let pre = file
        .pre_tokenizer
        .as_ref()
        .map(|p| leaves(p, "pretokenizers"))
        .unwrap_or_default();
    let dec = file
        .decoder
        .as_ref()
        .map(|d| leaves(d, "decoders"))
        .unwrap_or_default();
    let byte_level_pre = pre.iter().any(|p| type_of(p) == "ByteLevel");
    let byte_level_dec = dec.iter().any(|d| type_of(d) == "ByteLevel");
    let sp_dec = dec.iter().any(|d| {
        is_replace(d, SP_SPACE_STR, " ")
            || (type_of(d) == "Metaspace"
                && d.get("replacement").and_then(Value::as_str) == Some(SP_SPACE_STR))
    });
    if byte_level_pre || byte_level_dec {
        if !(byte_level_pre && byte_level_dec) || sp_dec {
            return Err(VocabError::unsupported(
                source,
                "a byte-level tokenizer needs both a ByteLevel pre-tokenizer and a ByteLevel \
                 decoder, and no SentencePiece decoder",
            ));
        }
        return Ok(ByteScheme::ByteLevel);
    }
    if sp_dec {
        let fallback_dec = dec.iter().any(|d| type_of(d) == "ByteFallback");
        if !file.model.byte_fallback || !fallback_dec {
            return Err(VocabError::unsupported(
                source,
                "a SentencePiece-style tokenizer needs byte_fallback in the model and a \
                 ByteFallback decoder, so that every byte has a token",
            ));
        }
        return Ok(ByteScheme::SentencePiece);
    }
    Err(VocabError::unsupported(
        source,
        "the decoder is neither ByteLevel nor SentencePiece's (replacing \u{2581} with a space)",
    ))
}

/// The normalizer without its steps that rewrite text (see the module docs), or `None` when no
/// step is left. Nesting is bounded by `serde_json`'s recursion limit.
fn patch_normalizer(v: &Value, scheme: ByteScheme) -> Result<Option<Value>, String> {
    let kind = type_of(v);
    match kind {
        "Sequence" => {
            let items = v
                .get("normalizers")
                .and_then(Value::as_array)
                .ok_or("a Sequence normalizer without a list")?;
            let mut kept = Vec::new();
            for item in items {
                if let Some(item) = patch_normalizer(item, scheme)? {
                    kept.push(item);
                }
            }
            Ok(match kept.len() {
                0 => None,
                1 => kept.pop(),
                _ => Some(serde_json::json!({"type": "Sequence", "normalizers": kept})),
            })
        }
        "NFC" | "NFD" | "NFKC" | "NFKD" => Ok(None),
        "Prepend"
            if scheme == ByteScheme::SentencePiece
                && v.get("prepend").and_then(Value::as_str) == Some(SP_SPACE_STR) =>
        {
            Ok(None)
        }
        "Replace" if scheme == ByteScheme::SentencePiece && is_replace(v, " ", SP_SPACE_STR) => {
            Ok(Some(v.clone()))
        }
        _ => Err(format!(
            "normalizer {kind:?} rewrites the text, so encoding cannot reproduce its bytes"
        )),
    }
}

/// The pre-tokenizer with the prefix space turned off; refuses steps that drop characters.
fn patch_pre_tokenizer(v: &mut Value, scheme: ByteScheme) -> Result<(), String> {
    let kind = type_of(v).to_owned();
    let removes = v.get("behavior").and_then(Value::as_str) == Some("Removed");
    match kind.as_str() {
        "Sequence" => {
            let items = v
                .get_mut("pretokenizers")
                .and_then(Value::as_array_mut)
                .ok_or("a Sequence pre-tokenizer without a list")?;
            for item in items {
                patch_pre_tokenizer(item, scheme)?;
            }
            Ok(())
        }
        "ByteLevel" => {
            v["add_prefix_space"] = Value::Bool(false);
            Ok(())
        }
        "Metaspace" if scheme == ByteScheme::SentencePiece => {
            if v.get("replacement").and_then(Value::as_str) != Some(SP_SPACE_STR) {
                return Err("a Metaspace pre-tokenizer whose replacement is not \u{2581}".into());
            }
            v["prepend_scheme"] = Value::String("never".into());
            v["add_prefix_space"] = Value::Bool(false);
            Ok(())
        }
        "Split" | "Punctuation" if !removes => Ok(()),
        // Inverted, a `Split`'s matches are the pieces and what it does not match is removed.
        // GPT-4o's pattern matches every character, so nothing is; where a pattern leaves a
        // character out, `Vocabulary::encode`'s spelling check reports where.
        "Split" if removes && v.get("invert").and_then(Value::as_bool) == Some(true) => Ok(()),
        "Digits" | "UnicodeScripts" => Ok(()),
        _ => Err(format!(
            "pre-tokenizer {kind:?} drops or rewrites characters, so encoding cannot reproduce \
             the text's bytes"
        )),
    }
}

/// The bytes of model token `token` under `scheme`.
fn model_token_bytes(
    source: &str,
    scheme: ByteScheme,
    id: u32,
    token: &str,
) -> Result<Vec<u8>, VocabError> {
    match scheme {
        ByteScheme::ByteLevel => bytemap::byte_level_bytes(token).map_err(|c| {
            VocabError::invalid_token(
                source,
                id,
                token,
                format!(
                    "character U+{:04X} is not in the byte-level alphabet",
                    c as u32
                ),
            )
        }),
        ByteScheme::SentencePiece => Ok(match bytemap::byte_fallback(token) {
            Some(b) => vec![b],
            None => bytemap::sentencepiece_bytes(token),
        }),
        // Synthetic vocabularies are not read from files.
        ByteScheme::Synthetic => Ok(token.as_bytes().to_vec()),
    }
}

fn checked_id(source: &str, id: u64) -> Result<usize, VocabError> {
    if id >= Vocabulary::MAX_LEN as u64 {
        return Err(VocabError::new(VocabErrorKind::TooLarge {
            source: source.to_owned(),
            what: "ids",
            given: id.saturating_add(1),
            limit: Vocabulary::MAX_LEN as u64,
        }));
    }
    Ok(id as usize)
}

/// The `eos_token` a `tokenizer_config.json` names, if any (a string or `{"content": …}`).
fn config_eos(source: &str, config: &[u8]) -> Result<Option<String>, VocabError> {
    let config: Value = serde_json::from_slice(config)
        .map_err(|e| VocabError::json(&format!("{source} (tokenizer_config.json)"), &e))?;
    let eos = config.get("eos_token");
    Ok(match eos {
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => v.get("content").and_then(Value::as_str).map(str::to_owned),
        None => None,
    })
}

/// Reads `json` (and the optional `tokenizer_config.json` beside it).
pub(crate) fn load(source: &str, json: &[u8], config: Option<&[u8]>) -> Result<Loaded, VocabError> {
    let file: TokenizerFile =
        serde_json::from_slice(json).map_err(|e| VocabError::json(source, &e))?;
    let scheme = detect_scheme(source, &file)?;
    let vocab = match &file.model.vocab {
        Some(VocabMap::Map(v)) => v,
        Some(VocabMap::NotAMap) | None => {
            return Err(VocabError::unsupported(
                source,
                "the BPE model has no {token: id} vocabulary",
            ))
        }
    };

    let mut len = 0usize;
    for &(_, id) in vocab {
        len = len.max(checked_id(source, id)? + 1);
    }
    for t in &file.added_tokens {
        len = len.max(checked_id(source, t.id)? + 1);
    }
    // Model strings by id, to resolve added tokens that overlay a model token.
    let mut model: Vec<Option<&str>> = vec![None; len];
    for (token, id) in vocab {
        let slot = &mut model[*id as usize];
        if slot.is_some() {
            return Err(VocabError::new(VocabErrorKind::DuplicateId {
                source: source.to_owned(),
                id: *id as u32,
            }));
        }
        *slot = Some(token);
    }

    // Special tokens first: their model strings (if any) need no byte mapping.
    let mut special: Vec<Option<&str>> = vec![None; len];
    if let Some(unk) = &file.model.unk_token {
        if let Some(&(_, id)) = vocab.iter().find(|(t, _)| t == unk) {
            special[id as usize] = Some(unk);
        }
    }
    for t in file.added_tokens.iter().filter(|t| t.special) {
        special[t.id as usize] = Some(&t.content);
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(len);
    for (id, (token, special)) in model.iter().zip(&special).enumerate() {
        entries.push(match (token, special) {
            (_, Some(name)) => Entry::Special((*name).to_owned()),
            (Some(token), None) => {
                Entry::Text(model_token_bytes(source, scheme, id as u32, token)?)
            }
            (None, None) => Entry::Hole,
        });
    }
    let mut added_seen = vec![false; len];
    for t in &file.added_tokens {
        let id = t.id as usize;
        if std::mem::replace(&mut added_seen[id], true) {
            return Err(VocabError::new(VocabErrorKind::DuplicateId {
                source: source.to_owned(),
                id: id as u32,
            }));
        }
        if t.special {
            continue;
        }
        if t.lstrip || t.rstrip {
            return Err(VocabError::unsupported(
                source,
                format!(
                    "added token {:?} (id {id}) absorbs the whitespace around it (lstrip/rstrip), \
                     so its bytes are not fixed",
                    t.content
                ),
            ));
        }
        match model[id] {
            // Overlaying a model token: the two must agree, else which bytes the id stands for
            // depends on how it was produced.
            Some(m) if m != t.content => {
                return Err(VocabError::invalid_token(
                    source,
                    id as u32,
                    &t.content,
                    format!("the added token differs from the model's token {m:?} with that id"),
                ))
            }
            Some(_) => {}
            // Added tokens are matched in the raw text (or in the normalized text, where
            // SentencePiece has written spaces as ▁), so their content is their text.
            None => {
                let normalized = t.normalized.unwrap_or(!t.special);
                entries[id] = Entry::Text(if normalized && scheme == ByteScheme::SentencePiece {
                    bytemap::sentencepiece_bytes(&t.content)
                } else {
                    t.content.as_bytes().to_vec()
                });
            }
        }
    }

    let eos = find_eos(source, &entries, config)?;
    let pending = patches(source, &file, scheme).map(|(normalizer, pre_tokenizer)| Pending {
        json: json.to_vec(),
        normalizer,
        pre_tokenizer,
    });
    let byte_tokens = (scheme == ByteScheme::SentencePiece).then(|| {
        let mut table = Box::new([None; 256]);
        for (token, id) in vocab {
            if let (Some(b), Entry::Text(_)) =
                (bytemap::byte_fallback(token), &entries[*id as usize])
            {
                table[b as usize].get_or_insert(TokenId::from(*id as u32));
            }
        }
        table
    });
    Ok(Loaded {
        entries,
        eos,
        scheme,
        encoder: HfEncoder {
            source: source.to_owned(),
            pending: Mutex::new(Some(pending)),
            built: OnceLock::new(),
            byte_tokens,
        },
    })
}

/// EOS ids: the special tokens named in [`EOS_NAMES`], plus the `eos_token` of
/// `tokenizer_config.json`, which must be a special token. Sorted, without duplicates.
fn find_eos(
    source: &str,
    entries: &[Entry],
    config: Option<&[u8]>,
) -> Result<Vec<TokenId>, VocabError> {
    let mut by_name: HashMap<&str, Vec<TokenId>> = HashMap::new();
    for (id, e) in entries.iter().enumerate() {
        if let Entry::Special(name) = e {
            by_name
                .entry(name.as_str())
                .or_default()
                .push(TokenId::from_usize(id));
        }
    }
    let mut eos: Vec<TokenId> = EOS_NAMES
        .iter()
        .filter_map(|n| by_name.get(n))
        .flatten()
        .copied()
        .collect();
    if let Some(config) = config {
        if let Some(name) = config_eos(source, config)? {
            match by_name.get(name.as_str()) {
                Some(ids) => eos.extend(ids),
                None => {
                    return Err(VocabError::new(VocabErrorKind::EosNotFound {
                        source: source.to_owned(),
                        token: name,
                    }))
                }
            }
        }
    }
    eos.sort_unstable();
    eos.dedup();
    Ok(eos)
}

fn tokenizers_error(source: &str, e: impl std::fmt::Display) -> VocabError {
    VocabError::new(VocabErrorKind::Tokenizers {
        source: source.to_owned(),
        message: e.to_string(),
    })
}

/// The patched normalizer and pre-tokenizer (see the module docs of `vocab`).
#[allow(clippy::type_complexity)] // a pair, named by the signature
fn patches(
    source: &str,
    file: &TokenizerFile,
    scheme: ByteScheme,
) -> Result<
    (
        Option<tokenizers::NormalizerWrapper>,
        Option<tokenizers::PreTokenizerWrapper>,
    ),
    VocabError,
> {
    let normalizer = match &file.normalizer {
        Some(n) => {
            patch_normalizer(n, scheme).map_err(|r| VocabError::encoder_unsupported(source, r))?
        }
        None => None,
    };
    let pre_tokenizer = match &file.pre_tokenizer {
        Some(p) => {
            let mut p = p.clone();
            patch_pre_tokenizer(&mut p, scheme)
                .map_err(|r| VocabError::encoder_unsupported(source, r))?;
            Some(p)
        }
        None => None,
    };
    let normalizer = normalizer
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| tokenizers_error(source, e))?;
    let pre_tokenizer = pre_tokenizer
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| tokenizers_error(source, e))?;
    Ok((normalizer, pre_tokenizer))
}

/// Runs a call into the `tokenizers` library, turning a panic (it has `expect`s on states an
/// odd file might reach) into a typed error: tokenizer files are untrusted input.
fn no_panic<T>(source: &str, f: impl FnOnce() -> Result<T, VocabError>) -> Result<T, VocabError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(tokenizers_error(source, format!("it panicked: {message}")))
    })
}

fn build(source: &str, pending: Pending) -> Result<tokenizers::Tokenizer, VocabError> {
    let mut tokenizer = tokenizers::Tokenizer::from_bytes(&pending.json)
        .map_err(|e| tokenizers_error(source, e))?;
    tokenizer
        .with_normalizer(pending.normalizer)
        .map_err(|e| tokenizers_error(source, e))?;
    tokenizer.with_pre_tokenizer(pending.pre_tokenizer);
    tokenizer
        .with_truncation(None)
        .map_err(|e| tokenizers_error(source, e))?;
    tokenizer.with_padding(None);
    tokenizer.set_encode_special_tokens(true);
    Ok(tokenizer)
}

impl HfEncoder {
    /// The encoder, built by the first caller; later callers (on any thread) share it.
    pub(crate) fn tokenizer(&self) -> Result<&tokenizers::Tokenizer, VocabError> {
        self.built
            .get_or_init(|| {
                // A poisoned lock means a build panicked; the pending data is still intact.
                let pending = self
                    .pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                match pending {
                    Some(Ok(p)) => no_panic(&self.source, || build(&self.source, p)),
                    Some(Err(refused)) => Err(refused),
                    None => Err(tokenizers_error(
                        &self.source,
                        "the encoder build was interrupted",
                    )),
                }
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// See [`encode`].
    pub(crate) fn encode(&self, text: &str) -> Result<Vec<TokenId>, VocabError> {
        encode(
            &self.source,
            self.tokenizer()?,
            self.byte_tokens.as_deref(),
            text,
        )
    }
}

/// The ids `tokenizer` gives `text`, with a literal `▁` spelled by byte-fallback tokens under
/// SentencePiece (the tokenizer would read it as a space).
fn encode(
    source: &str,
    tokenizer: &tokenizers::Tokenizer,
    byte_tokens: Option<&[Option<TokenId>; 256]>,
    text: &str,
) -> Result<Vec<TokenId>, VocabError> {
    let mut out = Vec::new();
    let encode_part = |part: &str, out: &mut Vec<TokenId>| -> Result<(), VocabError> {
        if part.is_empty() {
            return Ok(());
        }
        let enc = no_panic(source, || {
            tokenizer
                .encode(part, false)
                .map_err(|e| tokenizers_error(source, e))
        })?;
        out.extend(enc.get_ids().iter().map(|&id| TokenId::from(id)));
        Ok(())
    };
    let Some(byte_tokens) = byte_tokens else {
        encode_part(text, &mut out)?;
        return Ok(out);
    };
    let mut rest = text;
    let mut offset = 0;
    while let Some(i) = rest.find(SP_SPACE) {
        encode_part(&rest[..i], &mut out)?;
        let mut buf = [0; 4];
        for (k, &b) in SP_SPACE.encode_utf8(&mut buf).as_bytes().iter().enumerate() {
            let id = byte_tokens[b as usize].ok_or_else(|| {
                VocabError::encode(
                    source,
                    offset + i + k,
                    format!("no byte-fallback token for byte {b:#04x}"),
                )
            })?;
            out.push(id);
        }
        let skip = i + SP_SPACE.len_utf8();
        rest = &rest[skip..];
        offset += skip;
    }
    encode_part(rest, &mut out)?;
    Ok(out)
}
