"""Shingler: text to a set of 64-bit shingle hashes (minlsh_shingler)."""

import array
import ctypes
import threading
from ctypes import byref, c_size_t, c_uint64, c_void_p

from . import _ffi
from ._ffi import check, lib

# Unit names, as the minlsh command spells them (char is bytes there too).
UNITS = {"byte": 1, "char": 1, "codepoint": 2, "word": 3, "stopword": 4}
_UNIT_NAMES = {1: "byte", 2: "codepoint", 3: "word", 4: "stopword"}

NORM_CASEFOLD = 0x1
NORM_WHITESPACE = 0x2
NORM_PUNCT = 0x4
NORM_HTML = 0x8
NORM_NFKC = 0x10
NORM_UCASEFOLD = 0x20
NORM_UPUNCT = 0x40
NORM_UWHITESPACE = 0x80
NORM_DIGITS = 0x100
NORM_CJK_WORDS = 0x200
NORM_UNICODE = 0x3F0
# The Unicode flags and what each brings with it (as the library does).
_UNICODE_OPTIONS = (("nfkc", NORM_NFKC), ("casefold", NORM_UCASEFOLD | NORM_CASEFOLD),
                    ("unicode_punct", NORM_UPUNCT | NORM_PUNCT),
                    ("unicode_space", NORM_UWHITESPACE | NORM_WHITESPACE),
                    ("fold_digits", NORM_DIGITS), ("cjk_words", NORM_CJK_WORDS))


def parse_spec(spec):
    """``"word:5"`` -> ("word", 5); ``"stopword"`` -> ("stopword", None)."""
    if not isinstance(spec, str):
        raise TypeError("shingle must be a string such as 'word:5', not %s"
                        % type(spec).__name__)
    unit, sep, k = spec.partition(":")
    unit = unit.strip().lower()
    if unit not in UNITS:
        raise ValueError("unknown shingle unit %r in %r (expected one of %s)"
                         % (unit, spec, ", ".join(sorted(UNITS))))
    if not sep:
        return unit, None
    try:
        return unit, int(k)
    except ValueError:
        raise ValueError("bad shingle size in %r: %r is not an integer" % (spec, k)) from None


def unicode_version():
    """The Unicode version of the library's tables, as major * 10000 +
    minor * 100 + patch (150000: Unicode 15.0.0)."""
    return lib.minlsh_unicode_version()


def _u64_array(n):
    if _ffi.numpy is not None:
        return _ffi.numpy.empty(n, dtype=_ffi.numpy.uint64)
    return array.array("Q", bytes(8 * n))


def key_bytes(key):
    """A SipHash key as the 16 bytes the library takes (TypeError for a
    str, ValueError for another length)."""
    if isinstance(key, str):
        raise TypeError("key must be %d bytes, not str" % _ffi.KEY_BYTES)
    key = _ffi.as_bytes(key, "key")
    if len(key) != _ffi.KEY_BYTES:
        raise ValueError("key must be %d bytes, got %d" % (_ffi.KEY_BYTES, len(key)))
    return key


def shingler_options(unit="word", k=None, *, lowercase=False, strip_punct=False,
                     collapse_space=False, html=False, normalize=False, key=None,
                     stopwords=None, max_document_bytes=0, nfkc=False, casefold=False,
                     unicode_punct=False, unicode_space=False, fold_digits=False,
                     cjk_words=True):
    """The minlsh_shingler_options of Shingler's arguments (see Shingler),
    with the unit's number and k: (options, unit, k). The structure keeps
    the key and stop words it points to alive."""
    if isinstance(unit, str):
        name = unit.strip().lower()
        if name not in UNITS:
            raise ValueError("unknown shingle unit %r (expected one of %s)"
                             % (unit, ", ".join(sorted(UNITS))))
        unit_value = UNITS[name]
    else:
        raise TypeError("unit must be a string such as 'word'")
    if k is None:
        k = 3 if unit_value == UNITS["stopword"] else 5
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError("k must be an integer")
    flags = 0
    if lowercase or normalize:
        flags |= NORM_CASEFOLD
    if collapse_space or normalize:
        flags |= NORM_WHITESPACE
    if strip_punct or normalize:
        flags |= NORM_PUNCT
    if html:
        flags |= NORM_HTML
    chosen = {"nfkc": nfkc, "casefold": casefold, "unicode_punct": unicode_punct,
              "unicode_space": unicode_space, "fold_digits": fold_digits,
              "cjk_words": cjk_words}
    for name, bits in _UNICODE_OPTIONS:
        if chosen[name] or normalize:
            flags |= bits
    opts = _ffi.ShinglerOptions()
    check(lib.minlsh_shingler_options_init(byref(opts), _ffi.SHINGLER_OPTIONS_VERSION),
          "minlsh_shingler_options_init")
    opts.unit = unit_value
    if not 0 <= k <= 0xFFFFFFFF:
        raise _ffi.error(_ffi.E_PARAM, "minlsh_shingler_new", "k = %d" % k)
    opts.k = k
    opts.flags = flags
    if key is not None:
        opts.key = key_bytes(key)
    if stopwords is not None:
        if isinstance(stopwords, (str, bytes)):
            words = _ffi.as_bytes(stopwords, "stopwords")
        else:
            words = b" ".join(_ffi.as_bytes(w, "stop word") for w in stopwords)
        opts.stopwords = words
        opts.stopwords_len = len(words)
    opts.max_document_bytes = _ffi.as_u64(max_document_bytes, "max_document_bytes")
    return opts, unit_value, k


