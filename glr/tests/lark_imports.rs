//! `%import` of grammar files, start rules and Lark's bundled grammars: names and structure as
//! Lark gives them (each expectation was checked with Lark 1.x on the same files).

use std::fs;
use std::path::{Path, PathBuf};

use munch_glr::grammar::Grammar;
use munch_glr::lark::{load, ErrorKind, LoadConfig};

/// A fresh folder holding `files` (path, text).
fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("munch-imports-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    dir
}

fn load_file(
    dir: &Path,
    main: &str,
    config: LoadConfig,
) -> Result<Grammar, munch_glr::lark::GrammarError> {
    let path = dir.join(main);
    let text = fs::read(&path).unwrap();
    load(
        &text,
        &LoadConfig {
            file_name: path.display().to_string(),
            base_dir: Some(dir.to_path_buf()),
            ..config
        },
    )
}

fn terminal_names(g: &Grammar) -> Vec<&str> {
    g.terminals.iter().map(|t| t.name.as_str()).collect()
}

fn rule_names(g: &Grammar) -> Vec<&str> {
    let mut v: Vec<&str> = g.rules.iter().map(|r| r.name.as_str()).collect();
    v.sort_unstable();
    v
}

const LIB: &str = r#"// a library
list: "[" [item ("," item)*] "]"
item: NUMBER | list | _word
_word: WORD
WORD: /[a-z]+/
NUMBER: DIGIT+
DIGIT: "0".."9"
%import .sub.deep.WS
%ignore WS
"#;

#[test]
fn relative_imports_rename_as_lark_does() {
    let dir = folder(
        "relative",
        &[
            ("lib.lark", LIB),
            ("sub/deep.lark", "WS: \" \"+\n"),
            (
                "main.lark",
                "start: pair+\npair: v \"=\" v\n%import .lib.list -> v\n%import .lib (WORD)\n\
                 %extend lib__item: \"*\"\n%ignore \" \"\n",
            ),
        ],
    );
    let g = load_file(&dir, "main.lark", LoadConfig::default()).unwrap();
    // Lark: [WORD, lib__NUMBER, __IGNORE_0, COMMA, LSQB, RSQB, STAR, EQUAL]; the module's
    // `%ignore WS` is its own, and `lib__DIGIT` only builds `lib__NUMBER`.
    assert_eq!(
        terminal_names(&g),
        [
            "WORD",
            "lib__NUMBER",
            "__IGNORE_0",
            "COMMA",
            "LSQB",
            "RSQB",
            "STAR",
            "EQUAL"
        ]
    );
    assert_eq!(
        rule_names(&g),
        ["_lib__word", "lib__item", "pair", "start", "v"]
    );
}

#[test]
fn import_paths_override_and_nested_modules() {
    let dir = folder(
        "paths",
        &[
            ("lib/m.lark", "a: B c\nc: \"c\"\nB: \"b\"\n%import .n.D\n"),
            ("lib/n.lark", "D: \"d\"\n"),
            (
                "g/main.lark",
                "start: a D\n%import m (a)\n%import n.D\n%override lib_c: \"x\"\n",
            ),
        ],
    );
    let config = || LoadConfig {
        import_paths: vec![dir.join("lib")],
        ..LoadConfig::default()
    };
    // `%override` needs an existing definition: `m__c` is one, `lib_c` is not.
    let err = load_file(&dir.join("g"), "main.lark", config()).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::NothingToModify { .. }),
        "{err}"
    );
    fs::write(
        dir.join("g/main.lark"),
        "start: a D\n%import m (a)\n%import n.D\n%override m__c: \"x\"\n",
    )
    .unwrap();
    let g = load_file(&dir.join("g"), "main.lark", config()).unwrap();
    assert_eq!(terminal_names(&g), ["m__B", "D", "X"]);
    assert_eq!(rule_names(&g), ["a", "m__c", "start"]);
    // Without the import path the module is not found, at the import.
    let err = load_file(&dir.join("g"), "main.lark", LoadConfig::default()).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::UnknownImport { .. }),
        "{err}"
    );
    assert_eq!(err.span().line, 2);
}

#[test]
fn errors_in_modules_name_the_module() {
    let dir = folder(
        "errors",
        &[
            ("bad.lark", "ok: \"o\"\nbroken: \"a\" (\n"),
            ("main.lark", "start: ok\n%import .bad.ok\n"),
            ("loop.lark", "x: \"x\"\n%import .loop.x -> y\n"),
            ("main2.lark", "start: x\n%import .loop.x\n"),
            ("good.lark", "ok: \"o\"\n"),
            ("main3.lark", "start: nope\n%import .good.nope\n"),
        ],
    );
    let err = load_file(&dir, "main.lark", LoadConfig::default()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("bad.lark:2:"), "{text}");
    let err = load_file(&dir, "main2.lark", LoadConfig::default()).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::LimitExceeded {
                what: "nested imports",
                ..
            }
        ),
        "{err}"
    );
    let err = load_file(&dir, "main3.lark", LoadConfig::default()).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::UnknownImport {
            module: ".good".to_string(),
            name: Some("nope".to_string())
        }
    );
}

