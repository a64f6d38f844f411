# What the shell tests share. Each test changes to the repository root and
# sources this file, then names itself:
#
#   cd "$(dirname "$0")/.." || exit 1
#   . tests/lib.sh
#   tl_begin NAME
#
# tl_begin sets $M (the command, an absolute path under $BUILD, default
# build), $PY (Debian's Python) and $tmp (a fresh scratch directory under
# $MINLSH_TEST_TMP, default /tmp), and zeroes the counters.
#   ok NAME              a check passed
#   ko NAME [TEXT...]    a check failed; the first lines of each TEXT shown
#   run NAME STATUS CMD  run CMD, stdout in $tmp/out and stderr in $tmp/err;
#                        returns 0 if it exited with STATUS, else fails NAME
#   has NAME FILE RE     FILE has a line matching the extended RE
#   line NAME FILE LINE  FILE has exactly this line
#   nothing NAME FILE RE FILE has no line matching RE
#   same_index A B PATH...  indexes A and B hold the same documents under the
#                        same names (stats but the path, size and memory;
#                        every candidate of PATH's documents): ids and file
#                        bytes may differ, as a store never renumbers
#   finish               remove $tmp, print "NAME: N passed, M failed" (the
#                        line tests/run.sh adds up), exit 1 if any failed

tl_begin() {
    tl_name=$1
    tl_root=$(pwd)
    : "${BUILD:=build}"
    case $BUILD in /*) M=$BUILD/minlsh ;; *) M=$(pwd)/$BUILD/minlsh ;; esac
    PY=/usr/bin/python3
    [ -x "$PY" ] || PY=python3
    tmp=${MINLSH_TEST_TMP:-/tmp}/$tl_name.$$
    rm -rf "$tmp"
    mkdir -p "$tmp"
    pass=0 fail=0
}

ok() { echo "ok   $1"; pass=$((pass + 1)); }

ko() {
    echo "FAIL $1"
    shift
    for l in "$@"; do echo "$l" | head -n 8 | sed 's/^/  /'; done
    fail=$((fail + 1))
}

run() {
    tl_run_name=$1 tl_want=$2
    shift 2
    "$@" > "$tmp/out" 2> "$tmp/err"
    tl_got=$?
    if [ "$tl_got" -eq "$tl_want" ]; then return 0; fi
    ko "$tl_run_name" "exit status $tl_got, expected $tl_want" "$(head -n 5 "$tmp/err")"
    return 1
}

has() {
    if grep -Eq -- "$3" "$2"; then ok "$1"; else ko "$1" "no '$3' in:" "$(head -n 6 "$2")"; fi
}

same_index() {
    tl_a=$1 tl_b=$2
    shift 2
    "$M" index stats "$tl_a" 2>&1 | grep -Ev '^(index|bytes|memory when loaded) ' > "$tmp/same.a"
    "$M" index stats "$tl_b" 2>&1 | grep -Ev '^(index|bytes|memory when loaded) ' > "$tmp/same.b"
    cmp -s "$tmp/same.a" "$tmp/same.b" || return 1
    "$M" index query -q --all --format tsv "$tl_a" "$@" 2>&1 | sort > "$tmp/same.a"
    "$M" index query -q --all --format tsv "$tl_b" "$@" 2>&1 | sort > "$tmp/same.b"
    [ -s "$tmp/same.a" ] && cmp -s "$tmp/same.a" "$tmp/same.b"
}

line() {
    if grep -Fqx -- "$3" "$2"; then ok "$1"; else ko "$1" "no line '$3' in:" "$(head -n 6 "$2")"; fi
}

nothing() {
    if grep -Eq -- "$3" "$2"; then ko "$1" "unexpected '$3' in:" "$(head -n 6 "$2")"; else ok "$1"; fi
}

finish() {
    cd "$tl_root" && rm -rf "$tmp"
    echo "$tl_name: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}
