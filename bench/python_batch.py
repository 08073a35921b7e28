"""Batch fill from Python: munch beside XGrammar and llguidance, one run.

    ~/.cache/munch/venv/bin/python bench/python_batch.py [--steps 48] [--batches 32,64,128] [--threads 1,2]

(``pip install xgrammar llguidance`` into the venv first; an engine that does not import is
left out with the reason.) One grammar (SynCode's JSON grammar, as in munch's peers benchmark,
or with ``--grammar json`` munch's own ``grammars/json.lark``; each engine reads the Lark text
with its own front end), one tokenizer (Llama 3, ``~/.cache/munch/tokenizers/llama3``:
munch and llguidance read its ``tokenizer.json``, XGrammar gets munch's token bytes as a RAW
vocabulary) and the same texts (the JSON files of ``grammars/corpus/json`` of at least 100
tokens, tokenized once by munch).

A batch of B sequences: sequence ``i`` walks text ``i % T`` from its own offset. Every engine's
matchers first accept the same prefix; then, for ``--steps`` steps, the B rows of one ``int32``
bitmask ``[B, ceil(V / 32)]`` are filled in one call (timed) and each sequence accepts its next
token (not timed). The calls timed are

- munch: ``munch.fill_next_token_bitmask_batch(matchers, bitmask, threads=N)``;
- XGrammar: ``BatchGrammarMatcher(max_threads=N).batch_fill_next_token_bitmask(matchers,
  bitmask)``;
- llguidance: ``llguidance.numpy.fill_next_token_bitmask_par(LLExecutor(num_threads=N),
  [(matcher, row), ...], bitmask)``.

Each (engine, B, N) walks the steps twice: once to warm up (lazily built tables, thread pools),
once timed. Rows are compared with munch's at every timed step, on the ids that are not
special tokens; the engines differ on purpose in one place: munch allows the whitespace the
grammar ignores (``%ignore WS``) before the first token and after a complete value, XGrammar
and llguidance do not (so rows at those steps differ). Prints a markdown table of the
per-step batch fill time: median, p90, p99 and max over the steps, and the median per sequence.
"""

from __future__ import annotations

import argparse
import glob
import os
import platform
import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np

import munch

ROOT = Path(__file__).resolve().parents[1]
LLAMA3 = Path(
    os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
) / "munch" / "tokenizers" / "llama3" / "tokenizer.json"


def percentile(sorted_ns: List[int], q: float) -> float:
    """The nearest-rank percentile, in microseconds."""
    k = min(len(sorted_ns) - 1, max(0, int(round(q * len(sorted_ns) + 0.5)) - 1))
    return sorted_ns[k] / 1000.0


class Engine:
    """One library's matchers for a batch, and its timed batch fill."""

    name = ""

    def start(self, prefixes: List[List[int]], threads: int) -> None:
        raise NotImplementedError

    def fill(self, bitmask: np.ndarray) -> None:
        raise NotImplementedError

    def accept(self, tokens: List[int]) -> None:
        raise NotImplementedError


class Munch(Engine):
    def __init__(self, compiled: "munch.CompiledGrammar") -> None:
        self.compiled = compiled
        self.name = f"munch {munch.__version__} ({compiled.masker})"

    def start(self, prefixes, threads):
        self.threads = threads
        self.matchers = []
        for p in prefixes:
            m = munch.Matcher(self.compiled)
            assert m.accept_tokens(p)
            self.matchers.append(m)

    def fill(self, bitmask):
        munch.fill_next_token_bitmask_batch(self.matchers, bitmask, threads=self.threads)

    def accept(self, tokens):
        for m, t in zip(self.matchers, tokens):
            assert m.accept_token(t)


class XGrammar(Engine):
    def __init__(self, grammar_text: str, tokenizer: "munch.Tokenizer") -> None:
        import xgrammar as xgr
        from importlib.metadata import version

        self.xgr = xgr
        self.name = f"xgrammar {version('xgrammar')}"
        # Special tokens have no bytes: an empty entry, which XGrammar treats as special.
        encoded = [tokenizer.token_bytes(i) or b"" for i in range(len(tokenizer))]
        info = xgr.TokenizerInfo(
            encoded,
            vocab_type=xgr.VocabType.RAW,
            vocab_size=tokenizer.vocab_size,
            stop_token_ids=tokenizer.eos_token_ids,
        )
        compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        grammar = xgr.Grammar.from_lark(grammar_text, tokenizer_info=info)
        self.compiled = compiler.compile_grammar(grammar)

    def start(self, prefixes, threads):
        self.batch = self.xgr.BatchGrammarMatcher(max_threads=threads)
        self.matchers = []
        for p in prefixes:
            m = self.xgr.GrammarMatcher(self.compiled)
            for t in p:
                assert m.accept_token(t)
            self.matchers.append(m)

    def fill(self, bitmask):
        self.batch.batch_fill_next_token_bitmask(self.matchers, bitmask)

    def accept(self, tokens):
        for m, t in zip(self.matchers, tokens):
            assert m.accept_token(t)


