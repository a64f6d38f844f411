"""datasketch's public API on minlsh, written from datasketch's documentation
(its docstrings and user guide: names, arguments, return types, exceptions),
not from its code. Where minlsh differs on purpose (its own hash, empty
signatures, keys stored once) the test says so. Also: the batch paths give
the same bits as the per-item paths, and pickling (including to
multiprocessing workers) round-trips an index."""

import multiprocessing
import pickle
import random
import struct
import warnings
from hashlib import sha1

import pytest

import minlsh
from minlsh import LeanMinHash, MinHash, MinHashLSH

from conftest import as_list


def words(n, prefix="w", start=0):
    return ["%s%d" % (prefix, i) for i in range(start, start + n)]


def per_item(tokens, num_perm=128, seed=1):
    m = MinHash(num_perm=num_perm, seed=seed)
    for t in tokens:
        m.update(t)
    return m


# ---- MinHash ------------------------------------------------------------------


def test_defaults_and_len():
    m = MinHash()
    assert m.num_perm == 128 and m.seed == 1 and len(m) == 128
    assert m.is_empty()
    assert len(m.hashvalues) == 128 and len(m.digest()) == 128


def test_update_str_is_utf8_bytes():
    a, b = MinHash(), MinHash()
    a.update("héllo")
    b.update("héllo".encode("utf-8"))
    assert a == b and not a.is_empty()


def test_batch_paths_give_the_per_item_bits():
    rng = random.Random(5)
    docs = []
    for i in range(150):  # several foreign calls of _SIGN_CHUNK_DOCS (64)
        toks = ["t%d" % rng.randrange(500) for _ in range(rng.randrange(0, 300))]
        if i % 7 == 1:
            toks = [t.encode() for t in toks]                 # bytes tokens
        elif i % 7 == 2:
            toks = [t + "é\u4e2d" for t in toks]             # non-ASCII str
        elif i % 7 == 3:
            toks = toks + ["", "a\0b"]                       # empty token, NUL inside
        elif i % 7 == 4:
            toks = [bytearray(t.encode()) for t in toks]     # bytes-like
        docs.append(toks)
    expected = [per_item(d) for d in docs]
    assert MinHash.bulk(docs) == expected
    assert list(MinHash.generator(iter(docs), batch_size=7)) == expected
    for d, e in zip(docs, expected):
        m = MinHash()
        m.update_batch(d)
        assert m == e
        m2 = MinHash()
        m2.update_batch(iter(d))
        assert m2 == e
    mat = minlsh.signatures_from_tokens(docs)
    assert [as_list(row) for row in mat] == [as_list(e.hashvalues) for e in expected]
    # Mixed str and bytes tokens in one batch take the offsets path: same bits.
    mixed = [["a", b"b", "c"], [b"a", "b"]]
    assert MinHash.bulk(mixed) == [per_item(["a", "b", "c"]), per_item(["a", "b"])]
    # No token: the empty signature; update_batch keeps earlier items.
    assert MinHash.bulk([[]])[0].is_empty()
    m = per_item(["x"])
    m.update_batch(["y", "z"])
    assert m == per_item(["x", "y", "z"])


def test_bulk_pinned_values():
    # Pins the bits of the batch path (SipHash-2-4 of the UTF-8 bytes under
    # the default key, then the family of seed 1) independently of update().
    m = MinHash.bulk([["a", "b"]], num_perm=4)[0]
    h = [minlsh.siphash24(minlsh.DEFAULT_KEY, t) for t in (b"a", b"b")]
    ref = MinHash(num_perm=4)
    ref.update_hashes(h)
    assert m == ref
    assert as_list(m.hashvalues) == as_list(ref.hashvalues)


def test_bulk_kwargs_and_types():
    out = MinHash.bulk([[b"token1", b"token2"], [b"token4"]], num_perm=64, seed=3)
    assert isinstance(out, list) and len(out) == 2
    assert all(isinstance(m, MinHash) and m.num_perm == 64 and m.seed == 3 for m in out)
    with pytest.raises(TypeError):
        MinHash.bulk(["not a list of tokens"])
    with pytest.raises(TypeError):
        MinHash().update(12)  # the default hash needs bytes or str, as datasketch's


