#!/bin/sh
# Installs the Debian packages a task needs, when they are missing.
#   sh scripts/deps.sh build   compiler, make, pkg-config
#   sh scripts/deps.sh test    + libsodium (independent SipHash), Python, clang
#                                and its sanitizer runtime, g++ (header check)
# Needs root (or sudo) only when something is actually missing.
set -eu
build="gcc make libc6-dev pkg-config binutils"
test="$build libsodium-dev python3 clang libclang-rt-14-dev g++ gawk"
case "${1:-test}" in
    build) want=$build ;;
    test) want=$test ;;
    *) echo "usage: deps.sh build|test" >&2; exit 2 ;;
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
# shellcheck disable=SC2086
$sudo apt-get install -y -qq $missing >/dev/null
