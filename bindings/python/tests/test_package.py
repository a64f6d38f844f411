"""Errors, versions, finding the library, packaging."""

import os
import re
import shutil
import subprocess
import sys

import pytest

import minlsh
from minlsh import _ffi

from conftest import REPO

PKG_DIR = os.path.dirname(os.path.abspath(minlsh.__file__))


def header_version():
    with open(os.path.join(REPO, "include", "minlsh.h"), encoding="utf-8") as f:
        text = f.read()
    parts = [re.search(r"#define MINLSH_VERSION_%s (\d+)" % p, text).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def test_versions_agree():
    # One version everywhere: header, library, package, pyproject.
    assert minlsh.version() == header_version() == minlsh.__version__
    v = [int(x) for x in minlsh.version().split(".")]
    assert minlsh.version_number() == v[0] * 10000 + v[1] * 100 + v[2]
    with open(os.path.join(REPO, "bindings", "python", "pyproject.toml"), encoding="utf-8") as f:
        assert re.search(r'^version = "%s"$' % re.escape(minlsh.__version__), f.read(), re.M)


def test_error_attributes():
    with pytest.raises(minlsh.Error) as e:
        minlsh.Shingler("word", 0)
    err = e.value
    assert err.code == minlsh.E_PARAM == -2
    assert err.name == "MINLSH_E_PARAM"
    assert err.message == "a parameter is out of range"
    assert err.function == "minlsh_shingler_new"
    assert str(err) == "minlsh_shingler_new: a parameter is out of range (MINLSH_E_PARAM)"
    assert isinstance(err, ValueError) and isinstance(err, Exception)
    assert isinstance(minlsh.Error(minlsh.E_NOMEM), MemoryError)
    io = minlsh.Error(minlsh.E_IO, "f")
    assert type(io) is minlsh.Error and io.name == "MINLSH_E_IO"
    assert minlsh.Error(-99).name == "MINLSH_E_UNKNOWN"


def test_unicode_options():
    uni = minlsh.Shingler("word", 2, nfkc=True, casefold=True, unicode_punct=True,
                          unicode_space=True, fold_digits=True, cjk_words=True)
    assert uni.flags == 0x3F7 and minlsh.unicode_version() == 150000
    assert (list(uni.shingles("\u00c9COLE \u00dcBER STRA\u00dfE \u2014 \ufb01ne\u00a0\u0663"))
            == list(uni.shingles("\u00e9cole \u00fcber strasse fine 3")))
    assert len(uni.shingles("\u6211\u4eec\u4eca\u5929")) == 3  # four Han characters, four words
    # normalize means every option but html, as the command's --normalize
    assert minlsh.Shingler(normalize=True).flags == 0x3F7
    assert minlsh.Shingler(casefold=True).flags == 0x221  # cjk_words is on by default
    assert minlsh.Shingler(casefold=True, cjk_words=False).flags == 0x21
    ascii_only = minlsh.Shingler(lowercase=True, strip_punct=True, collapse_space=True)
    assert ascii_only.config_id != minlsh.Shingler(normalize=True).config_id


def test_shingler_arguments():
    with pytest.raises(ValueError, match="unknown shingle unit"):
        minlsh.Shingler("sentence")
    with pytest.raises(ValueError, match="unknown shingle unit"):
        minlsh.Shingler.from_spec("lines:3")
    with pytest.raises(ValueError, match="not an integer"):
        minlsh.signatures(["x"], shingle="word:five")
    with pytest.raises(minlsh.ParameterError):
        minlsh.Shingler("word", minlsh.SHINGLE_K_MAX + 1)
    with pytest.raises(ValueError, match="16 bytes"):
        minlsh.Shingler(key=b"short")
    with pytest.raises(TypeError):
        minlsh.Shingler(key="0123456789abcdef")
    with pytest.raises(minlsh.Error) as e:
        minlsh.Shingler("stopword", stopwords="... !!!")  # no usable stop word
    assert e.value.name == "MINLSH_E_PARAM"
    sw = minlsh.Shingler("stopword", stopwords=["the", "a"])
    assert sw.k == 3 and sw.unit == "stopword"
    # "the cat sat", "a mat by"; "the door" is too short to be a shingle
    assert len(sw.shingles("the cat sat on a mat by the door")) == 2
    limited = minlsh.Shingler(max_document_bytes=4)
    with pytest.raises(minlsh.Error) as e:
        limited.shingles("too long")
    assert e.value.name == "MINLSH_E_TOOBIG"
    with pytest.raises(TypeError):
        minlsh.Shingler().shingles(42)
    # a secret key changes every hash and the config id, but not the shape
    a, b = minlsh.Shingler(), minlsh.Shingler(key=bytes(range(16)))
    assert a.config_id != b.config_id
    assert len(a.shingles("one two three four five six")) == \
        len(b.shingles("one two three four five six"))
    assert repr(a).startswith("Shingler('word:5'")


def test_siphash_arguments():
    assert minlsh.siphash24(bytes(range(16)), b"") == 0x726fdb47dd0e0e31
    with pytest.raises(ValueError):
        minlsh.siphash24(b"x", b"")
    with pytest.raises(TypeError):
        minlsh.siphash24("0123456789abcdef", b"")


def test_version_check(monkeypatch):
    class Fake:
        def __init__(self, number, text):
            self.n, self.t = number, text

        def minlsh_version_number(self):
            return self.n

        def minlsh_version_string(self):
            return self.t

    monkeypatch.setattr(_ffi, "lib", Fake(10000, b"1.0.0"))
    with pytest.raises(ImportError, match="version 1.0.0.*needs 0.x"):
        _ffi._check_version()
    monkeypatch.setattr(_ffi, "lib", Fake(99, b"0.0.99"))
    with pytest.raises(ImportError):
        _ffi._check_version()
    monkeypatch.setattr(_ffi, "lib", Fake(102, b"0.1.2"))
    assert _ffi._check_version() == "0.1.2"


def run_python(code, env, cwd):
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("MINLSH_LIBRARY", "LD_LIBRARY_PATH", "PYTHONPATH")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def test_library_next_to_package(tmp_path):
    # A copy of the package with libminlsh.so.0 beside it loads that copy,
    # with no environment variable and nothing on the loader's path.
    pkg = tmp_path / "minlsh"
    shutil.copytree(PKG_DIR, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.so*"))
    shutil.copy(os.path.realpath(minlsh.LIBRARY), pkg / "libminlsh.so.0")
    r = run_python("import minlsh; print(minlsh.LIBRARY); print(minlsh.__file__)",
                   clean_env(), str(tmp_path))
    assert r.returncode == 0, r.stderr
    lib, file = r.stdout.split()
    assert lib == str(pkg / "libminlsh.so.0") and file.startswith(str(pkg))


def test_without_numpy(tmp_path):
    # numpy is optional: with its import failing, results are array.array
    # and SignatureMatrix.
    code = ("import sys; sys.modules['numpy'] = None\n"
            "import minlsh, array\n"
            "m = minlsh.MinHash(8); m.update(b'x')\n"
            "assert isinstance(m.digest(), array.array)\n"
            "assert isinstance(minlsh.Shingler().shingles('a b c d e f'), array.array)\n"
            "s = minlsh.signatures(['a b c d e f', 'a b c d e g'], num_perm=8)\n"
            "assert isinstance(s, minlsh.SignatureMatrix) and s.shape == (2, 8)\n"
            "print('ok')\n")
    env = clean_env(PYTHONPATH=os.path.dirname(PKG_DIR), MINLSH_LIBRARY=minlsh.LIBRARY)
    r = run_python(code, env, str(tmp_path))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_bad_minlsh_library(tmp_path):
    r = run_python("import minlsh", clean_env(MINLSH_LIBRARY=str(tmp_path / "nope.so"),
                                              PYTHONPATH=os.path.dirname(PKG_DIR)),
                   str(tmp_path))
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "MINLSH_LIBRARY" in r.stderr and "nope.so" in r.stderr


def test_which_package_was_imported():
    # make check-python runs the suite against the source tree and against a
    # pip-installed copy; MINLSH_EXPECT_PACKAGE says which one this run is.
    where = os.environ.get("MINLSH_EXPECT_PACKAGE")
    if not where:
        pytest.skip("MINLSH_EXPECT_PACKAGE not set")
    src = os.path.join(REPO, "bindings", "python", "minlsh")
    if where == "source":
        assert os.path.samefile(PKG_DIR, src)
    else:
        assert not os.path.samefile(PKG_DIR, src)
        assert PKG_DIR.startswith(os.path.abspath(where))


def test_every_public_name_has_a_docstring():
    # Every name of minlsh.__all__ that is a class or a function, and every
    # public method and property of those classes, says what it does.
    import inspect
    missing = []
    for name in minlsh.__all__:
        obj = getattr(minlsh, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for attr, val in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(val, (staticmethod, classmethod)):
                    val = val.__func__
                if (inspect.isfunction(val) or isinstance(val, property)) \
                        and not (val.__doc__ or "").strip():
                    missing.append("%s.%s" % (name, attr))
    assert missing == []


def test_typed_package():
    # py.typed ships with the package, and the datasketch-facing API is
    # annotated.
    assert os.path.exists(os.path.join(PKG_DIR, "py.typed"))
    import typing
    hints = typing.get_type_hints(minlsh.MinHash.jaccard)
    assert hints == {"other": minlsh.MinHash, "return": float}
    assert typing.get_type_hints(minlsh.MinHashLSH.query)["return"] == \
        typing.List[typing.Hashable]


# Two 300-character Chinese texts that differ in one character (the
# characters of a 16-character sentence in a fixed pseudo-random order).
_ZH = "\u6211\u4eec\u4eca\u5929\u53bb\u516c\u56ed\u770b\u82b1\u548c\u6811\u6728" \
      "\u5929\u6c14\u5f88\u597d"


def _chinese_pair():
    import random
    rnd = random.Random(3)
    a = "".join(rnd.choice(_ZH) for _ in range(300))
    b = a[:150] + "\u732b" + a[151:]
    return a, b


def test_cjk_words_by_default():
    a, b = _chinese_pair()
    default = minlsh.Shingler()
    assert default.flags == 0x200
    sa, sb = set(default.shingles(a)), set(default.shingles(b))
    # 296 shingles each, at most 5 differ: J >= 291 / 301
    assert len(sa) > 250 and len(sa & sb) / len(sa | sb) >= 291 / 301
    ma = minlsh.MinHash.from_text(a, 128)
    mb = minlsh.MinHash.from_text(b, 128)
    assert ma.jaccard(mb) > 0.85
    # the old default: one giant word each, nothing in common
    old = minlsh.Shingler(cjk_words=False)
    assert old.flags == 0
    assert len(old.shingles(a)) == 1 and set(old.shingles(a)) != set(old.shingles(b))
    assert minlsh.MinHash.from_text(a, 128, shingler=old).jaccard(
        minlsh.MinHash.from_text(b, 128, shingler=old)) < 0.1
    # ASCII text: the same hashes either way; only the config id differs
    text = "The quick brown fox jumps over the lazy dog near the river bank"
    assert list(default.shingles(text)) == list(old.shingles(text))


def test_old_default_config_id(golden):
    # cjk_words=False is minlsh 0.1's default configuration, id for id
    old = minlsh.Shingler(cjk_words=False)
    case = next(c for c in golden["shinglers"] if c["spec"] == "word:5" and c["flags"] == 0)
    assert old.config_id == int(case["config_id"], 16) == 0x84F6FE21AC593947
    new = next(c for c in golden["shinglers"] if c["spec"] == "word:5" and c["flags"] == 0x200)
    assert minlsh.Shingler().config_id == int(new["config_id"], 16) != old.config_id
