//! The real-world-shaped schemas of `bench/schemas` (tool calls, API responses, records) all
//! compile exactly under the default options, and their grammars load.

mod common;

use munch_schema::{compile, SchemaOptions};

#[test]
fn bench_schemas_compile_and_load() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/schemas");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let c = compile(&schema, &SchemaOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        common::parser(c.lark()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        n += 1;
    }
    assert!(n >= 10, "only {n} schemas in {}", dir.display());
}
