#!/bin/sh
# minlsh index add --novel-only, and many processes on one index file.
#
# --novel-only: its decisions on a planted corpus (near-duplicates of the
# index, of earlier input, of an earlier duplicate of the input, exact
# copies), in every format, and the index keeping only the novel ones.
# Locking: four writer processes, each running ten adds in a row, and a
# reader querying all the while, on one file: every document an add reported
# added is in the final index. The same with writers wrapped in flock(1) on
# INDEX itself (what the docs used to recommend) and on INDEX.lock with
# --no-lock. A held lock makes --lock-timeout give up with a message, for
# writers and readers, leaving the file untouched. Without the lock (--no-lock
# and no wrapper) the count of documents kept is printed, for comparison.
# A save past the file size limit leaves nothing behind; a writer removes the
# temporary files of saves that never finished.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin index_shared
if [ ! -x "$M" ] || [ ! -x "$PY" ]; then ko setup "no $M or $PY"; finish; fi

# ---- --novel-only ---------------------------------------------------------------
# base0..base4 random texts of 400 words; near(x, every, tag, offset): x with
# every every-th word changed (every 100: estimate about 0.9).
$PY - "$tmp" <<'PYEOF'
import json, random, sys
d = sys.argv[1]
rng = random.Random(17)
words = ["w%d" % i for i in range(5000)]
base = [[rng.choice(words) for _ in range(400)] for _ in range(5)]
def near(ws, every, tag, off=0):
    return [("%s%d" % (tag, i)) if (i + off) % every == 0 else w for i, w in enumerate(ws)]
def rec(i, ws):
    return json.dumps({"id": i, "text": " ".join(ws)})
with open(d + "/first.jsonl", "w") as f:         # the index holds a0, a1
    f.write(rec("a0", base[0]) + "\n" + rec("a1", base[1]) + "\n")
b1 = near(base[2], 100, "p")                      # novel
c3 = near(base[1], 100, "u")                      # ~ a1: a duplicate, held
docs = [("b1", b1),
        ("b2", near(base[0], 100, "q")),          # ~ a0, in the index
        ("b3", near(b1, 100, "r", 50)),           # ~ b1, novel earlier in the input
        ("c1", base[3]),                          # novel
        ("c2", near(base[3], 100, "t", 30)),      # ~ c1
        ("c3", c3)]
# ~ c3 (never indexed) and further from a1: some of them are under the
# threshold to a1, so only c3, held as a duplicate, makes them duplicates.
docs += [("c4_%d" % j, near(c3, 66, "v%d" % j, 10 + j)) for j in range(10)]
docs += [("a0copy", base[0]),                     # an exact copy of a0
         ("c5", base[4])]                         # novel
with open(d + "/second.jsonl", "w") as f:
    for i, ws in docs:
        f.write(rec(i, ws) + "\n")
PYEOF
I=$tmp/novel.mlsh
"$M" index create -q "$I" && "$M" index add -q --jsonl "$I" "$tmp/first.jsonl"
if "$M" index add --novel-only --jsonl --format jsonl "$I" "$tmp/second.jsonl" \
    > "$tmp/dec" 2> "$tmp/err"; then ok novel_only_runs; else ko novel_only_runs "$(cat "$tmp/err")"; fi
# The estimates of every c4 against a1, from the index itself.
"$M" index query -q --all --jsonl --format jsonl "$I" "$tmp/second.jsonl" > "$tmp/cand" 2> /dev/null
if $PY - "$tmp/dec" "$tmp/cand" <<'PYEOF'
import json, sys
want = {"b1": ("novel", None), "b2": ("duplicate", "a0"), "b3": ("duplicate", "b1"),
        "c1": ("novel", None), "c2": ("duplicate", "c1"), "c3": ("duplicate", "a1"),
        "a0copy": ("duplicate", "a0"), "c5": ("novel", None)}
got = [json.loads(l) for l in open(sys.argv[1])]
to_a1 = {}
for l in open(sys.argv[2]):
    p = json.loads(l)
    if p["b"] == "a1":
        to_a1[p["a"]] = p["similarity"]
ids = [g["id"] for g in got]
assert ids == ["b1", "b2", "b3", "c1", "c2", "c3"] + ["c4_%d" % j for j in range(10)] + \
    ["a0copy", "c5"], ids
