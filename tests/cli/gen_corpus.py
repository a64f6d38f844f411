#!/usr/bin/python3
"""Generate a corpus with planted near-duplicates for tests/cli.sh.

    gen_corpus.py --seed N --out DIR [--singletons N] [--families N]

Writes, all derived from the seed alone:
  DIR/files/dNNNNN.txt (or .html)   one document per file
  DIR/corpus.jsonl                  the same documents as JSON Lines
                                    ({"id": ..., "text": ...}; most ids are
                                    strings "dNNNNN", every 7th is a number)
  DIR/truth.json                    every document, and the exact Jaccard
                                    similarity of every pair inside a family

Documents are 300-600 words drawn from a vocabulary of several thousand
synthetic words (a few with non-ASCII letters, so the JSON escapes of
json.dumps are exercised), with some punctuation and line breaks. Unrelated
documents share essentially no word 5-shingle. A family is a base document
and variants made by random word substitutions, insertions and deletions,
with target similarities spread over 0.3 .. 0.97 (more of them near 0.8);
families also get exact copies and an HTML rendering of one member.
One empty document is added (the command must report and skip it).

The ground truth is computed here, independently of minlsh: a word is a
maximal run of ASCII letters and digits and bytes >= 0x80 (the library's word
unit), except that a Han, kana or Thai character is a word of its own (the
default, --cjk-words; the corpus's only such character is U+4E2D), a shingle
is a tuple of 5 consecutive words, and the similarity of two documents is
|A & B| / |A | B| of their shingle sets.
"""
import argparse
import json
import os
import random
import re
import unicodedata

K = 5
WORD_RE = re.compile(rb"[0-9A-Za-z\x80-\xff]+")
EXOTIC = ["\u00e9", "\u00fc", "\u00df", "\u00f8", "\u03c0", "\u03bb", "\u0436",
          "\u4e2d", "\U0001d4b3", "\U0001f600"]


SPLIT_NAMES = ("CJK UNIFIED IDEOGRAPH", "HIRAGANA ", "KATAKANA ", "THAI CHARACTER ")


def own_words(text):
    """A space on either side of each character that is a word of its own."""
    return "".join(" %s " % c if unicodedata.name(c, "").startswith(SPLIT_NAMES) else c
                   for c in text)


def shingles(text):
    words = WORD_RE.findall(own_words(text).encode("utf-8"))
    if not words:
        return set()
    if len(words) < K:
        return {tuple(words)}
    return {tuple(words[i:i + K]) for i in range(len(words) - K + 1)}


def jaccard(a, b):
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def make_vocab(rng, size):
    vocab = set()
    letters = "abcdefghijklmnopqrstuvwxyz"
    while len(vocab) < size:
        w = "".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))
        if rng.random() < 0.04:
            pos = rng.randrange(len(w))
            w = w[:pos] + rng.choice(EXOTIC) + w[pos + 1:]
        vocab.add(w)
    return sorted(vocab)


def render(rng, words):
    """Words to text: spaces, some punctuation, a line break now and then."""
    out = []
    for i, w in enumerate(words):
        out.append(w)
        r = rng.random()
        if r < 0.05:
            out.append(". ")
        elif r < 0.08:
            out.append(", ")
        elif (i + 1) % 12 == 0:
            out.append("\n")
        else:
            out.append(" ")
    return "".join(out).rstrip() + "\n"


def edit(rng, vocab, words, target):
    """A variant of words whose similarity should be about target. Each edit
    changes at most K shingles on each side, so e edits give roughly
    J = (n - 5e) / (n + 5e) for n shingles."""
    n = len(words) - K + 1
    edits = max(1, round(n * (1 - target) / (K * (1 + target))))
    w = list(words)
    for _ in range(edits):
        op = rng.random()
        pos = rng.randrange(len(w))
        if op < 0.6:
            w[pos] = rng.choice(vocab)
        elif op < 0.8:
            w.insert(pos, rng.choice(vocab))
        elif len(w) > 2 * K:
            del w[pos]
    return w


def targets(rng, count):
    out = []
    for _ in range(count):
        if rng.random() < 0.45:
            out.append(rng.uniform(0.72, 0.9))
        else:
            out.append(rng.uniform(0.3, 0.97))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--singletons", type=int, default=2000)
    ap.add_argument("--families", type=int, default=160)
    ap.add_argument("--vocab", type=int, default=6000)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    vocab = make_vocab(rng, args.vocab)

    docs = []  # (text, family or None, kind)

    def words():
        return [rng.choice(vocab) for _ in range(rng.randint(300, 600))]

    for _ in range(args.singletons):
        docs.append((render(rng, words()), None, "text"))
    for f in range(args.families):
        base = words()
        members = [render(rng, base)]
        for t in targets(rng, rng.randint(2, 6)):
            members.append(render(rng, edit(rng, vocab, base, t)))
        if rng.random() < 0.25:  # an exact copy of some member
            members.append(rng.choice(members))
        for text in members:
            docs.append((text, f, "text"))
        if rng.random() < 0.1:  # an HTML rendering (tags become the words html, body, p)
            html = "<html>\n<body>\n<p>\n" + rng.choice(members) + "</p>\n</body>\n</html>\n"
            docs.append((html, f, "html"))
    rng.shuffle(docs)
    docs.insert(rng.randrange(len(docs)), ("", None, "empty"))

    os.makedirs(os.path.join(args.out, "files"), exist_ok=True)
    meta = []
    for i, (text, fam, kind) in enumerate(docs):
        name = "d%05d" % (i + 1)
        path = os.path.join("files", name + (".html" if kind == "html" else ".txt"))
        with open(os.path.join(args.out, path), "w", encoding="utf-8") as fh:
            fh.write(text)
        jid = 1000000 + i + 1 if i % 7 == 3 else name
        meta.append({"name": name, "file": path, "id": jid, "family": fam,
                     "kind": kind})
    with open(os.path.join(args.out, "corpus.jsonl"), "w", encoding="ascii") as fh:
        for m, (text, _, _) in zip(meta, docs):
            fh.write(json.dumps({"id": m["id"], "text": text}) + "\n")

    sets = [shingles(text) for text, _, _ in docs]
    by_family = {}
    for i, m in enumerate(meta):
        if m["family"] is not None:
            by_family.setdefault(m["family"], []).append(i)
    pairs = []
    for members in by_family.values():
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                a, b = members[x], members[y]
                pairs.append([meta[a]["name"], meta[b]["name"], jaccard(sets[a], sets[b])])
    with open(os.path.join(args.out, "truth.json"), "w") as fh:
        json.dump({"k": K, "docs": meta, "pairs": pairs}, fh)


if __name__ == "__main__":
    main()
