"""The optional C accelerator minlsh._speedups: the same bytes, signatures and
query results as the Python paths it replaces, and how it is found.

Tests that compare the two paths need the module; they are skipped (with
the reason) when it is not in use. check.sh runs the suite once with it and
once without (MINLSH_EXPECT_SPEEDUPS says which run this is)."""

import ctypes
import functools
import os
import pickle
import random
import subprocess
import sys

import pytest

import minlsh
from minlsh import _ffi, _lsh, _minhash


sp = _ffi.speedups
needs_speedups = pytest.mark.skipif(
    sp is None, reason="the accelerator minlsh._speedups is not in use (not built, or "
    "MINLSH_SPEEDUPS=0): nothing to compare with the Python paths")
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(minlsh.__file__)))


def test_which_accelerator_is_in_use():
    assert (minlsh.SPEEDUPS is None) == (sp is None)
    expected = os.environ.get("MINLSH_EXPECT_SPEEDUPS")
    if not expected:
        pytest.skip("MINLSH_EXPECT_SPEEDUPS not set")
    if expected == "0":
        assert minlsh.SPEEDUPS is None
    else:
        assert minlsh.SPEEDUPS and os.path.samefile(minlsh.SPEEDUPS, expected)
        assert sp.API == _ffi.SPEEDUPS_API and sp.E_BUFSIZE == _ffi.E_BUFSIZE


def run_import(speedups):
    env = {k: v for k, v in os.environ.items() if k != "MINLSH_SPEEDUPS"}
    env.update(PYTHONPATH=PKG_PARENT, MINLSH_LIBRARY=minlsh.LIBRARY, MINLSH_SPEEDUPS=speedups,
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-c", "import minlsh; print(minlsh.SPEEDUPS)"],
                          env=env, capture_output=True, text=True, timeout=60)


def test_minlsh_speedups_variable(tmp_path):
    # 0 turns it off, even when installed; a path is used or the import fails
    # (never a silent fallback to what the caller did not ask for).
    r = run_import("0")
    assert r.returncode == 0 and r.stdout.strip() == "None", r.stderr
    r = run_import(str(tmp_path / "nope.so"))
    assert r.returncode != 0 and "MINLSH_SPEEDUPS" in r.stderr and "nope.so" in r.stderr
    r = run_import(os.path.realpath(minlsh.LIBRARY))  # a shared object, not the module
    assert r.returncode != 0 and "ImportError" in r.stderr and "MINLSH_SPEEDUPS" in r.stderr
    if sp is not None:
        r = run_import(minlsh.SPEEDUPS)
        assert r.returncode == 0 and os.path.samefile(r.stdout.strip(), minlsh.SPEEDUPS)


# ---- join_tokens against _minhash._joined -------------------------------------

class Str(str):
    pass


class Bytes(bytes):
    pass


BIG = "x" * (3 << 20) + "\u00e9"

CASES = [
    [],
    [[]],
    [[], [], []],
    [["a"]],
    [["a", "b"], [], ["c"]],
    [[""], ["", ""], []],
    [["caf\u00e9", "na\u00efve"], ["\u4e2d\u6587", "\U0001F600 emoji \U0001F468\u200d\U0001F469"]],
    [["a\0b", "c"], ["\0"]],                       # NUL inside tokens (E_PARAM, then offsets)
    [("tuple", "doc"), ["list"]],
    (["docs", "as"], ["a", "tuple"]),
    [[b"by", b"tes"], [], [b""], [b"\xff\x00\x80"]],
    [[BIG, "y"], [BIG]],
    [[Str("sub"), "class"]],
]


@needs_speedups
@pytest.mark.parametrize("docs", CASES, ids=range(len(CASES)))
def test_join_tokens_matches_joined(docs):
    got = sp.join_tokens(docs)
    assert type(got) is bytes and got == _minhash._joined(docs)


NOT_HERE = [
    [["str", b"bytes"]],
    [["str"], [b"bytes"]],
    [[b"bytes"], ["\ud800"]],           # mixed: None, not an encoding error
    [["\ud800"], [b"bytes"]],
    [[bytearray(b"ba")]],
    [[b"a", memoryview(b"mv")]],
    [[Bytes(b"sub")]],
    [["a", 3]],
    [iter(["not", "a", "list"])],
    [["ok"], "a str is no document"],
    iter([["docs"], ["iterator"]]),
    "not docs",
]


