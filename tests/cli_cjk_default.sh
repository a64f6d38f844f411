#!/bin/sh
# Words of their own for Chinese, Japanese and Thai are the command's
# default: two 300-character Chinese texts that differ in one character are
# found by 'minlsh dedup' with no option (and not with --no-cjk-words, where
# each is one word). An index made with the old default (--no-cjk-words,
# what minlsh 0.1 wrote) keeps its options: add and query use them, its
# config id is 0.1's, and a shard with the new default is refused by merge
# with a message that names the flag and --no-cjk-words.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin cli_cjk_default
check() { # NAME FILE WANT: the file's content is exactly WANT
    if [ "$(cat "$2")" = "$3" ]; then ok "$1"; else ko "$1" "got:" "$(cat "$2")" "expected:" "$3"; fi
}

# 300 characters drawn from a 16-character sentence (a fixed pseudo-random
# order), and a copy with the 151st character changed.
"$PY" - "$tmp" <<'PY'
import random, sys
chars = "我们今天去公园看花和树木天气很好"
rnd = random.Random(3)
a = "".join(rnd.choice(chars) for _ in range(300))
b = a[:150] + "猫" + a[151:]
for name, text in (("a.txt", a), ("b.txt", b), ("c.txt", "一二三四五六七八九十" * 30)):
    with open(sys.argv[1] + "/" + name, "w", encoding="utf-8") as fh:
        fh.write(text)
with open(sys.argv[1] + "/en.txt", "w") as fh:
    fh.write("the quick brown fox jumps over the lazy dog near the bank of the river\n")
PY

"$M" dedup -q --output pairs "$tmp/a.txt" "$tmp/b.txt" "$tmp/c.txt" > "$tmp/out" 2>&1
# J >= 291/301 (296 shingles each, at most 5 differ)
if awk -v a="$tmp/a.txt" -v b="$tmp/b.txt" 'NF == 3 && $1 >= 0.96 && $1 < 1 &&
        $2 == a && $3 == b { n++ } END { exit !(n == 1 && NR == 1) }' "$tmp/out"; then
    ok defaults_find_the_pair
else
    ko defaults_find_the_pair "$(cat "$tmp/out")"
fi
"$M" dedup -q --output pairs --no-cjk-words "$tmp/a.txt" "$tmp/b.txt" "$tmp/c.txt" > "$tmp/out" 2>&1
check no_cjk_words_finds_nothing "$tmp/out" ""
"$M" dedup -q --output pairs --cjk-words "$tmp/a.txt" "$tmp/b.txt" > "$tmp/out" 2>&1
if [ "$(wc -l < "$tmp/out")" -eq 1 ]; then ok cjk_words_still_accepted; else ko cjk_words_still_accepted "$(cat "$tmp/out")"; fi
# --no-cjk-words wins over --normalize, and excludes --cjk-words
"$M" dedup -q --output pairs --normalize --no-cjk-words "$tmp/a.txt" "$tmp/b.txt" > "$tmp/out" 2>&1
check no_cjk_words_after_normalize "$tmp/out" ""
"$M" dedup -q --cjk-words --no-cjk-words "$tmp/a.txt" > "$tmp/out" 2>&1
st=$?
if [ $st -eq 2 ] && grep -q "exclude each other" "$tmp/out"; then ok both_refused; else ko both_refused "status $st" "$(cat "$tmp/out")"; fi

# The signature of ASCII text does not depend on the default.
"$M" sig "$tmp/en.txt" > "$tmp/s1" 2>&1
"$M" sig --no-cjk-words "$tmp/en.txt" > "$tmp/s2" 2>&1
if [ -s "$tmp/s1" ] && cmp -s "$tmp/s1" "$tmp/s2"; then ok ascii_signature_unchanged; else ko ascii_signature_unchanged "$(cat "$tmp/s1" "$tmp/s2")"; fi

# An index of the old default: its options come from the file.
if "$M" index create -q --no-cjk-words "$tmp/old.idx" &&
    "$M" index add -q "$tmp/old.idx" "$tmp/a.txt" "$tmp/en.txt" &&
    "$M" index stats "$tmp/old.idx" > "$tmp/stats" 2>&1; then
    if grep -q "^config id  *84f6fe21ac593947$" "$tmp/stats" &&
        grep -q "^normalize  *none$" "$tmp/stats"; then
        ok old_index_has_01_config_id
    else
        ko old_index_has_01_config_id "$(cat "$tmp/stats")"
    fi
else
    ko old_index_has_01_config_id "create, add or stats failed"
fi
# query: the copy of en.txt is found; the changed Chinese text is not (one word)
cp "$tmp/en.txt" "$tmp/en2.txt"
if "$M" index query --format tsv "$tmp/old.idx" "$tmp/en2.txt" "$tmp/b.txt" > "$tmp/out" 2> "$tmp/err"; then
    if grep -q "en.txt" "$tmp/out" && ! grep -q "a.txt" "$tmp/out"; then
        ok old_index_query
    else
        ko old_index_query "$(cat "$tmp/out" "$tmp/err")"
    fi
else
    ko old_index_query "$(cat "$tmp/err")"
fi
# an index of the new default finds the Chinese pair
if "$M" index create -q "$tmp/new.idx" && "$M" index add -q "$tmp/new.idx" "$tmp/a.txt" &&
    "$M" index query --format tsv "$tmp/new.idx" "$tmp/b.txt" > "$tmp/out" 2> "$tmp/err" &&
    grep -q "a.txt" "$tmp/out" && "$M" index stats "$tmp/new.idx" | grep -q "^normalize  *cjk-words$"; then
    ok new_index_query
else
    ko new_index_query "$(cat "$tmp/out" "$tmp/err")"
fi
# merge: the shards differ by the default flag, and the message says so
"$M" index merge -q "$tmp/m.idx" "$tmp/old.idx" "$tmp/new.idx" > "$tmp/out" 2>&1
st=$?
if [ $st -eq 1 ] && grep -q "normalize cjk-words, .*old.idx has none" "$tmp/out" &&
    grep -q -- "--no-cjk-words" "$tmp/out"; then
    ok merge_names_the_flag
else
    ko merge_names_the_flag "status $st" "$(cat "$tmp/out")"
fi

finish
