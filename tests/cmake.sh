#!/bin/sh
# The CMake build (CMakeLists.txt) gives the same library as the Makefile:
# configured, built (-Werror) and installed into a temporary prefix; the
# shared library has the soname libminlsh.so.<major> and exports exactly the
# header's functions, all versioned; the static one defines nothing without
# the prefix and no test-only hook; minlsh.pc and the command say the
# header's version; an example builds and runs through find_package(minlsh)
# against that prefix. Skipped in instrumented builds (sanitizers, coverage:
# this build has its own flags).
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin cmake
: "${CC:=cc}"
if [ -n "${MINLSH_SANITIZE:-}" ]; then
    echo "cmake: skipped in an instrumented build"
    finish
fi
if ! command -v cmake >/dev/null 2>&1; then
    ko cmake_installed "cmake is not installed (sh scripts/deps.sh test)"
    finish
fi
prefix=$tmp/prefix
version=$(sed -n 's/^#define MINLSH_VERSION_STRING "\(.*\)"/\1/p' include/minlsh.h)
major=$(sed -n 's/^#define MINLSH_VERSION_MAJOR \([0-9]*\).*/\1/p' include/minlsh.h)

if cmake -S . -B "$tmp/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release \
       -DMINLSH_WARNINGS_AS_ERRORS=ON -DCMAKE_INSTALL_PREFIX="$prefix" \
       -DCMAKE_INSTALL_LIBDIR=lib >"$tmp/configure.log" 2>&1
then ok cmake_configure; else ko cmake_configure "$(tail -n 5 "$tmp/configure.log")"; fi
if cmake --build "$tmp/build" -j 2 >"$tmp/build.log" 2>&1
then ok cmake_build; else ko cmake_build "$(grep -m 5 -i 'error' "$tmp/build.log")"; fi
if cmake --install "$tmp/build" >"$tmp/install.log" 2>&1
then ok cmake_install; else ko cmake_install "$(tail -n 5 "$tmp/install.log")"; fi

missing=""
for f in include/minlsh.h lib/libminlsh.a "lib/libminlsh.so.$version" "lib/libminlsh.so.$major" \
         lib/libminlsh.so lib/pkgconfig/minlsh.pc lib/cmake/minlsh/minlshConfig.cmake \
         lib/cmake/minlsh/minlshConfigVersion.cmake bin/minlsh share/man/man1/minlsh.1; do
    [ -e "$prefix/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then ok installed_files; else ko installed_files "missing:$missing"; fi

so=$prefix/lib/libminlsh.so.$version
soname=$(readelf -d "$so" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
if [ "$soname" = "libminlsh.so.$major" ]; then ok soname; else ko soname "got '$soname'"; fi

sh scripts/gen-map.sh all > "$tmp/header.txt"
nm -D --defined-only "$so" 2>/dev/null | awk '$2 ~ /^[TDBRVW]$/ {print $3}' > "$tmp/dyn.txt"
sed 's/@.*//' "$tmp/dyn.txt" | sort > "$tmp/exported.txt"
if [ -s "$tmp/header.txt" ] && cmp -s "$tmp/header.txt" "$tmp/exported.txt"; then ok so_exports_exactly_header
else ko so_exports_exactly_header "$(diff "$tmp/header.txt" "$tmp/exported.txt" | head -n 10 | tr '\n' ' ')"; fi
bad=$(grep -v '@@\?MINLSH_' "$tmp/dyn.txt" | head -n 5)
if [ -s "$tmp/dyn.txt" ] && [ -z "$bad" ]; then ok so_symbols_versioned; else ko so_symbols_versioned "$bad"; fi

bad=$(nm -g --defined-only "$prefix/lib/libminlsh.a" 2>/dev/null | awk 'NF == 3 {print $3}' \
      | grep -v '^minlsh_' | head -n 5)
if [ -z "$bad" ]; then ok static_defines_only_prefixed; else ko static_defines_only_prefixed "$bad"; fi
bad=$(nm --defined-only "$prefix/lib/libminlsh.a" 2>/dev/null | awk 'NF == 3 {print $3}' \
      | grep -x 'minlsh__lsh_index_memory\|minlsh__minhash_kernels\|minlsh__siphash_many_kernels\|minlsh__minhash_apply_limb')
if [ -z "$bad" ]; then ok static_has_no_test_hooks; else ko static_has_no_test_hooks "$bad"; fi

if [ "$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion minlsh 2>&1)" = "$version" ]
then ok pkgconfig_version; else ko pkgconfig_version "$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion minlsh 2>&1)"; fi

if out=$("$prefix/bin/minlsh" --version 2>&1) && [ "$out" = "minlsh $version" ]
then ok command_version; else ko command_version "$out"; fi

b=$tmp/example
if cmake -S examples -B "$b" -DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$prefix" >"$b.log" 2>&1 &&
   cmake --build "$b" --target quickstart >>"$b.log" 2>&1 &&
   out=$("$b/quickstart" 2>&1) && echo "$out" | grep -q 'estimated Jaccard: 0\.[78]'
then ok find_package_example; else ko find_package_example "$(tail -n 5 "$b.log")"; fi
if readelf -d "$b/quickstart" 2>/dev/null | grep -q "NEEDED.*libminlsh.so.$major"
then ok find_package_links_shared; else ko find_package_links_shared "quickstart does not need libminlsh.so.$major"; fi

finish
