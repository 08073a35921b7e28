//! Vocabularies from the small tokenizer files in `tests/data/` and from byte lists.
//!
//! `data/bytelevel/tokenizer.json` is a byte-level BPE: ids 0..=255 are the single bytes (id =
//! byte value), 256.. a few merges (` t`, `he`, ` the`, `in`, two spaces, two newlines, the two
//! steps of `日`), then added tokens `<|endoftext|>` 264, `<|im_end|>` 265, `<|im_start|>` 266
//! (special), `<think>` 267 (text), no tokens 268 and 269, `<|eot_id|>` 270 (special). Its
//! `tokenizer_config.json` names `<|im_end|>` as eos_token.
//!
//! `data/sentencepiece/tokenizer.json` is a Llama-2-style BPE: `<unk>` `<s>` `</s>` 0..=2,
//! byte-fallback `<0x00>`..`<0xFF>` 3..=258, pieces `▁` 259 … `日本` 277, `<mask>` 278 (a model
//! token that is also a non-special added token), `<start_of_turn>` 279 and `<end_of_turn>` 280
//! (special), and `\t\t` 281 (a non-special added token outside the model).

use std::path::{Path, PathBuf};

use munch_vocab::TokenId;
use munch_vocab::{ByteScheme, VocabErrorKind, Vocabulary};
use serde_json::{json, Value};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

fn id(i: u32) -> TokenId {
    TokenId::from(i)
}

fn ids(v: &[TokenId]) -> Vec<u32> {
    v.iter().map(|t| t.as_u32()).collect()
}

fn bytelevel() -> Vocabulary {
    Vocabulary::from_tokenizer_json(&data("bytelevel/tokenizer.json")).unwrap()
}

fn sentencepiece() -> Vocabulary {
    Vocabulary::from_tokenizer_json(&data("sentencepiece/tokenizer.json")).unwrap()
}

fn json_of(rel: &str) -> Value {
    serde_json::from_slice(&std::fs::read(data(rel)).unwrap()).unwrap()
}

fn load_value(v: &Value) -> Result<Vocabulary, munch_vocab::VocabError> {
    Vocabulary::from_tokenizer_json_bytes(&serde_json::to_vec(v).unwrap(), "edited")
}

/// The concatenated bytes of `tokens`.
fn spell(vocab: &Vocabulary, tokens: &[TokenId]) -> Vec<u8> {
    let mut out = Vec::new();
    for &t in tokens {
        out.extend_from_slice(vocab.token_bytes(t).expect("encode gives text tokens"));
    }
    out
}

const TEXTS: &[&str] = &[
    "",
    "the",
    " the",
    "  the  ",
    "\tthe\n\nthe\r\n",
    "日本語 テキスト",
    "e\u{301} a\u{308}",
    "<|im_end|> <|endoftext|><think></think>",
    "\u{2581} \u{2581}\u{2581}x",
    "<0x41>",
    "emoji 👩\u{200d}💻 🇫🇷",
    "\u{0}\u{7f}\u{ad}\u{a0}",
    "func main() {\n\tfmt.Println(\"hi\")\n}\n",
];

#[test]
fn bytelevel_token_bytes_are_exact() {
    let v = bytelevel();
    assert_eq!(v.name(), "bytelevel");
    assert_eq!(v.scheme(), ByteScheme::ByteLevel);
    assert_eq!(v.len(), 271);
    for b in 0..=255u32 {
        assert_eq!(v.token_bytes(id(b)), Some(&[b as u8][..]), "byte token {b}");
    }
    assert_eq!(v.token_bytes(id(256)), Some(&b" t"[..]));
    assert_eq!(v.token_bytes(id(257)), Some(&b"he"[..]));
    assert_eq!(v.token_bytes(id(258)), Some(&b" the"[..]));
    assert_eq!(v.token_bytes(id(260)), Some(&b"  "[..]));
    assert_eq!(v.token_bytes(id(261)), Some(&b"\n\n"[..]));
    assert_eq!(v.token_bytes(id(262)), Some(&"日".as_bytes()[..2]));
    assert_eq!(v.token_bytes(id(263)), Some("日".as_bytes()));
    assert_eq!(v.token_bytes(id(267)), Some(&b"<think>"[..]));
    assert!(!v.is_special(id(267)));
    assert_eq!(v.max_token_bytes(), b"<think>".len());
}

