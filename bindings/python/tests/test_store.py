"""minlsh.Store: the crawler's index (minlsh_store_*) from Python.

The fixture tests/golden/bindings/store/ (python.st and its journal and
sets) was written by write_fixture below; bindings/go/store_test.go opens
the same files, so a store made by Python is read by Go. To write it again:
MINLSH_WRITE_STORE_FIXTURE=1 pytest -k fixture (then commit the files).
"""

import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

import minlsh

from conftest import REPO

FIXTURE = os.path.join(REPO, "tests", "golden", "bindings", "store")
FIXTURE_FILES = ("python.st", "python.st.journal", "python.st.sets")


def page(i, changed=0):
    """Page i: 120 words of its own; the first `changed` words replaced."""
    words = ["w%d_%d" % (i, j) for j in range(120)]
    for j in range(changed):
        words[j] = "x%d" % j
    return " ".join(words)


FIXTURE_DOCS = [("https://example.com/a", page(1)), ("https://example.com/b", page(2)),
                (7, page(3)), ("https://example.com/d", page(4))]


def write_fixture(path):
    with minlsh.Store(path, sets=True, threshold=0.7) as s:
        for name, text in FIXTURE_DOCS[:2]:
            s.add(text, name=name)
        s.compact()  # two documents in the file, two in the journal
        for name, text in FIXTURE_DOCS[2:]:
            s.add(text, name=name)


def jaccard(a, b):
    a, b = set(a), set(b)
    return len(a & b) / len(a | b)


def test_round_trip_keeps_configuration_and_names(tmp_path):
    p = str(tmp_path / "crawl.st")
    with minlsh.Store(p, threshold=0.6, num_perm=64, shingle="word:3", lowercase=True) as s:
        r = s.add(page(1), name="u1")
        assert r.novel and r.inserted and r.id == 0 and r.match is None
        assert s.add(page(2), name=("u", 2)).id == 1
        assert s.add(page(3), name=b"\x00raw").id == 2
        r = s.add(page(1, changed=3), name="u1-copy")
        assert not r.novel and not r.inserted and r.id is None
        assert r.match == 0 and r.match_name == "u1" and r.similarity >= 0.6
        with pytest.raises(minlsh.Error) as e:
            s.add(page(4), name="u1")
        assert e.value.code == minlsh.E_EXISTS
    # the path alone: the configuration comes from the file
    with minlsh.Store(p, create=False) as s:
        assert s.threshold == pytest.approx(0.6)
        assert len(s) == 3 and s.names() == ["u1", ("u", 2), b"\x00raw"]
        assert s.id_of(("u", 2)) == 1 and s.name_of(2) == b"\x00raw"
        assert "u1" in s and "nope" not in s
        # a lowercased copy is the same page to this store's shingler
        assert not s.query(page(1).upper()).novel
    with pytest.raises(minlsh.Error) as e:
        minlsh.Store(p, threshold=0.9)
    assert e.value.code == minlsh.E_MISMATCH
    with pytest.raises(minlsh.Error) as e:
        minlsh.Store(p, key=bytes(range(16)))
    assert e.value.code == minlsh.E_MISMATCH
    with pytest.raises(minlsh.Error) as e:
        minlsh.Store(str(tmp_path / "absent.st"), create=False)
    assert e.value.code == minlsh.E_NOTFOUND


def test_remove_compact_and_second_handle(tmp_path):
    p = str(tmp_path / "s.st")
    a, b = minlsh.Store(p), minlsh.Store(p)
    for i in range(6):
        a.add(page(i), name="p%d" % i)
    assert len(b) == 0
    b.refresh()
    assert len(b) == 6
    a.remove("p2")
    a.remove_id(4)
    with pytest.raises(KeyError):
        a.remove("p2")
    assert a.query(page(2)).novel
    a.compact()
    assert b.add(page(9), name="p9").id == 6  # ids are never given twice
    a.refresh()
    assert a.items() == [(0, "p0"), (1, "p1"), (3, "p3"), (5, "p5"), (6, "p9")]
    a.close()
    b.close()
    with pytest.raises(ValueError):
        len(a)


def test_transaction_commits_or_rolls_back(tmp_path):
    p = str(tmp_path / "tx.st")
    with minlsh.Store(p) as s:
        with s.begin():
            s.add(page(1), name="a")
            s.add(page(2), name="b")
        with pytest.raises(RuntimeError):
            with s.begin():
                s.add(page(3), name="c")
                raise RuntimeError("the crawler failed mid-batch")
        assert s.names() == ["a", "b"]
        assert s.query(page(3)).novel
        s.begin()
        s.add(page(4), name="d")
        s.sync()
        s.commit()
    with minlsh.Store(p, readonly=True) as r:
        assert r.names() == ["a", "b", "d"]
        with pytest.raises(minlsh.Error) as e:
            r.add(page(5))
        assert e.value.code == minlsh.E_STATE


