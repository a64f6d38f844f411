"""minlsh.dask: on a planted corpus, the Dask pipeline on a LocalCluster of two
worker processes returns exactly the pairs and clusters that ``minlsh dedup``
returns on one machine with the same parameters (same ids, same order, same
similarities as doubles), and the same stage counts; band keys from the
vectorised helper are the C library's.

Needs python3-dask, python3-distributed and python3-pandas (else skipped).
The comparisons with the command need it in MINLSH_PROGRAM, which
``make check-dask`` (mk/dask.mk) sets to the build tree's; without it they
are skipped, and the rest (band keys, prepare, hot buckets, components)
still runs, e.g. in ``make check-python``.
"""

import json
import os
import random
import re
import subprocess
import sys
import warnings

import pytest

if os.environ.get("MINLSH_DASK_REQUIRED"):  # make check-dask: a missing package is a failure
    for _name in ("dask", "distributed", "pandas", "numpy"):
        __import__(_name)
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")

# distributed 2022.12 with tornado 6.2 warns about its own event loop use.
pytestmark = pytest.mark.filterwarnings("ignore:make_current is deprecated:DeprecationWarning")

import dask.bag as db  # noqa: E402
import dask.dataframe as dd  # noqa: E402

import minlsh  # noqa: E402
import minlsh.dask as mdask  # noqa: E402
from minlsh.dask.clusters import _clusters_of_edges, _components_dask  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PROGRAM = os.environ.get("MINLSH_PROGRAM")
GEN = os.path.join(REPO, "tests", "cli", "gen_corpus.py")


def _program():
    if not PROGRAM:
        pytest.skip("MINLSH_PROGRAM is not set (make check-dask sets it)")
    if not os.access(PROGRAM, os.X_OK):
        pytest.fail("MINLSH_PROGRAM=%s is not an executable" % PROGRAM)
    return PROGRAM