#[test]
fn bytelevel_specials_holes_and_eos() {
    let v = bytelevel();
    for (i, name) in [
        (264, "<|endoftext|>"),
        (265, "<|im_end|>"),
        (266, "<|im_start|>"),
        (270, "<|eot_id|>"),
    ] {
        assert!(v.is_special(id(i)));
        assert_eq!(v.token_bytes(id(i)), None);
        assert_eq!(v.special_name(id(i)), Some(name));
    }
    for hole in [268, 269, 271, 1 << 30] {
        assert!(!v.is_special(id(hole)));
        assert_eq!(v.token_bytes(id(hole)), None);
        assert_eq!(v.special_name(id(hole)), None);
    }
    assert_eq!(ids(v.eos()), [264, 265, 270]);
    assert_eq!(v.trie().token_len(), 265, "256 bytes, 8 merges, <think>");
    assert!(v
        .text_tokens()
        .all(|(t, b)| !b.is_empty() && !v.is_special(t)));
    // The text tokens in id order, and where each is in the trie's order.
    let text: Vec<u32> = v.text_tokens().map(|(t, _)| t.as_u32()).collect();
    let in_trie = v.trie().token_ids();
    assert_eq!(v.trie_order().len(), text.len());
    for (&t, &place) in text.iter().zip(v.trie_order()) {
        assert_eq!(in_trie[place as usize].as_u32(), t);
    }
}

