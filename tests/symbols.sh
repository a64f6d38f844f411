#!/bin/sh
# ABI hygiene: the shared library exports exactly the header's functions, all
# in the version script; the static archive defines no global symbol without
# the minlsh prefix and neither has the test-only hooks; the version agrees in the header, the map, the CHANGELOG,
# the Makefile's file names and at run time; the command and the bindings
# include nothing under lib/; the header compiles as C99 (pedantic) and C++
# and can be included twice.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin symbols
: "${BUILD:=build}" "${CC:=cc}"

sh scripts/gen-map.sh all > "$tmp/header.txt"
sh scripts/gen-map.sh stable > "$tmp/header-stable.txt"
sh scripts/gen-map.sh experimental > "$tmp/header-experimental.txt"
sed -n 's/^ *\(minlsh_[a-z0-9_]*\);.*/\1/p' lib/minlsh.map | sort > "$tmp/map.txt"
sed -n '/^MINLSH_EXPERIMENTAL {/,/^}/s/^ *\(minlsh_[a-z0-9_]*\);.*/\1/p' lib/minlsh.map \
    | sort > "$tmp/map-experimental.txt"
nm -D --defined-only "$BUILD/libminlsh.so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' \
    | sed 's/@.*//' | sort > "$tmp/exported.txt"

if [ "$(wc -l < "$tmp/header.txt")" -gt 50 ]; then ok header_lists_functions
else ko header_lists_functions "only $(wc -l < "$tmp/header.txt") functions parsed"; fi

if cmp -s "$tmp/header.txt" "$tmp/map.txt"; then ok map_matches_header
else ko map_matches_header "$(diff "$tmp/header.txt" "$tmp/map.txt" | head -n 10 | tr '\n' ' ')"; fi

if cmp -s "$tmp/header-experimental.txt" "$tmp/map-experimental.txt"; then ok map_experimental_node
else ko map_experimental_node "$(diff "$tmp/header-experimental.txt" "$tmp/map-experimental.txt" | head -n 10 | tr '\n' ' ')"; fi

bad=$(nm -D --defined-only "$BUILD/libminlsh.so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | while read -r v; do
    f=${v%%@*}
    if grep -qx "$f" "$tmp/header-experimental.txt"; then
        case $v in *@@MINLSH_EXPERIMENTAL) ;; *) echo "$v" ;; esac
    else
        case $v in *@@MINLSH_EXPERIMENTAL) echo "$v" ;; esac
    fi
done | head -n 5)
if [ -z "$bad" ]; then ok so_experimental_versioned; else ko so_experimental_versioned "$bad"; fi

if cmp -s "$tmp/header.txt" "$tmp/exported.txt"; then ok so_exports_exactly_header
else ko so_exports_exactly_header "$(diff "$tmp/header.txt" "$tmp/exported.txt" | head -n 10 | tr '\n' ' ')"; fi