def cli(path, *options):
    """minlsh dedup --jsonl --format jsonl OPTIONS PATH: (records, summary
    counts, stderr)."""
    proc = subprocess.run([_program(), "dedup", "--jsonl", "--format", "jsonl"] + list(options)
                          + [path], capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    m = re.search(r"(\d+) exact-duplicate groups?; (\d+) candidate pairs?, (\d+) verified",
                  proc.stderr)
    assert m, proc.stderr
    counts = {"exact_duplicate_groups": int(m.group(1)), "candidates": int(m.group(2)),
              "verified": int(m.group(3))}
    return records, counts, proc.stderr


def same_counts(stats, counts, every_pair):
    """The command's summary counts against the pipeline's. In components
    mode the command does not verify a pair already inside one component
    (unless --output pairs needs them all): never more candidates or
    verified pairs than the pipeline, which verifies every one."""
    for name, value in counts.items():
        if every_pair or name == "exact_duplicate_groups":
            assert stats[name] == value, name
        else:
            assert value <= stats[name], name


def as_records(frame, output, verify):
    """The dask result as the command's JSON Lines records, in order."""
    pdf = frame.compute()
    if output == "pairs":
        cols = ["a", "b", "similarity"] + (["estimate"] if verify == "exact" else [])
        assert list(pdf.columns) == cols
        return [{c: (float(v) if c in ("similarity", "estimate") else v)
                 for c, v in zip(cols, row)} for row in pdf.itertuples(index=False)]
    assert list(pdf.columns) == ["cluster", "size", "members"]
    return [{"cluster": int(c), "size": int(s), "members": list(m)}
            for c, s, m in pdf.itertuples(index=False)]


def pair_set(records):
    return {(json.dumps(r["a"]), json.dumps(r["b"]), round(r["similarity"], 9))
            for r in records}


def cluster_set(records):
    return {tuple(json.dumps(x) for x in r["members"]) for r in records}


# ---- fixtures ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def program():
    return _program()


@pytest.fixture(scope="module")
def corpus(program, tmp_path_factory):
    """tests/cli/gen_corpus.py: ~1,900 documents with planted families (exact
    copies, an HTML rendering, one empty document), string and number ids."""
    out = tmp_path_factory.mktemp("dask-corpus")
    subprocess.run([sys.executable, GEN, "--seed", "11", "--out", str(out), "--singletons", "1200",
                    "--families", "150"], check=True)
    return str(out / "corpus.jsonl")


@pytest.fixture(scope="module")
def client(program, tmp_path_factory):
    """A LocalCluster of two worker processes (one thread each)."""
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=40,
                           local_directory=str(tmp_path_factory.mktemp("dask-workers")))
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def read_bag(path, partitions=3):
    size = os.path.getsize(path)
    return db.read_text(path, blocksize=size // partitions + 1).map(json.loads)


# ---- the equality checks -------------------------------------------------------------

CASES = [("exact", "pairs", "auto"), ("exact", "clusters", "local"),
         ("exact", "clusters", "dask"), ("signature", "pairs", "auto"),
         ("signature", "clusters", "local"), ("signature", "clusters", "dask")]


@pytest.mark.parametrize("verify,output,components", CASES)
def test_same_as_command(program, client, corpus, verify, output, components):
    want, counts, err = cli(corpus, "--verify", verify, "--output", output)
    assert "empty document, kept as it is" in err
    assert len(want) > 100
    stats = {}
    got = as_records(mdask.dedup(read_bag(corpus), verify=verify, output=output,
                                 components=components, stats=stats), output, verify)
    assert len(client.scheduler_info()["workers"]) == 2
    if output == "pairs":
        assert pair_set(got) == pair_set(want)
    else:
        assert cluster_set(got) == cluster_set(want)
    assert got == want  # the same order, the same doubles, the same numbering
    same_counts(stats, counts, output == "pairs")
    assert stats["empty_documents"] == 1
    assert stats["capped_buckets"] == []
    if output == "clusters":
        assert stats["components"] == components


@pytest.mark.parametrize("verify", ["exact", "signature"])
def test_oph_same_as_command(program, client, corpus, verify):
    """scheme="oph" is the command's --scheme oph: the same pairs."""
    want, counts, _ = cli(corpus, "--scheme", "oph", "--verify", verify, "--output", "pairs")
    stats = {}
    got = as_records(mdask.dedup(read_bag(corpus), verify=verify, output="pairs", scheme="oph",
                                 stats=stats), "pairs", verify)
    assert len(want) > 100 and got == want
    for name, value in counts.items():
        assert stats[name] == value, name
    if verify == "signature":  # the estimates are OPH's, not classic's
        classic, _, _ = cli(corpus, "--verify", verify, "--output", "pairs")
        assert pair_set(classic) != pair_set(want)


def test_dataframe_input_and_options(program, client, tmp_path):
    """A Dask dataframe (not a bag), other shingling options, a lower
    threshold, manual banding, a repeated id, a record without text, one
    with an unpaired surrogate and an empty document: dropped as the
    command drops them, the rest equal."""
    rng = random.Random(5)
    vocab = ["w%03d" % i for i in range(400)]
    base = [[rng.choice(vocab) for _ in range(60)] for _ in range(30)]
    recs = []
    for i in range(300):
        words = list(base[i % 30])
        for _ in range(rng.randint(0, 12)):
            words[rng.randrange(len(words))] = rng.choice(vocab).upper()
        recs.append({"id": "doc-%d" % i if i % 4 else i, "text": " ".join(words) + "!"})
    recs.insert(50, {"id": "doc-1", "text": "a repeated id: the first one wins"})
    recs.insert(70, {"id": "no-text"})
    recs.insert(90, {"id": "empty", "text": "   "})
    recs.insert(110, {"id": 12.5, "text": recs[3]["text"]})
    recs.insert(130, {"id": "surrogate", "text": "an unpaired \ud800 surrogate " + recs[5]["text"]})
    path = tmp_path / "small.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    options = ["--shingle", "word:3", "--normalize", "--threshold", "0.6", "--bands", "20",
               "--rows", "5", "--seed", "99", "--verify", "exact", "--output", "pairs"]
    want, counts, err = cli(str(path), *options)
    assert "duplicate id \"doc-1\"" in err and "empty document" in err
    assert "surrogate" in err
    frame = dd.from_pandas(pd.DataFrame({"key": [r.get("id") for r in recs],
                                         "body": [r.get("text") for r in recs]}),
                           npartitions=4, sort=False)
    stats = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = mdask.dedup(frame, id="key", text="body", shingle="word:3", normalize=True,
                          threshold=0.6, bands=20, rows=5, seed=99, verify="exact",
                          output="pairs", stats=stats)
    assert any("repeat an earlier id" in str(w.message) for w in caught)
    got = as_records(res, "pairs", "exact")
    assert got == want
    assert stats["repeated_ids"] == 1 and stats["bad_records"] == 2
    assert stats["empty_documents"] == 1
    for name, value in counts.items():
        assert stats[name] == value, name


