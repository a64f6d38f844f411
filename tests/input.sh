#!/bin/sh
# The minlsh command's input options and per-document messages:
# --max-doc-size (files, JSON Lines lines, standard input, compressed data,
# an endless /dev/zero); warnings (empty and too large documents, invalid
# UTF-8) that leave the exit status alone, are capped at ten of a kind and
# counted at the end, and that --quiet silences; errors capped the same way
# but never silenced; --key-file and MINLSH_KEY_FILE; --include and
# --exclude in directory walks. Exact messages and exit statuses.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin input

T='the quick brown fox jumps over the lazy dog'
cd "$tmp" || exit 1

# ---- --max-doc-size -------------------------------------------------------------
printf '%s\n' "$T" > a.txt   # 44 bytes
cp a.txt b.txt
printf '%s %s\n' "$T" "$T" > long.txt   # 88 bytes
cp long.txt long2.txt
if run size_files 0 "$M" dedup --output pairs --max-doc-size 50 a.txt long.txt b.txt long2.txt; then
    line size_files_message err "minlsh: long.txt: larger than --max-doc-size 50, skipped"
    line size_files_others out "1.0000  a.txt  b.txt"
    nothing size_files_skipped out long
fi
run size_exact_limit 0 "$M" dedup -q --output pairs --max-doc-size 44 a.txt b.txt &&
    line size_exact_limit out "1.0000  a.txt  b.txt"
run size_one_below 0 "$M" dedup --output pairs --max-doc-size 43 a.txt b.txt &&
    line size_one_below err "minlsh: a.txt: larger than --max-doc-size 43, skipped"
run size_zero_no_limit 0 "$M" dedup -q --output pairs --max-doc-size 0 long.txt long2.txt &&
    line size_zero_no_limit out "1.0000  long.txt  long2.txt"
run size_suffix 0 "$M" dedup -q --output pairs --max-doc-size 1k a.txt b.txt &&
    line size_suffix out "1.0000  a.txt  b.txt"
run size_bad_value 2 "$M" dedup --max-doc-size 12X a.txt && ok size_bad_value
run size_negative 2 "$M" sig --max-doc-size -1 a.txt && ok size_negative

# An endless input stops at the limit (the default, 64M, would too).
if run size_dev_zero 0 timeout 60 "$M" dedup --output pairs --max-doc-size 1M /dev/zero a.txt b.txt; then
    line size_dev_zero_message err "minlsh: /dev/zero: larger than --max-doc-size 1M, skipped"
    line size_dev_zero_others out "1.0000  a.txt  b.txt"
fi
if run size_stdin 0 sh -c "head -c 3000000 /dev/zero | \"$M\" sig --num-perm 2 --max-doc-size 1M - a.txt"; then
    line size_stdin err "minlsh: standard input: larger than --max-doc-size 1M, skipped"
    if [ "$(wc -l < out)" -eq 1 ]; then ok size_stdin_others; else ko size_stdin_others "$(cat out)"; fi
fi
# Compressed: the limit is on the decompressed document (a 30 MB "bomb").
$PY -c 'import gzip, sys; sys.stdout.buffer.write(gzip.compress(b"x " * 15000000, 9, mtime=0))' > bomb.gz
if run size_gzip_bomb 0 "$M" sig --num-perm 2 --max-doc-size 1M bomb.gz a.txt; then
    line size_gzip_bomb err "minlsh: bomb.gz: larger than --max-doc-size 1M, skipped"
fi
# JSON Lines: a line past the limit is skipped, the next lines keep their numbers.
{
    printf '{"id": "a", "text": "%s"}\n' "$T"
    printf '{"id": "big", "text": "%s %s %s"}\n' "$T" "$T" "$T"
    printf 'not json\n'
    printf '{"id": "b", "text": "%s"}\n' "$T"
} > lines.jsonl
if run size_jsonl 1 "$M" dedup --jsonl --output pairs --max-doc-size 100 lines.jsonl; then
    line size_jsonl_message err "minlsh: lines.jsonl:2: larger than --max-doc-size 100, skipped"
    line size_jsonl_next_line err "minlsh: lines.jsonl:3: not a JSON object"
    line size_jsonl_others out "1.0000  a  b"
