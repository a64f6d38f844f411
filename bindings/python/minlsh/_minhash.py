"""MinHash signatures (minlsh_family) and batch signing."""

from __future__ import annotations

import array
import collections
import ctypes
import itertools
import struct
import threading
import warnings
from ctypes import byref, c_double, c_int32, c_size_t, c_uint32, c_uint64, c_void_p
from typing import (Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple,
                    Union)

from . import _ffi
from ._ffi import check, lib
from ._shingle import shingler_for

# ---- families: immutable, shared, cached -------------------------------------


#: The signing schemes (MINLSH_SCHEME_*): "classic" (k hash functions per
#: item, the default) and "oph" (one-permutation hashing with densification:
#: one per item, several times faster to sign; docs/minhash.md section 7).
SCHEMES = ("classic", "oph")


def scheme_id(scheme):
    """MINLSH_SCHEME_* of a scheme name ("classic", "oph"); ValueError else."""
    if scheme in SCHEMES:
        return SCHEMES.index(scheme)
    raise ValueError("scheme must be 'classic' or 'oph', not %r" % (scheme,))


class _Family:
    """One minlsh_family handle. Immutable, so any number of threads may use
    it; freed when the last MinHash (and the cache) lets go of it."""

    __slots__ = ("handle", "k", "seed", "scheme", "sig_type", "__weakref__")

    def __init__(self, k, seed, scheme=0):
        self.handle = None
        self.sig_type = c_uint32 * k
        h = c_void_p()
        check(lib.minlsh_family_new_scheme(byref(h), k, seed, scheme, None),
              "minlsh_family_new_scheme", "num_perm = %d (1..%d)" % (k, _ffi.FAMILY_K_MAX))
        self.handle = h.value
        self.k = k
        self.seed = seed
        self.scheme = scheme

    def __del__(self, _free=lib.minlsh_family_free):
        if getattr(self, "handle", None):
            _free(self.handle)
            self.handle = None


_FAMILY_CACHE_SIZE = 32
_families = collections.OrderedDict()
_families_lock = threading.Lock()


def family(num_perm, seed, scheme="classic"):
    """The family (num_perm, seed, scheme), from a small LRU cache. scheme is
    a name of SCHEMES or its MINLSH_SCHEME_* number."""
    if isinstance(num_perm, bool) or not isinstance(num_perm, int):
        raise TypeError("num_perm must be an integer")
    seed = _ffi.as_u64(seed, "seed")
    if not 1 <= num_perm <= _ffi.FAMILY_K_MAX:
        raise _ffi.error(_ffi.E_PARAM, "minlsh_family_new",
                         "num_perm = %d (1..%d)" % (num_perm, _ffi.FAMILY_K_MAX))
    if not isinstance(scheme, int) or isinstance(scheme, bool):
        scheme = scheme_id(scheme)
    elif not 0 <= scheme < len(SCHEMES):
        raise ValueError("unknown scheme %d" % scheme)
    key = (num_perm, seed, scheme)
    with _families_lock:
        fam = _families.get(key)
        if fam is not None:
            _families.move_to_end(key)
            return fam
    fam = _Family(num_perm, seed, scheme)
    with _families_lock:
        fam = _families.setdefault(key, fam)
        _families.move_to_end(key)
        while len(_families) > _FAMILY_CACHE_SIZE:
            _families.popitem(last=False)
    return fam


def _u32_buffer(k):
    return (c_uint32 * k)()