bad=$(nm -D --defined-only "$BUILD/libminlsh.so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -v '@@\?MINLSH_' | head -n 5)
if [ -z "$bad" ]; then ok so_symbols_versioned; else ko so_symbols_versioned "$bad"; fi

# (Sanitizer builds add their own __asan/__odr_asan/__ubsan symbols.)
bad=$(nm -g --defined-only "$BUILD/libminlsh.a" 2>/dev/null | awk 'NF == 3 {print $3}' \
      | grep -v '^minlsh_' | grep -v '^__\(odr_\)\?asan\|^__ubsan\|^__sancov' | head -n 5)
if [ -z "$bad" ]; then ok static_defines_only_prefixed
else ko static_defines_only_prefixed "$bad"; fi

# The test-only hooks (#ifdef MINLSH_TESTING) are in neither release
# library; when the testing archive was built, it has them all.
hooks="minlsh__lsh_index_memory minlsh__lsh_kernels_for_level minlsh__lsh_kernels_usable
minlsh__minhash_kernels minlsh__minhash_kernel_for_level minlsh__minhash_kernel_usable
minlsh__minhash_reduce minlsh__minhash_apply_wide minlsh__minhash_apply_limb
minlsh__minhash_has_int128 minlsh__siphash_many_for_level minlsh__siphash_many_usable
minlsh__simd_best_level"
nm --defined-only "$BUILD/libminlsh.a" 2>/dev/null | awk 'NF == 3 {print $3}' > "$tmp/release.txt"
nm --defined-only "$BUILD/libminlsh.so" 2>/dev/null | awk 'NF == 3 {print $3}' >> "$tmp/release.txt"
bad=$(for h in $hooks; do grep -qx "$h" "$tmp/release.txt" && echo "$h"; done)
if [ -z "$bad" ]; then ok release_has_no_test_hooks
else ko release_has_no_test_hooks "$(echo $bad)"; fi
if [ -f "$BUILD/testing/libminlsh.a" ]; then
    nm --defined-only "$BUILD/testing/libminlsh.a" | awk 'NF == 3 {print $3}' > "$tmp/testing.txt"
    missing=$(for h in $hooks; do grep -qx "$h" "$tmp/testing.txt" || echo "$h"; done)
    if [ -z "$missing" ]; then ok testing_archive_has_hooks
    else ko testing_archive_has_hooks "$(echo $missing)"; fi
fi

soname=$(readelf -d "$BUILD/libminlsh.so" | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
major=$(sed -n 's/^#define MINLSH_VERSION_MAJOR \([0-9]*\).*/\1/p' include/minlsh.h)
minor=$(sed -n 's/^#define MINLSH_VERSION_MINOR \([0-9]*\).*/\1/p' include/minlsh.h)
patch=$(sed -n 's/^#define MINLSH_VERSION_PATCH \([0-9]*\).*/\1/p' include/minlsh.h)
hstring=$(sed -n 's/^#define MINLSH_VERSION_STRING "\(.*\)"/\1/p' include/minlsh.h)
if [ "$soname" = "libminlsh.so.$major" ]; then ok soname; else ko soname "got '$soname'"; fi

if [ "$hstring" = "$major.$minor.$patch" ]; then ok header_version_string
else ko header_version_string "'$hstring' vs $major.$minor.$patch"; fi

# The newest node is the header's version, or the next release's while it
# is prepared: the one before it is then the header's, and the CHANGELOG
# has an [Unreleased] section (make release-check wants them equal).
node=$(grep -o '^MINLSH_[0-9]*\.[0-9]*' lib/minlsh.map | tail -n 1)
prev=$(grep -o '^MINLSH_[0-9]*\.[0-9]*' lib/minlsh.map | tail -n 2 | head -n 1)
if [ "$node" = "MINLSH_$major.$minor" ]; then ok map_newest_node_is_version
elif [ "$prev" = "MINLSH_$major.$minor" ] && grep -q '^## \[Unreleased\]' CHANGELOG.md; then
    ok map_newest_node_is_version
else ko map_newest_node_is_version "newest node '$node', header $major.$minor"; fi

# The first section that names a version: "## [Unreleased] (X.Y.Z)" while
# it is being prepared, "## [X.Y.Z] - date" once released (an empty
# "## [Unreleased]" above it names none). make release-check is stricter.
clv=$(grep -o '^## \[[^]]*\]\( ([0-9.]*)\)\?' CHANGELOG.md | grep -o '[0-9][0-9.]*[0-9]' | head -n 1)
if [ "$clv" = "$hstring" ]; then ok changelog_version
else ko changelog_version "CHANGELOG newest versioned section names '$clv', header $hstring"; fi

if [ -f "$BUILD/libminlsh.so.$hstring" ]; then ok shared_file_name
else ko shared_file_name "no $BUILD/libminlsh.so.$hstring"; fi

cat > "$tmp/ver.c" <<'C'
#include <minlsh.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    if (minlsh_version_number() != MINLSH_VERSION_NUMBER) return 1;
    if (strcmp(minlsh_version_string(), MINLSH_VERSION_STRING) != 0) return 2;
    printf("%s\n", minlsh_version_string());
    return 0;
}
C
if $CC -Iinclude "$tmp/ver.c" -o "$tmp/ver" -L"$BUILD" -lminlsh ${TEST_LDFLAGS:-} 2>"$tmp/ver.err" &&
   [ "$(LD_LIBRARY_PATH=$BUILD "$tmp/ver")" = "$hstring" ]; then ok runtime_version
else ko runtime_version "$(head -n 3 "$tmp/ver.err")"; fi

# The command and the bindings use the library through include/minlsh.h
# alone: no #include may reach into lib/, by a relative path
# ("../lib/common/pool.h") or by a layer's name ("common/pool.h", as with
# -Ilib).
bad=$(grep -rnE '#[[:space:]]*include[[:space:]]*["<]' programs bindings \
          --include='*.c' --include='*.h' --include='*.go' --include='*.pyx' |
      while IFS= read -r hit; do
          file=${hit%%:*}
          target=$(printf '%s\n' "$hit" | sed -n 's/.*#[[:space:]]*include[[:space:]]*["<]\([^">]*\)[">].*/\1/p')
          resolved=$(realpath -m "$(dirname "$file")/$target")
          case $resolved/ in "$(pwd)"/lib/*) echo "$hit"; continue ;; esac
          case $target in */*) [ -e "lib/$target" ] && echo "$hit" ;; esac
      done | head -n 5)
if [ -z "$bad" ]; then ok front_ends_include_only_public_header
else ko front_ends_include_only_public_header "$bad"; fi

if $CC -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -c tests/header/c99.c -o "$tmp/c99.o" 2>"$tmp/c99.err"
then ok header_c99_pedantic; else ko header_c99_pedantic "$(head -n 5 "$tmp/c99.err")"; fi

# The experimental part is declared only on request.
printf '#include <minlsh.h>\nvoid *probe(void);\nvoid *probe(void) { return (void *)&minlsh_index_query_limited; }\n' > "$tmp/exp.c"
if $CC -std=c99 -Werror -Iinclude -c "$tmp/exp.c" -o "$tmp/exp.o" 2>/dev/null; then
    ko experimental_needs_macro "minlsh_index_query_limited is declared without MINLSH_EXPERIMENTAL_API"
elif $CC -std=c99 -Werror -DMINLSH_EXPERIMENTAL_API -Iinclude -c "$tmp/exp.c" -o "$tmp/exp.o" 2>"$tmp/exp.err"; then
    ok experimental_needs_macro
else ko experimental_needs_macro "$(head -n 3 "$tmp/exp.err")"; fi

if command -v c++ >/dev/null 2>&1; then
    if c++ -std=c++11 -pedantic -Wall -Wextra -Werror -Iinclude -c tests/header/cxx.cpp -o "$tmp/cxx.o" 2>"$tmp/cxx.err"
    then ok header_cxx; else ko header_cxx "$(head -n 5 "$tmp/cxx.err")"; fi
else
    ko header_cxx "no C++ compiler (c++) found"
fi

finish
