"""LSH: planning, band keys and the band index (minlsh_index)."""

import collections
import ctypes
import json
import math
import os
from ctypes import byref, c_double, c_size_t, c_uint32, c_uint64, c_void_p

from . import _ffi
from ._ffi import check, lib, reading, writing
from ._minhash import MinHash, family, signature_buffer

MODES = {"rule": 1, "balanced": 2, "recall": 3}

Novelty = collections.namedtuple("Novelty", ["novel", "match", "similarity"])
Novelty.__doc__ = """What MinHashLSH.insert_if_novel decided: ``novel`` (True: the key was
inserted), ``match`` (the key of the best match, or None if there was no
candidate) and its ``similarity`` (None if no candidate). A novel key may have
a match below the threshold."""

Plan = collections.namedtuple("Plan", ["bands", "rows", "fp_area", "fn_area"])
Plan.__doc__ = """(bands, rows) chosen by minlsh.plan, with the false-positive area
(integral of P(s) over [0, t]) and false-negative area (integral of 1 - P(s) over
[t, 1]) of that choice."""


def _plan_options(threshold, num_perm, weights, mode, target_recall):
    if mode not in MODES:
        raise ValueError("mode must be one of %s, not %r" % (", ".join(MODES), mode))
    try:
        wfp, wfn = weights
    except (TypeError, ValueError):
        raise ValueError("weights must be a pair (false_positive, false_negative)") from None
    opts = _ffi.PlanOptions()
    check(lib.minlsh_plan_options_init(byref(opts), _ffi.PLAN_OPTIONS_VERSION),
          "minlsh_plan_options_init")
    opts.mode = MODES[mode]
    if isinstance(num_perm, bool) or not isinstance(num_perm, int) \
            or not 0 <= num_perm <= 0xFFFFFFFF:
        raise _ffi.error(_ffi.E_PARAM, "minlsh_plan_compute", "num_perm = %r" % (num_perm,))
    opts.k = num_perm
    opts.threshold = float(threshold)
    opts.weight_fp = float(wfp)
    opts.weight_fn = float(wfn)
    opts.target_recall = float(target_recall)
    return opts


def plan(threshold, num_perm=128, weights=(0.5, 0.5), mode="balanced", target_recall=0.99):
    """Choose (bands, rows) for a Jaccard threshold (minlsh_plan_compute).

    ``mode``: ``"balanced"`` minimises ``weights[0] * FP area + weights[1] *
    FN area`` over bands * rows <= num_perm; ``"recall"`` takes the least FP
    area with P(candidate | threshold) >= target_recall; ``"rule"`` is the
    rule of thumb (1/b)^(1/r) ~ threshold. Returns a :class:`Plan`.
    """
    opts = _plan_options(threshold, num_perm, weights, mode, target_recall)
    b, r, fp, fn = c_uint32(), c_uint32(), c_double(), c_double()
    check(lib.minlsh_plan_compute(byref(b), byref(r), byref(fp), byref(fn), byref(opts)),
          "minlsh_plan_compute",
          "threshold=%r num_perm=%r weights=%r mode=%r target_recall=%r"
          % (threshold, num_perm, tuple(weights), mode, target_recall))
    return Plan(b.value, r.value, fp.value, fn.value)


def _u32(value, what):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise _ffi.error(_ffi.E_PARAM, "minlsh", "%s = %r" % (what, value))
    return value


def probability(s, bands, rows):
    """P(candidate | similarity s) = 1 - (1 - s^rows)^bands."""
    out = c_double()
    check(lib.minlsh_plan_probability(byref(out), _u32(bands, "bands"), _u32(rows, "rows"),
                                      float(s)), "minlsh_plan_probability")
    return out.value


def threshold_of(bands, rows):
    """The rule-of-thumb threshold (1/bands)^(1/rows)."""
    out = c_double()
    check(lib.minlsh_plan_threshold(byref(out), _u32(bands, "bands"), _u32(rows, "rows")),
          "minlsh_plan_threshold")
    return out.value


