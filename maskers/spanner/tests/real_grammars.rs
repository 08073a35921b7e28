//! The spanner masker equals the trie masker at every step of real texts, on SynCode's JSON, SQL,
//! Go and Java grammars with the Llama 3 tokenizer (fetched once into the cache), and equals
//! the oracle on a sample of those steps.
//!
//! Building the tables for a code grammar takes seconds in release and far longer unoptimised,
//! so these run in release builds only: `cargo test --release -p munch-masker-spanner`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use munch_glr::mask::{Masker, Oracle, TokenMask};
use munch_glr::parser::{Parser, ParserState};
use munch_masker_spanner::{SpannerConfig, SpannerMasker};
use munch_masker_trie::TrieMasker;
use munch_testkit::files::files_under;
use munch_testkit::grammar::syncode;
use munch_vocab::Vocabulary;

fn llama3() -> Arc<Vocabulary> {
    Arc::new(Vocabulary::load("llama3").unwrap_or_else(|e| panic!("{e}")))
}

/// Teacher-forces each text up to its end or the first token the grammar refuses (real files
/// use constructs SynCode's grammars lack), comparing with the trie masker at every step and
/// with the oracle every `oracle_every` steps. Returns the steps compared.
fn compare(
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    texts: &[(String, String)],
    oracle_every: usize,
) -> usize {
    let spanner = SpannerMasker::new(
        Arc::clone(parser),
        Arc::clone(vocab),
        &SpannerConfig::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let trie = TrieMasker::without_classes(Arc::clone(parser), Arc::clone(vocab));
    let oracle = Oracle::new(Arc::clone(vocab));
    let (mut sc, mut tc, mut oc) = (
        spanner.create_cache(),
        trie.create_cache(),
        oracle.create_cache(),
    );
    let mut mask = TokenMask::new(vocab.len());
    let mut reference = TokenMask::new(vocab.len());
    let mut steps = 0;
    for (name, text) in texts {
        let tokens = vocab.encode(text).unwrap();
        let mut state = ParserState::new(Arc::clone(parser));
        let mut prefix: Vec<u8> = Vec::new();
        for (i, &t) in tokens.iter().enumerate() {
            spanner.fill_mask(&mut sc, &state, &mut mask);
            trie.fill_mask(&mut tc, &state, &mut reference);
            let mut against = vec![("trie", reference.clone())];
            if i % oracle_every == 0 {
                oracle.fill_mask(&mut oc, &state, &mut reference);
                against.push(("oracle", reference.clone()));
            }
            for (other, expected) in &against {
                if let Some(d) = mask.first_difference(expected) {
                    let tail = &prefix[prefix.len().saturating_sub(60)..];
                    panic!(
                        "{name} step {i}: token {d} {:?} after ...{:?}: spanner {} / {other} {}",
                        String::from_utf8_lossy(vocab.token_bytes(d).unwrap_or(b"<special>")),
                        String::from_utf8_lossy(tail),
                        mask.contains(d),
                        expected.contains(d),
                    );
                }
            }
            steps += 1;
            // A commit succeeds exactly when it leaves the state live: the mask's bit.
            let committed = state.commit_token(vocab, t).is_ok();
            assert_eq!(mask.contains(t), committed, "{name} step {i}: token {t}");
            if !committed {
                break;
            }
            prefix.extend_from_slice(vocab.token_bytes(t).unwrap());
        }
    }
    steps
}

fn read_all(paths: &[PathBuf]) -> Vec<(String, String)> {
    paths
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            Some((p.display().to_string(), text))
        })
        .collect()
}

/// The first `n` files of munch's own corpus of `language` (`grammars/corpus/LANGUAGE`, by
/// their extension `.LANGUAGE`), read.
fn own_corpus(language: &str, n: usize) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../grammars/corpus")
        .join(language);
    let mut paths = files_under(&dir, language, u64::MAX);
    paths.truncate(n);
    let texts = read_all(&paths);
    assert!(
        !texts.is_empty(),
        "no {language} files in {}",
        dir.display()
    );
    texts
}

/// Real files cached by the conformance corpus (`~/.cache/munch/corpus/<dir>`), if present.
fn cached(dir: &str, extension: &str, n: usize, max_bytes: u64) -> Vec<(String, String)> {
    let root = munch_vocab::cache::cache_dir().join("corpus").join(dir);
    let paths = files_under(&root, extension, max_bytes);
    let step = (paths.len() / n.max(1)).max(1);
    let picked: Vec<PathBuf> = paths.into_iter().step_by(step).take(n).collect();
    read_all(&picked)
}

const GO: &str = r#"package main

import "fmt"
import "strings"

func add(a int, b int) int {
	return a + b
}

func main() {
	total := 0
	names := make([]string, 0, 4)
	for i := 0; i < 10; i++ {
		if i%2 == 0 && i > 3 {
			total = add(total, i)
		} else {
			total -= 1
		}
		names = append(names, fmt.Sprint(i))
	}
	m := make(map[string]int)
	m["b"]++
	fmt.Println(strings.Join(names, ", "), total, len(m))
}
"#;

const JAVA: &str = r#"package demo;

import java.util.ArrayList;
import java.util.List;

public class Counter<T> implements Comparable<Counter<T>> {
    private final List<T> items = new ArrayList<>();
    private int count = 0;

    public Counter(T first) {
        items.add(first);
        count += 1;
    }

    @Override
    public int compareTo(Counter<T> other) {
        return Integer.compare(count, other.count);
    }

    public static void main(String[] args) {
        Counter<String> c = new Counter<>("a");
        for (int i = 0; i < args.length; i++) {
            if (args[i] != null && !args[i].isEmpty()) {
                c.items.add(args[i]);
            }
        }
        System.out.println(c.count > 1 ? "many" : "one");
    }
}
"#;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "release only: builds the tables of a real grammar"
)]
fn syncode_json_llama3() {
    let steps = compare(&syncode("json"), &llama3(), &own_corpus("json", 6), 40);
    assert!(steps > 300, "{steps}");
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "release only: builds the tables of a real grammar"
)]
fn syncode_sql_llama3() {
    let steps = compare(&syncode("sql"), &llama3(), &own_corpus("sql", 40), 25);
    assert!(steps > 200, "{steps}");
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "release only: builds the tables of a real grammar"
)]
fn syncode_go_llama3() {
    let mut texts = vec![("go snippet".to_string(), GO.to_string())];
    texts.extend(cached("go", "go", 4, 3_000));
    let steps = compare(&syncode("go"), &llama3(), &texts, 40);
    assert!(steps > 150, "{steps}");
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "release only: builds the tables of a real grammar"
)]
fn syncode_java_llama3() {
    let mut texts = vec![("java snippet".to_string(), JAVA.to_string())];
    texts.extend(cached("java", "java", 2, 6_000));
    let steps = compare(&syncode("java"), &llama3(), &texts, 40);
    assert!(steps > 150, "{steps}");
}
