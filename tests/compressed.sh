#!/bin/sh
# Compressed input through the minlsh command: gzip and zstd are recognised
# by their first bytes (not by file names) in files, JSON Lines and standard
# input, and give exactly the output of the plain input (byte-identical
# stdout), concatenated gzip members and zstd frames included. Truncated and
# corrupt data is reported with the file (and the JSON Lines line), the run
# goes on with the other inputs, and the exit status is 1.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin compressed
if ! command -v zstd >/dev/null 2>&1; then
    ko zstd_installed "the zstd program is not installed (sh scripts/deps.sh test)"
    finish
fi
# gz FILE: gzip it to standard output (Python's gzip, with no name stored).
gz() { $PY -c 'import gzip, sys; sys.stdout.buffer.write(gzip.compress(open(sys.argv[1], "rb").read(), mtime=0))' "$1"; }
zs() { zstd -q -c "$1"; }

# A small corpus with near-duplicates: 60 documents, as files and as JSON Lines.
$PY - "$tmp" <<'EOF'
import json, os, random, sys
out = sys.argv[1]
rnd = random.Random(7)
vocab = ["w%d" % i for i in range(400)]
os.makedirs(out + "/plain")
docs = []
for i in range(20):
    base = [rnd.choice(vocab) for _ in range(300)]
    docs.append(base)
    for _ in range(2):
        d = list(base)
        for _ in range(rnd.randrange(0, 25)):
            d[rnd.randrange(len(d))] = rnd.choice(vocab)
        docs.append(d)
with open(out + "/corpus.jsonl", "w") as f:
    for i, d in enumerate(docs):
        text = " ".join(d)
        open("%s/plain/doc%02d.txt" % (out, i), "w").write(text + "\n")
        f.write(json.dumps({"id": "d%d" % i, "text": text}) + "\n")
