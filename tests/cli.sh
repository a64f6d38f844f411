#!/bin/sh
# The minlsh command, end to end.
#
# On a corpus that tests/cli/gen_corpus.py plants near-duplicates in (from a
# fixed seed; ground truth computed there, independently of minlsh): recall
# and precision of dedup with the default options on a directory and on JSON
# Lines, clusters against the true components, identical output for any
# --threads, params numbers and SVG, the index workflow (two adds = one add),
# and every error path: usage errors (2), bad inputs (reported, 1, the run
# goes on), invalid UTF-8 (reported, not an error), corrupt and mismatched
# index files (1, no crash, file untouched). Prints the throughput measured.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin cli
HERE=$(pwd)/tests/cli
# py NAME ARGS...: one of the Python checks.
py() {
    name=$1
    shift
    if $PY "$HERE/check.py" "$@" > "$tmp/py.out" 2>&1; then
        ok "$name"
        sed 's/^/     /' "$tmp/py.out"
    else
        ko "$name" "$(cat "$tmp/py.out")"
    fi
}

if [ ! -x "$M" ]; then ko binary "no $M"; finish; fi
if [ ! -x "$PY" ]; then ko python "no $PY (the corpus generator needs it)"; finish; fi

# ---- version and help --------------------------------------------------------
hver=$(sed -n 's/^#define MINLSH_VERSION_STRING "\(.*\)"/\1/p' include/minlsh.h)
if run version 0 "$M" --version && [ "$(cat "$tmp/out")" = "minlsh $hver" ]; then ok version
else ko version "got '$(cat "$tmp/out")'"; fi
if run help 0 "$M" --help; then has help "$tmp/out" '^Usage: minlsh SUBCOMMAND'; fi
for sub in dedup params sig "index create" "index add" "index query" "index stats" "index merge"; do
    n=$(echo "help_$sub" | tr ' ' _)
    # shellcheck disable=SC2086
    if run "$n" 0 "$M" $sub --help; then
        cp "$tmp/out" "$tmp/help1"
        # shellcheck disable=SC2086
        "$M" help $sub > "$tmp/help2" 2>&1
        if grep -q "^Usage: minlsh $sub" "$tmp/help1" && cmp -s "$tmp/help1" "$tmp/help2"
        then ok "$n"; else ko "$n" "$(head -n 2 "$tmp/help1")"; fi
    fi
done

# ---- usage errors: status 2 and a hint -----------------------------------------
if run usage_unknown_option 2 "$M" dedup --no-such-option x; then
    has usage_unknown_option "$tmp/err" "unknown option '--no-such-option'.*|Try 'minlsh dedup --help'"
fi
run usage_bad_value 2 "$M" dedup --threshold 1.5 x && ok usage_bad_value
run usage_bad_key 2 "$M" dedup --key 00ff x && ok usage_bad_key
run usage_missing_path 2 "$M" dedup && ok usage_missing_path
run usage_no_subcommand 2 "$M" && ok usage_no_subcommand
run usage_unknown_subcommand 2 "$M" frobnicate && ok usage_unknown_subcommand
run usage_bands_too_many 2 "$M" dedup --bands 40 --rows 5 x && ok usage_bands_too_many
run usage_format 2 "$M" dedup --format hex x && ok usage_format

# ---- the planted corpus ---------------------------------------------------------
C=$tmp/corpus
if ! $PY "$HERE/gen_corpus.py" --seed 20260101 --out "$C" 2> "$tmp/gen.err"; then
    ko gen_corpus "$(tail -n 5 "$tmp/gen.err")"
    finish
fi
ok gen_corpus
empty_file=$(cd "$C/files" && for f in *; do [ -s "$f" ] || echo "$f"; done)

# Directory input, default options. The corpus has one empty document: it
# is named, counted at the end, and is not an error.
if run dedup_files_pairs 0 "$M" dedup --output pairs --format jsonl "$C/files"; then
    cp "$tmp/out" "$tmp/pairs_files.jsonl"
    has dedup_files_empty_reported "$tmp/err" "files/$empty_file: empty document, kept as it is"
    has dedup_files_empty_counted "$tmp/err" "^minlsh: 1 empty document$"
    has dedup_files_summary "$tmp/err" 'documents, .* MB/s\); k=128, b=[0-9]+, r=[0-9]+ \(recall\)'
    py dedup_files_recall_precision pairs "$C" files "$tmp/pairs_files.jsonl"
fi
# Another threshold: the planner and the verification follow it.
if run dedup_threshold_06 0 "$M" dedup -q --threshold 0.6 --output pairs --format jsonl "$C/files"; then
    cp "$tmp/out" "$tmp/pairs_06.jsonl"
    py dedup_threshold_06_recall_precision pairs "$C" files "$tmp/pairs_06.jsonl" --threshold 0.6
