"""Record the parses that Lark's own test suite makes with its LALR parser, with Lark's verdicts.

Usage: lark_test_parses.py SOURCE_DIR OUT_DIR
Runs every `tests/test_*.py` of the Lark source distribution unpacked at SOURCE_DIR with
`lark.Lark` wrapped. Each `parse(text)` of a parser built from grammar text with
`parser="lalr"` and one of Lark's own lexers (`basic`, `contextual`), without a post-lexer,
lexer callbacks, the `regex` module, regex flags, terminal edits or import paths, is recorded
with whether Lark accepted the text (an `UnexpectedInput` is a refusal; a parse that raises
anything else is left out). Writes each grammar to OUT_DIR/HASH.lark (with OUT_DIR/grammars
linked to the suite's `tests/grammars`, which Lark's relative imports in the tests name) and
the parses to
OUT_DIR/parses.jsonl, one JSON object per distinct (grammar, start, lexer, text):
{"grammar": PATH, "start", "lexer", "text", "accepted"}.
"""
import hashlib
import json
import os
import sys
import unittest

import lark

# Options that change what a text means to Lark's lexer or parser beyond munch's grammar.
LEFT_OUT = (
    "postlex",
    "lexer_callbacks",
    "regex",
    "g_regex_flags",
    "edit_terminals",
    "import_paths",
    "use_bytes",
)


def main():
    source, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    # Grammars given as text import relative to their test file's folder, `tests/`.
    link = os.path.join(out, "grammars")
    if not os.path.lexists(link):
        os.symlink(os.path.join(os.path.abspath(source), "tests", "grammars"), link)
    records = {}
    init, parse = lark.Lark.__init__, lark.Lark.parse

    def recording_init(self, grammar, **options):
        self._munch_grammar = grammar if isinstance(grammar, str) else None
        self._munch_left_out = any(options.get(k) for k in LEFT_OUT)
        return init(self, grammar, **options)

    def recording_parse(self, text, start=None, on_error=None):
        try:
            result = parse(self, text, start=start, on_error=on_error)
            accepted = True
        except lark.exceptions.UnexpectedInput:
            accepted, result = False, None
        except Exception:
            accepted, result = None, None
        grammar = getattr(self, "_munch_grammar", None)
        o = self.options
        if (
            grammar is not None
            and not getattr(self, "_munch_left_out", True)
            and accepted is not None
            and on_error is None
            and isinstance(text, str)
            and o.parser == "lalr"
            and o.lexer in ("basic", "contextual")
        ):
            name = hashlib.sha256(grammar.encode()).hexdigest()[:16] + ".lark"
            path = os.path.join(out, name)
            if not os.path.exists(path):
                with open(path, "w", encoding="utf-8") as f:
                    f.write(grammar)
            first = o.start[0] if isinstance(o.start, list) else o.start
            key = (path, start or first, o.lexer, text)
            records[key] = accepted
        if not accepted:
            # The test expects what Lark does: raise as Lark raises.
            return parse(self, text, start=start, on_error=on_error)
        return result

    lark.Lark.__init__ = recording_init
    lark.Lark.parse = recording_parse
    sys.path.insert(0, source)
    os.chdir(source)
    suite = unittest.defaultTestLoader.discover(
        os.path.join(source, "tests"), pattern="test_*.py", top_level_dir=source
    )
    with open(os.devnull, "w") as devnull:
        unittest.TextTestRunner(stream=devnull, verbosity=0).run(suite)
    with open(os.path.join(out, "parses.jsonl"), "w", encoding="utf-8") as f:
        for (path, start, lexer, text), accepted in sorted(records.items()):
            f.write(
                json.dumps(
                    {
                        "grammar": path,
                        "start": start,
                        "lexer": lexer,
                        "text": text,
                        "accepted": accepted,
                    }
                )
                + "\n"
            )


if __name__ == "__main__":
    main()
