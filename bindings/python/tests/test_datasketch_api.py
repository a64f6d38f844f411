"""Each public method datasketch documents for the classes minlsh claims
(MinHash, LeanMinHash, MinHashLSH and its sessions), called as a datasketch
user's code calls it, one test per method or attribute; and the places where
datasketch's own data meets minlsh (bytes, pickles) refused with an error
that names datasketch and says how to re-sign. Written from datasketch's
documentation; test_datasketch_compat.py checks the wider behaviour."""

import io
import pickle
import struct
import sys
import types

import pytest

import minlsh
from minlsh import LeanMinHash, MinHash, MinHashLSH

from conftest import as_list

try:
    import numpy
except ImportError:  # the suite also runs without numpy
    numpy = None


def mh(tokens, num_perm=128, seed=1):
    m = MinHash(num_perm=num_perm, seed=seed)
    m.update_batch(tokens)
    return m


def words(n, start=0):
    return ["w%d" % i for i in range(start, start + n)]


# ---- MinHash -------------------------------------------------------------------


def test_minhash_init_arguments():
    m = MinHash(num_perm=64, seed=7, gpu_mode="disable", hashfunc=None, hashobj=None,
                hashvalues=None, permutations=None)
    assert (m.num_perm, m.seed, len(m)) == (64, 7, 64)
    assert len(MinHash(hashvalues=[1, 2, 3])) == 3
    with pytest.raises(ValueError):  # datasketch: permutations of another length
        MinHash(num_perm=64, permutations=MinHash(num_perm=32).permutations)


def test_minhash_update():
    m = MinHash()
    m.update(b"a")
    m.update("a")  # str as its UTF-8 bytes
    assert not m.is_empty() and m == mh([b"a"])


def test_minhash_update_batch():
    m = MinHash()
    m.update_batch([b"a", b"b"])
    ref = MinHash()
    ref.update(b"a")
    ref.update(b"b")
    assert m == ref


def test_minhash_jaccard():
    a, b = mh(words(100)), mh(words(100, 50))
    assert abs(a.jaccard(b) - 50 / 150) < 0.12
    assert a.jaccard(a) == 1.0


def test_minhash_jaccard_of_empty_ones_as_datasketch():
    # datasketch: equal hash values, so 1.0; an empty and a non-empty one: 0.
    assert MinHash().jaccard(MinHash()) == 1.0
    assert MinHash().jaccard(mh(["x"])) == 0.0
    assert LeanMinHash(MinHash()).jaccard(MinHash()) == 1.0


def test_minhash_count():
    assert abs(mh(words(2000), num_perm=256).count() - 2000) / 2000 < 0.15


def test_minhash_merge():
    a, b = mh(words(10)), mh(words(10, 5))
    a.merge(b)
    assert a == mh(words(15))
    with pytest.raises(ValueError):
        a.merge(MinHash(seed=2))


def test_minhash_digest_and_hashvalues():
    m = mh(words(3), num_perm=16)
    assert as_list(m.digest()) == as_list(m.hashvalues) and len(m.digest()) == 16
    m.hashvalues = list(range(16))
    assert as_list(m.digest()) == list(range(16))


def test_minhash_is_empty_clear_copy_len_eq():
    m = mh(words(3))
    c = m.copy()
    assert c == m and c is not m and len(c) == 128
    m.clear()
    assert m.is_empty() and m != c and m == MinHash()


def test_minhash_union_bulk_generator():
    docs = [words(5), words(5, 3)]
    assert MinHash.bulk(docs) == [mh(d) for d in docs]
    assert list(MinHash.generator(docs)) == [mh(d) for d in docs]
    assert MinHash.union(*MinHash.bulk(docs)) == mh(words(8))


def test_minhash_permutations_shaped_as_datasketch():
    m = MinHash(num_perm=32, seed=3)
    p = m.permutations
    a, b = p  # datasketch: a, b = self.permutations
    assert len(a) == len(b) == 32
    assert all(1 <= x < 2 ** 61 - 1 for x in a) and all(0 <= x < 2 ** 61 - 1 for x in b)
    if numpy is not None:
        assert p.shape == (2, 32) and p.dtype == numpy.uint64
    # Passing them on (datasketch's speed-up) changes nothing.
    assert MinHash(num_perm=32, seed=3, permutations=p) == m


def test_minhash_seed_and_num_perm_up_to_9000():
    # Published pipelines (Lee et al. 2022) use 9,000 hash values.
    m = mh(words(500), num_perm=9000)
    n = mh(words(500, 250), num_perm=9000)
    assert len(m) == 9000 and m.seed == 1
    # J = 250/750, standard error sqrt(J(1-J)/9000) = 0.005.
    assert abs(m.jaccard(n) - 1 / 3) < 4 * 0.005
    assert pickle.loads(pickle.dumps(m)) == m
    assert minlsh.FAMILY_K_MAX >= 9000
    with pytest.raises(ValueError):
        MinHash(num_perm=minlsh.FAMILY_K_MAX + 1)


