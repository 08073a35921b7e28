"""Does munch's JSON Schema compiler agree with a real validator on real-world schemas?

For each schema munch compiles (SchemaStore's, as `schema_coverage.py` fetches them, or the files
given), two checks against the `jsonschema` validator (its format checker on):

- **munch's own texts are valid**: `munch generate schema:F` samples texts token by token from
  the masks (random tokens of Llama 3, so odd whitespace, long strings, deep nesting); every
  finished sample must validate. One that does not is an invalid instance munch accepts,
  except where a key or string holds a character that JSON Schema's ECMA-262 patterns and the
  validator's Python `re` read apart (a carriage return for `.`; U+FEFF, U+001C-U+001F and
  U+0085 for `\s`), counted apart.
- **mutations agree**: each valid sample, parsed and changed at one random place (a property
  removed or added, a value of another type, an array item removed, repeated or added, a string
  or number changed), is labelled by the validator and checked by munch (the Python package,
  properties in any order, as the validator reads objects, or in the schema's order where an
  object has more than 8 properties). A disagreement is a valid instance munch rejects or an
  invalid one it accepts; a property added at an object's end, which the schema's order may put
  elsewhere, is counted apart, as are a number written with an exponent under bounds and a
  domain of more than 4 labels or a last label of more than 61 characters (munch's documented
  profiles: see munch-schema's docs).

Usage (after `cargo build --release -p munch-cli` and python/run-tests.sh, whose virtualenv has
munch and jsonschema; `pip install 'jsonschema[format]'` there so that the validator checks
date-time, hostname and uri too):

    ~/.cache/munch/venv/bin/python bench/schema_agreement.py [--samples 20] [--mutations 10] [FILE.json...]

Prints one row per schema and the totals, then every disagreement (schema, text, both verdicts).
Exits 1 if there is one. A schema with a pattern that Python's `re` does not read (ECMA's
`\p{L}`) is left out and named.
"""
import argparse
import copy
import json
import pathlib
import random
import re
import subprocess
import sys

import jsonschema

import munch
from schema_coverage import cache_dir, schemastore

OTHER_TYPES = [None, True, 0, 1.5, -7, "", "x", [], {}, [1], {"k": 1}]


