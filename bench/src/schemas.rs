//! What the JSON Schema benchmarks (`schema_ttfm`, `schema_peers`) share: their arguments and
//! their percentile.

use munch::MaskerKind;

/// `SCHEMA.json... [--tokenizer NAME] [--masker NAME] [--runs N] [--background] [--lazy]`.
#[derive(Clone, Debug)]
pub struct SchemaArgs {
    /// The schema files.
    pub files: Vec<String>,
    /// A tokenizer name or `tokenizer.json` path (default `llama3`).
    pub tokenizer: String,
    /// munch's masker (default `trie`).
    pub masker: MaskerKind,
    /// Compiles of each schema from scratch (default 11).
    pub runs: usize,
    /// Build the masker in the background (`munch::Config::background`).
    pub background: bool,
    /// Build the wda on demand (`munch::Config::lazy`).
    pub lazy: bool,
}

impl SchemaArgs {
    /// Parses `args` (without the program name); the error says which argument is wrong.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<SchemaArgs, String> {
        let mut out = SchemaArgs {
            files: Vec::new(),
            tokenizer: "llama3".to_string(),
            masker: MaskerKind::Trie,
            runs: 11,
            background: false,
            lazy: false,
        };
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
            match a.as_str() {
                "--tokenizer" => out.tokenizer = value("--tokenizer")?,
                "--masker" => {
                    let name = value("--masker")?;
                    out.masker = name.parse().map_err(|e| format!("--masker: {e}"))?;
                }
                "--runs" => {
                    let n = value("--runs")?;
                    out.runs = n
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or(format!("--runs takes a positive count, not {n:?}"))?;
                }
                "--background" => out.background = true,
                "--lazy" => out.lazy = true,
                flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
                file => out.files.push(file.to_string()),
            }
        }
        if out.files.is_empty() {
            return Err("no schema files given".to_string());
        }
        Ok(out)
    }

    /// The program's arguments; on an error, says it with the usage and exits with status 2.
    pub fn from_env() -> SchemaArgs {
        SchemaArgs::parse(std::env::args().skip(1)).unwrap_or_else(|e| {
            eprintln!(
                "error: {e}\nusage: SCHEMA.json... [--tokenizer NAME] [--masker NAME] \
                 [--runs N] [--background] [--lazy]"
            );
            std::process::exit(2)
        })
    }
}

/// The nearest-rank percentile ([`munch::stats::nearest_rank`]) of `sorted` (ascending) at
/// `basis_points` (5000 is the median), for times in milliseconds; NaN when there are none.
pub fn percentile(sorted: &[f64], basis_points: u32) -> f64 {
    munch::stats::checked_nearest_rank(sorted, basis_points).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<SchemaArgs, String> {
        SchemaArgs::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn arguments_and_their_errors() {
        let a = parse(&[
            "a.json",
            "--masker",
            "wda",
            "--runs",
            "3",
            "--background",
            "b.json",
            "--lazy",
        ])
        .unwrap();
        assert_eq!(a.files, ["a.json", "b.json"]);
        assert_eq!(
            (a.masker, a.runs, a.background, a.lazy),
            (MaskerKind::Wda, 3, true, true)
        );
        assert!(!parse(&["a.json"]).unwrap().lazy);
        assert_eq!(a.tokenizer, "llama3");
        assert!(parse(&[]).unwrap_err().contains("no schema"));
        assert!(parse(&["a.json", "--runs", "0"])
            .unwrap_err()
            .contains("--runs"));
        assert!(parse(&["a.json", "--masker"])
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse(&["a.json", "--masker", "nope"])
            .unwrap_err()
            .contains("--masker"));
        assert!(parse(&["a.json", "--nope"]).unwrap_err().contains("--nope"));
    }

    #[test]
    fn percentiles_pick_samples() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!((percentile(&v, 5000), percentile(&v, 9900)), (3.0, 5.0));
        assert!(percentile(&[], 5000).is_nan());
    }
}
