//! Teacher-forces files through the trie masker (with token classes) and writes, per step, the
//! class set of the mask (a class is in it iff its representative token is allowed) to a
//! binary file, for `EXPAND_SETS=<file> cargo bench -p munch-tokens --bench expand`.
//!
//! ```text
//! cargo run --release -p munch-masker-trie --example class_sets -- GRAMMAR TOKENIZER OUT FILE...
//! ```
//!
//! `GRAMMAR` is a SynCode grammar name (json, java, ...) or a path to a `.lark` file;
//! `TOKENIZER` a tokenizer name (llama3, gemma3, ...). A file the grammar rejects is reported
//! and skipped.
//!
//! The file holds what the bench needs to rebuild the same classes without the parser crate:
//! the tokenizer name, the lexer's terminals (HIR printed as a regex), the classes'
//! representatives (to check the rebuilt partition), then the sets. All integers are
//! little-endian:
//!
//! ```text
//! b"MUNCHCS1"
//! u32 len, tokenizer name
//! u32 vocab_len, u32 class_len, u32 terminal_len
//! per terminal: u8 flags (1: has a pattern, 2: literal, 4: ignored), i32 priority,
//!               u32 len, name, u32 len, pattern, u32 len, the HIR's `Debug` (regex-syntax
//!               prints `(?:x+)?` as `x+?`: the bench parses the pattern and checks it
//!               against this)
//! per class: u32 representative
//! u32 step_len, then per step class_len.div_ceil(64) u64 words (class c is bit c % 64 of
//!               word c / 64)
//! ```

mod common;

use std::io::Write;
use std::sync::Arc;

use munch_glr::mask::{Masker, TokenMask};
use munch_glr::parser::ParserState;
use munch_lexer::TerminalId;
use munch_masker_trie::TrieMasker;
use munch_tokens::{ClassId, ClassSet};
use munch_vocab::TokenId;

fn put_u32(out: &mut Vec<u8>, x: u32) {
    out.extend_from_slice(&x.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u32(out, b.len() as u32);
    out.extend_from_slice(b);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: class_sets GRAMMAR TOKENIZER OUT FILE...");
        std::process::exit(2);
    }
    let (parser, vocab) = common::parser_and_vocab(&args[0], &args[1]);
    let masker = TrieMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &Default::default())
        .expect("classes");
    let classes = masker.classes().expect("built with classes");
    let lexer = parser.lexer();

    let mut out = b"MUNCHCS1".to_vec();
    put_bytes(&mut out, args[1].as_bytes());
    put_u32(&mut out, vocab.len() as u32);
    put_u32(&mut out, classes.len() as u32);
    put_u32(&mut out, lexer.terminal_len() as u32);
    for t in 0..lexer.terminal_len() {
        let spec = lexer.terminal(TerminalId::from_usize(t));
        let flags = u8::from(spec.hir.is_some())
            | (u8::from(spec.is_literal) << 1)
            | (u8::from(spec.ignored) << 2);
        out.push(flags);
        out.extend_from_slice(&spec.priority.to_le_bytes());
        put_bytes(&mut out, spec.name.as_bytes());
        let pattern = spec.hir.as_ref().map(|h| h.to_string()).unwrap_or_default();
        put_bytes(&mut out, pattern.as_bytes());
        let debug = spec
            .hir
            .as_ref()
            .map(|h| format!("{h:?}"))
            .unwrap_or_default();
        put_bytes(&mut out, debug.as_bytes());
    }
    let reps: Vec<TokenId> = (0..classes.len())
        .map(|c| classes.representative(ClassId::from_usize(c)))
        .collect();
    for r in &reps {
        put_u32(&mut out, r.as_u32());
    }

    let mut sets: Vec<ClassSet> = Vec::new();
    let mut mask = TokenMask::new(vocab.len());
    let mut cache = masker.create_cache();
    for path in &args[3..] {
        let text = std::fs::read_to_string(path).expect("readable UTF-8 file");
        let tokens = vocab.encode(&text).expect("encodable");
        let mut state = ParserState::new(Arc::clone(&parser));
        let before = sets.len();
        for index in 0..=tokens.len() {
            masker.fill_mask(&mut cache, &state, &mut mask);
            let mut set = classes.empty_set();
            set.extend(
                (0..reps.len())
                    .filter(|&c| mask.contains(reps[c]))
                    .map(ClassId::from_usize),
            );
            sets.push(set);
            let Some(&t) = tokens.get(index) else { break };
            if state.commit_token(&vocab, t).is_err() {
                eprintln!("{path}: rejected by the grammar at token {index}, skipped");
                sets.truncate(before);
                break;
            }
        }
    }
    put_u32(&mut out, sets.len() as u32);
    for set in &sets {
        for w in set.words() {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    let mut file = std::fs::File::create(&args[2]).expect("output file");
    file.write_all(&out).expect("written");
    let mean = sets.iter().map(|s| s.count()).sum::<usize>() as f64 / sets.len().max(1) as f64;
    eprintln!(
        "{} lexer states, {} steps, {} classes, {:.0} classes per set on average, written to {}",
        lexer.state_len(),
        sets.len(),
        classes.len(),
        mean,
        args[2]
    );
}
