"""MinHash: accuracy of the estimate, merging, empties, copies, types."""

import array
import math
import pickle
import random

import pytest

import minlsh
from minlsh import _ffi

from conftest import as_list


def random_pair(rng, union, jaccard):
    """Two sets of random 64-bit hashes whose exact Jaccard is shared/union."""
    shared = round(union * jaccard)
    elems = [rng.getrandbits(64) for _ in range(union)]
    common, rest = elems[:shared], elems[shared:]
    half = len(rest) // 2
    a, b = common + rest[:half], common + rest[half:]
    return a, b, shared / union


def test_estimate_accuracy():
    rng = random.Random(20240601)
    k = 128
    errors, variances = [], []
    for i in range(600):
        a, b, j = random_pair(rng, rng.randint(200, 400), i / 599)
        seed = rng.getrandbits(64)  # a different family per pair
        ma, mb = minlsh.MinHash(k, seed), minlsh.MinHash(k, seed)
        ma.update_hashes(a)
        mb.update_hashes(b)
        errors.append(ma.jaccard(mb) - j)
        variances.append(j * (1 - j) / k)
    mean = sum(errors) / len(errors)
    rmse = math.sqrt(sum(e * e for e in errors) / len(errors))
    theory = math.sqrt(sum(variances) / len(variances))
    assert abs(mean) < 0.006, mean
    assert abs(rmse / theory - 1) < 0.2, (rmse, theory)


def test_update_items_estimate():
    words = ["w%d" % i for i in range(300)]
    a, b = minlsh.MinHash(256), minlsh.MinHash(256)
    a.update_batch(words[:200])
    b.update_batch(words[100:])
    assert abs(a.jaccard(b) - 100 / 300) < 0.1
    assert a.jaccard(a) == 1.0


def test_merge_is_union():
    a, b, u = minlsh.MinHash(), minlsh.MinHash(), minlsh.MinHash()
    a.update_batch([b"x", b"y"])
    b.update_batch([b"y", b"z"])
    u.update_batch([b"x", b"y", b"z"])
    a.merge(b)
    assert a == u


def test_empty():
    e = minlsh.MinHash()
    assert e.is_empty()
    assert as_list(e.digest()) == [0xFFFFFFFF] * 128
    m = minlsh.MinHash()
    m.update(b"x")
    assert not m.is_empty()
    assert e.jaccard(m) == 0.0 and e.jaccard(e) == 1.0  # empty sets are equal
    m.merge(e)
    assert not m.is_empty()
    m.clear()
    assert m.is_empty()
    assert "empty" in repr(m)


def test_copy_is_independent():
    a = minlsh.MinHash(64, 7)
    a.update(b"one")
    c = a.copy()
    assert c == a and c is not a
    c.update(b"two")
    assert c != a
    assert (c.num_perm, c.seed) == (64, 7)


def test_mismatch():
    a, b = minlsh.MinHash(128, 1), minlsh.MinHash(64, 1)
    with pytest.raises(ValueError, match="num_perm or seed"):
        a.jaccard(b)
    with pytest.raises(ValueError):
        a.merge(minlsh.MinHash(128, 2))
    with pytest.raises(TypeError):
        a.jaccard([1, 2, 3])


def test_bad_parameters():
    with pytest.raises(minlsh.Error) as e:
        minlsh.MinHash(num_perm=0)
    assert e.value.name == "MINLSH_E_PARAM" and isinstance(e.value, ValueError)
    with pytest.raises(minlsh.ParameterError):
        minlsh.MinHash(num_perm=minlsh.FAMILY_K_MAX + 1)
    with pytest.raises(ValueError):
        minlsh.MinHash(seed=-1)
    with pytest.raises(ValueError):
        minlsh.MinHash(seed=1 << 64)
    with pytest.raises(TypeError):
        minlsh.MinHash().update(12)
    with pytest.raises(ValueError):
        minlsh.MinHash().update_hashes([-1])


