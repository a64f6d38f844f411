#!/usr/bin/python3
"""Random strings of code points chosen to interact under NFKC (ASCII and
Latin letters, combining marks of several classes, Hangul jamo and
syllables, kana and voicing marks, compatibility characters, Indic vowel
signs that compose), written one a line in hex for "test_unicode --nfkc",
or, with --check GOT, compared with Python's unicodedata.normalize("NFKC").
Only code points assigned in Python's Unicode version are drawn."""
import random
import sys
import unicodedata

POOL = ([0x41, 0x61, 0x65, 0x45, 0x69, 0x6F, 0x75, 0x73, 0x20, 0x2E, 0xE9, 0xC5, 0xDF, 0x1E9B,
         0x212B, 0x2126, 0xFB01, 0xFF21, 0x2460, 0x3300, 0x1F1, 0x2F8, 0x3D3, 0x390, 0x3B1,
         0x3C9, 0x1F00, 0x1F80, 0x300, 0x301, 0x302, 0x303, 0x308, 0x30A, 0x323, 0x327, 0x328,
         0x31B, 0x345, 0x344, 0x340, 0x1100, 0x1161, 0x1175, 0x11A8, 0x11C2, 0xAC00, 0xAC01,
         0xD7A3, 0x3131, 0x304B, 0x3099, 0x309A, 0x30AB, 0x30CF, 0xFF76, 0xFF9E, 0x0B47,
         0x0B3E, 0x0B57, 0x0DD9, 0x0DCF, 0x0DCA, 0x1025, 0x102E, 0x0627, 0x0653, 0x0654,
         0x0655, 0x05D0, 0x05B7, 0x05BC, 0xFB2A, 0x0915, 0x093C, 0xFDFA, 0x1D15E, 0x1D165,
         0x1D16E, 0x2ADC, 0x0338, 0x003D, 0x2260, 0x0F71, 0x0F72, 0x0F80, 0x0F73, 0x0E33,
         0x0E4D, 0x0E32])


def main():
    rnd = random.Random(12)
    strings = []
    for _ in range(20000):
        s = [rnd.choice(POOL) for _ in range(rnd.randint(1, 12))]
        strings.append([c for c in s if unicodedata.category(chr(c)) != "Cn"])
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        with open(sys.argv[2], encoding="ascii") as f:
            got = [line.split() for line in f]
        bad = 0
        for s, g in zip(strings, got):
            want = ["%04X" % ord(c) for c in unicodedata.normalize("NFKC", "".join(map(chr, s)))]
            if g != want:
                if bad < 3:
                    print("  %s: got %s, expected %s" % (["%04X" % c for c in s], g, want))
                bad += 1
        if bad or len(got) != len(strings):
            print("FAIL random_nfkc_vs_python: %d of %d differ" % (bad, len(strings)))
            return 1
        print("ok   random_nfkc_vs_python (%d strings)" % len(strings))
        return 0
    for s in strings:
        print(" ".join("%04X" % c for c in s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