fi
# A long last line without a newline, and a long line from a pipe.
printf '{"id": "a", "text": "%s"}\n{"id": "b", "text": "%s %s %s"}' "$T" "$T" "$T" "$T" > last.jsonl
run size_jsonl_last 0 "$M" sig --jsonl --num-perm 2 --max-doc-size 100 - < last.jsonl &&
    line size_jsonl_last err "minlsh: standard input:2: larger than --max-doc-size 100, skipped"

# ---- warnings and errors: capped, counted, --quiet ---------------------------------
mkdir many
i=0
while [ $i -lt 25 ]; do : > "many/empty$(printf %02d $i)"; i=$((i + 1)); done
cp a.txt b.txt many/
if run empty_not_an_error 0 "$M" dedup --output pairs many; then
    line empty_others out "1.0000  many/a.txt  many/b.txt"
    line empty_first err "minlsh: many/empty00: empty document, kept as it is"
    line empty_tenth err "minlsh: many/empty09: empty document, kept as it is"
    nothing empty_eleventh err 'empty10'
    line empty_rest_counted err "minlsh: ... and 15 more such warnings (empty document)"
    line empty_tally err "minlsh: 25 empty documents"
    if [ "$(tail -n 1 err)" = "minlsh: 25 empty documents" ]; then ok empty_tally_last
    else ko empty_tally_last "$(tail -n 3 err)"; fi
fi
if run empty_quiet 0 "$M" dedup -q --output pairs many; then
    if [ "$(cat err)" = "minlsh: 25 empty documents" ]; then ok empty_quiet_only_counted
    else ko empty_quiet_only_counted "$(cat err)"; fi
fi
printf 'caf\351 %s\n' "$T" > latin1.txt
run kinds_counted 0 "$M" dedup -q --output pairs --max-doc-size 60 many/empty00 latin1.txt long.txt a.txt &&
    line kinds_counted err "minlsh: 1 empty document; 1 document larger than --max-doc-size skipped; 1 document with invalid UTF-8 read as bytes"
# Errors: capped the same way, printed with --quiet, status 1.
set --
i=0
while [ $i -lt 14 ]; do set -- "$@" "missing$(printf %02d $i)"; i=$((i + 1)); done
if run errors_capped 1 "$M" dedup -q --output pairs a.txt "$@" b.txt; then
    line errors_first err "minlsh: missing00: No such file or directory"
    line errors_tenth err "minlsh: missing09: No such file or directory"
    nothing errors_eleventh err 'missing10'
    line errors_rest_counted err "minlsh: ... and 4 more such errors (unreadable input)"
    line errors_others out "1.0000  a.txt  b.txt"
fi

# ---- the key from a file ---------------------------------------------------------
KEY=000102030405060708090a0b0c0d0e0f
printf '  %s\n' "$KEY" > key.txt
"$M" sig -q --num-perm 8 --key "$KEY" a.txt > sig.key 2>&1
"$M" sig -q --num-perm 8 a.txt > sig.default 2>&1
run key_file 0 "$M" sig -q --num-perm 8 --key-file key.txt a.txt &&
    if cmp -s out sig.key && ! cmp -s out sig.default; then ok key_file; else ko key_file "$(cat out)"; fi
run key_file_env 0 env MINLSH_KEY_FILE=key.txt "$M" sig -q --num-perm 8 a.txt &&
    if cmp -s out sig.key; then ok key_file_env; else ko key_file_env "$(cat out)"; fi
run key_overrides_env 0 env MINLSH_KEY_FILE=key.txt "$M" sig -q --num-perm 8 --key 6d696e6c73683a7368696e676c657321 a.txt &&
    if cmp -s out sig.default; then ok key_overrides_env; else ko key_overrides_env "$(cat out)"; fi
run key_and_key_file 2 "$M" sig --key "$KEY" --key-file key.txt a.txt &&
    line key_and_key_file err "minlsh: sig: --key and --key-file exclude each other"