@needs_speedups
@pytest.mark.parametrize("docs", NOT_HERE, ids=range(len(NOT_HERE)))
def test_join_tokens_leaves_other_inputs_to_python(docs):
    assert sp.join_tokens(docs) is None


@needs_speedups
def test_join_tokens_lone_surrogates():
    for docs in ([["\ud800"]], [["ok", "a\udfffb"]], [["fine"], [], ["x", "\udc80"]]):
        with pytest.raises(UnicodeEncodeError):
            _minhash._joined(docs)
        with pytest.raises(UnicodeEncodeError):
            sp.join_tokens(docs)


@needs_speedups
def test_join_tokens_random():
    rnd = random.Random(5)
    alphabet = ["a", "b", "\0", "\u00e9", "\u4e2d", "\U0001F600", " ", ""]
    for _ in range(300):
        docs = [["".join(rnd.choices(alphabet, k=rnd.randrange(6)))
                 for _ in range(rnd.randrange(5))] for _ in range(rnd.randrange(6))]
        if rnd.random() < 0.3:
            docs = [[t.encode("utf-8") for t in d] for d in docs]
        assert sp.join_tokens(docs) == _minhash._joined(docs)


@needs_speedups
def test_join_tokens_references():
    # No reference is taken or lost, on success or on an encoding error.
    tok, bad = "t\u00e9st-token", "bad\ud800"
    docs = [[tok, tok], [tok]]
    before = sys.getrefcount(tok), sys.getrefcount(bad)
    for _ in range(1000):
        sp.join_tokens(docs)
        with pytest.raises(UnicodeEncodeError):
            sp.join_tokens([[tok, bad]])
    assert (sys.getrefcount(tok), sys.getrefcount(bad)) == before


# ---- signatures with and without ------------------------------------------------

def corpus(seed, n=150):
    rnd = random.Random(seed)
    words = ["w%d" % i for i in range(300)] + ["caf\u00e9", "\u4e2d\u6587", "\U0001F600"]
    return [[" ".join(rnd.choices(words, k=3)) for _ in range(rnd.randrange(0, 60))]
            for _ in range(n)]


@needs_speedups
@pytest.mark.parametrize("scheme", ["classic", "oph"])
@pytest.mark.parametrize("helper", ["_sign_minhashes_fast", "_sign_tokens_fast",
                                    "_join_tokens_fast"])
def test_signatures_identical(monkeypatch, scheme, helper):
    docs = corpus(1)
    variants = {
        "str": docs,
        "bytes": [[t.encode("utf-8") for t in d] for d in docs],
        "nul": [d + ["with\0nul"] if i % 7 == 0 else d for i, d in enumerate(docs)],
        "mixed": [[t.encode("utf-8") if j % 2 else t for j, t in enumerate(d)] for d in docs],
        "tuples": [tuple(d) for d in docs],
    }
    # Each helper is reached with the ones tried before it turned off.
    if helper != "_sign_minhashes_fast":
        monkeypatch.setattr(_minhash, "_sign_minhashes_fast", None)
    if helper == "_join_tokens_fast":  # the join when sign_tokens is not there
        monkeypatch.setattr(_minhash, "_sign_tokens_fast", None)
    results = []
    fast = getattr(_minhash, helper)
    monkeypatch.setattr(_minhash, helper, lambda *a: results.append(fast(*a)) or results[-1])
    with_fast = {name: ([m.hashvalues.tolist() for m in
                         minlsh.MinHash.bulk(v, num_perm=64, scheme=scheme)],
                        minlsh.signatures_from_tokens(v, num_perm=64, scheme=scheme).tolist())
                 for name, v in variants.items()}
    assert results  # the accelerator was asked
    if helper == "_sign_tokens_fast":  # and signed every variant itself
        assert all(r is True for r in results), results
    if helper == "_sign_minhashes_fast":  # made every object itself
        assert all(type(r) is list for r in results), results
    monkeypatch.setattr(_minhash, "_sign_minhashes_fast", None)
    monkeypatch.setattr(_minhash, "_sign_tokens_fast", None)
    monkeypatch.setattr(_minhash, "_join_tokens_fast", None)
    for name, v in variants.items():
        bulk = [m.hashvalues.tolist() for m in minlsh.MinHash.bulk(v, num_perm=64, scheme=scheme)]
        matrix = minlsh.signatures_from_tokens(v, num_perm=64, scheme=scheme).tolist()
        assert with_fast[name] == (bulk, matrix), name
    # and both equal token-by-token updates (the definition)
    for d, row in zip(docs[:20], with_fast["str"][0]):
        if scheme == "classic":
            m = minlsh.MinHash(num_perm=64)
            m.update_batch(d)
            assert m.hashvalues.tolist() == row


