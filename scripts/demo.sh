#!/bin/sh
# The main job of the README: builds minlsh and finds the groups of
# near-duplicate licence texts that every Debian system carries.
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh build
make -j"$(nproc 2>/dev/null || echo 2)" lib examples >/dev/null
exec build/examples/dedup_dir /usr/share/common-licenses /usr/share/doc/*/copyright
