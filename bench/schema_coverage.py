"""Which real-world JSON Schemas each engine compiles: munch (its CLI), llguidance and XGrammar,
on the SchemaStore schemas that `check-jsonschema` vendors (CI configurations, project files;
fetched once with pip into the cache) or on the files given.

Usage (from the repository root, after `cargo build --release -p munch-cli`):
    ~/.cache/munch/venv/bin/python bench/schema_coverage.py [--munch target/release/munch] [FILE.json...]

The venv is python/run-tests.sh's; `pip install llguidance xgrammar` into it for the peers (an
engine that does not import is left out). Prints one row per schema: each engine's verdict
(`ok`, or the start of its refusal), munch's compile time, then the counts. Compiling is not
being exact: XGrammar ignores keywords it does not support (with a warning) and compiles a
larger language; munch and llguidance refuse what they cannot compile exactly (munch names the
keyword and its JSON pointer).
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import time
import warnings
import zipfile

CHECK_JSONSCHEMA = "0.39.0"


def cache_dir():
    base = os.environ.get("MUNCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "munch"
    )
    return pathlib.Path(base)


def schemastore():
    """The vendored SchemaStore schemas of check-jsonschema, fetched once."""
    root = cache_dir() / f"check-jsonschema-{CHECK_JSONSCHEMA}"
    schemas = root / "schemas"
    if not schemas.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             f"check-jsonschema=={CHECK_JSONSCHEMA}", "-d", str(root)],
            check=True,
        )
        wheel = next(root.glob("check_jsonschema-*.whl"))
        schemas.mkdir()
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if "/builtin_schemas/" in name and name.endswith(".json"):
                    (schemas / pathlib.Path(name).name).write_bytes(z.read(name))
    return sorted(schemas.glob("*.json"))


def munch_verdict(cli, path):
    started = time.perf_counter()
    r = subprocess.run([cli, "check", f"schema:{path}"], capture_output=True, text=True)
    ms = (time.perf_counter() - started) * 1e3
    if r.returncode == 0:
        return "ok", ms
    return r.stderr.strip().splitlines()[0] if r.stderr.strip() else f"exit {r.returncode}", ms


def engines():
    out = {}
    try:
        from llguidance import LLMatcher

        def llg(text):
            grammar = LLMatcher.grammar_from_json_schema(text)
            err = LLMatcher.validate_grammar(grammar, None)
            return "ok" if not err else err

        out["llguidance"] = llg
    except ImportError:
        pass
    try:
        import xgrammar

        def xgr(text):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                xgrammar.Grammar.from_json_schema(text)
            return "ok"

        out["xgrammar"] = xgr
    except ImportError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--munch", default="target/release/munch")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = [pathlib.Path(f) for f in args.files] or schemastore()
    peers = engines()
    names = ["munch"] + list(peers)
    counts = {n: 0 for n in names}
    print("| schema | " + " | ".join(names) + " | munch ms |")
    print("|---|" + "---|" * len(names) + "---:|")
    for path in files:
        text = path.read_text()
        verdict, ms = munch_verdict(args.munch, path)
        row = {"munch": verdict}
        for name, compile_ in peers.items():
            try:
                row[name] = compile_(text)
            except Exception as e:  # each engine's own error type
                msg = str(e).splitlines()[0] if str(e) else type(e).__name__
                # XGrammar's errors begin with its log prefix: `[12:00:00] /path/file.cc:12: `.
                row[name] = re.sub(r"^\[[0-9:]+\] \S+:[0-9]+: ", "", msg)
        for n in names:
            counts[n] += row[n] == "ok"
        cells = [r if r == "ok" else r[:70].replace("|", "/") for r in (row[n] for n in names)]
        print(f"| {path.stem} | " + " | ".join(cells) + f" | {ms:.0f} |")
    print()
    print(f"{len(files)} schemas compiled: " + ", ".join(f"{n} {counts[n]}" for n in names))


if __name__ == "__main__":
    main()
