//! Lark's own test suite as a source of grammars written the way Lark's users write them: every
//! grammar in it that Lark loads (`scripts/lark_test_grammars.py` finds them in the test files
//! of the pinned Lark release), munch loads and builds a parser for, or refuses with one of two
//! typed errors: a `%declare`d terminal that a post-lexer other than Python's indenter would
//! make (munch's lexer cannot produce it), or a regex feature the streaming lexer cannot honour
//! exactly (a word boundary `\b` looks at the character before the lexeme), located at the
//! terminal.

use munch::lexer::LexerBuildErrorKind;
use munch::{CompileErrorKind, Grammar};
use munch_conformance::lark;
use munch_glr::grammar::NoPattern;
use munch_glr::parser::{ParserBuildErrorKind, ParserConfig};

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
