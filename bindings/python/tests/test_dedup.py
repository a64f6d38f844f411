"""minlsh.dedup: the library's dedup engine from Python.

On a planted corpus (tests/cli/gen_corpus.py) the decisions, pairs and
clusters equal those of ``minlsh dedup`` with the same options; results do
not depend on the thread count or the batch size; the keep and group
policies hold; bad options and documents raise ValueError.

The comparisons need the command: MINLSH_PROGRAM, else the minlsh installed
beside the library (PREFIX/bin next to PREFIX/lib), else build/minlsh.
"""

import json
import os
import subprocess
import sys

import pytest

import minlsh

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
GEN = os.path.join(REPO, "tests", "cli", "gen_corpus.py")


def _program():
    env = os.environ.get("MINLSH_PROGRAM")
    if env:
        return env
    for path in (os.path.join(os.path.dirname(minlsh.LIBRARY), "..", "bin", "minlsh"),
                 os.path.join(REPO, "build", "minlsh")):
        if os.access(path, os.X_OK):
            return os.path.abspath(path)
    pytest.skip("no minlsh command found (set MINLSH_PROGRAM)")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The generated corpus: (directory, records of corpus.jsonl). Its one
    empty document, which the command reports and skips, is left out of
    clean.jsonl (the records keep it)."""
    out = tmp_path_factory.mktemp("dedup-corpus")
    subprocess.run([sys.executable, GEN, "--seed", "7", "--out", str(out), "--singletons", "120",
                    "--families", "30", "--vocab", "3000"], check=True)
    with open(out / "corpus.jsonl", encoding="utf-8") as f:
        lines = f.readlines()
    records = [json.loads(line) for line in lines]
    with open(out / "clean.jsonl", "w", encoding="utf-8") as f:
        f.writelines(line for line, r in zip(lines, records) if _has_shingles(r["text"]))
    return out, records


def _has_shingles(text):
    return len(minlsh.Shingler("word", 5).shingles(text)) > 0


def _command(*args):
    proc = subprocess.run([_program(), "dedup", "--quiet", "--format", "jsonl"] + list(args),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _as_records(result):
    return [{"id": d.id, "cluster": d.cluster, "decision": "kept" if d.kept else "dropped",
             "representative": d.representative, "similarity": d.similarity,
             "exact": d.exact} for d in result.decisions]


POLICIES = [("first", "components", "exact"), ("first", "strict", "exact"),
            ("first", "components", "signature"), ("first", "strict", "signature")]


@pytest.mark.parametrize("keep,group,verify", POLICIES)
def test_same_as_command_jsonl(corpus, keep, group, verify):
    """JSON Lines records as mappings: decisions, pairs and clusters equal
    the command's (its empty document is skipped by the command, so it is
    left out here too). keep=longest is compared on files: with --jsonl the
    command measures the JSON line, not the text."""
    out, records = corpus
    docs = [r for r in records if _has_shingles(r["text"])]
    assert len(docs) == len(records) - 1
    with minlsh.dedup(docs, keep=keep, group=group, verify=verify, threads=2,
                      batch_size=64) as res:
        opts = ["--jsonl", "--keep", keep, "--group", group, "--verify", verify,
                "--bands", str(res.stats["bands"]), "--rows", str(res.stats["rows"]),
                str(out / "clean.jsonl")]
        assert _as_records(res) == _command("--output", "decisions", *opts)
        pairs = _command("--output", "pairs", *opts)
        assert [(p["a"], p["b"], p["similarity"]) for p in pairs] == res.pairs()
        clusters = _command("--output", "clusters", *opts)
        assert [c["members"] for c in clusters] == res.clusters()
        assert res.stats["documents"] == len(docs)
        assert res.stats["kept"] == len(res.kept)
        assert res.stats["dropped"] == len(res.dropped) > 0


@pytest.mark.parametrize("group", ["components", "strict"])
def test_same_as_command_files_longest(corpus, group):
    """(id, text) tuples, keep=longest: the command's document length is the
    file's size, the text's UTF-8 bytes here."""
    out, records = corpus
    files = sorted(os.listdir(out / "files"))
    docs = []
    for name in files:
        path = str(out / "files" / name)
        with open(path, "rb") as f:
            data = f.read()
        if _has_shingles(data):
            docs.append((path, data))
    res = minlsh.dedup(iter(docs), keep="longest", group=group, threads=1)
    got = _command("--output", "decisions", "--keep", "longest", "--group", group,
                   "--bands", str(res.stats["bands"]), "--rows", str(res.stats["rows"]),
                   *[p for p, _ in docs])
    assert _as_records(res) == got


def test_thread_and_batch_invariance(corpus):
    _, records = corpus
    texts = [r["text"] for r in records]
    base = minlsh.dedup(texts, threads=1, batch_size=len(texts))
    for threads, batch in ((2, 1), (2, 7), (4, 1000), (0, 33)):
        res = minlsh.dedup(texts, threads=threads, batch_size=batch)
        assert res.decisions == base.decisions
        assert res.pairs() == base.pairs()
        assert res.clusters() == base.clusters()
        stats = dict(res.stats, bytes=0)
        assert stats == dict(base.stats, bytes=0)


def test_memory_budget_same_answer(corpus, tmp_path):
    _, records = corpus
    texts = [r["text"] for r in records]
    base = minlsh.dedup(texts)
    assert base.stats["temp_bytes"] == 0
    for memory in (1, 100000):
        res = minlsh.dedup(texts, memory=memory, tmpdir=str(tmp_path), threads=2)
        assert res.decisions == base.decisions
        assert res.pairs() == base.pairs()
        assert res.stats["temp_bytes"] > 0
        assert res.stats["bytes"] < base.stats["bytes"]
    assert list(tmp_path.iterdir()) == []  # unlinked at creation


def test_policies(corpus):
    """Strict: every dropped document is within the threshold of a kept
    representative, and no verified pair joins two kept documents.
    Longest: each cluster keeps a document no shorter than any other.
    Decisions are consistent with the kept/dropped lists and clusters."""
    _, records = corpus
    docs = [(r["id"], r["text"]) for r in records]
    length = {i: len(t.encode("utf-8")) for i, t in docs}
    strict = minlsh.dedup(docs, group="strict")
    kept = set(strict.kept)
    for d in strict.decisions:
        if d.kept:
            assert d.representative == d.id and d.similarity == 1.0 and not d.exact
        else:
            assert d.representative in kept and d.similarity >= 0.8
    for a, b, s in strict.pairs():
        assert s >= 0.8
        assert not (a in kept and b in kept)
    comp = minlsh.dedup(docs, keep="longest")
    by_id = {d.id: d for d in comp.decisions}
    for n, members in enumerate(comp.clusters(), 1):
        rep = [m for m in members if by_id[m].kept]
        assert len(rep) == 1
        assert all(length[rep[0]] >= length[m] for m in members)
        assert all(by_id[m].cluster == n and by_id[m].representative == rep[0]
                   for m in members)
    in_cluster = {m for c in comp.clusters() for m in c}
    assert all(d.cluster == 0 for d in comp.decisions if d.id not in in_cluster)
    assert comp.kept + comp.dropped != [] and len(comp.kept) + len(comp.dropped) == len(docs)
    assert [d.id for d in comp.decisions] == [i for i, _ in docs] == comp.ids
    # The strict policy never keeps fewer documents than components.
    assert len(strict.kept) >= len(comp.kept)


def test_small_and_mixed_inputs():
    fox = "the quick brown fox jumps over the lazy dog near the river bank today"
    docs = [fox, fox.encode(), ("x", fox.replace("today", "again")), {"id": "y", "text": ""},
            {"id": "z", "text": b""}, bytearray(b"something else entirely, nothing shared")]
    res = minlsh.dedup(docs, threshold=0.5)
    assert res.ids == [0, 1, "x", "y", "z", 5]
    d = {x.id: x for x in res}
    assert d[0].kept and not d[1].kept and d[1].exact and d[1].representative == 0
    assert not d["x"].kept and not d["x"].exact and 0.5 <= d["x"].similarity < 1
    # Documents without shingles are nobody's copy: each is kept, alone.
    assert d["y"].kept and d["z"].kept and d["y"].cluster == 0 and d["z"].cluster == 0
    assert d[5].kept and d[5].cluster == 0
    assert res.clusters() == [[0, 1, "x"]]
    assert res.stats["empty"] == 2 and res.stats["exact_groups"] == 1
    assert repr(res).startswith("DedupResult(documents=6")
    res.close()
    res.close()
    with pytest.raises(minlsh.Error):
        res.pairs()
    assert res.clusters() == [[0, 1, "x"]]  # still there
    empty = minlsh.dedup([])
    assert empty.decisions == [] and empty.pairs() == [] and empty.clusters() == []
    assert minlsh.dedup(["a b c"], id_field="key", text_field="body").ids == [0]
    assert minlsh.dedup([{"key": 1, "body": "a"}], id_field="key", text_field="body").ids == [1]


def test_shingler_and_family_options():
    texts = ["Hello, World! hello world", "hello world hello world"]
    loose = minlsh.Shingler("word", 2, normalize=True)
    assert minlsh.dedup(texts, shingler=loose).dropped == [1]
    assert minlsh.dedup(texts, shingler="word:2").dropped == []
    assert minlsh.dedup(texts, num_perm=64, seed=5, bands=16, rows=4).stats["bands"] == 16


@pytest.mark.parametrize("kwargs", [
    {"keep": "last"}, {"group": "all"}, {"verify": "maybe"}, {"threshold": 0.0},
    {"threshold": 1.5}, {"bands": 4}, {"rows": 4}, {"bands": 20, "rows": 20},
    {"num_perm": 0}, {"num_perm": 100000}, {"threads": -1}, {"max_bucket": -1},
    {"max_bucket": 1}, {"batch_size": 0}, {"seed": -1},
])
def test_bad_options(kwargs):
    with pytest.raises(ValueError):
        minlsh.dedup(["a text"], **kwargs)


def test_ids_as_the_command_takes_them():
    """A repeated id (1 and 1.0 are one) or an id that is not a string or a
    number is skipped, counted and warned about, as minlsh dedup skips it."""
    docs = [(1, "one two three four five six"), ("a", "x"), (1.0, "again"), ("a", "y"),
            (True, "a bool"), (None, "none"), (("t",), "tuple"), ("\u0031", "a string 1"),
            (float("nan"), "nan")]
    with pytest.warns(UserWarning, match="2 documents repeat an earlier id and 4 have"):
        res = minlsh.dedup(docs)
    assert res.ids == [1, "a", "1"]
    assert res.stats["repeated_ids"] == 2 and res.stats["refused_ids"] == 4
    assert res.stats["documents"] == 3
    with pytest.warns(UserWarning, match="1 documents repeat"):
        assert minlsh.dedup(["zero", (0, "again")]).ids == [0]


def test_bad_documents():
    with pytest.raises(ValueError, match="'text'"):
        minlsh.dedup([{"id": 1}])
    with pytest.raises(ValueError):
        minlsh.dedup([(1, 2, 3)])
    with pytest.raises(TypeError):
        minlsh.dedup([42])
    with pytest.raises(TypeError):
        minlsh.dedup("one string is not a list of documents")
    with pytest.raises(TypeError):
        minlsh.dedup(["x"], shingler=3)
    small = minlsh.Shingler("word", 1, max_document_bytes=8)
    with pytest.raises(minlsh.ParameterError, match=r"document 1 \(id 'long'\)") as exc:
        minlsh.dedup([("short", "a b"), ("long", "a b c d e f g h")], shingler=small)
    assert exc.value.code == minlsh.E_TOOBIG


def test_read_jsonl_as_command(tmp_path):
    """minlsh.read_jsonl reads a file as `minlsh dedup --jsonl` does (the
    library's reader): a byte-order mark, CRLF, blank lines, refused lines
    (not JSON, a true id, no text, a number text, invalid UTF-8) with their
    line numbers and reasons, escapes, ids 1, 1.0 and "1", a last line
    without newline, and a file read in several blocks: dedup of what it
    reads decides as the command decides on the file."""
    base = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"
    lines = ['\ufeff{"id": "first", "text": "%s"}' % base,
             '{"id": 1, "text": "%s nu"}\r' % base, "", " \t \r", "not json",
             '{"id": true, "text": "%s"}' % base, '{"id": 7}', '{"id": 8, "text": 8}',
             '{"id": 1.0, "text": "a repeated id by value"}',
             '{"id": "1", "text": "caf\\u00e9 \\ud83d\\ude00 %s"}' % base,
             '{"id": -2.5e1, "text": "%s xi \\udce9"}' % base]
    lines += ['{"id": "d%d", "text": "%s w%d w%d"}' % (i, base, i % 3, i % 5) for i in range(30)]
    data = "\n".join(lines).encode("utf-8")
    at = data.index(b"\n", len(data) // 2) + 1
    data = data[:at] + b'{"id": "latin1", "text": "caf\xe9"}\n' + data[at:]
    path = tmp_path / "edges.jsonl"
    path.write_bytes(data)
    proc = subprocess.run([_program(), "dedup", "--quiet", "--format", "jsonl", "--jsonl",
                           "--threshold", "0.5", "--output", "decisions", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stderr  # the refused lines are input failures
    want = [json.loads(line) for line in proc.stdout.splitlines()]
    old = minlsh._jsonl.BLOCK_BYTES
    for block in (old, 200):
        minlsh._jsonl.BLOCK_BYTES = block
        try:
            errors = []
            docs = list(minlsh.read_jsonl(str(path), errors=errors))
        finally:
            minlsh._jsonl.BLOCK_BYTES = old
        assert [ln for ln, _ in errors] == [5, 6, 7, 8, data[:at].count(b"\n") + 1]
        assert errors[1][1] == 'field "id" is not a string or a number'
        assert errors[2][1] == 'missing field "text"'
        assert docs[0] == ("first", base) and docs[1] == (1, base + " nu")
        assert docs[3] == ("1", "caf\u00e9 \U0001F600 " + base)
        assert docs[4] == (-25.0, (base + " xi ").encode() + b"\xe9")  # not UTF-8: bytes
        with minlsh.dedup(docs, threshold=0.5) as res:
            assert _as_records(res) == want
    assert list(minlsh.read_jsonl(b"")) == []
    with pytest.raises(ValueError):
        list(minlsh.read_jsonl(data, id="i\0d"))
