"""Presets from Python: minlsh.presets() reads the library's table; dedup's
and MinHashLSH's ``preset=`` give the same result as the preset's settings
written out, and arguments given override the preset's fields."""

import pickle
import random

import pytest

import minlsh

NAMES = ["fineweb", "refinedweb", "lee2022", "lee2022-0.9", "nemo-curator", "slimpajama"]


def _docs():
    rng = random.Random(5)
    words = ["w%03dq" % i for i in range(300)]
    docs = []
    for i in range(20):
        base = [rng.choice(words) for _ in range(60)]
        docs.append(("doc%d" % i, " ".join(base)))
        if i % 4 == 0:  # a near-duplicate: one word replaced (Jaccard about 0.84)
            near = list(base)
            for j in rng.sample(range(60), 1):
                near[j] = rng.choice(words)
            docs.append(("near%d" % i, " ".join(near)))
    text = " ".join(rng.choice(words) for _ in range(60))
    docs += [("case_a", text), ("case_b", text.upper())]
    return docs


def _decisions(result):
    return [(d.id, d.kept, d.representative, round(d.similarity, 12)) for d in result]


def test_table():
    got = minlsh.presets()
    assert [p.name for p in got] == NAMES
    fw = minlsh.preset("fineweb")
    assert (fw.shingle, fw.num_perm, fw.bands, fw.rows, fw.threshold) == ("word:5", 112, 14, 8, 0.75)
    assert fw.normalization == {"casefold": True, "unicode_punct": True,
                                "unicode_space": True, "cjk_words": True}
    sp = minlsh.preset("slimpajama")
    assert (sp.shingle, sp.num_perm, sp.bands, sp.rows) == ("codepoint:13", 128, 9, 13)
    assert sp.normalization == {"casefold": True, "unicode_space": True,
                                "strip_punct": True, "cjk_words": False}
    assert minlsh.preset("Lee2022").normalization == {"cjk_words": False}
    assert "2406.17557" in fw.source and fw.pipeline
    # a Preset passes through; case does not matter
    assert minlsh.preset(fw) is fw
    assert minlsh.preset("NEMO-Curator").name == "nemo-curator"


@pytest.mark.parametrize("name", NAMES)
def test_shingler_has_the_preset_flags(name):
    p = minlsh.preset(name)
    sh = p.shingler()
    assert sh.flags == p.flags
    assert sh.spec == p.shingle
    # a spec replaces the unit and length and keeps the normalisation
    sh3 = p.shingler("word:3")
    assert (sh3.spec, sh3.flags & ~0x200) == ("word:3", p.flags & ~0x200)


def test_unknown_names():
    with pytest.raises(ValueError, match="unknown preset 'finewab': expected one of "
                       + ", ".join(NAMES).replace(".", r"\.")):
        minlsh.preset("finewab")
    with pytest.raises(ValueError, match="unknown preset"):
        minlsh.dedup(["a b c d e"], preset="nope")
    with pytest.raises(ValueError, match="unknown preset"):
        minlsh.MinHashLSH(preset="nope")
    with pytest.raises(TypeError):
        minlsh.preset(3)


@pytest.mark.parametrize("name", NAMES)
def test_dedup_preset_equals_settings_by_hand(name):
    p = minlsh.preset(name)
    docs = _docs()
    by_preset = minlsh.dedup(docs, preset=name, threads=1)
    by_hand = minlsh.dedup(docs, threshold=p.threshold, num_perm=p.num_perm, bands=p.bands,
                           rows=p.rows, threads=1,
                           shingler=minlsh.Shingler.from_spec(p.shingle, **p.normalization))
    assert _decisions(by_preset) == _decisions(by_hand)
    assert (by_preset.stats["bands"], by_preset.stats["rows"]) == (p.bands, p.rows)


def test_dedup_preset_normalisation_applies():
    fates = {}
    for name in ("fineweb", "lee2022"):
        fates[name] = {d.id: d.kept for d in minlsh.dedup(_docs(), preset=name, threads=1)}
    assert fates["fineweb"]["case_b"] is False  # folded to case_a's text
    assert fates["lee2022"]["case_b"] is True


def test_dedup_overrides():
    docs = _docs()
    stats = lambda **kw: minlsh.dedup(docs, preset="fineweb", threads=1, **kw).stats
    st = stats(threshold=0.9)
    assert (st["bands"], st["rows"]) == (14, 8)
    # num_perm given: the preset's banding no longer fits and is planned
    plan = minlsh.plan(0.75, 128, mode="recall", target_recall=0.999)
    st = stats(num_perm=128)
    assert (st["bands"], st["rows"]) == (plan.bands, plan.rows)
    # one of bands and rows given keeps the preset's other
    st = stats(bands=7)
    assert (st["bands"], st["rows"]) == (7, 8)
    st = stats(rows=4)
    assert (st["bands"], st["rows"]) == (14, 4)
    # a threshold given is the one verified against
    strict = minlsh.dedup(docs, preset="fineweb", threshold=0.99, threads=1)
    loose = minlsh.dedup(docs, preset="fineweb", threads=1)
    assert strict.stats["verified"] < loose.stats["verified"]
    # a Shingler object replaces the preset's shingling whole
    plain = minlsh.dedup(docs, preset="fineweb", shingler=minlsh.Shingler("word", 5), threads=1)
    assert {d.id: d.kept for d in plain}["case_b"] is True


def test_minhashlsh_preset():
    lsh = minlsh.MinHashLSH(preset="fineweb")
    assert (lsh.params, lsh.threshold, lsh.num_perm) == ((14, 8), 0.75, 112)
    assert lsh.preset == minlsh.preset("fineweb")
    # each argument given wins
    lsh = minlsh.MinHashLSH(threshold=0.9, preset="fineweb")
    assert (lsh.params, lsh.threshold) == ((14, 8), 0.9)
    lsh = minlsh.MinHashLSH(preset="fineweb", params=(7, 16))
    assert (lsh.params, lsh.num_perm) == ((7, 16), 112)
    lsh = minlsh.MinHashLSH(preset="fineweb", num_perm=128)
    assert lsh.num_perm == 128
    assert lsh.params == minlsh.MinHashLSH(threshold=0.75, num_perm=128).params
    # the default threshold given explicitly is still given
    assert minlsh.MinHashLSH(0.9, preset="fineweb").threshold == 0.9
    assert minlsh.MinHashLSH(num_perm=128, preset="lee2022").num_perm == 128
    # without a preset nothing changed: datasketch's defaults
    lsh = minlsh.MinHashLSH()
    assert (lsh.threshold, lsh.num_perm, lsh.preset) == (0.9, 128, None)
    # a datasketch user's flow: the preset's shingler, MinHash of its length
    lsh = minlsh.MinHashLSH(preset="fineweb")
    sh = lsh.preset.shingler()
    docs = dict(_docs())
    for key in ("case_a", "doc1"):
        m = minlsh.MinHash(num_perm=lsh.num_perm)
        m.update_batch(sh.shingles(docs[key]))
        lsh.insert(key, m)
    m = minlsh.MinHash(num_perm=lsh.num_perm)
    m.update_batch(sh.shingles(docs["case_b"]))
    assert lsh.query(m) == ["case_a"]
    # pickles keep the index (the preset is a constructor argument only)
    back = pickle.loads(pickle.dumps(lsh))
    assert back.params == (14, 8) and back.query(m) == ["case_a"]
