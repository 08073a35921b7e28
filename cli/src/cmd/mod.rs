//! One module per subcommand. Each `run` returns the exit code, or a usage/input error that
//! `main` prints and turns into exit code 2.

use std::sync::Arc;

use munch::glr::parser::ParserConfig;
use munch::{Compiled, Config, Grammar, Vocabulary};

pub mod check;
pub mod compile;
pub mod demo;
pub mod generate;
pub mod parse;
pub mod trace;
pub mod vocab;

/// How a command reads its grammar: start rules and where `%import`s are found (flattened into
/// every command that takes a grammar).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct GrammarOpts {
    /// A start rule (repeat for several, as Lark's `start=[...]`; default `start`).
    #[arg(long = "start", value_name = "RULE")]
    pub start: Vec<String>,
    /// A folder searched for `%import`ed grammar files (repeatable; Lark's `import_paths`).
    #[arg(long = "import-path", value_name = "DIR")]
    pub import_path: Vec<std::path::PathBuf>,
    /// The `lark/grammars` folder of an installed lark package, for `%import python` and
    /// `%import lark` (default: $MUNCH_LARK_GRAMMARS, else munch's cached lark-venv).
    #[arg(long = "lark-grammars", value_name = "DIR")]
    pub lark_grammars: Option<std::path::PathBuf>,
    /// A post-lexer, as Lark's `postlex=`: `python` is Lark's PythonIndenter (`_NEWLINE` or
    /// `_NL`, `%declare _INDENT _DEDENT`), for Python grammars.
    #[arg(long = "postlex", value_name = "NAME", value_parser = parse_postlex)]
    pub postlex: Option<munch::Postlex>,
    /// The most bytes of grammar text, imported files included (default 4 MiB); a larger
    /// grammar is refused before it is parsed.
    #[arg(long = "max-grammar-bytes", value_name = "BYTES")]
    pub max_grammar_bytes: Option<usize>,
    /// Read a literal that ties with a regex (a keyword that `NAME` also matches) as the
    /// literal everywhere, as Lark's basic lexer does, not as the regex where the parser
    /// cannot take the literal (Lark's contextual lexer, the default): keywords stay reserved,
    /// and the eager wda builds faster. A literal that spells copies of a shorter one (`...`)
    /// then stays itself everywhere too.
    #[arg(long = "reserved-literals")]
    pub reserved_literals: bool,
    /// Resolve every shift/reduce conflict by shifting, as Lark's LALR parser does: a text
    /// that needs the reduction is refused, as in Lark. By default the GLR parser keeps both
    /// and takes the grammar's whole language (`munch check --conflicts` lists them).
    #[arg(long = "prefer-shift")]
    pub prefer_shift: bool,
    #[command(flatten)]
    pub budgets: ParserBudgets,
}

/// The parser's build and commit budgets (`ParserConfig`), on every command that builds one: a
/// grammar or text past a budget is an error naming it.
#[derive(clap::Args, Clone, Debug)]
pub struct ParserBudgets {
    /// The most states the lexer DFA's construction may create.
    #[arg(long, value_name = "N", default_value_t = ParserConfig::default().lexer.max_states)]
    pub max_lexer_states: usize,
    /// The most states of the LR automaton.
    #[arg(long, value_name = "N", default_value_t = ParserConfig::default().max_lr_states)]
    pub max_lr_states: usize,
    /// The most entries the LR tables may store (shifts, gotos, reductions and their
    /// lookahead sets).
    #[arg(long, value_name = "N", default_value_t = ParserConfig::default().max_lr_actions)]
    pub max_lr_actions: usize,
    /// The most live parser heads (stack node × lexer state) after any byte.
    #[arg(long, value_name = "N", default_value_t = ParserConfig::default().max_heads)]
    pub max_heads: usize,
    /// The most stack nodes one byte may build.
    #[arg(long, value_name = "N", default_value_t = ParserConfig::default().max_nodes_per_step)]
    pub max_nodes_per_step: usize,
    /// The parser's work budget per commit (reduction items and GSS edges walked; `parse`
    /// commits a file at once, the mask commands a token at a time).
    #[arg(long, value_name = "N", default_value_t = ParserConfig::default().max_work_per_commit)]
    pub max_work_per_commit: usize,
    /// The most commits the parser keeps for rollback (older history is dropped, so memory
    /// stays bounded on long texts).
    #[arg(long, value_name = "N", default_value_t = ParserConfig::default().max_rollback)]
    pub max_rollback: usize,
}

impl Default for ParserBudgets {
    fn default() -> Self {
        ParserBudgets::from(&ParserConfig::default())
    }
}

