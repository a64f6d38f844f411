#!/usr/bin/python3
"""Generate lib/shingle/unicode_data.c from the Unicode Character Database.

    /usr/bin/python3 scripts/gen_unicode.py [UCD_DIR] > lib/shingle/unicode_data.c

UCD_DIR defaults to /usr/share/unicode (Debian's unicode-data package). The
version is read from DerivedAge.txt's first line and must be PINNED below: a different
Unicode version is a different shingling configuration (docs/shingling.md,
section 3.5), so moving to one is a deliberate change of this constant, the
config id's version field and the golden vectors together.

The output is a two-stage table: stage1[cp >> 7] is a block number,
stage2[block * 128 + (cp & 127)] a record number; identical blocks are
stored once. A record holds the canonical combining class, property bits,
the Nd digit value and two indexes into one array of code point sequences
(length first): the full NFKC decomposition (Hangul syllables included) and
the full case folding (CaseFolding.txt statuses C and F). The composition
pairs (canonical decompositions of two code points whose composite is not
Full_Composition_Exclusion) are a sorted array of (first << 21 | second).
Nothing here is needed to build the library: the output is committed.
"""
import os
import re
import sys

PINNED = (15, 0, 0)
BLOCK = 128

# Scripts written without spaces between words: each of their characters
# (not a combining mark) is a word of its own under MINLSH_NORM_CJK_WORDS.
SPLIT_SCRIPTS = {"Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar"}

F_DEL, F_WS, F_SPLIT, F_MARK, F_DIGIT, F_COMP2, F_NFKC_NO = 1, 2, 4, 8, 16, 32, 64

S_BASE, L_BASE, V_BASE, T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
L_COUNT, V_COUNT, T_COUNT = 19, 21, 28
N_COUNT = V_COUNT * T_COUNT
S_COUNT = L_COUNT * N_COUNT


