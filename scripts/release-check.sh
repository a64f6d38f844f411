#!/bin/sh
# make release-check: every place that states the release agrees with the
# header, which is where the version lives.
#   sh scripts/release-check.sh [PC_FILE]
# Checked, each failure named on its own line:
#   - include/minlsh.h: MINLSH_VERSION_MAJOR/MINOR/PATCH and _STRING agree;
#   - lib/minlsh.map: the newest version node is MINLSH_<major>.<minor>;
#   - CHANGELOG.md: the newest dated section, "## [X.Y.Z] - YYYY-MM-DD", is
#     this version (an undated [Unreleased] section above it is allowed);
#   - abi/libminlsh.abi.xml: the soname is libminlsh.so.<major>, and its
#     symbols, with their version nodes, are exactly those of the map (the
#     MINLSH_EXPERIMENTAL node aside on both sides);
#   - minlsh.pc.in takes its version from the build (@VERSION@), and PC_FILE,
#     a generated .pc (make passes $(BUILD)/minlsh.pc), says this version.
# Runs from any copy of the tree: MINLSH_SRC names another root.
set -u
root=${MINLSH_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
pc=${1:-}
header=$root/include/minlsh.h map=$root/lib/minlsh.map changelog=$root/CHANGELOG.md
baseline=$root/abi/libminlsh.abi.xml pcin=$root/minlsh.pc.in
fail=0
ok() { echo "ok   $1"; }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }

macro() { sed -n "s/^#define MINLSH_VERSION_$1 \\([0-9]*\\).*/\\1/p" "$header"; }
major=$(macro MAJOR) minor=$(macro MINOR) patch=$(macro PATCH)
string=$(sed -n 's/^#define MINLSH_VERSION_STRING "\(.*\)"/\1/p' "$header")
version=$major.$minor.$patch
if [ -z "$major" ] || [ -z "$minor" ] || [ -z "$patch" ]; then
    ko "include/minlsh.h: no MINLSH_VERSION_MAJOR/MINOR/PATCH"
    echo "release-check: cannot go on without the header's version"
    exit 1
fi
if [ "$string" = "$version" ]; then ok "include/minlsh.h: version $version"
else ko "include/minlsh.h: MINLSH_VERSION_STRING is '$string', the numbers say $version"; fi

node=$(grep -o '^MINLSH_[0-9][0-9]*\.[0-9][0-9]*' "$map" | tail -n 1)
if [ "$node" = "MINLSH_$major.$minor" ]; then ok "lib/minlsh.map: newest node $node"
else ko "lib/minlsh.map: newest version node is '$node', the header's version needs MINLSH_$major.$minor"; fi

dated=$(grep -m 1 -E '^## \[[0-9]+\.[0-9]+\.[0-9]+\] - [0-9]{4}-[0-9]{2}-[0-9]{2}( |$)' "$changelog")
clv=$(echo "$dated" | sed -n 's/^## \[\([0-9.]*\)\].*/\1/p')
if [ -z "$dated" ]; then
    ko "CHANGELOG.md: no dated section '## [$version] - YYYY-MM-DD' (only undated ones)"
elif [ "$clv" = "$version" ]; then ok "CHANGELOG.md: $dated"
else ko "CHANGELOG.md: the newest dated section is '$dated', not $version"; fi

soname=$(sed -n "s/^<abi-corpus [^>]*soname='\\([^']*\\)'.*/\\1/p" "$baseline" | head -n 1)
if [ "$soname" = "libminlsh.so.$major" ]; then ok "abi/libminlsh.abi.xml: soname $soname"
else ko "abi/libminlsh.abi.xml: soname is '$soname', the header's version needs libminlsh.so.$major"; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/minlsh-release.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
# "name version" for every symbol of the map (the node it is listed under)
# and of the baseline.
# The experimental node promises nothing, so it is left out on both sides.
awk '/^MINLSH_[0-9A-Z_.]* *\{/ { node = $1 } /^ *minlsh_[a-z0-9_]*;/ { s = $1; sub(/;.*/, "", s); print s, node }' \
    "$map" | grep -v ' MINLSH_EXPERIMENTAL$' | sort > "$tmp/map.txt"
sed -n "s/.*<elf-symbol name='\\([^']*\\)' version='\\([^']*\\)'.*/\\1 \\2/p" "$baseline" |
    grep -v ' MINLSH_EXPERIMENTAL$' | sort > "$tmp/abi.txt"
if [ ! -s "$tmp/abi.txt" ]; then
    ko "abi/libminlsh.abi.xml: no versioned symbols found"
elif cmp -s "$tmp/map.txt" "$tmp/abi.txt"; then
    ok "abi/libminlsh.abi.xml: $(wc -l < "$tmp/abi.txt") symbols, the map's, in the map's nodes"
else
    ko "abi/libminlsh.abi.xml: symbols differ from lib/minlsh.map (< map, > baseline; make abi-baseline):"
    diff "$tmp/map.txt" "$tmp/abi.txt" | grep '^[<>]' | head -n 10 | sed 's/^/  /'
fi

if grep -q '^Version: @VERSION@$' "$pcin"; then ok "minlsh.pc.in: Version: @VERSION@"
else ko "minlsh.pc.in: the Version line is '$(grep '^Version:' "$pcin")', not taken from the build (@VERSION@)"; fi
if [ -n "$pc" ]; then
    pcv=$(sed -n 's/^Version: *//p' "$pc")
    if [ "$pcv" = "$version" ]; then ok "$pc: version $pcv"
    else ko "$pc: version is '$pcv', the header's is $version"; fi
fi

if [ "$fail" -eq 0 ]; then
    echo "release-check: $version is consistent everywhere"
else
    echo "release-check: $fail mismatch(es) for $version"
    exit 1
fi
