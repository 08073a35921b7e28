"""Label files with what Lark (the reference implementation) accepts.

Usage: lark_label.py GRAMMAR MODE [--postlex python] [--start RULE] FILE...
(MODE: lalr or earley; Lark's own lexer for LALR, the contextual one, and 'basic' for Earley,
which settles LALR's conflicts; `--postlex python` is Lark's PythonIndenter,
whose newline terminal is `_NEWLINE`, or `_NL` when the grammar has no `_NEWLINE`)
Prints one JSON object per file: {"file", "accepted", "error", "token", "char",
"char_category"}; `token` is [type, value] for an unexpected token, `char` the character no
terminal matched and `char_category` its Unicode category in this Python (`Cn`: unassigned in
its Unicode tables). The first line is {"lark": VERSION, "unicode": VERSION, "mode": MODE} or
{"grammar_error": MESSAGE}.
"""
import json
import sys
import unicodedata

import lark


def main():
    grammar_path, mode, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    options = {}
    while files and files[0] in ("--postlex", "--start"):
        options[files[0][2:]] = files[1]
        files = files[2:]
    with open(grammar_path, encoding="utf-8", newline="") as f:
        source = f.read()
    kwargs = {}
    if "start" in options:
        kwargs["start"] = options["start"]
    if options.get("postlex") == "python":
        from lark.indenter import PythonIndenter

        class Indenter(PythonIndenter):
            NL_type = "_NEWLINE" if "_NEWLINE" in source else "_NL"

        kwargs["postlex"] = Indenter()
    try:
        lexer = "contextual" if mode == "lalr" else "basic"
        parser = lark.Lark(source, parser=mode, lexer=lexer, **kwargs)
    except Exception as e:  # any failure to build is reported, not raised
        print(json.dumps({"grammar_error": f"{type(e).__name__}: {e}"}))
        return
    print(json.dumps({"lark": lark.__version__, "unicode": unicodedata.unidata_version, "mode": mode}))
    for path in files:
        try:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
        except Exception as e:
            print(json.dumps({"file": path, "accepted": False, "error": f"unreadable: {e}"}))
            continue
        try:
            parser.parse(text)
            print(json.dumps({"file": path, "accepted": True, "error": None}))
        except Exception as e:
            label = {"file": path, "accepted": False, "error": str(e)[:300]}
            token = getattr(e, "token", None)
            if token is not None:
                label["token"] = [token.type, str(token)]
            char = getattr(e, "char", None)
            if isinstance(char, str) and len(char) == 1:
                label["char"] = char
                label["char_category"] = unicodedata.category(char)
            print(json.dumps(label))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
