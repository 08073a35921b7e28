//! The mask commands of the `munch` binary, run as a user would: `trace`, `generate`,
//! `compile`, and their usage errors.
//!
//! They use the real Llama 3 tokenizer (fetched once into the cache by the first test that
//! needs it) and munch's own grammars. The oracle costs one commit per vocabulary token per
//! step, so oracle-checked files are short, or checked at a few sampled steps.

// Every test here builds the trie masker.
#![cfg(feature = "trie")]

use std::process::Command;

use serde_json::Value;

mod common;
use common::{munch, temp_dir, write};

/// `COMMAND GRAMMAR --tokenizer llama3 --masker MASKER`, then `rest`.
fn llama3<'a>(
    command: &'a str,
    grammar: &'a str,
    masker: &'a str,
    rest: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        command,
        grammar,
        "--tokenizer",
        "llama3",
        "--masker",
        masker,
    ];
    args.extend_from_slice(rest);
    args
}

/// Writes each `(name, text)` into `dir`; their paths, as strings.
fn write_files(dir: &std::path::Path, files: &[(&str, &str)]) -> Vec<String> {
    files
        .iter()
        .map(|(name, text)| write(dir, name, text))
        .collect()
}

/// The last stdout line, as JSON.
fn last_json(stdout: &str) -> Value {
    let line = stdout.lines().last().expect("stdout has a line");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// `munch trace GRAMMAR --tokenizer llama3 --masker MASKER OPTIONS… FILES…`: the exit code, the
/// summary (the last line of stdout), stdout and stderr.
fn trace(
    grammar: &str,
    masker: &str,
    options: &[&str],
    files: &[String],
) -> (i32, Value, String, String) {
    let mut args = llama3("trace", grammar, masker, options);
    args.extend(files.iter().map(String::as_str));
    let (code, stdout, stderr) = munch(&args);
    let summary = last_json(&stdout);
    (code, summary, stdout, stderr)
}

/// Asserts that `trace`'s summary has every field, with latency summaries for `maskers`.
fn assert_trace_shape(summary: &Value, maskers: &[&str]) {
    for field in ["files", "steps", "rejected", "mismatches", "first_mismatch"] {
        assert!(summary.get(field).is_some(), "no `{field}` in {summary}");
    }
    let table = summary["maskers"]
        .as_object()
        .expect("`maskers` is an object");
    assert_eq!(table.len(), maskers.len(), "{summary}");
    for m in maskers {
        for field in ["mean_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"] {
            assert!(
                table[*m][field].is_number(),
                "no `{m}.{field}` in {summary}"
            );
        }
        assert!(table[*m]["p50_us"].as_f64() <= table[*m]["max_us"].as_f64());
    }
    for field in ["p50_us", "p99_us", "max_us"] {
        assert!(
            summary["commit"][field].is_number(),
            "no `commit.{field}` in {summary}"
        );
    }
}

#[test]
fn trace_json_files_agree_with_the_oracle_at_every_step() {
    let dir = temp_dir("trace-json");
    let files = write_files(
        &dir,
        &[
            ("a.json", "[1, -2.5e3, true]"),
            ("b.json", "{\"k\": \"v\\u00e9λ\", \"n\": null}\n"),
        ],
    );
    let (code, summary, stdout, stderr) = trace("builtin:json", "trie", &["--oracle"], &files);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_trace_shape(&summary, &["trie"]);
    assert_eq!(summary["files"], 2);
    assert_eq!(summary["rejected"], 0);
    assert_eq!(summary["mismatches"], 0);
    assert!(summary["first_mismatch"].is_null());
    // One step per token and one per file end: more steps than files.
    assert!(summary["steps"].as_u64().unwrap() > 2, "{summary}");
}

#[test]
fn trace_tricky_with_sampled_oracle_steps() {
    let dir = temp_dir("trace-tricky");
    let files = write_files(
        &dir,
        &[
            (
                "prog.tricky",
                "x = 1 + 2 * y; PRINT \"hi\"; /* a\n comment */ if (x) y++; else { z += 3; }\n",
            ),
            ("label.tricky", "λ: ; ;\n"),
        ],
    );
    let options = ["--oracle-sample", "3", "--seed", "7"];
    let (code, summary, stdout, stderr) = trace("builtin:tricky", "trie", &options, &files);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_trace_shape(&summary, &["trie"]);
    assert_eq!(summary["rejected"], 0);
    assert_eq!(summary["mismatches"], 0);
    assert!(summary["steps"].as_u64().unwrap() > 20, "{summary}");
}

#[test]
fn trace_counts_a_file_the_grammar_rejects() {
    let dir = temp_dir("trace-reject");
    let files = write_files(
        &dir,
        &[
            ("good.json", "{\"a\": [1, 2]}"),
            ("bad.json", "{\"a\": [1, 2}"),
        ],
    );
    let (code, summary, stdout, stderr) =
        trace("builtin:json", "trie", &["--oracle-sample", "2"], &files);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert_trace_shape(&summary, &["trie"]);
    assert_eq!(summary["files"], 2);
    assert_eq!(summary["rejected"], 1);
    assert_eq!(summary["mismatches"], 0);
    let reasons: Vec<&str> = stderr.lines().filter(|l| l.contains("rejected")).collect();
    assert_eq!(reasons.len(), 1, "{stderr}");
    assert!(reasons[0].contains("bad.json"), "{stderr}");
}

#[test]
fn trace_rejects_a_text_that_stops_early() {
    let dir = temp_dir("trace-early");
    let files = write_files(&dir, &[("open.json", "[1, 2")]);
    let (code, summary, stdout, stderr) = trace("builtin:json", "trie", &[], &files);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert_eq!(summary["rejected"], 1);
    assert!(stderr.contains("does not accept"), "{stderr}");
}

#[test]
fn trace_compares_listed_maskers_and_times_each() {
    let dir = temp_dir("trace-two");
    let files = write_files(&dir, &[("t.json", "[true]")]);
    let (code, summary, stdout, stderr) = trace("builtin:json", "trie,oracle", &[], &files);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_trace_shape(&summary, &["trie", "oracle"]);
    assert_eq!(summary["mismatches"], 0);
}

/// The lines of a `--masks-out` file, as JSON.
fn mask_lines(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("--masks-out wrote its file");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn trace_writes_one_mask_line_per_step_the_same_for_every_masker() {
    let dir = temp_dir("trace-masks-out");
    let files = write_files(
        &dir,
        &[("a.json", "[true, null]"), ("b.json", "{\"k\": 1}")],
    );
    let run = |masker: &str, out: &str| {
        let (code, summary, stdout, stderr) =
            trace("builtin:json", masker, &["--masks-out", out], &files);
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        summary
    };
    let out = |name: &str| dir.join(name).display().to_string();
    let (trie, oracle) = (out("trie.jsonl"), out("oracle.jsonl"));
    let summary = run("trie", &trie);
    assert_trace_shape(&summary, &["trie"]);
    let lines = mask_lines(std::path::Path::new(&trie));
    assert_eq!(lines.len() as u64, summary["steps"].as_u64().unwrap());
    // Steps count from 0 in each file, in the order given.
    let mut expected = Vec::new();
    for file in &files {
        let n = lines.iter().filter(|l| l["file"] == file.as_str()).count();
        assert!(n > 1, "{file}: {n} lines");
        expected.extend((0..n).map(|i| (file.clone(), i as u64)));
    }
    let got: Vec<(String, u64)> = lines
        .iter()
        .map(|l| {
            (
                l["file"].as_str().unwrap().to_string(),
                l["step"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    for l in &lines {
        assert_eq!(l.as_object().unwrap().len(), 4, "{l}");
        assert!(l["allowed"].as_u64().unwrap() > 0, "{l}");
        let hash = l["sha256"].as_str().unwrap();
        assert!(
            hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
            "{l}"
        );
    }
    // The first step allows the start of every value: many tokens.
    assert!(lines[0]["allowed"].as_u64().unwrap() > 100, "{}", lines[0]);

    // The first masker listed is the one logged: the oracle's masks hash the same.
    run("oracle,trie", &oracle);
    assert_eq!(mask_lines(std::path::Path::new(&oracle)), lines);
}

/// The finished texts of a `generate` run (every line but the summary), decoded.
fn texts(stdout: &str) -> Vec<String> {
    let lines: Vec<&str> = stdout.lines().collect();
    lines[..lines.len() - 1]
        .iter()
        .map(|l| serde_json::from_str::<String>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn generate_is_reproducible_and_every_text_parses() {
    let args = |seed: &'static str| {
        llama3(
            "generate",
            "builtin:json",
            "trie",
            &["--seed", seed, "-n", "6", "--max-tokens", "64"],
        )
    };
    let (code, first, stderr) = munch(&args("3"));
    assert_eq!(code, 0, "{first}\n{stderr}");
    let summary = last_json(&first);
    assert_eq!(summary["samples"], 6);
    assert_eq!(summary["dead_ends"], 0, "{stderr}");
    let finished = summary["finished"].as_u64().unwrap();
    assert_eq!(
        finished + summary["truncated"].as_u64().unwrap(),
        6,
        "{summary}"
    );
    let texts = texts(&first);
    assert_eq!(texts.len() as u64, finished);
    assert!(finished > 0, "no sample finished: {stderr}");

    let (_, again, _) = munch(&args("3"));
    assert_eq!(first, again, "the same seed gives the same output");
    let (_, other, _) = munch(&args("4"));
    assert_ne!(first, other, "another seed gives other samples");

    let dir = temp_dir("generate");
    let names: Vec<(String, &str)> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("{i}.json"), t.as_str()))
        .collect();
    let named: Vec<(&str, &str)> = names.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let paths = write_files(&dir, &named);
    let mut parse = vec!["parse", "builtin:json"];
    parse.extend(paths.iter().map(String::as_str));
    let (code, stdout, stderr) = munch(&parse);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(last_json(&stdout)["accepted"], finished);
}

#[test]
fn compile_prints_its_json_line() {
    let (code, stdout, stderr) = munch(&llama3("compile", "builtin:json", "trie", &[]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let line = last_json(&stdout);
    assert_eq!(line["masker"], "trie");
    assert_eq!(line["grammar"], "builtin:json");
    assert_eq!(line["tokenizer"], "llama3");
    let (build, parser, masker) = (
        line["build_s"].as_f64().unwrap(),
        line["parser_s"].as_f64().unwrap(),
        line["masker_s"].as_f64().unwrap(),
    );
    assert!(parser > 0.0 && masker > 0.0);
    assert!((build - (parser + masker)).abs() < 1e-6, "{line}");
    assert!(line["lexer_states"].as_u64().unwrap() > 0);
    assert!(line["lr_states"].as_u64().unwrap() > 0);
    #[cfg(target_os = "linux")]
    assert!(line["peak_rss_bytes"].as_u64().unwrap() > 0);
}

/// The weighted-automaton masker writes an artifact that loads back, and says what it holds.
#[cfg(feature = "wda")]
#[test]
fn compile_writes_a_wda_artifact_that_loads() {
    let out = temp_dir("compile-wda").join("json.wda");
    let out_s = out.display().to_string();
    let (code, stdout, stderr) = munch(&llama3("compile", "builtin:json", "wda", &["-o", &out_s]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let line = last_json(&stdout);
    assert_eq!(line["masker"], "wda");
    let bytes = std::fs::metadata(&out).unwrap().len();
    assert_eq!(line["artifact_bytes"].as_u64(), Some(bytes));
    assert!(line["load_s"].as_f64().is_some());
    assert!(line["states"].as_u64().unwrap() > 1);
    assert!(line["token_classes"].as_u64().unwrap() > 1);
    assert!(std::fs::read(&out).unwrap().starts_with(b"MUNCHWDA"));
}

#[test]
fn compile_refuses_an_artifact_no_masker_can_write() {
    let out = temp_dir("compile").join("json.trie");
    let out = out.display().to_string();
    let (code, stdout, stderr) = munch(&llama3("compile", "builtin:json", "trie", &["-o", &out]));
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains("no artifact format"), "{stderr}");
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    let dir = temp_dir("errors");
    let files = write_files(&dir, &[("x.json", "[]")]);
    let cases: [(Vec<&str>, &str); 7] = [
        (
            llama3("trace", "builtin:json", "trie,trie", &[&files[0]]),
            "masker `trie` is listed twice",
        ),
        (
            llama3("trace", "builtin:json", "nope", &[&files[0]]),
            "unknown masker `nope`",
        ),
        (
            llama3("trace", "builtin:json", "trie,nope", &[&files[0]]),
            "unknown masker `nope`",
        ),
        (
            llama3(
                "compile",
                "builtin:json",
                "spanner",
                &["-o", "/nonexistent/spanner.bin"],
            ),
            "masker `spanner` has no artifact format",
        ),
        (
            llama3("generate", "builtin:nope", "trie", &[]),
            "no grammar \"builtin:nope\"",
        ),
        (
            vec![
                "trace",
                "builtin:json",
                "--tokenizer",
                "no-such-tokenizer",
                "--masker",
                "trie",
                &files[0],
            ],
            "no-such-tokenizer",
        ),
        (
            llama3(
                "trace",
                "builtin:json",
                "trie",
                &["--masks-out", "/nonexistent/masks.jsonl", &files[0]],
            ),
            "--masks-out /nonexistent/masks.jsonl",
        ),
    ];
    for (args, message) in cases {
        let (code, stdout, stderr) = munch(&args);
        assert_eq!(code, 2, "{args:?}: {stdout}\n{stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn generate_falls_back_when_a_budget_stops_the_build_and_says_so() {
    // 64 KiB cannot hold the weighted automaton of JSON over Llama 3's 128k tokens.
    let common = llama3(
        "generate",
        "builtin:json",
        "wda",
        &["--max-memory", "65536", "-n", "3", "--max-tokens", "48"],
    );
    let (code, stdout, stderr) = munch(&common);
    assert_ne!(
        code, 0,
        "without --fallback the budget is an error: {stdout}"
    );
    assert!(
        stderr.contains("wda") && stderr.contains("memory"),
        "{stderr}"
    );

    let mut with = common.to_vec();
    with.extend(["--fallback", "trie"]);
    let (code, stdout, stderr) = munch(&with);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("masker `wda` could not be built")
            && stderr.contains("using masker `trie`"),
        "the fallback is announced: {stderr}"
    );
    let summary = last_json(&stdout);
    assert_eq!(summary["samples"], 3);
    assert_eq!(summary["dead_ends"], 0, "{stderr}");

    // With room enough, no fallback and no notice.
    let mut roomy = common.to_vec();
    roomy[7] = "1000000000";
    roomy.extend(["--fallback", "trie"]);
    let (code, stdout, stderr) = munch(&roomy);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stderr.contains("instead"), "{stderr}");
}

/// A reader that goes away before munch prints (`munch check G --conflicts | head -0`) ends
/// it quietly, by the default action of SIGPIPE, not with a panic about a broken pipe.
#[cfg(unix)]
#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_munch"))
        .args(["check", "builtin:tricky", "--conflicts"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("munch starts");
    // Closed before munch has built the grammar, so its first write finds no reader.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("munch ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "{stderr}");
}