# ---- LeanMinHash -------------------------------------------------------------------


def test_lean_init_and_update():
    m = mh(words(5))
    lean = LeanMinHash(m)
    assert LeanMinHash(seed=m.seed, hashvalues=m.hashvalues) == lean
    with pytest.raises(TypeError):
        lean.update(b"x")


def test_lean_merge_as_datasketch():
    lean = LeanMinHash(mh(words(5)))
    lean.merge(mh(words(5, 5)))
    assert lean == LeanMinHash(mh(words(10)))
    lean.merge(LeanMinHash(mh(["x"])))
    assert lean == LeanMinHash(mh(words(10) + ["x"]))
    with pytest.raises(ValueError):
        lean.merge(MinHash(seed=2))


def test_lean_copy_hash_union_clear():
    lean = LeanMinHash(mh(words(5)))
    c = lean.copy()
    assert isinstance(c, LeanMinHash) and c == lean and hash(c) == hash(lean)
    u = LeanMinHash.union(lean, LeanMinHash(mh(["y"])))
    assert isinstance(u, LeanMinHash) and u == LeanMinHash(mh(words(5) + ["y"]))
    c.clear()
    assert c.is_empty() and not lean.is_empty()


@pytest.mark.parametrize("order", ["@", "=", "<", ">", "!"])
def test_lean_bytesize_serialize_deserialize(order):
    lean = LeanMinHash(mh(words(7), num_perm=32, seed=12345))
    size = lean.bytesize(order)
    buf = bytearray(size)
    lean.serialize(buf, byteorder=order)
    # minlsh's mark, then datasketch's layout.
    assert bytes(buf[:4]) == b"mlsh" and buf[4] == 1 and buf[5] == 0
    assert struct.unpack_from(order + "qi", buf, 8) == (12345, 32)
    assert size == 8 + struct.calcsize(order + "qi32I")
    assert LeanMinHash.deserialize(buf, byteorder=order) == lean
    with pytest.raises(ValueError):
        lean.serialize(bytearray(size - 1), byteorder=order)


def test_lean_serialize_keeps_the_scheme():
    lean = LeanMinHash(MinHash.bulk([words(50)], scheme="oph")[0])
    buf = bytearray(lean.bytesize())
    lean.serialize(buf)
    back = LeanMinHash.deserialize(buf)
    assert back.scheme == "oph" and back == lean
    assert pickle.loads(pickle.dumps(lean)).scheme == "oph"


def datasketch_bytes(seed, values, order="@"):
    """What datasketch's LeanMinHash.serialize writes (its documented
    schema: the seed, the number of values, the values)."""
    return struct.pack("%sqi%dI" % (order, len(values)), seed, len(values), *values)


def test_lean_refuses_datasketch_bytes():
    raw = datasketch_bytes(1, list(range(128)))
    with pytest.raises(ValueError, match="datasketch") as e:
        LeanMinHash.deserialize(raw)
    assert "re-sign" in str(e.value).lower() or "Re-sign" in str(e.value)
    assert "MinHash.bulk" in str(e.value)
    # minlsh 0.1.0 wrote the same layout: legacy=True vouches for them.
    back = LeanMinHash.deserialize(raw, legacy=True)
    assert back.seed == 1 and as_list(back.hashvalues) == list(range(128))


def test_lean_pickle_and_old_minlsh_pickles():
    lean = LeanMinHash(mh(words(9), num_perm=64, seed=5))
    assert pickle.loads(pickle.dumps(lean)) == lean
    # minlsh 0.1.0 pickled a LeanMinHash as bytes in the plain layout.
    old = object.__new__(LeanMinHash)
    old.__setstate__(datasketch_bytes(5, as_list(lean.hashvalues), "<"))
    assert old == lean


# datasketch's pickles, as its classes make them: a MinHash pickles its
# __dict__, a LeanMinHash a bytearray (its __getstate__), a MinHashLSH its
# __dict__ with the band hash as a bound method. A module named like
# datasketch's stands in for it; the unpickler maps its classes to minlsh's,
# as a program that swapped the import for minlsh's sees them.


def fake_datasketch():
    mod = types.ModuleType("datasketch_stand_in")

    class FakeMinHash:
        def __init__(self):
            self.seed, self.hashfunc = 1, None
            self.hashvalues = [7] * 16
            self.permutations = ([1] * 16, [0] * 16)

    class FakeLeanMinHash:
        def __reduce_ex__(self, protocol):
            state = bytearray(datasketch_bytes(1, [7] * 16))
            return (object.__new__, (FakeLeanMinHash,), state)

    class FakeMinHashLSH:
        def __init__(self):
            self.h, self.b, self.r = 128, 16, 8
            self.hashtables, self.hashranges = [{}], [(0, 8)]
            self._H = self._byteswap

        def _byteswap(self, hs):
            return hs

    for cls, name in ((FakeMinHash, "MinHash"), (FakeLeanMinHash, "LeanMinHash"),
                      (FakeMinHashLSH, "MinHashLSH")):
        cls.__module__, cls.__qualname__, cls.__name__ = mod.__name__, name, name
        setattr(mod, name, cls)
    return mod


