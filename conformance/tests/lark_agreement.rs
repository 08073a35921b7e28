//! munch's parser against Lark, the reference for what a Lark grammar accepts, on SynCode's
//! grammars over real files, generated sentences and mutated negatives.
//!
//! Every text is labelled by Lark with `parser='lalr', lexer='basic'`. Where munch disagrees,
//! the text is labelled again with `parser='earley', lexer='basic'`, which recognises the
//! grammar's whole context-free language: Lark's LALR resolves shift/reduce conflicts by
//! shifting, so it rejects some sentences of the grammar that munch's GLR parser (rightly)
//! accepts. A disagreement that remains after that is listed with both verdicts; the test fails
//! when agreement on any grammar falls below 99%.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use munch_conformance::corpus::{self, Language};
use munch_conformance::lark::{self, Mode};
use munch_glr::cfg::generate::{sample_lexeme, GenerateConfig, Generator, SeededRng};
use munch_glr::parser::{Parser, ParserConfig};

/// What the test looked at for one grammar.
struct Outcome {
    grammar: &'static str,
    total: usize,
    lark_accepted: usize,
    lalr_only: Vec<PathBuf>,
    disagreements: Vec<String>,
}

fn syncode_path(name: &str) -> PathBuf {
    munch_grammars::syncode::grammar_dir()
        .expect("SynCode grammars")
        .join(format!("{name}.lark"))
}

fn parser_for(path: &Path) -> Arc<Parser> {
    let text = std::fs::read(path).unwrap();
    let config = munch_glr::lark::LoadConfig {
        file_name: path.display().to_string(),
        ..Default::default()
    };
    let grammar = munch_glr::lark::load(&text, &config).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(Parser::new(&grammar, &ParserConfig::default()).unwrap_or_else(|e| panic!("{e}")))
}

/// Texts generated from the grammar itself: lexemes sampled from each terminal's pattern,
/// separated by a space (every SynCode grammar used here ignores spaces).
fn generated_texts(parser: &Parser, path: &Path, name: &str, n: usize, seed: u64) -> Vec<PathBuf> {
    let text = std::fs::read(path).unwrap();
    let grammar = munch_glr::lark::load(&text, &munch_glr::lark::LoadConfig::default()).unwrap();
    let generator = Generator::new(parser.cfg());
    let mut rng = SeededRng::new(seed);
    let dir = munch_lexer::cache::cache_dir().join("generated").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let config = GenerateConfig::default();
    let mut out = Vec::new();
    for i in 0..n {
        let Some(sentence) = generator.sentence(&mut rng, &config) else {
            break;
        };
        let mut text = Vec::new();
        for (k, t) in sentence.iter().enumerate() {
            let pattern = grammar.terminal(*t).pattern.as_ref().expect("pattern");
            let lexeme = sample_lexeme(&pattern.hir, &mut rng, 3).expect("lexeme");
            if k > 0 {
                text.push(b' ');
            }
            text.extend_from_slice(&lexeme);
        }
        let file = dir.join(format!("{seed}_{i:04}.txt"));
        std::fs::write(&file, &text).unwrap();
        out.push(file);
    }
    out
}

/// Mutated copies of `files`: one seeded random edit each (delete, duplicate or swap a byte
/// range), which makes most of them negatives.
fn mutated(files: &[PathBuf], name: &str, seed: u64) -> Vec<PathBuf> {
    let mut rng = SeededRng::new(seed);
    let dir = munch_lexer::cache::cache_dir().join("mutated").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    files
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let mut text = std::fs::read(f).ok()?;
            if text.len() < 4 {
                return None;
            }
            let at = rng.below(text.len() - 2);
            let len = 1 + rng.below((text.len() - at).min(8));
            match rng.below(3) {
                0 => {
                    text.drain(at..at + len);
                }
                1 => {
                    let piece = text[at..at + len].to_vec();
                    text.splice(at..at, piece);
                }
                _ => text.swap(at, at + len - 1),
            }
            // Lark reads UTF-8 text: keep the mutation valid UTF-8.
            let text = String::from_utf8_lossy(&text).into_owned();
            let file = dir.join(format!("{i:04}.txt"));
            std::fs::write(&file, text).ok()?;
            Some(file)
        })
        .collect()
}

