"""Mapped indexes and journals from Python: MinHashLSH.map, save(mapped=True),
MinHashLSH.open_journal / Journal (round trips, what a kill keeps, compaction),
and that a mapped index with inserts answers as the loaded one."""

import os
import subprocess
import sys
import textwrap

import pytest

import minlsh


def minhash_of(words, num_perm=64):
    m = minlsh.MinHash(num_perm)
    m.update_batch(words)
    return m


def family_docs(n_families=12, size=5, noise=30):
    """Near-duplicate families (hot buckets) and unrelated documents, with
    keys of every saveable type."""
    docs = {}
    for f in range(n_families):
        base = ["f%d-%d" % (f, i) for i in range(60)]
        for m in range(size):
            words = list(base)
            words[m] = "f%d-m%d" % (f, m)
            key = ("fam", f, m) if m % 2 else "f%d/%d" % (f, m)
            docs[key] = minhash_of(words)
    for n in range(noise):
        key = n if n % 3 else b"noise-%d" % n
        docs[key] = minhash_of(["n%d-%d" % (n, i) for i in range(60)])
    return docs


def answers(lsh, probes, limits=(0, 1, 2, 5, 9, 20)):
    out = []
    for m in probes:
        out.append(lsh.query(m))
        out.append(lsh.query_with_similarity(m))
        for lim in limits:
            out.append(lsh.query_limited(m, lim))
    return out


def build(docs):
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64)
    for key, m in docs.items():
        lsh.insert(key, m)
    return lsh


def test_map_answers_as_loaded(tmp_path):
    docs = family_docs()
    lsh = build(docs)
    path = str(tmp_path / "ix.mlsh")
    lsh.save(path, mapped=True)
    mapped = minlsh.MinHashLSH.map(path, num_perm=64)
    loaded = minlsh.MinHashLSH.load(path, num_perm=64)
    assert mapped.keys() == loaded.keys() == lsh.keys()
    assert mapped.threshold == 0.5
    probes = list(docs.values())
    assert answers(mapped, probes) == answers(loaded, probes) == answers(lsh, probes)
    # Inserts go to the delta: the same answers as the loaded index with them.
    extra = family_docs(n_families=4, size=4, noise=5)
    for key, m in extra.items():
        key = ("new", key)
        mapped.insert(key, m)
        loaded.insert(key, m)
    mapped.insert_many([("many", i) for i in range(3)], list(extra.values())[:3])
    loaded.insert_many([("many", i) for i in range(3)], list(extra.values())[:3])
    probes += list(extra.values())
    assert answers(mapped, probes) == answers(loaded, probes)
    assert len(mapped) == len(loaded)
    # A key of the file cannot leave a mapped index; a delta key can.
    with pytest.raises(minlsh.Error) as exc:
        mapped.remove("f0/0")
    assert exc.value.code == minlsh.E_STATE
    mapped.remove(("many", 1))
    loaded.remove(("many", 1))
    assert answers(mapped, probes[:10]) == answers(loaded, probes[:10])
    # save of the mapped index (its delta included) loads back equal.
    path2 = str(tmp_path / "ix2.mlsh")
    mapped.save_mapped(path2)
    again = minlsh.MinHashLSH.map(path2)
    assert again.keys() == loaded.keys()
    assert answers(again, probes[:10]) == answers(loaded, probes[:10])
    for x in (mapped, loaded, again):
        x.close()