def test_jaccard_merge_union_count():
    a, b = per_item(words(100)), per_item(words(100, start=50))
    j = a.jaccard(b)
    assert isinstance(j, float) and abs(j - 50 / 150) < 0.12
    assert a.jaccard(a.copy()) == 1.0
    u = MinHash.union(a, b)
    assert u == per_item(words(150))
    c = a.copy()
    c.merge(b)
    assert c == u
    assert MinHash.union(a, b, per_item(["x"])) == per_item(words(150) + ["x"])
    with pytest.raises(ValueError):
        MinHash.union(a)
    m = per_item(words(1000), num_perm=256)
    assert abs(m.count() - 1000) / 1000 < 0.15
    assert MinHash().count() == pytest.approx(0.0, abs=1e-6)


def test_mismatch_raises_value_error():
    a, b, c = MinHash(seed=1), MinHash(seed=2), MinHash(num_perm=64)
    for other in (b, c):
        with pytest.raises(ValueError):
            a.jaccard(other)
        with pytest.raises(ValueError):
            a.merge(other)
        with pytest.raises(ValueError):
            MinHash.union(a, other)


def test_copy_clear_digest_eq():
    a = per_item(words(10))
    b = a.copy()
    b.update("more")
    assert a != b and a == per_item(words(10))
    d = a.digest()
    d[0] = 7
    assert as_list(a.digest())[0] != 7  # a copy
    a.clear()
    assert a.is_empty() and a == MinHash()
    assert MinHash(seed=1) != MinHash(seed=2)
    m = MinHash(hashvalues=[5, 6, 7])
    assert m.num_perm == 3 and as_list(m.hashvalues) == [5, 6, 7]
    m.hashvalues = [1, 2, 3]
    assert as_list(m.digest()) == [1, 2, 3]


def test_constructor_arguments():
    ref = per_item(words(5))
    # permutations (datasketch's speed-up) are accepted and change nothing.
    m = MinHash(permutations=ref.permutations)
    m.update_batch(words(5))
    assert m == ref
    assert len(ref.permutations) == 2 and len(ref.permutations[0]) == 128
    with pytest.raises(RuntimeError):
        MinHash(gpu_mode="always")
    assert MinHash(gpu_mode="detect") == MinHash()
    with pytest.warns(DeprecationWarning):
        MinHash(hashobj=object())
    with pytest.raises(ValueError):
        MinHash(hashfunc=3)


def test_hashfunc():
    def h64(b):
        return int.from_bytes(sha1(b).digest()[:8], "little")
    m = MinHash(hashfunc=h64)
    m.update(b"a")
    m.update_batch([b"b", b"c"])
    ref = MinHash()
    ref.update_hashes([h64(b"a"), h64(b"b"), h64(b"c")])
    assert as_list(m.hashvalues) == as_list(ref.hashvalues)
    bulk = MinHash.bulk([[b"a", b"b", b"c"]], hashfunc=h64)[0]
    assert as_list(bulk.hashvalues) == as_list(ref.hashvalues)
    assert m.copy().hashfunc is h64
    with pytest.raises(ValueError):
        MinHash(hashfunc=lambda b: -1).update(b"x")


def test_minhash_pickle():
    m = per_item(words(20), num_perm=64, seed=9)
    n = pickle.loads(pickle.dumps(m))
    assert n == m and n.seed == 9 and n.num_perm == 64


# ---- LeanMinHash ----------------------------------------------------------------


def test_lean_minhash():
    m = per_item(words(30))
    lean = LeanMinHash(m)
    assert lean.jaccard(m) == 1.0 and lean.seed == m.seed and len(lean) == 128
    assert lean != m  # datasketch: equality needs the same type
    assert LeanMinHash(seed=m.seed, hashvalues=m.hashvalues) == lean
    back = MinHash(seed=lean.seed, hashvalues=lean.hashvalues)
    assert back == m
    with pytest.raises(TypeError):
        lean.update(b"x")
    with pytest.raises(ValueError):
        LeanMinHash()
    assert hash(lean) == hash(LeanMinHash(m)) and {lean: 1}[LeanMinHash(m)] == 1
    assert isinstance(lean.copy(), LeanMinHash) and lean.copy() == lean
    u = LeanMinHash.union(lean, LeanMinHash(per_item(["other"])))
    assert isinstance(u, LeanMinHash)
    assert u == LeanMinHash(per_item(words(30) + ["other"]))


