"""MinHash signatures (minlsh_family) and batch signing."""

import array
import collections
import ctypes
import threading
from ctypes import byref, c_double, c_int32, c_size_t, c_uint32, c_uint64, c_void_p

from . import _ffi
from ._ffi import check, lib
from ._shingle import shingler_for

# ---- families: immutable, shared, cached -------------------------------------


class _Family:
    """One minlsh_family handle. Immutable, so any number of threads may use
    it; freed when the last MinHash (and the cache) lets go of it."""

    __slots__ = ("handle", "k", "seed", "__weakref__")

    def __init__(self, k, seed):
        self.handle = None
        h = c_void_p()
        check(lib.minlsh_family_new(byref(h), k, seed, None), "minlsh_family_new",
              "num_perm = %d (1..%d)" % (k, _ffi.FAMILY_K_MAX))
        self.handle = h.value
        self.k = k
        self.seed = seed

    def __del__(self, _free=lib.minlsh_family_free):
        if getattr(self, "handle", None):
            _free(self.handle)
            self.handle = None


_FAMILY_CACHE_SIZE = 32
_families = collections.OrderedDict()
_families_lock = threading.Lock()


def family(num_perm, seed):
    """The family (num_perm, seed), from a small LRU cache."""
    if isinstance(num_perm, bool) or not isinstance(num_perm, int):
        raise TypeError("num_perm must be an integer")
    seed = _ffi.as_u64(seed, "seed")
    if not 1 <= num_perm <= _ffi.FAMILY_K_MAX:
        raise _ffi.error(_ffi.E_PARAM, "minlsh_family_new",
                         "num_perm = %d (1..%d)" % (num_perm, _ffi.FAMILY_K_MAX))
    key = (num_perm, seed)
    with _families_lock:
        fam = _families.get(key)
        if fam is not None:
            _families.move_to_end(key)
            return fam
    fam = _Family(num_perm, seed)
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


