"""MinHashLSH: insert, query, remove, pairs, clusters, save and load; the planner."""

import os
import random

import pytest

import minlsh

from conftest import as_list


def minhash_of(words, num_perm=128, seed=1):
    m = minlsh.MinHash(num_perm, seed)
    m.update_batch(words)
    return m


def planted(rng, groups=20, size=4, noise=60):
    """Groups of near-duplicates (about 0.96 similar to each other) among
    unrelated documents; returns {key: MinHash} and the expected groups."""
    docs, expected = {}, []
    for g in range(groups):
        base = ["g%d-w%d" % (g, i) for i in range(200)]
        members = []
        for m in range(size):
            words = list(base)
            for i in rng.sample(range(200), 2):
                words[i] = "g%d-m%d-x%d" % (g, m, i)
            key = ("group", g, m)
            docs[key] = minhash_of(words)
            members.append(key)
        expected.append(members)
    for n in range(noise):
        docs["noise-%d" % n] = minhash_of(["n%d-%d" % (n, i) for i in range(200)])
    return docs, expected


def test_insert_query_remove_contains():
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=128)
    a = minhash_of(["a%d" % i for i in range(100)])
    b = minhash_of(["a%d" % i for i in range(5, 105)])
    c = minhash_of(["c%d" % i for i in range(100)])
    lsh.insert("a", a)
    lsh.insert(("b", 2), b)
    lsh.insert(3, c)
    assert len(lsh) == 3 and "a" in lsh and ("b", 2) in lsh and 3 in lsh and "z" not in lsh
    assert lsh.query(a) == ["a", ("b", 2)]
    assert lsh.query(c) == [3]
    sims = dict(lsh.query_with_similarity(a))
    assert sims["a"] == 1.0 and 0.7 < sims[("b", 2)] < 1.0
    assert lsh.query_with_similarity(a, min_similarity=0.99) == [("a", 1.0)]
    with pytest.raises(ValueError, match="already"):
        lsh.insert("a", c)
    lsh.remove("a")
    assert "a" not in lsh and len(lsh) == 2
    assert lsh.query(a) == [("b", 2)]
    with pytest.raises(ValueError, match="not in the index"):
        lsh.remove("a")
    lsh.insert("a", a)  # a key can come back
    assert lsh.query(a) == [("b", 2), "a"]  # insertion order
    assert lsh.keys() == [("b", 2), 3, "a"]
    assert lsh.get_minhash(3) == c
    with pytest.raises(TypeError):
        lsh.insert(["unhashable"], a)


def test_parameters():
    lsh = minlsh.MinHashLSH(threshold=0.8, num_perm=128)
    assert lsh.params == (9, 13) and lsh.threshold == 0.8
    lsh = minlsh.MinHashLSH(threshold=0.8, num_perm=128, mode="recall")
    assert lsh.params == (16, 6)
    lsh = minlsh.MinHashLSH(num_perm=64, params=(8, 8))
    assert (lsh.b, lsh.r, lsh.num_perm, lsh.seed) == (8, 8, 64, 1)
    lsh = minlsh.MinHashLSH(threshold=0.8, num_perm=128, weights=(0.9, 0.1))
    assert lsh.params == minlsh.plan(0.8, 128, (0.9, 0.1))[:2]
    with pytest.raises(minlsh.Error) as e:
        minlsh.MinHashLSH(num_perm=64, params=(9, 8))
    assert e.value.code == minlsh.E_PARAM and "out of range" in str(e.value)
    with pytest.raises(minlsh.Error):
        minlsh.MinHashLSH(threshold=1.5)
    with pytest.raises(ValueError):
        minlsh.MinHashLSH(threshold=0.5, mode="fast")


def test_wrong_signature():
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64, seed=7)
    with pytest.raises(ValueError, match="num_perm"):
        lsh.insert("x", minlsh.MinHash(128, 7))
    with pytest.raises(ValueError, match="seed"):
        lsh.insert("x", minlsh.MinHash(64, 1))
    with pytest.raises(ValueError):
        lsh.insert("x", [1, 2, 3])
    lsh.insert("x", [5] * 64)  # a raw signature
    assert lsh.query([5] * 64) == ["x"]


