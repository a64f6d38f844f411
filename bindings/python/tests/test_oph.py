"""One-permutation hashing (scheme="oph"): the values of the C library's
specification (tests/ref_minhash.py, the Python reference of
docs/minhash.md section 7), every signing path agreeing, refusal to extend
or to mix schemes, and the index keeping its scheme."""

import importlib.util
import os
import pickle

import pytest

import minlsh

from conftest import as_list

_REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
                    "ref_minhash.py")


def ref():
    spec = importlib.util.spec_from_file_location("ref_minhash", _REF)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


DOCS = [["a", "b", "c"], ["the", "quick", "brown", "fox"] * 3, [], ["x"],
        ["w%d" % i for i in range(500)]]


@pytest.mark.parametrize("k", [1, 16, 128])
def test_bulk_matches_the_reference(k):
    r = ref()
    got = minlsh.MinHash.bulk(DOCS, num_perm=k, seed=5, scheme="oph")
    for doc, m in zip(DOCS, got):
        hashes = [minlsh.siphash24(minlsh.DEFAULT_KEY, t) for t in doc]
        assert as_list(m.digest()) == r.oph_signature(5, k, hashes)
        assert m.scheme == "oph"
    rows = minlsh.signatures_from_tokens(DOCS, num_perm=k, seed=5, scheme="oph")
    assert [as_list(row) for row in rows] == [as_list(m.digest()) for m in got]


def test_texts_and_estimate():
    texts = ["one two three four five six seven eight nine ten eleven twelve",
             "one two three four five six seven eight nine ten eleven thirteen", ""]
    rows = minlsh.signatures(texts, num_perm=64, shingle="word:2", scheme="oph")
    ms = [minlsh.MinHash.from_text(t, num_perm=64, shingle="word:2", scheme="oph")
          for t in texts]
    assert [as_list(r) for r in rows] == [as_list(m.digest()) for m in ms]
    classic = minlsh.MinHash.from_text(texts[0], num_perm=64, shingle="word:2")
    assert as_list(classic.digest()) != as_list(ms[0].digest())
    assert 0.5 < ms[0].jaccard(ms[1]) < 1.0
    assert ms[0].jaccard(ms[2]) == 0.0 and ms[2].is_empty()
    with pytest.raises(ValueError):
        ms[0].jaccard(classic)
    assert ms[0] != minlsh.MinHash(64, hashvalues=ms[0].digest())
    assert ms[0] == minlsh.MinHash.from_signature(ms[0].digest(), scheme="oph")


def test_oph_cannot_be_extended():
    m = minlsh.MinHash(32, scheme="oph")
    for call in (lambda: m.update(b"x"), lambda: m.update_batch([b"x"]),
                 lambda: m.update_hashes([1, 2]), lambda: m.merge(m.copy())):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(ValueError):
        minlsh.MinHash(32, scheme="fast")
    back = pickle.loads(pickle.dumps(minlsh.MinHash.bulk([["a"]], num_perm=8, scheme="oph")[0]))
    assert back.scheme == "oph" and repr(back).endswith("scheme='oph')")
    assert pickle.loads(pickle.dumps(minlsh.MinHash(8))).scheme == "classic"


def test_index_keeps_its_scheme(tmp_path):
    docs = {"a": ["w%d" % i for i in range(300)],
            "b": ["w%d" % i for i in range(1, 301)],
            "c": ["v%d" % i for i in range(300)]}
    ms = dict(zip(docs, minlsh.MinHash.bulk(docs.values(), num_perm=128, scheme="oph")))
    lsh = minlsh.MinHashLSH(threshold=0.8, num_perm=128, scheme="oph")
    assert lsh.scheme == "oph"
    for key, m in ms.items():
        lsh.insert(key, m)
    assert sorted(lsh.query(ms["a"])) == ["a", "b"]
    with pytest.raises(ValueError):
        lsh.insert("d", minlsh.MinHash.bulk([docs["c"]], num_perm=128)[0])
    with pytest.raises(ValueError):
        minlsh.MinHashLSH(threshold=0.8, num_perm=128).insert("a", ms["a"])
    path = str(tmp_path / "oph.mlx")
    lsh.save(path)
    back = minlsh.MinHashLSH.load(path)
    assert back.scheme == "oph" and sorted(back.query(ms["b"])) == ["a", "b"]
    assert minlsh.MinHashLSH.load(path, scheme="oph").scheme == "oph"
    with pytest.raises(minlsh.Error) as e:
        minlsh.MinHashLSH.load(path, num_perm=128)
    assert e.value.code == minlsh.E_MISMATCH


def test_dedup_with_oph():
    base = " ".join("w%d" % i for i in range(200))
    docs = [base, base.replace("w7 ", "x7 "), " ".join("v%d" % i for i in range(200))]
    got = minlsh.dedup(docs, threshold=0.8, scheme="oph", shingler="word:5")
    want = minlsh.dedup(docs, threshold=0.8, shingler="word:5")
    assert [d.kept for d in got.decisions] == [d.kept for d in want.decisions] == [True, False,
                                                                                  True]


def test_sigmatrix_keeps_its_scheme(tmp_path):
    ms = minlsh.MinHash.bulk([["a", "b", "c"], ["a", "b", "d"]], num_perm=16, scheme="oph")
    m = minlsh.SigMatrix(16, scheme="oph")
    m.extend(ms)
    assert m.scheme == "oph" and m[1] == ms[1] and m[1].scheme == "oph"
    with pytest.raises(ValueError):
        m.append(minlsh.MinHash.bulk([["a"]], num_perm=16)[0])
    with pytest.raises(ValueError):
        minlsh.SigMatrix(16).append(ms[0])
    path = str(tmp_path / "oph.mx")
    m.save(path)
    for back in (minlsh.SigMatrix.load(path), minlsh.SigMatrix.map(path),
                 minlsh.SigMatrix.from_bytes(m.to_bytes()),
                 minlsh.SigMatrix.load(path, num_perm=16, scheme="oph")):
        assert back.scheme == "oph" and back[0] == ms[0]
    with pytest.raises(minlsh.Error) as e:
        minlsh.SigMatrix.load(path, num_perm=16)
    assert e.value.code == minlsh.E_MISMATCH
    assert minlsh.pairs_from_matrix(ms, 4, 4) == m.pairs(4, 4)