def validator_for(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def samples(cli, path, n, seed, max_tokens):
    """The finished texts of `munch generate` (a truncated sample is dropped)."""
    r = subprocess.run(
        [cli, "generate", f"schema:{path}", "--tokenizer", "llama3", "-n", str(n),
         "--seed", str(seed), "--max-tokens", str(max_tokens)],
        capture_output=True, text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed")
    # Lines end at "\n" only: a sample's JSON string may hold U+2028 or U+0085 as they are.
    lines = r.stdout.split("\n")
    truncated = {
        int(line.split()[1].rstrip(":"))
        for line in r.stderr.split("\n") + lines
        if line.startswith("sample ") and "truncated" in line
    }
    texts = [json.loads(line) for line in lines if line.startswith('"')]
    return [t for i, t in enumerate(texts) if i not in truncated]


def places(value, path=()):
    """Every place of a JSON value, as paths (the root is `()`)."""
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from places(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from places(v, path + (i,))


def mutate(value, rng):
    """A copy of `value` changed at one random place, and what was done."""
    value = copy.deepcopy(value)
    path = rng.choice(list(places(value)))
    parent, key = None, None
    target = value
    for p in path:
        parent, key = target, p
        target = target[p]

    def replace(new):
        nonlocal value
        if parent is None:
            value = new
        else:
            parent[key] = new

    options = ["type"]
    if isinstance(target, dict):
        options += ["add key"] + (["remove key"] if target else [])
    if isinstance(target, list):
        options += ["append"] + (["remove item", "repeat item"] if target else [])
    if isinstance(target, str):
        options += ["longer string", "empty string", "other string"]
    if isinstance(target, (int, float)) and not isinstance(target, bool):
        options += ["plus one", "negate", "times ten", "fraction"]
    what = rng.choice(options)
    if what == "type":
        replace(rng.choice([t for t in OTHER_TYPES if type(t) is not type(target)]))
    elif what == "add key":
        target[rng.choice(["zz", "name", "type", "id", "x-extra"])] = rng.choice(OTHER_TYPES)
    elif what == "remove key":
        del target[rng.choice(list(target))]
    elif what == "append":
        target.append(copy.deepcopy(rng.choice(target)) if target and rng.random() < 0.5
                      else rng.choice(OTHER_TYPES))
    elif what == "remove item":
        del target[rng.randrange(len(target))]
    elif what == "repeat item":
        target.append(copy.deepcopy(rng.choice(target)))
    elif what == "longer string":
        replace(target + "a" * rng.choice([1, 10, 300]))
    elif what == "empty string":
        replace("")
    elif what == "other string":
        replace(rng.choice(["abc", "ABC-1234", "2024-01-01", "x@y.z", "é日本", "1.0", "a b"]))
    elif what == "plus one":
        replace(target + 1)
    elif what == "negate":
        replace(-target)
    elif what == "times ten":
        replace(target * 10)
    elif what == "fraction":
        replace(target + 0.5)
    return value, path, f"{what} at /{'/'.join(map(str, path))}"


def at(value, path):
    for p in path:
        value = value[p]
    return value


def long_domain(value):
    """A string whose part after its last `@` has more than 4 dot-separated labels or a last
    label of more than 61 characters: what munch's `hostname` and `email` formats leave out (a
    documented narrowing that keeps them within 253 characters), and the validator's `email`
    check (an `@` anywhere) does not."""
    if not isinstance(value, str):
        return False
    labels = value.rsplit("@", 1)[-1].split(".")
    return len(labels) > 4 or len(labels[-1]) > 61


def not_finite(value):
    """Whether a number of `value` does not survive the round trip (`1e400` reads as inf)."""
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(not_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(not_finite(v) for v in value)
    return False


# Characters ECMA-262's patterns (JSON Schema's, munch's) and Python's `re` (the validator's)
# read apart: `.` matches a carriage return in Python only (`^.*$` as a `patternProperties`
# key is the case met); `\s` matches U+FEFF in ECMA only, and U+001C-U+001F and U+0085 in
# Python only.
DIALECT = set("\r\ufeff\x1c\x1d\x1e\x1f\x85")


def has_cr(value):
    """Whether a key or string of `value` holds a character of `DIALECT`."""
    if isinstance(value, str):
        return any(c in DIALECT for c in value)
    if isinstance(value, dict):
        return any(has_cr(k) or has_cr(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_cr(v) for v in value)
    return False


def has_exponent(value):
    """Whether `json.dumps` writes a number of `value` with an exponent (`1e+25`)."""
    if isinstance(value, float):
        return "e" in repr(value)
    if isinstance(value, dict):
        return any(has_exponent(v) for v in value.values())
    if isinstance(value, list):
        return any(has_exponent(v) for v in value)
    return False


def munch_accepts(compiled, text):
    m = munch.Matcher(compiled)
    try:
        return bool(m.accept_string(text)) and m.is_accepting()
    except munch.MunchError:
        return False


def check_texts(texts, validator, compiled, any_order, rng, mutations, row, bad, stem):
    """One schema's samples and their mutations, judged by the validator and by munch (`row`
    counts, `bad` gets the disagreements)."""
    for t in texts:
        instance = json.loads(t)
        errors = list(validator.iter_errors(instance))
        if not errors and not_finite(instance):
            continue  # valid, but Python's floats cannot write it back
        if errors and has_cr(instance):
            row["dialect"] += 1
            continue
        if errors:
            row["generated_invalid"] += 1
            bad.append((stem, "generated", t, errors[0].message))
            continue
        for _ in range(mutations):
            changed, place, what = mutate(instance, rng)
            try:
                mtext = json.dumps(changed, ensure_ascii=False)
                mtext.encode()
            except UnicodeEncodeError:  # a lone surrogate (`"\udfab"` is valid JSON)
                mtext = json.dumps(changed)
            valid = validator.is_valid(changed)
            accepted = munch_accepts(compiled, mtext)
            row["mutations"] += 1
            row["valid" if valid else "invalid"] += 1
            if valid and not accepted and not any_order and what.startswith("add key"):
                row["order"] += 1
            elif valid and not accepted and has_exponent(changed):
                # munch's profile: under bounds, exponents only where the sign decides.
                row["exponent"] += 1
            elif valid and not accepted and long_domain(at(changed, place)):
                row["domain"] += 1
            elif valid and not accepted:
                row["valid_rejected"] += 1
                bad.append((stem, what, mtext, "valid, munch rejects"))
            elif accepted and not valid:
                row["invalid_accepted"] += 1
                bad.append((stem, what, mtext, "invalid, munch accepts"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--munch", default="target/release/munch")
    ap.add_argument("--samples", type=int, default=20, help="texts generated per schema")
    ap.add_argument("--mutations", type=int, default=10, help="mutations of each valid text")
    ap.add_argument("--max-tokens", type=int, default=1024, help="a longer sample is dropped")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = [pathlib.Path(f) for f in args.files] or schemastore()
    tokenizer = None
    rng = random.Random(args.seed)
    bad = []
    unreadable = []
    totals = dict(schemas=0, generated=0, generated_invalid=0, mutations=0, valid=0,
                  valid_rejected=0, invalid=0, invalid_accepted=0, order=0, exponent=0, domain=0, dialect=0)
    print("| schema | order | generated (invalid, dialect) | mutations | valid: rejected (exponent, "
          "long domain) | invalid: accepted |")
    print("|---|---|---:|---:|---:|---:|")
    for path in files:
        text = path.read_text()
        schema = json.loads(text)
        try:
            grammar, any_order = munch.Grammar.from_json_schema(text, property_order="any"), True
        except munch.GrammarError:
            # Objects of more than 8 properties in any order are past a budget: the schema's
            # order, in which a property added after the others may be out of place.
            try:
                grammar, any_order = munch.Grammar.from_json_schema(text), False
            except munch.GrammarError:
                continue
        if tokenizer is None:
            tokenizer = munch.Tokenizer.from_file(llama3_path())
        compiled = munch.compile(grammar, tokenizer, masker="trie")
        validator = validator_for(schema)
        texts = samples(args.munch, path, args.samples, args.seed, args.max_tokens)
        row = dict(generated=len(texts), generated_invalid=0, mutations=0, valid=0,
                   valid_rejected=0, invalid=0, invalid_accepted=0, order=0, exponent=0, domain=0, dialect=0)
        found = len(bad)
        try:
            check_texts(texts, validator, compiled, any_order, rng, args.mutations, row, bad,
                        path.stem)
        except re.error as e:
            # A pattern Python's `re` does not read (ECMA's `\p{L}`): no verdict to compare.
            del bad[found:]
            unreadable.append(f"{path.stem} ({e})")
            continue
        totals["schemas"] += 1
        for k, v in row.items():
            totals[k] += v
        order = "any" if any_order else f"schema's ({row['order']} added out of order)"
        print(f"| {path.stem} | {order} | {row['generated']} ({row['generated_invalid']}, "
              f"{row['dialect']}) | "
              f"{row['mutations']} | {row['valid']}: {row['valid_rejected']} "
              f"({row['exponent']}, {row['domain']}) | "
              f"{row['invalid']}: {row['invalid_accepted']} |", flush=True)
    print()
    print(f"{totals['schemas']} schemas: {totals['generated']} texts generated, "
          f"{totals['generated_invalid']} of them invalid (and {totals['dialect']} invalid to the "
          f"validator only through a character the two regex dialects read apart); "
          f"{totals['mutations']} mutations: "
          f"{totals['valid']} valid ({totals['valid_rejected']} rejected by munch, "
          f"{totals['exponent']} more with a number munch's profile writes without exponent, "
          f"{totals['domain']} more with a domain past munch's hostname profile, "
          f"{totals['order']} with a property added out of the schema's order), "
          f"{totals['invalid']} invalid ({totals['invalid_accepted']} accepted by munch)")
    if unreadable:
        print(f"{len(unreadable)} schemas left out: the validator cannot read a pattern: "
              + ", ".join(unreadable))
    for schema, what, text, why in bad:
        print(f"\n{schema}: {what}: {why}\n  {text[:400]}")
    return 1 if bad else 0


def llama3_path():
    """Llama 3's tokenizer.json in munch's cache (the CLI fetched it for `generate`)."""
    return next((cache_dir() / "tokenizers" / "llama3").glob("**/tokenizer.json"))


if __name__ == "__main__":
    sys.exit(main())
