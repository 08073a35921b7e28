//! The JSON Schema Test Suite, fetched once into munch's cache: for every test group, either the
//! schema is refused with a typed error, or every `valid: true` instance is a sentence of the
//! compiled grammar and every `valid: false` one is not. Prints the counts per keyword file.
//!
//! - draft-04 from the npm package `json-schema-test-suite` (which holds only draft-03 and
//!   draft-04), read with draft-04's spellings (boolean `exclusiveMinimum`, `items` arrays,
//!   `$ref` overriding its siblings);
//! - draft 2020-12 from the copy of the suite that `jsonschema`'s source distribution carries
//!   (`json/tests/draft2020-12`, fetched with `pip download`). Its `format.json` checks that
//!   `format` is only an annotation by default; munch asserts formats (an engine constraining
//!   output wants them enforced), so that file is replaced by `optional/format/*` for the
//!   formats munch compiles, which test them as assertions.
//!
//! Instances are written compactly, numbers without exponent; objects are compiled with
//! [`PropertyOrder::Any`] since the instances' member order is the test author's.

mod common;

use std::path::{Path, PathBuf};

use common::{accepts, parser, to_text};
// The formats munch compiles: their `optional/format/NAME.json` files are run.
use munch_schema::format::FORMATS;
use munch_schema::{compile, PropertyOrder, SchemaOptions};
use serde_json::Value;

const PACKAGE: &str = "json-schema-test-suite@0.0.10";
/// The `jsonschema` release whose sdist carries the suite's draft 2020-12 tests.
const JSONSCHEMA_SDIST: (&str, &str) = ("jsonschema", "4.26.0");

/// Tests whose expectation this old copy of the suite gets wrong, and why.
const DISAGREE: &[(&str, &str)] = &[(
    "a valid protocol-relative URI",
    // RFC 3986 §3: a URI starts with a scheme; `//host/...` is a relative reference. Later
    // versions of the suite list it as an invalid `uri` (and a valid `uri-reference`).
    "format uri requires a scheme",
)];

/// Valid instances of the 2020-12 suite that munch's `format` patterns refuse by design (see
/// the `format` module of munch-schema: each narrowing keeps a pattern small enough for a
/// lexer): they are counted apart, never as accepted. An invalid instance accepted is always a
/// wrong answer.
const NARROWED: &[(&str, &str)] = &[
    // A leap second is valid only at 23:59:60 UTC, so its validity depends on the offset:
    // about 9,000 lexer states for every `date-time` and `time`.
    ("date-time.json", "leap second"),
    ("time.json", "leap second"),
    // Email local parts are dot-atoms: no quoted strings, no address literals.
    ("email.json", "quoted string"),
    ("email.json", "address-literal"),
    // URI hosts are registered names or IPv4 addresses: no IP-literal `[...]`.
    ("uri.json", "a valid URL "),
];

#[derive(Default)]
struct Counts {
    valid_accepted: usize,
    invalid_rejected: usize,
    refused: usize,
    /// Valid instances refused by a documented narrowing ([`NARROWED`]).
    narrowed: usize,
    wrong: Vec<String>,
}