fi
# One-permutation hashing: same recall goal, exact verification keeps the
# precision at 1 (the signatures only choose the candidates).
if run dedup_oph_pairs 0 "$M" dedup -q --scheme oph --output pairs --format jsonl "$C/files"; then
    cp "$tmp/out" "$tmp/pairs_oph.jsonl"
    py dedup_oph_recall_precision pairs "$C" files "$tmp/pairs_oph.jsonl" --min-recall 0.99
fi
run usage_bad_scheme 2 "$M" dedup --scheme minhash x && ok usage_bad_scheme
if run dedup_files_clusters 0 "$M" dedup --format jsonl --quiet "$C/files"; then
    cp "$tmp/out" "$tmp/clusters_files.jsonl"
    py dedup_files_clusters clusters "$C" files "$tmp/clusters_files.jsonl" "$tmp/pairs_files.jsonl"
fi

# JSON Lines input (escapes, surrogate pairs, numeric ids).
if run dedup_jsonl_pairs 0 "$M" dedup --jsonl --output pairs --format jsonl "$C/corpus.jsonl"; then
    cp "$tmp/out" "$tmp/pairs_jsonl.jsonl"
    has dedup_jsonl_empty_reported "$tmp/err" 'corpus.jsonl:[0-9]+: empty document, kept as it is'
    py dedup_jsonl_recall_precision pairs "$C" jsonl "$tmp/pairs_jsonl.jsonl"
    has dedup_jsonl_numeric_ids "$tmp/pairs_jsonl.jsonl" '"a": 1[0-9]{6},|"b": 1[0-9]{6},'
fi
if run dedup_jsonl_clusters 0 "$M" dedup --jsonl --format jsonl -q "$C/corpus.jsonl"; then
    cp "$tmp/out" "$tmp/clusters_jsonl.jsonl"
    py dedup_jsonl_clusters clusters "$C" jsonl "$tmp/clusters_jsonl.jsonl" "$tmp/pairs_jsonl.jsonl"
fi

# Decisions: every document kept or dropped for a kept one; strict mode
# within the threshold; no near-duplicate pair left with both kept.
for group in components strict; do
    for keep in first longest; do
        if run "dedup_decisions_${group}_$keep" 0 "$M" dedup -q --jsonl --output decisions \
            --format jsonl --group "$group" --keep "$keep" "$C/corpus.jsonl"; then
            cp "$tmp/out" "$tmp/decisions.jsonl"
            py "dedup_decisions_${group}_$keep" decisions "$C" jsonl "$tmp/decisions.jsonl" "$group"
        fi
    done
done
if run dedup_decisions_text 0 "$M" dedup -q --output decisions --group strict "$C/files"; then
    has dedup_decisions_text_kept "$tmp/out" '^kept     '
    has dedup_decisions_text_dropped "$tmp/out" '^dropped  .*\((similarity|exact copy,) [01]\.[0-9]{4} to '
fi
if run dedup_decisions_tsv 0 "$M" dedup -q --output decisions --format tsv "$C/files"; then
    has dedup_decisions_tsv_header "$tmp/out" '^id	cluster	decision	representative	similarity	exact$'
fi
# --keep longest compares text, not records: the longer text wins although
# the other record is longer (its id and an escaped field).
printf '%s\n' \
    '{"id": "a-very-long-identifier-that-makes-this-record-the-longest-of-the-two", "text": "one two three four five six seven eight nine ten"}' \
    '{"id": "b", "text": "one two three four five six seven eight nine ten eleven"}' > "$tmp/longest.jsonl"
if run dedup_keep_longest_text 0 "$M" dedup -q --jsonl --output kept --keep longest \
    --shingle word:2 --threshold 0.5 "$tmp/longest.jsonl"; then
    has dedup_keep_longest_text_kept "$tmp/out" '^\{"id": "b",'
fi
# The deduplicated corpus: kept plus dropped is the input, record for record,
# each in input order; from a compressed copy the same bytes; files give paths.
if run dedup_kept 0 "$M" dedup -q --jsonl --output kept "$C/corpus.jsonl"; then
    cp "$tmp/out" "$tmp/kept.jsonl"
    if run dedup_dropped 0 "$M" dedup -q --jsonl --output dropped "$C/corpus.jsonl"; then
        cp "$tmp/out" "$tmp/dropped.jsonl"
        py dedup_kept_dropped_is_the_input corpus "$C" "$tmp/kept.jsonl" "$tmp/dropped.jsonl"
    fi
    if command -v gzip > /dev/null 2>&1; then
        gzip -c "$C/corpus.jsonl" > "$tmp/corpus.jsonl.gz"
        if run dedup_kept_gzip 0 "$M" dedup -q --jsonl --output kept --memory 1M \
            --tmpdir "$tmp" - < "$tmp/corpus.jsonl.gz"; then
            if cmp -s "$tmp/out" "$tmp/kept.jsonl"; then ok dedup_kept_gzip_same
            else ko dedup_kept_gzip_same "the kept records differ"; fi
        fi
    fi
