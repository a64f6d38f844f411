#!/bin/sh
# make check-tsan, after building BUILD_DIR with -fsanitize=thread:
#   sh scripts/check-tsan.sh BUILD_DIR
# 1. tests/test_tsan.c: shared shingler and family, concurrent index readers,
#    the batch signer's own threads;
# 2. `minlsh dedup --threads 4` on a generated corpus (tests/cli/gen_corpus.py),
#    whose output must equal the single-threaded run's.
# Any ThreadSanitizer report fails the run (halt_on_error).
set -u
b=$1
cd "$(dirname "$0")/.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/minlsh-tsan.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export TSAN_OPTIONS
status=0
if MINLSH_TEST_TMP=$tmp "$b/tests/test_tsan" >"$tmp/test.out" 2>&1; then
    echo "ok   test_tsan: $(tail -n 1 "$tmp/test.out")"
else
    echo "FAIL test_tsan"
    grep -E '^(FAIL|  |WARNING: ThreadSanitizer|SUMMARY)' "$tmp/test.out" | head -n 30
    status=1
fi
if command -v python3 >/dev/null 2>&1 &&
   python3 tests/cli/gen_corpus.py --seed 7 --out "$tmp/corpus" --families 20 --singletons 200 \
       >/dev/null 2>"$tmp/gen.err"; then
    # Status 1 is expected: the corpus has an empty document, reported and
    # skipped. ThreadSanitizer would exit with 66.
    "$b/minlsh" dedup --threads 4 "$tmp/corpus/files" >"$tmp/four" 2>"$tmp/four.err"
    rc4=$?
    "$b/minlsh" dedup --threads 1 "$tmp/corpus/files" >"$tmp/one" 2>"$tmp/one.err"
    rc1=$?
    if [ "$rc4" -le 1 ] && [ "$rc1" -le 1 ] && ! grep -q ThreadSanitizer "$tmp/four.err" &&
       cmp -s "$tmp/one" "$tmp/four" && [ -s "$tmp/one" ]; then
        echo "ok   minlsh dedup --threads 4: $(grep -c '^cluster' "$tmp/four") clusters, same as --threads 1"
    else
        echo "FAIL minlsh dedup --threads 4 (status $rc4; --threads 1: $rc1)"
        grep -E 'WARNING: ThreadSanitizer|SUMMARY|minlsh:' "$tmp/four.err" | head -n 10
        status=1
    fi
else
    echo "FAIL cannot generate the dedup corpus (python3 tests/cli/gen_corpus.py)"
    status=1
fi
[ "$status" -eq 0 ] && echo "check-tsan: no data races"
exit $status