@pytest.mark.parametrize("order", ["@", "=", "<", ">", "!"])
def test_lean_serialize_layout(order):
    m = per_item(words(7), num_perm=32, seed=12345)
    lean = LeanMinHash(m)
    size = lean.bytesize(order)
    # minlsh's 8-byte mark, then datasketch's layout.
    assert size == 8 + struct.calcsize(order + "qi32I")
    buf = bytearray(size)
    lean.serialize(buf, byteorder=order)
    seed, k = struct.unpack_from(order + "qi", buf, 8)
    assert (seed, k) == (12345, 32)
    values = struct.unpack_from(order + "32I", buf, 8 + struct.calcsize(order + "qi"))
    assert list(values) == as_list(m.hashvalues)
    assert LeanMinHash.deserialize(buf, byteorder=order) == lean
    with pytest.raises(ValueError):
        lean.serialize(bytearray(size - 1), byteorder=order)


def test_lean_serialize_many_into_one_buffer():
    leans = [LeanMinHash(per_item(words(5, start=i))) for i in range(4)]
    size = leans[0].bytesize()
    buf = bytearray(size * len(leans))
    for i, lm in enumerate(leans):
        lm.serialize(memoryview(buf)[i * size:])
    out = [LeanMinHash.deserialize(memoryview(buf)[i * size:]) for i in range(4)]
    assert out == leans
    assert pickle.loads(pickle.dumps(leans)) == leans


# ---- MinHashLSH -------------------------------------------------------------------


def corpus(n=200, seed=3):
    """n documents; every fifth one a near-copy of the one before."""
    rng = random.Random(seed)
    docs = {}
    prev = None
    for i in range(n):
        if i % 5 == 1:
            toks = list(prev)
            toks[rng.randrange(len(toks))] = "edit%d" % i
        else:
            toks = ["d%d-%d" % (i, j) for j in range(60)]
        docs["doc%d" % i] = toks
        prev = toks
    return docs


def test_lsh_parameters():
    lsh = MinHashLSH()
    assert lsh.threshold == 0.9 and lsh.h == 128 and lsh.b * lsh.r <= 128
    lsh = MinHashLSH(num_perm=128, params=(16, 8))
    assert (lsh.b, lsh.r) == (16, 8)
    lsh = MinHashLSH(threshold=0.5, num_perm=128, weights=(0.4, 0.6))
    assert lsh.b * lsh.r <= 128 and lsh.weights == (0.4, 0.6) and lsh.threshold == 0.5
    assert lsh.params == (lsh.b, lsh.r) == minlsh.plan(0.5, 128, (0.4, 0.6))[:2]
    for bad in (dict(threshold=1.5), dict(threshold=-0.1), dict(num_perm=1),
                dict(weights=(0.5, 0.6)), dict(weights=(1.2, -0.2)),
                dict(num_perm=64, params=(9, 8)),
                dict(storage_config={"type": "redis", "redis": {}})):
        with pytest.raises(ValueError):
            MinHashLSH(**bad)
    assert MinHashLSH(storage_config={"type": "dict"}).is_empty()
    # Both ends of [0, 1] are accepted, as in datasketch.
    assert MinHashLSH(threshold=0.0, num_perm=64).params == (64, 1)
    assert MinHashLSH(threshold=1.0, num_perm=64).params == (1, 64)