class MinHash:
    """A MinHash signature of ``num_perm`` 32-bit values, as in datasketch.

    ``update(b)`` adds one item: its bytes are hashed to 64 bits with
    SipHash-2-4 under the library's default key (``minlsh_siphash24``) and
    folded in with ``minlsh_family_update``; ``str`` items are encoded as
    UTF-8. Signatures are comparable only with the same ``num_perm`` and
    ``seed``. An empty MinHash has the empty-set signature (every value
    0xFFFFFFFF), whose Jaccard estimate with anything is 0.

    Like any Python object, one MinHash should not be updated from several
    threads at once; different MinHash objects are independent.
    """

    __slots__ = ("_family", "_sig")

    def __init__(self, num_perm=128, seed=1, *, hashvalues=None):
        self._family = family(num_perm, seed)
        self._sig = _u32_buffer(num_perm)
        if hashvalues is None:
            ctypes.memset(self._sig, 0xFF, 4 * num_perm)
        else:
            self._set_values(hashvalues)

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
    def from_text(cls, text, num_perm=128, seed=1, shingle="word:5", shingler=None,
                  **shingler_options):
        """The signature of a document's shingle set (minlsh_family_sign_text):
        the same values as one row of :func:`signatures`."""
        sh = shingler_for(shingle, shingler, **shingler_options)
        m = cls(num_perm, seed)
        data = _ffi.as_bytes(text)
        check(lib.minlsh_family_sign_text(m._family.handle, sh._handle, data, len(data),
                                          m._sig, num_perm, None), "minlsh_family_sign_text")
        return m

    @classmethod
    def from_signature(cls, values, seed=1):
        """A MinHash holding given values (e.g. a row of :func:`signatures`)."""
        if _ffi.numpy is not None and isinstance(values, _ffi.numpy.ndarray):
            values = values.tolist()
        values = list(values)
        return cls(len(values), seed, hashvalues=values)

    # -- datasketch's API -----------------------------------------------------

    @property
    def num_perm(self):
        return self._family.k

    @property
    def seed(self):
        return self._family.seed

    def update(self, b):
        """Add one item (bytes, or str as UTF-8)."""
        h = c_uint64(_item_hash(b))
        check(lib.minlsh_family_update(self._family.handle, byref(h), 1,
                                       self._sig, self._family.k), "minlsh_family_update")

    def update_batch(self, b):
        """Add every item of an iterable (one signing call for all of them)."""
        hashes = [_item_hash(x) for x in b]
        self.update_hashes(hashes)

    def update_hashes(self, hashes):
        """Add 64-bit hashes as they are (e.g. ``Shingler.shingles(text)``),
        without hashing them again."""
        buf = _u64_buffer(hashes)
        if len(buf):
            check(lib.minlsh_family_update(self._family.handle, buf, len(buf),
                                           self._sig, self._family.k), "minlsh_family_update")

    def jaccard(self, other):
        """The estimated Jaccard similarity (fraction of equal values; 0 when
        either signature is empty)."""
        self._check_compatible(other, "jaccard")
        out = c_double()
        check(lib.minlsh_signature_estimate(byref(out), self._sig, other._sig, self._family.k),
              "minlsh_signature_estimate")
        return out.value

    def merge(self, other):
        """Become the signature of the union (element-wise minimum)."""
        self._check_compatible(other, "merge")
        check(lib.minlsh_signature_merge(self._sig, other._sig, self._family.k),
              "minlsh_signature_merge")

    def digest(self):
        """A copy of the values: a numpy uint32 array when numpy is installed,
        else an ``array.array('I')``."""
        if _ffi.numpy is not None:
            return _ffi.numpy.frombuffer(bytes(self._sig), dtype="<u4").astype(
                _ffi.numpy.uint32)
        out = array.array("I")
        out.frombytes(bytes(self._sig))
        return out

    @property
    def hashvalues(self):
        """The values (as datasketch calls them): same as :meth:`digest`."""
        return self.digest()

    def copy(self):
        m = MinHash.__new__(MinHash)
        m._family = self._family
        m._sig = type(self._sig).from_buffer_copy(self._sig)
        return m

    def is_empty(self):
        """True for the empty-set signature (nothing added)."""
        return check(lib.minlsh_signature_is_empty(self._sig, self._family.k),
                     "minlsh_signature_is_empty") == 1

    def clear(self):
        """Back to the empty signature."""
        ctypes.memset(self._sig, 0xFF, 4 * self._family.k)

    # -- Python protocols -----------------------------------------------------

    def __len__(self):
        return self._family.k

    def __eq__(self, other):
        if not isinstance(other, MinHash):
            return NotImplemented
        return (self.seed == other.seed and self.num_perm == other.num_perm
                and bytes(self._sig) == bytes(other._sig))

    __hash__ = None  # mutable

    def __repr__(self):
        return "MinHash(num_perm=%d, seed=%d%s)" % (
            self.num_perm, self.seed, ", empty" if self.is_empty() else "")

    def __getstate__(self):
        return (self._family.k, self._family.seed, bytes(self._sig))

    def __setstate__(self, state):
        k, seed, raw = state
        self._family = family(k, seed)
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


def signature_buffer(value, k, seed=None, what="signature"):
    """A ctypes uint32 array of k values for a MinHash, a numpy array, an
    array/memoryview of uint32 or a sequence of ints (copied)."""
    if isinstance(value, MinHash):
        if value.num_perm != k or (seed is not None and value.seed != seed):
            raise ValueError("%s has num_perm=%d, seed=%d; expected num_perm=%d, seed=%s"
                             % (what, value.num_perm, value.seed, k, seed))
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
        return [list(row) for row in self]

    def tobytes(self):
        return self._data.tobytes()

    def __repr__(self):
        return "SignatureMatrix(shape=(%d, %d))" % (self._n, self._k)


def signatures(texts, num_perm=128, seed=1, shingle="word:5", threads=0, *, shingler=None,
               errors="raise", **shingler_options):
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
    """
    if errors not in ("raise", "empty"):
        raise ValueError("errors must be 'raise' or 'empty'")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError("threads must be an integer >= 0")
    if isinstance(texts, (str, bytes, bytearray, memoryview)):
        raise TypeError("texts must be an iterable of documents, not one %s"
                        % type(texts).__name__)
    sh = shingler_for(shingle, shingler, **shingler_options)
    fam = family(num_perm, seed)
    docs = [_ffi.as_bytes(t) for t in texts]  # the references keep them alive
    n, k = len(docs), num_perm
    np = _ffi.numpy
    if np is not None:
        out = np.empty((n, k), dtype=np.uint32)
    else:
        out = array.array("I", bytes(4 * n * k))
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
    if np is not None:
        return out
    return SignatureMatrix(out, n, k)
