"""Write out the grammars of Lark's own test suite that Lark itself loads.

Usage: lark_test_grammars.py TESTS_DIR OUT_DIR
Reads every `test_*.py` in TESTS_DIR (the `tests/` folder of Lark's source distribution), takes
each string constant that looks like a grammar (several lines, one holding a `:`), keeps those
that `Lark(text, parser=MODE)` loads with MODE `lalr` or else `earley`, and writes each to
OUT_DIR/FILE_LINE.lark. Prints one JSON object per grammar written: {"file", "source", "line",
"mode"}.
"""
import ast
import json
import os
import sys

import lark


def candidates(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            lines = [l.strip() for l in text.splitlines()]
            if len(lines) > 1 and any(":" in l and not l.startswith("//") for l in lines):
                yield node.lineno, text


def loads(text):
    for mode in ("lalr", "earley"):
        try:
            lark.Lark(text, parser=mode)
            return mode
        except Exception:
            pass
    return None


def main():
    tests, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    seen = set()
    for name in sorted(os.listdir(tests)):
        if not (name.startswith("test_") and name.endswith(".py")):
            continue
        for line, text in candidates(os.path.join(tests, name)):
            if text in seen:
                continue
            seen.add(text)
            mode = loads(text)
            if mode is None:
                continue
            file = os.path.join(out, f"{name[:-3]}_{line}.lark")
            with open(file, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            print(json.dumps({"file": file, "source": name, "line": line, "mode": mode}))


if __name__ == "__main__":
    main()
