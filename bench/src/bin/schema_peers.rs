//! `schema_peers`: the JSON Schema workload — munch's maskers, llguidance, glrmask and XGrammar,
//! each with its own JSON Schema front end, on `bench/schemas/` and their labelled instances
//! (`bench/schema_instances.py`), in one run.
//!
//! ```sh
//! cargo run --release -p munch-bench --features peers --bin schema_peers -- --tokenizers llama3
//! ```
//!
//! Writes `OUT/schemas.json` (every run) and `OUT/schemas.md` (per engine: schemas compiled,
//! build and time to first mask, mask latency, valid accepted and invalid rejected). Progress
//! goes to stderr.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use munch_bench::peers::engines;
use munch_bench::peers::run;
use munch_bench::peers::schema_run::{self, SchemaConfig};

/// The JSON Schema workload: every engine on the same schemas and labelled instances.
#[derive(Parser)]
#[command(name = "schema_peers")]
struct Args {
    /// Where to write results and work files.
    #[arg(long, default_value = "bench/results")]
    out: PathBuf,
    /// The folder of schemas, with their instances in `instances/`.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/schemas"))]
    schemas: PathBuf,
    /// Tokenizers.
    #[arg(long, value_delimiter = ',', default_value = "llama3")]
    tokenizers: Vec<String>,
    /// Engines (default: munch's trie and wda, the wda built in the background, llguidance,
    /// glrmask, xgrammar).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "munch-trie,munch-wda,munch-wda-bg,llguidance,glrmask,xgrammar"
    )]
    engines: Vec<String>,
    /// Time limit of one engine on one schema (build and trace), seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Internal: run one job (JOB RESULT) in this process.
    #[arg(long, num_args = 2, value_names = ["JOB", "RESULT"], hide = true)]
    worker: Option<Vec<PathBuf>>,
}

fn main() -> ExitCode {
    munch::alloc::configure();
    match run_main(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("schema_peers: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_main(args: Args) -> Result<(), String> {
    if let Some(paths) = &args.worker {
        return run::worker(&paths[0], &paths[1]);
    }
    let available = engines::available();
    if let Some(e) = args.engines.iter().find(|e| !available.contains(e)) {
        return Err(format!(
            "unknown engine {e:?}; this build has {}",
            available.join(", ")
        ));
    }
    let config = SchemaConfig {
        out: args.out.clone(),
        schemas: args.schemas.clone(),
        tokenizers: args.tokenizers.clone(),
        engines: args.engines.clone(),
        timeout: Duration::from_secs(args.timeout),
    };
    let runs = schema_run::run(&config)?;
    let summaries = schema_run::summarise(&runs);
    let json = args.out.join("schemas.json");
    let text = serde_json::to_string_pretty(&runs.results).map_err(|e| e.to_string())?;
    std::fs::write(&json, text + "\n").map_err(|e| format!("{}: {e}", json.display()))?;
    let md = schema_run::summary_md(&runs.results, &summaries);
    let path = args.out.join("schemas.md");
    std::fs::write(&path, &md).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!(
        "schema_peers: wrote {} and {}",
        json.display(),
        path.display()
    );
    print!("{md}");
    Ok(())
}
