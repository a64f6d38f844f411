#!/bin/sh
# minlsh index remove: documents named as index query prints them (paths,
# string ids without quotes, numeric ids as written) are removed and the rest
# renumbered, giving the very file index add makes without them; unknown
# names are reported (exit 1) without stopping the others; nothing to remove
# leaves the file untouched.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin index_remove
mkdir -p "$tmp/files"
i=0
while [ $i -lt 12 ]; do
    # Distinct texts: every document its own words.
    seq $((i * 100)) $((i * 100 + 60)) | sed "s/^/w$i-/" | tr '\n' ' ' > "$tmp/files/doc$i.txt"
    printf '{"id": "s%d", "text": "%s"}\n{"id": %d, "text": "%s x"}\n' $i "$(cat "$tmp/files/doc$i.txt")" \
        $((1000 + i)) "$(cat "$tmp/files/doc$i.txt")" >> "$tmp/docs.jsonl"
    i=$((i + 1))
done
# Paths.
"$M" index create -q "$tmp/a.mlsh" && "$M" index add -q "$tmp/a.mlsh" "$tmp/files"
ls "$tmp"/files/*.txt | grep -v 'doc3.txt\|doc7.txt' > "$tmp/keep"
"$M" index create -q "$tmp/b.mlsh" && "$M" index add -q "$tmp/b.mlsh" $(cat "$tmp/keep")
# A small add stays in b.mlsh.journal: fold it in, to compare whole files.
"$M" index compact -q "$tmp/b.mlsh"
if "$M" index remove "$tmp/a.mlsh" "$tmp/files/doc3.txt" "$tmp/files/doc7.txt" 2> "$tmp/err" &&
   grep -q 'removed 2 documents, 10 in the index' "$tmp/err" &&
   same_index "$tmp/a.mlsh" "$tmp/b.mlsh" "$tmp/files"
then ok remove_paths_same_index_as_never_added
else ko remove_paths_same_index_as_never_added "$(cat "$tmp/err")"; fi
# JSON ids: a string without its quotes, a number as written, an unknown one.
"$M" index create -q "$tmp/j.mlsh" && "$M" index add -q --jsonl "$tmp/j.mlsh" "$tmp/docs.jsonl"
grep -v '"s4"\|: 1009,' "$tmp/docs.jsonl" > "$tmp/kept.jsonl"
"$M" index create -q "$tmp/k.mlsh" && "$M" index add -q --jsonl "$tmp/k.mlsh" "$tmp/kept.jsonl"
"$M" index compact -q "$tmp/k.mlsh"
"$M" index remove "$tmp/j.mlsh" s4 1009 nosuch s4 2> "$tmp/err"
st=$?
if [ $st -eq 1 ] && grep -q 'nosuch: not in' "$tmp/err" && grep -q 'removed 2 documents, 22 in' "$tmp/err" &&
   same_index "$tmp/j.mlsh" "$tmp/k.mlsh" --jsonl "$tmp/docs.jsonl"; then ok remove_json_ids
else ko remove_json_ids "status $st" "$(cat "$tmp/err")"; fi
"$M" index query -q --jsonl --format jsonl "$tmp/j.mlsh" "$tmp/docs.jsonl" > "$tmp/q" 2> /dev/null
if ! grep -q '"a": "s4", "b": "s4"' "$tmp/q" && grep -q '"a": "s5", "b": "s5"' "$tmp/q" &&
   ! grep -q '"b": 1009' "$tmp/q"; then ok remove_gone_from_queries
else ko remove_gone_from_queries "$(head -n 5 "$tmp/q")"; fi
cp "$tmp/j.mlsh" "$tmp/before"
"$M" index remove -q "$tmp/j.mlsh" nosuch 2> /dev/null
st=$?
[ $st -eq 1 ] && cmp -s "$tmp/j.mlsh" "$tmp/before" && ok remove_nothing_untouched ||
    ko remove_nothing_untouched "status $st"
"$M" index remove "$tmp/j.mlsh" > /dev/null 2>&1
[ $? -eq 2 ] && ok remove_needs_an_id || ko remove_needs_an_id "not a usage error"
finish