#[test]
fn config_eos_token_is_added_and_checked() {
    let json = std::fs::read(data("bytelevel/tokenizer.json")).unwrap();
    let with = |config: &str| {
        Vocabulary::from_tokenizer_json_bytes_with_config(&json, Some(config.as_bytes()), "bl")
    };
    // <|im_start|> is not an EOS name, but the config makes it one.
    let v = with(r#"{"eos_token": "<|im_start|>"}"#).unwrap();
    assert_eq!(ids(v.eos()), [264, 265, 266, 270]);
    // The older object form.
    let v = with(r#"{"eos_token": {"content": "<|im_start|>", "special": true}}"#).unwrap();
    assert_eq!(ids(v.eos()), [264, 265, 266, 270]);
    let v = with(r#"{"eos_token": null}"#).unwrap();
    assert_eq!(ids(v.eos()), [264, 265, 270]);
    // A text token cannot be EOS.
    let err = with(r#"{"eos_token": "<think>"}"#).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::EosNotFound { token, .. } if token == "<think>"),
        "{err}"
    );
    assert!(err.to_string().contains("\"<think>\""), "{err}");
    let err = with("{not json").unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::InvalidJson { line: 1, .. }),
        "{err}"
    );
}

#[test]
fn bytelevel_encoding_spells_the_text() {
    let v = bytelevel();
    for text in TEXTS {
        let tokens = v.encode(text).unwrap();
        assert_eq!(spell(&v, &tokens), text.as_bytes(), "{text:?}");
    }
    assert_eq!(ids(&v.encode(" the").unwrap()), [258]);
    assert_eq!(ids(&v.encode("<think>").unwrap()), [267]);
    // No prefix space is added, and NFC does not compose e + U+0301.
    assert_eq!(ids(&v.encode("the").unwrap()), [b't' as u32, 257]);
    assert_eq!(
        spell(&v, &v.encode("e\u{301}").unwrap()),
        "e\u{301}".as_bytes()
    );
    // Special token strings are text.
    let t = v.encode("<|im_end|>").unwrap();
    assert!(t.iter().all(|&t| !v.is_special(t)));
}

#[test]
fn sentencepiece_token_bytes_are_exact() {
    let v = sentencepiece();
    assert_eq!(v.name(), "sentencepiece");
    assert_eq!(v.scheme(), ByteScheme::SentencePiece);
    assert_eq!(v.len(), 282);
    for b in 0..=255u32 {
        assert_eq!(
            v.token_bytes(id(3 + b)),
            Some(&[b as u8][..]),
            "<0x{b:02X}>"
        );
    }
    assert_eq!(v.token_bytes(id(259)), Some(&b" "[..]));
    assert_eq!(v.token_bytes(id(275)), Some(&b" the"[..]));
    assert_eq!(v.token_bytes(id(276)), Some(&b"  "[..]));
    assert_eq!(v.token_bytes(id(277)), Some("日本".as_bytes()));
    assert_eq!(v.token_bytes(id(278)), Some(&b"<mask>"[..]));
    assert_eq!(v.token_bytes(id(281)), Some(&b"\t\t"[..]));
    for (i, name) in [
        (0, "<unk>"),
        (1, "<s>"),
        (2, "</s>"),
        (279, "<start_of_turn>"),
        (280, "<end_of_turn>"),
    ] {
        assert!(v.is_special(id(i)), "{name}");
        assert_eq!(v.special_name(id(i)), Some(name));
        assert_eq!(v.token_bytes(id(i)), None);
    }
    assert_eq!(ids(v.eos()), [2, 280]);
}

#[test]
fn sentencepiece_encoding_spells_the_text() {
    let v = sentencepiece();
    for text in TEXTS {
        let tokens = v.encode(text).unwrap();
        assert_eq!(spell(&v, &tokens), text.as_bytes(), "{text:?}");
    }
    // No dummy prefix: "the" is not " the".
    let t = v.encode("the").unwrap();
    assert_eq!(ids(&t), [260, 274]);
    assert_eq!(ids(&v.encode(" the").unwrap()), [275]);
    assert_eq!(ids(&v.encode("  ").unwrap()), [276]);
    // "x" has no piece: byte fallback.
    assert_eq!(ids(&v.encode("x").unwrap()), [3 + b'x' as u32]);
    // A literal ▁ is three byte-fallback tokens, not a space.
    assert_eq!(
        ids(&v.encode("\u{2581}").unwrap()),
        [3 + 0xe2, 3 + 0x96, 3 + 0x81]
    );
    assert_eq!(ids(&v.encode("\t\t").unwrap()), [281]);
    assert_eq!(ids(&v.encode("").unwrap()), Vec::<u32>::new());
}

#[test]
fn tries_of_loaded_vocabularies_hold_every_text_token() {
    for v in [bytelevel(), sentencepiece()] {
        let trie = v.trie();
        for (t, b) in v.text_tokens() {
            let n = trie.find(b).expect("token in trie");
            assert_eq!(trie.depth(n), b.len());
            assert!(trie.tokens_at(n).contains(&t));
        }
        let total: usize = (0..trie.node_len())
            .map(|n| trie.tokens_at(munch_vocab::TrieNode::from(n as u32)).len())
            .sum();
        assert_eq!(total, v.text_tokens().count());
    }
}

#[test]
fn from_token_bytes_basics() {
    let v = Vocabulary::from_token_bytes(
        vec![
            Some(b"a".to_vec()),
            Some(b"ab".to_vec()),
            None,
            Some(b"b".to_vec()),
            Some(b"ab".to_vec()),
            Some(vec![0xff, 0x00]),
        ],
        vec![id(2)],
    )
    .unwrap();
    assert_eq!(v.name(), "synthetic");
    assert_eq!(v.scheme(), ByteScheme::Synthetic);
    assert_eq!(v.len(), 6);
    assert_eq!(v.token_bytes(id(5)), Some(&[0xff, 0x00][..]));
    assert!(v.is_special(id(2)));
    assert_eq!(v.special_name(id(2)), None);
    assert_eq!(ids(v.eos()), [2]);
    assert_eq!(v.max_token_bytes(), 2);

    // Trie: root → a → ab (ids 1 and 4), b, 0xff → 0xff 0x00.
    let t = v.trie();
    let root = t.root();
    let kids: Vec<u8> = t.children(root).map(|(b, _)| b).collect();
    assert_eq!(kids, [b'a', b'b', 0xff]);
    let a = t.child(root, b'a').unwrap();
    assert_eq!(ids(t.tokens_at(a)), [0]);
    let ab = t.child(a, b'b').unwrap();
    assert_eq!(ids(t.tokens_at(ab)), [1, 4]);
    assert_eq!(t.subtree_end(a), t.child(root, b'b').unwrap());
    assert_eq!(t.subtree_end(root).as_usize(), t.node_len());
    assert_eq!(t.node_len(), 6);
    let ff = t.child(root, 0xff).unwrap();
    assert!(t.tokens_at(ff).is_empty());
    assert_eq!(t.depth(ff), 1);
    assert_eq!(t.byte(ff), 0xff);

    // Greedy longest match, smallest id on ties.
    assert_eq!(ids(&v.encode("abab").unwrap()), [1, 1]);
    assert_eq!(ids(&v.encode("aba").unwrap()), [1, 0]);
    let err = v.encode("abc").unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::Encode { offset: 2, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("offset 2"), "{err}");
}

#[test]
fn from_token_bytes_rejects_bad_input() {
    let err =
        Vocabulary::from_token_bytes(vec![Some(b"a".to_vec()), Some(vec![])], vec![]).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::EmptyToken { id: 1, .. }),
        "{err}"
    );
    let err = Vocabulary::from_token_bytes(vec![Some(b"a".to_vec())], vec![id(0)]).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::InvalidEos { id: 0, .. }),
        "{err}"
    );
    let err = Vocabulary::from_token_bytes(vec![None], vec![id(7)]).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::InvalidEos { id: 7, .. }),
        "{err}"
    );
    let long = vec![b'x'; Vocabulary::MAX_TOKEN_BYTES + 1];
    let err = Vocabulary::from_token_bytes(vec![Some(long)], vec![]).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::TokenTooLong { id: 0, .. }),
        "{err}"
    );
    let err =
        Vocabulary::from_token_bytes(vec![None; Vocabulary::MAX_LEN + 1], vec![]).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::TooLarge { what: "ids", .. }),
        "{err}"
    );
}

