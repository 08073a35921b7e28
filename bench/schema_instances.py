"""Writes the instances of the schema benchmark: for each schema in bench/schemas/, valid and
invalid JSON texts in bench/schemas/instances/NAME.json, each labelled by the `jsonschema`
validator (draft 2020-12, with its format checker), not by munch.

Usage: python bench/schema_instances.py   (needs `jsonschema`; python/run-tests.sh's venv has it)

Valid instances: one with every property the schema names, one with only the required ones,
one taking the last branch of every `enum`/`anyOf`/`oneOf`. Invalid instances: mutations of a
valid one (a required property removed, a property of the wrong type, a property the schema
forbids, a value outside an `enum`, a string past `maxLength`, a number below `minimum`, an
array below `minItems`, a `pattern` broken); a mutation that the validator still accepts is
dropped. Texts are written as Python's `json.dumps` writes them (`", "` and `": "`, no other
whitespace), properties in the schema's order: every engine's default JSON profile takes that.
"""
import copy
import json
import pathlib
import re
import sys

import jsonschema

HERE = pathlib.Path(__file__).resolve().parent
SCHEMAS = HERE / "schemas"
OUT = SCHEMAS / "instances"

# Values of the formats the validator may not check (date-time, hostname, uri need optional
# packages): chosen to be valid under every reading of the format.
FORMATS = {
    "date-time": "2024-05-01T10:30:00Z",
    "date": "2024-05-01",
    "time": "10:30:00Z",
    "email": "alice@example.com",
    "hostname": "api.example.com",
    "ipv4": "192.168.1.20",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/a/b?c=1",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}

# A matching string for each pattern of the schemas, tried in order.
PATTERN_SAMPLES = [
    "10.1234/abc.5",
    "12345",
    "ABC-1234",
    "en",
    "1.2.3",
    "0000-0002-1825-0097",
]


def resolve(schema, root):
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        node = root
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema


def string_value(s):
    if "format" in s:
        return FORMATS[s["format"]]
    if "pattern" in s:
        for c in PATTERN_SAMPLES:
            if re.search(s["pattern"], c):
                return c
        raise SystemExit(f"no sample for pattern {s['pattern']!r}")
    lo, hi = s.get("minLength", 0), s.get("maxLength", 1 << 30)
    text = "sample text"
    while len(text) < lo:
        text += " more"
    return text[: max(lo, min(len(text), hi))]


def number_value(s, integer):
    lo = s.get("minimum", s.get("exclusiveMinimum", 0) + (1 if integer else 0.5))
    hi = s.get("maximum", s.get("exclusiveMaximum", lo + 100))
    v = lo + 1 if lo + 1 < hi else lo
    if "exclusiveMinimum" in s and v <= s["exclusiveMinimum"]:
        v = s["exclusiveMinimum"] + 1
    return int(v) if integer or float(v).is_integer() else v


def generate(schema, root, mode, depth=0):
    """mode: "full", "required" or "last"."""
    s = resolve(schema, root)
    if s is True or s == {}:
        return "anything"
    if "const" in s:
        return s["const"]
    if "enum" in s:
        return s["enum"][-1 if mode == "last" else 0]
    for key in ("anyOf", "oneOf"):
        if key in s:
            branches = s[key]
            return generate(branches[-1 if mode == "last" else 0], root, mode, depth + 1)
    t = s.get("type")
    if isinstance(t, list):
        t = next(x for x in t if x != "null")
    if t is None:
        t = "object" if "properties" in s else "string"
    if t == "object":
        props = s.get("properties", {})
        required = set(s.get("required", []))
        out = {}
        for k, sub in props.items():
            # Recursive schemas stop at depth 3 (only required properties below).
            if k in required or (mode != "required" and depth < 3):
                out[k] = generate(sub, root, mode, depth + 1)
        return out
    if t == "array":
        n = max(s.get("minItems", 0), 1 if mode != "required" or depth == 0 else 0)
        n = min(n, s.get("maxItems", n))
        prefix = s.get("prefixItems", [])
        items = [generate(p, root, mode, depth + 1) for p in prefix[:n]]
        while len(items) < n:
            items.append(generate(s.get("items", {}), root, mode, depth + 1))
        return items
    if t == "string":
        return string_value(s)
    if t == "integer":
        return number_value(s, True)
    if t == "number":
        return number_value(s, False)
    if t == "boolean":
        return True
    if t == "null":
        return None
    raise SystemExit(f"cannot generate type {t!r}")


def mutations(instance, schema, root, depth=0):
    """Candidate invalid instances: (what, instance)."""
    s = resolve(schema, root)
    out = []
    props = s.get("properties", {})
    for k in s.get("required", []):
        if k in instance:
            m = copy.copy(instance)
            del m[k]
            out.append((f"without required {k}", m))
            break
    if s.get("additionalProperties") is False:
        m = dict(instance)
        m["unexpected_key"] = 1
        out.append(("a property the schema forbids", m))
    for k, sub in props.items():
        if k not in instance:
            continue
        sub = resolve(sub, root)
        v = instance[k]
        wrong = 12345 if isinstance(v, str) else "a string"
        out.append((f"{k} of the wrong type", {**instance, k: wrong}))
        if "enum" in sub:
            out.append((f"{k} outside its enum", {**instance, k: "not-in-enum"}))
        if "maxLength" in sub:
            out.append((f"{k} past maxLength", {**instance, k: "x" * (sub["maxLength"] + 1)}))
        if "minimum" in sub:
            out.append((f"{k} below minimum", {**instance, k: sub["minimum"] - 1}))
        if "pattern" in sub:
            out.append((f"{k} breaking its pattern", {**instance, k: "!bad pattern!"}))
        if "minItems" in sub and sub["minItems"] > 0:
            out.append((f"{k} below minItems", {**instance, k: []}))
        if sub.get("format") in ("email", "ipv4", "uuid", "date"):
            out.append((f"{k} breaking format {sub['format']}", {**instance, k: "not valid"}))
        # One level down: inside an object property, or the first item of an array of objects.
        if isinstance(v, dict) and depth < 2:
            for what, m in mutations(v, sub, root, depth + 1):
                out.append((f"{k}: {what}", {**instance, k: m}))
        if isinstance(v, list) and v and isinstance(v[0], dict) and depth < 2:
            for what, m in mutations(v[0], sub.get("items", {}), root, depth + 1):
                out.append((f"{k}[0]: {what}", {**instance, k: [m] + v[1:]}))
    if depth == 0:
        out.append(("an array where an object is expected", [instance]))
    return out


def compact(value):
    return json.dumps(value, ensure_ascii=False)


def main():
    OUT.mkdir(exist_ok=True)
    checker = jsonschema.FormatChecker()
    for path in sorted(SCHEMAS.glob("*.json")):
        schema = json.loads(path.read_text())
        validator = jsonschema.Draft202012Validator(schema, format_checker=checker)
        valid, invalid = [], []
        for mode in ("full", "required", "last"):
            v = generate(schema, schema, mode)
            errors = list(validator.iter_errors(v))
            if errors:
                raise SystemExit(f"{path.name} ({mode}): generated an invalid instance: {errors[0]}")
            if compact(v) not in valid:
                valid.append(compact(v))
        base = json.loads(valid[0])
        for what, m in mutations(base, schema, schema):
            if not validator.is_valid(m) and compact(m) not in [t for _, t in invalid]:
                invalid.append((what, compact(m)))
        out = {
            "schema": path.name,
            "valid": valid,
            "invalid": [{"why": w, "text": t} for w, t in invalid],
        }
        (OUT / path.name).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
        print(f"{path.name}: {len(valid)} valid, {len(invalid)} invalid", file=sys.stderr)


if __name__ == "__main__":
    main()
