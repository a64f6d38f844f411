#!/bin/sh
# kill -9 of `minlsh index add` at random moments, during its journal
# appends and during the compactions the journal's bound (1 MiB here) sets
# off: every batch a run reported added (exit 0) is in the index afterwards,
# every batch is in whole or not at all (its records are synced together),
# and the index and journal always open. Prints how many runs were killed.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin index_kill
RUNS=${MINLSH_KILL_RUNS:-30}

# Batches of 400 distinct documents (about 240 KB of journal each).
"$PY" - "$tmp" "$RUNS" <<'PY'
import random, sys
out, runs = sys.argv[1], int(sys.argv[2])
rng = random.Random(11)
words = ['w%d' % i for i in range(5000)]
for b in range(runs):
    with open('%s/b%d.jsonl' % (out, b), 'w') as f:
        for d in range(400):
            text = ' '.join(rng.choice(words) for _ in range(40))
            f.write('{"id": "b%d-%d", "text": "%s"}\n' % (b, d, text))
PY
I="$tmp/ix"
"$M" index create -q "$I"
acked="" killed=0 b=0
while [ $b -lt "$RUNS" ]; do
    # A coverage build writes its counters at exit: a kill in the middle
    # would leave them torn for every later process, so these go elsewhere.
    GCOV_PREFIX="$tmp/gcov" "$M" index add -q --jsonl "$I" "$tmp/b$b.jsonl" 2> /dev/null &
    pid=$!
    # 0 to 45 ms: before, during and after the appends and compactions
    sleep "0.00$(( (b * 37) % 10 ))"
    [ $((b % 2)) -eq 1 ] && sleep 0.02
    kill -9 $pid 2> /dev/null
    { wait $pid; } 2> /dev/null
    if [ $? -eq 0 ]; then acked="$acked $b"; else killed=$((killed + 1)); fi
    b=$((b + 1))
done
# Every batch: 400 of its documents find themselves, or none.
bad="" n_acked=0
b=0
while [ $b -lt "$RUNS" ]; do
    "$M" index query -q --format tsv --jsonl "$I" "$tmp/b$b.jsonl" > "$tmp/q" 2> "$tmp/err" || {
        bad="$bad query$b($(head -c 200 "$tmp/err"))"
        break
    }
    self=$(awk -F '\t' 'NR > 1 && $1 == $2' "$tmp/q" | wc -l | tr -d ' ')
    case " $acked " in *" $b "*) want=400; n_acked=$((n_acked + 1)) ;; *) want=any ;; esac
    if [ "$self" != 400 ] && { [ "$want" = 400 ] || [ "$self" != 0 ]; }; then
        bad="$bad b$b:$self"
    fi
    b=$((b + 1))
done
if [ -z "$bad" ]; then ok "kill_add_every_acknowledged_batch_kept"
else ko kill_add_every_acknowledged_batch_kept "$bad"; fi
echo "info $RUNS runs, $killed killed ($(ls "$tmp" | grep -c 'ix\.tmp-') temporaries of killed compactions left for the next writer), $n_acked reported added; journal $(wc -c < "$I.journal") bytes"
# A writer after all that: stale temporaries removed, everything folds in.
if "$M" index compact "$I" 2> "$tmp/err" && [ "$(wc -c < "$I.journal")" -eq 64 ] &&
    [ -z "$(ls "$tmp" | grep 'ix.*\.tmp-')" ]
then ok kill_add_compacts_after
else ko kill_add_compacts_after "$(cat "$tmp/err")" "$(ls "$tmp")"; fi

finish
