"""End-to-end decode throughput in transformers: unconstrained vs munch (wda) vs llguidance.

A randomly initialised ~1B-parameter Llama-shaped model (built here from a ``LlamaConfig``; no
weights are downloaded), the real Llama 3 tokenizer, transformers ``generate`` with greedy
decoding and a fixed ``--max-new-tokens``, at batch sizes 1/8/32/64, on SynCode's Java and JSON
grammars (as PSC's Figures 2-3). Settings:

- ``unconstrained``: ``generate`` with no logits processor;
- ``munch``: ``munch.hf.LogitsProcessor`` over ``munch.compile(munch.Grammar.syncode(G), tok,
  masker="wda")``;
- ``llguidance``: one ``LLMatcher`` per row, tokenizer from ``llguidance.hf.from_tokenizer``,
  masks by ``llguidance.torch.fill_next_token_bitmask_par`` and applied by
  ``llguidance.torch.apply_token_bitmask_inplace`` (its own helpers; the processor class around
  them is this script's, since llguidance ships none for transformers). Left out, with the
  reason printed, when ``import llguidance`` fails.

For every batch size: one warm-up ``generate`` per (setting, grammar) cell (other prompts, same
batch size and length), then ``--repeat`` rounds (default 3) that time each cell once in turn;
a cell reports the median of its timed calls, with the fastest and slowest. tokens/s =
generated tokens (per row, up to and including its first EOS; all ``max_new_tokens`` when it
has none) over the median wall time (``torch.cuda.synchronize()`` before and after). The
processor's share is the time inside its ``__call__`` (synchronised on entry and exit, so it
holds the mask's transfer and kernel but not the forward pass it would otherwise wait for at
its first ``.tolist()``) over the wall time, median over the timed calls. Prints a Markdown table, and writes it all as JSON (``--out``) after every row, so a run
cut short keeps what it measured.

Imports: the standard library, torch, transformers, numpy, munch and, optionally, llguidance.

Preparing a run on a GPU machine that cannot install anything (Python 3.12 there)
--------------------------------------------------------------------------------
Here, in the repository root (``.cache/`` is ignored by .gitignore, so nothing is committed)::

    # 1. the wheel, for the device's Python 3.12 (python/pyproject.toml: maturin, module
    #    munch._munch); CARGO_TARGET_DIR shares the workspace's compiled crates
    (cd python && CARGO_TARGET_DIR=$PWD/../target ~/.cache/munch/venv/bin/maturin build \
        --release -i ~/.pyenv/versions/3.12.1/bin/python3.12 -o ../.cache/e2e/wheels)
    # 2. optional: llguidance for the device (abi3 wheel, no dependencies)
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_31_x86_64 -d .cache/e2e/wheels \
        llguidance==1.9.1
    # 3. the tokenizer and SynCode's grammars, laid out as munch's cache (MUNCH_CACHE)
    mkdir -p .cache/e2e/munch/tokenizers .cache/e2e/munch/syncode-0.4.16/syncode-0.4.16/syncode/parsers
    cp -r ~/.cache/munch/tokenizers/llama3 .cache/e2e/munch/tokenizers/
    cp -r ~/.cache/munch/syncode-0.4.16/syncode-0.4.16/syncode/parsers/grammars \
        .cache/e2e/munch/syncode-0.4.16/syncode-0.4.16/syncode/parsers/
    du -sh .cache/e2e   # must stay well under the 64 MiB a call may carry

(``maturin build`` without ``-i`` builds for the interpreter running it: ``cd python &&
maturin build --release`` gives a cp311 wheel here, which the device's Python 3.12 refuses.)
Then one device call, ``carry: [".cache/e2e"]``, ``timeout_s: 540``::

    set -o pipefail; python3 -m pip install -q --no-index --no-deps --no-compile \
      --no-cache-dir --target /tmp/site .cache/e2e/wheels/*.whl || exit 1;
    export PYTHONPATH=/tmp/site MUNCH_CACHE=$PWD/.cache/e2e/munch PYTHONUNBUFFERED=1;
    nvidia-smi --query-gpu=name,memory.total --format=csv;
    python3 bench/e2e_throughput.py --device cuda --out $OUT/e2e.json 2>&1 | tee $OUT/e2e.log

Untimed so far on a GPU: 4 batch sizes x 5 cells (unconstrained, munch and llguidance on two
grammars) x 2 ``generate`` calls of 128 steps, plus munch's wda compile of Java (~5 s on a
CPU core) and llguidance's ``torch.compile`` of its mask kernel in the first warm-up. If that
outruns the call, the JSON so far is in $OUT; rerun the rest with ``--batches`` /
``--settings`` / ``--max-new-tokens``.

Smoke test on CPU (not a measurement)::

    ~/.cache/munch/venv/bin/python bench/e2e_throughput.py --tiny --device cpu \
        --batches 1,2 --max-new-tokens 8
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
import transformers

import munch
import munch.hf


def munch_cache() -> Path:
    """munch's cache directory, resolved as munch's Rust side does (MUNCH_CACHE first)."""
    if os.environ.get("MUNCH_CACHE"):
        return Path(os.environ["MUNCH_CACHE"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "munch"
    return Path.home() / ".cache" / "munch"


DEFAULT_TOKENIZER = munch_cache() / "tokenizers" / "llama3" / "tokenizer.json"

# Neutral prompts, shared by every setting: the timed batches cycle through TIMED, the warm-up
# batches through WARMUP (other texts, so the timed call does not retrace the warm-up's steps).
TIMED = [
    "Write the program.\n",
    "Here is the output you asked for:\n",
    "Answer with code only.\n",
    "The following was generated automatically.\n",
    "Produce a complete example.\n",
    "Data:\n",
    "Continue the file below.\n",
    "Output:\n",
]
WARMUP = [
    "A first attempt:\n",
    "Result follows.\n",
    "Example file:\n",
    "Here it is.\n",
]


def pad_to(n: int, multiple: int) -> int:
    return (n + multiple - 1) // multiple * multiple


def build_model(
    vocab: int, tiny: bool, device: str, dtype: torch.dtype
) -> Tuple[Any, Dict[str, Any]]:
    """A randomly initialised Llama-shaped model (seeded), and its shape for the report."""
    # (hidden, MLP, layers, attention heads, KV heads). The full model has 0.98B parameters
    # with tied embeddings (Llama 3.2 1B's 8 KV heads and tying, TinyLlama's MLP width):
    # 16 x 45.1M in the layers + 262.7M in the embedding.
    sizes = (128, 256, 2, 4, 2) if tiny else (2048, 5632, 16, 32, 8)
    keys = (
        "hidden_size",
        "intermediate_size",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
    )
    shape = dict(zip(keys, sizes))
    config = transformers.LlamaConfig(
        vocab_size=vocab,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        **shape,
    )
    torch.manual_seed(0)
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = transformers.LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(old)
    model.eval()
    params = sum(p.numel() for p in model.parameters())
    info = dict(shape, vocab_size=vocab, parameters=params,
                attn_implementation=getattr(model.config, "_attn_implementation", None))
    return model, info


def hf_tokenizer(path: Path) -> Any:
    cls = getattr(transformers, "PreTrainedTokenizerFast", None)
    if cls is None:  # transformers releases that dropped the name keep its successor
        cls = getattr(transformers, "TokenizersBackend")
    return cls(tokenizer_file=str(path))


class Timed:
    """A logits processor's wrapper that sums the time spent in it (synchronised on CUDA)."""

    def __init__(self, inner: Any, sync: bool) -> None:
        self.inner = inner
        self.sync = sync
        self.seconds = 0.0
        self.calls = 0

    def __call__(self, input_ids, scores):
        if self.sync:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = self.inner(input_ids, scores)
        if self.sync:
            torch.cuda.synchronize()
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        return out