def _u64_buffer(hashes):
    """A ctypes uint64 array copied from a numpy uint64 array, an
    array.array('Q') or an iterable of ints in 0..2**64-1."""
    np = _ffi.numpy
    if np is not None and isinstance(hashes, np.ndarray) and hashes.dtype == np.uint64:
        raw = np.ascontiguousarray(hashes).tobytes()
        return (c_uint64 * (len(raw) // 8)).from_buffer_copy(raw)
    if isinstance(hashes, array.array) and hashes.typecode == "Q":
        return (c_uint64 * len(hashes)).from_buffer_copy(hashes)
    if np is not None and isinstance(hashes, np.ndarray):
        hashes = hashes.tolist()
    vals = [_ffi.as_u64(h, "hash") for h in hashes]
    return (c_uint64 * len(vals))(*vals)


def _item_hash(item):
    data = _ffi.as_bytes(item, "item")
    out = c_uint64()
    check(lib.minlsh_siphash24(byref(out), _ffi.DEFAULT_KEY, data, len(data)), "minlsh_siphash24")
    return out.value


# ---- tokens joined into one buffer ---------------------------------------------

_SIZE_T = ctypes.sizeof(c_size_t)
_SIZE_CODE = {8: "Q", 4: "I"}.get(_SIZE_T, "L")


def _size_array(values):
    """An array.array of size_t from an iterable of ints (C speed)."""
    return array.array(_SIZE_CODE, values)


def _join_tokens(tokens):
    """(data, lengths) for a list of tokens: every token's bytes one after
    the other, and how many bytes each has. str tokens count as their UTF-8
    bytes, bytes-like ones as they are.

    The common cases run at C speed: all-str tokens are joined and encoded
    once (and when the text is ASCII, a token's byte length is its length,
    so nothing is encoded token by token); all-bytes tokens are joined once.
    """
    if not tokens:
        return b"", ()
    try:
        text = "".join(tokens)
    except TypeError:
        pass
    else:
        if text.isascii():
            return text.encode("ascii"), map(len, tokens)
        encoded = [t.encode("utf-8") for t in tokens]
        return b"".join(encoded), map(len, encoded)
    try:
        data = b"".join(tokens)
    except TypeError:
        encoded = [_ffi.as_bytes(t, "token") for t in tokens]
        return b"".join(encoded), map(len, encoded)
    if all(type(t) is bytes for t in tokens):
        return data, map(len, tokens)
    encoded = [_ffi.as_bytes(t, "token") for t in tokens]  # bytearray, memoryview...
    return b"".join(encoded), map(len, encoded)


def _as_token_list(doc):
    if isinstance(doc, (str, bytes, bytearray, memoryview)):
        raise TypeError("each document must be a list of tokens, not one %s"
                        % type(doc).__name__)
    return doc if isinstance(doc, (list, tuple)) else list(doc)


def _joined(docs):
    """Every token of every document joined with a NUL byte, as bytes, or
    None when str and bytes tokens are mixed. A join per document and one
    for the batch, then one encode: no Python work per token (joining each
    list directly is twice as fast as joining one chained iterator, which
    join first copies into a list). Documents without tokens add nothing,
    not even a separator. Whether a token held a NUL itself, the library
    finds when it counts the separators."""
    nonempty = list(filter(None, docs))
    try:
        return "\0".join(map("\0".join, nonempty)).encode("utf-8")
    except TypeError:
        pass
    try:
        return b"\0".join(map(b"\0".join, nonempty))
    except TypeError:
        return None


#: Documents per foreign call of _sign_into: their joined tokens (a few
#: hundred KB for documents of hundreds of tokens) stay in the cache and in
#: memory the allocator reuses, where one buffer for a whole batch is new
#: memory written three times (inner join, outer join, encode); measured a
#: sixth faster on rensa's shape.
_SIGN_CHUNK_DOCS = 64


def _sign_into(fam, docs, addr, key=None):
    """Sign a list of token lists, writing len(docs)*k uint32 values at
    address addr (an int, or a ctypes buffer), row after row: one foreign
    call per _SIGN_CHUNK_DOCS documents, none per token.

    The tokens are joined with a NUL separator (minlsh_family_sign_delimited);
    when a token contains NUL, or str and bytes tokens are mixed, with
    per-token offsets instead (minlsh_family_sign_tokens). Same bits."""
    n, k = len(docs), fam.k
    if not isinstance(addr, int):
        addr = ctypes.addressof(addr)
    # The accelerator hands the library each token's own bytes: no join.
    if (_sign_tokens_fast is not None and key is None
            and _sign_tokens_fast(fam.handle, None, docs, addr, k)):
        return
    for i in range(0, n, _SIGN_CHUNK_DOCS):
        _sign_chunk(fam, docs[i:i + _SIGN_CHUNK_DOCS], addr + 4 * k * i, key)


#: minlsh._speedups.join_tokens when the accelerator is loaded: _joined's
#: bytes without a Python step per token, or None where it does not apply.
_join_tokens_fast = _ffi.speedups.join_tokens if _ffi.speedups is not None else None
#: minlsh._speedups.sign_tokens: _sign_into's work from the token objects'
#: own bytes, or None where it does not apply.
_sign_tokens_fast = _ffi.speedups.sign_tokens if _ffi.speedups is not None else None


#: minlsh._speedups.sign_minhashes: MinHash.generator's objects, signed and
#: made in C (as _from_raw makes them), or None where it does not apply.
_sign_minhashes_fast = _ffi.speedups.sign_minhashes if _ffi.speedups is not None else None


def _sign_chunk(fam, docs, addr, key):
    n, k = len(docs), fam.k
    doc_offsets = _size_array(itertools.accumulate(itertools.chain((0,), map(len, docs))))
    data = _join_tokens_fast(docs) if _join_tokens_fast is not None else None
    if data is None:
        data = _joined(docs)
    if data is not None:
        rc = lib.minlsh_family_sign_delimited(fam.handle, key, data, len(data), 0,
                                              doc_offsets.buffer_info()[0], n, addr, n * k, None)
        if rc != _ffi.E_PARAM:  # PARAM: a token holds a NUL; take the offsets path
            check(rc, "minlsh_family_sign_delimited")
            return
    flat = list(itertools.chain.from_iterable(docs))
    data, lengths = _join_tokens(flat)
    offsets = _size_array(itertools.accumulate(itertools.chain((0,), lengths)))
    check(lib.minlsh_family_sign_tokens(
        fam.handle, key, data, offsets.buffer_info()[0], len(flat),
        doc_offsets.buffer_info()[0], n, addr, n * k, None), "minlsh_family_sign_tokens")


def _sign_token_lists(fam, docs, key=None):
    """The signatures of a list of token lists (:func:`_sign_into`) as a
    bytes-like buffer of len(docs)*k uint32 values, native order."""
    out = ctypes.create_string_buffer(4 * len(docs) * fam.k)
    _sign_into(fam, docs, out, key)
    return out


#: A token: str (hashed as its UTF-8 bytes) or bytes-like.
Token = Union[str, bytes, bytearray, memoryview]

_GPU_MODES = ("disable", "detect", "always")


class MinHash:
    """A MinHash signature of ``num_perm`` 32-bit values, with datasketch's API.

    The constructor takes datasketch's arguments in datasketch's order:
    ``MinHash(num_perm=128, seed=1, gpu_mode="disable", hashfunc=None,
    hashobj=None, hashvalues=None, permutations=None)``.

    ``update(b)`` adds one item: its bytes are hashed to 64 bits with
    SipHash-2-4 under the library's default key (``minlsh_siphash24``) and
    folded in with ``minlsh_family_update``; ``str`` items count as their
    UTF-8 bytes (datasketch's default hash needs bytes; here both work).
    ``hashfunc``, when given, is called on each item and must return an int
    in 0..2**64-1, used as the item's 64-bit hash as it is (datasketch's
    hashfunc returns a 32-bit int; any such function works). Signatures are
    comparable only with the same ``num_perm`` and ``seed``; they are not
    datasketch's values (another hash and another family), so compare
    minlsh MinHash objects with each other, not with datasketch's.

    ``permutations`` is checked for its length and otherwise ignored (the
    family of a (num_perm, seed) is built once and cached); ``gpu_mode``
    "disable" and "detect" run on the CPU, "always" raises RuntimeError as
    datasketch does without a GPU. An empty MinHash has the empty-set
    signature (every value 0xFFFFFFFF); two empty ones have Jaccard 1.0 (as
    in datasketch: the same set), an empty one and another 0.0. An index
    still never makes an empty document a candidate.

    Like any Python object, one MinHash should not be updated from several
    threads at once; different MinHash objects are independent.

    ``scheme="oph"`` (keyword only; a minlsh extension) signs with
    one-permutation hashing: several times faster, but such a MinHash is
    made whole (``bulk``, ``generator``, ``from_text``, :func:`signatures`,
    ``hashvalues=``) and cannot be extended: ``update``, ``update_batch``,
    ``update_hashes`` and ``merge`` raise ValueError. Signatures of
    different schemes never compare (ValueError, like another seed).
    """

    __slots__ = ("_family", "_sig", "_hashfunc")

    def __init__(self, num_perm: int = 128, seed: int = 1, gpu_mode: str = "disable",
                 hashfunc: Optional[Callable[[Any], int]] = None, hashobj: Any = None,
                 hashvalues: Optional[Iterable[int]] = None, permutations: Any = None, *,
                 scheme: str = "classic") -> None:
        if gpu_mode not in _GPU_MODES:
            raise ValueError("gpu_mode must be one of %s" % ", ".join(_GPU_MODES))
        if gpu_mode == "always":
            raise RuntimeError("GPU mode 'always' requested but minlsh runs on the CPU only.")
        if hashfunc is not None and not callable(hashfunc):
            raise ValueError("The hashfunc must be a callable.")
        if hashobj is not None:
            warnings.warn("hashobj is deprecated, use hashfunc instead.", DeprecationWarning,
                          stacklevel=2)
        self._hashfunc = hashfunc
        if hashvalues is not None:
            if _ffi.numpy is not None and isinstance(hashvalues, _ffi.numpy.ndarray):
                hashvalues = hashvalues.tolist()
            hashvalues = list(hashvalues)
            num_perm = len(hashvalues)
        if permutations is not None and len(permutations[0]) != num_perm:
            raise ValueError("Numbers of hash values and permutations mismatch")
        self._family = family(num_perm, seed, scheme)
        self._sig = _u32_buffer(num_perm)
        if hashvalues is None:
            ctypes.memset(self._sig, 0xFF, 4 * num_perm)
        else:
            self._set_values(hashvalues)

    @classmethod
    def _from_raw(cls, fam, raw, offset=0, hashfunc=None):
        """A MinHash of family fam holding k values read from raw at offset
        (no checks: the fast path of bulk and the index)."""
        m = object.__new__(cls)
        m._family = fam
        m._hashfunc = hashfunc
        m._sig = fam.sig_type.from_buffer_copy(raw, offset)
        return m

    def _set_values(self, values):
        k = self._family.k
        vals = list(values)
        if len(vals) != k:
            raise ValueError("expected %d values, got %d" % (k, len(vals)))
        for i, v in enumerate(vals):
            v = int(v)
            if not 0 <= v <= 0xFFFFFFFF:
                raise ValueError("signature value %d out of range: %d" % (i, v))
            self._sig[i] = v

    # -- construction ---------------------------------------------------------

    @classmethod
    def from_text(cls, text, num_perm=128, seed=1, shingle="word:5", shingler=None, *,
                  scheme="classic", **shingler_options):
        """The signature of a document's shingle set (minlsh_family_sign_text):
        the same values as one row of :func:`signatures`."""
        sh = shingler_for(shingle, shingler, **shingler_options)
        m = cls(num_perm, seed, scheme=scheme)
        data = _ffi.as_bytes(text)
        check(lib.minlsh_family_sign_text(m._family.handle, sh._handle, data, len(data),
                                          m._sig, num_perm, None), "minlsh_family_sign_text")
        return m

    @classmethod
    def from_signature(cls, values, seed=1, scheme="classic"):
        """A MinHash holding given values (e.g. a row of :func:`signatures`)."""
        if _ffi.numpy is not None and isinstance(values, _ffi.numpy.ndarray):
            values = values.tolist()
        values = list(values)
        return cls(len(values), seed, hashvalues=values, scheme=scheme)

    @classmethod
    def bulk(cls, b: Iterable[Sequence[Token]], **minhash_kwargs: Any) -> List[MinHash]:
        """A list of MinHash objects, one per token list of ``b`` (an
        iterable of lists of str or bytes tokens), made with
        ``MinHash(**minhash_kwargs)``.

        The tokens cross into C a batch at a time, str tokens hashed as
        their UTF-8 bytes (with the accelerator, the objects are made in C
        too: docs/ffi.md). The values are exactly those of ``update`` token
        by token. With ``hashfunc`` the hashes are computed in Python, then
        folded in one call per list.
        """
        return list(cls.generator(b, **minhash_kwargs))

    @classmethod
    def generator(cls, b: Iterable[Sequence[Token]], batch_size: int = 256,
                  **minhash_kwargs: Any) -> Iterator[MinHash]:
        """Like :meth:`bulk`, but yields the MinHash objects one by one,
        reading ``b`` lazily ``batch_size`` token lists at a time (one
        foreign call per batch; a batch's joined tokens stay small enough
        for the caches, which is faster than one huge call)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("batch_size must be an integer >= 1")
        proto = cls(**minhash_kwargs)
        fam, hashfunc = proto._family, proto._hashfunc
        fast = _sign_minhashes_fast if hashfunc is None else None
        # A list is read a slice at a time (no Python step per document).
        seq = b if type(b) in (list, tuple) else None
        it = iter(b) if seq is None else None
        pos = 0
        while True:
            if seq is not None:
                batch = seq[pos:pos + batch_size]
                pos += batch_size
            else:
                batch = list(itertools.islice(it, batch_size))
            if not batch:
                return
            if fast is not None:
                made = fast(fam.handle, batch, fam.k, cls, fam, fam.sig_type, _MINHASH_SLOTS)
                if made is not None:
                    yield from made
                    continue
            docs = [_as_token_list(d) for d in batch]
            if hashfunc is not None:
                for d in docs:
                    m = proto.copy()
                    m.update_batch(d)
                    yield m
                continue
            raw = _sign_token_lists(fam, docs)
            step = 4 * fam.k
            for i in range(len(docs)):
                yield cls._from_raw(fam, raw, i * step)

    @classmethod
    def union(cls, *mhs: MinHash) -> MinHash:
        """A new MinHash, the union of two or more (element-wise minimum).
        ValueError for fewer than two, or different seeds or num_perm."""
        if len(mhs) < 2:
            raise ValueError("Cannot union less than 2 MinHash")
        first = mhs[0]
        for m in mhs:
            if not isinstance(m, MinHash):
                raise TypeError("union needs MinHash objects, not %s" % type(m).__name__)
            if m.seed != first.seed or len(m) != len(first):
                raise ValueError("The unioning MinHash must have the same seed and number "
                                 "of permutation functions")
        out = cls._from_raw(first._family, first._sig, 0, first._hashfunc)
        for m in mhs[1:]:
            check(lib.minlsh_signature_merge(out._sig, m._sig, len(out)),
                  "minlsh_signature_merge")
        return out

    # -- datasketch's API -----------------------------------------------------

    @property
    def num_perm(self) -> int:
        """The number of values (hash functions)."""
        return self._family.k

    @property
    def seed(self) -> int:
        """The seed of the family of hash functions."""
        return self._family.seed

    @property
    def hashfunc(self) -> Optional[Callable[[Any], int]]:
        """The function given as ``hashfunc`` (None: SipHash-2-4 of the bytes)."""
        return self._hashfunc

    def _hash(self, item):
        if self._hashfunc is None:
            return _item_hash(item)
        return _ffi.as_u64(self._hashfunc(item), "hashfunc(item)")

    @property
    def scheme(self) -> str:
        """How the values were made: "classic" or "oph"."""
        return SCHEMES[self._family.scheme]

    def _check_extendable(self, what):
        if self._family.scheme != 0:
            raise ValueError("cannot %s an OPH MinHash: its values are densified and cannot "
                             "be extended; sign the whole set at once" % what)

    def update(self, b: Any) -> None:
        """Add one item (bytes, or str as UTF-8; with ``hashfunc``, anything
        it accepts)."""
        self._check_extendable("update")
        h = c_uint64(self._hash(b))
        check(lib.minlsh_family_update(self._family.handle, byref(h), 1,
                                       self._sig, self._family.k), "minlsh_family_update")

    def update_batch(self, b: Iterable[Any]) -> None:
        """Add every item of an iterable, in one foreign call (the tokens are
        joined into one buffer, as in :meth:`bulk`); the same values as
        :meth:`update` item by item."""
        self._check_extendable("update")
        if self._hashfunc is not None:
            self.update_hashes([self._hash(x) for x in b])
            return
        items = _as_token_list(b)
        if not items:
            return
        raw = _sign_token_lists(self._family, [items])
        check(lib.minlsh_signature_merge(self._sig, raw, self._family.k),
              "minlsh_signature_merge")

    def update_hashes(self, hashes: Iterable[int]) -> None:
        """Add 64-bit hashes as they are (e.g. ``Shingler.shingles(text)``),
        without hashing them again."""
        self._check_extendable("update")
        buf = _u64_buffer(hashes)
        if len(buf):
            check(lib.minlsh_family_update(self._family.handle, buf, len(buf),
                                           self._sig, self._family.k), "minlsh_family_update")

    def jaccard(self, other: MinHash) -> float:
        """The estimated Jaccard similarity (fraction of equal values): 1.0
        for two empty signatures (equal sets, as datasketch says), 0.0 for an
        empty one and another. ValueError for another seed or num_perm."""
        self._check_compatible(other, "jaccard")
        out = c_double()
        check(lib.minlsh_signature_estimate(byref(out), self._sig, other._sig, self._family.k),
              "minlsh_signature_estimate")
        # The C estimate is 0 when either is empty: only then can both be.
        if out.value == 0.0 and self.is_empty() and other.is_empty():
            return 1.0
        return out.value

    def count(self) -> float:
        """The estimated number of distinct items: k / sum(v / (2**32 - 1)) - 1,
        datasketch's estimator over the 32-bit values."""
        k = self._family.k
        total = sum(self._sig) / float(0xFFFFFFFF)
        return float(k) / total - 1.0

    def merge(self, other: MinHash) -> None:
        """Become the signature of the union (element-wise minimum).
        ValueError for another seed or num_perm, or an OPH MinHash."""
        self._check_compatible(other, "merge")
        self._check_extendable("merge")
        check(lib.minlsh_signature_merge(self._sig, other._sig, self._family.k),
              "minlsh_signature_merge")

    def digest(self) -> Any:
        """A copy of the values: a numpy uint32 array when numpy is installed,
        else an ``array.array('I')``."""
        if _ffi.numpy is not None:
            return _ffi.numpy.frombuffer(bytes(self._sig), dtype=_ffi.numpy.uint32).copy()
        out = array.array("I")
        out.frombytes(bytes(self._sig))
        return out

    @property
    def hashvalues(self) -> Any:
        """The values (as datasketch calls them): a copy, as :meth:`digest`.
        Assigning a sequence of num_perm ints replaces them."""
        return self.digest()

    @hashvalues.setter
    def hashvalues(self, values: Iterable[int]) -> None:
        if _ffi.numpy is not None and isinstance(values, _ffi.numpy.ndarray):
            values = values.tolist()
        self._set_values(values)

    @property
    def permutations(self) -> Any:
        """The family's coefficients, shaped as datasketch shapes them: a
        (2, num_perm) uint64 numpy array (row 0 the a_i, row 1 the b_i;
        ``a, b = m.permutations`` works), or without numpy a tuple of two
        ``array.array('Q')``. h_i(x) = (a_i * x + b_i) mod (2**61 - 1), value
        h >> 29 (datasketch: mod 2**61 - 1, value the low 32 bits). A copy."""
        k = self._family.k
        a, b_ = (c_uint64 * k)(), (c_uint64 * k)()
        check(lib.minlsh_family_copy_coefficients(self._family.handle, a, b_, k, None),
              "minlsh_family_copy_coefficients")
        if _ffi.numpy is not None:
            np = _ffi.numpy
            return np.vstack([np.frombuffer(a, dtype=np.uint64),
                              np.frombuffer(b_, dtype=np.uint64)])
        return (array.array("Q", a), array.array("Q", b_))

    def copy(self) -> MinHash:
        """An independent copy (same family, values and hashfunc)."""
        return type(self)._from_raw(self._family, self._sig, 0, self._hashfunc)

    def is_empty(self) -> bool:
        """True for the empty-set signature (nothing added)."""
        return check(lib.minlsh_signature_is_empty(self._sig, self._family.k),
                     "minlsh_signature_is_empty") == 1

    def clear(self) -> None:
        """Back to the empty signature."""
        ctypes.memset(self._sig, 0xFF, 4 * self._family.k)

    # -- Python protocols -----------------------------------------------------

    def __len__(self):
        return self._family.k

    def __eq__(self, other):
        """Equal when of the same type with the same seed and values (as in
        datasketch: a MinHash never equals a LeanMinHash)."""
        if not isinstance(other, MinHash):
            return NotImplemented
        return (type(self) is type(other) and self.seed == other.seed
                and self.num_perm == other.num_perm
                and self._family.scheme == other._family.scheme
                and bytes(self._sig) == bytes(other._sig))

    __hash__ = None  # mutable

    def __repr__(self):
        return "%s(num_perm=%d, seed=%d%s%s)" % (
            type(self).__name__, self.num_perm, self.seed,
            ", scheme='oph'" if self._family.scheme else "", ", empty" if self.is_empty() else "")

    def __getstate__(self):
        state = (self._family.k, self._family.seed, bytes(self._sig), self._hashfunc)
        # classic pickles stay as they were
        return state + (self._family.scheme,) if self._family.scheme else state

    def __setstate__(self, state):
        if isinstance(state, dict):
            raise ValueError(datasketch_refusal("pickle of a MinHash"))
        k, seed, raw = state[:3]
        self._family = family(k, seed, state[4] if len(state) > 4 else 0)
        self._hashfunc = state[3] if len(state) > 3 else None
        if len(raw) != 4 * k:
            raise ValueError("bad MinHash state")
        self._sig = (c_uint32 * k).from_buffer_copy(raw)

    def _check_compatible(self, other, what):
        if not isinstance(other, MinHash):
            raise TypeError("%s needs a MinHash, not %s" % (what, type(other).__name__))
        if other._family.k != self._family.k or other._family.seed != self._family.seed:
            raise ValueError(
                "cannot %s MinHash objects with different num_perm or seed "
                "(%d, %d) vs (%d, %d)" % (what, self._family.k, self._family.seed,
                                          other._family.k, other._family.seed))
        if other._family.scheme != self._family.scheme:
            raise ValueError("cannot %s MinHash objects of different schemes (%s vs %s)"
                             % (what, self.scheme, other.scheme))


#: The slots _from_raw sets, as sign_minhashes sets them (member descriptors).
_MINHASH_SLOTS = (MinHash._family, MinHash._sig, MinHash._hashfunc)


class LeanMinHash(MinHash):
    """A frozen MinHash, as datasketch's: ``LeanMinHash(minhash)`` or
    ``LeanMinHash(seed=..., hashvalues=...)``; no ``update`` (TypeError),
    but ``merge``, ``clear`` and assigning ``hashvalues`` as in datasketch
    (a hash key should not be changed while it is in a dict). Hashable. ``serialize`` writes an
    8-byte mark (``b"mlsh"``, a layout version, the scheme, two zero bytes)
    and then datasketch's layout: the seed as a signed 64-bit int, the
    number of values as a 32-bit int, the values as 32-bit unsigned ints, in
    the ``byteorder`` given (a :mod:`struct` byte-order character, default
    native "@"). ``deserialize`` refuses bytes without the mark: they are
    datasketch's, whose values cannot be compared with minlsh's."""

    __slots__ = ()

    def __init__(self, minhash: Optional[MinHash] = None, seed: Optional[int] = None,
                 hashvalues: Optional[Iterable[int]] = None) -> None:
        if minhash is not None:
            if not isinstance(minhash, MinHash):
                raise TypeError("LeanMinHash needs a MinHash, not %s" % type(minhash).__name__)
            self._family = minhash._family
            self._hashfunc = None
            self._sig = type(minhash._sig).from_buffer_copy(minhash._sig)
        elif hashvalues is not None and seed is not None:
            MinHash.__init__(self, seed=seed, hashvalues=hashvalues)
        else:
            raise ValueError("Init parameters cannot be None: make sure to set either minhash "
                             "or both of hash values and seed")

    def update(self, b: Any) -> None:
        """Not available: a LeanMinHash is frozen (TypeError)."""
        raise TypeError("Cannot update a LeanMinHash")

    def update_batch(self, b: Iterable[Any]) -> None:
        """Not available: a LeanMinHash is frozen (TypeError)."""
        raise TypeError("Cannot update a LeanMinHash")

    def update_hashes(self, hashes: Iterable[int]) -> None:
        """Not available: a LeanMinHash is frozen (TypeError)."""
        raise TypeError("Cannot update a LeanMinHash")

    def bytesize(self, byteorder: str = "@") -> int:
        """The size in bytes of :meth:`serialize`'s output."""
        return struct.calcsize("%s%sqi%dI" % (byteorder, _LEAN_HEAD, len(self)))

    def serialize(self, buf: Any, byteorder: str = "@") -> None:
        """Write the mark, the seed, the length and the values into ``buf`` (a
        writable buffer of at least :meth:`bytesize` bytes; ValueError if
        shorter)."""
        if len(buf) < self.bytesize(byteorder):
            raise ValueError("The buffer does not have enough space for holding this MinHash.")
        seed = self.seed
        if seed >= 1 << 63:  # the layout stores a signed 64-bit seed
            seed -= 1 << 64
        struct.pack_into("%s%sqi%dI" % (byteorder, _LEAN_HEAD, len(self)), buf, 0,
                         _LEAN_MAGIC, _LEAN_VERSION, self._family.scheme, seed, len(self),
                         *self._sig)

    @classmethod
    def deserialize(cls, buf: Any, byteorder: str = "@", *,
                    legacy: bool = False) -> LeanMinHash:
        """The LeanMinHash written by :meth:`serialize` at the start of
        ``buf``. Bytes in datasketch's layout without minlsh's mark raise
        ValueError (datasketch's values are another hash's); ``legacy=True``
        accepts them as minlsh 0.1.0 wrote them (the caller vouches that
        minlsh made them)."""
        view = memoryview(buf).cast("B")
        if bytes(view[:4]) == _LEAN_MAGIC:
            head = "%s%sqi" % (byteorder, _LEAN_HEAD)
            _, version, scheme, seed, num_perm = struct.unpack_from(head, view, 0)
            if version != _LEAN_VERSION or scheme >= len(SCHEMES):
                raise ValueError("bad LeanMinHash buffer: layout %d, scheme %d"
                                 % (version, scheme))
        elif legacy:
            head, scheme = "%sqi" % byteorder, 0
            seed, num_perm = struct.unpack_from(head, view, 0)
        else:
            raise ValueError(datasketch_refusal("LeanMinHash.serialize output",
                                                "; bytes that minlsh 0.1.0 wrote load with "
                                                "deserialize(buf, legacy=True)"))
        if not 1 <= num_perm <= _ffi.FAMILY_K_MAX:
            raise ValueError("bad LeanMinHash buffer: %d values" % num_perm)
        values = struct.unpack_from("%s%dI" % (byteorder, num_perm), view,
                                    struct.calcsize(head))
        lean = object.__new__(cls)
        MinHash.__init__(lean, seed=seed & _ffi.UINT64_MAX, hashvalues=values,
                         scheme=SCHEMES[scheme])
        return lean

    def __getstate__(self):
        return MinHash.__getstate__(self)[:3] + (None, self._family.scheme)

    def __setstate__(self, state):
        if isinstance(state, bytearray) or isinstance(state, dict):
            # datasketch pickles a LeanMinHash as a bytearray (minlsh 0.1.0
            # as bytes), a MinHash as its __dict__.
            raise ValueError(datasketch_refusal("pickle of a LeanMinHash"))
        if isinstance(state, bytes):
            other = LeanMinHash.deserialize(state, "<", legacy=True)
            self._family, self._sig, self._hashfunc = other._family, other._sig, None
            return
        MinHash.__setstate__(self, state)

    def __hash__(self):
        return hash((self.seed, bytes(self._sig)))


# LeanMinHash.serialize's mark, before datasketch's layout: the magic, the
# layout version, the scheme, two zero bytes.
_LEAN_MAGIC = b"mlsh"
_LEAN_VERSION = 1
_LEAN_HEAD = "4sBBxx"


def datasketch_refusal(what, extra=""):
    """The message for data that datasketch made."""
    return ("this looks like datasketch's %s: minlsh cannot use it, because datasketch's "
            "values come from another hash (SHA-1) and another family of permutations, so "
            "they never compare with minlsh's. Re-sign the documents with minlsh from their "
            "tokens (minlsh.MinHash.bulk(token_lists, num_perm=...) or MinHash.update) and "
            "save minlsh's objects instead%s" % (what, extra))


def matrix_bytes(rows, k, seed, n_expected=None, scheme=0):
    """n*k uint32 values, native order, row after row, as bytes, from a
    sequence of MinHash objects (num_perm k, the given seed and scheme
    number, else ValueError), a 2-D numpy array (n x k; any integer dtype,
    converted to uint32) or a sequence of rows of k ints."""
    np = _ffi.numpy
    if np is not None and isinstance(rows, np.ndarray):
        if rows.ndim != 2 or rows.shape[1] != k:
            raise ValueError("expected an n x %d matrix, got shape %r" % (k, rows.shape))
        if rows.dtype != np.uint32 and rows.size:
            if rows.dtype.kind not in "iu":
                raise TypeError("signature values must be integers, not %s" % rows.dtype)
            if int(rows.min()) < 0 or int(rows.max()) > 0xFFFFFFFF:
                raise ValueError("signature values must be in 0..2**32-1")
        out = np.ascontiguousarray(rows, dtype=np.uint32).tobytes()
        n = rows.shape[0]
    else:
        parts = []
        for i, m in enumerate(rows):
            if isinstance(m, MinHash):
                if m._family.k != k or m._family.seed != seed or m._family.scheme != scheme:
                    raise ValueError("row %d has num_perm=%d, seed=%d, scheme %s; expected "
                                     "num_perm=%d, seed=%d, scheme %s"
                                     % (i, m.num_perm, m.seed, m.scheme, k, seed,
                                        SCHEMES[scheme]))
                parts.append(bytes(m._sig))
            else:
                parts.append(bytes(signature_buffer(m, k, None, "row %d" % i)))
        out = b"".join(parts)
        n = len(parts)
    if n_expected is not None and n != n_expected:
        raise ValueError("%d keys but %d signatures" % (n_expected, n))
    return out



def _sig_rows(n, k):
    """Room for n signatures of k values: a numpy array (n, k) of uint32
    when numpy is there, else a flat array('I') of zeros."""
    np = _ffi.numpy
    if np is not None:
        return np.empty((n, k), dtype=np.uint32)
    return array.array("I", bytes(4 * n * k))


def _sig_result(out, n, k):
    """What _sig_rows gave, filled, as the caller gets it: the numpy array
    itself, or a SignatureMatrix over the flat array."""
    return out if _ffi.numpy is not None else SignatureMatrix(out, n, k)

def signatures_from_tokens(token_lists: Iterable[Sequence[Token]], num_perm: int = 128,
                           seed: int = 1, batch_size: int = 256, *,
                           scheme: str = "classic") -> Any:
    """The signatures of many token lists (each a list of str or bytes
    tokens) as an n x num_perm uint32 matrix: a numpy array when numpy is
    installed, else a :class:`SignatureMatrix`. Row i has exactly the values
    of ``MinHash.bulk(token_lists)[i]``. Lists go ``batch_size`` at a time
    (at most 64 per foreign call), each call writing straight into the
    result."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError("batch_size must be an integer >= 1")
    fam = family(num_perm, seed, scheme)
    docs = [_as_token_list(d) for d in token_lists]
    n, k = len(docs), num_perm
    out = _sig_rows(n, k)
    base = _ffi.address(out) if n else 0
    for i in range(0, n, batch_size):
        _sign_into(fam, docs[i:i + batch_size], base + 4 * k * i)
    return _sig_result(out, n, k)


def signature_buffer(value, k, seed=None, what="signature", scheme=None):
    """A ctypes uint32 array of k values for a MinHash (of num_perm k, and
    seed and scheme number when given), a numpy array, an array/memoryview
    of uint32 or a sequence of ints (copied)."""
    if isinstance(value, MinHash):
        if (value.num_perm != k or (seed is not None and value.seed != seed)
                or (scheme is not None and value._family.scheme != scheme)):
            raise ValueError("%s has num_perm=%d, seed=%d, scheme %s; expected num_perm=%d, "
                             "seed=%s%s" % (what, value.num_perm, value.seed, value.scheme, k,
                                            seed, "" if scheme is None
                                            else ", scheme " + SCHEMES[scheme]))
        return type(value._sig).from_buffer_copy(value._sig)
    if _ffi.numpy is not None and isinstance(value, _ffi.numpy.ndarray):
        value = value.astype(_ffi.numpy.uint32, copy=False).tolist()
    elif isinstance(value, memoryview):
        value = value.tolist()
    try:
        n = len(value)
    except TypeError:
        raise TypeError("%s must be a MinHash or a sequence of %d uint32 values" % (what, k)) \
            from None
    if n != k:
        raise ValueError("%s has %d values, expected %d" % (what, n, k))
    try:
        return (c_uint32 * k)(*value)
    except TypeError:
        raise TypeError("%s values must be integers" % what) from None


# ---- batch signing -------------------------------------------------------------


class SignatureMatrix:
    """n signatures of k uint32 values in one buffer: what :func:`signatures`
    returns when numpy is not installed.

    ``m[i]`` is row i as a memoryview of k values (format 'I'), ``m[i, j]``
    a value, ``len(m)`` the number of rows, ``m.shape`` (n, k),
    ``m.tolist()`` lists of ints, and ``memoryview(m)`` the flat buffer.
    """

    __slots__ = ("_data", "_n", "_k")

    def __init__(self, data, n, k):
        self._data = data  # array.array('I') of n*k values
        self._n = n
        self._k = k

    @property
    def shape(self):
        """(rows, num_perm)."""
        return (self._n, self._k)

    dtype = "uint32"

    def __len__(self):
        return self._n

    def __getitem__(self, index):
        if isinstance(index, tuple):
            i, j = index
            i, j = self._index(i, self._n), self._index(j, self._k)
            return self._data[i * self._k + j]
        i = self._index(index, self._n)
        return memoryview(self._data)[i * self._k:(i + 1) * self._k]

    @staticmethod
    def _index(i, n):
        i = i.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("index out of range")
        return i

    def __iter__(self):
        view = memoryview(self._data)
        for i in range(self._n):
            yield view[i * self._k:(i + 1) * self._k]

    def __buffer__(self, flags):  # Python 3.12+ buffer protocol
        return memoryview(self._data)

    def memoryview(self):
        """The flat buffer of n*k values, row after row."""
        return memoryview(self._data)

    def tolist(self):
        """The rows as lists of ints."""
        return [list(row) for row in self]

    def tobytes(self):
        """The n*k values as bytes, native order, row after row."""
        return self._data.tobytes()

    def __repr__(self):
        return "SignatureMatrix(shape=(%d, %d))" % (self._n, self._k)


def signatures(texts, num_perm=128, seed=1, shingle="word:5", threads=0, *, shingler=None,
               errors="raise", scheme="classic", **shingler_options):
    """Sign many documents at once: an n x num_perm matrix of uint32.

    ``texts`` is an iterable of str (UTF-8) or bytes-like documents. Row i is
    exactly ``MinHash.from_text(texts[i], num_perm, seed, shingle)``.
    ``shingle`` is a spec such as ``"word:5"`` (see :class:`Shingler`;
    ``shingler=`` gives a ready one, keyword options build one).
    ``threads``: 0 = one per processor, 1 = the calling thread only; the
    result never depends on it. The work happens in one call to
    ``minlsh_family_sign_batch`` with the interpreter lock released.

    Returns a numpy array of shape (n, num_perm) when numpy is installed,
    else a :class:`SignatureMatrix`. A document the library refuses (e.g.
    over ``max_document_bytes``) raises :class:`minlsh.Error` naming its
    index; with ``errors="empty"`` it gets the empty signature instead.
    ``scheme="oph"`` signs with one-permutation hashing (see :class:`MinHash`).
    """
    if errors not in ("raise", "empty"):
        raise ValueError("errors must be 'raise' or 'empty'")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError("threads must be an integer >= 0")
    if isinstance(texts, (str, bytes, bytearray, memoryview)):
        raise TypeError("texts must be an iterable of documents, not one %s"
                        % type(texts).__name__)
    sh = shingler_for(shingle, shingler, **shingler_options)
    fam = family(num_perm, seed, scheme)
    docs = [_ffi.as_bytes(t) for t in texts]  # the references keep them alive
    n, k = len(docs), num_perm
    out = _sig_rows(n, k)
    status = (c_int32 * max(n, 1))()
    if n:
        addr = _ffi.address(out)
        ptrs = (c_void_p * n)(*[ctypes.cast(ctypes.c_char_p(d), c_void_p) for d in docs])
        lens = (c_size_t * n)(*[len(d) for d in docs])
        rc = lib.minlsh_family_sign_batch(fam.handle, sh._handle, ptrs, lens, n, threads,
                                          addr, n * k, None, status)
        if rc == _ffi.E_UNSUPPORTED and threads != 1:  # a build without threads
            rc = lib.minlsh_family_sign_batch(fam.handle, sh._handle, ptrs, lens, n, 1,
                                              addr, n * k, None, status)
        if rc < 0 and not any(status[i] for i in range(n)):
            check(rc, "minlsh_family_sign_batch")  # a whole-call error
        if errors == "raise":
            for i in range(n):
                if status[i] < 0:
                    raise _ffi.error(status[i], "minlsh_family_sign_batch",
                                     "document %d" % i)
    return _sig_result(out, n, k)
