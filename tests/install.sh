#!/bin/sh
# Installs into a temporary prefix, builds every example through pkg-config
# against the installed copy (shared, then fully static), runs them on small
# inputs, builds one example again through the installed CMake package
# (find_package(minlsh), shared and static), then uninstalls and checks
# nothing is left behind.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tl_begin install
: "${BUILD:=build}" "${CC:=cc}" "${TEST_LDFLAGS:=}"
prefix=$tmp/prefix

if make -s install BUILD="$BUILD" CC="$CC" PREFIX="$prefix" >"$tmp/install.log" 2>&1; then ok make_install
else ko make_install "$(tail -n 5 "$tmp/install.log")"; fi

for f in include/minlsh.h lib/libminlsh.a lib/libminlsh.so lib/libminlsh.so.0 lib/pkgconfig/minlsh.pc \
         lib/cmake/minlsh/minlshConfig.cmake lib/cmake/minlsh/minlshConfigVersion.cmake; do
    [ -e "$prefix/$f" ] || ko "installed_$f" "missing $prefix/$f"
done

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
if [ "$(pkg-config --modversion minlsh 2>&1)" = "$(sed -n 's/^#define MINLSH_VERSION_STRING "\(.*\)"/\1/p' include/minlsh.h)" ]
then ok pkgconfig_version; else ko pkgconfig_version "$(pkg-config --modversion minlsh 2>&1)"; fi

# Test inputs: near-duplicate and distinct texts.
mkdir -p "$tmp/docs/sub"
text=$(awk 'BEGIN { srand(7); n = split("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu", w, " ");
                       for (i = 0; i < 400; i++) printf "%s ", w[int(rand() * n) + 1] }')
printf '%s\n' "$text" > "$tmp/docs/a.txt"
printf '%s extra words at the end\n' "$text" > "$tmp/docs/sub/b.txt"
printf 'something entirely different, about %s\n' "nothing in particular at all and more" > "$tmp/docs/c.txt"

