#!/bin/sh
# The minlsh command on damaged index files (docs/robustness.md): every
# truncation length and a sample of single-bit flips of a saved index make
# `index stats`, `index query` and `index add` print a message on stderr and
# exit with status 1: never a crash (no signal, so status < 128), never
# status 0, and `add` never rewrites the damaged file. Damage that keeps the
# checksums valid (the checksums recomputed after flipping bits in the
# metadata or the signatures) may be accepted or refused, but never crashes.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin damaged_files
bin=$BUILD/minlsh

if ! command -v python3 >/dev/null 2>&1; then
    ko python3 "python3 is needed (scripts/deps.sh test)"
    finish
fi

# A small index: k = 16 keeps the file short, so every truncation is cheap.
printf 'the quick brown fox jumps over the lazy dog near the river bank today\n' >"$tmp/a.txt"
printf 'the quick brown fox jumps over the lazy dog near the river bank again\n' >"$tmp/b.txt"
printf 'an entirely different document about something else altogether\n' >"$tmp/c.txt"
good=$tmp/good.idx
if ! "$bin" index create -q --num-perm 16 --bands 4 --rows 4 "$good" 2>"$tmp/err" ||
   ! "$bin" index add "$good" "$tmp/a.txt" "$tmp/b.txt" "$tmp/c.txt" 2>>"$tmp/err" ||
   ! "$bin" index compact -q "$good" 2>>"$tmp/err"; then
    ko setup "$(head -n 3 "$tmp/err")"
    finish
fi
size=$(wc -c <"$good" | tr -d ' ')

# Run the three subcommands on a damaged file; append a line to $tmp/bad for
# any that misbehaves. $1: file, $2: strict (1: must exit 1) or lax (0 or 1).
check_file() {
    f=$1 strict=$2
    cp "$f" "$tmp/before"
    for cmd in stats query add; do
        case $cmd in
            stats) "$bin" index stats "$f" >/dev/null 2>"$tmp/e" ;;
            query) "$bin" index query "$f" "$tmp/a.txt" >/dev/null 2>"$tmp/e" ;;
            add) "$bin" index add "$f" "$tmp/c.txt" >/dev/null 2>"$tmp/e" ;;
        esac
        rc=$?
        if [ "$rc" -ge 128 ]; then
            echo "$cmd $(basename "$f"): killed by signal $((rc - 128))" >>"$tmp/bad"
        elif [ "$strict" = 1 ] && [ "$rc" -ne 1 ]; then
            echo "$cmd $(basename "$f"): exit status $rc, expected 1" >>"$tmp/bad"
        elif [ "$strict" = 1 ] && ! grep -q '^minlsh: ' "$tmp/e"; then
            echo "$cmd $(basename "$f"): no message on stderr" >>"$tmp/bad"
        elif [ "$rc" -gt 1 ]; then
            echo "$cmd $(basename "$f"): exit status $rc" >>"$tmp/bad"
        fi
    done
    # stats and query only read; add must not rewrite a file it refused.
    if [ "$strict" = 1 ] && ! cmp -s "$f" "$tmp/before"; then
        echo "add $(basename "$f"): the damaged file was rewritten" >>"$tmp/bad"
    fi
}