def test_planted_pairs_and_clusters():
    rng = random.Random(7)
    docs, expected = planted(rng)
    lsh = minlsh.MinHashLSH(threshold=0.7, num_perm=128)
    keys = list(docs)
    rng.shuffle(keys)  # insertion order decides the order of results
    for k in keys:
        lsh.insert(k, docs[k])
    pos = {k: i for i, k in enumerate(keys)}
    clusters = lsh.clusters(min_similarity=0.7)
    assert sorted(sorted(c) for c in clusters) == sorted(sorted(g) for g in expected)
    for c in clusters:
        assert c == sorted(c, key=pos.get)
    assert [c[0] for c in clusters] == sorted((c[0] for c in clusters), key=pos.get)
    pairs = lsh.candidate_pairs(min_similarity=0.7, with_similarity=True)
    assert len(pairs) == 20 * 6
    for a, b, s in pairs:
        assert a[1] == b[1] and pos[a] < pos[b] and s >= 0.7
    assert [(a, b) for a, b, _ in pairs] == lsh.candidate_pairs(min_similarity=0.7)
    # without verification there are at least as many candidates
    assert len(lsh.candidate_pairs()) >= len(pairs)
    # deterministic
    assert lsh.clusters(min_similarity=0.7) == clusters


KEYS = ["text", 42, -7, 2 ** 70, 3.5, True, None, b"\x00bytes\xff", ("tuple", 1, (2.5, None)),
        (), "ünïcödé", ""]


def test_save_load_round_trip(tmp_path):
    lsh = minlsh.MinHashLSH(threshold=0.6, num_perm=64, weights=(0.4, 0.6), seed=11,
                            config_id=0x1234)
    for i, key in enumerate(KEYS):
        lsh.insert(key, minhash_of(["w%d" % (i // 2), "x%d" % i], 64, 11))
    lsh.remove(-7)  # ids need not be contiguous
    path = str(tmp_path / "index.mlsh")
    lsh.save(path)
    back = minlsh.MinHashLSH.load(path)
    assert back.keys() == lsh.keys()
    for key in lsh.keys():
        assert type(next(k for k in back.keys() if k == key and type(k) is type(key))) \
            is type(key)
        assert back.get_minhash(key) == lsh.get_minhash(key)
        assert back.query(lsh.get_minhash(key)) == lsh.query(lsh.get_minhash(key))
    assert (back.params, back.num_perm, back.seed, back.config_id, back.threshold) == \
        (lsh.params, 64, 11, 0x1234, 0.6)
    assert back.candidate_pairs() == lsh.candidate_pairs()
    # new keys continue after the old ids; saving again gives the same file
    back.insert("new", minhash_of(["fresh"], 64, 11))
    assert back.keys()[-1] == "new"
    back.remove("new")
    path2 = str(tmp_path / "again.mlsh")
    back.save(path2)
    with open(path, "rb") as f1, open(path2, "rb") as f2:
        assert f1.read() != b"" and f2.read() != b""
    # a checked load
    assert len(minlsh.MinHashLSH.load(path, num_perm=64, seed=11, config_id=0x1234)) == 11
    with pytest.raises(minlsh.Error) as e:
        minlsh.MinHashLSH.load(path, num_perm=64, seed=12, config_id=0x1234)
    assert e.value.name == "MINLSH_E_MISMATCH"
    # pathlib paths work too
    assert len(minlsh.MinHashLSH.load(tmp_path / "index.mlsh")) == 11


def test_unsaveable_keys(tmp_path):
    path = str(tmp_path / "x.mlsh")
    for bad in [frozenset([1]), ("ok", frozenset()), float("nan"), object()]:
        lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=16)
        lsh.insert("fine", minhash_of(["a"], 16))
        lsh.insert(bad, minhash_of(["b"], 16))
        with pytest.raises((TypeError, ValueError), match="cannot be saved"):
            lsh.save(path)
        assert not os.path.exists(path)


def test_load_foreign_and_corrupt(tmp_path):
    # an index with someone else's metadata: keys are the 64-bit ids
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=16)
    lsh.insert("a", minhash_of(["a"], 16))
    lsh.insert("b", minhash_of(["b"], 16))
    path = str(tmp_path / "i.mlsh")
    lsh.save(path)
    data = open(path, "rb").read()
    # not a minlsh file
    bad = tmp_path / "bad.mlsh"
    bad.write_bytes(b"this is not an index")
    with pytest.raises(minlsh.Error) as e:
        minlsh.MinHashLSH.load(str(bad))
    assert e.value.name == "MINLSH_E_FORMAT" and str(bad) in str(e.value)
    # truncated
    bad.write_bytes(data[:-3])
    with pytest.raises(minlsh.Error) as e:
        minlsh.MinHashLSH.load(str(bad))
    assert e.value.name == "MINLSH_E_CORRUPT"
    with pytest.raises(minlsh.Error) as e:
        minlsh.MinHashLSH.load(str(tmp_path / "missing.mlsh"))
    assert e.value.name == "MINLSH_E_IO"


def test_index_without_python_metadata(tmp_path):
    # The minlsh command and the Go binding write index files too; the
    # binding reads them with the ids as keys. Simulate one by clearing the
    # metadata through the C API.
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=16)
    lsh.insert("a", minhash_of(["a"], 16))
    lsh.insert("b", minhash_of(["a"], 16))
    from minlsh import _ffi
    _ffi.lib.minlsh_index_set_metadata(lsh._handle, b"name=x\n", 7)
    path = str(tmp_path / "foreign.mlsh")
    _ffi.check(_ffi.lib.minlsh_index_save(lsh._handle, path.encode()), "save")
    back = minlsh.MinHashLSH.load(path)
    assert back.keys() == [0, 1] and back.threshold is None
    assert back.candidate_pairs() == [(0, 1)]
    back.insert("c", minhash_of(["c"], 16))
    assert back.keys() == [0, 1, "c"]


def test_close():
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=16)
    with lsh:
        lsh.insert("a", minhash_of(["a"], 16))
    with pytest.raises(ValueError, match="closed"):
        lsh.query(minhash_of(["a"], 16))
    lsh.close()  # twice is fine
    assert "closed" in repr(lsh)


