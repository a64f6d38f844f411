#!/bin/sh
# Installs the Debian packages a task needs, when they are missing.
#   sh scripts/deps.sh build   compiler, make, pkg-config, zlib and libzstd (the
#                                command reads gzip and zstd input)
#   sh scripts/deps.sh test    + libsodium (independent SipHash), Python, clang,
#                                zstd (compressed-input tests)
#                                and its sanitizer runtime, g++ (header check),
#                                cmake (the CMake build and package), unicode-data
#                                (tests/unicode_tables.sh, scripts/gen_unicode.py)
#   sh scripts/deps.sh python  build + Python's headers (the optional C accelerator),
#                                pytest, numpy, setuptools, wheel, pip, venv
#                                (the Python binding; make check-python)
#   sh scripts/deps.sh go      build + the Go toolchain (the Go binding; make check-go)
#   sh scripts/deps.sh dask    python + Dask, distributed, pandas (minlsh.dask;
#                                make check-dask, make bench-dask)
#   sh scripts/deps.sh hardening  test + abigail-tools (make abi-check), lcov (make
#                                coverage), valgrind (make check-valgrind), cppcheck
# Needs root (or sudo) only when something is actually missing.
set -eu
build="gcc make libc6-dev pkg-config binutils zlib1g-dev libzstd-dev"
test="$build libsodium-dev python3 clang libclang-rt-14-dev g++ gawk cmake zstd unicode-data"
python="$build python3 python3-dev python3-pytest python3-numpy python3-setuptools python3-wheel python3-pip python3-venv"
go="$build golang-go"
dask="$python python3-dask python3-distributed python3-pandas"
hardening="$test abigail-tools lcov valgrind cppcheck"
case "${1:-test}" in
    build) want=$build ;;
    test) want=$test ;;
    python) want=$python ;;
    go) want=$go ;;
    dask) want=$dask ;;
    hardening) want=$hardening ;;
    *) echo "usage: deps.sh build|test|python|go|dask|hardening" >&2; exit 2 ;;
esac
missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "deps: missing packages:$missing (run as root: apt-get install -y$missing)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null || true
# Wait for another apt run (e.g. a parallel make's) instead of failing on its lock.
# shellcheck disable=SC2086
$sudo apt-get install -y -qq -o DPkg::Lock::Timeout=600 $missing >/dev/null