def test_exact_verdicts_with_sets_and_estimates_without(tmp_path):
    sh = minlsh.Shingler()  # the store's default shingler: word:5, CJK words
    base, near = page(1), page(1, changed=6)
    truth = jaccard(sh.shingles(base), sh.shingles(near))
    assert 0.8 < truth < 0.95
    with minlsh.Store(str(tmp_path / "exact.st"), sets=True, threshold=0.8) as s:
        s.add(base, name="base")
        r = s.add(near, name="near")
        assert r.exact and not r.novel
        assert r.similarity == pytest.approx(truth, abs=1e-12)
    with minlsh.Store(str(tmp_path / "estimate.st"), threshold=0.5) as s:
        s.add(base, name="base")
        r = s.query(near)
        assert not r.exact and r.match_name == "base"
        # k = 128: the estimate's standard deviation here is about 0.03
        assert abs(r.similarity - truth) < 0.15


def test_names_bytes_mode(tmp_path):
    p = str(tmp_path / "raw.st")
    with minlsh.Store(p, names="bytes") as s:
        s.add(page(1), name="https://example.com/é")
        assert s.names() == ["https://example.com/é".encode("utf-8")]
    with minlsh.Store(p) as s:  # a raw name is not a JSON token
        with pytest.raises(ValueError, match="names='bytes'"):
            s.names()


def test_options_refused(tmp_path):
    p = str(tmp_path / "o.st")
    with pytest.raises(ValueError):
        minlsh.Store(p, bands=4)
    with pytest.raises(ValueError):
        minlsh.Store(p, names="pickle")
    with pytest.raises(TypeError):
        minlsh.Store(p, key="sixteen chars!!!")
    with pytest.raises(minlsh.Error) as e:
        minlsh.Store(p, threshold=1.5)
    assert e.value.code == minlsh.E_PARAM
    assert not os.path.exists(p)


def test_fixture_written_by_python_reads_back(tmp_path):
    if os.environ.get("MINLSH_WRITE_STORE_FIXTURE"):
        os.makedirs(FIXTURE, exist_ok=True)
        for f in FIXTURE_FILES + ("python.st.lock", "python.st.compact.lock"):
            if os.path.exists(os.path.join(FIXTURE, f)):
                os.unlink(os.path.join(FIXTURE, f))
        write_fixture(os.path.join(FIXTURE, "python.st"))
        for f in ("python.st.lock", "python.st.compact.lock"):
            os.unlink(os.path.join(FIXTURE, f))
    for f in FIXTURE_FILES:
        shutil.copy(os.path.join(FIXTURE, f), str(tmp_path / f))
    with minlsh.Store(str(tmp_path / "python.st"), create=False) as s:
        assert s.items() == [(i, name) for i, (name, _) in enumerate(FIXTURE_DOCS)]
        assert s.threshold == pytest.approx(0.7)
        r = s.query(page(3, changed=4))
        assert not r.novel and r.exact and r.match_name == 7


def test_kill_keeps_every_committed_add(tmp_path):
    """A child adds pages one commit at a time and reports each id after
    add returns; kill -9 at a random point; every reported page is there."""
    p = str(tmp_path / "kill.st")
    child = textwrap.dedent("""
        import sys, minlsh
        sys.path.insert(0, %r)
        from test_store import page
        with minlsh.Store(%r, sets=True) as s:
            first = int(sys.argv[1])
            for i in range(first, first + 1000):
                r = s.add(page(i), name="p%%d" %% i)
                sys.stdout.write("%%d\\n" %% i)
                sys.stdout.flush()
    """) % (os.path.dirname(os.path.abspath(__file__)), p)
    acked = []
    for run in range(3):
        first = 1000 * run
        proc = subprocess.Popen([sys.executable, "-c", child, str(first)],
                                stdout=subprocess.PIPE, text=True)
        got = 0
        for line in proc.stdout:
            acked.append(int(line))
            got += 1
            if got >= 20 + 15 * run:
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        with minlsh.Store(p) as s:
            names = set(s.names())
            missing = [i for i in acked if "p%d" % i not in names]
            assert not missing, "%s: acknowledged pages lost: %s" % (p, missing[:10])
            assert len(names) >= len(acked)