/// Runs one file of test groups; `draft` is the `$schema` given to schemas without one.
fn run_file(path: &Path, draft: &str, options: &SchemaOptions, c: &mut Counts) {
    let text = std::fs::read_to_string(path).unwrap();
    let groups: Value = serde_json::from_str(&text).unwrap();
    for g in groups.as_array().unwrap() {
        let mut schema = g["schema"].clone();
        if let Value::Object(m) = &mut schema {
            m.entry("$schema")
                .or_insert_with(|| Value::String(draft.into()));
        }
        let tests = g["tests"].as_array().unwrap();
        let compiled = match compile(&schema, options) {
            Ok(c) => c,
            Err(_) => {
                c.refused += tests.len();
                continue;
            }
        };
        let p = match parser(compiled.lark()) {
            Ok(p) => p,
            Err(e) => {
                c.wrong.push(format!(
                    "{}: {}: grammar did not load: {e}",
                    path.display(),
                    g["description"]
                ));
                continue;
            }
        };
        for t in tests {
            if DISAGREE.iter().any(|(d, _)| t["description"] == *d) {
                continue;
            }
            let instance = to_text(&t["data"]);
            let valid = t["valid"].as_bool().unwrap();
            let file = path.file_name().unwrap().to_string_lossy();
            let narrowed = NARROWED.iter().any(|(f, d)| {
                *f == file && t["description"].as_str().is_some_and(|t| t.contains(d))
            });
            match (accepts(&p, &instance), valid) {
                (true, true) => c.valid_accepted += 1,
                (false, false) => c.invalid_rejected += 1,
                (false, true) if narrowed => c.narrowed += 1,
                (got, _) => c.wrong.push(format!(
                    "{} / {} / {}: {} {instance}",
                    path.file_name().unwrap().to_string_lossy(),
                    g["description"],
                    t["description"],
                    if got {
                        "accepted invalid"
                    } else {
                        "rejected valid"
                    },
                )),
            }
        }
    }
}

#[test]
fn json_schema_test_suite_draft4() {
    let dir = match munch_testkit::npm::package(PACKAGE) {
        Ok(d) => d.join("tests").join("draft4"),
        Err(e) => {
            eprintln!(
                "skipped: the JSON Schema Test Suite is not cached and cannot be fetched: {e}"
            );
            return;
        }
    };
    let mut files = json_files(&dir);
    files.push(dir.join("optional").join("format.json"));
    files.push(dir.join("optional").join("bignum.json"));
    run_suite(files, "http://json-schema.org/draft-04/schema#");
}

#[test]
fn json_schema_test_suite_draft2020_12() {
    let (name, version) = JSONSCHEMA_SDIST;
    let dir = match munch_grammars::syncode::sdist(name, version) {
        Ok(d) => d.join("json").join("tests").join("draft2020-12"),
        Err(e) => {
            eprintln!("skipped: the 2020-12 suite is not cached and cannot be fetched: {e}");
            return;
        }
    };
    let mut files: Vec<PathBuf> = json_files(&dir)
        .into_iter()
        .filter(|f| f.file_stem().is_some_and(|s| s != "format"))
        .collect();
    files.extend(FORMATS.iter().map(|f| {
        dir.join("optional")
            .join("format")
            .join(format!("{f}.json"))
    }));
    files.push(dir.join("optional").join("bignum.json"));
    run_suite(files, "https://json-schema.org/draft/2020-12/schema");
}

/// The `*.json` files directly in `dir`.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect()
}

/// Runs `files`, prints the counts per file and asserts that no answer is wrong.
fn run_suite(mut files: Vec<PathBuf>, draft: &str) {
    let options = SchemaOptions {
        property_order: PropertyOrder::Any,
        ..SchemaOptions::compact()
    };
    files.sort();
    let mut wrong = Vec::new();
    let mut total = Counts::default();
    let row = |name: &str, c: &Counts, wrong: usize| {
        println!(
            "{name:<24} {:>6} {:>8} {:>7} {:>8} {wrong:>5}",
            c.valid_accepted, c.invalid_rejected, c.refused, c.narrowed
        )
    };
    println!(
        "{:<24} {:>6} {:>8} {:>7} {:>8} {:>5}",
        "file", "valid", "invalid", "refused", "narrowed", "wrong"
    );
    for f in &files {
        let mut c = Counts::default();
        run_file(f, draft, &options, &mut c);
        row(&f.file_stem().unwrap().to_string_lossy(), &c, c.wrong.len());
        total.valid_accepted += c.valid_accepted;
        total.invalid_rejected += c.invalid_rejected;
        total.refused += c.refused;
        total.narrowed += c.narrowed;
        wrong.extend(c.wrong);
    }
    row("total", &total, wrong.len());
    assert!(
        wrong.is_empty(),
        "{} wrong answers:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