fi
if run dedup_kept_files 0 "$M" dedup -q --output kept "$C/files"; then
    n_kept=$(wc -l < "$tmp/out")
    n_files=$(ls "$C/files" | wc -l)
    if run dedup_dropped_files 0 "$M" dedup -q --output dropped "$C/files"; then
        n_dropped=$(wc -l < "$tmp/out")
        if [ $((n_kept + n_dropped)) -eq "$n_files" ] && [ "$n_dropped" -gt 0 ]; then
            ok dedup_kept_files_paths
        else
            ko dedup_kept_files_paths "$n_kept kept + $n_dropped dropped != $n_files files"
        fi
    fi
fi

# A memory budget changes where the data lives, never the answer; the
# temporary files never outlive the process (killed or not).
spill=$tmp/spill
mkdir -p "$spill"
if run dedup_memory_unbounded 0 "$M" dedup -q --jsonl --output decisions --format jsonl "$C/corpus.jsonl"; then
    cp "$tmp/out" "$tmp/dec_unbounded.jsonl"
    same=1
    for mem in 1 200K 2M; do
        if run "dedup_memory_$mem" 0 "$M" dedup --jsonl --output decisions --format jsonl \
            --memory "$mem" --tmpdir "$spill" --threads 2 "$C/corpus.jsonl"; then
            cmp -s "$tmp/out" "$tmp/dec_unbounded.jsonl" || same=0
            grep -q 'temporary files [1-9]' "$tmp/err" || same=0
        else
            same=0
        fi
    done
    if [ "$same" = 1 ]; then ok dedup_memory_same_answer; else ko dedup_memory_same_answer "outputs differ or nothing spilled"; fi
    if [ -z "$(ls -A "$spill")" ]; then ok dedup_memory_no_files_left; else ko dedup_memory_no_files_left "$(ls "$spill")"; fi
fi
# Killed while spilling: still nothing left.
"$M" dedup -q --jsonl --memory 1 --tmpdir "$spill" "$C/corpus.jsonl" > /dev/null 2>&1 &
kpid=$!
sleep 0.2
kill -INT "$kpid" 2> /dev/null
wait "$kpid" 2> /dev/null
if [ -z "$(ls -A "$spill")" ]; then ok dedup_memory_interrupted_no_files; else ko dedup_memory_interrupted_no_files "$(ls "$spill")"; fi
"$M" dedup -q --jsonl --memory 1 --tmpdir "$spill" "$C/corpus.jsonl" > /dev/null 2>&1 &
kpid=$!
sleep 0.3
kill -KILL "$kpid" 2> /dev/null
wait "$kpid" 2> /dev/null
if [ -z "$(ls -A "$spill")" ]; then ok dedup_memory_killed_no_files; else ko dedup_memory_killed_no_files "$(ls "$spill")"; fi
# Failing temporary files (full disk, file size limit...): tests/spill.sh.
run dedup_memory_bad 2 "$M" dedup --memory lots "$C/files" &&
    has dedup_memory_bad_named "$tmp/err" 'memory'

# A hot-bucket cap is reported, never silent.
if run dedup_max_bucket 0 "$M" dedup --max-bucket 2 --output pairs "$C/files"; then
    has dedup_max_bucket_reported "$tmp/err" 'band buckets? over --max-bucket 2 left out'
fi
run dedup_max_bucket_one 2 "$M" dedup --max-bucket 1 "$C/files" &&
    has dedup_max_bucket_one_refused "$tmp/err" 'max-bucket'
run dedup_bad_group 2 "$M" dedup --group loose "$C/files" &&
    has dedup_bad_group_named "$tmp/err" 'components or strict'

# The same results whatever the number of threads, in every format.
same=1
for args in "--output pairs" "--output clusters" "--format tsv --output pairs" "--jsonl --format jsonl"; do
    input=$C/files
    case $args in *--jsonl*) input=$C/corpus.jsonl ;; esac
    # shellcheck disable=SC2086
    "$M" dedup -q --threads 1 $args "$input" > "$tmp/t1" 2>&1
    # shellcheck disable=SC2086
    "$M" dedup -q --threads 2 $args "$input" > "$tmp/t2" 2>&1
    # shellcheck disable=SC2086
    "$M" dedup -q --threads 5 $args "$input" > "$tmp/t5" 2>&1
    if ! cmp -s "$tmp/t1" "$tmp/t2" || ! cmp -s "$tmp/t1" "$tmp/t5"; then same=0; fi
done
if [ $same -eq 1 ]; then ok threads_identical_output; else ko threads_identical_output "outputs differ"; fi