def band_keys(signature, bands, rows):
    """The band keys of a signature (a MinHash or a sequence of uint32):
    a list of ``bands`` 64-bit ints (docs/lsh.md, "Band keys")."""
    if isinstance(signature, MinHash):
        k = signature.num_perm
    else:
        if _ffi.numpy is not None and isinstance(signature, _ffi.numpy.ndarray):
            signature = signature.tolist()
        k = len(signature)
    sig = signature_buffer(signature, k)
    b = _u32(bands, "bands")
    keys = (c_uint64 * max(b, 1))()
    n = c_size_t()
    check(lib.minlsh_band_keys(sig, k, b, _u32(rows, "rows"), keys, b, byref(n)),
          "minlsh_band_keys", "bands=%d rows=%d num_perm=%d" % (bands, rows, k))
    return list(keys[:n.value])


# ---- saving keys --------------------------------------------------------------

_META_TAG = "minlsh-python-lsh"
_META_VERSION = 1


def _encode_key(key):
    """A JSON value that decodes back to an equal key of the same type:
    str, int, float (finite), bool, None as themselves; tuples as
    {"tuple": [...]}; bytes as {"bytes": "<hex>"}. Anything else raises."""
    if key is None or isinstance(key, (str, bool)):
        return key
    if isinstance(key, int):
        return int(key)  # an int subclass (e.g. IntEnum) becomes a plain int
    if isinstance(key, float):
        if not math.isfinite(key):
            raise ValueError("key %r cannot be saved: only finite floats" % (key,))
        return key
    if isinstance(key, tuple):
        return {"tuple": [_encode_key(x) for x in key]}
    if isinstance(key, bytes):
        return {"bytes": key.hex()}
    raise TypeError(
        "key %r of type %s cannot be saved; save() supports keys that are str, int, "
        "float, bool, None, bytes, or tuples of those" % (key, type(key).__name__))


def _decode_key(value):
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict) and len(value) == 1:
        if "tuple" in value and isinstance(value["tuple"], list):
            return tuple(_decode_key(x) for x in value["tuple"])
        if "bytes" in value and isinstance(value["bytes"], str):
            return bytes.fromhex(value["bytes"])
    raise ValueError("bad key in the saved key mapping: %r" % (value,))


