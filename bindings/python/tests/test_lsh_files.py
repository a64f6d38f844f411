"""MinHashLSH's files: a store's (docs/format.md "Store"), read by minlsh.Store,
the command and Go; the files 0.1's binding wrote (JSON key metadata) still load.

tests/golden/bindings/minhashlsh/ holds both: *-0.1.mlsh were written by
0.1's binding (write.py there), saved-0.2.mlsh by write_fixture below, which
this suite checks byte for byte; bindings/go/store_test.go and
tests/index_minhashlsh.sh open it. To write it again (a format change):
MINLSH_WRITE_LSH_FIXTURE=1 pytest -k fixture (then commit the file).
"""

import os
import shutil

import pytest

import minlsh

from conftest import REPO

GOLDEN = os.path.join(REPO, "tests", "golden", "bindings", "minhashlsh")

# What 0.1's files hold (write.py): keys of every saveable type, -7 removed.
KEYS_0_1 = ["text", 42, 2 ** 70, 3.5, True, None, b"\x00bytes\xff", ("tuple", 1, (2.5, None)),
            (), "ünïcödé", ""]


def mh(tokens, seed=11):
    m = minlsh.MinHash(num_perm=64, seed=seed)
    for t in tokens:
        m.update(t.encode())
    return m


def test_files_of_0_1_load(tmp_path):
    lsh = minlsh.MinHashLSH.load(os.path.join(GOLDEN, "saved-0.1.mlsh"))
    assert lsh.keys() == KEYS_0_1
    assert (lsh.threshold, lsh.weights, lsh.num_perm, lsh.seed, lsh.config_id) == \
        (0.6, (0.4, 0.6), 64, 11, 0x1234)
    assert lsh.query(mh(["w0", "x0", "y", "z"])) == ["text", 42]
    # mapped, with its journal (a copy: a reader's open leaves files alone,
    # but the test must not depend on it)
    for name in ("mapped-0.1.mlsh", "mapped-0.1.mlsh.journal"):
        shutil.copy(os.path.join(GOLDEN, name), tmp_path / name)
    mapped = minlsh.MinHashLSH.map(tmp_path / "mapped-0.1.mlsh")
    with mapped.open_journal(tmp_path / "mapped-0.1.mlsh.journal", "r"):
        pass
    assert mapped.keys() == KEYS_0_1 + ["journaled"]
    assert mapped.query(mh(["w0", "x0", "y", "z", "extra"])) == ["text", "journaled"]
    # saved again: the store's format, with the same keys and ids
    mapped.save(tmp_path / "again.mlsh")
    back = minlsh.MinHashLSH.load(tmp_path / "again.mlsh")
    assert back.keys() == KEYS_0_1 + ["journaled"]
    assert [back._key_to_id[k] for k in back.keys()] == \
        [mapped._key_to_id[k] for k in mapped.keys()]
    assert back.threshold == 0.6 and back.weights is None  # the store keeps no weights
    with open(tmp_path / "again.mlsh", "rb") as f:
        assert b"minlsh store\n" in f.read()


def test_saved_file_is_a_store(tmp_path):
    lsh = minlsh.MinHashLSH(threshold=0.6, num_perm=64, seed=11, config_id=0x1234)
    for i, key in enumerate(KEYS_0_1):
        lsh.insert(key, mh(["w%d" % i, "y", "z"]))
    lsh.remove(42)
    path = str(tmp_path / "lsh.mlsh")
    lsh.save(path, mapped=True)
    # config id 0x1234 is no shingling's under the default key: names and
    # counts read with any_key, texts refused
    with pytest.raises(minlsh.Error) as e:
        minlsh.Store(path, readonly=True)
    assert e.value.name == "MINLSH_E_MISMATCH"
    with minlsh.Store(path, readonly=True, any_key=True) as st:
        assert len(st) == len(KEYS_0_1) - 1 and st.threshold == 0.6
        assert st.names() == [k for k in KEYS_0_1 if k != 42]
        assert st.id_of(("tuple", 1, (2.5, None))) == lsh._key_to_id[("tuple", 1, (2.5, None))]
        with pytest.raises(minlsh.Error) as e:
            st.query("some text")
        assert e.value.name == "MINLSH_E_MISMATCH"
    with pytest.raises(ValueError, match="any_key"):
        minlsh.Store(path, any_key=True)
    # a threshold given as params only: the banding's own is recorded
    p = minlsh.MinHashLSH(threshold=None, num_perm=64, params=(8, 8), seed=11)
    p.insert("a", mh(["a"]))
    p.save(tmp_path / "p.mlsh")
    assert minlsh.MinHashLSH.load(tmp_path / "p.mlsh").threshold == pytest.approx(
        (1 / 8) ** (1 / 8), rel=1e-12)


def write_fixture(path):
    """MinHashes of texts under the default shingling, with its config id:
    a store on the file takes texts as well (the command's index query)."""
    sh = minlsh.Shingler()
    lsh = minlsh.MinHashLSH(threshold=0.7, num_perm=128, config_id=sh.config_id)
    for key, text in FIXTURE_DOCS:
        lsh.insert(key, minlsh.MinHash.from_text(text))
    lsh.remove("https://example.org/removed")
    lsh.save(path, mapped=True)


def page(i):
    return " ".join("w%d_%d" % (i, j) for j in range(80))


FIXTURE_DOCS = [("https://example.org/a", page(1)), ("https://example.org/removed", page(9)),
                (7, page(2)), (("pair", 2), page(3)), ("https://example.org/d", page(4))]


def test_fixture_written_by_minhashlsh(tmp_path):
    path = os.path.join(GOLDEN, "saved-0.2.mlsh")
    if os.environ.get("MINLSH_WRITE_LSH_FIXTURE") == "1":
        write_fixture(path)
    write_fixture(str(tmp_path / "now.mlsh"))
    with open(path, "rb") as f1, open(tmp_path / "now.mlsh", "rb") as f2:
        assert f1.read() == f2.read(), "MinHashLSH.save's bytes changed: %s" % path
    shutil.copy(path, tmp_path / "s.mlsh")
    with minlsh.Store(tmp_path / "s.mlsh", create=False) as st:
        assert st.names() == ["https://example.org/a", 7, ("pair", 2), "https://example.org/d"]
        r = st.query(page(2))
        assert r.match_name == 7 and r.similarity == 1.0 and not r.novel
        # the store adds texts; MinHashLSH reads them through the journal
        assert st.add(page(5), "https://example.org/e").inserted
    m = minlsh.MinHashLSH.map(tmp_path / "s.mlsh")
    with m.open_journal(str(tmp_path / "s.mlsh") + ".journal", "r"):
        pass
    assert m.keys()[-1] == "https://example.org/e"
    assert m.query(minlsh.MinHash.from_text(page(5))) == ["https://example.org/e"]


def test_journal_compaction_writes_a_store(tmp_path):
    path = str(tmp_path / "c.mlsh")
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64, seed=11)
    lsh.insert("a", mh(["a"]))
    lsh.save(path, mapped=True)
    m = minlsh.MinHashLSH.map(path)
    with m.open_journal(path + ".journal") as j:
        m.insert("b", mh(["b"]))
        j.compact(path)
    back = minlsh.MinHashLSH.load(path)
    assert back.keys() == ["a", "b"]
    with minlsh.Store(path, readonly=True, any_key=True) as st:
        assert st.names() == ["a", "b"]
