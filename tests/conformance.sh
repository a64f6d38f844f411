#!/bin/sh
# One corpus through the command, Python minlsh.dedup, Go Dedup and
# minlsh.dask (two local worker processes): byte-identical decisions on the
# cases of tests/conformance.py. A front end whose toolchain is missing (Go,
# Dask) is skipped with a message saying so. Skipped in instrumented builds
# (sanitizers, coverage): Python cannot load a library built with a
# sanitizer's runtime, and the plain build runs the same comparison.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin conformance
if [ -n "${MINLSH_SANITIZE:-}" ]; then
    echo "conformance: skipped in an instrumented build"
    finish
fi

case $BUILD in /*) build=$BUILD ;; *) build=$(pwd)/$BUILD ;; esac
root=$(pwd)
lib=$(ls "$build"/libminlsh.so.[0-9]* 2>/dev/null | head -n 1)
[ -n "$lib" ] || { ko library "no $build/libminlsh.so.N"; finish; }

go_program=
if command -v go >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1; then
    # The Go package finds the library through pkg-config: one that points
    # at the source tree's header and the build's library.
    mkdir -p "$tmp/pc"
    printf 'Name: minlsh\nDescription: minlsh (build tree)\nVersion: 0\nCflags: -I%s/include\nLibs: -L%s -lminlsh\n' \
        "$root" "$build" > "$tmp/pc/minlsh.pc"
    if (cd bindings/go && PKG_CONFIG_PATH="$tmp/pc" CGO_ENABLED=1 GO111MODULE=on GOPROXY=off \
        GOSUMDB=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=local GOCACHE="$build/go-cache" \
        GOPATH="$build/gopath" go build -o "$tmp/dedupjsonl" ./examples/dedupjsonl) \
        > "$tmp/go.out" 2>&1; then
        go_program=$tmp/dedupjsonl
        ok go_program_builds
    else
        ko go_program_builds "$(cat "$tmp/go.out")"
    fi
else
    echo "skip go: no go or pkg-config (sh scripts/deps.sh go installs them)"
fi

LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" MINLSH_LIBRARY="$lib" \
    PYTHONPATH="$root/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
    "$PY" tests/conformance.py "$M" "$tmp" "$go_program" > "$tmp/py.out" 2>&1
status=$?
grep -E '^(ok|FAIL|skip|  )' "$tmp/py.out"
summary=$(grep -E '^conformance: [0-9]+ passed, [0-9]+ failed' "$tmp/py.out")
if [ -z "$summary" ]; then
    ko conformance_py "exited with status $status" "$(tail -n 20 "$tmp/py.out")"
else
    pass=$((pass + $(echo "$summary" | sed -E 's/.*: ([0-9]+) passed.*/\1/')))
    fail=$((fail + $(echo "$summary" | sed -E 's/.*, ([0-9]+) failed/\1/')))
fi
finish