# Check every file of a directory; ok/ko with what went wrong.
check_dir() {
    name=$1 dir=$2 strict=$3 what=$4
    : >"$tmp/bad"
    for f in "$dir"/*.idx; do check_file "$f" "$strict"; done
    if [ ! -s "$tmp/bad" ]; then ok "$name: $what"
    else ko "$name" "$(head -n 5 "$tmp/bad")"; fi
}

# Every truncation length.
mkdir -p "$tmp/trunc"
n=0
while [ "$n" -lt "$size" ]; do
    head -c "$n" "$good" >"$tmp/trunc/t$n.idx"
    n=$((n + 1))
done
check_dir truncations "$tmp/trunc" 1 "all $size lengths refused by stats, query and add"

# Single-bit flips (a deterministic sample of 256 positions), and flips with
# the checksums made valid again (sum64 as docs/format.md defines it).
mkdir -p "$tmp/flip" "$tmp/forged"
python3 - "$good" "$tmp" <<'PY'
import random, struct, sys
src, out = sys.argv[1], sys.argv[2]
data = open(src, 'rb').read()
M = (1 << 64) - 1
def mix(x):
    x ^= x >> 32; x = (x * 0xD6E8FEB86659FD93) & M
    x ^= x >> 32; x = (x * 0xD6E8FEB86659FD93) & M
    x ^= x >> 32; return x
def sum64(b):
    lanes = [0x6D696E6C73682D30 + i for i in range(4)]
    padded = b + bytes((-len(b)) % 32)
    for s in range(0, len(padded), 32):
        for i in range(4):
            w = struct.unpack_from('<Q', padded, s + 8 * i)[0]
            lanes[i] = mix(lanes[i] ^ w)
    h = mix(len(b) ^ 0x9E3779B97F4A7C15)
    for l in lanes: h = mix(h ^ l)
    return h
# The checksums of a file (docs/format.md): version 1 has one over the
# payload; version 2 one over its directory and one per 64 KiB block, and
# the trailer sums the block table. fix() makes them valid again.
def fix(d):
    struct.pack_into('<Q', d, 56, sum64(bytes(d[:56])))
    if struct.unpack_from('<I', d, 8)[0] != 2:
        struct.pack_into('<Q', d, len(d) - 8, sum64(bytes(d[64:-8])))
        return
    struct.pack_into('<Q', d, 120, sum64(bytes(d[64:120])))
    sums_off, shift = struct.unpack_from('<QI', d, 104)
    if not (128 <= sums_off <= len(d) - 8 and 12 <= shift <= 30):
        return
    blk = 1 << shift
    n = (sums_off - 128 + blk - 1) // blk
    if sums_off + 8 * n + 8 != len(d):
        return
    for i in range(n):
        a = 128 + i * blk
        struct.pack_into('<Q', d, sums_off + 8 * i, sum64(bytes(d[a:min(a + blk, sums_off)])))
    struct.pack_into('<Q', d, len(d) - 8, sum64(bytes(d[sums_off:-8])))
# Refuse to run if this sum64 is not the library's (the file's own sums).
assert struct.unpack_from('<I', data, 8)[0] == 2
again = bytearray(data); fix(again)
assert bytes(again) == data
rng = random.Random(5)
bits = len(data) * 8
for i, bit in enumerate(sorted(rng.sample(range(bits), min(256, bits)))):
    d = bytearray(data); d[bit // 8] ^= 1 << (bit % 8)
    open('%s/flip/f%03d.idx' % (out, i), 'wb').write(d)
# Forged: damage past the header, then fix both checksums.
for i in range(64):
    d = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        p = rng.randrange(64, len(d) - 8); d[p] ^= 1 << rng.randrange(8)
    if i % 3 == 0:  # also damage header fields other than the magic
        p = rng.randrange(8, 56); d[p] ^= 1 << rng.randrange(8)
    fix(d)
    open('%s/forged/g%03d.idx' % (out, i), 'wb').write(d)
PY
if [ "$?" -ne 0 ]; then ko bitflips "could not make the damaged files"; else
    check_dir bitflips "$tmp/flip" 1 "256 single-bit flips refused by stats, query and add"
    check_dir forged "$tmp/forged" 0 "64 files with recomputed checksums, no crash"
fi

# The intact file still works after all that.
if "$bin" index stats "$good" >/dev/null 2>&1; then ok intact_file_still_loads
else ko intact_file_still_loads; fi

# NUL bytes and invalid UTF-8 in documents are ordinary input.
printf 'a\000b c\377\376 d\300\257e \342\202 f' >"$tmp/bin.txt"
if "$bin" index add "$good" "$tmp/bin.txt" >/dev/null 2>"$tmp/e" &&
   "$bin" index query "$good" "$tmp/bin.txt" >"$tmp/q" 2>>"$tmp/e" &&
   grep -q 'bin.txt' "$tmp/q"; then ok binary_document
else ko binary_document "$(head -n 3 "$tmp/e")"; fi

finish
