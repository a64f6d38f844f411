#!/bin/sh
# Runs every test program given on the command line, then every tests/*.sh
# script, and adds up their "NAME: N passed, M failed" lines. A program that
# dies without its summary counts as one failure. Ends with the one line
# "N passed, M failed" and exits non-zero if anything failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${BUILD:=build}"
MINLSH_TEST_DIR=$here
MINLSH_TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/minlsh-test.XXXXXX")
export MINLSH_TEST_DIR MINLSH_TEST_TMP BUILD
trap 'rm -rf "$MINLSH_TEST_TMP"' EXIT INT TERM

passed=0
failed=0
start=$(date +%s)

tally() { # name, output file, exit status
    line=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed' "$2" | tail -n 1)
    if [ -z "$line" ]; then
        echo "FAIL $1: exited with status $3 and no summary"
        tail -n 20 "$2" | sed 's/^/  | /'
        failed=$((failed + 1))
        return
    fi
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1/')
    f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\2/')
    if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $1: exited with status $3 after its summary"
        f=1
    fi
    if [ "$f" -ne 0 ]; then
        grep -E '^(FAIL|  )' "$2" | head -n 40
    fi
    echo "$line"
    passed=$((passed + p))
    failed=$((failed + f))
}

for t in "$@"; do
    name=$(basename "$t")
    out="$MINLSH_TEST_TMP/$name.out"
    "$t" >"$out" 2>&1
    tally "$name" "$out" $?
done

for s in "$here"/*.sh; do
    case $(basename "$s") in run.sh | lib.sh) continue ;; esac
    [ -f "$s" ] || continue
    name=$(basename "$s" .sh)
    out="$MINLSH_TEST_TMP/$name.out"
    sh "$s" >"$out" 2>&1
    tally "$name" "$out" $?
done

echo "time: $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
