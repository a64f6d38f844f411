#!/bin/sh
# The Unicode tables against two independent references, for every code
# point: Python's unicodedata (tests/unicode_tables.py: combining class,
# categories, digits, White_Space, scripts by name, NFKC and folding of
# each code point alone) and the Unicode conformance file
# NormalizationTest.txt (NFKC of 19074 strings: ordering and composition
# across code points), random strings of interacting code points against
# Python's NFKC, and that the generator reproduces the committed
# tables. Needs /usr/bin/python3 and Debian's unicode-data
# (sh scripts/deps.sh test installs both).
set -u
cd "$(dirname "$0")/.."
: "${BUILD:=build}"
ucd=/usr/share/unicode
bin=$BUILD/tests/test_unicode
tmp=${MINLSH_TEST_TMP:-/tmp}/unicode_tables.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
if [ ! -f "$ucd/DerivedAge.txt" ] || [ ! -x /usr/bin/python3 ] || [ ! -x "$bin" ]; then
    echo "FAIL unicode_tables: needs $ucd (unicode-data), /usr/bin/python3 and $bin"
    echo "unicode_tables: 0 passed, 1 failed"
    exit 1
fi
"$bin" --dump | /usr/bin/python3 tests/unicode_tables.py "$ucd/DerivedAge.txt" > "$tmp/py.txt"
cat "$tmp/py.txt" | grep -v '^unicode_tables:'
p=$(sed -n 's/^unicode_tables: \([0-9]*\) passed, \([0-9]*\) failed/\1/p' "$tmp/py.txt")
f=$(sed -n 's/^unicode_tables: \([0-9]*\) passed, \([0-9]*\) failed/\2/p' "$tmp/py.txt")
pass=$((pass + ${p:-0}))
fail=$((fail + ${f:-1}))

# NormalizationTest.txt: c4 == NFKC(c1) (and of c2..c5, which are equivalent).
bzcat "$ucd/NormalizationTest.txt.bz2" | grep -v '^[#@]' > "$tmp/nt.txt"
n=$(wc -l < "$tmp/nt.txt")
for col in 1 2 3 5; do
    cut -d';' -f"$col" "$tmp/nt.txt" | "$bin" --nfkc > "$tmp/got.txt"
    cut -d';' -f4 "$tmp/nt.txt" > "$tmp/want.txt"
    if [ "$n" -gt 19000 ] && cmp -s "$tmp/got.txt" "$tmp/want.txt"; then
        echo "ok   normalization_test_c$col ($n lines)"; pass=$((pass + 1))
    else
        echo "FAIL normalization_test_c$col: $(paste -d'|' "$tmp/want.txt" "$tmp/got.txt" |
            awk -F'|' '$1 != $2' | head -n 3 | tr '\n' ' ')"
        fail=$((fail + 1))
    fi
done
# Random strings of interacting code points against Python's NFKC.
/usr/bin/python3 tests/unicode_random.py | "$bin" --nfkc > "$tmp/rnd.txt"
if /usr/bin/python3 tests/unicode_random.py --check "$tmp/rnd.txt"; then pass=$((pass + 1))
else fail=$((fail + 1)); fi

# The committed tables are what the committed generator makes of this data.
if /usr/bin/python3 scripts/gen_unicode.py "$ucd" > "$tmp/gen.c" &&
    cmp -s "$tmp/gen.c" lib/shingle/unicode_data.c; then
    echo "ok   generator_reproduces_tables"; pass=$((pass + 1))
else
    echo "FAIL generator_reproduces_tables: scripts/gen_unicode.py gives another unicode_data.c"
    fail=$((fail + 1))
fi
echo "unicode_tables: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