def test_insert_query_remove_contains():
    docs = corpus()
    mh = dict(zip(docs, MinHash.bulk(docs.values())))
    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    assert lsh.is_empty()
    for k, m in mh.items():
        lsh.insert(k, m)
    assert not lsh.is_empty() and "doc0" in lsh and "nope" not in lsh
    res = lsh.query(mh["doc0"])
    assert isinstance(res, list) and "doc0" in res and "doc1" in res
    with pytest.raises(ValueError):
        lsh.insert("doc0", mh["doc0"])
    with pytest.raises(ValueError):
        lsh.insert("doc0", mh["doc0"], check_duplication=False)
    with pytest.raises(ValueError):
        lsh.query(MinHash(num_perm=64))
    with pytest.raises(ValueError):
        lsh.insert("x", MinHash(num_perm=64))
    lsh.remove("doc1")
    assert "doc1" not in lsh and "doc1" not in lsh.query(mh["doc0"])
    with pytest.raises(ValueError):
        lsh.remove("doc1")
    # A LeanMinHash queries like its MinHash.
    assert lsh.query(LeanMinHash(mh["doc5"])) == lsh.query(mh["doc5"])


def test_sessions_and_batches_match_single_inserts():
    docs = corpus(300)
    keys = list(docs)
    mhs = MinHash.bulk(docs.values())
    one = MinHashLSH(threshold=0.7)
    for k, m in zip(keys, mhs):
        one.insert(k, m)
    sess = MinHashLSH(threshold=0.7)
    with sess.insertion_session(buffer_size=64) as session:
        for i, (k, m) in enumerate(zip(keys, mhs)):
            session.insert(k, m)
            if i == 10:
                assert "doc3" in sess  # buffered keys are visible
        with pytest.raises(ValueError):
            session.insert(keys[-1], mhs[-1])  # already buffered (or inserted)
    many = MinHashLSH(threshold=0.7)
    many.insert_many(keys, mhs)
    mat = MinHashLSH(threshold=0.7)
    mat.insert_many(range(len(keys)), minlsh.signatures_from_tokens(docs.values()))
    expected = [one.query(m) for m in mhs]
    assert [sess.query(m) for m in mhs] == expected
    assert many.query_many(mhs) == expected
    indptr, ids = mat.query_csr(mhs)
    got = [[keys[int(i)] for i in ids[indptr[j]:indptr[j + 1]]] for j in range(len(mhs))]
    assert got == expected
    with pytest.raises(ValueError):
        many.insert_many(["new", "new"], mhs[:2])
    assert "new" not in many
    with many.deletion_session() as ds:
        for k in keys[:5]:
            ds.remove(k)
        with pytest.raises(ValueError):
            ds.remove(keys[0])
    assert len(many) == len(keys) - 5
    np = pytest.importorskip("numpy")
    with pytest.raises(ValueError):
        many.insert_many(["new"], np.full((1, 128), 1 << 32, dtype=np.int64))
    with pytest.raises(ValueError):
        many.insert_many(["new"], np.zeros((1, 64), dtype=np.uint32))


def test_query_buffer_is_an_intersection():
    docs = corpus()
    mh = dict(zip(docs, MinHash.bulk(docs.values())))
    lsh = MinHashLSH(threshold=0.5)
    lsh.insert_many(list(mh), list(mh.values()))
    assert lsh.collect_query_buffer() == []
    lsh.add_to_query_buffer(mh["doc0"])
    assert sorted(lsh.collect_query_buffer()) == sorted(lsh.query(mh["doc0"]))
    lsh.add_to_query_buffer(mh["doc0"])
    lsh.add_to_query_buffer(mh["doc1"])
    both = set(lsh.query(mh["doc0"])) & set(lsh.query(mh["doc1"]))
    assert set(lsh.collect_query_buffer()) == both and both
    assert lsh.collect_query_buffer() == []  # emptied
    with pytest.raises(ValueError):
        lsh.add_to_query_buffer(MinHash(num_perm=64))


def test_merge():
    docs = corpus(100)
    mh = dict(zip(docs, MinHash.bulk(docs.values())))
    keys = list(mh)
    a, b, whole = MinHashLSH(threshold=0.7), MinHashLSH(threshold=0.7), MinHashLSH(threshold=0.7)
    for k in keys[:50]:
        a.insert(k, mh[k])
    for k in keys[50:]:
        b.insert(k, mh[k])
    for k in keys:
        whole.insert(k, mh[k])
    a.merge(b)
    assert len(a) == 100 and len(b) == 50
    assert [sorted(a.query(m)) for m in mh.values()] == \
        [sorted(whole.query(m)) for m in mh.values()]
    with pytest.raises(ValueError):
        a.merge(b)  # overlapping keys
    with pytest.raises(ValueError):
        a.merge(b, check_overlap=True)
    with pytest.raises(ValueError):
        a.merge(MinHashLSH(threshold=0.7, num_perm=64))
    with pytest.raises(ValueError):
        a.merge(MinHashLSH(num_perm=128, params=(4, 4)))


