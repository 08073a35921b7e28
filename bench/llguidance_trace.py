"""Teacher-force texts through llguidance and time its masks, for side-by-side figures with
`munch trace`.

Usage: llguidance_trace.py GRAMMAR.lark TOKENIZER.json [--no-slicer] FILE...

Tokenizes each file with the tokenizer's own encoding (llguidance's wrapper around the same
`tokenizer.json`), and at every step times one mask (`compute_bitmask`) and one commit
(`consume_token`). Settings: no forcing (masks are computed at every step), one thread, the
slicer optimisation on unless --no-slicer. Prints one JSON object like `munch trace`'s last line.
"""
import json
import sys
import time

import llguidance


def percentiles(samples_ns):
    s = sorted(samples_ns)
    if not s:
        return {}

    def rank(p):
        # nearest rank
        k = max(0, min(len(s) - 1, int(-(-p * len(s) // 1)) - 1))
        return s[k] / 1000.0

    return {
        "mean_us": sum(s) / len(s) / 1000.0,
        "p50_us": rank(0.50),
        "p90_us": rank(0.90),
        "p99_us": rank(0.99),
        "p999_us": rank(0.999),
        "max_us": s[-1] / 1000.0,
    }


def main():
    args = sys.argv[1:]
    slicer = "--no-slicer" not in args
    args = [a for a in args if a != "--no-slicer"]
    grammar_path, tokenizer_path, files = args[0], args[1], args[2:]
    with open(grammar_path, encoding="utf-8") as f:
        grammar = f.read()
    with open(tokenizer_path, encoding="utf-8") as f:
        tokenizer_json = f.read()
    t0 = time.perf_counter()
    tok = llguidance.LLTokenizer(tokenizer_json, slices=None if slicer else [])
    tokenizer_s = time.perf_counter() - t0
    lark_grammar = llguidance.LLMatcher.grammar_from_lark(grammar)
    masks, commits, steps, rejected, build = [], [], 0, 0, []
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        tokens = tok.tokenize_str(text)
        t0 = time.perf_counter()
        m = llguidance.LLMatcher(tok, lark_grammar, log_level=0)
        build.append(time.perf_counter() - t0)
        if m.is_error():
            print(json.dumps({"grammar_error": m.get_error()}))
            return
        ok = True
        for t in tokens:
            t0 = time.perf_counter_ns()
            mask = m.compute_bitmask()
            t1 = time.perf_counter_ns()
            masks.append(t1 - t0)
            steps += 1
            if not (mask[t // 8] >> (t % 8)) & 1:
                ok = False
                break
            t0 = time.perf_counter_ns()
            consumed = m.consume_token(t)
            commits.append(time.perf_counter_ns() - t0)
            if not consumed or m.is_error():
                ok = False
                break
        if ok and not m.is_accepting():
            ok = False
        if not ok:
            rejected += 1
            print(f"llguidance rejects {path}: {m.get_error()}", file=sys.stderr)
    print(json.dumps({
        "engine": "llguidance",
        "version": llguidance.get_version() if hasattr(llguidance, "get_version") else "",
        "slicer": slicer,
        "files": len(files),
        "steps": steps,
        "rejected": rejected,
        "tokenizer_build_s": tokenizer_s,
        "grammar_build_s_mean": sum(build) / max(1, len(build)),
        "mask": percentiles(masks),
        "commit": percentiles(commits),
    }))


if __name__ == "__main__":
    main()
