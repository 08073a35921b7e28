"""What a Python call of ``Matcher.fill_next_token_bitmask`` costs over the Rust call.

    ~/.cache/munch/venv/bin/python bench/python_overhead.py [--rounds 300] [--cargo]

The workload is the one of ``cargo bench -p munch --bench matcher`` (``step/matcher/wda``): the
Llama 3 tokenizer, munch's JSON grammar compiled with the wda masker, and a matcher standing at
every step of the JSON document of ``munch/benches/matcher.rs`` (read from that file). From
Python, each step's matcher fills row 0 of a numpy ``int32`` bitmask ``[1, ceil(V / 32)]``:

- **per call**: every call timed alone with ``time.perf_counter_ns`` (``--rounds`` passes over
  the steps); the median and p99 include the timer's own cost, printed beside them;
- **per step, in a pass**: the time of one pass over all the steps divided by the steps, the
  median over the passes: the figure comparable with criterion's time per iteration of
  ``step/matcher/wda`` divided by the same steps;
- **the binding's floor**: a terminated matcher's fill (munch writes only the stop tokens into
  the row: the Rust work is a few stores), timed per call as above.

``--cargo`` then runs ``cargo bench -p munch --bench matcher -- step/matcher/wda`` and reads
criterion's interval for the time of one pass (divided by the same steps); the overhead per call
is the Python pass figure minus criterion's estimate. criterion reports a mean's confidence
interval, not percentiles: the Rust p99 is not measured.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional

import numpy as np

import munch

ROOT = Path(__file__).resolve().parents[1]
LLAMA3 = Path(
    os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
) / "munch" / "tokenizers" / "llama3" / "tokenizer.json"


def document() -> str:
    """The JSON document the Rust matcher bench walks."""
    source = (ROOT / "munch" / "benches" / "matcher.rs").read_text(encoding="utf-8")
    m = re.search(r'const DOCUMENT: &str = r#"(.*?)"#;', source, re.S)
    assert m, "DOCUMENT not found in munch/benches/matcher.rs"
    return m.group(1)


def pct(sorted_ns: List[int], q: float) -> float:
    """Nearest-rank percentile, in nanoseconds."""
    k = min(len(sorted_ns) - 1, max(0, int(round(q * len(sorted_ns) + 0.5)) - 1))
    return float(sorted_ns[k])


def per_call(matchers: List["munch.Matcher"], row: np.ndarray, rounds: int) -> List[int]:
    clock = time.perf_counter_ns
    out = []
    for _ in range(rounds):
        for m in matchers:
            t0 = clock()
            m.fill_next_token_bitmask(row)
            out.append(clock() - t0)
    out.sort()
    return out


def per_pass(matchers: List["munch.Matcher"], row: np.ndarray, rounds: int) -> List[float]:
    clock = time.perf_counter_ns
    out = []
    for _ in range(rounds):
        t0 = clock()
        for m in matchers:
            m.fill_next_token_bitmask(row)
        out.append((clock() - t0) / len(matchers))
    out.sort()
    return out


def timer_cost(n: int = 200_000) -> List[int]:
    clock = time.perf_counter_ns
    out = []
    for _ in range(n):
        t0 = clock()
        out.append(clock() - t0)
    out.sort()
    return out


def cargo_bench(steps: int) -> Optional[List[float]]:
    """criterion's interval for ``step/matcher/wda`` (low, estimate, high), per step, in ns."""
    cmd = ["cargo", "bench", "-p", "munch", "--bench", "matcher", "--", "step/matcher/wda"]
    print("running:", " ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    number = r"([\d.]+) (\S+)"
    m = re.search(rf"step/matcher/wda\s+time:\s+\[{number} {number} {number}\]", out)
    if not m:
        print(out, file=sys.stderr)
        return None
    scale = {"ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
    return [float(m.group(i)) * scale[m.group(i + 1)] / steps for i in (1, 3, 5)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--cargo", action="store_true", help="also run the Rust bench")
    args = ap.parse_args()

    tokenizer = munch.Tokenizer.from_file(LLAMA3)
    compiled = munch.compile(munch.Grammar.builtin("json"), tokenizer, masker="wda", fallback=None)
    tokens = tokenizer.encode(document())
    m = munch.Matcher(compiled)
    matchers = [m.fork()]
    for t in tokens:
        assert m.accept_token(t)
        matchers.append(m.fork())
    steps = len(matchers)
    done = munch.Matcher(compiled)
    assert done.accept_tokens(tokens + tokenizer.eos_token_ids[:1]) and done.is_terminated()
    row = munch.allocate_token_bitmask(1, tokenizer.vocab_size)

    per_pass(matchers, row, 20)  # warm-up
    calls = per_call(matchers, row, args.rounds)
    passes = per_pass(matchers, row, args.rounds)
    floor = per_call([done] * steps, row, args.rounds)
    timer = timer_cost()
    rust = cargo_bench(steps) if args.cargo else None

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# Python call overhead of Matcher.fill_next_token_bitmask (wda, Llama 3, "
          f"munch's JSON grammar, {steps} steps, {args.rounds} rounds)")
    print(f"{os.cpu_count()} CPUs; load average at the end: {load}")
    print()
    print("| measurement | median ns | p99 ns |")
    print("|---|---:|---:|")
    print(f"| Python, per call (timed alone) | {pct(calls, .5):.0f} | {pct(calls, .99):.0f} |")
    print(f"| Python, per step of a pass | {pct(passes, .5):.0f} | {pct(passes, .99):.0f} |")
    print(f"| Python, terminated matcher (binding floor) | {pct(floor, .5):.0f} | "
          f"{pct(floor, .99):.0f} |")
    print(f"| perf_counter_ns pair (timer cost) | {pct(timer, .5):.0f} | {pct(timer, .99):.0f} |")
    if rust is not None:
        low, mid, high = rust
        print(f"| Rust `step/matcher/wda`, per step (criterion: {low:.0f} – {high:.0f}) | "
              f"{mid:.0f} | – |")
        print()
        print(f"Overhead per call (pass median − Rust estimate): {pct(passes, .5) - mid:.0f} ns")


if __name__ == "__main__":
    main()
