"""The binding gives exactly the C API's numbers: tests/golden/bindings/golden.json,
written by tests/test_bindings_golden.c from the C library."""

import pytest

import minlsh

from conftest import as_list

P = (1 << 61) - 1
M64 = (1 << 64) - 1


def shingler_of(case):
    opts = {}
    if case["flags"] & 0x1:
        opts["lowercase"] = True
    if case["flags"] & 0x2:
        opts["collapse_space"] = True
    if case["flags"] & 0x4:
        opts["strip_punct"] = True
    if case["flags"] & 0x8:
        opts["html"] = True
    for bit, name in ((0x10, "nfkc"), (0x20, "casefold"), (0x40, "unicode_punct"),
                      (0x80, "unicode_space"), (0x100, "fold_digits")):
        if case["flags"] & bit:
            opts[name] = True
    # on by default: said either way
    opts["cjk_words"] = bool(case["flags"] & 0x200)
    if case["key"] is not None:
        opts["key"] = bytes.fromhex(case["key"])
    return minlsh.Shingler.from_spec(case["spec"], **opts)


def test_default_key(golden):
    assert minlsh.DEFAULT_KEY.hex() == golden["default_key"]


def test_siphash(golden):
    for case in golden["siphash"]:
        tag = minlsh.siphash24(bytes.fromhex(case["key"]), bytes.fromhex(case["msg"]))
        assert tag == int(case["tag"], 16)


def test_shingles_fingerprints_config_id(golden, texts, numpy_mode):
    for case in golden["shinglers"]:
        sh = shingler_of(case)
        assert sh.config_id == int(case["config_id"], 16)
        assert sh.k == case["k"] and sh.flags == case["flags"]
        for t, text in enumerate(texts):
            got = sh.shingles(text)
            if numpy_mode == "no-numpy":
                assert got.typecode == "Q"
            assert as_list(got) == [int(h, 16) for h in case["shingles"][t]], (case["spec"], t)
            assert sh.fingerprint(text).hex() == case["fingerprints"][t]


def test_str_is_utf8(golden, texts):
    sh = minlsh.Shingler.from_spec("word:5")
    for text in texts:
        try:
            s = text.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert as_list(sh.shingles(s)) == as_list(sh.shingles(text))
        assert as_list(sh.shingles(bytearray(text))) == as_list(sh.shingles(text))


def test_stream_equals_one_shot(golden, texts):
    for case in golden["shinglers"]:
        sh = shingler_of(case)
        st = sh.stream()
        for t, text in enumerate(texts):
            for i in range(0, len(text), 7):
                st.feed(text[i:i + 7])
            assert st.bytes_fed == len(text)
            shingles, fp = st.finish()
            assert as_list(shingles) == [int(h, 16) for h in case["shingles"][t]]
            assert fp.hex() == case["fingerprints"][t]


def expected_sigs(golden):
    for case in golden["signatures"]:
        yield golden["shinglers"][case["shingler"]], case


def test_minhash_from_text(golden, texts):
    for shcase, case in expected_sigs(golden):
        sh = shingler_of(shcase)
        for t, text in enumerate(texts):
            m = minlsh.MinHash.from_text(text, case["k"], case["seed"], shingler=sh)
            assert as_list(m.digest()) == case["sigs"][t], (shcase["spec"], case["seed"], t)


def test_minhash_from_shingles(golden, texts):
    # Shingler.shingles + MinHash.update_hashes is the same as signing the text.
    for shcase, case in expected_sigs(golden):
        sh = shingler_of(shcase)
        for t, text in enumerate(texts):
            m = minlsh.MinHash(case["k"], case["seed"])
            m.update_hashes(sh.shingles(text))
            assert as_list(m.digest()) == case["sigs"][t]


@pytest.mark.parametrize("threads", [1, 3, 0])
def test_signatures_batch(golden, texts, numpy_mode, threads):
    for shcase, case in expected_sigs(golden):
        sh = shingler_of(shcase)
        got = minlsh.signatures(texts, num_perm=case["k"], seed=case["seed"], shingler=sh,
                                threads=threads)
        assert tuple(got.shape) == (len(texts), case["k"])
        if numpy_mode == "no-numpy":
            assert isinstance(got, minlsh.SignatureMatrix)
        assert [as_list(row) for row in got] == case["sigs"]