printf '%s extra\n' "$KEY" > badkey.txt
run key_file_bad 2 "$M" dedup --key-file badkey.txt a.txt &&
    line key_file_bad err "minlsh: dedup: --key-file badkey.txt: expected 32 hexadecimal digits (16 bytes) and nothing else"
if grep -q "$KEY" err; then ko key_file_bad_not_shown "the key is in the message"; else ok key_file_bad_not_shown; fi
run key_file_missing 2 "$M" dedup --key-file nokey.txt a.txt && ok key_file_missing
run key_file_env_missing 2 env MINLSH_KEY_FILE=nokey.txt "$M" dedup a.txt &&
    line key_file_env_missing err "minlsh: dedup: MINLSH_KEY_FILE nokey.txt: cannot open: No such file or directory"
# An index made with the key file takes documents with the key from the environment.
"$M" index create -q --key-file key.txt idx > /dev/null 2>&1
run key_file_index_add 0 env MINLSH_KEY_FILE=key.txt "$M" index add -q idx a.txt && ok key_file_index_add
run key_file_index_wrong 1 "$M" index add -q idx b.txt && ok key_file_index_wrong

# ---- --include and --exclude ---------------------------------------------------------
mkdir -p tree/sub
for f in a.txt b.md sub/c.txt sub/d.TXT .e.txt; do printf '%s %s\n' "$T" "$f" > "tree/$f"; done
# walk NAME EXPECTED ARGS...: the documents sig reads, in order, relative to tree/.
walk() {
    name=$1 want=$2
    shift 2
    "$M" sig -q --num-perm 1 "$@" > out 2> err
    got=$(cut -f 1 out | sed 's|^tree/||' | tr '\n' ' ')
    if [ "$got" = "$want" ]; then ok "$name"; else ko "$name" "got '$got'" "expected '$want'" "$(cat err)"; fi
}
walk walk_all ".e.txt a.txt b.md sub/c.txt sub/d.TXT " tree
walk include_txt ".e.txt a.txt sub/c.txt " --include '*.txt' tree
walk include_two ".e.txt a.txt b.md sub/c.txt " --include '*.txt' --include '*.md' tree
walk exclude_hidden "a.txt b.md sub/c.txt sub/d.TXT " --exclude '.*' tree
walk include_exclude "a.txt " --include '*.txt' --exclude '.*' --exclude 'c*' tree
walk named_paths_kept "b.md a.txt " --include '*.txt' tree/b.md tree/a.txt
walk include_base_name_only "" --include 'sub/*' tree
# fnmatch has no error for a bad pattern: it reads an unclosed '[' as
# itself and a trailing backslash or an unknown class as matching nothing,
# so these would quietly select no file. They are usage errors, named.
# bad_pattern NAME PATTERN WHY: refused by --include and --exclude alike.
bad_pattern() {
    for opt in include exclude; do
        run "pattern_${opt}_$1" 2 "$M" sig -q --num-perm 1 "--$opt" "$2" tree &&
            line "pattern_${opt}_$1" err "minlsh: sig: invalid value '$2' for --$opt: $3"
    done
}
U="unmatched '[' (\\[ matches a literal '[')"
bad_pattern bracket '[' "$U"
bad_pattern bracket_after_star '*.[ch' "$U"
bad_pattern bracket_empty '[]' "$U"
bad_pattern bracket_class_open '[[:alpha:]' "$U"
bad_pattern backslash_last 'a\' "a lone '\' at the end (\\\\ matches a backslash)"
bad_pattern unknown_class '[[:word:]]*' "unknown character class (alnum, alpha, blank, cntrl, digit, graph, lower, print, punct, space, upper, xdigit)"
bad_pattern empty '' "an empty pattern matches no file"
printf '%s\n' "$T" > 'tree/[x'
walk pattern_escaped_bracket "[x " --include '\[*' tree
walk pattern_bracket_member "[x " --include '[[]x' tree
walk pattern_classes "a.txt b.md sub/c.txt " --include '[[:lower:]].[!T]*' tree

finish