# Text and TSV agree with JSON Lines.
"$M" dedup -q "$C/files" > "$tmp/clusters.txt" 2>/dev/null
"$M" dedup -q --format tsv "$C/files" > "$tmp/clusters.tsv" 2>/dev/null
n_json=$(wc -l < "$tmp/clusters_files.jsonl")
n_text=$(grep -c '^cluster [0-9]* ([0-9]* documents)$' "$tmp/clusters.txt")
n_tsv=$(tail -n +2 "$tmp/clusters.tsv" | cut -f 1 | sort -u | wc -l)
if [ "$n_json" -gt 0 ] && [ "$n_json" -eq "$n_text" ] && [ "$n_json" -eq "$n_tsv" ] &&
   [ "$(head -n 1 "$tmp/clusters.tsv")" = "$(printf 'cluster\tsize\tmember')" ]
then ok formats_agree; else ko formats_agree "jsonl $n_json, text $n_text, tsv $n_tsv"; fi
"$M" dedup -q --output pairs "$C/files" > "$tmp/pairs.txt" 2>/dev/null
if [ "$(wc -l < "$tmp/pairs.txt")" -eq "$(wc -l < "$tmp/pairs_files.jsonl")" ] &&
   grep -Eq '^[01]\.[0-9]{4}  [^ ].*  [^ ]' "$tmp/pairs.txt"
then ok pairs_text_format; else ko pairs_text_format "$(head -n 2 "$tmp/pairs.txt")"; fi

# Progress: forced with --progress (stderr is a file here), never with --quiet.
"$M" dedup --progress "$C/files" > /dev/null 2> "$tmp/err"
if tr '\r' '\n' < "$tmp/err" | grep -Eq '^minlsh: dedup: [0-9]+ documents, [0-9.]+ MB, [0-9.]+ MB/s, [0-9:]+ elapsed'
then ok progress_forced; else ko progress_forced "$(tr '\r' '\n' < "$tmp/err" | head -n 3)"; fi
"$M" dedup --progress --quiet "$C/files" > /dev/null 2> "$tmp/err"
if ! grep -q "$(printf '\r')" "$tmp/err" && ! grep -q 'documents,' "$tmp/err"
then ok progress_quiet; else ko progress_quiet "$(head -n 3 "$tmp/err")"; fi

# Signature verification: estimates, no "estimate" field.
if run verify_signature 0 "$M" dedup -q --verify signature --output pairs --format jsonl "$C/files"; then
    if [ -s "$tmp/out" ] && ! grep -q estimate "$tmp/out"; then ok verify_signature
    else ko verify_signature "$(head -n 2 "$tmp/out")"; fi
fi

