#!/bin/sh
# The command's Unicode normalisation flags: --normalize finds what the
# ASCII flags miss (accents in capitals, sharp s, ligatures, typographic
# dashes; Chinese without spaces), each flag is accepted alone, an index
# keeps its flags (index stats names them) and later adds and queries use
# them, and an index made with the ASCII flags still works as before.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin cli_unicode
check() { # NAME FILE WANT: the file's content is exactly WANT
    if [ "$(cat "$2")" = "$3" ]; then ok "$1"; else ko "$1" "got:" "$(cat "$2")" "expected:" "$3"; fi
}

cat > "$tmp/docs.jsonl" <<'DOCS'
{"id":"a","text":"ÉCOLE ÜBER STRASSE, the ﬁrst day of the year"}
{"id":"b","text":"école über straße — the first day of the year"}
{"id":"c","text":"我们今天去公园看花和树木天气很好我们今天去公园看花和树木天气很好"}
{"id":"d","text":"我们今天去公园看花和树木天气很好我们今天去公园看花和树木天气好好"}
{"id":"e","text":"something else entirely, nothing like the others at all"}
DOCS

"$M" dedup -q --jsonl --normalize --output pairs "$tmp/docs.jsonl" > "$tmp/out" 2>&1
check normalize_finds_both "$tmp/out" "1.0000  a  b
0.8889  c  d"

"$M" dedup -q --jsonl --lowercase --strip-punct --collapse-space --no-cjk-words --output pairs \
    "$tmp/docs.jsonl" > "$tmp/out" 2>&1
check ascii_flags_find_neither "$tmp/out" ""

# The defaults split the Chinese pair into words (--cjk-words is on).
"$M" dedup -q --jsonl --threshold 0.5 --output pairs "$tmp/docs.jsonl" > "$tmp/out" 2>&1
check defaults_find_chinese "$tmp/out" "0.8889  c  d"

status=0
for f in --nfkc --casefold --unicode-punct --unicode-space --fold-digits --cjk-words; do
    "$M" dedup -q --jsonl "$f" "$tmp/docs.jsonl" > /dev/null 2>&1 || status=$f
done
if [ "$status" = 0 ]; then ok each_flag_accepted; else ko each_flag_accepted "$status failed"; fi

"$M" dedup -q --jsonl --cjk-words --threshold 0.5 --output pairs "$tmp/docs.jsonl" > "$tmp/out" 2>&1
check cjk_words_alone "$tmp/out" "0.8889  c  d"

# An index keeps its flags: add and query use them, stats names them.
head -n 1 "$tmp/docs.jsonl" > "$tmp/one.jsonl"
sed -n 2p "$tmp/docs.jsonl" > "$tmp/two.jsonl"
if "$M" index create -q --normalize "$tmp/u.idx" && "$M" index add -q --jsonl "$tmp/u.idx" "$tmp/one.jsonl" &&
    "$M" index query --jsonl "$tmp/u.idx" "$tmp/two.jsonl" > "$tmp/out" 2> "$tmp/err" &&
    [ "$(cat "$tmp/out")" = "1.0000  b  a" ]; then ok index_unicode_query
else ko index_unicode_query "$(cat "$tmp/out" "$tmp/err")"; fi
"$M" index stats "$tmp/u.idx" > "$tmp/out" 2>&1
if grep -q 'lowercase,strip-punct,collapse-space,nfkc,casefold,unicode-punct,unicode-space,fold-digits,cjk-words' "$tmp/out"
then ok index_stats_names_flags; else ko index_stats_names_flags "$(cat "$tmp/out")"; fi

# The ASCII flags: the same configuration as before the Unicode flags.
if "$M" index create -q --lowercase --strip-punct --collapse-space "$tmp/a.idx" &&
    "$M" index add -q --jsonl "$tmp/a.idx" "$tmp/one.jsonl" &&
    "$M" index query --jsonl "$tmp/a.idx" "$tmp/two.jsonl" > "$tmp/out" 2> "$tmp/err" &&
    [ ! -s "$tmp/out" ]; then ok index_ascii_query
else ko index_ascii_query "$(cat "$tmp/out" "$tmp/err")"; fi

finish