def test_cjk_words_by_default():
    """The default shingling makes each Chinese character a word, as the
    command's: two 300-character texts that differ in one character are a
    pair; with cjk_words=False (minlsh 0.1's default) each is one word and
    they are not. (Dask's local threads.)"""
    chars = "\u6211\u4eec\u4eca\u5929\u53bb\u516c\u56ed\u770b\u82b1\u548c\u6811\u6728" \
            "\u5929\u6c14\u5f88\u597d"
    rnd = random.Random(3)
    a = "".join(rnd.choice(chars) for _ in range(300))
    b = a[:150] + "\u732b" + a[151:]
    docs = [{"id": "a", "text": a}, {"id": "b", "text": b},
            {"id": "c", "text": "\u4e00\u4e8c\u4e09\u56db\u4e94\u516d" * 50}]
    bag = db.from_sequence(docs, npartitions=2)
    pairs = mdask.dedup(bag, threshold=0.9, output="pairs").compute()
    assert [tuple(p) for p in pairs[["a", "b"]].values] == [("a", "b")]
    assert float(pairs["similarity"].iloc[0]) >= 291 / 301
    old = mdask.dedup(bag, threshold=0.9, output="pairs", cjk_words=False).compute()
    assert len(old) == 0


def test_hot_bucket_cap():
    """Buckets over max_bucket are left out whole and reported, never
    silently; without a cap every pair is found. (Dask's local threads.)"""
    base = " ".join("word%d" % i for i in range(40))
    docs = [{"id": i, "text": base + " tail%d" % i} for i in range(12)]
    bag = db.from_sequence(docs, npartitions=2)
    full = mdask.dedup(bag, threshold=0.5, max_bucket=None, output="pairs").compute()
    assert len(full) == 12 * 11 // 2
    stats = {}
    with pytest.warns(UserWarning, match="max_bucket=4"):
        capped = mdask.dedup(bag, threshold=0.5, max_bucket=4, output="pairs",
                             stats=stats).compute()
    assert stats["capped_buckets"], stats
    assert all(b["documents"] > 4 for b in stats["capped_buckets"])
    assert set(map(tuple, capped[["a", "b"]].values)) <= set(map(tuple, full[["a", "b"]].values))


def test_band_keys_matrix():
    """The vectorised helper equals minlsh.band_keys (the C function through
    the binding) row by row, and the worked example of docs/format.md."""
    rng = np.random.default_rng(3)
    sigs = rng.integers(0, 2**32, size=(50, 128), dtype=np.uint64).astype(np.uint32)
    sigs[7] = 0xFFFFFFFF
    for b, r in [(16, 6), (9, 13), (1, 128), (128, 1)]:
        got = mdask.band_keys_matrix(sigs, b, r)
        assert got.dtype == np.uint64 and got.shape == (50, b)
        for i in range(0, 50, 7):
            assert [int(x) for x in got[i]] == minlsh.band_keys(sigs[i].tolist(), b, r)
    example = np.array([[(i * 0x9E3779B1) % 2**32 for i in range(12)]], dtype=np.uint32)
    assert ["%016x" % int(x) for x in mdask.band_keys_matrix(example, 3, 4)[0]] == \
        ["5b73425f3f71e5b8", "4f8f65ca250376a6", "187d6646080fa303"]
    assert ["%016x" % int(x) for x in mdask.band_keys_matrix(example, 1, 12)[0]] == \
        ["8ea082b40c99afcf"]
    # the worked example of docs/format.md, "Band keys": a real signature
    fox = minlsh.signatures(["The quick brown fox jumps over the lazy dog"], num_perm=8, seed=1,
                            shingle="word:3")
    assert ["%08x" % int(v) for v in fox[0]] == [
        "03439b5e", "10f0b686", "007a2a4d", "11c1c4cb", "16fd85fe", "1890acf4", "293defba",
        "1b2b3d06"]
    assert ["%016x" % int(x) for x in mdask.band_keys_matrix(fox, 4, 2)[0]] == [
        "7f220adb844e7eac", "cc34452562bd1594", "8cc1ce302a86349a", "f6af09a17c724e67"]
    assert ["%016x" % int(x) for x in mdask.band_keys_matrix(fox, 2, 3)[0]] == [
        "81c3a35ab58504f3", "3030459499186e58"]
    assert minlsh.Shingler("word", 3, cjk_words=False).config_id == 0x97bf10c1483fdc85
    with pytest.raises(minlsh.ParameterError):
        mdask.band_keys_matrix(sigs, 20, 7)