class LLGuidanceProcessor:
    """llguidance in ``generate`` (greedy): one LLMatcher per row, masks filled in parallel."""

    def __init__(self, ll: Any, lltok: Any, grammar: str, stop_ids: List[int],
                 threads: Optional[int]) -> None:
        import llguidance.torch as llt

        self.ll, self.llt = ll, llt
        self.lltok, self.grammar = lltok, grammar
        self.stop_ids = stop_ids
        self.executor = ll.LLExecutor(num_threads=threads) if threads else ll.LLExecutor()
        self.matchers: Optional[List[Any]] = None

    def __call__(self, input_ids, scores):
        rows, vocab = input_ids.shape[0], scores.shape[-1]
        if self.matchers is None:
            self.matchers = [self.ll.LLMatcher(self.lltok, self.grammar, log_level=0)
                             for _ in range(rows)]
            for m in self.matchers:
                if m.is_error():
                    raise RuntimeError(f"llguidance: {m.get_error()}")
            self.dead = [False] * rows
            self.bitmask = self.llt.allocate_token_bitmask(rows, vocab)
        else:
            for r, t in enumerate(input_ids[:, -1].tolist()):
                m = self.matchers[r]
                if self.dead[r] or m.is_stopped():
                    continue
                if not m.consume_token(t) or m.is_error():
                    self.dead[r] = True
        live = [(m, r) for r, m in enumerate(self.matchers) if not self.dead[r]]
        if live:
            self.llt.fill_next_token_bitmask_par(self.executor, live, self.bitmask)
        for r in range(rows):
            if self.dead[r]:  # as munch's processor: only the stop tokens from then on
                self.bitmask[r] = 0
                for t in self.stop_ids:
                    self.bitmask[r, t // 32] |= -(1 << 31) if t % 32 == 31 else 1 << (t % 32)
        mask = self.bitmask.to(scores.device, non_blocking=True)
        self.llt.apply_token_bitmask_inplace(scores, mask)
        return scores


def count_generated(out: torch.Tensor, prompt_len: int, eos: List[int]) -> Tuple[int, int, int]:
    """(generated tokens up to and including each row's first EOS, steps, rows that ended)."""
    new = out[:, prompt_len:].cpu().numpy()
    steps = new.shape[1]
    is_eos = np.isin(new, np.asarray(eos))
    ended = is_eos.any(axis=1)
    first = np.where(ended, is_eos.argmax(axis=1) + 1, steps)
    return int(first.sum()), steps, int(ended.sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokenizer", type=Path, default=DEFAULT_TOKENIZER,
                    help=f"Llama 3 tokenizer.json (default {DEFAULT_TOKENIZER})")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--dtype", choices=["bfloat16", "float32"], default=None,
                    help="default: bfloat16 on cuda, float32 on cpu")
    ap.add_argument("--batches", default="1,8,32,64")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--grammars", default="java,json", help="SynCode grammar names")
    ap.add_argument("--grammar-file", action="append", default=[], metavar="[NAME=]PATH",
                    help="a Lark grammar file (start rule `start`) instead of SynCode's by "
                    "name; repeatable; NAME defaults to the file's stem")
    ap.add_argument("--settings", default="unconstrained,munch,llguidance")
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed generate calls per cell; the table shows their median")
    ap.add_argument("--threads", type=int, default=None,
                    help="mask threads for munch and llguidance (default: each one's own)")
    ap.add_argument("--tiny", action="store_true", help="2 layers, hidden 128: smoke tests")
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = ap.parse_args()

    if args.device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda, but torch.cuda.is_available() is False on this machine "
              f"(torch {torch.__version__}); use --device cpu", file=sys.stderr)
        return 2
    dtype = getattr(torch, args.dtype or ("bfloat16" if args.device == "cuda" else "float32"))
    batches = [int(b) for b in args.batches.split(",")]
    settings = [s for s in args.settings.split(",") if s]
    for s in settings:
        if s not in ("unconstrained", "munch", "llguidance"):
            ap.error(f"unknown setting {s!r}")
    sync = args.device == "cuda"

    def synchronize() -> None:
        if sync:
            torch.cuda.synchronize()

    if not args.tokenizer.is_file():
        print(f"error: no tokenizer at {args.tokenizer} (give --tokenizer, or set MUNCH_CACHE "
              "to a folder holding tokenizers/llama3/tokenizer.json)", file=sys.stderr)
        return 2

    # Grammars: name -> (munch.Grammar, Lark text).
    grammars: Dict[str, Tuple[Any, str]] = {}
    try:
        if args.grammar_file:
            for spec in args.grammar_file:
                name, _, path = spec.rpartition("=")
                path_p = Path(path)
                g = munch.Grammar.from_file(path_p)
                grammars[name or path_p.stem] = (g, g.text)
        else:
            for name in [n for n in args.grammars.split(",") if n]:
                g = munch.Grammar.syncode(name)
                grammars[name] = (g, g.text)
    except Exception as e:
        print(f"error: cannot read the grammars: {type(e).__name__}: {e}\n(SynCode's grammars "
              f"are read from munch's cache, {munch_cache()}, and fetched with pip on a miss; "
              "set MUNCH_CACHE or give --grammar-file)", file=sys.stderr)
        return 2

    tok0 = munch.Tokenizer.from_file(args.tokenizer)
    vocab = pad_to(tok0.vocab_size, 64)
    tok = munch.Tokenizer.from_file(args.tokenizer, vocab_size=vocab)
    eos = list(tok.eos_token_ids)
    hf_tok = hf_tokenizer(args.tokenizer)
    hf_tok.padding_side = "left"
    hf_tok.pad_token = hf_tok.convert_ids_to_tokens(eos[0])

    t0 = time.perf_counter()
    model, model_info = build_model(vocab, args.tiny, args.device, dtype)
    synchronize()
    model_build_s = time.perf_counter() - t0

    compiled: Dict[str, Any] = {}
    compile_s: Dict[str, float] = {}
    if "munch" in settings:
        for name, (g, _) in grammars.items():
            t0 = time.perf_counter()
            compiled[name] = munch.compile(g, tok, masker="wda")
            compile_s[f"munch/{name}"] = time.perf_counter() - t0

    skipped: List[str] = []
    ll = lltok = None
    if "llguidance" in settings:
        try:
            import llguidance
            import llguidance.hf
            import llguidance.torch  # noqa: F401  (its helpers: checked before any run)

            ll = llguidance
            t0 = time.perf_counter()
            lltok = llguidance.hf.from_tokenizer(hf_tok, n_vocab=vocab, eos_token=eos[0])
            compile_s["llguidance/tokenizer"] = time.perf_counter() - t0
        except Exception as e:
            skipped.append(f"llguidance: {type(e).__name__}: {e}")
            settings = [s for s in settings if s != "llguidance"]
    ll_grammars: Dict[str, str] = {}
    if ll is not None:
        for name, (_, text) in grammars.items():
            t0 = time.perf_counter()
            ll_grammars[name] = ll.LLMatcher.grammar_from_lark(text)
            m = ll.LLMatcher(lltok, ll_grammars[name], log_level=0)
            compile_s[f"llguidance/{name} (one matcher)"] = time.perf_counter() - t0
            if m.is_error():
                skipped.append(f"llguidance on {name}: {m.get_error()}")
                del ll_grammars[name]

    def version(mod: str) -> Optional[str]:
        try:
            from importlib.metadata import version as v
            return v(mod)
        except Exception:
            return None

    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "numpy": np.__version__,
        "munch": munch.__version__,
        "llguidance": version("llguidance") if ll is not None else None,
        "device": args.device,
        "device_name": torch.cuda.get_device_name() if sync else platform.processor() or "cpu",
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "dtype": str(dtype).replace("torch.", ""),
        "tokenizer": str(args.tokenizer),
        "eos_token_ids": eos,
        "max_new_tokens": args.max_new_tokens,
        "threads": args.threads,
        "model": model_info,
        "model_build_s": model_build_s,
        "compile_s": compile_s,
        "skipped": skipped,
    }
    results: Dict[str, Any] = {"env": env, "rows": []}

    def save() -> None:
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")

    print(f"# End-to-end decode throughput: {'tiny' if args.tiny else '~1B'} random Llama "
          f"({model_info['parameters'] / 1e6:.1f}M parameters, {env['dtype']}, "
          f"{model_info['attn_implementation']}), Llama 3 tokenizer (V = {vocab}), greedy, "
          f"max_new_tokens {args.max_new_tokens}")
    print(f"{env['device_name']}; python {env['python']}, torch {env['torch']}, transformers "
          f"{env['transformers']}, munch {env['munch']}, llguidance {env['llguidance']}; "
          f"{env['cpus']} CPUs, load average {env['load_average'][0]:.2f}")
    print("model build " + f"{model_build_s:.1f} s; " + ", ".join(
        f"{k} {v:.2f} s" for k, v in compile_s.items()))
    for s in skipped:
        print(f"left out: {s}")
    print()
    print("| setting | grammar | batch | steps | tokens | ended | wall s, median (min–max) | tokens/s | "
          "vs unconstrained | processor share | processor ms/step |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    sys.stdout.flush()

    def inputs(prompts: List[str], batch: int) -> Dict[str, torch.Tensor]:
        texts = [prompts[i % len(prompts)] for i in range(batch)]
        enc = hf_tok(texts, return_tensors="pt", padding=True)
        return {k: v.to(args.device) for k, v in enc.items() if k in ("input_ids",
                                                                      "attention_mask")}

    def processor(setting: str, grammar: Optional[str], batch: int) -> Optional[Timed]:
        if setting == "unconstrained":
            return None
        if setting == "munch":
            inner = munch.hf.LogitsProcessor(compiled[grammar], batch_size=batch,
                                             threads=args.threads)
        else:
            inner = LLGuidanceProcessor(ll, lltok, ll_grammars[grammar], eos, args.threads)
        return Timed(inner, sync)

    def generate(enc: Dict[str, torch.Tensor], proc: Optional[Timed]) -> torch.Tensor:
        kwargs: Dict[str, Any] = dict(
            max_new_tokens=args.max_new_tokens,
            do_sample=False,
            num_beams=1,
            pad_token_id=eos[0],
            eos_token_id=eos,
        )
        if proc is not None:
            kwargs["logits_processor"] = transformers.LogitsProcessorList([proc])
        with torch.inference_mode():
            return model.generate(**enc, **kwargs)

    cells: List[Tuple[str, Optional[str]]] = []
    for s in settings:
        if s == "unconstrained":
            cells.append((s, None))
        elif s == "munch":
            cells.extend((s, g) for g in grammars)
        else:
            cells.extend((s, g) for g in grammars if g in ll_grammars)

    def timed(setting: str, grammar: Optional[str], batch: int) -> Dict[str, Any]:
        enc = inputs(TIMED, batch)
        proc = processor(setting, grammar, batch)
        synchronize()
        t0 = time.perf_counter()
        out = generate(enc, proc)
        synchronize()
        wall = time.perf_counter() - t0
        tokens, steps, ended = count_generated(out, enc["input_ids"].shape[1], eos)
        run: Dict[str, Any] = dict(steps=steps, tokens=tokens, ended=ended, wall_s=wall)
        if proc is not None:
            run.update(processor_s=proc.seconds, processor_calls=proc.calls)
        return run

    for batch in batches:
        # Every cell's warm-up first, then `--repeat` rounds that time each cell once in turn,
        # so that drift on the machine falls on every cell alike; a cell reports its median.
        rows: Dict[Tuple[str, Optional[str]], Dict[str, Any]] = {}
        for setting, grammar in cells:
            row: Dict[str, Any] = {"setting": setting, "grammar": grammar, "batch": batch,
                                   "runs": []}
            try:
                generate(inputs(WARMUP, batch), processor(setting, grammar, batch))
            except Exception as e:  # one cell failing must not lose the others
                row["error"] = f"{type(e).__name__}: {e}"
            rows[(setting, grammar)] = row
        for _ in range(args.repeat):
            for cell in cells:
                row = rows[cell]
                if "error" in row:
                    continue
                try:
                    row["runs"].append(timed(cell[0], cell[1], batch))
                except Exception as e:
                    row["error"] = f"{type(e).__name__}: {e}"
        base: Optional[float] = None
        for setting, grammar in cells:
            row = rows[(setting, grammar)]
            results["rows"].append(row)
            if "error" in row:
                save()
                print(f"| {setting} | {grammar or '–'} | {batch} | error: {row['error']} "
                      "| | | | | | | |", flush=True)
                continue
            runs = row["runs"]
            walls = [r["wall_s"] for r in runs]
            wall = float(np.median(walls))
            first = runs[0]
            row.update(steps=first["steps"], tokens=first["tokens"], ended=first["ended"],
                       wall_s=wall, wall_s_min=min(walls), wall_s_max=max(walls),
                       tokens_per_s=first["tokens"] / wall)
            if "processor_s" in first:
                shares = [r["processor_s"] / r["wall_s"] for r in runs]
                per_step = [r["processor_s"] / r["processor_calls"] for r in runs]
                row.update(processor_share=float(np.median(shares)),
                           processor_s_per_call=float(np.median(per_step)))
            if len({r["tokens"] for r in runs}) > 1:  # greedy: the same text every run
                row["tokens_differ_between_runs"] = [r["tokens"] for r in runs]
            if setting == "unconstrained":
                base = row["tokens_per_s"]
            save()
            rel = f"{row['tokens_per_s'] / base:.3f}" if base else "–"
            share = (f"{100 * row['processor_share']:.1f} %" if "processor_share" in row
                     else "–")
            per_call = (f"{1000 * row['processor_s_per_call']:.3f}"
                        if "processor_s_per_call" in row else "–")
            print(f"| {setting} | {grammar or '–'} | {batch} | {row['steps']} | "
                  f"{row['tokens']} | {row['ended']}/{batch} | {wall:.3f} "
                  f"({min(walls):.3f}–{max(walls):.3f}) | {row['tokens_per_s']:.1f} | {rel} | "
                  f"{share} | {per_call} |", flush=True)

    env["load_average_after"] = os.getloadavg()
    save()
    print()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in env['load_average_after'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
