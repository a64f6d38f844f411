#!/bin/sh
# The test command of the README: installs what is missing (Debian packages),
# builds, and runs every functional test: the C suite (library, command,
# install through pkg-config, examples, symbols), the Python and Go bindings
# and the Dask pipeline. The C suite runs last, so the last line is its
# "N passed, M failed".
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
for mode in test python go dask; do sh scripts/deps.sh "$mode"; done
make -j"$jobs" lib program >/dev/null
make check-bindings
make check-dask
make -j"$jobs" check