# Throughput on the directory (informative, not a pass/fail).
$PY - "$M" "$C/files" <<'EOF'
import os, subprocess, sys, time
m, d = sys.argv[1], sys.argv[2]
size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
best = None
for _ in range(3):
    t = time.monotonic()
    subprocess.run([m, "dedup", "--quiet", d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    e = time.monotonic() - t
    best = e if best is None else min(best, e)
print("throughput: %.1f MB/s (%.1f MB, %d files, best of 3: %.2f s, %d CPUs)"
      % (size / 1e6 / best, size / 1e6, len(os.listdir(d)), best, os.cpu_count()))
EOF

# ---- params ---------------------------------------------------------------------
E0=$tmp/e0
mkdir -p "$E0"
echo "one two three four five six seven" > "$E0/x.txt"
if run params_20_5 0 "$M" params --bands 20 --rows 5; then
    cp "$tmp/out" "$tmp/params.txt"
    py params_20_5 params "$tmp/params.txt" 0.2=0.006 0.3=0.047 0.4=0.186 0.5=0.470 \
        0.6=0.802 0.7=0.975 0.8=0.9996
fi
if run params_svg 0 "$M" params --threshold 0.8 --num-perm 128 --svg "$tmp/curve.svg"; then
    py params_svg svg "$tmp/curve.svg"
fi
# dedup's banding is what params --mode recall plans.
if run params_recall 0 "$M" params --mode recall --threshold 0.8 --num-perm 128; then
    b=$(sed -n 's/^bands (b) *\([0-9]*\)$/\1/p' "$tmp/out")
    r=$(sed -n 's/^rows (r) *\([0-9]*\)$/\1/p' "$tmp/out")
    "$M" dedup --output pairs "$C/files" > /dev/null 2> "$tmp/err"
    has params_recall_matches_dedup "$tmp/err" "b=$b, r=$r \\(recall\\)"
fi
# params with no option shows the plan dedup (and index create) use: recall
# mode, target 0.999, whatever the verification; the same options, the same answer.
for t in 0.8 0.6; do
    if run "params_default_$t" 0 "$M" params --threshold $t; then
        b=$(sed -n 's/^bands (b) *\([0-9]*\)$/\1/p' "$tmp/out")
        r=$(sed -n 's/^rows (r) *\([0-9]*\)$/\1/p' "$tmp/out")
        p=$(sed -n 's/^P(candidate | t) *\([0-9.]*\)$/\1/p' "$tmp/out")
        has "params_default_${t}_target" "$tmp/out" '^chosen by +recall planner \(target 0\.999\)$'
        if awk -v p="$p" 'BEGIN { exit !(p >= 0.999) }'; then ok "params_default_${t}_p"; else ko "params_default_${t}_p" "P(t) = $p"; fi
        for v in exact signature; do
            "$M" dedup --threshold $t --verify $v "$E0/x.txt" > /dev/null 2> "$tmp/err"
            has "params_default_${t}_is_dedup_$v" "$tmp/err" "b=$b, r=$r \\(recall\\)"
        done
    fi
done
# A manual banding below 0.99 at the threshold is allowed, with a warning.
if run manual_banding_warning 0 "$M" dedup --bands 8 --rows 8 "$E0/x.txt"; then
    has manual_banding_warning "$tmp/err" '^minlsh: dedup: warning: with 8 bands of 8 rows a pair at the threshold 0\.8 becomes a candidate with probability 0\.7699 only \(below 0\.99\)$'
fi
if run manual_banding_ok 0 "$M" dedup --bands 20 --rows 5 "$E0/x.txt"; then
    if grep -q warning "$tmp/err"; then ko manual_banding_ok "$(cat "$tmp/err")"; else ok manual_banding_ok; fi
fi
run params_bad 2 "$M" params --weights 0,0 && ok params_bad_weights

# ---- index: two adds answer like one ----------------------------------------------
I=$tmp/idx
find "$C/files" -type f | LC_ALL=C sort > "$tmp/all"
n_all=$(wc -l < "$tmp/all")
half=$((n_all / 2))
head -n $half "$tmp/all" > "$tmp/h1"
tail -n +$((half + 1)) "$tmp/all" > "$tmp/h2"
run index_create 0 "$M" index create "$I.two" && ok index_create
run index_create_one 0 "$M" index create -q "$I.one"
# shellcheck disable=SC2046
run index_add_first_half 0 "$M" index add -q "$I.two" $(cat "$tmp/h1") || true
# shellcheck disable=SC2046
run index_add_second_half 0 "$M" index add -q "$I.two" $(cat "$tmp/h2") || true
run index_add_all 0 "$M" index add -q "$I.one" "$C/files" || true
# Whatever each add left in its journal, compacted they hold the same documents.
"$M" index compact -q "$I.one" && "$M" index compact -q "$I.two" && [ ! -s "$I.one.journal.x" ] &&
    [ "$(wc -c < "$I.one.journal")" -eq 64 ] && ok index_compact_empties_journal ||
    ko index_compact_empties_journal "$(wc -c < "$I.one.journal") bytes"
if same_index "$I.one" "$I.two" "$C/files"; then ok index_two_adds_same_index; else ko index_two_adds_same_index "indexes differ"; fi
"$M" index query --format jsonl -q "$I.one" "$C/files" > "$tmp/q1" 2>/dev/null
"$M" index query --format jsonl -q "$I.two" "$C/files" > "$tmp/q2" 2>/dev/null
if [ -s "$tmp/q1" ] && cmp -s "$tmp/q1" "$tmp/q2"; then ok index_two_adds_same_answers
else ko index_two_adds_same_answers "$(wc -l < "$tmp/q1") vs $(wc -l < "$tmp/q2") lines"; fi
py index_query query "$C" "$tmp/q1"
if run index_stats 0 "$M" index stats "$I.one"; then
    has index_stats "$tmp/out" "^documents +$((n_all - 1))$"
    has index_stats_histogram "$tmp/out" '^  1 +[0-9]+$'
fi
# Adding what is already there is reported and changes nothing.
cp "$I.one" "$I.before"
if run index_add_again 1 "$M" index add -q "$I.one" "$(head -n 1 "$tmp/all")"; then
    has index_add_again "$tmp/err" 'already in'
    if cmp -s "$I.one" "$I.before"; then ok index_add_again_unchanged; else ko index_add_again_unchanged "file changed"; fi
fi
# JSON Lines ids in the index, printed back as written.
"$M" index create -q "$I.j" && "$M" index add -q --jsonl "$I.j" "$C/corpus.jsonl" 2>/dev/null
run index_query_jsonl 0 "$M" index query --jsonl --format jsonl -q "$I.j" "$C/corpus.jsonl"
has index_query_jsonl_ids "$tmp/out" '^\{"a": 1[0-9]{6}, "b": 1[0-9]{6}, "similarity": 1\.0\}$'

# ---- index merge: shards built separately answer like one index -------------------
# Two and three shards of the same corpus (created with the same options),
# merged: the same documents, names and answers as the index built in one
# piece (a store never renumbers, so the bytes may differ).
third=$(( (n_all + 2) / 3 ))
split -l "$third" "$tmp/all" "$tmp/third."
for s in h1 h2 third.aa third.ab third.ac; do
    # shellcheck disable=SC2046
    "$M" index create -q "$I.$s" && "$M" index add -q "$I.$s" $(cat "$tmp/$s") 2>/dev/null
done
if run index_merge_two 0 "$M" index merge "$I.m2" "$I.h1" "$I.h2"; then
    has index_merge_two_summary "$tmp/err" "merged 2 shards, $((n_all - 1)) documents"
    if same_index "$I.one" "$I.m2" "$C/files"; then ok index_merge_two_same_index; else ko index_merge_two_same_index "indexes differ"; fi
fi
run index_merge_three 0 "$M" index merge -q "$I.m3" "$I.third.aa" "$I.third.ab" "$I.third.ac" \
    && ok index_merge_three
"$M" index query --format jsonl -q "$I.m3" "$C/files" > "$tmp/q3" 2>/dev/null
if [ -s "$tmp/q3" ] && cmp -s "$tmp/q1" "$tmp/q3"; then ok index_merge_three_same_answers
else ko index_merge_three_same_answers "$(wc -l < "$tmp/q1") vs $(wc -l < "$tmp/q3") lines"; fi
if same_index "$I.one" "$I.m3" "$C/files"; then ok index_merge_three_same_index; else ko index_merge_three_same_index "indexes differ"; fi
# Names an earlier shard has are reported and skipped (as by index add); the
# result is still written and still equals the one-piece index.
if run index_merge_duplicates 1 "$M" index merge -q "$I.md" "$I.h1" "$I.h2" "$I.third.aa"; then
    has index_merge_duplicates "$tmp/err" 'idx.third.aa: id ".*" is already in an earlier shard, skipped'
    if same_index "$I.one" "$I.md" "$C/files"; then ok index_merge_duplicates_same_index; else ko index_merge_duplicates_same_index "indexes differ"; fi
fi
# Refusals: OUT exists, a shard made with other options (named), not an index.
cp "$I.m2" "$I.m2.before"
if run index_merge_exists 1 "$M" index merge "$I.m2" "$I.h1" "$I.h2"; then
    has index_merge_exists "$tmp/err" 'already exists; use --force'
fi
"$M" index create -q --shingle word:4 "$I.w4"
"$M" index create -q --bands 8 --rows 8 "$I.b8"
"$M" index create -q --key 000102030405060708090a0b0c0d0e0f "$I.k"
# The same corpus in an OPH index: queries answer, the metadata says so, and
# it never merges with a classic shard.
"$M" index create -q --scheme oph "$I.oph"
"$M" index create -q --scheme oph "$I.ophq"
run index_oph_add 0 "$M" index add -q "$I.oph" "$C/files" && ok index_oph_add
if run index_oph_stats 0 "$M" index stats "$I.oph"; then
    has index_oph_stats "$tmp/out" '^scheme +oph$'
fi
"$M" index query --format jsonl -q "$I.oph" "$C/files" > "$tmp/q_oph" 2>/dev/null
if [ -s "$tmp/q_oph" ]; then ok index_oph_query; else ko index_oph_query "no answer"; fi
for bad in w4:'shingle word:4, .* has word:5' b8:'b=8, r=8, .* has b=18, r=5' \
           k:'config id [0-9a-f]{16} \(a custom key\)' ophq:'scheme oph, .* has classic'; do
    f=${bad%%:*} pattern=${bad#*:}
    if run "index_merge_mismatch_$f" 1 "$M" index merge --force "$I.m2" "$I.h1" "$I.$f"; then
        has "index_merge_mismatch_$f" "$tmp/err" "idx.$f: .*MINLSH_E_MISMATCH.*$pattern"
    fi
done
if cmp -s "$I.m2" "$I.m2.before"; then ok index_merge_refused_unchanged; else ko index_merge_refused_unchanged "OUT changed"; fi
printf 'not an index at all' > "$I.garbage0"
if run index_merge_garbage 1 "$M" index merge "$I.mg" "$I.h1" "$I.garbage0"; then
    has index_merge_garbage "$tmp/err" 'garbage0: .*MINLSH_E_FORMAT'
    if [ ! -e "$I.mg" ]; then ok index_merge_garbage_nothing_written; else ko index_merge_garbage_nothing_written "$I.mg exists"; fi
fi
run index_merge_usage 2 "$M" index merge "$I.m4" && ok index_merge_usage
# OUT may be one of its shards (with --force): h1 becomes h1 + h2.
cp "$I.h1" "$I.grow"
run index_merge_in_place 0 "$M" index merge -q --force "$I.grow" "$I.grow" "$I.h2" \
    && same_index "$I.grow" "$I.one" "$C/files" && ok index_merge_in_place

# ---- index errors -------------------------------------------------------------
if run index_create_exists 1 "$M" index create "$I.one"; then
    has index_create_exists "$tmp/err" 'already exists; use --force'
    if cmp -s "$I.one" "$I.before"; then ok index_create_exists_unchanged; else ko index_create_exists_unchanged "file changed"; fi
fi
"$M" index create -q --key 000102030405060708090a0b0c0d0e0f "$I.key"
if run index_wrong_key 1 "$M" index add "$I.key" "$(head -n 1 "$tmp/all")"; then
    has index_wrong_key "$tmp/err" 'MINLSH_E_MISMATCH'
fi
run index_right_key 0 "$M" index add -q --key 000102030405060708090a0b0c0d0e0f "$I.key" \
    "$(head -n 1 "$tmp/all")" && ok index_right_key
run index_missing 1 "$M" index add "$tmp/no-such-index" "$(head -n 1 "$tmp/all")" && ok index_missing
cp "$I.one" "$I.bad"
size=$(wc -c < "$I.bad")
$PY -c "import os,sys; os.truncate(sys.argv[1], int(sys.argv[2]) // 2)" "$I.bad" "$size"
cp "$I.bad" "$I.bad.copy"
for sub in stats add query; do
    case $sub in stats) set -- ;; *) set -- "$(head -n 1 "$tmp/all")" ;; esac
    "$M" index $sub "$I.bad" "$@" > "$tmp/out" 2> "$tmp/err"
    st=$?
    if [ $st -eq 1 ] && grep -q 'idx.bad: .*MINLSH_E_CORRUPT' "$tmp/err" && cmp -s "$I.bad" "$I.bad.copy"
    then ok "index_corrupt_$sub"; else ko "index_corrupt_$sub" "status $st" "$(cat "$tmp/err")"; fi
done
printf 'not an index at all' > "$I.garbage"
run index_garbage 1 "$M" index stats "$I.garbage" && has index_garbage "$tmp/err" 'MINLSH_E_FORMAT'

# ---- bad inputs: reported with file and line, the rest still processed --------------
E=$tmp/e
mkdir -p "$E"
words="alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron"
echo "$words" > "$E/a.txt"
echo "$words" > "$E/b.txt"
if run missing_file 1 "$M" dedup "$E/a.txt" "$E/missing.txt" "$E/b.txt"; then
    has missing_file_reported "$tmp/err" 'missing.txt: No such file or directory'
    has missing_file_others_processed "$tmp/out" 'a.txt'
fi
: > "$E/empty.txt"
if run empty_document 0 "$M" dedup "$E/a.txt" "$E/empty.txt" "$E/b.txt"; then
    has empty_document "$tmp/err" 'empty.txt: empty document, kept as it is'
fi
printf 'caf\351 cr\350me br\373l\351e %s\n' "$words" > "$E/latin1.txt"
cp "$E/latin1.txt" "$E/latin1-copy.txt"
if run invalid_utf8_file 0 "$M" dedup --output pairs "$E/latin1.txt" "$E/latin1-copy.txt"; then
    has invalid_utf8_reported "$tmp/err" 'latin1.txt: invalid UTF-8 at byte 3; read as bytes'
    has invalid_utf8_processed "$tmp/out" '^1\.0000  .*latin1.txt  .*latin1-copy.txt$'
fi
{
    printf '{"id": "one", "text": "%s"}\n' "$words"
    printf 'this is not json\n'
    printf '{"id": "two", "body": "%s"}\n' "$words"
    printf '{"id": "three", "text": ""}\n'
    printf '{"id": "four", "text": "bad \377 byte"}\n'
    printf '{"id": "one", "text": "duplicate id"}\n'
    printf '{"id": "tab\\there", "text": "%s"}\n' "$words"
    printf '\n'
    printf '{"id": 5, "text": "%s"}\n' "$words"
} > "$E/bad.jsonl"
if run jsonl_errors 1 "$M" dedup --jsonl --output pairs "$E/bad.jsonl"; then
    has jsonl_not_json "$tmp/err" 'bad.jsonl:2: not a JSON object'
    has jsonl_missing_field "$tmp/err" 'bad.jsonl:3: missing field "text"'
    has jsonl_empty_text "$tmp/err" 'bad.jsonl:4: empty document, kept as it is'
    has jsonl_invalid_utf8 "$tmp/err" 'bad.jsonl:5: invalid JSON at column [0-9]+: invalid UTF-8 in string'
    has jsonl_duplicate_id "$tmp/err" 'bad.jsonl:6: duplicate id "one", skipped'
    has jsonl_rest_processed "$tmp/out" '^1\.0000  one  tab\\there$'
    has jsonl_number_id "$tmp/out" '^1\.0000  tab\\there  5$'
fi
"$M" dedup --jsonl --text-field body --output pairs "$E/bad.jsonl" > /dev/null 2> "$tmp/err"
has jsonl_text_field "$tmp/err" 'bad.jsonl:1: missing field "body"'

# Standard input, as a document and as JSON Lines.
if run stdin_text 0 sh -c "\"$M\" dedup -q --output pairs --format jsonl - \"$E/a.txt\" < \"$E/b.txt\""; then
    has stdin_text "$tmp/out" '^\{"a": "-", "b": ".*a.txt", "similarity": 1\.0, "estimate": 1\.0\}$'
fi
if run stdin_jsonl 1 sh -c "\"$M\" dedup -q --jsonl --output pairs - < \"$E/bad.jsonl\""; then
    has stdin_jsonl "$tmp/err" 'standard input:2: not a JSON object'
fi

# Directories: sorted walk, links to files followed, links to directories not.
W=$tmp/walk
mkdir -p "$W/top/sub" "$W/other"
echo "$words one" > "$W/top/b.txt"
echo "$words two" > "$W/top/a.txt"
echo "$words three" > "$W/top/sub/c.txt"
echo "$words four" > "$W/other/d.txt"
ln -s ../other/d.txt "$W/top/link-to-file"
ln -s ../other "$W/top/link-to-dir"
if run walk 0 "$M" sig -q "$W/top"; then
    cut -f 1 "$tmp/out" | sed "s|$W/||" > "$tmp/walk.txt"
    if [ "$(tr '\n' ' ' < "$tmp/walk.txt")" = "top/a.txt top/b.txt top/link-to-file top/sub/c.txt " ]
    then ok walk_order_and_links; else ko walk_order_and_links "$(cat "$tmp/walk.txt")"; fi
fi

# HTML: with --html the markup and entities are ignored.
printf 'The quick brown fox & friends jumped over the lazy dog again and again\n' > "$E/plain.txt"
printf '<html><head><style>p {color: red}</style><script>var x = 1;</script></head>\n<body><p>The quick <b>brown</b> fox &amp; friends jumped over the lazy dog <!-- hidden -->again and again</p></body></html>\n' > "$E/page.html"
"$M" dedup -q --html --output pairs --format jsonl "$E/plain.txt" "$E/page.html" > "$tmp/html.out" 2>&1
"$M" dedup -q --output pairs --format jsonl "$E/plain.txt" "$E/page.html" > "$tmp/nohtml.out" 2>&1
if grep -q '"similarity": 1.0' "$tmp/html.out" && ! grep -q '"similarity": 1.0' "$tmp/nohtml.out"
then ok html; else ko html "$(cat "$tmp/html.out")" "$(cat "$tmp/nohtml.out")"; fi

# sig: JSON shape and hex shape agree.
if run sig_json 0 "$M" sig --format json --num-perm 16 --seed 7 "$E/a.txt"; then
    "$M" sig --num-perm 16 --seed 7 "$E/a.txt" > "$tmp/sig.hex"
    if $PY -c '
import json, sys
rec = json.loads(open(sys.argv[1]).read())
hexline = open(sys.argv[2]).read().split("\t")[1].split()
assert rec["k"] == 16 and rec["seed"] == 7 and len(rec["signature"]) == 16
assert [int(h, 16) for h in hexline] == rec["signature"]
' "$tmp/out" "$tmp/sig.hex"; then ok sig_json_matches_hex
    else ko sig_json_matches_hex "$(cat "$tmp/out")" "$(cat "$tmp/sig.hex")"; fi
fi
# sig --scheme oph: the JSON says so, and the values are OPH's, not classic's.
if run sig_oph_json 0 "$M" sig --scheme oph --format json --num-perm 16 --seed 7 "$E/a.txt"; then
    "$M" sig --scheme oph --num-perm 16 --seed 7 "$E/a.txt" > "$tmp/sig_oph.hex"
    if $PY -c '
import json, sys
rec = json.loads(open(sys.argv[1]).read())
hexline = open(sys.argv[2]).read().split("\t")[1].split()
classic = open(sys.argv[3]).read().split("\t")[1].split()
assert rec["scheme"] == "oph" and len(rec["signature"]) == 16
assert [int(h, 16) for h in hexline] == rec["signature"] and hexline != classic
' "$tmp/out" "$tmp/sig_oph.hex" "$tmp/sig.hex"; then ok sig_oph
    else ko sig_oph "$(cat "$tmp/out")" "$(cat "$tmp/sig_oph.hex")"; fi
fi

# dedup --stats: three lines of stage times after the (quiet) run, the same
# output as without it, the serial share as a percentage of the run.
if run dedup_stats 0 "$M" dedup -q --stats --threads 2 "$E"; then
    "$M" dedup -q --threads 2 "$E" > "$tmp/no_stats" 2> /dev/null
    if [ "$(grep -c '^minlsh: stats: ' "$tmp/err")" -eq 3 ] && cmp -s "$tmp/out" "$tmp/no_stats" &&
       grep -Eq 'serial \(working while the pool waits\) [0-9.]+ s, [0-9.]+% of the run' "$tmp/err" &&
       grep -Eq '^minlsh: stats: input [0-9.]+ s wall, [0-9.]+ s CPU: shingle' "$tmp/err"
    then ok dedup_stats_lines
    else ko dedup_stats_lines "$(cat "$tmp/err")"; fi
fi

finish
