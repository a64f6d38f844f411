#!/usr/bin/python3
"""Checks the Unicode tables (lib/shingle/unicode_data.c) against Python's
unicodedata, for every code point, reading the dump of "test_unicode --dump"
on standard input (one line per scalar value: cp, ccc, bits, digit, N= the
NFKC of the code point alone, F= its full case folding).

Python's unicodedata may be an older Unicode version than the tables
(Debian 12: 14.0.0 against 15.0.0), so code points are compared only if
they were assigned in that older version (DerivedAge.txt, argument 1), and
mappings only where every code point of both sides was. Prints the
tests/run.sh summary line."""
import re
import sys
import unicodedata

DEL, WS, SPLIT, MARK, DIGIT = 1, 2, 4, 8, 16
# White_Space (PropList.txt): Python has no such property; str.isspace()
# adds U+001C..U+001F (bidi class B/S) to it.
WHITE = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029,
         0x202F, 0x205F, 0x3000} | set(range(0x2000, 0x200B))
# Names that say the script (Python has no Script property): a code point
# whose name starts with one of these is split (if not a mark); every split
# one has a name starting with one of SPLIT_NAMES or is in Han_EXTRA.
SPLIT_NAMES = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA ",
               "KATAKANA ", "THAI ", "LAO ", "KHMER ", "MYANMAR ", "CJK RADICAL ",
               "KANGXI RADICAL ", "IDEOGRAPHIC ", "HALFWIDTH KATAKANA ", "SQUARED KATAKANA ",
               "CIRCLED KATAKANA ", "VERTICAL IDEOGRAPHIC ", "HANGZHOU NUMERAL ",
               "CIRCLED IDEOGRAPH ", "PARENTHESIZED IDEOGRAPH ", "SQUARE HIRAGANA ",
               "SQUARED CJK ", "SQUARE ", "KATAKANA-HIRAGANA ", "CJK STROKE ",
               "VERTICAL KANA ", "DIGRAM FOR ", "SMALL KATAKANA", "HENTAIGANA ", "OLD CHINESE ")
SURE_SPLIT = ("CJK UNIFIED IDEOGRAPH-", "HIRAGANA LETTER ", "KATAKANA LETTER ",
              "THAI CHARACTER ", "LAO LETTER ", "KHMER LETTER ", "MYANMAR LETTER ")


def main():
    ver = unicodedata.unidata_version
    mine = tuple(int(x) for x in ver.split("."))[:2]
    old = set()
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            cps, age = [x.strip() for x in line.split(";")]
            if tuple(int(x) for x in age.split(".")) > mine:
                continue
            a = cps.split("..")
            old.update(range(int(a[0], 16), int(a[-1], 16) + 1))
    compared = 0
    fails = {}

    def bad(what, cp, detail):
        fails.setdefault(what, []).append("%04X %s" % (cp, detail))

    lines = 0
    for line in sys.stdin:
        lines += 1
        parts = line.split()
        cp = int(parts[0], 16)
        ccc, bits, digit = int(parts[1]), int(parts[2]), int(parts[3])
        n = [int(x, 16) for x in parts[4][2:].split(",") if x]
        fo = [int(x, 16) for x in parts[5][2:].split(",") if x]
        if cp not in old:
            continue
        compared += 1
        c = chr(cp)
        cat = unicodedata.category(c)
        if ccc != unicodedata.combining(c):
            bad("ccc", cp, "%d != %d" % (ccc, unicodedata.combining(c)))
        if bool(bits & DEL) != (cat[0] in "PS"):
            bad("punct", cp, cat)
        if bool(bits & MARK) != (cat[0] == "M"):
            bad("mark", cp, cat)
        if bool(bits & DIGIT) != (cat == "Nd") or (cat == "Nd" and digit != unicodedata.decimal(c)):
            bad("digit", cp, "%s %d" % (cat, digit))
        if bool(bits & WS) != (cp in WHITE) or (c.isspace() and cp not in WHITE | {0x1C, 0x1D, 0x1E, 0x1F}):
            bad("space", cp, str(bits))
        name = unicodedata.name(c, "")
        if bits & SPLIT:
            if cat[0] == "M" or not (name.startswith(SPLIT_NAMES) or not name):
                bad("split", cp, name)
        elif name.startswith(SURE_SPLIT) and cat[0] != "M":
            bad("split", cp, name)
        want_n = [ord(x) for x in unicodedata.normalize("NFKC", c)]
        if all(x in old for x in want_n + n) and n != want_n:
            bad("nfkc", cp, "%s != %s" % (n, want_n))
        want_f = [ord(x) for x in c.casefold()]
        if all(x in old for x in want_f + fo) and fo != want_f:
            bad("casefold", cp, "%s != %s" % (fo, want_f))
    passed = failed = 0
    for what in ("ccc", "punct", "mark", "digit", "space", "split", "nfkc", "casefold"):
        if what in fails:
            failed += 1
            print("FAIL %s: %d code points, first: %s" % (what, len(fails[what]), fails[what][:5]))
        else:
            passed += 1
            print("ok   %s" % what)
    if lines != 0x110000 - 0x800 or compared < 140000:
        failed += 1
        print("FAIL coverage: %d lines, %d compared" % (lines, compared))
    else:
        passed += 1
        print("ok   coverage: %d code points of Unicode %s compared" % (compared, ver))
    print("unicode_tables: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