class Shingler:
    """Turns documents into sets of 64-bit shingle hashes.

    ``unit`` is ``"word"``, ``"char"`` or ``"byte"`` (bytes), ``"codepoint"``
    (UTF-8 code points) or ``"stopword"`` (a stop word and the k-1 words after
    it); ``k`` is the number of units per shingle, 1..64 (default 5, or 3 for
    ``"stopword"``, as in the minlsh command). The flags normalise the text
    first: ``lowercase`` (ASCII case folding), ``strip_punct`` (delete ASCII
    punctuation), ``collapse_space`` (runs of whitespace to one space),
    ``html`` (drop markup, decode entities); then the Unicode options
    (docs/shingling.md 3.5, Unicode ``unicode_version()``): ``nfkc``,
    ``casefold`` (full case folding; implies ``lowercase``), ``unicode_punct``
    (delete P* and S*; implies ``strip_punct``), ``unicode_space`` (White_Space
    is space; implies ``collapse_space``), ``fold_digits`` (Nd to ASCII),
    ``cjk_words`` (each Han, kana, Thai, Lao, Khmer, Myanmar character a word;
    **on by default**, so that word shingles work on Chinese, Japanese and
    Thai; ``cjk_words=False`` gives minlsh 0.1's default configuration and
    config id, as the command's ``--no-cjk-words``).
    ``normalize=True`` sets all but ``html``, as the command's ``--normalize``
    does. ``key`` is a 16-byte SipHash key (default: the library's public
    default key; use a secret key for hostile input). ``stopwords`` is a
    string of whitespace-separated words or an iterable of words (default:
    the built-in English list). ``max_document_bytes`` refuses longer
    documents (0: no limit).

    A shingler is immutable and may be used by any number of threads at once.
    Texts are ``str`` (encoded as UTF-8) or bytes-like objects.
    """

    __slots__ = ("_handle", "_config_id", "_spec", "__weakref__")

    def __init__(self, unit="word", k=None, *, lowercase=False, strip_punct=False,
                 collapse_space=False, html=False, normalize=False, key=None,
                 stopwords=None, max_document_bytes=0, nfkc=False, casefold=False,
                 unicode_punct=False, unicode_space=False, fold_digits=False,
                 cjk_words=True):
        self._handle = None
        opts, unit_value, k = shingler_options(
            unit, k, lowercase=lowercase, strip_punct=strip_punct,
            collapse_space=collapse_space, html=html, normalize=normalize, key=key,
            stopwords=stopwords, max_document_bytes=max_document_bytes, nfkc=nfkc,
            casefold=casefold, unicode_punct=unicode_punct, unicode_space=unicode_space,
            fold_digits=fold_digits, cjk_words=cjk_words)
        handle = c_void_p()
        check(lib.minlsh_shingler_new(byref(handle), byref(opts), None), "minlsh_shingler_new")
        self._handle = handle.value
        cid = c_uint64()
        check(lib.minlsh_shingler_config_id(byref(cid), self._handle),
              "minlsh_shingler_config_id")
        self._config_id = cid.value
        self._spec = "%s:%d" % (_UNIT_NAMES[unit_value], k)

    @classmethod
    def from_spec(cls, spec="word:5", **options):
        """A shingler from a spec such as ``"word:5"``, ``"char:4"``,
        ``"codepoint:3"`` or ``"stopword"``, plus keyword options."""
        unit, k = parse_spec(spec)
        return cls(unit, k, **options)

    def __del__(self, _free=lib.minlsh_shingler_free):
        # The library wipes the key before releasing the memory. (_free is
        # bound now: module globals may be gone at interpreter exit.)
        if getattr(self, "_handle", None):
            _free(self._handle)
            self._handle = None

    def __repr__(self):
        return "Shingler(%r, flags=0x%x, config_id=0x%016x)" % (
            self._spec, self.flags, self._config_id)

    @property
    def unit(self):
        """The unit name: "byte", "codepoint", "word" or "stopword"."""
        return _UNIT_NAMES[lib.minlsh_shingler_unit(self._handle)]

    @property
    def k(self):
        """Units per shingle."""
        return lib.minlsh_shingler_k(self._handle)

    @property
    def flags(self):
        """The MINLSH_NORM_* flags."""
        return lib.minlsh_shingler_flags(self._handle)

    @property
    def spec(self):
        """``unit:k``, e.g. ``"word:5"``."""
        return self._spec

    @property
    def config_id(self):
        """64-bit id of the key and the configuration (not revealing the key)."""
        return self._config_id

    def shingles(self, text):
        """The sorted, distinct shingle hashes of ``text``: a numpy uint64 array
        when numpy is installed, else an ``array.array('Q')``."""
        data = _ffi.as_bytes(text)
        st = c_void_p()
        check(lib.minlsh_shingleset_new(byref(st), None), "minlsh_shingleset_new")
        try:
            check(lib.minlsh_shingler_hash(self._handle, data, len(data), st, None),
                  "minlsh_shingler_hash")
            n = lib.minlsh_shingleset_count(st)
            out = _u64_array(n)
            if n:
                check(lib.minlsh_shingleset_copy_hashes(st, _ffi.address(out), n, None),
                      "minlsh_shingleset_copy_hashes")
            return out
        finally:
            lib.minlsh_shingleset_free(st)

    def fingerprint(self, text):
        """The 16-byte fingerprint of the normalised text: equal fingerprints
        mean identical shingle sets (the cheap exact-duplicate test)."""
        data = _ffi.as_bytes(text)
        fp = ctypes.create_string_buffer(_ffi.FINGERPRINT_BYTES)
        check(lib.minlsh_shingler_hash(self._handle, data, len(data), None, fp),
              "minlsh_shingler_hash")
        return fp.raw

    def stream(self):
        """A :class:`ShingleStream` for documents that arrive in chunks."""
        return ShingleStream(self)