def test_journal_round_trip(tmp_path):
    docs = family_docs()
    path = str(tmp_path / "crawl.mlsh")
    jpath = path + ".journal"
    build(docs).save(path, mapped=True)
    new = family_docs(n_families=3, size=3, noise=4)
    ref = minlsh.MinHashLSH.load(path)
    with minlsh.FileLock(path):
        lsh = minlsh.MinHashLSH.map(path)
        with lsh.open_journal(jpath) as journal:
            for key, m in new.items():
                novelty = lsh.insert_if_novel(("crawl", key), m)
                ref.insert_if_novel(("crawl", key), m)
                assert novelty.novel == (("crawl", key) in lsh)
            lsh.insert(b"\x00raw", minhash_of(["raw"]))
            ref.insert(b"\x00raw", minhash_of(["raw"]))
            lsh.remove(b"\x00raw")
            ref.remove(b"\x00raw")
            with lsh.insertion_session() as session:
                session.insert(("session", 1), minhash_of(["s1"]))
            ref.insert(("session", 1), minhash_of(["s1"]))
            assert journal.records > 0
            journal.sync()
            assert not journal.compact_due()
        lsh.close()
    # A reader (another handle) replays what was synced.
    with minlsh.FileLock(path, shared=True):
        reader = minlsh.MinHashLSH.map(path)
        with reader.open_journal(jpath, mode="r") as journal:
            with pytest.raises(minlsh.Error) as exc:
                journal.sync()
            assert exc.value.code == minlsh.E_STATE
    assert reader.keys() == ref.keys()
    probes = list(docs.values())[:20] + list(new.values())
    assert answers(reader, probes) == answers(ref, probes)
    # New keys continue after the replayed ones.
    reader.insert("later", minhash_of(["later"]))
    ref.insert("later", minhash_of(["later"]))
    assert reader.query(minhash_of(["later"])) == ["later"]


def test_kill_keeps_synced_records_only(tmp_path):
    path = str(tmp_path / "kill.mlsh")
    build(family_docs(n_families=2, noise=3)).save(path, mapped=True)
    child = textwrap.dedent("""
        import os, signal, sys
        import minlsh
        path = sys.argv[1]
        def mh(w):
            m = minlsh.MinHash(64)
            m.update_batch(w)
            return m
        lsh = minlsh.MinHashLSH.map(path)
        j = lsh.open_journal(path + ".journal")
        lsh.insert("synced", mh(["a", "b"]))
        j.sync()
        lsh.insert("unsynced", mh(["c", "d"]))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", child, path], env=dict(os.environ))
    assert proc.returncode == -9
    lsh = minlsh.MinHashLSH.map(path)
    lsh.open_journal(path + ".journal").close()  # a writer: cuts any torn tail
    assert "synced" in lsh
    assert "unsynced" not in lsh
    assert lsh.query(minhash_of(["a", "b"])) == ["synced"]


def test_compact(tmp_path):
    path = str(tmp_path / "c.mlsh")
    jpath = path + ".journal"
    build(family_docs(n_families=2, noise=3)).save(path, mapped=True)
    size0 = os.path.getsize(path)
    lsh = minlsh.MinHashLSH.map(path)
    journal = lsh.open_journal(jpath)
    for i in range(20):
        lsh.insert(("c", i), minhash_of(["c%d" % i, "x"]))
    journal.sync()
    assert journal.records == 20
    journal.compact(path)
    assert journal.records == 0
    assert os.path.getsize(path) > size0
    lsh.insert("after", minhash_of(["after"]))
    journal.sync()
    journal.close()
    keys = lsh.keys()
    lsh.close()
    # The file has the 20, the fresh journal the one after.
    again = minlsh.MinHashLSH.map(path)
    assert ("c", 7) in again and "after" not in again
    with again.open_journal(jpath, "r") as j:
        assert j.records == 1
    assert again.keys() == keys


def test_journal_refusals(tmp_path):
    path = str(tmp_path / "r.mlsh")
    build(family_docs(n_families=2, noise=3)).save(path, mapped=True)
    lsh = minlsh.MinHashLSH.load(path)  # loaded: file keys can be removed
    journal = lsh.open_journal(path + ".journal")
    with pytest.raises(ValueError):
        lsh.open_journal(path + ".journal")  # one recorder at a time
    n = len(lsh)
    with pytest.raises(TypeError):
        lsh.insert(object(), minhash_of(["o"]))  # no JSON form: nothing changes
    assert len(lsh) == n
    lsh.remove("f0/0")
    other = minlsh.MinHashLSH(threshold=0.5, num_perm=64)
    other.insert("merged", minhash_of(["m1", "m2"]))
    lsh.merge(other)
    journal.sync()
    lsh.close()  # closes the journal too
    with pytest.raises(ValueError):
        journal.sync()
    back = minlsh.MinHashLSH.load(path)
    back.open_journal(path + ".journal", "r").close()
    assert "f0/0" not in back and "merged" in back
    assert back.query(minhash_of(["m1", "m2"])) == ["merged"]
    with pytest.raises(ValueError):
        back.open_journal(path + ".journal", "a")
