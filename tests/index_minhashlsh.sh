#!/bin/sh
# A file Python's MinHashLSH saved (tests/golden/bindings/minhashlsh/
# saved-0.2.mlsh, written by bindings/python/tests/test_lsh_files.py) is a
# store: the command's index subcommands read its names and answer a text.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin index_minhashlsh
G=tests/golden/bindings/minhashlsh
cp "$G/saved-0.2.mlsh" "$tmp/"
I=$tmp/saved-0.2.mlsh
if run lsh_stats 0 "$M" index stats "$I"; then
    line lsh_stats_documents "$tmp/out" 'documents            4'
    line lsh_stats_threshold "$tmp/out" 'threshold            0.7'
fi
# The text of Python's key 7 (the page of "w2_0 ... w2_79").
i=0 words=''
while [ $i -lt 80 ]; do words="$words${words:+ }w2_$i"; i=$((i + 1)); done
printf '%s' "$words" > "$tmp/seven.txt"
if run lsh_query 0 "$M" index query -q --format tsv "$I" "$tmp/seven.txt"; then
    has lsh_query_names_the_key "$tmp/out" "seven\.txt	7	1\.0000$"
fi
finish
