#!/usr/bin/env bash
# The hostile inputs of the reliability issue, each run once through the release CLI with its
# default budgets (or the budget the row names): seconds, peak RSS, exit status and the first
# line of the error. A row meets the targets when it ends within 1 s (grammars) or 10 s (texts)
# under 1 GiB, with exit status 0 or a typed error (status 2; 1 for `parse` when a file is
# rejected, the reason in its JSON line). Timings: a benchmark, not a test.
#
#   bash bench/hostile.sh [TOKENIZER]     # default llama3; builds the CLI in release first
set -u
cd "$(dirname "$0")/.."
tok=${1:-llama3}
cargo build --release -q -p munch-cli || exit 1
m=$PWD/target/release/munch
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

python3 - "$d" <<'EOF'
import sys, os
d = sys.argv[1]
def w(name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
w("ss.lark", 'start: s\ns: s s | "a"\n')
w("ss_eps.lark", 'start: s\ns: s s | "a" |\n')
w("sss.lark", 'start: s\ns: s s s | s s | "a"\n')
w("plus.lark", 'start: e\ne: e "+" e | "a"\n')
w("a1000.txt", "a" * 1000)
w("plus1000.txt", "+".join(["a"] * 1000))
w("nested5000.txt", "if (x) " * 5000 + "x=1;" + " else x=1;" * 5000)
w("chain5000.txt", "if (x) x=1; else " * 5000 + "x=1;")
w("deep100k.json", "[" * 100000 + "]" * 100000)
w("kw8000.lark", "start: (" + " | ".join('"k%d"' % i for i in range(8000)) + ")*\n")
w("re8000.lark", "start: (" + " | ".join("R%d" % i for i in range(8000)) + ")*\n"
  + "".join("R%d: /r%dx+/\n" % (i, i) for i in range(8000)))
w("opt3000.lark", "start: " + " ".join('[x "a"]' for _ in range(3000)) + "\nx: \"b\"\n")
w("chain60000.lark", "start: r0\n" + "".join("r%d: r%d\n" % (i, i + 1) for i in range(60000))
  + 'r60000: "a"\n')
w("chain311845.lark", "start: r0\n" + "".join("r%d: r%d\n" % (i, i + 1) for i in range(311845))
  + 'r311845: "a"\n')
w("long200k.lark", "start: " + ' "a"' * 200000 + "\n")
w("dot.lark", "start: A\nA: /[^x]{0,3000}x[^y]{0,3000}y/\n")
w("array20m.json", "[" + ",".join(['{"a": 1, "b": [true, null]}'] * 740000) + "]")
import json
tok = json.load(open("vocab/tests/data/bytelevel/tokenizer.json"))
tok["added_tokens"].append({"id": 4194303, "content": "<far>", "single_word": False,
    "lstrip": False, "rstrip": False, "normalized": False, "special": True})
w("sparse.json", json.dumps(tok))
EOF

printf '| input | seconds | peak MB | exit | error |\n|---|---|---|---|---|\n'
row() {
    local name=$1
    shift
    local t mem rc err
    rc=0
    /usr/bin/time -o "$d/time" -f "%e %M" "$@" >"$d/out" 2>"$d/err" || rc=$?
    read -r t mem < <(tail -1 "$d/time") || true
    # The typed error: what the command printed on stderr, else the first file's error line
    # (`parse`) or the parser's (`check`).
    err=
    if [ "$rc" != 0 ]; then
        err=$( (cat "$d/err"; grep -o '"\(message\|parser_error\)":"[^"]*"' "$d/out" | cut -d'"' -f4) |
            head -1 | cut -c1-110 | tr '|' '/')
    fi
    printf "| %s | %s | %d | %s | %s |\n" "$name" "$t" "$((${mem:-0} / 1024))" "$rc" "$err"
}
row '`s: s s | "a"`, 1,000 a' "$m" parse "$d/ss.lark" "$d/a1000.txt"
row '`s: s s | "a" |`, 1,000 a' "$m" parse "$d/ss_eps.lark" "$d/a1000.txt"
row '`s: s s s | s s | "a"`, 1,000 a' "$m" parse "$d/sss.lark" "$d/a1000.txt"
row '`e: e "+" e | "a"`, 1,000 operands' "$m" parse "$d/plus.lark" "$d/plus1000.txt"
row 'tricky, 5,000 nested dangling else' "$m" parse builtin:tricky "$d/nested5000.txt"
row 'tricky, 5,000-link else-if chain' "$m" parse builtin:tricky "$d/chain5000.txt"
for k in trie spanner wda; do
    row "JSON array 100,000 deep, $k, every mask" "$m" trace builtin:json "$d/deep100k.json" \
        --tokenizer "$tok" --masker "$k"
done
row '8,000 keywords, load' "$m" check "$d/kw8000.lark"
for k in spanner wda; do
    row "8,000 keywords, $k" "$m" compile "$d/kw8000.lark" --tokenizer "$tok" --masker "$k"
done
row '8,000 regex terminals, load' "$m" check "$d/re8000.lark"
row '3,000 optional items, load' "$m" check "$d/opt3000.lark"
row '60,000-rule unit chain, load' "$m" check "$d/chain60000.lark"
row '311,845-rule unit chain, load' "$m" check "$d/chain311845.lark"
row 'one production of 200,000 symbols' "$m" check "$d/long200k.lark"
for k in spanner wda; do
    row "dot-heavy terminal, $k, --max-memory 100 MB" "$m" compile "$d/dot.lark" \
        --tokenizer "$tok" --masker "$k" --max-memory 100000000
done
row 'dot-heavy terminal, wda --lazy, --max-memory 100 MB' "$m" compile "$d/dot.lark" \
    --tokenizer "$tok" --masker wda --lazy --max-memory 100000000
row 'tokenizer naming id 4,194,303, dot-heavy terminal, wda' "$m" compile "$d/dot.lark" \
    --tokenizer "$d/sparse.json" --masker wda
row 'parse /dev/zero' "$m" parse builtin:json /dev/zero
row 'parse /dev/urandom' "$m" parse builtin:json /dev/urandom
row 'parse a 20 MB JSON array' "$m" parse builtin:json "$d/array20m.json"
row 'trace /dev/zero, wda' "$m" trace builtin:json /dev/zero --tokenizer "$tok" --masker wda
row 'trace a 20 MB JSON array, wda' "$m" trace builtin:json "$d/array20m.json" \
    --tokenizer "$tok" --masker wda