#[test]
fn fingerprint_tracks_bytes_and_eos() {
    let make = |last: &[u8], eos: Vec<TokenId>| {
        Vocabulary::from_token_bytes(vec![Some(b"x".to_vec()), None, Some(last.to_vec())], eos)
            .unwrap()
            .fingerprint()
    };
    let base = make(b"yz", vec![id(1)]);
    assert_eq!(base, make(b"yz", vec![id(1)]));
    assert_ne!(base, make(b"yy", vec![id(1)]));
    assert_ne!(base, make(b"yz", vec![]));
    // The same bytes split differently between ids differ.
    let a = Vocabulary::from_token_bytes(vec![Some(b"ab".to_vec()), Some(b"c".to_vec())], vec![])
        .unwrap();
    let b = Vocabulary::from_token_bytes(vec![Some(b"a".to_vec()), Some(b"bc".to_vec())], vec![])
        .unwrap();
    assert_ne!(a.fingerprint(), b.fingerprint());
    // Loading the same file twice gives the same fingerprint; another file another one.
    assert_eq!(bytelevel().fingerprint(), bytelevel().fingerprint());
    assert_ne!(bytelevel().fingerprint(), sentencepiece().fingerprint());
}

#[test]
fn invalid_json_is_a_typed_error_with_a_location() {
    let err =
        Vocabulary::from_tokenizer_json_bytes(b"{\n  \"model\": [1,\n", "broken").unwrap_err();
    match err.kind() {
        VocabErrorKind::InvalidJson { source, line, .. } => {
            assert_eq!(source, "broken");
            assert!(*line >= 2, "line {line}");
        }
        other => panic!("unexpected {other:?}"),
    }
    let err = Vocabulary::from_tokenizer_json(&data("no-such-dir/tokenizer.json")).unwrap_err();
    assert!(matches!(err.kind(), VocabErrorKind::Io { .. }), "{err}");
}

/// Edits a copy of a test tokenizer and expects `Unsupported` with `needle` in the reason.
fn expect_unsupported(rel: &str, edit: impl FnOnce(&mut Value), needle: &str) {
    let mut v = json_of(rel);
    edit(&mut v);
    let err = load_value(&v).unwrap_err();
    match err.kind() {
        VocabErrorKind::Unsupported { source, reason } => {
            assert_eq!(source, "edited");
            assert!(reason.contains(needle), "{reason:?} lacks {needle:?}");
        }
        other => panic!("expected Unsupported ({needle}), got {other:?}"),
    }
    assert!(err.to_string().contains("cannot be mapped to exact bytes"));
}

const BL: &str = "bytelevel/tokenizer.json";
const SP: &str = "sentencepiece/tokenizer.json";