def test_plan_probability_band_keys():
    p = minlsh.plan(0.8)
    assert (p.bands, p.rows) == (9, 13) and 0 < p.fp_area < 0.1 and 0 < p.fn_area < 0.1
    assert minlsh.plan(0.8, mode="recall").bands == 16
    assert minlsh.plan(0.8, mode="rule")[:2] == (11, 11)
    assert abs(minlsh.probability(0.5, 20, 5) - (1 - (1 - 0.5 ** 5) ** 20)) < 1e-15
    assert abs(minlsh.threshold_of(20, 5) - (1 / 20) ** (1 / 5)) < 1e-12
    with pytest.raises(minlsh.Error) as e:
        minlsh.plan(0.8, mode="recall", target_recall=1.5)
    assert "target_recall=1.5" in str(e.value)
    with pytest.raises(minlsh.Error):
        minlsh.probability(0.5, 0, 5)
    # docs/lsh.md's worked example
    sig = [(i * 0x9E3779B1) & 0xFFFFFFFF for i in range(12)]
    assert minlsh.band_keys(sig, 3, 4) == [0x5b73425f3f71e5b8, 0x4f8f65ca250376a6,
                                           0x187d6646080fa303]
    with pytest.raises(minlsh.Error) as e:
        minlsh.band_keys(sig, 4, 4)
    assert e.value.name == "MINLSH_E_PARAM"


def test_datasketch_style_session():
    # The calls a datasketch user makes, unchanged.
    data1 = ["minhash", "is", "a", "probabilistic", "data", "structure", "for", "estimating",
             "the", "similarity", "between", "datasets"]
    data2 = ["minhash", "is", "a", "probability", "data", "structure", "for", "estimating",
             "the", "similarity", "between", "documents"]
    data3 = ["minhash", "is", "probability", "data", "structure", "for", "estimating",
             "the", "similarity", "between", "documents"]
    m1, m2, m3 = minlsh.MinHash(num_perm=128), minlsh.MinHash(num_perm=128), \
        minlsh.MinHash(num_perm=128)
    for d in data1:
        m1.update(d.encode("utf8"))
    for d in data2:
        m2.update(d.encode("utf8"))
    for d in data3:
        m3.update(d.encode("utf8"))
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=128)
    lsh.insert("m2", m2)
    lsh.insert("m3", m3)
    result = lsh.query(m1)
    assert "m2" in result
    assert abs(m1.jaccard(m2) - 10 / 14) < 0.15
    assert as_list(m1.digest())[:1] != []