def test_prepare_matches_signatures():
    """Stage 1 alone (for other engines): the signature columns are
    minlsh.signatures' rows, empty documents are flagged, and the (band, key)
    table holds the C library's band keys."""
    texts = ["alpha beta gamma delta epsilon zeta eta", "", "one two three four five six"]
    bag = db.from_sequence([{"id": i, "text": t} for i, t in enumerate(texts)], npartitions=2)
    pdf = mdask.prepare(bag, num_perm=64, seed=3).compute()
    sigs = minlsh.signatures(texts, num_perm=64, seed=3)
    assert pdf["status"].tolist() == [0, 2, 0]
    assert (pdf[["s%d" % i for i in range(64)]].to_numpy(dtype=np.uint32) == sigs).all()
    # the fingerprint columns are the shingler's 16 bytes, as two little-endian int64
    sh = minlsh.Shingler()
    for i, t in enumerate(texts):
        fp = np.frombuffer(sh.fingerprint(t.encode()), dtype="<i8")
        assert (pdf["fp0"].to_numpy()[i], pdf["fp1"].to_numpy()[i]) == (fp[0], fp[1])
    oph = mdask.prepare(bag, num_perm=64, seed=3, scheme="oph").compute()
    want = minlsh.signatures(texts, num_perm=64, seed=3, scheme="oph")
    assert (oph[["s%d" % i for i in range(64)]].to_numpy(dtype=np.uint32) == want).all()
    rows = mdask.band_key_rows(mdask.prepare(bag, num_perm=64, seed=3), 8, 8).compute()
    assert rows["id"].tolist() == [0] * 8 + [2] * 8 and rows["band"].tolist() == list(range(8)) * 2
    for doc, sig in ((0, sigs[0]), (2, sigs[2])):
        keys = rows[rows["id"] == doc]["key"].to_numpy().view(np.uint64)
        assert [int(k) for k in keys] == minlsh.band_keys(sig.tolist(), 8, 8)


def test_bad_arguments():
    bag = db.from_sequence([{"id": 1, "text": "x"}])
    with pytest.raises(ValueError):
        mdask.dedup(bag, verify="fuzzy")
    with pytest.raises(ValueError):
        mdask.dedup(bag, output="graph")
    with pytest.raises(ValueError):
        mdask.dedup(bag, bands=40, rows=4)
    with pytest.raises(TypeError):
        mdask.dedup(bag, no_such_option=True)
    with pytest.raises(TypeError):
        mdask.dedup([{"id": 1, "text": "x"}])
    for memory in (-1, "100X", "M", 1.5, True):
        with pytest.raises(ValueError):
            mdask.dedup(bag, memory=memory)
    with pytest.raises(ValueError):
        mdask.dedup(bag, tmpdir="")