ran=0
for src in examples/*.c; do
    name=$(basename "$src" .c)
    if $CC -std=c11 -Wall -Wextra -Werror "$src" -o "$tmp/$name" $(pkg-config --cflags --libs minlsh) $TEST_LDFLAGS 2>"$tmp/$name.err"
    then ok "build_shared_$name"; else ko "build_shared_$name" "$(head -n 5 "$tmp/$name.err")"; continue; fi
    if [ -z "${MINLSH_SANITIZE:-}" ]; then
        if $CC -std=c11 -Wall -Wextra -Werror -static "$src" -o "$tmp/$name-static" $(pkg-config --static --cflags --libs minlsh) 2>"$tmp/$name-static.err"
        then ok "build_static_$name"; else ko "build_static_$name" "$(head -n 5 "$tmp/$name-static.err")"; fi
    fi
    ran=$((ran + 1))
done
[ $ran -ge 3 ] && ok examples_found || ko examples_found "only $ran examples built"

export LD_LIBRARY_PATH="$prefix/lib"
# similarity: a file with itself is 1; the near-duplicate is high but below 1.
if out=$("$tmp/similarity" "$tmp/docs/a.txt" "$tmp/docs/a.txt" 2>&1) && echo "$out" | grep -q 'exact: *1\.0000'
then ok run_similarity_self; else ko run_similarity_self "$out"; fi
if out=$("$tmp/similarity" "$tmp/docs/a.txt" "$tmp/docs/sub/b.txt" 2>&1) && echo "$out" | grep -q 'exact: *0\.9'
then ok run_similarity_near; else ko run_similarity_near "$out"; fi
if "$tmp/similarity" "$tmp/docs/a.txt" "$tmp/no-such-file" >/dev/null 2>&1; then ko run_similarity_missing "exit 0 on a missing file"
else ok run_similarity_missing; fi

# quickstart: the README's example; two 14-word sentences sharing 9 of their 11
# distinct word 5-shingles (exact Jaccard 0.82): the estimate is near that.
if out=$("$tmp/quickstart" 2>&1) && echo "$out" | grep -q 'estimated Jaccard: 0\.[78]'
then ok run_quickstart; else ko run_quickstart "$out"; fi

# dedup_dir: a.txt and sub/b.txt are grouped, c.txt is not.
if out=$("$tmp/dedup_dir" "$tmp/docs" 2>&1) && echo "$out" | grep -q 'a.txt' && echo "$out" | grep -q 'b.txt' && ! echo "$out" | grep -q 'c.txt'
then ok run_dedup_dir; else ko run_dedup_dir "$out"; fi
if [ -z "${MINLSH_SANITIZE:-}" ] && out=$("$tmp/dedup_dir-static" "$tmp/docs" 2>&1) && echo "$out" | grep -q 'b.txt'
then ok run_dedup_dir_static; elif [ -n "${MINLSH_SANITIZE:-}" ]; then :; else ko run_dedup_dir_static "$out"; fi

# crawler: first run learns the pages, a second run (new process, index
# reloaded from disk) finds all of them already known.
rm -f "$tmp/crawl.idx"
if out=$("$tmp/crawler" "$tmp/crawl.idx" "$tmp/docs/a.txt" "$tmp/docs/c.txt" "$tmp/docs/sub/b.txt" 2>&1) &&
   [ "$(echo "$out" | grep -c '^new')" -eq 2 ] && [ "$(echo "$out" | grep -c '^dup')" -eq 1 ] && [ -f "$tmp/crawl.idx" ]
then ok run_crawler_first; else ko run_crawler_first "$out"; fi
if out=$("$tmp/crawler" "$tmp/crawl.idx" "$tmp/docs/sub/b.txt" "$tmp/docs/c.txt" 2>&1) &&
   [ "$(echo "$out" | grep -c '^dup')" -eq 2 ]
then ok run_crawler_reload; else ko run_crawler_reload "$out"; fi
printf 'garbage' > "$tmp/bad.idx"
if "$tmp/crawler" "$tmp/bad.idx" "$tmp/docs/a.txt" >"$tmp/bad.out" 2>&1; then ko run_crawler_corrupt "exit 0 on a corrupt index"
elif grep -qi 'not a minlsh file\|corrupt' "$tmp/bad.out"; then ok run_crawler_corrupt
else ko run_crawler_corrupt "$(cat "$tmp/bad.out")"; fi

# crawler_store: the first run keeps a.txt and c.txt and finds b.txt a
# near-duplicate by exact Jaccard; a second process finds c.txt seen and
# b.txt a near-duplicate again, from the store on disk.
rm -f "$tmp/crawl.store"*
if out=$("$tmp/crawler_store" "$tmp/crawl.store" "$tmp/docs/a.txt" "$tmp/docs/c.txt" "$tmp/docs/sub/b.txt" 2>&1) &&
   [ "$(echo "$out" | grep -c '^new')" -eq 2 ] && echo "$out" | grep -q "^dup $tmp/docs/sub/b.txt of $tmp/docs/a.txt (0\.9[0-9]*)$"
then ok run_crawler_store_first; else ko run_crawler_store_first "$out"; fi
if out=$("$tmp/crawler_store" "$tmp/crawl.store" "$tmp/docs/sub/b.txt" "$tmp/docs/c.txt" 2>&1) &&
   echo "$out" | grep -q '^dup ' && echo "$out" | grep -q "^seen $tmp/docs/c.txt"
then ok run_crawler_store_again; else ko run_crawler_store_again "$out"; fi

# find_package(minlsh) on the installed copy: examples/CMakeLists.txt builds
# quickstart against minlsh::minlsh, then against minlsh::minlsh_static.
if command -v cmake >/dev/null 2>&1; then
    for kind in shared static; do
        [ $kind = static ] && [ -n "${MINLSH_SANITIZE:-}" ] && continue
        b=$tmp/cmake-$kind
        st=OFF; [ $kind = static ] && st=ON
        if cmake -S examples -B "$b" -DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$prefix" \
               -DMINLSH_EXAMPLES_STATIC=$st -DCMAKE_EXE_LINKER_FLAGS="$TEST_LDFLAGS" >"$b.log" 2>&1 &&
           cmake --build "$b" --target quickstart >>"$b.log" 2>&1 &&
           out=$("$b/quickstart" 2>&1) && echo "$out" | grep -q 'estimated Jaccard: 0\.[78]'
        then ok "cmake_find_package_$kind"; else ko "cmake_find_package_$kind" "$(tail -n 5 "$b.log")"; fi
    done
    # A request for a newer minor or another major is refused.
    mkdir -p "$tmp/cmake-version"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(v LANGUAGES C)\nfind_package(minlsh %s REQUIRED)\n' \
        "$(sed -n 's/^#define MINLSH_VERSION_MAJOR \([0-9]*\).*/\1/p' include/minlsh.h).999" \
        > "$tmp/cmake-version/CMakeLists.txt"
    if cmake -S "$tmp/cmake-version" -B "$tmp/cmake-version/b" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1
    then ko cmake_version_refuses_newer "find_package accepted a newer minor version"
    else ok cmake_version_refuses_newer; fi
