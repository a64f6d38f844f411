#!/bin/sh
# JSON Lines input through the minlsh command (the reader itself is unit
# tested by tests/test_json.c): line endings, a last line without a newline,
# a byte-order mark, blank lines, NUL bytes, a line of several megabytes, and
# that a bad line is reported with its line number while the others are
# read. Exact stdout, stderr lines and exit statuses.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin jsonl

T='the quick brown fox jumps over the lazy dog'
# pairs NAME WANT_STATUS WANT_STDOUT [WANT_STDERR_LINE]: dedup --jsonl of
# $tmp/in as TSV pairs.
pairs() {
    "$M" dedup --jsonl --output pairs --format tsv -q "$tmp/in" > "$tmp/out" 2> "$tmp/err"
    got=$?
    if [ "$got" -ne "$2" ]; then ko "$1" "exit status $got, expected $2" "$(cat "$tmp/err")"; return; fi
    if [ "$(cat "$tmp/out")" != "$3" ]; then ko "$1" "stdout:" "$(cat "$tmp/out")" "expected:" "$3"; return; fi
    if [ $# -ge 4 ] && ! grep -Fqx -- "$4" "$tmp/err"; then
        ko "$1" "no line '$4' in stderr:" "$(cat "$tmp/err")"
        return
    fi
    ok "$1"
}
HEAD='a	b	similarity	estimate'
AB="$HEAD
a	b	1.0000	1.0000"

printf '{"id": "a", "text": "%s"}\n{"id": "b", "text": "%s"}\n' "$T" "$T" > "$tmp/in"
pairs lf 0 "$AB"
printf '{"id": "a", "text": "%s"}\r\n{"id": "b", "text": "%s"}\r\n' "$T" "$T" > "$tmp/in"
pairs crlf 0 "$AB"
printf '{"id": "a", "text": "%s"}\n{"id": "b", "text": "%s"}' "$T" "$T" > "$tmp/in"
pairs "last line without newline" 0 "$AB"
printf '{"id": "a", "text": "%s"}\r\n{"id": "b", "text": "%s"}\r' "$T" "$T" > "$tmp/in"
pairs "last line ending in CR only" 0 "$AB"
printf '\357\273\277{"id": "a", "text": "%s"}\n\n   \n\t\r\n{"id": "b", "text": "%s"}\n\n' "$T" "$T" > "$tmp/in"
pairs "byte-order mark and blank lines" 0 "$AB"
printf '{"id": "a", "text": "%s"}\n{"id": "b", "text": "%s' "$T" "$T" > "$tmp/in"
pairs "truncated last record" 1 "$HEAD" \
    "minlsh: $tmp/in:2: invalid JSON: unterminated string at the end of the line"
printf '{"id": "a", "text": "%s"}\n{"id": "x", "text": "a\000b"}\n{"id": "b", "text": "%s"}\n' "$T" "$T" > "$tmp/in"
pairs "NUL byte in a string" 1 "$AB" \
    "minlsh: $tmp/in:2: invalid JSON at column 23: control character in string"
printf '{"id": "a", "text": "%s"}\n{"id": 1}\n{"id": "b", "text": "%s"}\n' "$T" "$T" > "$tmp/in"
pairs "missing field" 1 "$AB" "minlsh: $tmp/in:2: missing field \"text\""
printf '{"id": "a", "text": "%s"}\n{"id": "b", "text": "\\ud800 %s"}\n' "$T" "$T" > "$tmp/in"
pairs "lone surrogate" 1 "$HEAD" \
    "minlsh: $tmp/in:2: invalid JSON at column 22: unpaired surrogate in \\u escape (found '\\')"

# A line of 4 MB (more than any fixed buffer), twice: one pair.
/usr/bin/python3 - "$tmp/in" <<'PY'
import sys
words = " ".join("w%d" % i for i in range(500000))
with open(sys.argv[1], "w") as f:
    f.write('{"id": "a", "text": "%s"}\n{"id": "b", "text": "%s"}' % (words, words))
PY
pairs "very long lines" 0 "$AB"

finish