@needs_speedups
def test_sign_tokens_leaves_other_inputs_to_python():
    fam = _minhash.family(16, 1)
    out = bytearray(4 * 16 * 2)
    addr = (ctypes.c_char * len(out)).from_buffer(out)
    for docs in ([["a"], "not a list"], [["a", 1]], [["a", "\ud800"]], [["a"], [bytearray(b"b")]],
                 iter([["a"]])):
        assert sp.sign_tokens(fam.handle, None, docs, ctypes.addressof(addr), 16) is None, docs
    # and the Python path still raises what is due
    with pytest.raises(UnicodeEncodeError):
        minlsh.MinHash.bulk([["a", "\ud800"]], num_perm=16)
    assert sp.sign_tokens(fam.handle, None, [["a"], []], ctypes.addressof(addr), 16) is True
    assert list(memoryview(out).cast("I")[16:]) == [minlsh.EMPTY_VALUE] * 16


class SubMinHash(minlsh.MinHash):
    pass


def minhash_state(m):
    return type(m), m._family, bytes(m._sig), type(m._sig), m._hashfunc


@needs_speedups
@pytest.mark.parametrize("cls", [minlsh.MinHash, SubMinHash])
def test_sign_minhashes_objects(monkeypatch, cls):
    # Documents of every size around the group bounds (64 documents, 8,192
    # tokens), empty ones, str and bytes: the objects _from_raw makes.
    rnd = random.Random(3)
    docs = [["t%d" % rnd.randrange(500) for _ in range(rnd.choice([0, 1, 5, 40, 3000]))]
            for _ in range(300)]
    docs[7] = [t.encode("utf-8") for t in docs[7]]
    fam = _minhash.family(64, 7, "oph")
    made = sp.sign_minhashes(fam.handle, docs, 64, cls, fam, fam.sig_type,
                             _minhash._MINHASH_SLOTS)
    assert type(made) is list and len(made) == len(docs)
    raw = _minhash._sign_token_lists(fam, docs)
    expected = [cls._from_raw(fam, raw, 4 * 64 * i) for i in range(len(docs))]
    assert [minhash_state(m) for m in made] == [minhash_state(m) for m in expected]
    assert all(m._family is fam for m in made)
    # through the idiom, batch by batch
    got = cls.bulk(docs, num_perm=64, seed=7, scheme="oph", batch_size=50)
    assert [minhash_state(m) for m in got] == [minhash_state(m) for m in expected]
    assert [minhash_state(m) for m in cls.generator(iter(docs), num_perm=64, seed=7,
                                                     scheme="oph")] == \
        [minhash_state(m) for m in expected]
    # objects that work as any other
    assert made[1] == expected[1] and made[1].jaccard(expected[1]) == 1.0
    assert pickle.loads(pickle.dumps(made[2])) == expected[2]


@needs_speedups
def test_sign_minhashes_declines():
    fam = _minhash.family(16, 1)
    slots = _minhash._MINHASH_SLOTS
    for docs in ([["a"], "not a list"], [["a", 1]], [["a", "\ud800"]], [[bytearray(b"b")]],
                 iter([["a"]]), "abc"):
        assert sp.sign_minhashes(fam.handle, docs, 16, minlsh.MinHash, fam, fam.sig_type,
                                 slots) is None, docs
    ok = [["a"], []]
    assert len(sp.sign_minhashes(fam.handle, ok, 16, minlsh.MinHash, fam, fam.sig_type,
                                 slots)) == 2
    for bad in [dict(slots=slots[:2]), dict(slots=(slots[0], slots[1], "x")),
                dict(sig_type=ctypes.c_uint32 * 15), dict(sig_type=int), dict(cls=42),
                dict(handle=0), dict(k=0)]:
        args = dict(handle=fam.handle, docs=ok, k=16, cls=minlsh.MinHash, fam=fam,
                    sig_type=fam.sig_type, slots=slots)
        args.update(bad)
        assert sp.sign_minhashes(*args.values()) is None, bad
    # MinHash.bulk still raises what is due
    with pytest.raises(TypeError):
        minlsh.MinHash.bulk([["a"], "not a list"], num_perm=16)
    with pytest.raises(UnicodeEncodeError):
        minlsh.MinHash.bulk([["a", "\ud800"]], num_perm=16)


