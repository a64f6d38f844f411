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

# ---- lines past the 8 MiB a line is held to: parsed as they are read -------
# Each long line below is just past that size; what it gives must be what
# the same record held in memory gives, messages and all.
"$PY" - "$tmp" <<'PY'
import random, sys
d = sys.argv[1]
rng = random.Random(25)
vocab = ["w%d" % i for i in range(5000)] + ["caf\u00e9", "\u20ac", "\U0001F600"]
T = " ".join(rng.choice(vocab) for _ in range(300000))
def esc(s):  # every character as a \u escape: six bytes or twelve
    out = []
    for c in s:
        o = ord(c)
        if o > 0xFFFF:
            o -= 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF)))
        else:
            out.append("\\u%04x" % o)
    return "".join(out)
big = "x" * (9 << 20)
held = '{"id": "held", "text": "%s"}' % T
escaped = '{"text": "%s", "id": "escaped"}' % esc(T)  # the id after the text
skipped = '{"id": "skipped", "meta": "%s", "m2": [%s], "text": "%s"}' % (
    big, ",".join(["-1.5e3", "true", "{}", "[null]"] * 1000), T)
assert len(held.encode()) < 8 << 20 < min(len(escaped.encode()), len(skipped.encode()))
def write(name, lines, end="\n"):
    with open("%s/%s" % (d, name), "wb") as f:
        f.write(end.join(lines).encode("utf-8", "surrogateescape"))
write("held_first", [held, escaped, skipped])
write("streamed_first", [escaped, held, skipped])
# Refused lines: the message and column the held line would give.
bad_esc = '{"id": "e", "text": "%s \\q"}' % big
bad_utf8 = '{"id": "u", "text": "%s \udcff"}' % big
write("refused", [bad_esc, '{"id": "n", "meta": "%s"}' % big, bad_utf8, " \t" * (5 << 20),
                  '{"id": "ok", "text": "fine"}', '{"id": "t", "text": "%s' % big])
with open(d + "/refused.want", "w") as f:
    f.write("minlsh: %s/refused:1: invalid JSON at column %d: invalid escape in string (found 'q')\n"
            % (d, bad_esc.index("\\q") + 2))
    f.write('minlsh: %s/refused:2: missing field "text"\n' % d)
    f.write("minlsh: %s/refused:3: invalid JSON at column %d: invalid UTF-8 in string\n"
            % (d, len(bad_utf8.encode("utf-8", "surrogateescape")) - 2))
    f.write("minlsh: %s/refused:6: invalid JSON: unterminated string at the end of the line\n" % d)
# Records copied as read: a byte-order mark and CRLF are not part of them.
rec1 = '{"id": "r1", "text": "%s", "n": 1}' % T.replace(" ", "  ", 1)
rec2 = '{"id": "r2", "meta": "%s", "text": "other words entirely"}' % big
with open(d + "/records", "wb") as f:
    f.write(b"\xef\xbb\xbf" + rec1.encode() + b"\r\n" + rec2.encode() + b"\r")
with open(d + "/records.want", "wb") as f:
    f.write(rec1.encode() + b"\n" + rec2.encode() + b"\n")