#[test]
fn common_and_unicode_are_built_in() {
    let g = load(
        b"start: WS_INLINE NUMBER\n%import unicode.WS_INLINE\n%import common.NUMBER\n",
        &LoadConfig::default(),
    )
    .unwrap();
    assert_eq!(terminal_names(&g), ["WS_INLINE", "NUMBER"]);
    let src = &g.terminals[0].pattern.as_ref().unwrap().source;
    assert!(src.contains("xa0"), "{src}");
}

/// Lark's `grammars` folder in munch's cache virtualenv, if Lark is installed there.
fn lark_grammars() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let lib = PathBuf::from(home).join(".cache/munch/lark-venv/lib");
    let py = fs::read_dir(&lib)
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("python"))?;
    let dir = py.path().join("site-packages/lark/grammars");
    dir.join("python.lark").is_file().then_some(dir)
}

#[test]
fn lark_python_grammar_loads_with_its_start_rules() {
    let Some(dir) = lark_grammars() else {
        eprintln!("skipped: no lark package in munch's cache (conformance creates it)");
        return;
    };
    let text = fs::read(dir.join("python.lark")).unwrap();
    let config = LoadConfig {
        start: vec!["file_input".to_string(), "single_input".to_string()],
        ..LoadConfig::default()
    };
    let g = load(&text, &config).unwrap();
    assert_eq!(g.rule(g.start).name, "__start");
    // And imported, as a Lark user would: `%import python (...)`.
    let main = b"start: file_input\n%import python (file_input, _NEWLINE, _INDENT, _DEDENT)\n%import python.COMMENT\n%ignore COMMENT\n";
    let err = load(main, &LoadConfig::default()).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::BundledGrammarUnavailable { .. }),
        "{err}"
    );
    let g = load(
        main,
        &LoadConfig {
            lark_grammars: Some(dir),
            ..LoadConfig::default()
        },
    )
    .unwrap();
    let names = terminal_names(&g);
    assert!(
        names.contains(&"_NEWLINE") && names.contains(&"python__NAME"),
        "{names:?}"
    );
}

#[test]
fn lark_python_look_around_terminals_are_lexed() {
    let Some(dir) = lark_grammars() else {
        eprintln!("skipped: no lark package in munch's cache (conformance creates it)");
        return;
    };
    let text = fs::read(dir.join("python.lark")).unwrap();
    let config = LoadConfig {
        start: vec!["file_input".to_string()],
        ..LoadConfig::default()
    };
    let g = load(&text, &config).unwrap();
    let lexer = munch_lexer::dfa::Lexer::new(
        &g.terminal_specs(),
        &munch_lexer::dfa::LexerConfig::default(),
    )
    .unwrap();
    let lexemes = |text: &str| -> Result<Vec<String>, usize> {
        Ok(lexer
            .tokenize(text.as_bytes())
            .map_err(|e| e.offset)?
            .iter()
            .map(|l| lexer.terminal(l.terminals[0]))
            .filter(|t| !t.ignored)
            .map(|t| t.name.clone())
            .collect())
    };
    // `(?<!\\)` keeps an escaped quote inside the string; `/(?![1-9])/` refuses `0` before
    // a digit, as Python's `re` does in Lark.
    assert_eq!(
        lexemes(r#"x("a\"b", 0, 00, 10)"#).unwrap(),
        [
            "NAME",
            "LPAR",
            "STRING",
            "COMMA",
            "DEC_NUMBER",
            "COMMA",
            "DEC_NUMBER",
            "COMMA",
            "DEC_NUMBER",
            "RPAR"
        ]
    );
    assert_eq!(lexemes("01 "), Err(2));
}

#[test]
fn imported_text_counts_toward_max_grammar_bytes() {
    let module = format!("big: {}\n", "\"b\" ".repeat(200));
    let dir = folder(
        "max-bytes",
        &[
            ("big.lark", module.as_str()),
            ("main.lark", "start: big\n%import .big.big\n"),
        ],
    );
    let config = |max_grammar_bytes| LoadConfig {
        max_grammar_bytes,
        ..LoadConfig::default()
    };
    assert!(load_file(&dir, "main.lark", config(4096)).is_ok());
    let err = load_file(&dir, "main.lark", config(400)).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::LimitExceeded { limit: 400, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("max_grammar_bytes"), "{err}");
}