@needs_speedups
def test_sign_minhashes_references():
    fam = _minhash.family(16, 1, "oph")
    tok = "t\u00e9st-token"
    docs = [[tok, "x"], [tok]]
    before = sys.getrefcount(tok), sys.getrefcount(fam)
    for _ in range(500):
        made = sp.sign_minhashes(fam.handle, docs, 16, minlsh.MinHash, fam, fam.sig_type,
                                 _minhash._MINHASH_SLOTS)
        assert len(made) == 2
        del made
        assert sp.sign_minhashes(fam.handle, [[tok, 1]], 16, minlsh.MinHash, fam,
                                 fam.sig_type, _minhash._MINHASH_SLOTS) is None
    assert (sys.getrefcount(tok), sys.getrefcount(fam)) == before


# ---- insertion sessions with and without -------------------------------------------

def session_state(lsh):
    return lsh._pending, lsh._pending_keys, lsh._key_to_id, lsh._id_to_key


@needs_speedups
def test_session_insert_identical(monkeypatch):
    docs = corpus(4, 200)
    mhs = minlsh.MinHash.bulk(docs, num_perm=64)
    keys = [("t", i) if i % 3 else "k%d" % i for i in range(len(docs))]
    calls = []
    slow = _lsh.MinHashLSH._session_insert
    monkeypatch.setattr(_lsh.MinHashLSH, "_session_insert",
                        lambda self, *a, **kw: calls.append(a) or slow(self, *a, **kw))
    states, answers = [], []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(_lsh, "_fast_session_insert", None)
        lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64)
        with lsh.insertion_session(buffer_size=70) as s:
            assert isinstance(s.insert, functools.partial) == fast
            for i, (k, m) in enumerate(zip(keys, mhs)):
                if i % 5 == 1:
                    s.insert(k, m, check_duplication=False)
                elif i % 5 == 2:
                    s.insert(k, m, True)
                else:
                    s.insert(k, m)
                if i == 100:
                    states.append([dict(x) if isinstance(x, dict) else list(x) if
                                   isinstance(x, list) else set(x) for x in session_state(lsh)])
        answers.append([lsh.query(m) for m in mhs])
        if fast:
            assert calls == []  # every insert made in C
    assert states[0] == states[1] and answers[0] == answers[1]
    assert len(calls) == len(docs)


@needs_speedups
def test_session_insert_hands_over():
    m = minlsh.MinHash.bulk([["a", "b"]], num_perm=64)[0]
    other_seed = minlsh.MinHash.bulk([["a", "b"]], num_perm=64, seed=2)[0]
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64)
    with lsh.insertion_session() as s:
        s.insert("a", m)
        with pytest.raises(ValueError, match="already exists"):
            s.insert("a", m)                      # pending
        with pytest.raises(ValueError):
            s.insert("b", other_seed)             # another family
        with pytest.raises(TypeError):
            s.insert(["unhashable"], m)
        with pytest.raises(TypeError):
            s.insert("c", m, check_duplication=True, extra=1)
        with pytest.raises(TypeError):
            s.insert("c")
        s.insert(key="d", minhash=m)              # by name: the Python method
        s.insert("e", minlsh.LeanMinHash(m))
        s.insert("f", m.hashvalues)               # values, not a MinHash
    assert sorted(lsh.keys) == ["a", "d", "e", "f"]
    with lsh.insertion_session() as s:
        with pytest.raises(ValueError, match="already exists"):
            s.insert("a", m)                      # indexed
    with pytest.raises(TypeError):
        sp.session_insert((minlsh.MinHash,))


@needs_speedups
def test_session_insert_references():
    m = minlsh.MinHash.bulk([["a", "b"]], num_perm=64)[0]
    key = ("a", "key")
    before = sys.getrefcount(key), sys.getrefcount(m)
    for _ in range(300):
        lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64)
        with lsh.insertion_session(buffer_size=1) as s:
            s.insert(key, m)
            with pytest.raises(ValueError):
                s.insert(key, m)
        del lsh, s
    assert (sys.getrefcount(key), sys.getrefcount(m)) == before