fn agree(grammar: &'static str, files: Vec<PathBuf>) -> Outcome {
    let path = syncode_path(grammar);
    let parser = parser_for(&path);
    let labels = lark::label(&path, Mode::Lalr, &files).unwrap_or_else(|e| panic!("{e}"));
    let mut outcome = Outcome {
        grammar,
        total: files.len(),
        lark_accepted: labels.iter().filter(|l| l.accepted).count(),
        lalr_only: Vec::new(),
        disagreements: Vec::new(),
    };
    let mut differing = Vec::new();
    for label in &labels {
        let text = std::fs::read(&label.file).unwrap();
        let munch = munch::parse::parse_text(&parser, &text);
        if munch.is_ok() != label.accepted {
            differing.push((label.clone(), munch));
        }
    }
    if differing.is_empty() {
        return outcome;
    }
    let again: Vec<PathBuf> = differing.iter().map(|(l, _)| l.file.clone()).collect();
    let earley = lark::label(&path, Mode::Earley, &again).unwrap_or_else(|e| panic!("{e}"));
    for ((lalr, munch), earley) in differing.into_iter().zip(earley) {
        if earley.accepted == munch.is_ok() {
            outcome.lalr_only.push(lalr.file);
        } else {
            outcome.disagreements.push(format!(
                "{}: Lark(lalr) {} / Lark(earley) {} / munch {}",
                lalr.file.display(),
                verdict(lalr.accepted, lalr.error.as_deref()),
                verdict(earley.accepted, earley.error.as_deref()),
                match &munch {
                    Ok(()) => "accepts".to_string(),
                    Err(r) => format!("rejects at byte {}: {}", r.offset, r.message),
                },
            ));
        }
    }
    outcome
}

fn verdict(accepted: bool, error: Option<&str>) -> String {
    if accepted {
        "accepts".to_string()
    } else {
        format!(
            "rejects ({})",
            error.unwrap_or("").lines().next().unwrap_or("")
        )
    }
}

fn report(outcomes: &[Outcome]) {
    let mut failed = Vec::new();
    for o in outcomes {
        let agreeing = o.total - o.disagreements.len();
        let rate = agreeing as f64 / o.total.max(1) as f64;
        eprintln!(
            "{:<8} {:>4} texts, Lark accepts {:>4}; agreement {:.2}% ({} settled by Earley: Lark's LALR shifts on conflicts)",
            o.grammar,
            o.total,
            o.lark_accepted,
            rate * 100.0,
            o.lalr_only.len()
        );
        for d in &o.disagreements {
            eprintln!("    {d}");
        }
        if rate < 0.99 {
            failed.push(format!("{}: {:.2}%", o.grammar, rate * 100.0));
        }
    }
    assert!(
        failed.is_empty(),
        "agreement with Lark below 99%: {failed:?}"
    );
}

fn real_files(language: Language, n: usize, max_bytes: u64) -> Vec<PathBuf> {
    let files = corpus::files(language, n, max_bytes).unwrap_or_else(|e| panic!("{e}"));
    assert!(!files.is_empty(), "no {language:?} files");
    files
}

fn with_generated_and_mutated(
    grammar: &'static str,
    real: Vec<PathBuf>,
    generated: usize,
) -> Vec<PathBuf> {
    let path = syncode_path(grammar);
    let parser = parser_for(&path);
    let mut all = real.clone();
    all.extend(mutated(&real, grammar, 7));
    let sentences = generated_texts(&parser, &path, grammar, generated, 11);
    all.extend(mutated(&sentences, &format!("{grammar}-generated"), 13));
    all.extend(sentences);
    all
}

#[test]
fn json_agrees_with_lark() {
    let files = real_files(Language::Json, 40, 200_000);
    report(&[agree(
        "json",
        with_generated_and_mutated("json", files, 100),
    )]);
}

#[test]
fn sql_agrees_with_lark() {
    let files = real_files(Language::Sql, 200, 10_000);
    report(&[agree("sql", with_generated_and_mutated("sql", files, 100))]);
}

#[test]
fn go_agrees_with_lark() {
    let files = real_files(Language::Go, 300, 3_000);
    report(&[agree("go", with_generated_and_mutated("go", files, 100))]);
}

#[test]
fn java_agrees_with_lark() {
    let files = real_files(Language::Java, 200, 6_000);
    report(&[agree(
        "java",
        with_generated_and_mutated("java", files, 100),
    )]);
}

#[test]
fn c_agrees_with_lark() {
    // SynCode's C grammar is a small subset of C: generated sentences and their mutations.
    report(&[agree("c", with_generated_and_mutated("c", Vec::new(), 150))]);
}