def test_label_propagation_matches_union_find():
    """The Dask connected components (hooking, pointer jumping, contraction;
    alone or finished on the client) equal minlsh_clusters_from_edges on
    graphs with a long randomly numbered path, a star and many small
    components."""
    rng = random.Random(8)
    a, b = [], []
    path = list(range(1000, 1400))
    rng.shuffle(path)  # a path of 400 nodes, numbered in random order
    a += path[:-1]
    b += path[1:]
    a += [5000] * 50  # a star
    b += list(range(5001, 5051))
    for _ in range(300):  # random small components
        x = rng.randrange(10000, 20000)
        a.append(x)
        b.append(x + rng.randrange(1, 30))
    edges = pd.DataFrame({"a": np.array(a, dtype=np.int64), "b": np.array(b, dtype=np.int64)})
    with dask.config.set(scheduler="sync"):
        labels, rounds = _components_dask(dd.from_pandas(edges, npartitions=4), 4)
        labels = labels.compute()
        hybrid, _ = _components_dask(dd.from_pandas(edges, npartitions=4), 4, 300)
        hybrid = hybrid.compute()
    assert sorted(map(tuple, hybrid.values)) == sorted(map(tuple, labels.values))
    got = sorted(sorted(g["node"].tolist()) for _, g in labels.groupby("label"))
    want = [c.tolist() for c in _clusters_of_edges(edges["a"].values, edges["b"].values)]
    assert got == sorted(want)
    assert all(min(g) == lab for lab, g in
               ((lab, grp["node"].tolist()) for lab, grp in labels.groupby("label")))
    assert rounds <= 12  # the path shrinks geometrically, not one node per round


def test_sql_recipe_in_sqlite(program, client, corpus):
    """The Spark SQL / DuckDB recipe of docs/scale-out.md, run as written in
    SQLite on the (band, key) and signature tables that prepare() and
    band_key_rows() make, gives exactly the pairs of
    `minlsh dedup --verify signature --output pairs` with the same banding."""
    import sqlite3
    with open(os.path.join(REPO, "docs", "scale-out.md"), encoding="utf-8") as f:
        doc = f.read()
    m = re.search(r"```sql\n(-- minlsh recipe.*?)```", doc, re.S)
    assert m, "no SQL recipe in docs/scale-out.md"
    recipe = m.group(1)
    plan = minlsh.plan(0.8, 128, mode="balanced")
    assert (plan.bands, plan.rows) == (9, 13)  # what the recipe's text says
    want, _, _ = cli(corpus, "--verify", "signature", "--output", "pairs",
                     "--bands", str(plan.bands), "--rows", str(plan.rows))
    prepared = mdask.prepare(read_bag(corpus), num_perm=128)
    bands = mdask.band_key_rows(prepared, plan.bands, plan.rows).compute()
    docs = prepared.compute()
    docs = docs[docs["status"] == 0]
    sig = docs[["s%d" % i for i in range(128)]].to_numpy(dtype=np.int64)
    db_ = sqlite3.connect(":memory:")
    db_.execute("CREATE TABLE bands (n INTEGER, id, band INTEGER, key INTEGER)")
    db_.execute("CREATE TABLE sigs (n INTEGER, i INTEGER, v INTEGER)")
    db_.executemany("INSERT INTO bands VALUES (?, ?, ?, ?)",
                    zip(bands["_n"].tolist(), bands["id"].tolist(), bands["band"].tolist(),
                        bands["key"].tolist()))
    db_.executemany("INSERT INTO sigs VALUES (?, ?, ?)",
                    ((n, i, v) for n, row in zip(docs["_n"].tolist(), sig.tolist())
                     for i, v in enumerate(row)))
    db_.execute("CREATE INDEX sigs_n ON sigs (n, i, v)")
    got = [{"a": a, "b": b, "similarity": s} for a, b, s in db_.execute(recipe)]
    assert len(got) > 100
    assert got == want


def planted_corpus(path, seed=21):
    """Families of edited copies (chains of edits, so components join
    documents below the threshold), exact copies and singletons; ids of one
    width and ASCII texts, so a record's line length orders documents as
    their text length does (what the command's --keep longest compares for
    JSON Lines)."""
    rng = random.Random(seed)
    vocab = ["%s%d" % (w, i) for i, w in enumerate(["alpha", "beta", "gamma", "delta"] * 150)]
    texts = []
    for _ in range(120):
        words = [rng.choice(vocab) for _ in range(rng.randint(25, 60))]
        texts.append(words)
        if rng.random() < 0.5:
            for _ in range(rng.randint(1, 5)):
                w = list(texts[-1] if rng.random() < 0.7 else words)
                for _ in range(rng.randint(0, 4)):
                    op = rng.random()
                    if op < 0.4:
                        w[rng.randrange(len(w))] = rng.choice(vocab)
                    elif op < 0.7:
                        w.append(rng.choice(vocab))
                    elif len(w) > 10:
                        del w[rng.randrange(len(w))]
                texts.append(w if rng.random() < 0.85 else list(rng.choice(texts)))
    rng.shuffle(texts)
    with open(path, "w", encoding="ascii") as f:
        for i, words in enumerate(texts):
            f.write(json.dumps({"id": "d%05d" % i, "text": " ".join(words)}) + "\n")
    return len(texts)