impl From<&ParserConfig> for ParserBudgets {
    fn from(c: &ParserConfig) -> Self {
        ParserBudgets {
            max_lexer_states: c.lexer.max_states,
            max_lr_states: c.max_lr_states,
            max_lr_actions: c.max_lr_actions,
            max_heads: c.max_heads,
            max_nodes_per_step: c.max_nodes_per_step,
            max_work_per_commit: c.max_work_per_commit,
            max_rollback: c.max_rollback,
        }
    }
}

impl ParserBudgets {
    /// The parser configuration with these budgets (the rest at its defaults).
    pub fn config(&self) -> ParserConfig {
        let mut c = ParserConfig {
            max_lr_states: self.max_lr_states,
            max_lr_actions: self.max_lr_actions,
            max_heads: self.max_heads,
            max_nodes_per_step: self.max_nodes_per_step,
            max_work_per_commit: self.max_work_per_commit,
            max_rollback: self.max_rollback,
            ..ParserConfig::default()
        };
        c.lexer.max_states = self.max_lexer_states;
        c
    }
}

/// `--postlex NAME`.
fn parse_postlex(name: &str) -> Result<munch::Postlex, String> {
    munch::Postlex::from_name(name)
        .ok_or_else(|| format!("unknown post-lexer `{name}` (known: none, python)"))
}

impl GrammarOpts {
    /// The grammar `arg` names, read with these options.
    pub fn grammar(&self, arg: &str) -> Result<Grammar, CliError> {
        let mut g = Grammar::from_arg(arg)?.with_starts(self.start.iter().cloned());
        for dir in &self.import_path {
            g = g.with_import_path(dir.clone());
        }
        if let Some(dir) = &self.lark_grammars {
            g = g.with_lark_grammars(dir.clone());
        }
        if let Some(postlex) = self.postlex {
            g = g.with_postlex(postlex);
        }
        if let Some(bytes) = self.max_grammar_bytes {
            g = g.with_max_grammar_bytes(bytes);
        }
        if self.reserved_literals {
            g = g.with_contextual_literals(false);
        }
        if self.prefer_shift {
            g = g.with_prefer_shift(true);
        }
        Ok(g)
    }
}

/// The grammar a command reads, and how it reads it (flattened into the commands whose first
/// argument is a grammar).
#[derive(clap::Args, Clone, Debug)]
pub struct GrammarArg {
    /// A grammar: a Lark file, `builtin:NAME`, `syncode:NAME`, `schema:FILE.json` (a JSON Schema) or
    /// `regex:PATTERN`.
    pub grammar: String,
    #[command(flatten)]
    pub opts: GrammarOpts,
}

impl GrammarArg {
    /// The grammar named, read with the options (not yet loaded).
    pub fn named(&self) -> Result<Grammar, CliError> {
        self.opts.grammar(&self.grammar)
    }

    /// The parser's configuration: the budgets given (the post-lexer comes with the grammar).
    pub fn parser_config(&self) -> ParserConfig {
        self.opts.budgets.config()
    }
}

/// A grammar and the tokenizer its masks are over: what the mask commands (`compile`,
/// `generate`, `trace`) read first.
#[derive(clap::Args, Clone, Debug)]
pub struct MaskArgs {
    #[command(flatten)]
    pub grammar: GrammarArg,
    /// The tokenizer: a `tokenizer.json` path, or one of llama2, llama3, qwen3, gemma3, gptoss.
    #[arg(long)]
    pub tokenizer: String,
}

impl MaskArgs {
    /// The grammar (not yet loaded; named errors first) and the tokenizer's vocabulary.
    pub fn load(&self) -> Result<(Grammar, Arc<Vocabulary>), CliError> {
        let grammar = self.grammar.named()?;
        Ok((grammar, Arc::new(Vocabulary::load(&self.tokenizer)?)))
    }
}

/// An error that ends a command with exit code 2 (bad usage, bad grammar, unreadable input).
pub type CliError = Box<dyn std::error::Error>;

/// Compiles `grammar` for `vocab` as `config` says; when the fallback masker was built instead
/// of the one asked for, says so on stderr.
pub fn compile(
    grammar: &Grammar,
    vocab: Arc<Vocabulary>,
    config: &Config,
) -> Result<Compiled, CliError> {
    let compiled = Compiled::new(grammar, vocab, config)?;
    if let Some(fell) = compiled.fell_back() {
        eprintln!("munch: {fell}");
    }
    Ok(compiled)
}

/// Reads at most `limit` bytes of `path`: a longer input is an error naming the limit.
pub fn read_bounded(path: &std::path::Path, limit: u64) -> Result<Vec<u8>, String> {
    munch::vocab::read_bounded(path, limit).map_err(|e| match e {
        munch::vocab::ReadError::TooLong { limit } => {
            format!("the input is longer than {limit} bytes (--max-input-bytes)")
        }
        e => e.to_string(),
    })
}
