//! Golden tests for grammar errors: each `tests/golden/errors/NAME.lark` must fail to load, and
//! `NAME.txt` holds the expected error kind (`Debug`) and its rendering (`Display`).
//!
//! Run with `BLESS=1` to rewrite the `.txt` files from the current output (then review every
//! changed file by eye).

use std::fs;
use std::path::{Path, PathBuf};

use munch_glr::lark::{load, ErrorKind, LoadConfig};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/errors")
}

/// The expected-file text for the error of `name.lark`.
fn render(name: &str, source: &[u8]) -> String {
    let config = LoadConfig {
        file_name: format!("{name}.lark"),
        ..LoadConfig::default()
    };
    match load(source, &config) {
        Ok(_) => format!("{name}.lark loaded without an error\n"),
        Err(e) => {
            let mut out = format!("kind: {:?}\n", e.kind());
            if let Some(aux) = e.auxiliary_span() {
                out.push_str(&format!("auxiliary: {}:{}\n", aux.line, aux.column));
            }
            out.push_str(&format!("{e}\n"));
            out
        }
    }
}

#[test]
fn golden_errors() {
    let bless = std::env::var_os("BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    let mut cases: Vec<PathBuf> = fs::read_dir(golden_dir())
        .expect("golden directory")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "lark"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 30, "the golden cases are present");
    let mut failures = Vec::new();
    for path in &cases {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let source = fs::read(path).expect("read .lark");
        let actual = render(&name, &source);
        let expected_path = path.with_extension("txt");
        if bless {
            fs::write(&expected_path, &actual).expect("write .txt");
            continue;
        }
        let expected = fs::read_to_string(&expected_path).unwrap_or_default();
        if actual != expected {
            failures.push(format!(
                "--- {name}.txt (expected)\n{expected}+++ (actual)\n{actual}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every error kind the loader reports has a golden case.
#[test]
fn every_kind_has_a_golden_case() {
    let mut seen = std::collections::BTreeSet::new();
    for entry in fs::read_dir(golden_dir()).expect("golden directory") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|x| x == "lark") {
            let err = load(&fs::read(&path).unwrap(), &LoadConfig::default())
                .expect_err("golden cases fail to load");
            let kind = format!("{:?}", err.kind());
            seen.insert(kind.split([' ', '{']).next().unwrap().to_string());
        }
    }
    let all = [
        "InvalidUtf8",
        "UnexpectedCharacter",
        "UnexpectedToken",
        "UnterminatedString",
        "UnterminatedRegex",
        "UnknownDirective",
        "UnclosedDelimiter",
        "UnmatchedDelimiter",
        "NestingTooDeep",
        "BadEscape",
        "EmptyLiteral",
        "BadCharRange",
        "BadRepetitionRange",
        "NumberOutOfRange",
        "UndefinedRule",
        "UndefinedTerminal",
        "Duplicate",
        "NothingToModify",
        "BadRegex",
        "NoStartRule",
        "TerminalCycle",
        "EmptyMatch",
        "NonProductive",
        "UnknownImport",
        "BundledGrammarUnavailable",
        "TemplateArity",
        "TemplateParamConflict",
        "RuleInTerminal",
        "DeclaredInTerminal",
        "MisplacedAlias",
        "ConflictingModifiers",
        "LimitExceeded",
    ];
    let missing: Vec<&str> = all.iter().copied().filter(|k| !seen.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "kinds without a golden case: {missing:?}"
    );
}

#[test]
fn duplicate_spans_point_at_both_definitions() {
    let err = load(b"start: a\na: \"x\"\na: \"y\"\n", &LoadConfig::default()).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Duplicate {
            name: "a".to_string(),
            what: "rule"
        }
    );
    assert_eq!((err.span().line, err.span().column), (3, 1));
    let aux = err.auxiliary_span().expect("first definition");
    assert_eq!((aux.line, aux.column), (2, 1));
}

#[test]
fn invalid_utf8_is_located_at_the_first_bad_byte() {
    let mut src = b"start: \"a\"\n// caf\xc3\xa9 ".to_vec();
    src.push(0xff);
    src.extend_from_slice(b" x\n");
    let err = load(&src, &LoadConfig::default()).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::InvalidUtf8);
    assert_eq!(
        err.span().start,
        src.iter().position(|&b| b == 0xff).unwrap()
    );
    // Column in characters: "// café " is eight characters.
    assert_eq!((err.span().line, err.span().column), (2, 9));
}