def test_digest_types(numpy_mode):
    m = minlsh.MinHash(8)
    m.update(b"a")
    d = m.digest()
    if numpy_mode == "numpy":
        assert d.dtype == _ffi.numpy.uint32 and d.shape == (8,)
    else:
        assert isinstance(d, array.array) and d.typecode == "I" and d.itemsize == 4
    assert as_list(m.hashvalues) == as_list(d)
    # the digest is a copy
    before = as_list(d)
    m.update(b"b")
    assert as_list(d) == before


def test_from_signature_round_trip():
    m = minlsh.MinHash(16, 3)
    m.update_batch([b"p", b"q"])
    n = minlsh.MinHash.from_signature(m.digest(), seed=3)
    assert n == m
    # As in datasketch, hashvalues decide num_perm.
    assert minlsh.MinHash(4, hashvalues=[1, 2, 3]).num_perm == 3
    with pytest.raises(ValueError):
        minlsh.MinHash(2, hashvalues=[1, 1 << 32])


def test_pickle():
    m = minlsh.MinHash(32, 99)
    m.update(b"pickled")
    n = pickle.loads(pickle.dumps(m))
    assert n == m and n.seed == 99 and n.num_perm == 32
    e = minlsh.Error(minlsh.E_CORRUPT, "minlsh_index_load", "x")
    e2 = pickle.loads(pickle.dumps(e))
    assert (e2.code, e2.name, str(e2)) == (e.code, e.name, str(e))


def test_from_text_matches_signatures():
    texts = ["a b c d e f g", "a b c d e f h", ""]
    sigs = minlsh.signatures(texts, num_perm=32, seed=5, shingle="word:3")
    for t, row in zip(texts, sigs):
        m = minlsh.MinHash.from_text(t, num_perm=32, seed=5, shingle="word:3")
        assert as_list(m.digest()) == as_list(row)


def test_signatures_options_and_errors(numpy_mode):
    texts = ["Hello, World!  Again", "hello world again"]
    sigs = minlsh.signatures(texts, num_perm=16, shingle="word:2", lowercase=True,
                             strip_punct=True)
    assert as_list(sigs[0]) == as_list(sigs[1])
    # a document over max_document_bytes: an error naming it, or an empty row
    long = ["short one", "x" * 100, "another short"]
    with pytest.raises(minlsh.Error) as e:
        minlsh.signatures(long, num_perm=16, max_document_bytes=50)
    assert e.value.name == "MINLSH_E_TOOBIG" and "document 1" in str(e.value)
    got = minlsh.signatures(long, num_perm=16, max_document_bytes=50, errors="empty")
    assert as_list(got[1]) == [0xFFFFFFFF] * 16
    assert as_list(got[0]) != [0xFFFFFFFF] * 16
    # no documents
    empty = minlsh.signatures([], num_perm=16)
    assert tuple(empty.shape) == (0, 16)
    with pytest.raises(ValueError):
        minlsh.signatures(["a"], threads=-1)
    with pytest.raises(TypeError):
        minlsh.signatures([1, 2])
    with pytest.raises(TypeError, match="iterable of documents"):
        minlsh.signatures("one document, not a list")


def test_signature_matrix_without_numpy(monkeypatch):
    monkeypatch.setattr(_ffi, "numpy", None)
    m = minlsh.signatures(["a b c d e", "f g h i j", "a b c d e"], num_perm=8)
    assert isinstance(m, minlsh.SignatureMatrix)
    assert m.shape == (3, 8) and len(m) == 3
    assert m[0].tolist() == m[2].tolist() and m[0].format == "I"
    assert m[1, 3] == m[1][3] and m[-1, -1] == m[2][7]
    assert len(m.memoryview()) == 24 and len(m.tobytes()) == 96
    assert m.tolist()[1] == list(m[1])
    with pytest.raises(IndexError):
        m[3]
    # rows go straight into an index
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=8)
    for i, row in enumerate(m):
        lsh.insert(i, row)
    assert lsh.query(m[0]) == [0, 2]
