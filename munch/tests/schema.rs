//! JSON Schema and regex grammars through the front door: `Grammar::from_json_schema`,
//! `Grammar::from_regex`, `schema:`/`regex:` arguments, and every masker equal to the oracle's
//! masks along valid instances.

// Names the default maskers and SynCode's grammars.
#![cfg(all(feature = "trie", feature = "spanner", feature = "wda"))]

use std::sync::Arc;

use munch::{
    CompileErrorKind, Compiled, Config, Grammar, MaskerKind, PropertyOrder, SchemaOptions,
    TokenMask, Vocabulary,
};
use munch_testkit::vocab::{every_byte, with_eos};
use serde_json::json;

fn vocab() -> Arc<Vocabulary> {
    let words = [
        "{\"", "\": ", "\":", "true", "null", ", ", ",\"", "\"}", "[1", "]}", "name",
    ];
    let mut tokens = every_byte();
    tokens.extend(words.map(|t| Some(t.as_bytes().to_vec())));
    with_eos(tokens)
}

/// A tool call's arguments, the schema the Python tests use too.
fn tool_call() -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tool_call.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn accepts(compiled: &Compiled, text: &str) -> bool {
    let mut m = compiled.matcher();
    m.accept_string(text).is_ok() && m.is_accepting()
}

#[test]
fn schemas_compile_from_text_or_value() {
    let o = SchemaOptions::default();
    let a = Grammar::from_json_schema(tool_call(), &o).unwrap();
    let b = Grammar::from_json_schema(tool_call().to_string().as_str(), &o).unwrap();
    assert_eq!(a.text(), b.text());
    let config = Config::new().masker(MaskerKind::Trie).fallback(None);
    let c = Compiled::new(&a, vocab(), &config).unwrap();
    assert!(accepts(
        &c,
        r#"{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}"#
    ));
    assert!(!accepts(
        &c,
        r#"{"name": "get_weather", "arguments": {"city": "Oslo", "days": 15}}"#
    ));
    assert!(!accepts(
        &c,
        r#"{"arguments": {"city": "Oslo"}, "name": "get_weather"}"#
    ));
    let any = SchemaOptions {
        property_order: PropertyOrder::Any,
        ..SchemaOptions::default()
    };
    let g = Grammar::from_json_schema(tool_call(), &any).unwrap();
    let c = Compiled::new(&g, vocab(), &config).unwrap();
    assert!(accepts(
        &c,
        r#"{"arguments": {"city": "Oslo"}, "name": "get_weather"}"#
    ));
}

#[test]
fn intersections_in_the_lexer_need_the_schema_not_its_text() {
    // A tag key: too large an intersection to write as a regex, so the lexer takes it.
    let schema = json!({"type": "string", "pattern": "^(?!aws:)[a-z:]+$", "maxLength": 128});
    let g = Grammar::from_json_schema(schema, &SchemaOptions::default()).unwrap();
    assert!(String::from_utf8_lossy(g.text()).contains("__munch_meet_"));
    let config = Config::new().masker(MaskerKind::Trie).fallback(None);
    let c = Compiled::new(&g, vocab(), &config).unwrap();
    assert!(accepts(&c, &format!("\"{}\"", "a".repeat(128))));
    assert!(!accepts(&c, &format!("\"{}\"", "a".repeat(129))));
    assert!(!accepts(&c, r#""aws:x""#));
    // Its Lark text loaded as a hand-written grammar is refused (read as plain groups, the
    // terminal would take more than the schema).
    let Err(err) = Compiled::new(&Grammar::lark_bytes(g.text().to_vec()), vocab(), &config) else {
        panic!("the schema's text loaded as a hand-written grammar");
    };
    assert!(err.to_string().contains("reserved"), "{err}");
}

#[test]
fn schema_errors_name_keyword_and_pointer() {
    let err = Grammar::from_json_schema(
        json!({"items": {"not": {"multipleOf": 3}}}),
        &SchemaOptions::default(),
    )
    .unwrap_err();
    match err.kind() {
        CompileErrorKind::Schema(e) => {
            assert_eq!(e.keyword(), Some("not"));
            assert_eq!(e.pointer(), "/items/not");
        }
        k => panic!("{k:?}"),
    }
    let lenient = SchemaOptions {
        lenient: true,
        ..SchemaOptions::default()
    };
    let g =
        Grammar::from_json_schema(json!({"items": {"not": {"multipleOf": 3}}}), &lenient).unwrap();
    assert_eq!(g.relaxations().len(), 1);
    assert!(Grammar::from_json_schema("{", &SchemaOptions::default()).is_err());
}

/// A string whose constraints pass the lexer's budgets (a `maxLength` of thousands of
/// characters beside others) is refused at its subschema, named by pointer and keyword, and
/// not by a line of the generated Lark text; other grammars keep their file's location.
#[test]
fn lexer_budgets_name_the_subschema() {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "maxLength": 8},
            "body": {"type": "string", "maxLength": 5000}
        },
        "required": ["id", "body"],
        "additionalProperties": false
    });
    let g = Grammar::from_json_schema(schema, &SchemaOptions::default()).unwrap();
    let err = g.build_parser(&Default::default()).unwrap_err();
    match err.kind() {
        CompileErrorKind::SchemaLexer { origins, .. } => {
            assert_eq!(origins.len(), 1);
            assert_eq!(origins[0].pointer, "/properties/body");
            assert_eq!(origins[0].keywords, ["maxLength"]);
        }
        k => panic!("{k:?}"),
    }
    let message = err.to_string();
    assert!(
        message.starts_with("<schema>: `maxLength` at #/properties/body: "),
        "{message}"
    );
    assert!(message.contains("NFA budget"), "{message}");
    // Counted strings beside a format: the DFA over both passes its state budget, which
    // names no terminal; the error lists the subschemas whose strings keywords shape.
    let mut paired = json!({
        "type": "object",
        "properties": {
            "h": {"type": "string", "format": "hostname"},
            "s": {"type": "string", "maxLength": 3000}
        },
        "required": ["h", "s"],
        "additionalProperties": false
    });
    // Six more subschemas with shaped strings, named after the two that count or spell.
    for i in 0..6 {
        paired["properties"][format!("e{i}")] = json!({"enum": [format!("v{i}")]});
    }
    let g = Grammar::from_json_schema(paired, &SchemaOptions::default()).unwrap();
    let err = g.build_parser(&Default::default()).unwrap_err();
    match err.kind() {
        CompileErrorKind::SchemaLexer { origins, .. } => {
            let at: Vec<&str> = origins.iter().map(|o| o.pointer.as_str()).collect();
            assert_eq!(at.len(), 8);
            assert_eq!(at[..2], ["/properties/s", "/properties/h"]);
        }
        k => panic!("{k:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("<schema>: `maxLength` at #/properties/s; `format` at #/properties/h; "),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("; 2 more: the lexer of their strings"),
        "{err}"
    );
    // The same strings under a shorter bound build.
    let short = json!({"type": "string", "maxLength": 50});
    let g = Grammar::from_json_schema(short, &SchemaOptions::default()).unwrap();
    assert!(g.build_parser(&Default::default()).is_ok());
    // A Lark grammar's lexer error stays located in its text.
    let lark = Grammar::lark("start: A\nA: /[^\\x00]{1,40000}/\n").with_name("g.lark");
    let err = lark.build_parser(&Default::default()).unwrap_err();
    assert!(matches!(err.kind(), CompileErrorKind::Parser(_)), "{err}");
    assert!(err.to_string().starts_with("g.lark:2:"), "{err}");
}

