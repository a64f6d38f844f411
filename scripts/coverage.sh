#!/bin/sh
# make coverage, after `make check` in a --coverage build: line coverage of
# lib/ with lcov (an HTML report in BUILD_DIR/html), one summary line, and a
# failure below COVERAGE_MIN percent (default 90).
#   sh scripts/coverage.sh BUILD_DIR
set -u
b=$1
cd "$(dirname "$0")/.."
min=${COVERAGE_MIN:-90}
if ! command -v lcov >/dev/null 2>&1; then
    echo "coverage: lcov is not installed (sh scripts/deps.sh hardening)" >&2
    exit 1
fi
# The release objects and the testing archive's (tests that call the
# test-only hooks run those): lcov adds up the counts of each source file.
lcov --quiet --capture --directory "$b/lib" --directory "$b/testing/lib" --base-directory . --output-file "$b/all.info" \
    --rc lcov_branch_coverage=0 2>"$b/lcov.err" || { cat "$b/lcov.err"; exit 1; }
lcov --quiet --extract "$b/all.info" "$PWD/lib/*" --output-file "$b/lib.info" 2>>"$b/lcov.err" ||
    { cat "$b/lcov.err"; exit 1; }
genhtml --quiet --output-directory "$b/html" "$b/lib.info" >/dev/null 2>>"$b/lcov.err" || true
lcov --summary "$b/lib.info" 2>&1 | tee "$b/summary.txt" | sed -n 's/^ *lines\.*: /lines: /p'
# Per file, the least covered first.
lcov --list "$b/lib.info" 2>/dev/null | awk -F'|' 'NF >= 2 && $2 ~ /%/ {print $2 "|" $1}' |
    sort -n | head -n 8 | sed 's/^/  /'
pct=$(sed -n 's/^ *lines\.*: \([0-9.]*\)%.*/\1/p' "$b/summary.txt")
if [ -z "$pct" ]; then
    echo "coverage: no summary" >&2
    exit 1
fi
if awk -v p="$pct" -v m="$min" 'BEGIN { exit !(p >= m) }'; then
    echo "coverage: lib/ line coverage $pct% (minimum $min%); report in $b/html/index.html"
else
    echo "coverage: lib/ line coverage $pct% is below the minimum of $min%" >&2
    exit 1
fi