@pytest.mark.parametrize("keep", ["first", "longest"])
@pytest.mark.parametrize("group", ["components", "strict"])
def test_decisions_same_as_command(program, client, tmp_path, keep, group):
    """output="decisions": one record per document, equal field for field to
    `minlsh dedup --output decisions` (cluster numbers, representatives,
    similarities as doubles, exact flags), for both keep policies and both
    grouping modes; components mode includes documents joined through
    others, whose similarity to their representative is measured in a
    second verification round."""
    path = str(tmp_path / "planted.jsonl")
    n = planted_corpus(path)
    want, counts, _ = cli(path, "--threshold", "0.6", "--output", "decisions", "--keep", keep,
                          "--group", group)
    assert len(want) == n
    stats = {}
    res = mdask.dedup(read_bag(path, 4), threshold=0.6, output="decisions", keep=keep,
                      group=group, stats=stats)
    pdf = res.compute()
    assert list(pdf.columns) == ["id", "cluster", "decision", "representative", "similarity",
                                 "exact"]
    got = [{"id": i, "cluster": int(c), "decision": d, "representative": r,
            "similarity": float(s), "exact": bool(e)} for i, c, d, r, s, e in
           pdf.itertuples(index=False)]
    assert got == want
    dropped = [r for r in want if r["decision"] == "dropped"]
    assert dropped and any(r["exact"] for r in dropped)
    assert stats["dropped"] == len(dropped) and stats["kept"] == n - len(dropped)
    if group == "components":
        assert any(r["similarity"] < 0.6 for r in dropped)  # joined through others
    else:
        assert all(r["similarity"] >= 0.6 for r in dropped)
    same_counts(stats, counts, group == "strict")


def test_memory_budget_spills_same_decisions(program, client, tmp_path):
    """memory= (the command's --memory, per worker process): a budget far
    below what the partitions keep sends their arrays to temporary files in
    tmpdir, and the decisions equal both the unlimited run's and the
    command's under the same budget; no temporary file is left behind. The
    budget, as a string, means what --memory means."""
    path = str(tmp_path / "planted.jsonl")
    n = planted_corpus(path)
    want, _, _ = cli(path, "--threshold", "0.6", "--output", "decisions", "--memory", "64K")
    spill_dir = tmp_path / "spill"
    spill_dir.mkdir()

    def decisions(**kw):
        stats = {}
        pdf = mdask.dedup(read_bag(path, 4), threshold=0.6, output="decisions", stats=stats,
                          **kw).compute()
        return [{"id": i, "cluster": int(c), "decision": d, "representative": r,
                 "similarity": float(s), "exact": bool(e)}
                for i, c, d, r, s, e in pdf.itertuples(index=False)], stats

    unlimited, st0 = decisions()
    assert st0["temp_bytes"] == 0
    spilled, st1 = decisions(memory="64K", tmpdir=str(spill_dir))
    # Each process keeps at most 64 KiB of the corpus's arrays: the
    # signatures alone (512 bytes a document) are n * 512 bytes.
    assert st1["temp_bytes"] >= n * 512 - 2 * 64 * 1024, st1["temp_bytes"]
    assert spilled == unlimited == want
    assert len(want) == n
    assert list(spill_dir.iterdir()) == []
    _, st2 = decisions(memory=1 << 30, tmpdir=str(spill_dir))
    assert st2["temp_bytes"] == 0
    with pytest.raises(FileNotFoundError):
        mdask.dedup(read_bag(path, 2), memory=1, tmpdir=str(tmp_path / "missing"))


