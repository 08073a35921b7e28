//! Errors that say what went wrong (issue 29): both errors of a failed fallback chain, `-o`
//! write failures named as such, regex anchors refused with `file:line:column`, grammars and
//! tokenizers read through pipes, and input limits on `trace` and on tokenizer files.

use std::process::Command;

mod common;
use common::{munch, s, temp_dir, write};

const TOKENIZER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../vocab/tests/data/bytelevel/tokenizer.json"
);

#[test]
fn a_fallback_that_fails_too_prints_both_errors() {
    let (code, _, err) = munch(&[
        "generate",
        "builtin:json",
        "--tokenizer",
        TOKENIZER,
        "--masker",
        "wda",
        "--fallback",
        "spanner",
        "--max-memory",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    let wda = err.find("masker `wda` could not be built").expect(&err);
    let spanner = err.find("masker `spanner` could not be built").expect(&err);
    assert!(wda < spanner, "{err}");
    assert!(err.contains("then the fallback"), "{err}");
}

#[test]
fn artifact_write_failures_are_named_as_writes() {
    let dir = temp_dir("write");
    let args = |out: &str| {
        munch(&[
            "compile",
            "builtin:json",
            "--tokenizer",
            TOKENIZER,
            "--masker",
            "wda",
            "-o",
            out,
        ])
    };
    // A folder is no file to write.
    let (code, _, err) = args(&s(&dir));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot write the artifact to"), "{err}");
    assert!(!err.contains("could not be built"), "{err}");
    if std::path::Path::new("/dev/full").exists() {
        let (code, _, err) = args("/dev/full");
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("cannot write the artifact to /dev/full"),
            "{err}"
        );
    }
    // Writing to /dev/null succeeds, and what was written loads.
    if std::path::Path::new("/dev/null").exists() {
        let (code, out, err) = args("/dev/null");
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("\"artifact_bytes\""), "{out}");
    }
}

#[test]
fn regex_anchors_are_refused_at_their_file_line_and_column() {
    let dir = temp_dir("anchors");
    for (name, text, line) in [
        ("dollar.lark", "start: A\nA: /^a$/\n", 2),
        ("az.lark", "start: \"x\" B\n\nB: /\\Aa\\Z/\n", 3),
    ] {
        let g = write(&dir, name, text);
        let (code, out, _) = munch(&["check", &g]);
        assert_eq!(code, 2, "{out}");
        assert!(out.contains(&format!("{g}:{line}:1: lexer")), "{out}");
        // Named as the grammar spells it (the JSON line escapes the backslash).
        assert!(
            out.contains("anchor or boundary `^` or `\\\\A`")
                || out.contains("anchor or boundary `$` or `\\\\Z`"),
            "{out}"
        );
        let (code, _, err) = munch(&["parse", &g, &g]);
        assert_eq!(code, 2, "{err}");
        assert!(err.starts_with(&format!("{g}:{line}:1: lexer")), "{err}");
    }
}

/// Runs `munch ARGS` in bash (for its process substitutions) and checks that it succeeds: its
/// stdout, or `None` (the test is skipped) where there is no `/bin/bash`.
fn munch_in_bash(args: &str) -> Option<String> {
    if !std::path::Path::new("/bin/bash").exists() {
        eprintln!("skipped: no /bin/bash for a process substitution");
        return None;
    }
    let out = Command::new("/bin/bash")
        .arg("-c")
        .arg(format!("{} {args}", env!("CARGO_BIN_EXE_munch")))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    Some(stdout.into_owned())
}

#[test]
fn a_grammar_through_a_pipe_is_read() {
    let dir = temp_dir("pipe");
    let g = write(&dir, "g.lark", "start: \"a\"+\n");
    let text = write(&dir, "t.txt", "aaa");
    let Some(stdout) = munch_in_bash(&format!("parse <(cat {g}) {text}")) else {
        return;
    };
    assert!(stdout.contains("\"accepted\":true"), "{stdout}");
}

#[test]
fn trace_reads_no_more_than_max_input_bytes() {
    let dir = temp_dir("trace");
    let text = write(&dir, "long.json", format!("[{}1]", "1,".repeat(100)));
    let trace = |extra: &[&str], path: &str| {
        let mut args = vec!["trace", "builtin:json", "--tokenizer", TOKENIZER];
        args.extend_from_slice(&["--masker", "trie"]);
        args.extend_from_slice(extra);
        args.push(path);
        munch(&args)
    };
    let (code, _, err) = trace(&["--max-input-bytes", "100"], &text);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("longer than 100 bytes (--max-input-bytes)"),
        "{err}"
    );
    if std::path::Path::new("/dev/zero").exists() {
        let (code, _, err) = trace(&[], "/dev/zero");
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--max-input-bytes"), "{err}");
    }
}

#[test]
fn a_tokenizer_through_a_pipe_is_read() {
    let Some(stdout) = munch_in_bash(&format!("vocab <(cat {TOKENIZER})")) else {
        return;
    };
    let (code, direct, err) = munch(&["vocab", TOKENIZER]);
    assert_eq!(code, 0, "{err}");
    let sizes = |json: &str| {
        let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
        (
            v["tokens"].clone(),
            v["eos"].clone(),
            v["trie_nodes"].clone(),
        )
    };
    assert_eq!(sizes(&stdout), sizes(&direct), "{stdout} vs {direct}");
    assert!(sizes(&direct).0.as_u64() > Some(0), "{direct}");
}

#[test]
fn an_endless_tokenizer_is_refused_at_the_limit() {
    if !std::path::Path::new("/dev/zero").exists() {
        eprintln!("skipped: no /dev/zero");
        return;
    }
    let (code, _, err) = munch(&["vocab", "/dev/zero"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "/dev/zero is longer than {} bytes",
            munch::Vocabulary::MAX_FILE_BYTES
        )),
        "{err}"
    );
}

/// Every parser budget is an option of every command that builds a parser, and a grammar or
/// text past it is an error naming it (`check` and `compile` exit 2; `parse` rejects the file
/// and exits 1), while the defaults build and accept the same input.
#[test]
fn parser_budgets_are_options_named_in_their_errors() {
    let dir = temp_dir("budgets");
    let text = write(&dir, "t.json", r#"{"a": [1, 2, {"b": null}]}"#);
    for (option, value, budget) in [
        ("--max-lexer-states", "3", "max_states"),
        ("--max-lr-states", "3", "max_lr_states"),
        ("--max-lr-actions", "10", "max_lr_actions"),
    ] {
        let (code, out, err) = munch(&["check", "builtin:json", option, value]);
        assert_eq!(code, 2, "{option}: {out} {err}");
        assert!(out.contains(budget), "{option}: {out}");
        let (code, _, err) = munch(&[
            "compile",
            "builtin:json",
            "--tokenizer",
            TOKENIZER,
            "--masker",
            "trie",
            option,
            value,
        ]);
        assert_eq!(code, 2, "{option}: {err}");
        assert!(err.contains(budget), "{option}: {err}");
    }
    for (option, value, budget) in [
        ("--max-work-per-commit", "20", "max_work_per_commit"),
        ("--max-nodes-per-step", "1", "max_nodes_per_step"),
    ] {
        let (code, out, err) = munch(&["parse", "builtin:json", &text, option, value]);
        assert_eq!(code, 1, "{option}: {out} {err}");
        assert!(out.contains(budget), "{option}: {out}");
    }
    let (code, out, err) = munch(&["parse", "builtin:json", &text]);
    assert_eq!(code, 0, "{out} {err}");
    let (code, out, err) = munch(&["check", "builtin:json"]);
    assert_eq!(code, 0, "{out} {err}");
}
