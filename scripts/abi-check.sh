#!/bin/sh
# make abi-check: compare the freshly built shared library with the committed
# ABI baseline, and check that exactly the header's functions are exported,
# each in the version script.
#   sh scripts/abi-check.sh BUILD_DIR SHARED_LIB BASELINE "ABIDW_FLAGS"
# abidiff's exit status is a bit mask: 1 error, 2 usage error, 4 ABI change,
# 8 incompatible change. Changes that only add (new functions, new version
# node) are compatible and pass; a removed or changed function, variable or
# type used by one fails the check.
set -u
b=$1 so=$2 base=$3 flags=$4
cd "$(dirname "$0")/.."
for tool in abidw abidiff; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "abi-check: $tool is not installed (sh scripts/deps.sh hardening: abigail-tools)" >&2
        exit 1
    fi
done
if [ ! -f "$base" ]; then
    echo "abi-check: no baseline $base (make abi-baseline writes it)" >&2
    exit 1
fi
status=0
# The handles minlsh.h declares without a body (typedef struct minlsh_x
# minlsh_x;) are opaque: callers hold pointers only, so their layout is the
# library's own and may change in any release. abidiff still sees it in the
# debug info; a suppression made from the header keeps those changes out.
supp="$b/opaque.suppr"
: >"$supp"
sed -n 's/^typedef struct \(minlsh_[a-z_]*\) \1;$/\1/p' include/minlsh.h | while read -r t; do
    printf '[suppress_type]\n  type_kind = struct\n  name = %s\n\n' "$t" >>"$supp"
done
# shellcheck disable=SC2086
# Experimental functions (MINLSH_EXPERIMENTAL_API, their own version node)
# promise nothing: they may change or go in any release.
sh scripts/gen-map.sh experimental | while read -r f; do
    printf '[suppress_function]\n  name = %s\n\n' "$f" >>"$supp"
done
abidw $flags --out-file "$b/current.abi.xml" "$so" || exit 1
abidiff --suppressions "$supp" "$base" "$b/current.abi.xml" >"$b/abidiff.txt" 2>&1
rc=$?
if [ $((rc & 3)) -ne 0 ]; then
    echo "FAIL abidiff could not compare (status $rc)"
    sed 's/^/  | /' "$b/abidiff.txt" | head -n 20
    status=1
elif [ $((rc & 12)) -ne 0 ]; then
    # abidiff sets bit 8 only for changes it knows to be incompatible (a
    # removed symbol...); a changed type sets bit 4 alone. Here any removed
    # or changed function, variable or symbol fails: only additions pass.
    bad=$(sed -n 's/^\(Functions\|Variables\|Function symbols\|Variable symbols\) changes summary: \([0-9]*\) Removed[^,]*, \([0-9]*\) Changed.*/\2 \3/p' \
          "$b/abidiff.txt" | awk '$1 + $2 > 0' | head -n 1)
    if [ $((rc & 8)) -ne 0 ] || [ -n "$bad" ] || ! grep -q 'changes summary' "$b/abidiff.txt"; then
        echo "FAIL ABI change against $base (only additions are allowed in a release):"
        sed 's/^/  | /' "$b/abidiff.txt" | head -n 60
        status=1
    else
        echo "ok   compatible ABI changes against $base (additions only):"
        grep 'changes summary' "$b/abidiff.txt" | sed 's/^/  | /'
    fi
else
    echo "ok   ABI identical to $base"
fi
# Every function of the header in the version script, every export versioned.
if BUILD=$b sh tests/symbols.sh >"$b/symbols.out" 2>&1; then
    echo "ok   exports: $(tail -n 1 "$b/symbols.out")"
else
    echo "FAIL exports (tests/symbols.sh):"
    grep -E '^(FAIL|  )' "$b/symbols.out" | head -n 20
    status=1
fi
[ "$status" -eq 0 ] && echo "abi-check: passed"
exit $status