def test_max_bucket_as_command(program, client, tmp_path):
    """max_bucket means what the command's --max-bucket means: a band bucket
    of more than N distinct texts (exact copies count once) is left out and
    counted; the pairs found otherwise, the candidates and the number of
    buckets left out equal the command's."""
    rng = random.Random(4)
    base = ["w%d" % i for i in range(60)]
    recs = []
    for i in range(14):  # a template with a few words changed: hot buckets
        words = list(base)
        for _ in range(3):
            words[rng.randrange(len(words))] = "x%d" % rng.randrange(1000)
        recs.append(" ".join(words))
    group = [" ".join(["g%d" % i for i in range(40)] + ["tail%d" % j]) for j in range(3)]
    recs += group * 6  # three distinct texts, 18 documents: a bucket of 3, not 18
    recs += [" ".join("u%d_%d" % (i, j) for j in range(30)) for i in range(40)]
    rng.shuffle(recs)
    path = tmp_path / "hot.jsonl"
    with open(path, "w", encoding="ascii") as f:
        for i, t in enumerate(recs):
            f.write(json.dumps({"id": "h%03d" % i, "text": t}) + "\n")
    for cap in (4, 10):
        want, counts, err = cli(str(path), "--threshold", "0.5", "--output", "pairs",
                                "--max-bucket", str(cap))
        m = re.search(r"(\d+) band buckets? over --max-bucket", err)
        stats = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = as_records(mdask.dedup(read_bag(str(path), 3), threshold=0.5,
                                         output="pairs", max_bucket=cap, stats=stats),
                             "pairs", "exact")
        assert m and len(stats["capped_buckets"]) == int(m.group(1)) > 0
        assert all(b["documents"] > cap for b in stats["capped_buckets"])
        assert got == want
        for name, value in counts.items():
            assert stats[name] == value, name
        ids0 = {"h%03d" % i for i, t in enumerate(recs) if t == group[0]}
        ids1 = {"h%03d" % i for i, t in enumerate(recs) if t == group[1]}
        # found only through the 18-document bucket, which is 3 texts
        assert any({r["a"], r["b"]} & ids0 and {r["a"], r["b"]} & ids1 for r in got)


def test_read_jsonl(tmp_path):
    """read_jsonl: one json.loads per block, blank lines skipped, a line that
    is not JSON becomes None (a bad record), CRLF line ends, no final
    newline; the same records as read_text + json.loads."""
    path = tmp_path / "in.jsonl"
    lines = ['{"id": %d, "text": "doc %d"}' % (i, i) for i in range(200)]
    lines[50] = "not json"
    lines[70] = ""
    lines[90] = '{"id": 90, "text": "crlf"}\r'
    path.write_text("\n".join(lines), encoding="ascii")
    for blocksize in (300, 1 << 20):
        got = mdask.read_jsonl(str(path), blocksize=blocksize).compute()
        want = [None if ln == "not json" else json.loads(ln) for ln in lines if ln.strip()]
        assert got == want, blocksize
    stats = {}
    mdask.dedup(mdask.read_jsonl(str(path), blocksize=300), output="pairs", stats=stats)
    assert stats["bad_records"] == 1 and stats["records"] == 199