class MinHashLSH:
    """A band index over MinHash signatures, as in datasketch, on minlsh_index.

    ``MinHashLSH(threshold=0.8, num_perm=128, weights=(0.5, 0.5))`` chooses
    (bands, rows) with :func:`plan` (``mode="balanced"``, or ``"recall"`` with
    ``target_recall``); ``params=(bands, rows)`` sets them directly. ``seed``
    (default 1) must match the MinHash objects inserted; ``config_id`` (e.g.
    ``Shingler.config_id``) is stored with the index and checked on load.

    Keys may be any hashable objects; they map to the index's 64-bit ids in
    insertion order. Results (``query``, ``candidate_pairs``, ``clusters``)
    come in that order, deterministically.

    Thread-safe: queries, pairs, clusters and saves run concurrently (with
    the interpreter lock released); insert, remove and close take an
    exclusive lock.
    """

    def __init__(self, threshold=0.8, num_perm=128, weights=(0.5, 0.5), params=None, *,
                 seed=1, mode="balanced", target_recall=0.99, config_id=0):
        self._handle = None
        self._lock = _ffi.RWLock()
        self._key_to_id = {}
        self._id_to_key = {}
        self._next_id = 0
        fam = family(num_perm, seed)
        config_id = _ffi.as_u64(config_id, "config_id")
        if params is not None:
            try:
                b, r = params
            except (TypeError, ValueError):
                raise ValueError("params must be a pair (bands, rows)") from None
            b, r = _u32(b, "bands"), _u32(r, "rows")
            self._threshold = None if threshold is None else float(threshold)
            self._weights = None
            self._mode = None
        else:
            if threshold is None:
                raise ValueError("give a threshold or params=(bands, rows)")
            p = plan(threshold, num_perm, weights, mode, target_recall)
            b, r = p.bands, p.rows
            self._threshold = float(threshold)
            self._weights = tuple(float(w) for w in weights)
            self._mode = mode
        h = c_void_p()
        check(lib.minlsh_index_new(byref(h), fam.handle, config_id, b, r, None),
              "minlsh_index_new", "bands=%d rows=%d num_perm=%d" % (b, r, num_perm))
        self._handle = h.value

    # -- lifetime --------------------------------------------------------------

    def close(self):
        """Release the index now (otherwise when the object is collected)."""
        with writing(self._lock):
            if self._handle:
                lib.minlsh_index_free(self._handle)
                self._handle = None

    def __del__(self, _free=lib.minlsh_index_free):
        # _free is bound now: module globals may be gone at interpreter exit.
        if getattr(self, "_handle", None):
            _free(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _h(self):
        if not self._handle:
            raise ValueError("the MinHashLSH is closed")
        return self._handle

    # -- parameters ------------------------------------------------------------

    @property
    def threshold(self):
        """The threshold the index was planned for (None if unknown)."""
        return self._threshold

    @property
    def params(self):
        """(bands, rows)."""
        h = self._h()
        return (lib.minlsh_index_bands(h), lib.minlsh_index_rows(h))

    @property
    def b(self):
        return self.params[0]

    @property
    def r(self):
        return self.params[1]

    @property
    def num_perm(self):
        return lib.minlsh_index_k(self._h())

    @property
    def seed(self):
        return lib.minlsh_index_seed(self._h())

    @property
    def config_id(self):
        return lib.minlsh_index_config_id(self._h())

    def __repr__(self):
        if not self._handle:
            return "MinHashLSH(closed)"
        b, r = self.params
        return "MinHashLSH(threshold=%r, num_perm=%d, params=(%d, %d), seed=%d, %d keys)" % (
            self._threshold, self.num_perm, b, r, self.seed, len(self))

    # -- contents ---------------------------------------------------------------

    def _sig(self, minhash):
        h = self._h()
        return signature_buffer(minhash, lib.minlsh_index_k(h), lib.minlsh_index_seed(h),
                                "minhash")

    def insert(self, key, minhash, check_duplication=True):
        """Index ``minhash`` under ``key`` (any hashable). A key already in the
        index raises ValueError (check_duplication=False is accepted for
        datasketch compatibility; the check is always made)."""
        hash(key)
        with writing(self._lock):
            sig = self._sig(minhash)
            if key in self._key_to_id:
                raise ValueError("the key %r is already in the index" % (key,))
            ident = self._next_id
            check(lib.minlsh_index_insert(self._handle, ident, sig, len(sig)),
                  "minlsh_index_insert")
            self._next_id = ident + 1
            self._key_to_id[key] = ident
            self._id_to_key[ident] = key

    def insert_if_novel(self, key, minhash, threshold=None, verify=None, min_estimate=0.0):
        """Insert ``minhash`` under ``key`` unless an indexed key is a
        near-duplicate of it (minlsh_index_insert_novel: one query, the
        verification and the insert under one lock). Returns a
        :class:`Novelty`.

        ``threshold`` defaults to the threshold the index was planned for.
        Without ``verify`` a candidate's similarity is its signature
        estimate. ``verify(key, estimate)`` may return an exact similarity in
        [0, 1] instead (e.g. a Jaccard of stored sets): candidates with an
        estimate of at least ``min_estimate`` are checked best estimate
        first, and the first that reaches the threshold ends the search. An
        exception raised by ``verify`` propagates, and nothing is inserted.
        A key already in the index raises ValueError."""
        hash(key)
        if threshold is None:
            threshold = self._threshold
            if threshold is None:
                raise ValueError("this index has no planned threshold: give one")
        opts = _ffi.NovelOptions()
        check(lib.minlsh_novel_options_init(byref(opts), _ffi.NOVEL_OPTIONS_VERSION),
              "minlsh_novel_options_init")
        opts.threshold = float(threshold)
        opts.min_estimate = float(min_estimate)
        raised = []
        with writing(self._lock):
            sig = self._sig(minhash)
            if key in self._key_to_id:
                raise ValueError("the key %r is already in the index" % (key,))
            if verify is not None:
                def _verify(_opaque, ident, estimate, out):
                    try:
                        s = float(verify(self._id_to_key[ident], estimate))
                    except BaseException as e:  # noqa: B902 (re-raised below)
                        raised.append(e)
                        return -1
                    out[0] = s
                    return 0
                opts.verify = _ffi.VERIFY_FN(_verify)
            res = _ffi.NovelResult()
            ident = self._next_id
            rc = lib.minlsh_index_insert_novel(byref(res), self._handle, ident, sig, len(sig),
                                               byref(opts))
            if raised:
                raise raised[0]
            check(rc, "minlsh_index_insert_novel", "threshold=%r" % (threshold,))
            if res.novel:
                self._next_id = ident + 1
                self._key_to_id[key] = ident
                self._id_to_key[ident] = key
            if not res.has_match:
                return Novelty(bool(res.novel), None, None)
            return Novelty(bool(res.novel), self._id_to_key[res.match], res.similarity)

    def remove(self, key):
        """Remove ``key``; ValueError if it is not in the index."""
        with writing(self._lock):
            h = self._h()
            try:
                ident = self._key_to_id[key]
            except KeyError:
                raise ValueError("the key %r is not in the index" % (key,)) from None
            check(lib.minlsh_index_remove(h, ident), "minlsh_index_remove")
            del self._key_to_id[key]
            del self._id_to_key[ident]

    def __contains__(self, key):
        with reading(self._lock):
            return key in self._key_to_id

    def __len__(self):
        with reading(self._lock):
            return len(self._key_to_id)

    def is_empty(self):
        return len(self) == 0

    def keys(self):
        """The keys, in insertion order (a list)."""
        with reading(self._lock):
            return [self._id_to_key[i] for i in sorted(self._id_to_key)]

    def get_minhash(self, key):
        """A MinHash with the signature stored for ``key`` (KeyError if absent)."""
        with reading(self._lock):
            h = self._h()
            ident = self._key_to_id[key]
            m = MinHash(lib.minlsh_index_k(h), lib.minlsh_index_seed(h))
            check(lib.minlsh_index_copy_signature(h, ident, m._sig, len(m._sig), None), "minlsh_index_copy_signature")
            return m

    # -- queries ----------------------------------------------------------------------

    def _query(self, minhash):
        sig = self._sig(minhash)
        cap = 64
        while True:
            ids = (c_uint64 * cap)()
            sims = (c_double * cap)()
            n = c_size_t()
            rc = lib.minlsh_index_query(self._handle, sig, len(sig), ids, sims, cap, byref(n))
            if rc == _ffi.E_BUFSIZE:
                cap = n.value
                continue
            check(rc, "minlsh_index_query")
            return [(self._id_to_key[ids[i]], sims[i]) for i in range(n.value)]

    def query(self, minhash):
        """The keys of the candidates sharing at least one band with
        ``minhash`` (a stored document finds itself), in insertion order."""
        with reading(self._lock):
            return [k for k, _ in self._query(minhash)]

    def query_with_similarity(self, minhash, min_similarity=0.0):
        """[(key, estimated Jaccard)] of the candidates whose estimate is at
        least ``min_similarity``, in insertion order."""
        with reading(self._lock):
            return [(k, s) for k, s in self._query(minhash) if s >= min_similarity]

    def candidate_pairs(self, min_similarity=0.0, with_similarity=False):
        """Every pair of indexed keys sharing a band, once each, whose
        estimated Jaccard is >= ``min_similarity`` (0: all candidates; the
        threshold: the verified pairs). A list of (key_a, key_b) with key_a
        inserted before key_b, sorted by insertion order; with
        ``with_similarity`` (key_a, key_b, similarity)."""
        with reading(self._lock):
            out = c_void_p()
            check(lib.minlsh_pairs_from_index(byref(out), self._h(), float(min_similarity), 0, None),
                  "minlsh_pairs_from_index")
            try:
                n = lib.minlsh_pairs_count(out)
                a, b, s = c_uint64(), c_uint64(), c_double()
                res = []
                for i in range(n):
                    check(lib.minlsh_pairs_copy_pair(byref(a), byref(b), byref(s), out, i),
                          "minlsh_pairs_copy_pair")
                    ka, kb = self._id_to_key[a.value], self._id_to_key[b.value]
                    res.append((ka, kb, s.value) if with_similarity else (ka, kb))
                return res
            finally:
                lib.minlsh_pairs_free(out)

    def clusters(self, min_similarity=0.0):
        """Groups of near-duplicates: the connected components (two or more
        keys) of the graph of :meth:`candidate_pairs` at ``min_similarity``.
        Members in insertion order; groups ordered by their first member."""
        with reading(self._lock):
            out = c_void_p()
            check(lib.minlsh_clusters_from_index(byref(out), self._h(), float(min_similarity), None),
                  "minlsh_clusters_from_index")
            return [[self._id_to_key[i] for i in members]
                    for members in _ffi.take_clusters(out)]

    # -- files ---------------------------------------------------------------------------

    def _metadata(self):
        keys = [[ident, _encode_key(self._id_to_key[ident])] for ident in sorted(self._id_to_key)]
        doc = {
            "format": _META_TAG,
            "version": _META_VERSION,
            "threshold": self._threshold,
            "weights": list(self._weights) if self._weights else None,
            "mode": self._mode,
            "next_id": self._next_id,
            "keys": keys,
        }
        return json.dumps(doc, ensure_ascii=True, allow_nan=False,
                          separators=(",", ":")).encode("ascii")

    def save(self, path):
        """Save atomically to ``path``: the signatures and parameters
        (minlsh_index_save), and the keys as JSON in the index's metadata.
        Keys must be str, int, float, bool, None, bytes or tuples of those
        (TypeError otherwise, before anything is written): no pickle, so
        loading a file never runs code."""
        path = os.fsencode(path)
        with writing(self._lock):
            h = self._h()
            meta = self._metadata()  # raises for an unsaveable key: nothing changed
            check(lib.minlsh_index_set_metadata(h, meta, len(meta)), "minlsh_index_set_metadata")
            check(lib.minlsh_index_save(h, path), "minlsh_index_save", os.fsdecode(path))

    @classmethod
    def load(cls, path, num_perm=None, seed=None, config_id=0):
        """Load an index saved by :meth:`save` (or any minlsh index file: its
        keys are then its 64-bit ids). With ``num_perm`` or ``seed`` (the
        other defaulting to 128 or 1) the file must have them and
        ``config_id``, else minlsh.Error MINLSH_E_MISMATCH; without either,
        any valid file loads."""
        bpath = os.fsencode(path)
        fam = None
        if num_perm is not None or seed is not None:
            fam = family(128 if num_perm is None else num_perm, 1 if seed is None else seed)
        h = c_void_p()
        opts = _ffi.LoadOptions()
        check(lib.minlsh_load_options_init(byref(opts), _ffi.LOAD_OPTIONS_VERSION),
              "minlsh_load_options_init")
        opts.family = fam.handle if fam else None
        opts.config_id = _ffi.as_u64(config_id, "config_id")
        check(lib.minlsh_index_load(byref(h), bpath, byref(opts)),
              "minlsh_index_load", os.fsdecode(bpath))
        self = cls.__new__(cls)
        self._handle = h.value
        self._lock = _ffi.RWLock()
        self._threshold = self._weights = self._mode = None
        self._key_to_id, self._id_to_key = {}, {}
        ids = self._stored_ids()
        meta = self._stored_metadata()
        doc = None
        if meta:
            try:
                doc = json.loads(meta.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                doc = None  # someone else's metadata (e.g. the minlsh command's)
        if isinstance(doc, dict) and doc.get("format") == _META_TAG:
            self._restore(doc, ids, os.fsdecode(bpath))
        else:
            for ident in ids:
                self._key_to_id[ident] = ident
                self._id_to_key[ident] = ident
            self._next_id = ids[-1] + 1 if ids else 0
        return self

    def _stored_ids(self):
        n = lib.minlsh_index_count(self._handle)
        ids = (c_uint64 * max(n, 1))()
        got = c_size_t()
        check(lib.minlsh_index_copy_ids(self._handle, ids, n, byref(got)), "minlsh_index_copy_ids")
        return list(ids[:got.value])

    def _stored_metadata(self):
        n = c_size_t()
        rc = lib.minlsh_index_copy_metadata(self._handle, None, 0, byref(n))
        if rc == 0:
            return b""
        if rc != _ffi.E_BUFSIZE:
            check(rc, "minlsh_index_copy_metadata")
        buf = ctypes.create_string_buffer(n.value)
        check(lib.minlsh_index_copy_metadata(self._handle, buf, n.value, byref(n)),
              "minlsh_index_copy_metadata")
        return buf.raw[:n.value]

    def _restore(self, doc, ids, where):
        def bad(why):
            return ValueError("%s: the saved key mapping is invalid (%s)" % (where, why))
        if doc.get("version") != _META_VERSION:
            raise bad("version %r, this binding reads %d" % (doc.get("version"), _META_VERSION))
        keys = doc.get("keys")
        if not isinstance(keys, list):
            raise bad("no key list")
        for entry in keys:
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int)
                    and not isinstance(entry[0], bool)):
                raise bad("entry %r" % (entry,))
            ident, key = entry[0], _decode_key(entry[1])
            if ident in self._id_to_key or key in self._key_to_id:
                raise bad("duplicate id or key %r" % (key,))
            self._id_to_key[ident] = key
            self._key_to_id[key] = ident
        if sorted(self._id_to_key) != ids:
            raise bad("its ids do not match the index's")
        nxt = doc.get("next_id")
        if not isinstance(nxt, int) or (ids and nxt <= ids[-1]):
            raise bad("next_id %r" % (nxt,))
        self._next_id = nxt
        t = doc.get("threshold")
        self._threshold = float(t) if isinstance(t, (int, float)) else None
        w = doc.get("weights")
        self._weights = tuple(float(x) for x in w) if isinstance(w, list) and len(w) == 2 else None
        m = doc.get("mode")
        self._mode = m if m in MODES else None