def _near(words, every, tag):
    return [("%s%d" % (tag, i)) if i % every == 0 else w for i, w in enumerate(words)]


def test_insert_if_novel():
    rng = random.Random(11)
    base = [str(rng.randrange(10 ** 9)) for _ in range(400)]
    other = [str(rng.randrange(10 ** 9)) for _ in range(400)]
    mh = lambda ws: minlsh.MinHash.from_text(" ".join(ws))  # noqa: E731
    lsh = minlsh.MinHashLSH(threshold=0.8, num_perm=128)
    r = lsh.insert_if_novel("a", mh(base))
    assert r == minlsh.Novelty(True, None, None) and "a" in lsh
    r = lsh.insert_if_novel("b", mh(_near(base, 100, "x")))
    assert not r.novel and r.match == "a" and 0.8 <= r.similarity < 1.0
    assert "b" not in lsh and len(lsh) == 1
    # The same, as the loop a caller would write.
    best = max(lsh.query_with_similarity(mh(_near(base, 100, "x"))), key=lambda kv: kv[1])
    assert best == (r.match, r.similarity)
    r = lsh.insert_if_novel("c", mh(other))
    assert r.novel and "c" in lsh and len(lsh) == 2
    # A stricter threshold: novel, with the nearest key reported.
    r = lsh.insert_if_novel("d", mh(_near(base, 100, "y")), threshold=0.99)
    assert r.novel and r.match == "a" and r.similarity < 0.99 and "d" in lsh
    with pytest.raises(ValueError):
        lsh.insert_if_novel("a", mh(base))
    with pytest.raises(minlsh.ParameterError):
        lsh.insert_if_novel("e", mh(base), threshold=1.5)
    assert "e" not in lsh
    # An exact check of the caller's: called best estimate first, with keys.
    calls = []

    def verify(key, estimate):
        calls.append((key, estimate))
        return 0.5 if key == "d" else 0.95

    r = lsh.insert_if_novel("f", mh(_near(base, 100, "y")), verify=verify)
    assert calls[0][0] == "d" and calls[0][1] == 1.0 and len(calls) == 2
    assert not r.novel and r.match == "a" and r.similarity == 0.95 and "f" not in lsh
    # Its exception comes back, and nothing is inserted.

    def broken(key, estimate):
        raise KeyError("no set for %r" % (key,))

    with pytest.raises(KeyError):
        lsh.insert_if_novel("g", mh(base), verify=broken)
    assert "g" not in lsh and len(lsh) == 3
    # An index without a planned threshold needs one.
    bare = minlsh.MinHashLSH(threshold=None, params=(16, 8))
    with pytest.raises(ValueError):
        bare.insert_if_novel("a", mh(base))
    assert bare.insert_if_novel("a", mh(base), threshold=0.5).novel


def test_file_lock(tmp_path):
    path = str(tmp_path / "crawl.mlsh")
    with minlsh.FileLock(path) as held:
        assert os.path.exists(path + ".lock")
        other = minlsh.FileLock(path, shared=True, timeout=0)
        with pytest.raises(minlsh.Error) as e:
            other.acquire()
        assert e.value.code == minlsh.E_BUSY
        with pytest.raises(RuntimeError):
            held.acquire()
    with minlsh.FileLock(path, shared=True, timeout=0), \
            minlsh.FileLock(path, shared=True, timeout=0.05):
        with pytest.raises(minlsh.Error):
            minlsh.FileLock(path, timeout=0.05).acquire()
    with minlsh.FileLock(path, timeout=0):
        pass
    with pytest.raises(ValueError):
        minlsh.FileLock(path, timeout=-1)
    with pytest.raises(minlsh.Error) as e:
        minlsh.FileLock(str(tmp_path / "no" / "such" / "dir.mlsh")).acquire()
    assert e.value.code == minlsh.E_IO
