//! The benchmark against the field: munch's maskers, llguidance, glrmask and XGrammar side by
//! side, on the same grammars, tokenizers and token sequences, in one run (cargo feature
//! `peers`; the `peers` binary drives it).
//!
//! - [`inputs`]: SynCode's JSON, SQL, Go and Java grammars; texts from munch's corpora and
//!   Debian's sources; token sequences by munch's `Vocabulary::encode`, within a step budget.
//! - [`adapt`]: adapted grammar copies (priorities dropped, lazy regexes made greedy, checked
//!   equal terminal by terminal) for engines that refuse the original.
//! - [`engines`]: each engine behind one [`trace::Session`]; [`trace`]: the teacher-forced loop.
//! - [`job`]: the files a worker reads and writes; [`run`]: the orchestrator, one worker process
//!   per (engine, grammar, tokenizer) under a time limit; [`schema_run`]: the JSON Schema
//!   workload on the same workers (each engine's own schema front end, labelled instances).
//! - [`stats`], [`results`]: the figures and the results file; [`table`]: the README section
//!   and `table.md`; [`plot`]: the plots.

pub mod adapt;
pub mod engines;
pub mod inputs;
pub mod job;
pub mod plot;
pub mod results;
pub mod run;
pub mod schema_run;
pub mod stats;
pub mod table;
pub mod trace;
pub mod xgrammar;