# ---- queries with and without ------------------------------------------------------

def all_queries(lsh, mhs):
    return [lsh.query(m) for m in mhs]


@needs_speedups
def test_queries_identical(monkeypatch):
    docs = corpus(2, 300)
    # near-copies, so that queries have several candidates
    docs += [d[:-1] + ["changed"] for d in docs[:100]]
    mhs = minlsh.MinHash.bulk(docs, num_perm=128)
    keys = [i if i % 4 == 0 else "k%d" % i if i % 4 == 1 else ("t", i) if i % 4 == 2
            else b"b%d" % i for i in range(len(docs))]
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=128)
    with lsh.insertion_session() as s:
        for k, m in zip(keys, mhs):
            s.insert(k, m)
    answered = []
    fast = _lsh._fast_query

    def spy(*args):
        r = fast(*args)
        answered.append(r is not None)
        return r
    monkeypatch.setattr(_lsh, "_fast_query", spy)
    got = all_queries(lsh, mhs)
    for k in keys[::3]:
        lsh.remove(k)
    got_removed = all_queries(lsh, mhs)
    assert answered and all(answered)  # every query went through the accelerator
    assert sum(map(len, got)) > len(docs) + 50  # the near-copies found each other
    monkeypatch.setattr(_lsh, "_fast_query", None)
    lsh2 = minlsh.MinHashLSH(threshold=0.5, num_perm=128)
    with lsh2.insertion_session() as s:
        for k, m in zip(keys, mhs):
            s.insert(k, m)
    assert all_queries(lsh2, mhs) == got
    assert all_queries(lsh, mhs) == got_removed


@needs_speedups
def test_query_more_candidates_than_buffers(monkeypatch):
    # 700 copies of one document: more than the accelerator's stack buffer
    # (256 ids) and the Python path's first buffer (64).
    m = minlsh.MinHash.bulk([["same", "tokens"]], num_perm=64)[0]
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64)
    for i in range(700):
        lsh.insert(("doc", i) if i % 2 else i, m)
    fast_keys = sp.query(lsh._handle, m._sig, lsh._id_to_key)
    assert fast_keys == [("doc", i) if i % 2 else i for i in range(700)]
    assert lsh.query(m) == fast_keys
    monkeypatch.setattr(_lsh, "_fast_query", None)
    assert lsh.query(m) == fast_keys


@needs_speedups
def test_query_declines():
    m = minlsh.MinHash.bulk([["a", "b"]], num_perm=64)[0]
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64)
    lsh.insert("a", m)
    h = lsh._handle
    assert sp.query(h, m._sig, lsh._id_to_key) == ["a"]
    assert sp.query(h, m._sig, {}) is None                      # an id without a key
    assert sp.query(h, m._sig, dict(lsh._id_to_key)) == ["a"]
    assert sp.query(h, m._sig, list(lsh._id_to_key)) is None    # not a dict
    assert sp.query(0, m._sig, lsh._id_to_key) is None          # NULL handle
    assert sp.query(-1, m._sig, lsh._id_to_key) is None         # not an address
    assert sp.query(h, b"abc", lsh._id_to_key) is None          # not uint32 values
    assert sp.query(h, bytes(m._sig)[:-4], lsh._id_to_key) is None  # 63 values: E_PARAM
    assert sp.query(h, 42, lsh._id_to_key) is None              # no buffer
    with pytest.raises(TypeError):
        sp.query(h, m._sig)
    with pytest.raises(ValueError):
        sp.bind(0, 1)
    with pytest.raises(ValueError):
        sp.bind(1, 0)
    with pytest.raises(TypeError):
        sp.bind(1)
    # A key missing from the mapping sends MinHashLSH.query down the locked
    # path, which raises as it always did.
    ident = next(iter(lsh._id_to_key))
    del lsh._id_to_key[ident]
    with pytest.raises(KeyError):
        lsh.query(m)


@needs_speedups
def test_query_references():
    m = minlsh.MinHash.bulk([["a", "b"]], num_perm=64)[0]
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=64)
    key = ("a", "key")
    lsh.insert(key, m)
    before = sys.getrefcount(key), sys.getrefcount(m._sig)
    for _ in range(2000):
        assert lsh.query(m) == [key]
        assert sp.query(lsh._handle, m._sig, {}) is None
    assert (sys.getrefcount(key), sys.getrefcount(m._sig)) == before
