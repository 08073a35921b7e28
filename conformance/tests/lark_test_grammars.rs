//! Lark's own test suite as a source of grammars written the way Lark's users write them: every
//! grammar in it that Lark loads (`scripts/lark_test_grammars.py` finds them in the test files
//! of the pinned Lark release), munch loads and builds a parser for, or refuses with one of two
//! typed errors: a `%declare`d terminal that a post-lexer other than Python's indenter would
//! make (munch's lexer cannot produce it), or a regex feature the streaming lexer cannot honour
//! exactly (a word boundary `\b` looks at the character before the lexeme), located at the
//! terminal.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use munch::lexer::LexerBuildErrorKind;
use munch::{CompileErrorKind, Grammar};
use munch_conformance::lark;
use munch_glr::grammar::NoPattern;
use munch_glr::parser::{Parser, ParserBuildErrorKind, ParserConfig};

#[test]
fn every_grammar_lark_loads_in_its_test_suite_loads() {
    let grammars = lark::suite_grammars().expect("Lark's test suite");
    // Lark 1.3.1's tests hold about 170 such grammars; far fewer means the extraction broke.
    assert!(
        grammars.len() >= 100,
        "only {} grammars found",
        grammars.len()
    );
    let mut built = 0;
    let mut declared = 0;
    let mut unsupported = Vec::new();
    let mut wrong = Vec::new();
    for g in &grammars {
        let where_ = format!("{}:{} ({})", g.source, g.line, g.file.display());
        let result = Grammar::lark_file(&g.file)
            .and_then(|grammar| grammar.build_parser(&ParserConfig::default()));
        match result {
            Ok(_) => built += 1,
            Err(e) => match e.kind() {
                CompileErrorKind::Parser(p) => match p.kind() {
                    ParserBuildErrorKind::MissingPatterns(m)
                        if m.terminals
                            .iter()
                            .all(|(_, _, why)| *why == NoPattern::Declared) =>
                    {
                        declared += 1
                    }
                    ParserBuildErrorKind::Lexer(l)
                        if matches!(l.kind(), LexerBuildErrorKind::Unsupported { .. })
                            && p.span().is_some() =>
                    {
                        unsupported.push(format!("{where_}: {e}"))
                    }
                    _ => wrong.push(format!("{where_}: {e}")),
                },
                _ => wrong.push(format!("{where_}: {e}")),
            },
        }
    }
    println!(
        "Lark's test suite: {} grammars Lark loads; munch builds {built}, refuses {declared} for a \
         %declare'd terminal and {} for a regex feature:\n{}",
        grammars.len(),
        unsupported.len(),
        unsupported.join("\n")
    );
    assert!(
        wrong.is_empty(),
        "munch refuses grammars Lark loads:\n{}",
        wrong.join("\n")
    );
}

/// Every parse that Lark's own test suite makes with its LALR parser (with either of Lark's
/// lexers; `scripts/lark_test_parses.py` records them while the suite runs), replayed through
/// munch from the same start rule: the same verdict on every text. Lark's tests are written
/// the way its users' tests are: small grammars with priorities, keywords, ties, templates,
/// imports of `common` and texts meant to be refused.
#[test]
fn every_lalr_parse_of_its_test_suite_agrees() {
    let parses = lark::suite_parses().expect("Lark's test suite");
    // Lark 1.3.1's tests make about 550 such distinct parses; far fewer means the recording
    // broke.
    assert!(parses.len() >= 300, "only {} parses recorded", parses.len());
    // Both ways of taking a shift/reduce conflict: the GLR parser's (both), and Lark's LALR
    // parser's (`prefer_shift`: the shift).
    type Parsers = HashMap<(PathBuf, String, bool), Result<Arc<Parser>, String>>;
    let mut parsers: Parsers = HashMap::new();
    let mut disagreements = Vec::new();
    for prefer_shift in [false, true] {
        for p in &parses {
            let parser = parsers
                .entry((p.grammar.clone(), p.start.clone(), prefer_shift))
                .or_insert_with(|| {
                    Grammar::lark_file(&p.grammar)
                        .map(|g| {
                            g.with_start(p.start.clone())
                                .with_prefer_shift(prefer_shift)
                        })
                        .and_then(|g| g.build_parser(&ParserConfig::default()))
                        .map_err(|e| e.to_string())
                });
            let verdict = match parser {
                Ok(parser) => munch::parse::parse_text(parser, p.text.as_bytes()).is_ok(),
                Err(e) => {
                    disagreements.push(format!(
                        "{}: munch refuses the grammar: {e}",
                        p.grammar.display()
                    ));
                    continue;
                }
            };
            if verdict != p.accepted {
                disagreements.push(format!(
                    "{} from {} ({} lexer{}): Lark {}, munch {} on {:?}",
                    p.grammar.display(),
                    p.start,
                    p.lexer,
                    if prefer_shift { ", prefer_shift" } else { "" },
                    if p.accepted { "accepts" } else { "refuses" },
                    if verdict { "accepts" } else { "refuses" },
                    p.text
                ));
            }
        }
    }
    println!(
        "Lark's test suite: {} LALR parses ({} with the contextual lexer) of {} grammars, {} \
         accepted by Lark",
        parses.len(),
        parses.iter().filter(|p| p.lexer == "contextual").count(),
        parsers.len() / 2,
        parses.iter().filter(|p| p.accepted).count()
    );
    assert!(
        disagreements.is_empty(),
        "munch and Lark disagree:\n{}",
        disagreements.join("\n")
    );
}

/// Lark's grammar of its own syntax (`lark.lark`, `%import lark`) reads every grammar file at
/// hand as Lark reads it: the test suite's grammars, Lark's bundled ones and SynCode's. Its
/// `COMMENT: /\s*\/\/[^\n]*/` goes on from any space, which both `%ignore`: a space before a
/// regex (`A: /x/`) is a space only by going back from the comment's reading
/// (`LexerConfig::backtrack_ignored`).
#[test]
fn lark_lark_reads_every_grammar_as_lark_does() {
    let Some(dir) = munch::lark_grammars_dir() else {
        eprintln!("skipped: no lark package found for Lark's lark.lark");
        return;
    };
    let grammar = dir.join("lark.lark");
    let parser = Grammar::lark_file(&grammar)
        .and_then(|g| g.build_parser(&ParserConfig::default()))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut files: Vec<std::path::PathBuf> = lark::suite_grammars()
        .expect("Lark's test suite")
        .into_iter()
        .map(|g| g.file)
        .collect();
    for d in [
        dir.clone(),
        munch_grammars::syncode::grammar_dir().expect("SynCode grammars"),
    ] {
        let mut found: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "lark"))
            .collect();
        found.sort();
        files.extend(found);
    }
    let labels =
        lark::label_with(&grammar, lark::Mode::Lalr, &[], &files).unwrap_or_else(|e| panic!("{e}"));
    let mut disagreements = Vec::new();
    for label in &labels {
        let text = std::fs::read(&label.file).unwrap();
        let munch = munch::parse::parse_text(&parser, &text);
        if munch.is_ok() != label.accepted {
            disagreements.push(format!(
                "{}: Lark {} / munch {:?}",
                label.file.display(),
                if label.accepted { "accepts" } else { "refuses" },
                munch.err().map(|r| (r.offset, r.message))
            ));
        }
    }
    println!(
        "lark.lark: {} grammar files, Lark accepts {}",
        labels.len(),
        labels.iter().filter(|l| l.accepted).count()
    );
    assert!(
        disagreements.is_empty(),
        "munch and Lark disagree:\n{}",
        disagreements.join("\n")
    );
}
