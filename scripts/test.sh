#!/bin/sh
# The test command of the README: installs what is missing, builds, and runs
# every test. Ends with "N passed, M failed".
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh test
make -j"$(nproc 2>/dev/null || echo 2)" lib >/dev/null
make -j"$(nproc 2>/dev/null || echo 2)" check