else
    ko cmake_find_package "cmake is not installed (sh scripts/deps.sh test)"
fi

# The installed command and its man page.
if out=$("$prefix/bin/minlsh" --version 2>&1) && echo "$out" | grep -q "^minlsh $(sed -n 's/^#define MINLSH_VERSION_STRING "\(.*\)"/\1/p' include/minlsh.h)$"
then ok installed_command_version; else ko installed_command_version "$out"; fi
if out=$("$prefix/bin/minlsh" dedup --quiet --format jsonl "$tmp/docs" 2>&1) &&
   echo "$out" | grep -q '"size": 2' && echo "$out" | grep -q 'b.txt'
then ok installed_command_dedup; else ko installed_command_dedup "$out"; fi
if [ -s "$prefix/share/man/man1/minlsh.1" ]; then ok installed_man_page
else ko installed_man_page "no $prefix/share/man/man1/minlsh.1"; fi

# The Go sources, used offline as bindings/go/README.md says: a replace
# directive to the installed module (no network, no GOPATH download).
if [ -s "$prefix/share/minlsh/go/go.mod" ] && [ -s "$prefix/share/minlsh/go/minlsh.go" ] &&
   [ -s "$prefix/share/minlsh/go/README.md" ] && ! ls "$prefix"/share/minlsh/go/*_test.go >/dev/null 2>&1
then ok installed_go_sources; else ko installed_go_sources "$(ls "$prefix/share/minlsh/go" 2>&1 | head -n 5)"; fi
if [ -n "${MINLSH_SANITIZE:-}" ] || ! command -v go >/dev/null 2>&1; then
    ok go_module_recipe_skipped
else
    mkdir -p "$tmp/gouser"
    printf 'module example.com/gouser\n\ngo 1.19\n\nrequire minlsh.example/minlsh v0.0.0\n\nreplace minlsh.example/minlsh => %s\n' \
        "$prefix/share/minlsh/go" > "$tmp/gouser/go.mod"
    printf 'package main\n\nimport (\n\t"fmt"\n\n\t"minlsh.example/minlsh"\n)\n\nfunc main() { fmt.Println("minlsh", minlsh.Version()) }\n' \
        > "$tmp/gouser/main.go"
    if out=$(cd "$tmp/gouser" && env GOPROXY=off GOFLAGS=-mod=mod GOSUMDB=off GOTOOLCHAIN=local \
             GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" CGO_ENABLED=1 go run . 2>&1) &&
       [ "$out" = "minlsh $(sed -n 's/^#define MINLSH_VERSION_STRING "\(.*\)"/\1/p' include/minlsh.h)" ]
    then ok go_module_recipe; else ko go_module_recipe "$(echo "$out" | tail -n 5)"; fi
    chmod -R u+w "$tmp/gopath" 2>/dev/null
fi

if make -s uninstall BUILD="$BUILD" PREFIX="$prefix" >"$tmp/uninstall.log" 2>&1 &&
   [ -z "$(find "$prefix" -type f -o -type l)" ]
then ok make_uninstall; else ko make_uninstall "$(find "$prefix" -type f -o -type l | head -n 5)"; fi

finish