def test_get_counts():
    docs = corpus(50)
    lsh = MinHashLSH(num_perm=128, params=(8, 16))
    lsh.insert_many(list(docs), MinHash.bulk(docs.values()))
    counts = lsh.get_counts()
    assert len(counts) == 8 and all(isinstance(c, dict) for c in counts)
    assert all(sum(c.values()) == 50 for c in counts)
    # Near-copies share some bucket: fewer buckets than documents in some band.
    assert min(len(c) for c in counts) < 50
    sub = lsh.get_subset_counts("doc0", "doc1", "doc1")
    assert len(sub) == 8 and all(sum(c.values()) == 2 for c in sub)
    # doc1 is a near-copy of doc0 (one token changed): they share most bands.
    assert sum(len(c) == 1 for c in sub) >= 4
    assert all(set(c) <= set(full) for c, full in zip(sub, counts))


def _query_all(args):
    lsh, minhashes = args
    return [lsh.query(m) for m in minhashes]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_lsh_pickle_and_multiprocessing(method):
    docs = corpus(120)
    mhs = MinHash.bulk(docs.values())
    lsh = MinHashLSH(threshold=0.6)
    with lsh.insertion_session() as s:
        for k, m in zip(docs, mhs):
            s.insert(k, m)
        s.insert(("tuple", 1), mhs[0])  # any picklable key
    lsh.remove("doc7")
    expected = [lsh.query(m) for m in mhs]
    copy = pickle.loads(pickle.dumps(lsh))
    assert [copy.query(m) for m in mhs] == expected
    assert copy.params == lsh.params and copy.threshold == lsh.threshold
    copy.insert("later", mhs[1])  # ids keep counting after the round trip
    assert "later" in copy and "later" not in lsh
    try:
        ctx = multiprocessing.get_context(method)
    except ValueError:
        pytest.skip("no %s start method" % method)
    with ctx.Pool(2) as pool:
        halves = pool.map(_query_all, [(lsh, mhs[:60]), (lsh, mhs[60:])])
    assert halves[0] + halves[1] == expected


def test_query_limited_and_pairs():
    docs = corpus(100)
    lsh = MinHashLSH(threshold=0.7)
    lsh.insert_many(list(docs), MinHash.bulk(docs.values()))
    m = MinHash.bulk([docs["doc0"]])[0]
    keys, searched = lsh.query_limited(m, 0)
    assert keys == lsh.query(m) and searched == lsh.b
    keys, searched = lsh.query_limited(m, 1)
    assert searched == 0 and keys == []
    pairs = lsh.candidate_pairs()
    assert ("doc0", "doc1") in pairs
    with pytest.raises(minlsh.ParameterError):
        lsh.candidate_pairs(max_pairs=1)


# ---- the signature matrix -----------------------------------------------------------


