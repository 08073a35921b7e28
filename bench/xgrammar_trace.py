"""XGrammar worker of munch's `peers` benchmark: one engine run, teacher-forced.

Usage: python xgrammar_trace.py JOB.json RESULT.json

JOB.json is what the Rust harness (`bench/src/peers/job.rs`, `Job`) writes: the grammar
text, the vocabulary file (token id -> hex bytes, EOS ids) and the token sequences, tokenized
once by munch. RESULT.json is a `WorkerResult`: build and set-up times, memory, each text's
outcome and the raw mask and commit latencies in nanoseconds (the harness computes the
statistics, the same way for every engine).

Settings: XGrammar's own Lark front end (`Grammar.from_lark`; for a JSON Schema job
`Grammar.from_json_schema` with `any_whitespace=True, strict_mode=False`), a RAW vocabulary of munch's token
bytes, `GrammarCompiler(max_threads=1, cache_enabled=False)`, one `GrammarMatcher` per text.
At every step `fill_next_token_bitmask` is timed; before each token the token's bit must be set,
then `accept_token` is timed. At the end of an uncut text the mask must allow a stop token.

The harness installs XGrammar with `pip install --no-deps` in a virtualenv: its declared
dependencies torch, triton and transformers (several GiB) serve GPU kernels and Hugging Face
tokenizer objects. XGrammar's package imports torch and transformers at import time, so this
script registers empty stand-in modules under those names first; nothing timed here touches
them (masks go into a numpy array through DLPack, and the matcher is C++).
"""
import json
import resource
import sys
import time
import types


def rss_mib():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def peak_rss_mib():
    # ru_maxrss is in KiB on Linux.
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class _Stub(types.ModuleType):
    """A module whose every attribute is another stub: enough for class bases, annotations and
    module-level constants of code paths that never run."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _Stub(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value

    def __call__(self, *args, **kwargs):
        return None

    def __mro_entries__(self, bases):
        return (object,)


def import_xgrammar():
    # tvm_ffi inspects torch when it is importable: import it before the stand-ins exist.
    import tvm_ffi  # noqa: F401

    for name in ("torch", "transformers"):
        if name not in sys.modules:
            sys.modules[name] = _Stub(name)
    import xgrammar

    return xgrammar


def main():
    job_path, result_path = sys.argv[1], sys.argv[2]
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    with open(job["vocab_file"], encoding="utf-8") as f:
        vocab = json.load(f)
    result = {
        "engine_version": "",
        "settings": "Lark front end; 1 thread; cache off",
        "prepare_s": 0.0,
        "build_s": 0.0,
        "rss_before_build_mib": 0.0,
        "peak_rss_mib": 0.0,
        "error": None,
        "texts": [],
        "mask_ns": [],
        "commit_ns": [],
    }
    try:
        run(job, vocab, result)
    except Exception as e:  # reported as the run's error, not a crash
        result["error"] = f"{type(e).__name__}: {e}"
    result["peak_rss_mib"] = peak_rss_mib()
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump(result, f)


def run(job, vocab, result):
    import numpy as np

    xgr = import_xgrammar()
    from importlib.metadata import version

    result["engine_version"] = f"xgrammar {version('xgrammar')} (Python)"
    t0 = time.perf_counter()
    # Special tokens have no bytes: an empty entry, which XGrammar treats as special.
    encoded = [bytes.fromhex(t) if t is not None else b"" for t in vocab["tokens"]]
    n = len(encoded)
    info = xgr.TokenizerInfo(
        encoded, vocab_type=xgr.VocabType.RAW, vocab_size=n, stop_token_ids=vocab["eos"]
    )
    compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
    result["prepare_s"] = time.perf_counter() - t0
    result["rss_before_build_mib"] = rss_mib()
    t0 = time.perf_counter()
    if job.get("grammar_kind", "lark") == "json_schema":
        # strict_mode=False: additional properties and items as the schema says (the JSON Schema
        # default), not forbidden; any_whitespace as the other engines' flexible profile.
        grammar = xgr.Grammar.from_json_schema(
            job["grammar_text"], any_whitespace=True, strict_mode=False
        )
    else:
        grammar = xgr.Grammar.from_lark(job["grammar_text"], tokenizer_info=info)
    compiled = compiler.compile_grammar(grammar)
    result["build_s"] = time.perf_counter() - t0
    words = (n + 31) // 32
    bitmask = np.zeros((1, words), dtype=np.int32)
    flat = bitmask.view(np.uint32)[0]
    eos = vocab["eos"]
    masks, commits = result["mask_ns"], result["commit_ns"]
    clock = time.perf_counter_ns
    for text in job["texts"]:
        matcher = xgr.GrammarMatcher(compiled)
        tokens = text["tokens"]
        steps = 0
        why = None
        for step in range(len(tokens) + 1):
            t = clock()
            matcher.fill_next_token_bitmask(bitmask)
            masks.append(clock() - t)
            steps += 1
            if step == len(tokens):
                break
            token = tokens[step]
            if not (int(flat[token >> 5]) >> (token & 31)) & 1:
                why = f"step {step}: token {token} is masked out"
                break
            t = clock()
            ok = matcher.accept_token(token)
            elapsed = clock() - t
            if not ok:
                why = f"step {step}: commit of {token} failed"
                break
            commits.append(elapsed)
        if why is None and not text["truncated"]:
            if not any((int(flat[e >> 5]) >> (e & 31)) & 1 for e in eos):
                why = f"does not accept after all {len(tokens)} tokens"
        result["texts"].append(
            {"name": text["name"], "steps": steps, "accepted": why is None, "why": why}
        )


if __name__ == "__main__":
    main()
