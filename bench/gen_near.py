#!/usr/bin/python3
"""Two corpora of files for the components rule of the dedup engine
(docs/dedup.md, "Verification"): N files of WORDS words each, either
near-identical (one base text with 1 to 3 words changed per file: one
cluster, every pair a candidate) or unrelated (each file its own words).

    gen_near.py --kind near|unrelated --docs N --words W --seed S --out DIR

Writes DIR/doc00000.txt ... in a fixed order; the same arguments give the
same bytes on every machine (Python's random.Random with an integer seed).
"""
import argparse
import os
import random
import sys


def vocabulary(rng, size):
    """size distinct lowercase words of 3 to 9 letters."""
    seen = set()
    while len(seen) < size:
        seen.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz")
                         for _ in range(rng.randint(3, 9))))
    return sorted(seen)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=("near", "unrelated"), required=True)
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--words", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if a.docs < 1 or a.words < 10:
        ap.error("--docs must be at least 1 and --words at least 10")
    rng = random.Random(a.seed)
    vocab = vocabulary(rng, 20000)
    os.makedirs(a.out, exist_ok=True)
    base = [rng.choice(vocab) for _ in range(a.words)]
    width = max(5, len(str(a.docs - 1)))
    for i in range(a.docs):
        if a.kind == "near":
            words = list(base)
            for _ in range(rng.randint(1, 3)):
                words[rng.randrange(a.words)] = rng.choice(vocab)
        else:
            words = [rng.choice(vocab) for _ in range(a.words)]
        path = os.path.join(a.out, "doc%0*d.txt" % (width, i))
        with open(path, "w", encoding="ascii") as f:
            f.write(" ".join(words) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
