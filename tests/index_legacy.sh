#!/bin/sh
# An index written by the command before the store (tests/golden/legacy_index:
# text metadata with two names, a journal with three more, made by minlsh at
# 35daf70) is read by every index subcommand, takes adds and removals in its
# journal, and is rewritten in the store's format by its first compaction,
# with every name and answer kept.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin index_legacy
G=tests/golden/legacy_index
cp "$G/legacy.mlsh" "$G/legacy.mlsh.journal" "$tmp/"
I=$tmp/legacy.mlsh
if run legacy_stats 0 "$M" index stats "$I"; then
    line legacy_stats_documents "$tmp/out" 'documents            5'
    line legacy_stats_options "$tmp/out" 'normalize            lowercase,cjk-words'
fi
if run legacy_query 0 "$M" index query -q --format tsv "$I" "$G/fox.txt"; then
    if [ "$(grep -c fox "$tmp/out")" -eq 2 ] && grep -q 'fox2\.txt' "$tmp/out"; then
        ok legacy_query_finds_both
    else ko legacy_query_finds_both "$(cat "$tmp/out")"; fi
fi
if run legacy_query_jsonl 0 "$M" index query -q --jsonl --format jsonl "$I" "$G/docs.jsonl"; then
    line legacy_json_names "$tmp/out" '{"a": 42, "b": 42, "similarity": 1.0}'
fi
printf 'a page of its own about winter trains and snow on the line\n' > "$tmp/own.txt"
run legacy_add 0 "$M" index add -q "$I" "$tmp/own.txt" && ok legacy_add
run legacy_novel_only 0 "$M" index add -q --novel-only "$I" "$G/board.txt" &&
    has legacy_novel_only "$tmp/out" '^duplicate  .*board\.txt  board\.txt  1\.0000$'
run legacy_remove 0 "$M" index remove -q "$I" 42 && ok legacy_remove
if LC_ALL=C grep -aq 'minlsh store' "$I" && ! LC_ALL=C grep -aq 'minlsh-cli-index' "$I"; then
    ok legacy_rewritten_by_compaction
else ko legacy_rewritten_by_compaction "still the text metadata"; fi
if run legacy_after 0 "$M" index stats "$I"; then
    line legacy_after_documents "$tmp/out" 'documents            5'
fi
"$M" index query -q --format tsv "$I" "$G/fox.txt" "$tmp/own.txt" > "$tmp/q" 2> /dev/null
if [ "$(wc -l < "$tmp/q")" -eq 4 ] && grep -q 'own\.txt' "$tmp/q"; then ok legacy_answers_after
else ko legacy_answers_after "$(cat "$tmp/q")"; fi
finish