held_only = 0
for g in got:
    assert set(g) == {"id", "decision", "match", "similarity"}, g
    if g["id"] in want:
        assert (g["decision"], g["match"]) == want[g["id"]], g
    if g["decision"] == "duplicate":
        assert 0.8 <= g["similarity"] <= 1.0, g
    else:
        assert g["match"] is None and g["similarity"] is None, g
    if g["id"].startswith("c4_"):
        # A duplicate of a1, of c3 or of an earlier c4 (all held).
        assert g["decision"] == "duplicate", g
        assert g["match"] in ("c3", "a1") or g["match"] < g["id"], g
        if to_a1.get(g["id"], 0) < 0.8:
            assert g["match"] != "a1", g
            held_only += 1
assert held_only > 0, "no c4 was a duplicate of held documents only"
assert [g["similarity"] for g in got if g["id"] == "a0copy"] == [1.0]
print("%d of 10 c4 documents are near-duplicates of the input's duplicates only" % held_only)
PYEOF
then ok novel_only_decisions; else ko novel_only_decisions "$(cat "$tmp/dec")"; fi
grep -q 'added 3 novel documents, 15 near-duplicates not added' "$tmp/err" &&
    ok novel_only_summary || ko novel_only_summary "$(cat "$tmp/err")"
"$M" index stats "$I" > "$tmp/stats" 2>&1
grep -Eq '^documents +5$' "$tmp/stats" && ok novel_only_index_keeps_novel ||
    ko novel_only_index_keeps_novel "$(cat "$tmp/stats")"
# Again: the novel names are in the index now (skipped, status 1); the
# duplicates are duplicates again, and nothing is added.
cp "$I" "$tmp/before"
"$M" index add --novel-only --jsonl --format tsv "$I" "$tmp/second.jsonl" > "$tmp/dec2" 2> "$tmp/err"
st=$?
if [ $st -eq 1 ] && [ "$(head -n 1 "$tmp/dec2")" = "$(printf 'id\tdecision\tmatch\tsimilarity')" ] &&
   [ "$(grep -c '^duplicate	' "$tmp/dec2")" -eq 15 ] && [ "$(wc -l < "$tmp/dec2")" -eq 16 ] &&
   cmp -s "$I" "$tmp/before"; then ok novel_only_again_tsv
else ko novel_only_again_tsv "status $st" "$(cat "$tmp/dec2" "$tmp/err")"; fi
"$M" index add --novel-only --jsonl "$I" "$tmp/second.jsonl" > "$tmp/dec3" 2> /dev/null
grep -Eq '^duplicate  b2  a0  0\.[89][0-9]{3}$' "$tmp/dec3" && ok novel_only_text ||
    ko novel_only_text "$(cat "$tmp/dec3")"
# --format and --threshold belong to --novel-only; a stricter threshold
# makes b2 novel.
"$M" index add --format jsonl "$I" "$tmp/second.jsonl" > /dev/null 2>&1
[ $? -eq 2 ] && ok novel_only_format_needs_it || ko novel_only_format_needs_it "not a usage error"
"$M" index add -q --novel-only --threshold 0.99 --jsonl --format jsonl "$I" "$tmp/second.jsonl" \
    > "$tmp/dec4" 2> /dev/null
grep -q '"id": "b2", "decision": "novel"' "$tmp/dec4" && ok novel_only_threshold ||
    ko novel_only_threshold "$(cat "$tmp/dec4")"

# ---- many processes on one file --------------------------------------------------
# 4 writers x 10 batches x 40 distinct documents.
$PY - "$tmp" <<'PYEOF'
import json, random, sys
d = sys.argv[1]
rng = random.Random(5)
for w in range(4):
    for b in range(10):
        with open("%s/w%d_%d.jsonl" % (d, w, b), "w") as f:
            for i in range(40):
                text = " ".join("t%d" % rng.randrange(10**6) for _ in range(60))
                f.write(json.dumps({"id": "w%d-%d-%d" % (w, b, i), "text": text}) + "\n")