EOF
P=$tmp/plain
for kind in gz zst mixed; do
    mkdir -p "$tmp/$kind"
    i=0
    for f in "$P"/*; do
        n=$(basename "$f")
        case $kind in
            gz) gz "$f" > "$tmp/$kind/$n" ;;
            zst) zs "$f" > "$tmp/$kind/$n" ;;
            mixed) case $((i % 3)) in 0) cp "$f" "$tmp/$kind/$n" ;; 1) gz "$f" > "$tmp/$kind/$n" ;; 2) zs "$f" > "$tmp/$kind/$n" ;; esac ;;
        esac
        i=$((i + 1))
    done
done
gz "$tmp/corpus.jsonl" > "$tmp/corpus.jsonl.gz"
zs "$tmp/corpus.jsonl" > "$tmp/corpus.jsonl.zst"

# same NAME WANT_STATUS DIR CMD...: run CMD in DIR; stdout must equal $tmp/want.
same() {
    name=$1 want=$2 dir=$3
    shift 3
    (cd "$dir" && "$@") > "$tmp/got" 2> "$tmp/err"
    st=$?
    if [ "$st" -ne "$want" ]; then ko "$name" "exit status $st, expected $want" "$(cat "$tmp/err")"; return 1; fi
    if cmp -s "$tmp/got" "$tmp/want"; then ok "$name"; return 0; fi
    ko "$name" "stdout differs from the plain input's:" "$(diff "$tmp/want" "$tmp/got" | head -n 6)"
    return 1
}

# ---- files -------------------------------------------------------------------
for args in "--output pairs --format jsonl" "--format tsv"; do
    tag=$(echo "$args" | tr -d ' -')
    # shellcheck disable=SC2086
    (cd "$P" && "$M" dedup -q $args .) > "$tmp/want" 2>/dev/null
    if [ ! -s "$tmp/want" ]; then ko "files_plain_$tag" "no output"; continue; fi
    for kind in gz zst mixed; do
        # shellcheck disable=SC2086
        same "files_${kind}_$tag" 0 "$tmp/$kind" "$M" dedup -q $args .
    done
done

# ---- JSON Lines, from a path and from standard input --------------------------
"$M" dedup -q --jsonl --output pairs --format jsonl "$tmp/corpus.jsonl" > "$tmp/want" 2>/dev/null
for ext in gz zst; do
    same "jsonl_$ext" 0 "$tmp" "$M" dedup -q --jsonl --output pairs --format jsonl "corpus.jsonl.$ext"
    same "jsonl_${ext}_stdin" 0 "$tmp" sh -c "\"$M\" dedup -q --jsonl --output pairs --format jsonl - < corpus.jsonl.$ext"
done
# Names do not matter, only the first bytes.
cp "$tmp/corpus.jsonl.zst" "$tmp/named.jsonl"
same jsonl_by_magic_not_name 0 "$tmp" "$M" dedup -q --jsonl --output pairs --format jsonl named.jsonl
cp "$tmp/corpus.jsonl" "$tmp/plain-named.jsonl.gz"
same plain_named_gz 0 "$tmp" "$M" dedup -q --jsonl --output pairs --format jsonl plain-named.jsonl.gz

# ---- standard input as one document --------------------------------------------
(cd "$P" && "$M" dedup -q --output pairs - doc00.txt doc03.txt < doc01.txt) > "$tmp/want" 2>/dev/null
for ext in gz zst; do
    case $ext in gz) gz "$P/doc01.txt" > "$tmp/in.$ext" ;; *) zs "$P/doc01.txt" > "$tmp/in.$ext" ;; esac
    same "stdin_$ext" 0 "$P" sh -c "\"$M\" dedup -q --output pairs - doc00.txt doc03.txt < \"$tmp/in.$ext\""
done

# ---- concatenated members and frames ---------------------------------------------
"$M" dedup -q --jsonl --output pairs --format jsonl "$tmp/corpus.jsonl" > "$tmp/want" 2>/dev/null
split -l 17 "$tmp/corpus.jsonl" "$tmp/part."
: > "$tmp/cat.gz"
: > "$tmp/cat.zst"
for p in "$tmp"/part.*; do
    gz "$p" >> "$tmp/cat.gz"
    zs "$p" >> "$tmp/cat.zst"
done
# A member boundary in the middle of a line, too.
head -c 1000 "$tmp/corpus.jsonl" > "$tmp/cut1"
tail -c +1001 "$tmp/corpus.jsonl" > "$tmp/cut2"
{ gz "$tmp/cut1"; gz "$tmp/cut2"; } > "$tmp/cut.gz"
{ zs "$tmp/cut1"; zs "$tmp/cut2"; } > "$tmp/cut.zst"
for f in cat.gz cat.zst cut.gz cut.zst; do
    same "concatenated_$f" 0 "$tmp" "$M" dedup -q --jsonl --output pairs --format jsonl "$f"
done

# ---- truncated and corrupt data -------------------------------------------------
# A file: reported by name, skipped; the others give the same output as
# without it.
(cd "$P" && "$M" dedup -q --output pairs doc00.txt doc01.txt doc02.txt) > "$tmp/want" 2>/dev/null
size=$(wc -c < "$tmp/gz/doc05.txt")
head -c $((size / 2)) "$tmp/gz/doc05.txt" > "$tmp/trunc.gz"
size=$(wc -c < "$tmp/zst/doc05.txt")
head -c $((size / 2)) "$tmp/zst/doc05.txt" > "$tmp/trunc.zst"
$PY -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0xff; open(sys.argv[2], "wb").write(b)' \
    "$tmp/gz/doc05.txt" "$tmp/corrupt.gz"
$PY -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0xff; b[len(b) // 2 + 1] ^= 0xff; open(sys.argv[2], "wb").write(b)' \
    "$tmp/zst/doc05.txt" "$tmp/corrupt.zst"
for bad in trunc.gz:'truncated gzip data' trunc.zst:'truncated zstd data' \
           corrupt.gz:'corrupt gzip data' corrupt.zst:'(corrupt|truncated) zstd data'; do
    f=${bad%%:*} msg=${bad#*:}
    if same "bad_$f" 1 "$P" "$M" dedup -q --output pairs doc00.txt "$tmp/$f" doc01.txt doc02.txt; then
        if grep -Eq "^minlsh: $tmp/$f: $msg" "$tmp/err"; then ok "bad_${f}_message"
        else ko "bad_${f}_message" "$(cat "$tmp/err")"; fi
    fi
done
# JSON Lines: the line where the data ends is named; the lines before it count.
size=$(wc -c < "$tmp/corpus.jsonl.gz")
head -c $((size * 2 / 3)) "$tmp/corpus.jsonl.gz" > "$tmp/trunc.jsonl.gz"
"$M" dedup --jsonl --output pairs --format jsonl "$tmp/trunc.jsonl.gz" > "$tmp/got" 2> "$tmp/err"
st=$?
line=$(sed -n "s|^minlsh: $tmp/trunc.jsonl.gz:\([0-9]*\): truncated gzip data: .*|\1|p" "$tmp/err")
if [ "$st" -eq 1 ] && [ -n "$line" ] && [ "$line" -gt 1 ]; then
    head -n $((line - 1)) "$tmp/corpus.jsonl" > "$tmp/before.jsonl"
    "$M" dedup -q --jsonl --output pairs --format jsonl "$tmp/before.jsonl" > "$tmp/want" 2>/dev/null
    if cmp -s "$tmp/got" "$tmp/want"; then ok jsonl_truncated; else ko jsonl_truncated "the lines before $line give another answer"; fi
else
    ko jsonl_truncated "status $st" "$(cat "$tmp/err")"
fi
# Standard input, truncated: named as standard input.
head -c $((size / 2)) "$tmp/corpus.jsonl.gz" > "$tmp/half.gz"
"$M" dedup -q --jsonl - < "$tmp/half.gz" > /dev/null 2> "$tmp/err"
st=$?
if [ "$st" -eq 1 ] && grep -Eq '^minlsh: standard input:[0-9]+: truncated gzip data' "$tmp/err"
then ok stdin_truncated; else ko stdin_truncated "status $st" "$(cat "$tmp/err")"; fi
# Data after the last gzip member that is not another member is corrupt.
{ cat "$tmp/corpus.jsonl.gz"; printf 'trailing garbage'; } > "$tmp/trailing.gz"
"$M" dedup -q --jsonl "$tmp/trailing.gz" > /dev/null 2> "$tmp/err"
st=$?
if [ "$st" -eq 1 ] && grep -q "trailing.gz:[0-9]*: corrupt gzip data" "$tmp/err"
then ok gzip_trailing_garbage; else ko gzip_trailing_garbage "status $st" "$(cat "$tmp/err")"; fi

# ---- data that ends where a read ends -------------------------------------------
# Decompressed sizes that are multiples of every read size up to 1 MiB: the
# last read fills its buffer exactly, and what follows is the end of the
# data, not a truncated frame or member. A file and standard input sign as
# the plain text does; a JSON Lines record with no final newline, too large
# for --max-doc-size, gives the documented warning and status 0.
for size in 65536 131072 1048576; do
    $PY - "$tmp/text$size" "$tmp/line$size.jsonl" "$size" <<'EOF2'
import sys
size = int(sys.argv[3])
words = b" ".join(b"w%d" % (i % 977) for i in range(size))
open(sys.argv[1], "wb").write(words[:size])
head, tail = b'{"id": "big", "text": "', b'"}'
open(sys.argv[2], "wb").write(head + words[:size - len(head) - len(tail)] + tail)
EOF2
    for f in "text$size" "line$size.jsonl"; do
        gz "$tmp/$f" > "$tmp/$f.gz"
        zs "$tmp/$f" > "$tmp/$f.zst"
    done
    "$M" sig -q --num-perm 4 "$tmp/text$size" 2>/dev/null | cut -f 2 > "$tmp/want"
    for ext in gz zst; do
        same "boundary_file_${size}_$ext" 0 "$tmp" sh -c "\"$M\" sig -q --num-perm 4 text$size.$ext | cut -f 2"
        same "boundary_stdin_${size}_$ext" 0 "$tmp" sh -c "\"$M\" sig -q --num-perm 4 - < text$size.$ext | cut -f 2"
    done
    for f in "line$size.jsonl" "line$size.jsonl.gz" "line$size.jsonl.zst"; do
        if run "boundary_too_large_$f" 0 "$M" dedup --jsonl --max-doc-size 100 "$tmp/$f"; then
            line "boundary_too_large_${f}_warning" "$tmp/err" \
                "minlsh: $tmp/$f:1: larger than --max-doc-size 100, skipped"
        fi
    done
done

# A large compressed document is streamed: 40 MB of text in a small file.
$PY -c '
import gzip, sys
line = b" ".join(b"w%d" % i for i in range(1000)) + b"\n"
sys.stdout.buffer.write(gzip.compress(line * 6000, 1, mtime=0))' > "$tmp/large.gz"
# (A sanitizer build reserves terabytes of shadow memory: no address-space
# limit there, only the answer.)
if [ -n "${MINLSH_SANITIZE:-}" ]; then limit_as=unlimited; else limit_as=400000; fi
if (ulimit -v "$limit_as" 2>/dev/null; "$M" sig -q --num-perm 4 "$tmp/large.gz") > "$tmp/got" 2> "$tmp/err" &&
   [ "$(wc -l < "$tmp/got")" -eq 1 ]
then ok large_streamed; else ko large_streamed "$(cat "$tmp/err")"; fi

finish