class AsMinlsh(pickle.Unpickler):
    def find_class(self, module, name):
        if module == "datasketch_stand_in":
            return getattr(minlsh, name)
        return super().find_class(module, name)


@pytest.mark.parametrize("name", ["MinHash", "LeanMinHash", "MinHashLSH"])
def test_datasketch_pickles_refused_with_a_way_out(name):
    mod = fake_datasketch()
    sys.modules[mod.__name__] = mod
    try:
        raw = pickle.dumps(getattr(mod, name)())
    finally:
        del sys.modules[mod.__name__]
    with pytest.raises(ValueError, match="datasketch") as e:
        AsMinlsh(io.BytesIO(raw)).load()
    assert "MinHash.bulk" in str(e.value)


# ---- MinHashLSH ----------------------------------------------------------------------


def small_lsh(n=6):
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    for i in range(n):
        lsh.insert("k%d" % i, mh(words(40, 1000 * i)))
    return lsh


def test_lsh_init_arguments():
    lsh = MinHashLSH(threshold=0.5, num_perm=64, weights=(0.5, 0.5), params=None,
                     storage_config={"type": "dict"}, prepickle=None, hashfunc=None)
    assert lsh.h == 64 and lsh.b * lsh.r <= 64
    assert MinHashLSH(num_perm=64, params=(8, 8)).params == (8, 8)


def test_lsh_insert_query_remove_contains_is_empty():
    lsh = MinHashLSH(threshold=0.5)
    assert lsh.is_empty()
    a = mh(words(50))
    lsh.insert("a", a, check_duplication=True)
    assert "a" in lsh and lsh.query(mh(words(50))) == ["a"]
    with pytest.raises(ValueError):
        lsh.insert("a", a)
    lsh.remove("a")
    assert "a" not in lsh and lsh.is_empty()
    with pytest.raises(ValueError):
        lsh.remove("a")


def test_lsh_keys_as_datasketch_storage():
    lsh = small_lsh(4)
    assert "k1" in lsh.keys and "zz" not in lsh.keys
    assert list(lsh.keys) == ["k0", "k1", "k2", "k3"]
    assert set(lsh.keys.keys()) == {"k0", "k1", "k2", "k3"}
    assert len(lsh.keys) == lsh.keys.size() == 4 and lsh.keys.has_key("k2")
    # minlsh's own spelling keeps working.
    assert lsh.keys() == ["k0", "k1", "k2", "k3"]
    # Band keys per key, one per band.
    assert len(lsh.keys.get("k0")) == lsh.b == len(lsh.keys["k0"])
    assert lsh.keys.itemcounts() == {k: lsh.b for k in lsh.keys}
    with pytest.raises(KeyError):
        lsh.keys.get("zz")
    lsh.remove("k1")
    assert "k1" not in lsh.keys and len(lsh.keys) == 3  # a live view


def test_lsh_merge():
    a, b = small_lsh(2), MinHashLSH(threshold=0.5)
    b.insert("other", mh(["o"]))
    a.merge(b)
    assert "other" in a and len(a.keys) == 3
    with pytest.raises(ValueError):
        a.merge(b)


def test_lsh_insertion_and_deletion_sessions():
    lsh = MinHashLSH(threshold=0.5)
    with lsh.insertion_session(buffer_size=2) as s:
        for i in range(5):
            s.insert("k%d" % i, mh(words(30, 100 * i)))
    assert len(lsh.keys) == 5
    with lsh.deletion_session() as d:
        d.remove("k0")
    assert "k0" not in lsh
    assert lsh.buffer_size == 50000
    lsh.buffer_size = 10
    assert lsh.buffer_size == 10


def test_lsh_query_buffer():
    lsh = small_lsh()
    lsh.add_to_query_buffer(mh(words(40, 2000)))
    assert lsh.collect_query_buffer() == ["k2"]


def test_lsh_get_counts_and_subset_counts():
    lsh = small_lsh(3)
    counts = lsh.get_counts()
    assert len(counts) == lsh.b and all(sum(c.values()) == 3 for c in counts)
    sub = lsh.get_subset_counts("k0", "k1")
    assert all(sum(c.values()) == 2 for c in sub)


def test_lsh_pickle():
    lsh = small_lsh(3)
    back = pickle.loads(pickle.dumps(lsh))
    assert list(back.keys) == list(lsh.keys) and back.query(mh(words(40))) == ["k0"]


def test_lsh_at_9000_values():
    # Lee et al.'s setting: 20 bands of 450 rows.
    lsh = MinHashLSH(num_perm=9000, params=(20, 450))
    base = words(1000)
    lsh.insert("a", mh(base, num_perm=9000))
    lsh.insert("b", mh(words(1000, 5000), num_perm=9000))
    assert lsh.query(mh(base + ["one more"], num_perm=9000)) == ["a"]