class LLGuidance(Engine):
    def __init__(self, grammar_text: str, tokenizer_json: str) -> None:
        import llguidance
        import llguidance.numpy as llnp
        from importlib.metadata import version

        self.ll, self.llnp = llguidance, llnp
        self.name = f"llguidance {version('llguidance')}"
        self.tok = llguidance.LLTokenizer(tokenizer_json)
        self.grammar = llguidance.LLMatcher.grammar_from_lark(grammar_text)

    def start(self, prefixes, threads):
        self.executor = self.ll.LLExecutor(num_threads=threads)
        self.matchers = []
        for p in prefixes:
            m = self.ll.LLMatcher(self.tok, self.grammar, log_level=0)
            assert not m.is_error(), m.get_error()
            assert m.consume_tokens(p), m.get_error()
            self.matchers.append(m)
        self.rows = [(m, i) for i, m in enumerate(self.matchers)]

    def fill(self, bitmask):
        self.llnp.fill_next_token_bitmask_par(self.executor, self.rows, bitmask)

    def accept(self, tokens):
        for m, t in zip(self.matchers, tokens):
            assert m.consume_token(t), m.get_error()


def walks(texts: List[List[int]], batch: int, steps: int) -> List[Tuple[List[int], List[int]]]:
    """Each sequence's prefix and the ``steps`` tokens it then accepts."""
    out = []
    for i in range(batch):
        t = texts[i % len(texts)]
        room = len(t) - steps
        start = (i // len(texts) * 37 + i * 11) % (room + 1)
        out.append((t[:start], t[start : start + steps]))
    return out


def run(
    engine: Engine,
    plan: List[Tuple[List[int], List[int]]],
    threads: int,
    width: int,
    reference: Optional[List[np.ndarray]],
    keep: np.ndarray,
) -> Tuple[List[int], List[np.ndarray], int]:
    """Warm-up walk, then the timed walk: per-step times (ns), the masks, disagreeing rows."""
    bitmask = np.zeros((len(plan), width), dtype=np.int32)
    steps = len(plan[0][1])
    for timed in (False, True):
        engine.start([p for p, _ in plan], threads)
        times, masks, disagreements = [], [], 0
        for s in range(steps):
            bitmask.fill(0)
            t0 = time.perf_counter_ns()
            engine.fill(bitmask)
            times.append(time.perf_counter_ns() - t0)
            if timed:
                kept = bitmask & keep
                masks.append(kept)
                if reference is not None:
                    disagreements += int((kept != reference[s]).any(axis=1).sum())
            engine.accept([w[s] for _, w in plan])
    return times, masks, disagreements


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=48)
    ap.add_argument("--batches", default="32,64,128")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument(
        "--grammar",
        choices=["syncode-json", "json"],
        default="syncode-json",
        help="SynCode's JSON grammar (as munch's peers benchmark) or munch's own",
    )
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    thread_counts = [int(t) for t in args.threads.split(",")]

    tokenizer_json = LLAMA3.read_text(encoding="utf-8")
    tokenizer = munch.Tokenizer.from_file(LLAMA3)
    grammar = (
        munch.Grammar.syncode("json")
        if args.grammar == "syncode-json"
        else munch.Grammar.builtin("json")
    )
    t0 = time.perf_counter()
    compiled = munch.compile(grammar, tokenizer)
    print(f"munch compile: {time.perf_counter() - t0:.2f} s ({compiled.masker})", file=sys.stderr)
    files = sorted(glob.glob(str(ROOT / "grammars" / "corpus" / "json" / "*.json")))
    texts = [tokenizer.encode(Path(f).read_text(encoding="utf-8")) for f in files]
    texts = [t for t in texts if len(t) >= 100]
    assert all(len(t) > args.steps for t in texts)
    for t in texts:
        assert munch.Matcher(compiled).accept_tokens(t), "a text the grammar does not accept"
    width = (tokenizer.vocab_size + 31) // 32
    # Special tokens (no bytes) are left out of the comparison: engines treat them differently.
    keep = np.full(width, -1, dtype=np.int32).view(np.uint32)
    for i in range(tokenizer.vocab_size):
        if tokenizer.token_bytes(i) is None:
            keep[i // 32] &= ~np.uint32(1 << (i % 32))
    keep = keep.view(np.int32)

    engines: List[Engine] = [Munch(compiled)]
    skipped: List[str] = []
    for name, make in (
        ("xgrammar", lambda: XGrammar(grammar.text, tokenizer)),
        ("llguidance", lambda: LLGuidance(grammar.text, tokenizer_json)),
    ):
        try:
            t0 = time.perf_counter()
            engines.append(make())
            print(f"{name} build: {time.perf_counter() - t0:.2f} s", file=sys.stderr)
        except Exception as e:  # an engine that is not installed, or fails to build
            skipped.append(f"{name}: {type(e).__name__}: {e}")

    print(f"# Batch fill, {len(texts)} JSON texts, {args.steps} steps, Llama 3 "
          f"(V = {tokenizer.vocab_size}), grammar {args.grammar}")
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}")
    for s in skipped:
        print(f"left out: {s}")
    print()
    print("| engine | batch | threads | p50 µs | p90 µs | p99 µs | max µs | p50 µs / seq | "
          "rows ≠ munch |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for batch in batches:
        plan = walks(texts, batch, args.steps)
        for threads in thread_counts:
            reference = None
            for engine in engines:
                times, masks, bad = run(engine, plan, threads, width, reference, keep)
                if reference is None:
                    reference = masks
                    bad_text = "–"
                else:
                    bad_text = str(bad)
                s = sorted(times)
                p50 = percentile(s, 0.5)
                print(
                    f"| {engine.name} | {batch} | {threads} | {p50:.1f} | "
                    f"{percentile(s, 0.9):.1f} | {percentile(s, 0.99):.1f} | {s[-1] / 1000:.1f} | "
                    f"{p50 / batch:.2f} | {bad_text} |",
                    flush=True,
                )
    print()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