PYEOF
# writers MODE: run the four writers (MODE: plain, flock-index, flock-lock,
# nolock) and a reader, wait, and print how many documents the index holds
# and how many the writers reported added.
writers() {
    mode=$1 J=$tmp/shared.$1.mlsh
    "$M" index create -q --force "$J"
    : > "$tmp/reader.stop"
    rm -f "$tmp/reader.stop"
    (
        n=0
        while [ ! -f "$tmp/reader.stop" ]; do
            "$M" index query -q --jsonl "$J" "$tmp/w0_0.jsonl" > /dev/null 2>> "$tmp/reader.err" ||
                echo "query failed" >> "$tmp/reader.fail"
            "$M" index stats "$J" > /dev/null 2>> "$tmp/reader.err" ||
                echo "stats failed" >> "$tmp/reader.fail"
            n=$((n + 1))
        done
        echo "$n" > "$tmp/reader.n"
    ) &
    reader=$!
    pids=
    for w in 0 1 2 3; do
        (
            for b in 0 1 2 3 4 5 6 7 8 9; do
                f=$tmp/w${w}_$b.jsonl
                case $mode in
                plain) "$M" index add --jsonl "$J" "$f" ;;
                flock-index) flock "$J" "$M" index add --jsonl "$J" "$f" ;;
                flock-lock) flock "$J.lock" "$M" index add --no-lock --jsonl "$J" "$f" ;;
                nolock) "$M" index add --no-lock --jsonl "$J" "$f" ;;
                esac || echo "writer $w batch $b: exit $?" >&2
            done
        ) 2> "$tmp/writer.$mode.$w" &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p"; done
    touch "$tmp/reader.stop"
    wait "$reader"
    reported=$(cat "$tmp"/writer.$mode.* | sed -n 's/.*: added \([0-9]*\) document.*/\1/p' |
               awk '{s += $1} END {print s + 0}')
    kept=$("$M" index stats "$J" 2> /dev/null | sed -n 's/^documents *//p')
    echo "$kept $reported"
}
{
    t0=$(date +%s)
    set -- $(writers plain)
    t1=$(date +%s)
    if [ "$1" = 1600 ] && [ "$2" = 1600 ] && ! grep -q exit "$tmp"/writer.plain.* &&
       [ ! -f "$tmp/reader.fail" ]; then
        ok "four_writers_and_a_reader: 40 adds, 1600 documents reported added, 1600 in the index, $(cat "$tmp/reader.n") reader rounds, $((t1 - t0)) s"
    else
        ko four_writers_and_a_reader "index $1, reported $2" "$(cat "$tmp"/writer.plain.* "$tmp/reader.fail" 2>/dev/null | grep -v 'added' | head -n 5)"
    fi
    # Every document, by name and signature: each finds itself.
    "$M" index query -q --jsonl --format jsonl "$tmp/shared.plain.mlsh" "$tmp"/w*_*.jsonl \
        > "$tmp/self" 2> /dev/null
    n=$($PY -c '
import json, sys
print(len({p["a"] for p in map(json.loads, open(sys.argv[1])) if p["a"] == p["b"]}))' "$tmp/self")
    [ "$n" = 1600 ] && ok "four_writers_every_document_finds_itself: $n" ||
        ko four_writers_every_document_finds_itself "$n of 1600"
    if command -v flock > /dev/null 2>&1; then
        set -- $(writers flock-index)
        [ "$1" = 1600 ] && [ "$2" = 1600 ] && ok "writers_in_flock_on_index: $1 of $2" ||
            ko writers_in_flock_on_index "index $1, reported $2"
        set -- $(writers flock-lock)
        [ "$1" = 1600 ] && [ "$2" = 1600 ] && ok "writers_in_flock_on_lock_file_no_lock: $1 of $2" ||
            ko writers_in_flock_on_lock_file_no_lock "index $1, reported $2"
    fi
    set -- $(writers nolock)
    echo "info without any lock (--no-lock, no wrapper): ${1:-no index readable:} documents kept of ${2:-?} reported added"
}

# ---- a held lock: --lock-timeout gives up, with a message ------------------------
J=$tmp/held.mlsh
"$M" index create -q "$J"
mkfifo "$tmp/fifo"
# A writer that holds the exclusive lock while it waits for its input.
"$M" index add -q --jsonl "$J" "$tmp/fifo" 2> "$tmp/holder.err" &
holder=$!
i=0
while [ $i -lt 100 ]; do
    "$M" index stats --lock-timeout 0 "$J" > /dev/null 2>&1 || break
    sleep 0.05
    i=$((i + 1))
done
cp "$J" "$tmp/held.before"
start=$(date +%s%N 2>/dev/null || date +%s)
"$M" index add -q --lock-timeout 0.4 --jsonl "$J" "$tmp/w0_0.jsonl" > /dev/null 2> "$tmp/err"
st=$?
end=$(date +%s%N 2>/dev/null || date +%s)
if [ $st -eq 1 ] && grep -q 'gave up waiting for the exclusive lock on .*held.mlsh.lock after 0.4 s' "$tmp/err" &&
   cmp -s "$J" "$tmp/held.before"; then ok "lock_timeout_writer: $(cat "$tmp/err")"
else ko lock_timeout_writer "status $st" "$(cat "$tmp/err")"; fi
case $start in *N) ;; *)
    ms=$(( (end - start) / 1000000 ))
    [ $ms -ge 380 ] && [ $ms -lt 5000 ] && ok "lock_timeout_waited: $ms ms" || ko lock_timeout_waited "$ms ms" ;;
