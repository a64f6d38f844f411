#!/usr/bin/env python3
"""rensa's benchmark shape, minlsh against datasketch, in one run.

Pre-tokenized word 3-gram lists -> MinHash signatures (num_perm 128) -> an
LSH index with params=(8, 16) -> a query for every document; one thread.
Both libraries run the same datasketch idioms (MinHash.bulk,
MinHashLSH.insertion_session, MinHashLSH.query); datasketch needs bytes
tokens for its default hash, so its side encodes them (as its users must),
while minlsh takes the str tokens as they are. Then minlsh's matrix path
(signatures_from_tokens -> insert_many -> query_csr) on the same corpus.

datasketch is not a dependency of minlsh: point --datasketch (or the
DATASKETCH_PATH environment variable) at a directory holding its
`datasketch` package (it needs numpy and scipy); without it only minlsh's
times are printed. The corpus is generated (seeded): documents of 50..400
words (--words) from a Zipf-like vocabulary, a tenth of them near-copies
of another with a few words changed. Shorter documents favour minlsh (its
cost per document is a few microseconds, datasketch's tens).

Prints one "key: value" line per measure; ratios are datasketch's time over
minlsh's. --clock cpu times each stage by the CPU time of the thread that
runs it (time.thread_time) instead of the wall clock: on a machine shared
with other work, time spent waiting for a processor then counts for
neither library.
"""
import argparse
import gc
import os
import random
import sys
import time
import types


def corpus(n, seed, min_words=50, max_words=400):
    rnd = random.Random(seed)
    vocab = ["w%d" % i for i in range(20000)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    docs = []
    for i in range(n):
        if i >= 10 and rnd.random() < 0.1:
            words = list(docs[rnd.randrange(i)][1])
            for _ in range(max(1, len(words) // 30)):
                words[rnd.randrange(len(words))] = rnd.choice(vocab)
        else:
            words = rnd.choices(vocab, weights, k=rnd.randint(min_words, max_words))
        docs.append((i, words))
    return [[" ".join(w[j:j + 3]) for j in range(len(w) - 2)] for _, w in docs]


def load_datasketch(path):
    if not path:
        return None
    if not os.path.isdir(os.path.join(path, "datasketch")):
        sys.exit("no datasketch package under %s" % path)
    sys.path.insert(0, path)
    # Import only the modules measured: the package's __init__ pulls in
    # optional storage backends.
    pkg = types.ModuleType("datasketch")
    pkg.__path__ = [os.path.join(path, "datasketch")]
    sys.modules["datasketch"] = pkg
    from datasketch.minhash import MinHash
    from datasketch.lsh import MinHashLSH
    return types.SimpleNamespace(MinHash=MinHash, MinHashLSH=MinHashLSH)


# The stage clock: time.perf_counter, or time.thread_time with --clock cpu.
clock = time.perf_counter


def run_idioms(lib, docs, encode, **scheme):
    """The datasketch idioms; returns (times, candidate count). scheme:
    minlsh's keyword (none for datasketch)."""
    t0 = clock()
    if encode:
        toks = [[t.encode("utf-8") for t in d] for d in docs]
    else:
        toks = docs
    mhs = lib.MinHash.bulk(toks, num_perm=128, **scheme)
    t1 = clock()
    lsh = lib.MinHashLSH(num_perm=128, params=(8, 16), **scheme)
    with lsh.insertion_session() as session:
        for i, m in enumerate(mhs):
            session.insert(i, m)
    t2 = clock()
    found = 0
    for m in mhs:
        found += len(lsh.query(m))
    t3 = clock()
    return (t1 - t0, t2 - t1, t3 - t2, t3 - t0), found


def run_matrix(minlsh, docs, scheme):
    """minlsh's numpy path: one call per stage."""
    t0 = clock()
    mat = minlsh.signatures_from_tokens(docs, num_perm=128, scheme=scheme)
    t1 = clock()
    lsh = minlsh.MinHashLSH(num_perm=128, params=(8, 16), scheme=scheme)
    lsh.insert_many(range(len(docs)), mat)
    t2 = clock()
    indptr, ids = lsh.query_csr(mat)
    t3 = clock()
    return (t1 - t0, t2 - t1, t3 - t2, t3 - t0), len(ids)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--words", default="50:400",
                    help="MIN:MAX words per generated document (default 50:400)")
    ap.add_argument("--repeat", type=int, default=5,
                    help="runs of each pipeline, interleaved; each stage reports its fastest")
    ap.add_argument("--scheme", choices=("classic", "oph"), default="classic",
                    help="minlsh's signing scheme (datasketch has only classic)")
    ap.add_argument("--datasketch", default=os.environ.get("DATASKETCH_PATH", ""))
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="what a stage's time is: the wall clock, or the running thread's "
                    "CPU time (default wall)")
    args = ap.parse_args()
    global clock
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    import minlsh
    ds = load_datasketch(args.datasketch)
    lo, hi = (int(x) for x in args.words.split(":"))
    docs = corpus(args.docs, args.seed, lo, hi)
    # The corpus lives through every run: keep the collector from walking
    # its million strings again and again (the same for both libraries).
    gc.collect()
    gc.freeze()
    ntok = sum(map(len, docs))
    print("docs: %d" % len(docs))
    print("words_per_doc: %d..%d" % (lo, hi))
    print("tokens: %d" % ntok)
    print("minlsh_library: %s (%s kernel)" % (minlsh.LIBRARY, minlsh.simd_kernel()))
    print("minlsh_speedups: %s" % (minlsh.SPEEDUPS or "none (the ctypes paths)"))
    print("minlsh_scheme: %s" % args.scheme)
    print("clock: %s" % args.clock)

    names = ("sign", "build", "query", "total")
    # The runs of the three pipelines are interleaved, so that a machine
    # busy with something else slows them alike; each stage reports its
    # fastest run.
    runs = [("minlsh_idioms", lambda: run_idioms(minlsh, docs, encode=False, scheme=args.scheme)),
            ("minlsh_matrix", lambda: run_matrix(minlsh, docs, args.scheme))]
    if ds is not None:
        runs.append(("datasketch", lambda: run_idioms(ds, docs, encode=True)))
    best_times, found = {}, {}
    for _ in range(args.repeat):
        for name, run in runs:
            t, f = run()
            if found.setdefault(name, f) != f:
                sys.exit("%s: two runs found %d and %d candidates" % (name, found[name], f))
            best_times[name] = tuple(map(min, best_times.get(name, t), t))
    for name, _ in runs:
        for stage, t in zip(names, best_times[name]):
            print("%s_%s_s: %.3f" % (name, stage, t))
        print("%s_candidates: %d" % (name, found[name]))
    if found["minlsh_idioms"] != found["minlsh_matrix"]:
        sys.exit("the matrix path found %d candidates, the idioms %d"
                 % (found["minlsh_matrix"], found["minlsh_idioms"]))
    mt, xt = best_times["minlsh_idioms"], best_times["minlsh_matrix"]

    if ds is None:
        print("datasketch: not run (give --datasketch PATH or DATASKETCH_PATH)")
        return
    dt = best_times["datasketch"]
    for stage, d, m in zip(names, dt, mt):
        print("ratio_idioms_%s: %.1f" % (stage, d / m))
    print("ratio_matrix_total: %.1f" % (dt[3] / xt[3]))


if __name__ == "__main__":
    main()
