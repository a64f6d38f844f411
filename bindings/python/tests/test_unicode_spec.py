"""docs/shingling.md 3.5 is enough to reproduce the hashes: the Unicode
stage written here in Python from the text of the specification
(unicodedata for NFKC, folding and categories; Scripts.txt for the split
scripts) gives the library's word shingles on random multilingual text.

Python's unicodedata may be older than the library's tables (14.0.0 against
15.0.0 on Debian 12): the texts use only code points it knows."""

import os
import random
import unicodedata

import pytest

import minlsh

SCRIPTS_TXT = "/usr/share/unicode/Scripts.txt"
SPLIT_SCRIPTS = {"Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar"}
WHITE_SPACE = ({0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029,
                0x202F, 0x205F, 0x3000} | set(range(0x2000, 0x200B)))
SNIPPETS = ["ÉCOLE", "straße", "ẞ", "ﬁ", "ﬀ", "Ａ１", "“q”", "—", "«x»", "€5", "ΟΔΟΣ", "ς",
            "İ", "cafe\u0301", "q\u0307\u0323", "\u1100\u1161\u11a8", "각", "\u3131",
            "我们", "今天", "，", "。", "ひらがな", "カタカナー", "ｶﾞ", "か\u3099", "กิน", "ข้าว",
            "ລາວ", "ខ្មែរ", "မြန်မာ", "٣٤", "४", "\u00a0", "\u3000", "\u2028", "\t", "  ",
            "don't", "e-mail", "X", "42", "ǅ", "Ⅻ", "²", "№", "😀", "\ufffd", "\u200b", "Ω", "K"]


def _scripts():
    table = {}
    with open(SCRIPTS_TXT, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            cps, name = [x.strip() for x in line.split(";")]
            if name not in SPLIT_SCRIPTS:
                continue
            a = cps.split("..")
            for c in range(int(a[0], 16), int(a[-1], 16) + 1):
                table[c] = name
    return table


def spec_normalise(text, split, scripts):
    """Section 3.5 steps 1 to 6 with every flag, then 3.2 to 3.4."""
    s = unicodedata.normalize("NFKC", text).casefold()
    out = []
    open_word = False
    for c in s:
        cat = unicodedata.category(c)
        if cat == "Nd":
            c, cat = str(unicodedata.decimal(c)), "Nd"
        elif cat[0] in "PS" and c != "\ufffd":
            continue
        elif ord(c) in WHITE_SPACE:
            c, cat = " ", "Zs"
        if split:
            if ord(c) in scripts and cat[0] != "M":
                out.append(" " + c)
                open_word = True
                continue
            if open_word and cat[0] != "M":
                out.append(" ")
                open_word = False
        out.append(c)
    return "".join(out)


def spec_words(normalised):
    """Section 4: words are maximal runs of ASCII letters and digits and bytes >= 0x80."""
    data = normalised.encode("utf-8")
    words, cur = [], bytearray()
    for b in data:
        if b >= 0x80 or chr(b).isalnum():
            cur.append(b)
        elif cur:
            words.append(bytes(cur))
            cur = bytearray()
    if cur:
        words.append(bytes(cur))
    return words


def spec_shingles(words, k):
    msgs = [b" ".join(words[i:i + k]) for i in range(len(words) - k + 1)]
    if not msgs and words:
        msgs = [b" ".join(words)]
    return sorted({minlsh.siphash24(minlsh.DEFAULT_KEY, m) for m in msgs})


@pytest.mark.skipif(not os.path.exists(SCRIPTS_TXT), reason="needs Debian's unicode-data")
def test_specification_reproduces_the_hashes():
    scripts = _scripts()
    rnd = random.Random(7)
    pool = [c for c in "".join(SNIPPETS)]
    # and code points drawn from the whole BMP and beyond, if Python knows them
    while len(pool) < 4 * len(SNIPPETS) + 400:
        c = chr(rnd.randrange(0x20, 0x30000))
        if unicodedata.category(c) not in ("Cn", "Cs", "Co"):
            pool.append(c)
    k = 2
    for split in (False, True):
        sh = minlsh.Shingler("word", k, normalize=True) if split else minlsh.Shingler(
            "word", k, nfkc=True, casefold=True, unicode_punct=True, unicode_space=True,
            fold_digits=True, lowercase=True, strip_punct=True, collapse_space=True,
            cjk_words=False)
        assert sh.flags == (0x3F7 if split else 0x1F7)
        for _ in range(400):
            parts = []
            for _ in range(rnd.randint(1, 12)):
                parts.append(rnd.choice(SNIPPETS) if rnd.random() < 0.6 else rnd.choice(pool))
                if rnd.random() < 0.4:
                    parts.append(" ")
            text = "".join(parts)
            want = spec_shingles(spec_words(spec_normalise(text, split, scripts)), k)
            got = [int(h) for h in sh.shingles(text)]
            assert got == want, (text, spec_normalise(text, split, scripts))
