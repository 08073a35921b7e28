//! Where a schema's parser build goes, phase by phase (medians over runs, µs): the schema →
//! Lark text, loading the text, normalising, the lexer DFA, the LR tables.
//!
//! `cargo run --release -p munch-bench --example schema_phases -- SCHEMA.json... [--runs N]`

// Links the benchmarks' library, which sets the allocator (mimalloc, as munch's binaries).
use munch_bench as _;
use std::time::Instant;

use munch_glr::cfg::{normalize, NormalizeConfig};
use munch_glr::lr::{LrConfig, LrTables};
use munch_lexer::dfa::{Lexer, LexerConfig};

fn main() {
    munch::alloc::configure();
    let mut files = Vec::new();
    let mut runs = 21;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--runs" {
            runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N");
        } else {
            files.push(a);
        }
    }
    println!(
        "{:<22} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "schema", "lark", "load", "norm", "lexer", "lr", "states"
    );
    for f in files {
        let text = std::fs::read_to_string(&f).expect("schema file");
        let mut t = vec![Vec::new(); 5];
        let mut states = 0;
        for _ in 0..runs {
            let c0 = Instant::now();
            let compiled =
                munch_schema::compile_str(&text, &munch_schema::SchemaOptions::default())
                    .expect("compiles");
            let c1 = Instant::now();
            // As `Grammar::from_json_schema` loads it: intersection groups read as such.
            let load = munch_glr::lark::LoadConfig {
                meets: true,
                ..Default::default()
            };
            let g = munch_glr::lark::load(compiled.lark().as_bytes(), &load).expect("loads");
            let c2 = Instant::now();
            let cfg = normalize(&g, &NormalizeConfig::default()).expect("normalises");
            let c3 = Instant::now();
            let lexer =
                Lexer::from_specs(g.terminal_specs(), &LexerConfig::default()).expect("lexer");
            let c4 = Instant::now();
            let _tables = LrTables::build(&cfg, &LrConfig::default()).expect("tables");
            let c5 = Instant::now();
            states = lexer.state_len();
            for (i, (a, b)) in [(c0, c1), (c1, c2), (c2, c3), (c3, c4), (c4, c5)]
                .into_iter()
                .enumerate()
            {
                t[i].push((b - a).as_secs_f64() * 1e6);
            }
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let name = std::path::Path::new(&f)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        println!(
            "{:<22} {:>8.0} {:>8.0} {:>8.0} {:>8.0} {:>8.0} {:>8}",
            name,
            med(&mut t[0]),
            med(&mut t[1]),
            med(&mut t[2]),
            med(&mut t[3]),
            med(&mut t[4]),
            states
        );
    }
}
