//! The grammar options every command takes (`--start`, `--import-path`, `--max-grammar-bytes`),
//! and `munch check`'s exit code.

mod common;
use common::{munch, s, temp_dir, write};

#[test]
fn start_rules_are_chosen_on_the_command_line() {
    let dir = temp_dir("start");
    let g = write(
        &dir,
        "g.lark",
        "value: \"a\" | list\nlist: \"[\" value \"]\"\n",
    );
    let t = write(&dir, "t", "a");
    // No `start` rule: a grammar error.
    let (code, _, err) = munch(&["parse", &g, &t]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("start rule `start`"), "{err}");
    // `a` is a value, not a list.
    let (code, out, _) = munch(&["parse", "--start", "list", &g, &t]);
    assert_eq!(code, 1, "{out}");
    let (code, out, err) = munch(&["parse", "--start", "list", "--start", "value", &g, &t]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = munch(&["check", "--start", "value", &g]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn imports_are_found_under_import_paths() {
    let dir = temp_dir("imports");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    write(&dir, "lib/words.lark", "word: LETTER+\nLETTER: /[a-z]/\n");
    let g = write(
        &dir,
        "g.lark",
        "start: word (\" \" word)*\n%import words.word\n",
    );
    let t = write(&dir, "t", "ab cd");
    let (code, _, err) = munch(&["parse", &g, &t]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`words` not found"), "{err}");
    let lib = s(&dir.join("lib"));
    let (code, out, err) = munch(&["parse", "--import-path", &lib, &g, &t]);
    assert_eq!(code, 0, "{out}{err}");
    // A relative import is found beside the grammar's file, wherever munch runs.
    let g2 = write(
        &dir,
        "lib/g2.lark",
        "start: word (\" \" word)*\n%import .words.word\n",
    );
    let (code, out, err) = munch(&["parse", &g2, &t]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn check_exits_2_when_the_parser_cannot_be_built() {
    let dir = temp_dir("check");
    let g = write(&dir, "d.lark", "start: X\n%declare X\n");
    let (code, out, _) = munch(&["check", &g]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("parser_error"), "{out}");
}

#[test]
fn grammars_past_max_grammar_bytes_are_refused() {
    let dir = temp_dir("max-bytes");
    let g = write(&dir, "g.lark", format!("start: {}\n", "\"a\" ".repeat(50)));
    let (code, out, err) = munch(&["check", &g]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = munch(&["check", "--max-grammar-bytes", "100", &g]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("max_grammar_bytes"), "{err}");
    assert!(err.contains("g.lark:1:"), "located: {err}");
}