#[test]
fn unmappable_tokenizers_are_refused() {
    expect_unsupported(BL, |v| v["model"]["type"] = json!("Unigram"), "Unigram");
    expect_unsupported(
        BL,
        |v| v["decoder"] = json!({"type": "WordPiece", "prefix": "##", "cleanup": true}),
        "ByteLevel decoder",
    );
    expect_unsupported(BL, |v| v["decoder"] = Value::Null, "ByteLevel decoder");
    expect_unsupported(SP, |v| v["decoder"] = Value::Null, "neither");
    expect_unsupported(
        BL,
        |v| v["model"]["continuing_subword_prefix"] = json!("##"),
        "continuing_subword_prefix",
    );
    expect_unsupported(
        BL,
        |v| v["added_tokens"][3]["lstrip"] = json!(true),
        "lstrip",
    );
    expect_unsupported(
        SP,
        |v| v["model"]["byte_fallback"] = json!(false),
        "byte_fallback",
    );
}

/// Edits a copy of a test tokenizer whose encoder then rewrites text: the vocabulary still loads
/// with the same tokens (masks need only their bytes), and encoding is `EncoderUnsupported`
/// with `needle` in the reason.
fn expect_encoder_unsupported(rel: &str, edit: impl FnOnce(&mut Value), needle: &str) {
    let plain = load_value(&json_of(rel)).unwrap();
    let mut v = json_of(rel);
    edit(&mut v);
    let vocab = load_value(&v).unwrap_or_else(|e| panic!("{needle}: {e}"));
    assert_eq!(vocab.fingerprint(), plain.fingerprint(), "{needle}");
    let err = vocab.encode("ab c").unwrap_err();
    match err.kind() {
        VocabErrorKind::EncoderUnsupported { source, reason } => {
            assert_eq!(source, "edited");
            assert!(reason.contains(needle), "{reason:?} lacks {needle:?}");
        }
        other => panic!("expected EncoderUnsupported ({needle}), got {other:?}"),
    }
    assert!(err.to_string().contains("masks are unaffected"), "{err}");
    // The refusal is kept, not only reported by the first call.
    assert_eq!(vocab.encode("x").unwrap_err(), err);
    assert_eq!(vocab.prepare_encoder().unwrap_err(), err);
}

#[test]
fn tokenizers_whose_encoder_rewrites_text_load_but_do_not_encode() {
    expect_encoder_unsupported(
        BL,
        |v| v["normalizer"] = json!({"type": "Lowercase"}),
        "Lowercase",
    );
    expect_encoder_unsupported(
        BL,
        |v| v["pre_tokenizer"]["pretokenizers"][0] = json!({"type": "Whitespace"}),
        "Whitespace",
    );
    expect_encoder_unsupported(
        BL,
        |v| v["pre_tokenizer"]["pretokenizers"][0]["behavior"] = json!("Removed"),
        "Split",
    );
    expect_encoder_unsupported(
        SP,
        |v| v["normalizer"] = json!({"type": "Precompiled", "precompiled_charsmap": null}),
        "Precompiled",
    );
}

/// GPT-4o's pre-tokenizer: an inverted `Split` that removes what its pattern does not match.
/// Its pattern matches every character, so it encodes as the `Isolated` split does; a pattern
/// that leaves characters out gets an `Encode` error at the first one dropped.
#[test]
fn an_inverted_removing_split_encodes_when_its_pattern_covers_the_text() {
    let plain = load_value(&json_of(BL)).unwrap();
    let mut v = json_of(BL);
    let split = &mut v["pre_tokenizer"]["pretokenizers"][0];
    split["behavior"] = json!("Removed");
    split["invert"] = json!(true);
    let inverted = load_value(&v).unwrap();
    for text in ["hello world's 123 !!\n\n  x", "ab c", " \t\r\n"] {
        assert_eq!(
            inverted.encode(text).unwrap(),
            plain.encode(text).unwrap(),
            "{text:?}"
        );
    }
    v["pre_tokenizer"]["pretokenizers"][0]["pattern"] = json!({"Regex": "\\p{L}+"});
    let letters = load_value(&v).unwrap();
    let err = letters.encode("ab c").unwrap_err();
    match err.kind() {
        VocabErrorKind::Encode { offset, .. } => assert_eq!(*offset, 2, "{err}"),
        other => panic!("expected Encode, got {other:?}"),
    }
}

