#!/bin/sh
# Runs libFuzzer targets for a bounded time each and prints one line per
# target with its executions, time and corpus size.
#   sh scripts/fuzz.sh BUILD_DIR SECONDS TARGET...
# BUILD_DIR holds the libFuzzer binaries (make fuzz-build). Each target
# starts from its committed corpus fuzz/corpus/<target>/ and writes new inputs
# to BUILD_DIR/corpus/<target>/ (a scratch directory); with FUZZ_MERGE=1 the
# new inputs that add coverage are then merged into the committed corpus.
# Crashes go to BUILD_DIR/artifacts/; the script exits non-zero if any target
# failed. Targets run one at a time, so each gets its whole slice.
set -u
dir=$1
secs=$2
shift 2
cd "$(dirname "$0")/.."
mkdir -p "$dir/artifacts" "$dir/logs"
status=0
total_execs=0
for t in "$@"; do
    seeds=fuzz/corpus/$t
    scratch=$dir/corpus/$t
    log=$dir/logs/$t.log
    mkdir -p "$scratch" "$seeds"
    dict=""
    [ -f "fuzz/$t.dict" ] && dict="-dict=fuzz/$t.dict"
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$dir/$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=8192 \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" $dict \
        "$scratch" "$seeds" >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
    corpus=$(find "$scratch" "$seeds" -type f | wc -l | tr -d ' ')
    : "${execs:=0}" "${speed:=0}" "${cov:=?}"
    total_execs=$((total_execs + execs))
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "FAIL $t: libFuzzer exited with $rc after $took s; see $log"
        grep -E '^(==[0-9]+==ERROR|SUMMARY|.*check failed|.*returned MINLSH)' "$log" | head -n 5 | sed 's/^/  | /'
        ls "$dir/artifacts/$t-"* 2>/dev/null | head -n 3 | sed 's/^/  artifact: /'
    else
        echo "ok   $t: $execs executions in $took s ($speed/s), coverage $cov edges, corpus $corpus files"
    fi
    if [ "${FUZZ_MERGE:-0}" = 1 ] && [ "$rc" -eq 0 ]; then
        "$dir/$t" -merge=1 -max_len=8192 "$seeds" "$scratch" >>"$log" 2>&1 ||
            { echo "FAIL $t: merge failed; see $log"; status=1; }
    fi
done
echo "fuzz: $total_execs executions in total, $secs s per target"
exit $status