def test_signatures_spec_string(golden, texts):
    # shingle="char:4" means bytes, as in the minlsh command
    case = next(c for s, c in expected_sigs(golden) if s["spec"] == "char:4")
    got = minlsh.signatures(texts, num_perm=case["k"], seed=case["seed"], shingle="char:4")
    assert [as_list(r) for r in got] == case["sigs"]


def test_band_keys(golden):
    for _, case in expected_sigs(golden):
        for bc in case["band_keys"]:
            for t, sig in enumerate(case["sigs"]):
                want = [int(h, 16) for h in bc["keys"][t]]
                assert minlsh.band_keys(sig, bc["bands"], bc["rows"]) == want
                m = minlsh.MinHash.from_signature(sig, seed=case["seed"])
                assert minlsh.band_keys(m, bc["bands"], bc["rows"]) == want


def test_items_update(golden):
    items = [bytes.fromhex(x) for x in golden["items"]["items"]]
    for case in golden["items"]["signatures"]:
        one = minlsh.MinHash(case["k"], case["seed"])
        for it in items:
            one.update(it)
        assert as_list(one.digest()) == case["sig"]
        batch = minlsh.MinHash(num_perm=case["k"], seed=case["seed"])
        batch.update_batch(items)
        assert batch == one
        # str items are their UTF-8 bytes
        text = minlsh.MinHash(case["k"], case["seed"])
        text.update_batch([it.decode("utf-8") for it in items])
        assert text == one
        # merging two halves is exactly the whole
        a, b = minlsh.MinHash(case["k"], case["seed"]), minlsh.MinHash(case["k"], case["seed"])
        a.update_batch(items[:4])
        b.update_batch(items[4:])
        a.merge(b)
        assert as_list(a.digest()) == case["sig"]
        # the batch paths: bulk, generator and the matrix, one call per batch
        halves = [items[:4], items[4:]]
        bulk = minlsh.MinHash.bulk(halves + [items], num_perm=case["k"], seed=case["seed"])
        assert as_list(bulk[2].digest()) == case["sig"]
        assert as_list(minlsh.MinHash.union(bulk[0], bulk[1]).digest()) == case["sig"]
        rows = minlsh.signatures_from_tokens([items], num_perm=case["k"], seed=case["seed"])
        assert as_list(rows[0]) == case["sig"]


def _family(seed, k):
    # docs/minhash.md section 6, independently of the library
    def gen(state):
        while True:
            state = (state + 0x9E3779B97F4A7C15) & M64
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
            yield z ^ (z >> 31)
    g, out = gen(seed), []
    for _ in range(k):
        a = next(g) >> 3
        while a in (0, P):
            a = next(g) >> 3
        b = next(g) >> 3
        while b == P:
            b = next(g) >> 3
        out.append((a, b))
    return out


def test_golden_items_against_python_reference(golden):
    # The golden file itself is checked against the specification: item
    # hashes are SipHash under the default key, signatures follow minhash.md.
    hashes = [int(h, 16) for h in golden["items"]["hashes"]]
    items = [bytes.fromhex(x) for x in golden["items"]["items"]]
    assert hashes == [minlsh.siphash24(minlsh.DEFAULT_KEY, it) for it in items]
    for case in golden["items"]["signatures"]:
        xs = {h % P for h in hashes}
        want = [min((a * x + b) % P for x in xs) >> 29 for a, b in _family(case["seed"], case["k"])]
        assert want == case["sig"]


def test_plans(golden):
    names = {1: "rule", 2: "balanced", 3: "recall"}
    for case in golden["plans"]:
        p = minlsh.plan(case["threshold"], case["k"], (case["weight_fp"], case["weight_fn"]),
                        mode=names[case["mode"]], target_recall=case["target_recall"])
        assert p == (case["bands"], case["rows"], case["fp_area"], case["fn_area"])
    for case in golden["probability"]:
        assert minlsh.probability(case["s"], case["bands"], case["rows"]) == case["p"]


def test_empty_text_is_empty_signature(golden, texts):
    case = next(c for s, c in expected_sigs(golden) if s["spec"] == "word:5")
    assert case["sigs"][4] == [minlsh.EMPTY_VALUE] * case["k"]
    m = minlsh.MinHash.from_text(b"", case["k"], case["seed"])
    assert m.is_empty() and m.jaccard(m) == 1.0  # two empty sets: equal, as datasketch
