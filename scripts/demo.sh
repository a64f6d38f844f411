#!/bin/sh
# The main job of the README: builds minlsh and finds the groups of
# near-duplicate licence texts that every Debian system carries, with the
# minlsh command on its defaults (word 5-shingles, Jaccard >= 0.8, candidates
# confirmed exactly).
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh build
make -j"$(nproc 2>/dev/null || echo 2)" lib program >/dev/null
exec build/minlsh dedup /usr/share/common-licenses /usr/share/doc/*/copyright