# --max-doc-size 9M: a line of 9 MiB with its newline is read, one byte
# more is not.
head = '{"id": "%s", "text": "'
def sized(i, n):
    pre = head % i
    return pre + "y " * ((n - len(pre) - 3) // 2) + "y" * ((n - len(pre) - 3) % 2) + '"}'
write("sized", [sized("fits", 9 << 20), sized("over", (9 << 20) + 1), ""])
# One line of 48 MB of twelve words.
with open(d + "/twelve", "w") as f:
    f.write('{"id": 1, "text": "')
    f.write("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima " * 660000)
    f.write('"}\n')
PY
H='id	cluster	decision	representative	similarity	exact'
# decisions NAME FILE WANT: --keep longest keeps the first of equal lengths,
# so both orders pin the length; "exact" pins the fingerprint.
decisions() {
    if run "$1" 0 "$M" dedup --jsonl -q --keep longest --output decisions --format tsv "$2"; then
        if [ "$(cat "$tmp/out")" = "$3" ]; then ok "$1"; else ko "$1" "got:" "$(cat "$tmp/out")" "expected:" "$3"; fi
    fi
}
decisions "streamed lines give the held line's document" "$tmp/held_first" "$H
held	1	kept	held	1.0000	-
escaped	1	dropped	held	1.0000	exact
skipped	1	dropped	held	1.0000	exact"
decisions "a streamed line first" "$tmp/streamed_first" "$H
escaped	1	kept	escaped	1.0000	-
held	1	dropped	escaped	1.0000	exact
skipped	1	dropped	escaped	1.0000	exact"

if run "streamed lines refused" 1 "$M" dedup --jsonl -q --output decisions --format tsv "$tmp/refused"; then
    if [ "$(cat "$tmp/out")" = "$H
ok	0	kept	ok	1.0000	-" ] && grep -v '^minlsh: [0-9]* more\|^minlsh: skipped' "$tmp/err" | cmp -s - "$tmp/refused.want"; then
        ok "streamed lines refused"
    else
        ko "streamed lines refused" "stdout:" "$(cat "$tmp/out")" "stderr:" "$(cat "$tmp/err")" "expected:" "$(cat "$tmp/refused.want")"
    fi
fi

if run "streamed records copied as read" 0 "$M" dedup --jsonl -q --output kept "$tmp/records"; then
    if cmp -s "$tmp/out" "$tmp/records.want"; then ok "streamed records copied as read"
    else ko "streamed records copied as read" "$(head -c 300 "$tmp/out")"; fi
fi

if run "streamed line past --max-doc-size" 0 "$M" dedup --jsonl --max-doc-size 9M \
    --output decisions --format tsv "$tmp/sized"; then
    if [ "$(cat "$tmp/out")" = "$H
fits	0	kept	fits	1.0000	-" ]; then
        line "streamed line past --max-doc-size" "$tmp/err" \
            "minlsh: $tmp/sized:2: larger than --max-doc-size 9M, skipped"
    else ko "streamed line past --max-doc-size" "$(cat "$tmp/out")"; fi
fi

# Its memory follows the distinct shingles, not the length: held, the line
# took 164 MiB at its peak; streamed, 43 (the summary's peak RSS). A
# sanitizer's allocator keeps freed blocks in quarantine, so an instrumented
# build's RSS says nothing of this: there only the output is checked.
peak_max=96
if [ -n "${MINLSH_SANITIZE:-}" ]; then peak_max=1000000; fi
if run "a 48 MB line in little memory" 0 "$M" dedup --jsonl --threads 2 "$tmp/twelve"; then
    peak=$(sed -n 's/.*peak RSS \([0-9]*\)\.[0-9] MiB.*/\1/p' "$tmp/err")
    if [ -n "$peak" ] && [ "$peak" -lt "$peak_max" ]; then ok "a 48 MB line in little memory"
    else ko "a 48 MB line in little memory" "peak RSS '$peak' MiB, expected under 96" "$(cat "$tmp/err")"; fi
fi
# And copied to the output as read, through a temporary file, never whole.
if run "a 48 MB record kept in little memory" 0 "$M" dedup --jsonl --output kept "$tmp/twelve"; then
    peak=$(sed -n 's/.*peak RSS \([0-9]*\)\.[0-9] MiB.*/\1/p' "$tmp/err")
    if ! cmp -s "$tmp/out" "$tmp/twelve"; then ko "a 48 MB record kept in little memory" "not the record as read"
    elif [ -n "$peak" ] && [ "$peak" -lt "$peak_max" ]; then ok "a 48 MB record kept in little memory"
    else ko "a 48 MB record kept in little memory" "peak RSS '$peak' MiB, expected under 96" "$(cat "$tmp/err")"; fi
fi

finish