esac
"$M" index query -q --lock-timeout 0.1 --jsonl "$J" "$tmp/w0_0.jsonl" > /dev/null 2> "$tmp/err"
st=$?
[ $st -eq 1 ] && grep -q 'gave up waiting for the shared lock' "$tmp/err" && ok lock_timeout_reader ||
    ko lock_timeout_reader "status $st" "$(cat "$tmp/err")"
# A writer without a timeout waits, says so, and gets its turn.
"$M" index add --jsonl "$J" "$tmp/w1_0.jsonl" > /dev/null 2> "$tmp/waiter.err" &
waiter=$!
sleep 1.3
cat "$tmp/w0_0.jsonl" > "$tmp/fifo"
wait "$holder"; st1=$?
wait "$waiter"; st2=$?
n=$("$M" index stats "$J" 2> /dev/null | sed -n 's/^documents *//p')
if [ $st1 -eq 0 ] && [ $st2 -eq 0 ] && [ "$n" = 80 ] && grep -q 'waiting for the lock on' "$tmp/waiter.err"
then ok lock_wait_then_add
else ko lock_wait_then_add "status $st1 $st2, $n documents" "$(cat "$tmp/waiter.err" "$tmp/holder.err")"; fi
[ -f "$J.lock" ] && [ ! -s "$J.lock" ] && ok lock_file_stays_empty || ko lock_file_stays_empty "no empty $J.lock"
"$M" index add --lock-timeout abc "$J" "$tmp/w0_0.jsonl" > /dev/null 2>&1
[ $? -eq 2 ] && ok lock_timeout_usage || ko lock_timeout_usage "not a usage error"

# ---- saves cut short ----------------------------------------------------------------
# A journal write or a save past the file size limit (ulimit -f) fails with a
# message and leaves neither a temporary file nor a changed index or journal
# record; a temporary file left by a save that died (here: made by hand) is
# removed by the next writer, which holds the lock, and nothing else is.
S="$tmp/small.mlsh"
"$M" index create -q "$S" 2> /dev/null
"$M" index compact -q "$S" 2> /dev/null # the empty journal exists before the limit
before=$(cksum < "$S")
jbefore=$(cksum < "$S.journal")
# (Counters of a coverage build go to a scratch GCOV_PREFIX: the limit would
# tear them.)
(ulimit -f 4; GCOV_PREFIX="$tmp/gcov" "$M" index add --jsonl "$S" "$tmp/w0_0.jsonl" "$tmp/w1_0.jsonl" "$tmp/w2_0.jsonl" \
    > /dev/null 2> "$tmp/xfsz.err"); st=$?
if [ $st -eq 1 ] && [ "$(cksum < "$S")" = "$before" ] && [ "$(cksum < "$S.journal")" = "$jbefore" ] &&
    grep -q 'cannot write the journal' "$tmp/xfsz.err"
then ok journal_past_file_size_limit
else ko journal_past_file_size_limit "status $st" "$(cat "$tmp/xfsz.err")"; fi
"$M" index add -q --jsonl "$S" "$tmp/w0_0.jsonl" "$tmp/w1_0.jsonl" "$tmp/w2_0.jsonl" 2> /dev/null
before=$(cksum < "$S")
jbefore=$(cksum < "$S.journal")
(ulimit -f 4; GCOV_PREFIX="$tmp/gcov" "$M" index compact "$S" > /dev/null 2> "$tmp/xfsz.err"); st=$?
left=$(ls "$tmp" | grep -c 'small\.mlsh\.tmp-')
if [ $st -eq 1 ] && [ "$left" -eq 0 ] && [ "$(cksum < "$S")" = "$before" ] &&
    [ "$(cksum < "$S.journal")" = "$jbefore" ] && grep -q 'cannot save the index' "$tmp/xfsz.err"
then ok save_past_file_size_limit
else ko save_past_file_size_limit "status $st, $left temporary files left" "$(cat "$tmp/xfsz.err")"; fi
: > "$S.tmp-0123456789abcdef"
: > "$S.tmp-not-a-save"
if "$M" index add --jsonl "$S" "$tmp/w3_0.jsonl" > /dev/null 2> "$tmp/stale.err" &&
    [ ! -e "$S.tmp-0123456789abcdef" ] && [ -e "$S.tmp-not-a-save" ]
then ok stale_save_temporaries_removed
else ko stale_save_temporaries_removed "$(ls "$tmp" | grep small)" "$(cat "$tmp/stale.err")"; fi
finish
