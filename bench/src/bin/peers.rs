//! `peers`: munch's maskers against llguidance, glrmask and XGrammar, in one run.
//!
//! ```sh
//! cargo run --release -p munch-bench --features peers --bin peers -- --out bench/results
//! cargo run --release -p munch-bench --features peers --bin peers -- \
//!     --readme-from bench/results/peers.json   # tables, plots and README section only
//! ```
//!
//! Writes `OUT/peers.json` (every figure), `OUT/table.md` (the README's table and mask latency
//! by vocabulary size) and the plots (`OUT/cdf-GRAMMAR.{svg,png}`, `OUT/mask-vs-vocab.{svg,png}`).
//! Progress goes to stderr.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use munch_bench::peers::inputs::{self, Budget};
use munch_bench::peers::job::read_json;
use munch_bench::peers::results::Results;
use munch_bench::peers::run::{self, Config};
use munch_bench::peers::{engines, plot, table};

/// munch's maskers against llguidance, glrmask and XGrammar on SynCode's grammars.
#[derive(Parser)]
#[command(name = "peers")]
struct Args {
    /// Where to write results, plots and work files.
    #[arg(long, default_value = "bench/results")]
    out: PathBuf,
    /// Grammars (SynCode's): json, sql, go, java.
    #[arg(long, value_delimiter = ',', default_values_t = inputs::GRAMMARS.iter().map(|s| s.to_string()))]
    grammars: Vec<String>,
    /// Tokenizers: llama2 (32k), llama3 (128k), qwen3 (152k), gemma3 (262k).
    #[arg(long, value_delimiter = ',', default_values_t = inputs::TOKENIZERS.iter().map(|s| s.to_string()))]
    tokenizers: Vec<String>,
    /// Engines (default: all munch maskers compiled in, then llguidance, llguidance-noslicer,
    /// glrmask, xgrammar; `munch-NAME-bg` builds NAME in the background, `munch-wda-lazy` builds
    /// the wda on demand).
    #[arg(long, value_delimiter = ',')]
    engines: Vec<String>,
    /// Texts per grammar.
    #[arg(long, default_value_t = 4)]
    max_files: usize,
    /// Largest Go or Java file taken, bytes.
    #[arg(long, default_value_t = 6000)]
    max_file_bytes: u64,
    /// Tokens per text (longer texts are cut; a cut text's end is not checked).
    #[arg(long, default_value_t = 500)]
    max_tokens_per_text: usize,
    /// Tokens per (grammar, tokenizer) over all its texts.
    #[arg(long, default_value_t = 500)]
    max_tokens: usize,
    /// Time limit of one engine on one grammar and tokenizer (build and trace), seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Regenerate the tables, README section and plots from this results file; run nothing.
    #[arg(long, value_name = "PEERS_JSON")]
    readme_from: Option<PathBuf>,
    /// The README whose `<!-- peers:begin -->`…`<!-- peers:end -->` section gets the table
    /// (with --readme-from, or after a run with --update-readme).
    #[arg(long, default_value = "README.md")]
    readme: PathBuf,
    /// After a run, also replace the README's section.
    #[arg(long)]
    update_readme: bool,
    /// Internal: run one job (JOB RESULT) in this process.
    #[arg(long, num_args = 2, value_names = ["JOB", "RESULT"], hide = true)]
    worker: Option<Vec<PathBuf>>,
}

fn main() -> ExitCode {
    munch::alloc::configure();
    let args = Args::parse();
    match run_main(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peers: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_main(args: Args) -> Result<(), String> {
    if let Some(paths) = &args.worker {
        return run::worker(&paths[0], &paths[1]);
    }
    if let Some(from) = &args.readme_from {
        let results: Results = read_json(from)?;
        let dir = from.parent().map(PathBuf::from).unwrap_or_default();
        publish(&results, &dir)?;
        return update_readme(&results, &args.readme);
    }
    let available = engines::available();
    let engines = if args.engines.is_empty() {
        // The background builds are for grammars per request (the schema workload).
        available
            .iter()
            .filter(|e| !e.ends_with("-bg"))
            .cloned()
            .collect()
    } else {
        args.engines.clone()
    };
    for e in &engines {
        if !available.contains(e) {
            return Err(format!(
                "unknown engine {e:?}; this build has {}",
                available.join(", ")
            ));
        }
    }
    let config = Config {
        out: args.out.clone(),
        grammars: args.grammars.clone(),
        tokenizers: args.tokenizers.clone(),
        engines,
        max_files: args.max_files,
        max_file_bytes: args.max_file_bytes,
        budget: Budget {
            max_tokens_per_text: args.max_tokens_per_text,
            max_tokens: args.max_tokens,
        },
        timeout: Duration::from_secs(args.timeout),
    };
    eprintln!(
        "peers: {} engines × {} grammars × {} tokenizers; at most {} texts per grammar, {} \
         tokens per text, {} tokens per grammar and tokenizer, {} s per run",
        config.engines.len(),
        config.grammars.len(),
        config.tokenizers.len(),
        config.max_files,
        config.budget.max_tokens_per_text,
        config.budget.max_tokens,
        args.timeout
    );
    let results = run::run(&config)?;
    let json = args.out.join("peers.json");
    write_json_pretty(&json, &results)?;
    eprintln!("peers: wrote {}", json.display());
    publish(&results, &args.out)?;
    if args.update_readme {
        update_readme(&results, &args.readme)?;
    }
    Ok(())
}

/// Writes the tables and the plots next to the results.
fn publish(results: &Results, dir: &std::path::Path) -> Result<(), String> {
    let md = table::table_md(results);
    let path = dir.join("table.md");
    std::fs::write(&path, &md).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("peers: wrote {}", path.display());
    match plot::write_all(results, dir) {
        Ok(files) => {
            for f in files {
                eprintln!("peers: wrote {}", f.display());
            }
        }
        // Plots are a view of the results: report, and keep the results.
        Err(e) => eprintln!("peers: no plots: {e}"),
    }
    print!("{md}");
    Ok(())
}

/// Replaces the README's generated section (a quick read-modify-write).
fn update_readme(results: &Results, readme: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(readme).map_err(|e| format!("{}: {e}", readme.display()))?;
    let new = table::replace_between_markers(&text, &table::readme_section(results))?;
    std::fs::write(readme, new).map_err(|e| format!("{}: {e}", readme.display()))?;
    eprintln!("peers: updated {}", readme.display());
    Ok(())
}

fn write_json_pretty(path: &std::path::Path, results: &Results) -> Result<(), String> {
    let text = serde_json::to_string_pretty(results).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}
