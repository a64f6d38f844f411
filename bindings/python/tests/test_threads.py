"""Several Python threads at once: the same results as one thread."""

import random
import threading

import minlsh

from conftest import as_list

THREADS = 8


def corpus(n=200, seed=3):
    rng = random.Random(seed)
    words = ["w%d" % i for i in range(500)]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(0, 120))) for _ in range(n)]


def run_threads(fn, n=THREADS):
    errors, results = [], [None] * n
    barrier = threading.Barrier(n)

    def body(i):
        try:
            barrier.wait()
            results[i] = fn(i)
        except BaseException as exc:  # reported below
            errors.append(exc)

    ts = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    return results


def test_shared_shingler_many_threads():
    docs = corpus()
    sh = minlsh.Shingler("word", 3, lowercase=True)
    serial = [(as_list(sh.shingles(d)), sh.fingerprint(d),
               as_list(minlsh.MinHash.from_text(d, 64, 9, shingler=sh).digest())) for d in docs]

    def work(i):
        order = list(range(len(docs)))
        random.Random(i).shuffle(order)
        out = {}
        for j in order:
            d = docs[j]
            out[j] = (as_list(sh.shingles(d)), sh.fingerprint(d),
                      as_list(minlsh.MinHash.from_text(d, 64, 9, shingler=sh).digest()))
        return [out[j] for j in range(len(docs))]

    for res in run_threads(work):
        assert res == serial


def test_signatures_from_many_threads():
    docs = corpus(120)
    serial = as_list(minlsh.signatures(docs, num_perm=32, threads=1).tobytes())

    def work(i):
        return as_list(minlsh.signatures(docs, num_perm=32, threads=1 + i % 3).tobytes())

    for res in run_threads(work):
        assert res == serial


def test_thread_count_does_not_matter(numpy_mode):
    docs = corpus(300, seed=11)
    base = [as_list(r) for r in minlsh.signatures(docs, num_perm=64, threads=1)]
    for threads in (0, 2, 5, 64):
        assert [as_list(r) for r in minlsh.signatures(docs, num_perm=64, threads=threads)] \
            == base


def test_index_readers_and_writers():
    docs = corpus(160, seed=5)
    sigs = minlsh.signatures(docs, num_perm=64, shingle="word:2")
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64)
    for i in range(80):
        lsh.insert(i, sigs[i])
    expected = {i: lsh.query(sigs[i]) for i in range(80)}
    # MinHash objects of the index's family take the query fast path (the
    # interpreter lock held instead of the read lock); rows the locked one.
    mhs = [minlsh.MinHash(num_perm=64, hashvalues=sigs[i]) for i in range(160)]
    assert all(lsh.query(mhs[i]) == expected[i] for i in range(80))

    def work(t):
        if t % 2 == 0:  # writers insert and remove their own keys
            for i in range(80 + t, 160, THREADS):
                lsh.insert(i, sigs[i])
            for i in range(80 + t, 160, THREADS * 2):
                lsh.remove(i)
            return None
        for _ in range(3):  # readers see consistent answers for the stable keys
            for i in range(80):
                got = [k for k in lsh.query(sigs[i]) if k < 80]
                assert got == expected[i]
                got = [k for k in lsh.query(mhs[i]) if k < 80]
                assert got == expected[i]
            for i in range(80, 160):  # keys coming and going: present or not, never an error
                assert all(k in range(160) for k in lsh.query(mhs[i]))
            lsh.candidate_pairs()
            lsh.clusters(0.5)
        return None

    run_threads(work)
    present = {i for i in range(80, 160) if i in lsh}
    removed = {i for t in range(0, THREADS, 2) for i in range(80 + t, 160, THREADS * 2)}
    inserted = {i for t in range(0, THREADS, 2) for i in range(80 + t, 160, THREADS)}
    assert present == inserted - removed
    assert len(lsh) == 80 + len(present)