class FileLock:
    """The lock processes sharing one saved index take (minlsh_filelock):
    a flock(2) lock on the companion file ``path + ".lock"``, never on the
    index itself, whose saves rename a new file over it. ``minlsh index``
    commands take the same lock.

    ``with minlsh.FileLock("crawl.mlsh"):`` holds it exclusively (load,
    insert, save inside); ``shared=True`` for readers. ``timeout`` in seconds
    (None: wait without limit, 0: do not wait); past it, :class:`Error` with
    code ``E_BUSY``. The wait releases the interpreter lock.
    """

    def __init__(self, path, shared=False, timeout=None):
        self._path = os.fsencode(path)
        self._mode = 1 if shared else 2
        if timeout is None:
            self._ms = 0xFFFFFFFF
        else:
            ms = int(round(float(timeout) * 1000))
            if not 0 <= ms < 0xFFFFFFFF:
                raise ValueError("timeout must be None or 0 to 4294967 seconds")
            self._ms = ms
        self._handle = None

    def acquire(self):
        if self._handle:
            raise RuntimeError("the lock is already held by this object")
        h = c_void_p()
        check(lib.minlsh_filelock_new(byref(h), self._path, self._mode, self._ms, None),
              "minlsh_filelock_new", os.fsdecode(self._path) + ".lock")
        self._handle = h.value

    def release(self):
        if self._handle:
            lib.minlsh_filelock_free(self._handle)
            self._handle = None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()

    def __del__(self, _free=lib.minlsh_filelock_free):
        if getattr(self, "_handle", None):
            _free(self._handle)
            self._handle = None