#[test]
fn unmappable_tokens_are_refused_with_their_id() {
    // A raw space is not in the byte-level alphabet.
    let mut v = json_of(BL);
    v["model"]["vocab"]["a b"] = json!(300);
    let err = load_value(&v).unwrap_err();
    match err.kind() {
        VocabErrorKind::InvalidToken { id, token, .. } => {
            assert_eq!((*id, token.as_str()), (300, "a b"));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().contains("U+0020"), "{err}");

    let mut v = json_of(BL);
    v["model"]["vocab"]["zz"] = json!(5);
    let err = load_value(&v).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::DuplicateId { id: 5, .. }),
        "{err}"
    );

    let mut v = json_of(BL);
    v["added_tokens"][4]["id"] = json!(264);
    let err = load_value(&v).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::DuplicateId { id: 264, .. }),
        "{err}"
    );

    let mut v = json_of(BL);
    v["added_tokens"][4]["id"] = json!(u32::MAX);
    let err = load_value(&v).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::TooLarge { what: "ids", .. }),
        "{err}"
    );

    let mut v = json_of(SP);
    v["model"]["vocab"][""] = json!(400);
    let err = load_value(&v).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::EmptyToken { id: 400, .. }),
        "{err}"
    );

    // A non-special added token over a model token must spell the same.
    let mut v = json_of(SP);
    v["added_tokens"][3]["content"] = json!("<MASK>");
    let err = load_value(&v).unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::InvalidToken { id: 278, .. }),
        "{err}"
    );
}

/// A tiny deterministic generator for random texts (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Random texts over characters that stress both schemes: spaces, ▁, combining marks, CJK,
/// emoji, controls, special-token fragments.
pub fn random_texts(seed: u64, count: usize) -> Vec<String> {
    #[rustfmt::skip]
    let pool: Vec<&str> = vec![
        " ", "  ", "\t", "\n", "\r\n", "\u{2581}", "the", "he", "t", "in", "e", "\u{301}", "日",
        "本", "語", "😀", "👩\u{200d}💻", "\u{0}", "\u{7f}", "\u{a0}", "<", "|", ">", "<|im_end|>",
        "<think>", "<0x41>", "{", "\"", "x", "Ġ", "é", "\u{feff}",
    ];
    let mut rng = Rng(seed | 1);
    (0..count)
        .map(|_| {
            let n = (rng.next() % 12) as usize;
            (0..n)
                .map(|_| pool[(rng.next() % pool.len() as u64) as usize])
                .collect()
        })
        .collect()
}

#[test]
fn random_texts_spell_exactly() {
    let vocabs = [bytelevel(), sentencepiece()];
    for text in random_texts(0x5eed, 400) {
        for v in &vocabs {
            let tokens = v
                .encode(&text)
                .unwrap_or_else(|e| panic!("{}: {text:?}: {e}", v.name()));
            assert_eq!(spell(v, &tokens), text.as_bytes(), "{}: {text:?}", v.name());
        }
    }
}

#[test]
fn tokenizers_errors_appear_when_the_encoder_is_built() {
    // A merge of tokens the vocabulary lacks: munch's reading has no use for merges, the
    // `tokenizers` library refuses them.
    let mut v = json_of(BL);
    v["model"]["merges"]
        .as_array_mut()
        .unwrap()
        .push(json!(["zz", "yy"]));
    let vocab = load_value(&v).unwrap();
    assert_eq!(vocab.token_bytes(id(258)), Some(&b" the"[..]));
    let err = vocab.prepare_encoder().unwrap_err();
    assert!(
        matches!(err.kind(), VocabErrorKind::Tokenizers { source, .. } if source == "edited"),
        "{err}"
    );
    // Every later call reports the same error.
    assert_eq!(vocab.encode("the").unwrap_err(), err);
    assert!(
        err.to_string()
            .contains("tokenizers library failed on edited"),
        "{err}"
    );
}

#[test]
fn a_shared_vocabulary_encodes_from_many_threads() {
    let vocab = std::sync::Arc::new(sentencepiece());
    let texts = random_texts(0xc0ffee, 64);
    let expected: Vec<Vec<TokenId>> = {
        let fresh = sentencepiece();
        texts.iter().map(|t| fresh.encode(t).unwrap()).collect()
    };
    std::thread::scope(|s| {
        for k in 0..4 {
            let vocab = &vocab;
            let texts = &texts;
            let expected = &expected;
            s.spawn(move || {
                for (i, t) in texts.iter().enumerate().skip(k) {
                    assert_eq!(&vocab.encode(t).unwrap(), &expected[i], "{t:?}");
                }
            });
        }
    });
    // Clones share the built encoder and agree.
    let clone = (*vocab).clone();
    assert_eq!(clone.encode(" the").unwrap(), vocab.encode(" the").unwrap());
    assert_eq!(clone.fingerprint(), vocab.fingerprint());
}

