#!/bin/sh
# Replays every committed fuzz corpus (fuzz/corpus/<target>/) through its
# target, built without libFuzzer as $BUILD/fuzz/replay_<target> (mk/fuzz.mk
# makes them part of `make check`). One ok/FAIL line per target.
set -u
cd "$(dirname "$0")/.."
: "${BUILD:=build}"
pass=0 fail=0
tmp=${MINLSH_TEST_TMP:-/tmp}/fuzz_replay.$$
mkdir -p "$tmp"
for src in fuzz/fuzz_*.c; do
    t=$(basename "$src" .c)
    bin=$BUILD/fuzz/replay_$t
    if [ ! -x "$bin" ]; then
        echo "FAIL $t: $bin not built (make check builds it)"
        fail=$((fail + 1))
        continue
    fi
    if [ ! -d "fuzz/corpus/$t" ]; then
        echo "FAIL $t: no corpus fuzz/corpus/$t"
        fail=$((fail + 1))
        continue
    fi
    if "$bin" "fuzz/corpus/$t" >"$tmp/$t.out" 2>&1; then
        echo "ok   $t: $(tail -n 1 "$tmp/$t.out" | sed 's/.*: \([0-9]*\) passed.*/\1/') inputs"
        pass=$((pass + 1))
    else
        echo "FAIL $t"
        tail -n 5 "$tmp/$t.out" | sed 's/^/  | /'
        fail=$((fail + 1))
    fi
done
rm -rf "$tmp"
echo "fuzz_replay: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
