#!/bin/sh
# Document names as the bytes they are: files whose names differ only in
# bytes that are not UTF-8 stay three documents, JSON output writes each such
# byte as \udcXX (Python reads the name back with surrogateescape), and the
# names survive the journal and a compaction. And the index's metadata is
# checked for what it claims: stored shingling options that do not give the
# index's config id are blamed, not the key.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin index_names
mkdir -p "$tmp/files"

# Three names that a decoder with U+FFFD would make one.
for b in 200 201 377; do
    f=$(printf "$tmp/files/page\\$b.txt")
    seq 1 80 | sed "s/^/w$b-/" | tr '\n' ' ' > "$f"
done
"$M" index create -q "$tmp/ix"
if "$M" index add "$tmp/ix" "$tmp/files" 2> "$tmp/err" && grep -q 'added 3 documents' "$tmp/err"
then ok non_utf8_names_stay_apart
else ko non_utf8_names_stay_apart "$(cat "$tmp/err")"; fi
check_names() { # $1: test name
    "$M" index query -q --format jsonl "$tmp/ix" "$tmp/files" > "$tmp/q" 2> "$tmp/err"
    if "$PY" - "$tmp/q" "$tmp/files" <<'PY'
import json, os, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]
want = sorted(os.path.join(os.fsencode(sys.argv[2]), n) for n in os.listdir(os.fsencode(sys.argv[2])))
got = sorted(l['b'].encode('utf-8', 'surrogateescape') for l in lines)
# each file finds itself, and only itself: the bytes of the three names back
assert len(lines) == 3, lines
assert all(l['a'] == l['b'] for l in lines), lines
assert got == want, (got, want)
raw = open(sys.argv[1], 'rb').read()
assert b'\\udc80' in raw and b'\\udc81' in raw and b'\\udcff' in raw, raw
PY
    then ok "$1"
    else ko "$1" "$(cat "$tmp/q" "$tmp/err")"; fi
}
check_names names_from_the_journal
"$M" index compact -q "$tmp/ix"
check_names names_after_compaction
# Text output: the bytes themselves.
"$M" index query -q --format tsv "$tmp/ix" "$tmp/files" > "$tmp/q" 2> /dev/null
if grep -q "$(printf 'page\377.txt')" "$tmp/q"; then ok text_output_raw_bytes
else ko text_output_raw_bytes "$(cat "$tmp/q")"; fi

# Metadata whose shingling options were changed (word:5 to word:4, the
# checksums made valid again): the options are named. The file keeps no
# key, only the config id, so a custom key is named beside them.
cp "$tmp/ix" "$tmp/ix.sound"
"$PY" - "$tmp/ix" <<'PY'
import struct, sys
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
d = bytearray(open(sys.argv[1], 'rb').read())
assert struct.unpack_from('<I', d, 8)[0] == 2
meta_off, meta_len, sums_off, shift = struct.unpack_from('<QQQI', d, 88)
# the store's metadata (docs/format.md "Store"): units per shingle at 25
assert d[meta_off:meta_off + 13] == b'minlsh store\n'
assert struct.unpack_from('<I', d, meta_off + 25)[0] == 5
struct.pack_into('<I', d, meta_off + 25, 4)
blk = 1 << shift
n = (sums_off - 128 + blk - 1) // blk
for k in range(n):
    a = 128 + k * blk
    struct.pack_into('<Q', d, sums_off + 8 * k, sum64(bytes(d[a:min(a + blk, sums_off)])))
struct.pack_into('<Q', d, len(d) - 8, sum64(bytes(d[sums_off:-8])))
open(sys.argv[1], 'wb').write(d)
PY
# Its journal (empty since the compaction) names the old file's checksum.
rm -f "$tmp/ix.journal"
"$M" index query -q "$tmp/ix" "$tmp/files" > /dev/null 2> "$tmp/err"; st=$?
if [ $st -eq 1 ] && grep -q 'shingling options stored in the index (shingle word:4' "$tmp/err"
then ok changed_shingle_option_blamed
else ko changed_shingle_option_blamed "status $st" "$(cat "$tmp/err")"; fi
# A --key the index was not made with: the key is blamed.
"$M" index query -q --key 000102030405060708090a0b0c0d0e0f "$tmp/ix.sound" "$tmp/files" > /dev/null 2> "$tmp/err"
if grep -q 'do not give --key' "$tmp/err"; then ok wrong_key_blamed
else ko wrong_key_blamed "$(cat "$tmp/err")"; fi

finish