def test_sigmatrix_save_load_map_pairs(tmp_path):
    docs = corpus(60)
    mhs = MinHash.bulk(docs.values())
    sm = minlsh.SigMatrix(128, 1, config_id=7)
    sm.extend(mhs[:30])
    assert sm.append(mhs[30]) == 30
    sm.extend(minlsh.signatures_from_tokens(list(docs.values())[31:]))
    assert len(sm) == 60 and sm[5] == mhs[5] and sm[-1] == mhs[-1]
    assert sm.estimate(0, 1) == mhs[0].jaccard(mhs[1])
    sm.metadata = b"names"
    path = str(tmp_path / "m.sig")
    sm.save(path)
    for opened in (minlsh.SigMatrix.load(path), minlsh.SigMatrix.map(path),
                   minlsh.SigMatrix.from_bytes(sm.to_bytes()), pickle.loads(pickle.dumps(sm))):
        assert len(opened) == 60 and opened.metadata == b"names" and opened[9] == mhs[9]
    with pytest.raises(minlsh.Error) as e:
        minlsh.SigMatrix.load(path, num_perm=128, seed=1, config_id=8)
    assert e.value.code == minlsh.E_MISMATCH
    mapped = minlsh.SigMatrix.map(path)
    with pytest.raises(minlsh.Error) as e:
        mapped.append(mhs[0])
    assert e.value.code == minlsh.E_STATE
    # Banding the matrix gives the index's candidate pairs (ids = positions).
    lsh = MinHashLSH(num_perm=128, params=(16, 8))
    lsh.insert_many(range(60), mhs)
    assert minlsh.pairs_from_matrix(sm, 16, 8) == lsh.candidate_pairs()
    assert minlsh.clusters_from_matrix(sm, 16, 8) == lsh.clusters()
    with pytest.raises(minlsh.ParameterError):
        sm.pairs(16, 8, max_pairs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sm.pairs(16, 8, min_similarity=0.9) == \
            lsh.candidate_pairs(min_similarity=0.9)


def test_datasketch_docstring_examples_with_numpy():
    # datasketch's own examples feed numpy integers: their bytes are the
    # items (numpy scalars are bytes-like), with its hash and with minlsh's.
    np = pytest.importorskip("numpy")
    rng = np.random.RandomState(0)
    minhashes = MinHash.bulk(rng.randint(low=0, high=30, size=(100, 10)), num_perm=128)
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    for i, m in enumerate(minhashes):
        lsh.insert(i, m)
    query = minhashes[0]
    results = sorted(((query.jaccard(minhashes[key]), key) for key in lsh.query(query)),
                     reverse=True)
    assert results[0] == (1.0, 0)
    values = rng.randint(low=0, high=30, size=10)
    a = MinHash(num_perm=128)
    a.update_batch(values)
    b = MinHash(num_perm=128)
    for v in values:
        b.update(v)
    assert a == b
    c = MinHash(num_perm=128)
    c.update_batch([v.tobytes() for v in values])
    assert a == c


def test_query_buffers_grow_and_are_per_thread():
    import threading
    same = MinHash.bulk([["x", "y", "z"]])[0]
    other = MinHash.bulk([["p", "q"]])[0]
    lsh = MinHashLSH(threshold=0.5)
    lsh.insert_many(range(300), [same] * 300)
    lsh.insert("other", other)
    for _ in range(2):  # past the first buffer, then with the grown one
        assert lsh.query(same) == list(range(300))
        assert lsh.query(other) == ["other"]
        assert [k for k, _ in lsh.query_with_similarity(same)] == list(range(300))
    results, errors = [], []

    def worker(m, want):
        try:
            for _ in range(200):
                if lsh.query(m) != want:
                    errors.append("wrong answer")
                    return
            results.append(True)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(repr(exc))
    threads = [threading.Thread(target=worker, args=(same, list(range(300))) if i % 2 else
                                (other, ["other"])) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == 6


def test_matrix_path_with_and_without_numpy(numpy_mode):
    docs = corpus(80)
    mat = minlsh.signatures_from_tokens(docs.values(), num_perm=128)
    assert len(mat) == 80 and tuple(mat.shape) == (80, 128)
    mhs = MinHash.bulk(docs.values())
    assert [as_list(r) for r in mat] == [as_list(m.hashvalues) for m in mhs]
    lsh = MinHashLSH(threshold=0.6)
    lsh.insert_many(range(80), mat)
    indptr, ids, sims = lsh.query_csr(mat, with_similarity=True)
    assert len(indptr) == 81 and int(indptr[-1]) == len(ids) == len(sims)
    for j in range(80):
        got = [int(i) for i in ids[int(indptr[j]):int(indptr[j + 1])]]
        assert got == lsh.query(mhs[j])
        want = [s for _, s in lsh.query_with_similarity(mhs[j])]
        assert [float(s) for s in sims[int(indptr[j]):int(indptr[j + 1])]] == want
    assert lsh.query_many(mat) == lsh.query_many(mhs)