#[test]
fn arguments_name_schemas_and_regexes() {
    let dir = std::env::temp_dir().join(format!("munch-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tool.json");
    std::fs::write(&path, tool_call().to_string()).unwrap();
    let g = Grammar::from_arg(&format!("schema:{}", path.display())).unwrap();
    assert!(g.name().starts_with("schema:"));
    let config = Config::new().masker(MaskerKind::Trie).fallback(None);
    let c = Compiled::new(&g, vocab(), &config).unwrap();
    assert!(accepts(
        &c,
        r#"{"name":"get_weather","arguments":{"city":"x"}}"#
    ));
    let r = Grammar::from_arg(r"regex:[0-9]{3}-[a-z]+").unwrap();
    let c = Compiled::new(&r, vocab(), &config).unwrap();
    assert!(accepts(&c, "123-abc"));
    assert!(!accepts(&c, "123-"));
    assert!(Grammar::from_arg("schema:/nonexistent.json").is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every masker of the build gives the oracle's mask at every byte of valid instances.
#[test]
fn maskers_equal_the_oracle_along_instances() {
    let texts = [
        r#"{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "celsius", "days": 14}}"#,
        r#"{"name":"get_weather","arguments":{"city":"a\"b"}}"#,
    ];
    let g = Grammar::from_json_schema(tool_call(), &SchemaOptions::default()).unwrap();
    let v = vocab();
    let oracle = Compiled::new(&g, v.clone(), &Config::new().masker(MaskerKind::Oracle)).unwrap();
    for kind in [MaskerKind::Trie, MaskerKind::Spanner, MaskerKind::Wda] {
        let c = match Compiled::new(&g, v.clone(), &Config::new().masker(kind).fallback(None)) {
            Ok(c) => c,
            Err(e) if matches!(e.kind(), CompileErrorKind::MaskerNotCompiled { .. }) => continue,
            Err(e) => panic!("{kind}: {e}"),
        };
        for text in texts {
            let (mut a, mut b) = (oracle.matcher(), c.matcher());
            for (i, byte) in text.bytes().enumerate() {
                let (ma, mb): (TokenMask, TokenMask) = (a.next_token_mask(), b.next_token_mask());
                assert_eq!(
                    ma,
                    mb,
                    "{kind} differs from the oracle after {:?}",
                    &text[..i]
                );
                a.accept_bytes(&[byte]).unwrap();
                b.accept_bytes(&[byte]).unwrap();
            }
            assert_eq!(
                a.next_token_mask(),
                b.next_token_mask(),
                "{kind} at the end of {text}"
            );
            assert!(b.is_accepting());
        }
    }
}