#[test]
fn damaged_files_give_errors_not_panics() {
    for rel in [BL, SP] {
        let bytes = std::fs::read(data(rel)).unwrap();
        // Every truncation that cuts the JSON is an error.
        for cut in (0..bytes.len()).step_by(37) {
            let r = Vocabulary::from_tokenizer_json_bytes(&bytes[..cut], "cut");
            assert!(r.is_err(), "{rel} cut at {cut} loaded");
        }
        // Seeded byte changes: loading and encoding may fail, never panic.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..300 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut damaged = bytes.clone();
            let at = (state % damaged.len() as u64) as usize;
            damaged[at] = b"0123456789{}[]\":, \\\x00\xffabz"[(state >> 32) as usize % 24];
            if let Ok(v) = Vocabulary::from_tokenizer_json_bytes(&damaged, "damaged") {
                for text in ["", " the ", "日本\u{2581}x", "<|im_end|>"] {
                    if let Ok(tokens) = v.encode(text) {
                        assert_eq!(spell(&v, &tokens), text.as_bytes());
                    }
                }
            }
        }
    }
}

mod trie_props {
    use super::*;
    use proptest::prelude::*;

    /// Token bytes over `a`, `b`, `c` and the two bytes of `é` (C3 A9), so tokens may hold half
    /// a character.
    const BYTES: [u8; 5] = [b'a', b'b', b'c', 0xc3, 0xa9];

    fn token_bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(proptest::sample::select(&BYTES[..]), 1..6)
    }

    proptest! {
        #[test]
        fn trie_and_greedy_encoding(
            tokens in proptest::collection::vec(token_bytes(), 0..40),
            text in proptest::collection::vec(proptest::sample::select(&["a", "b", "c", "é"][..]), 0..30),
        ) {
            // Single bytes first so that every text has a spelling.
            let mut all: Vec<Option<Vec<u8>>> = BYTES.iter().map(|&b| Some(vec![b])).collect();
            all.extend(tokens.into_iter().map(Some));
            let v = Vocabulary::from_token_bytes(all.clone(), vec![]).unwrap();
            let t = v.trie();
            // Preorder: each node's subtree is a contiguous range of deeper nodes, and its
            // children partition that range in ascending byte order.
            for n in 0..t.node_len() {
                let node = munch_vocab::TrieNode::from(n as u32);
                let end = t.subtree_end(node).as_usize();
                prop_assert!(end > n && end <= t.node_len());
                let mut next = n + 1;
                let mut last = None;
                for (b, c) in t.children(node) {
                    prop_assert_eq!(c.as_usize(), next);
                    prop_assert_eq!(t.depth(c), t.depth(node) + 1);
                    prop_assert!(last.is_none_or(|l| l < b));
                    last = Some(b);
                    next = t.subtree_end(c).as_usize();
                }
                prop_assert_eq!(next, end);
            }
            for (i, tok) in all.iter().enumerate() {
                let tok = tok.as_ref().unwrap();
                let n = t.find(tok).unwrap();
                prop_assert!(t.tokens_at(n).contains(&id(i as u32)));
            }
            let text: String = text.concat();
            let enc = v.encode(&text).unwrap();
            prop_assert_eq!(spell(&v, &enc), text.as_bytes());
            // Greedy, checked by brute force: each token is the longest that matches where it
            // starts, the smallest id among equals.
            let mut at = 0;
            for tok in enc {
                let rest = &text.as_bytes()[at..];
                let best = all
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (b.as_ref().unwrap(), i))
                    .filter(|(b, _)| rest.starts_with(b))
                    .max_by_key(|&(b, i)| (b.len(), std::cmp::Reverse(i)))
                    .map(|(_, i)| id(i as u32));
                prop_assert_eq!(Some(tok), best);
                at += v.token_bytes(tok).unwrap().len();
            }
        }
    }
}
