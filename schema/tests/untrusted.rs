//! Untrusted schemas: every schema of the test suite and of `bench/schemas`, mutated in many
//! seeded ways (values swapped for odd ones), compiles to a grammar that loads or is refused
//! with a typed error; nothing panics, and no compiled grammar fails to load.

mod common;

use munch_schema::{compile, SchemaOptions};
use munch_testkit::generate::XorShift;
use serde_json::{json, Value};

fn odd_value(r: &mut XorShift) -> Value {
    let pool = [
        json!(-1),
        json!(0),
        json!(1e300),
        json!(-0.000001),
        json!(123456789012345678u64),
        json!(""),
        json!("^(a|b$"),
        json!("^(?!a)(?=b"),
        json!("^(?=^x)(?!(?=y))z(?<!\\)$"),
        json!("(^a|b$)|(c(^d))|^(?![\\s\\S])"),
        json!("\\"),
        json!("#/$defs/x"),
        json!("#"),
        json!("[^]"),
        json!("\u{0}\"/"),
        json!(null),
        json!(true),
        json!(false),
        json!([]),
        json!({}),
        json!([1, "a", null]),
        json!({"type": "string", "pattern": "x{2,1}"}),
        json!({"$ref": "#/properties"}),
        json!({"enum": [[], {}, 1.5, "é"]}),
        json!({"minLength": 3, "maxLength": 2}),
        json!({"type": ["integer", "string"], "minimum": 9, "maximum": 3}),
        json!({"items": {"$ref": "#"}}),
    ];
    pool[r.below(pool.len())].clone()
}

/// Replaces one node of `v` (chosen by walking with `r`) with an odd value.
fn mutate(v: &mut Value, r: &mut XorShift, depth: usize) {
    let replace = depth > 6 || r.below(4) == 0;
    match v {
        Value::Object(m) if !m.is_empty() && !replace => {
            let k = m.keys().nth(r.below(m.len())).cloned().unwrap_or_default();
            if let Some(x) = m.get_mut(&k) {
                mutate(x, r, depth + 1);
            }
        }
        Value::Array(a) if !a.is_empty() && !replace => {
            let i = r.below(a.len());
            mutate(&mut a[i], r, depth + 1);
        }
        _ => *v = odd_value(r),
    }
}

fn schemas() -> Vec<Value> {
    let mut out = Vec::new();
    let bench = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/schemas");
    for e in std::fs::read_dir(bench).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            out.push(serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap());
        }
    }
    if let Ok(dir) = munch_testkit::npm::package("json-schema-test-suite@0.0.10") {
        let dir = dir.join("tests").join("draft4");
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "json") {
                let groups: Value =
                    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
                for g in groups.as_array().unwrap() {
                    out.push(g["schema"].clone());
                }
            }
        }
    }
    out
}

#[test]
fn mutated_schemas_compile_or_are_refused() {
    let options = [SchemaOptions::default(), {
        let mut o = SchemaOptions::compact();
        o.property_order = munch_schema::PropertyOrder::Any;
        o.lenient = true;
        o
    }];
    let base = schemas();
    let (mut compiled, mut refused) = (0, 0);
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    for seed in 1..=4u64 {
        let mut r = XorShift(seed * 0x9E37_79B9_7F4A_7C15);
        for s in &base {
            let mut s = s.clone();
            mutate(&mut s, &mut r, 0);
            for o in &options {
                match compile(&s, o) {
                    Ok(c) => {
                        if let Err(e) = common::parser(c.lark()) {
                            // Budgets of the lexer or parser are typed refusals too; anything
                            // else means the emitter wrote a grammar munch cannot read.
                            assert!(
                                e.contains("budget") || e.contains("exceeds"),
                                "seed {seed}: {s}\n{e}\n{}",
                                c.lark()
                            );
                        }
                        compiled += 1;
                    }
                    Err(e) => {
                        refused += 1;
                        let why = e.to_string();
                        let key = why.split(':').next().unwrap_or_default().to_string();
                        *reasons.entry(key.chars().take(40).collect()).or_default() += 1;
                    }
                }
            }
        }
    }
    eprintln!("mutated schemas: {compiled} compiled, {refused} refused: {reasons:?}");
    assert!(compiled > 0);
}

/// A very long declared name beside additional properties is a typed refusal (its key regex
/// would nest a group per character), never a stack overflow; up to the limit it compiles.
#[test]
fn long_property_names_are_refused_with_a_typed_error() {
    for (n, ok) in [(80, true), (81, false), (200_000, false)] {
        let schema = json!({"type": "object", "properties": {"a".repeat(n): {}, "b": {}}});
        let result = compile(&schema, &SchemaOptions::default());
        assert_eq!(result.is_ok(), ok, "{n} characters");
        match result {
            // The grammar loads: the key regex is within the lexer's nesting limit.
            Ok(_) => drop(common::schema_parser(&schema, &SchemaOptions::default())),
            Err(err) => assert_eq!(err.keyword(), Some("properties"), "{err}"),
        }
    }
    let lenient = SchemaOptions {
        lenient: true,
        ..SchemaOptions::default()
    };
    let schema = json!({"properties": {"a".repeat(200_000): {}}});
    assert_eq!(compile(&schema, &lenient).unwrap().relaxations().len(), 1);
}
