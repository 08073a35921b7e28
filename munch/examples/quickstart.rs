use std::sync::Arc;

use munch::{Compiled, Config, Grammar, TokenId, Vocabulary};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A vocabulary: every byte, a few words and an end-of-sequence token. Real ones come from a
    // Hugging Face `tokenizer.json`: `Vocabulary::from_tokenizer_json(path)`.
    let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    tokens.extend(["{\"", "\": ", "true", "null"].map(|t| Some(t.as_bytes().to_vec())));
    tokens.push(None);
    let eos = tokens.len() as u32 - 1;
    let eos_ids = vec![TokenId::from(eos)];
    let vocab = Arc::new(Vocabulary::from_token_bytes(tokens, eos_ids)?);

    // Once per grammar and tokenizer; shared by every sequence (Send + Sync, cheap to clone).
    let compiled = Compiled::new(&Grammar::builtin("json")?, vocab, &Config::default())?;
    // Once per sequence.
    let mut matcher = compiled.matcher();
    // One row of the engine's [batch, ceil(V/32)] int32 bitmask: bit t % 32 of word t / 32.
    let mut bitmask = vec![0u32; compiled.bitmask_words()];
    let allowed = |bitmask: &[u32], t: u32| bitmask[t as usize / 32] >> (t % 32) & 1 == 1;

    // What the model writes, token by token: `{"` `a` `": ` `true` `}` and EOS.
    for token in [256, u32::from(b'a'), 257, 258, u32::from(b'}'), eos] {
        matcher.fill_next_token_bitmask(&mut bitmask)?;
        assert!(allowed(&bitmask, token));
        if token == 256 {
            // Before the first token: no `x`, and no end of text yet.
            assert!(!allowed(&bitmask, u32::from(b'x')) && !allowed(&bitmask, eos));
        }
        matcher.accept_token(token)?;
    }
    assert!(matcher.is_terminated());

    // Speculative decoding: undo tokens, check a draft without accepting it.
    matcher.rollback(2)?; // `}` and EOS
    let draft = [u32::from(b','), u32::from(b'x')]; // `,` fits, then `x` does not
    assert_eq!(matcher.validate_tokens(&draft), 1);
    // Jump-forward: what every continuation starts with (here nothing: `,` `}` or a space).
    assert_eq!(matcher.forced_bytes(), b"");
    Ok(())
}