class ShingleStream:
    """Shingles one document at a time from chunks (minlsh_shinglestream).

    ``feed(chunk)`` any number of times, then ``finish()`` returns
    ``(shingles, fingerprint)`` and makes the stream ready for the next
    document. The result is exactly ``Shingler.shingles`` of the
    concatenation. A stream is used by one thread at a time (it is locked
    internally, so misuse cannot corrupt memory).
    """

    __slots__ = ("_handle", "_lock")

    def __init__(self, shingler):
        self._handle = None
        self._lock = threading.Lock()
        h = c_void_p()
        check(lib.minlsh_shinglestream_new(byref(h), shingler._handle, None),
              "minlsh_shinglestream_new")
        self._handle = h.value

    def __del__(self, _free=lib.minlsh_shinglestream_free):
        if getattr(self, "_handle", None):
            _free(self._handle)
            self._handle = None

    def feed(self, chunk):
        """Add the next chunk (bytes, or str as UTF-8) of the current document."""
        data = _ffi.as_bytes(chunk, "chunk")
        with self._lock:
            check(lib.minlsh_shinglestream_feed(self._handle, data, len(data)),
                  "minlsh_shinglestream_feed")

    @property
    def bytes_fed(self):
        """Bytes accepted since the last finish or reset."""
        with self._lock:
            return lib.minlsh_shinglestream_bytes(self._handle)

    def reset(self):
        """Drop the current document and start a new one."""
        with self._lock:
            check(lib.minlsh_shinglestream_reset(self._handle), "minlsh_shinglestream_reset")

    def finish(self):
        """End the current document: its shingle set and fingerprint, then a fresh start."""
        st = c_void_p()
        check(lib.minlsh_shingleset_new(byref(st), None), "minlsh_shingleset_new")
        try:
            fp = ctypes.create_string_buffer(_ffi.FINGERPRINT_BYTES)
            with self._lock:
                check(lib.minlsh_shinglestream_finish(self._handle, st, fp),
                      "minlsh_shinglestream_finish")
            n = lib.minlsh_shingleset_count(st)
            out = _u64_array(n)
            if n:
                got = c_size_t()
                check(lib.minlsh_shingleset_copy_hashes(st, _ffi.address(out), n, byref(got)),
                      "minlsh_shingleset_copy_hashes")
            return out, fp.raw
        finally:
            lib.minlsh_shingleset_free(st)


_default_shinglers = {}


def shingler_for(shingle="word:5", shingler=None, **options):
    """A Shingler from an explicit one, or a spec plus options (the
    option-less specs are cached: shinglers are immutable)."""
    if shingler is not None:
        if options:
            raise TypeError("give either shingler= or shingler options, not both")
        if not isinstance(shingler, Shingler):
            raise TypeError("shingler must be a minlsh.Shingler")
        return shingler
    if isinstance(shingle, Shingler):
        if options:
            raise TypeError("give either a Shingler or shingler options, not both")
        return shingle
    if options:
        return Shingler.from_spec(shingle, **options)
    sh = _default_shinglers.get(shingle)
    if sh is None:
        sh = Shingler.from_spec(shingle)
        _default_shinglers[shingle] = sh
    return sh
