//! The JSON Schema Test Suite (npm package `json-schema-test-suite`, fetched once into munch's
//! cache): for every test group, either the schema is refused with a typed error, or every
//! `valid: true` instance is a sentence of the compiled grammar and every `valid: false` one is
//! not. Prints the counts per keyword file.
//!
//! The npm package holds the draft-04 (and draft-03) tests; draft-04 is read with its own
//! spellings (boolean `exclusiveMinimum`, `items` arrays, `$ref` overriding its siblings).
//! Instances are written compactly, numbers without exponent; objects are compiled with
//! [`PropertyOrder::Any`] since the instances' member order is the test author's.

mod common;

use std::path::Path;

use common::{accepts, parser, to_text};
use munch_schema::{compile, PropertyOrder, SchemaOptions};
use serde_json::Value;

const PACKAGE: &str = "json-schema-test-suite@0.0.10";

/// Tests whose expectation this old copy of the suite gets wrong, and why.
const DISAGREE: &[(&str, &str)] = &[(
    "a valid protocol-relative URI",
    // RFC 3986 §3: a URI starts with a scheme; `//host/...` is a relative reference. Later
    // versions of the suite list it as an invalid `uri` (and a valid `uri-reference`).
    "format uri requires a scheme",
)];

#[derive(Default)]
struct Counts {
    valid_accepted: usize,
    invalid_rejected: usize,
    refused: usize,
    wrong: Vec<String>,
}

fn run_file(path: &Path, options: &SchemaOptions, c: &mut Counts) {
    let text = std::fs::read_to_string(path).unwrap();
    let groups: Value = serde_json::from_str(&text).unwrap();
    for g in groups.as_array().unwrap() {
        let mut schema = g["schema"].clone();
        if let Value::Object(m) = &mut schema {
            m.entry("$schema")
                .or_insert_with(|| Value::String("http://json-schema.org/draft-04/schema#".into()));
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
            match (accepts(&p, &instance), valid) {
                (true, true) => c.valid_accepted += 1,
                (false, false) => c.invalid_rejected += 1,
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
fn json_schema_test_suite() {
    let dir = match munch_testkit::npm::package(PACKAGE) {
        Ok(d) => d.join("tests").join("draft4"),
        Err(e) => {
            eprintln!(
                "skipped: the JSON Schema Test Suite is not cached and cannot be fetched: {e}"
            );
            return;
        }
    };
    let options = SchemaOptions {
        property_order: PropertyOrder::Any,
        ..SchemaOptions::compact()
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.push(dir.join("optional").join("format.json"));
    files.push(dir.join("optional").join("bignum.json"));
    files.sort();
    let mut wrong = Vec::new();
    let mut total = Counts::default();
    println!(
        "{:<24} {:>6} {:>8} {:>7} {:>5}",
        "file", "valid", "invalid", "refused", "wrong"
    );
    for f in &files {
        let mut c = Counts::default();
        run_file(f, &options, &mut c);
        println!(
            "{:<24} {:>6} {:>8} {:>7} {:>5}",
            f.file_stem().unwrap().to_string_lossy(),
            c.valid_accepted,
            c.invalid_rejected,
            c.refused,
            c.wrong.len()
        );
        total.valid_accepted += c.valid_accepted;
        total.invalid_rejected += c.invalid_rejected;
        total.refused += c.refused;
        wrong.extend(c.wrong);
    }
    println!(
        "{:<24} {:>6} {:>8} {:>7} {:>5}",
        "total",
        total.valid_accepted,
        total.invalid_rejected,
        total.refused,
        wrong.len()
    );
    assert!(
        wrong.is_empty(),
        "{} wrong answers:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
