#!/bin/sh
# make check-valgrind: every C test and every fuzz-corpus replay of
# BUILD_DIR under valgrind's memcheck (invalid accesses, uninitialised
# values, leaks). VALGRIND_SKIP may list tests to leave out (none by
# default). The kill -9 test runs a shortened series (MINLSH_KILL_RUNS=10). valgrind reports no AVX-512, so the SIMD dispatch picks
# AVX2 or the portable kernel here.
#   sh scripts/check-valgrind.sh BUILD_DIR
set -u
b=$1
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null 2>&1; then
    echo "check-valgrind: valgrind is not installed (sh scripts/deps.sh hardening)" >&2
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/minlsh-vg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect"
pass=0 fail=0 skipped=""
run() { # name, command...
    name=$1
    shift
    start=$(date +%s)
    if MINLSH_TEST_TMP=$tmp MINLSH_TEST_DIR=$PWD/tests MINLSH_KILL_RUNS=10 $vg "$@" >"$tmp/$name.out" 2>&1; then
        echo "ok   $name ($(( $(date +%s) - start )) s)"
        pass=$((pass + 1))
    else
        echo "FAIL $name"
        grep -E '^(==[0-9]+==|FAIL|  )' "$tmp/$name.out" | head -n 20 | sed 's/^/  | /'
        fail=$((fail + 1))
    fi
}
for t in "$b"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    case " ${VALGRIND_SKIP:-} " in *" $name "*) skipped="$skipped $name"; continue ;; esac
    run "$name" "$t"
done
for r in "$b"/fuzz/replay_*; do
    [ -x "$r" ] || continue
    t=${r##*/replay_}
    run "replay_$t" "$r" "fuzz/corpus/$t"
done
[ -n "$skipped" ] && echo "skipped (VALGRIND_SKIP):$skipped"
echo "check-valgrind: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