def ranges(path):
    """(first, last, fields) for every data line of a UCD file."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split(";")]
            cps = fields[0].split("..")
            yield int(cps[0], 16), int(cps[-1], 16), fields[1:]


def main():
    ucd = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"
    # DerivedAge.txt's first line names the version.
    with open(os.path.join(ucd, "DerivedAge.txt"), encoding="utf-8") as f:
        m = re.match(r"# DerivedAge-(\d+)\.(\d+)\.(\d+)\.txt", f.readline())
    version = tuple(int(x) for x in m.groups())
    if version != PINNED:
        sys.exit("gen_unicode: the data is Unicode %d.%d.%d, the pinned version %d.%d.%d"
                 % (version + PINNED))

    gc = {}
    ccc = {}
    decomp = {}  # cp -> (compat?, [cps])
    digit = {}
    with open(os.path.join(ucd, "UnicodeData.txt"), encoding="utf-8") as f:
        first = None
        for line in f:
            fl = line.rstrip("\n").split(";")
            cp = int(fl[0], 16)
            if fl[1].endswith(", First>"):
                first = cp
                continue
            lo = first if fl[1].endswith(", Last>") else cp
            first = None
            for c in range(lo, cp + 1):
                gc[c] = fl[2]
                if int(fl[3]):
                    ccc[c] = int(fl[3])
                if fl[2] == "Nd":
                    digit[c] = int(fl[6])
            if fl[5]:
                parts = fl[5].split()
                compat = parts[0].startswith("<")
                if compat:
                    parts = parts[1:]
                decomp[cp] = (compat, [int(x, 16) for x in parts])

    white = set()
    for lo, hi, fields in ranges(os.path.join(ucd, "PropList.txt")):
        if fields[0] == "White_Space":
            white.update(range(lo, hi + 1))
    script = {}
    for lo, hi, fields in ranges(os.path.join(ucd, "Scripts.txt")):
        for c in range(lo, hi + 1):
            script[c] = fields[0]
    excl = set()
    nfkc_no = set()
    for lo, hi, fields in ranges(os.path.join(ucd, "DerivedNormalizationProps.txt")):
        if fields[0] == "Full_Composition_Exclusion":
            excl.update(range(lo, hi + 1))
        if fields[0] == "NFKC_QC" and fields[1] == "N":
            nfkc_no.update(range(lo, hi + 1))
    fold = {}
    for lo, hi, fields in ranges(os.path.join(ucd, "CaseFolding.txt")):
        if fields[0] in ("C", "F"):
            fold[lo] = [int(x, 16) for x in fields[1].split()]

    def full_decomp(c):
        if S_BASE <= c < S_BASE + S_COUNT:
            s = c - S_BASE
            out = [L_BASE + s // N_COUNT, V_BASE + (s % N_COUNT) // T_COUNT]
            if s % T_COUNT:
                out.append(T_BASE + s % T_COUNT)
            return out
        if c not in decomp:
            return [c]
        out = []
        for x in decomp[c][1]:
            out.extend(full_decomp(x))
        return out

    pairs = {}
    second = set(range(V_BASE, V_BASE + V_COUNT)) | set(range(T_BASE + 1, T_BASE + T_COUNT))
    for c, (compat, parts) in decomp.items():
        if not compat and len(parts) == 2 and c not in excl:
            pairs[(parts[0] << 21) | parts[1]] = c
            second.add(parts[1])

    seqs = [0]  # index 0: no mapping
    seq_index = {}

    def seq(cps):
        key = tuple(cps)
        if key not in seq_index:
            seq_index[key] = len(seqs)
            seqs.append(len(cps))
            seqs.extend(cps)
        return seq_index[key]

    records = []
    record_index = {}
    per_cp = []
    for c in range(0x110000):
        g = gc.get(c, "Cn")
        bits = 0
        if g[0] in "PS":
            bits |= F_DEL
        if c in white:
            bits |= F_WS
        if g[0] == "M":
            bits |= F_MARK
        elif script.get(c) in SPLIT_SCRIPTS:
            bits |= F_SPLIT
        if g == "Nd":
            bits |= F_DIGIT
        if c in second:
            bits |= F_COMP2
        if c in nfkc_no:
            bits |= F_NFKC_NO
        # Hangul syllables are decomposed by arithmetic (unicode.c), not
        # stored; compatibility characters that contain one are stored
        # fully decomposed.
        d = full_decomp(c)
        hangul = S_BASE <= c < S_BASE + S_COUNT
        rec = (ccc.get(c, 0), bits, digit.get(c, 0),
               seq(d) if d != [c] and not hangul else 0,
               seq(fold[c]) if c in fold else 0)
        if rec not in record_index:
            record_index[rec] = len(records)
            records.append(rec)
        per_cp.append(record_index[rec])
    assert len(records) < 65536 and len(seqs) < 65536

    blocks = []
    block_index = {}
    stage1 = []
    for b in range(0, 0x110000, BLOCK):
        blk = tuple(per_cp[b:b + BLOCK])
        if blk not in block_index:
            block_index[blk] = len(blocks)
            blocks.append(blk)
        stage1.append(block_index[blk])
    assert len(blocks) < 65536

    # The most a code point can grow to, per byte of its UTF-8 input: NFKC,
    # then folding, plus the one space word splitting may put before each
    # output code point (grow, in bytes), and in code points (grow_cps).
    def u8len(c):
        return 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4
    grow = grow_cps = 1
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        out = []
        for x in full_decomp(c):
            out.extend(fold.get(x, [x]))
        n = sum(u8len(x) + 1 for x in out)
        grow = max(grow, -(-n // u8len(c)))
        grow_cps = max(grow_cps, -(-len(out) // u8len(c)))

    w = sys.stdout.write
    w("/* Generated by scripts/gen_unicode.py from the Unicode Character Database\n"
      " * %d.%d.%d (Debian's unicode-data). Do not edit: run the script. */\n" % version)
    w('#include "unicode.h"\n\n')
    w("#if MINLSH__UNICODE_VERSION != %d\n#error unicode.h and the tables disagree\n#endif\n\n"
      % (version[0] * 10000 + version[1] * 100 + version[2]))
    w("#if MINLSH__UNICODE_GROW != %d\n#error MINLSH__UNICODE_GROW must be %d\n#endif\n\n"
      % (grow, grow))
    w("#if MINLSH__UNICODE_GROW_CPS != %d\n#error MINLSH__UNICODE_GROW_CPS must be %d\n#endif\n\n"
      % (grow_cps, grow_cps))

    def array(ctype, name, values, per_line=12):
        w("const %s %s[%d] = {\n" % (ctype, name, len(values)))
        for i in range(0, len(values), per_line):
            w("    " + ", ".join(str(v) for v in values[i:i + per_line]) + ",\n")
        w("};\n\n")

    array("uint16_t", "minlsh__ucd_stage1", stage1, 16)
    array("uint16_t", "minlsh__ucd_stage2", [r for b in blocks for r in b], 16)
    w("const minlsh__ucd_record minlsh__ucd_records[%d] = {\n" % len(records))
    for r in records:
        w("    {%d, %d, %d, %d, %d},\n" % r)
    w("};\n\n")
    array("uint32_t", "minlsh__ucd_seq", seqs, 10)
    keys = sorted(pairs)
    array("uint64_t", "minlsh__ucd_pair_key", ["0x%xu" % k for k in keys], 6)
    array("uint32_t", "minlsh__ucd_pair_val", [pairs[k] for k in keys], 10)
    w("const size_t minlsh__ucd_pairs = %d;\n" % len(keys))


if __name__ == "__main__":
    main()