def test_read_jsonl_lines_as_command(program, client, tmp_path):
    """dedup of read_jsonl reads each block with the library's reader (the
    command's): a byte-order mark at the file's start, CRLF, blank and
    white-space lines, lines that are not records (not JSON, a true id, no
    text, a text that is not a string, invalid UTF-8), escapes, ids 1, 1.0
    and "1", ids with a \\udcXX escape (a byte that is not UTF-8), a
    repeated id and a last line without newline: the same
    decisions and counts as `minlsh dedup --jsonl`, at every block size.
    Iterating the same bag still gives the records as dicts."""
    base = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"
    lines = ['\ufeff{"id": "first", "text": "%s"}' % base,
             '{"id": 1, "text": "%s nu"}\r' % base,
             "",
             " \t \r",
             "not json",
             '{"id": true, "text": "%s"}' % base,
             '{"id": 7}',
             '{"id": 8, "text": 8}',
             '{"id": 1.0, "text": "a repeated id by value"}',
             '{"id": "1", "text": "caf\\u00e9 \\ud83d\\ude00 %s"}' % base,
             '{"id": "esc\\n", "text": "%s \\"quoted\\""}' % base,
             '{"id": -2.5e1, "text": "%s xi"}' % base,
             '{"id": "empty", "text": ""}',
             '{"id": "s\\udce9", "text": "%s omicron"}' % base,  # ids with a byte not UTF-8
             '{"id": "s\\udce8", "text": "%s omicron"}' % base]
    for i in range(40):
        lines.append('{"id": "d%d", "text": "%s w%d w%d"}' % (i, base, i % 3, i % 5))
    path = tmp_path / "edges.jsonl"
    data = "\n".join(lines).encode("utf-8")
    bad = b'{"id": "latin1", "text": "caf\xe9"}\n'
    at = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:at] + bad + data[at:])
    want, counts, _ = cli(str(path), "--threshold", "0.5", "--output", "decisions")
    size = path.stat().st_size
    for blocksize in (97, size // 3 + 1, 1 << 20):
        stats = {}
        bag = mdask.read_jsonl(str(path), blocksize=blocksize)
        pdf = mdask.dedup(bag, threshold=0.5, output="decisions", stats=stats).compute()
        got = [{"id": i, "cluster": int(c), "decision": d, "representative": r,
                "similarity": float(s), "exact": bool(e)} for i, c, d, r, s, e in
               pdf.itertuples(index=False)]
        assert got == want, blocksize
        # not JSON, a true id, no text, a number text, invalid UTF-8
        assert stats["records"] == 54 and stats["bad_records"] == 5, (blocksize, stats)
        same_counts(stats, counts, False)
    recs = mdask.read_jsonl(str(path), blocksize=size // 3 + 1).compute()
    assert recs[0] == {"id": "first", "text": base} and recs[2] is None
    assert len(recs) == 54 and sum(r is None for r in recs) == 1


def test_edge_partitions_and_threads():
    """Empty partitions, a partition of empty documents only, an empty
    collection, and signing on several threads per task: the same answer
    as one partition on one thread. (Dask's local threads.)"""
    texts = ["shared words one two three four five six seven %d" % (i % 3) for i in range(9)]
    recs = [{"id": i, "text": t} for i, t in enumerate(texts)]
    recs += [{"id": 100 + i, "text": ""} for i in range(3)]
    one = mdask.dedup(db.from_sequence(recs, npartitions=1), threshold=0.5,
                      output="decisions").compute()
    parts = [recs[:4], [], recs[4:9], recs[9:]]  # an empty one, one of empty documents
    bag = db.from_delayed([dask.delayed(p) for p in parts])
    many = mdask.dedup(bag, threshold=0.5, output="decisions", threads=3).compute()
    assert one.reset_index(drop=True).equals(many.reset_index(drop=True))
    assert (many["decision"] == "dropped").sum() == 8  # one component of 9
    assert (many[many["id"] >= 100]["decision"] == "kept").all()
    stats = {}
    empty = mdask.dedup(db.from_sequence([], npartitions=1), output="decisions", stats=stats)
    assert len(empty.compute()) == 0 and stats["documents"] == 0
    assert len(mdask.dedup(db.from_sequence([], npartitions=1), output="pairs").compute()) == 0


def test_bucket_partitions_more_or_fewer_than_bands(tmp_path):
    """Band records go to bucket partitions as whole bands (no more
    partitions than bands) or split by key (more): the same candidates,
    pairs and decisions either way. (Dask's local threads.)"""
    path = str(tmp_path / "planted.jsonl")
    planted_corpus(path)
    got = {}
    for nparts in (1, 3, 4, 7, 13):
        stats = {}
        res = mdask.dedup(read_bag(path, 4), threshold=0.6, bands=4, rows=8, output="decisions",
                          npartitions=nparts, stats=stats).compute()
        got[nparts] = (stats["candidates"], stats["verified"], res.reset_index(drop=True))
    base = got[1]
    assert base[0] > 0 and (base[2]["decision"] == "dropped").any()
    for nparts, (cand, ver, frame) in got.items():
        assert (cand, ver) == base[:2], nparts
        assert frame.equals(base[2]), nparts
