"""MinHashLSH: the band index over MinHash signatures (minlsh_index), as
datasketch presents it, with its key view and insertion sessions."""

from __future__ import annotations

import array
import collections
import ctypes
import functools
import json
import os
import threading
from ctypes import byref, c_double, c_size_t, c_uint32, c_uint64, c_void_p
from typing import Any, Dict, Hashable, Iterable, Iterator, List, Optional, Tuple, Union

from . import _ffi, _preset
from ._ffi import check, lib, reading, writing
from ._journal import Journal
from ._keys import _META_TAG, _META_VERSION, _decode_key, _key_of_name, _key_record
from ._minhash import SCHEMES as _SCHEMES
from ._minhash import datasketch_refusal as _datasketch_refusal
from ._minhash import (LeanMinHash, MinHash, family, matrix_bytes as _matrix_bytes,
                       signature_buffer)
from ._plan import MODES, _u32, plan, threshold_of

_MINHASH_TYPES = (MinHash, LeanMinHash)


class _Default(float):
    """datasketch's default threshold, told apart from the same value given
    (a preset fills only what was not given)."""


class _DefaultK(int):
    """The same for num_perm."""


_THRESHOLD_DEFAULT = _Default(0.9)
_NUM_PERM_DEFAULT = _DefaultK(128)

_query_buffers = threading.local()
_gil_query = _ffi.gil_lib.minlsh_index_query
#: minlsh._speedups.query when the accelerator is loaded: the same call and
#: key lookups as query's gil_lib path, in C; None where they fail.
_fast_query = _ffi.speedups.query if _ffi.speedups is not None else None
#: minlsh._speedups.session_insert: _session_insert's plain case in C (it
#: calls _session_insert for every other).
_fast_session_insert = _ffi.speedups.session_insert if _ffi.speedups is not None else None


def _new_query_buffers():
    """This thread's query output: ids, the count (and a pointer to it),
    the capacity (and as a C size_t); grown when a query finds more."""
    n = c_size_t()
    bufs = _query_buffers.q = [(c_uint64 * 64)(), n, 64, byref(n), c_size_t(64)]
    return bufs

Novelty = collections.namedtuple("Novelty", ["novel", "match", "similarity"])
Novelty.__doc__ = """What MinHashLSH.insert_if_novel decided: ``novel`` (True: the key was
inserted), ``match`` (the key of the best match, or None if there was no
candidate) and its ``similarity`` (None if no candidate). A novel key may have
a match below the threshold."""


class MinHashLSH:
    """A band index over MinHash signatures, as in datasketch, on minlsh_index.

    ``MinHashLSH(threshold=0.8, num_perm=128, weights=(0.5, 0.5))`` chooses
    (bands, rows) with :func:`plan` (``mode="balanced"``, or ``"recall"`` with
    ``target_recall``); ``params=(bands, rows)`` sets them directly. ``seed``
    (default 1) must match the MinHash objects inserted; ``config_id`` (e.g.
    ``Shingler.config_id``) is stored with the index and checked on load.

    ``preset="fineweb"`` (a name, or a :class:`minlsh.Preset`) takes a
    published pipeline's ``threshold``, ``num_perm`` and banding, each unless
    given (``num_perm`` given: the banding is planned for it); ``lsh.preset``
    keeps it, and ``lsh.preset.shingler()`` shingles as the pipeline did.

    Keys may be any hashable objects; they map to the index's 64-bit ids in
    insertion order. Results (``query``, ``candidate_pairs``, ``clusters``)
    come in that order, deterministically.

    Thread-safe: queries, pairs, clusters and saves run concurrently (with
    the interpreter lock released, except ``query`` of one MinHash, too
    short to gain from it); insert, remove and close take an exclusive lock.
    """

    # The query fast path's handle and its arguments in C form (class
    # defaults, so an unpickled index has them too).
    _query_handle = None
    _query_args = None
    # The Journal opened for writing that records this index's changes.
    _journal = None
    # The Preset the index was made from (None without one).
    _preset = None
    # The store flags of the file it came from (minlsh_store_decode_metadata).
    _store_flags = 0

    def __init__(self, threshold: Optional[float] = _THRESHOLD_DEFAULT,
                 num_perm: int = _NUM_PERM_DEFAULT,
                 weights: Tuple[float, float] = (0.5, 0.5),
                 params: Optional[Tuple[int, int]] = None,
                 storage_config: Optional[Dict[str, Any]] = None, prepickle: Optional[bool] = None,
                 hashfunc: Any = None, *, seed: int = 1, mode: str = "balanced",
                 target_recall: float = 0.99, config_id: int = 0,
                 scheme: str = "classic", preset: Any = None) -> None:
        self._handle = None
        self._lock = _ffi.RWLock()
        self._key_to_id = {}
        self._id_to_key = {}
        self._next_id = 0
        self._pending = []         # (key, signature bytes) of an insertion session
        self._pending_keys = set()
        self._buffer_size = 50000
        self._query_buffer = []
        if preset is not None:
            self._preset = _preset.preset(preset)
            if threshold is _THRESHOLD_DEFAULT:
                threshold = self._preset.threshold
            if num_perm is _NUM_PERM_DEFAULT:
                num_perm = self._preset.num_perm
                if params is None:
                    params = (self._preset.bands, self._preset.rows)
        if storage_config is not None and storage_config.get("type", "dict") != "dict":
            raise ValueError("minlsh keeps the index in memory (storage_config type 'dict'); "
                             "%r storage is not supported: save() or pickle it instead"
                             % (storage_config.get("type"),))
        if threshold is not None and not 0.0 <= float(threshold) <= 1.0:
            raise _ffi.error(_ffi.E_PARAM, "MinHashLSH", "threshold must be in [0.0, 1.0]")
        if isinstance(num_perm, int) and not isinstance(num_perm, bool) and num_perm < 2:
            raise _ffi.error(_ffi.E_PARAM, "MinHashLSH", "Too few permutation functions")
        fam = family(num_perm, seed, scheme)
        config_id = _ffi.as_u64(config_id, "config_id")
        if params is not None:
            try:
                b, r = params
            except (TypeError, ValueError):
                raise ValueError("params must be a pair (bands, rows)") from None
            b, r = _u32(b, "bands"), _u32(r, "rows")
            if b * r > num_perm:
                raise _ffi.error(_ffi.E_PARAM, "minlsh_index_new",
                                 "the product of b and r in params is %d * %d = %d: it must be "
                                 "at most num_perm %d" % (b, r, b * r, num_perm))
            self._threshold = None if threshold is None else float(threshold)
            self._weights = None
            self._mode = None
        else:
            if threshold is None:
                raise ValueError("give a threshold or params=(bands, rows)")
            try:
                wfp, wfn = (float(w) for w in weights)
            except (TypeError, ValueError):
                raise ValueError("weights must be a pair (false_positive, false_negative)") \
                    from None
            if not (0.0 <= wfp <= 1.0 and 0.0 <= wfn <= 1.0):
                raise _ffi.error(_ffi.E_PARAM, "MinHashLSH", "Weight must be in [0.0, 1.0]")
            if abs(wfp + wfn - 1.0) > 1e-9:
                raise _ffi.error(_ffi.E_PARAM, "MinHashLSH", "Weights must sum to 1.0")
            if float(threshold) in (0.0, 1.0):
                # datasketch accepts both ends of [0, 1]; the planner wants
                # (0, 1): every document a candidate, or only identical ones.
                b, r = (num_perm, 1) if float(threshold) == 0.0 else (1, num_perm)
            else:
                p = plan(threshold, num_perm, weights, mode, target_recall)
                b, r = p.bands, p.rows
            self._threshold = float(threshold)
            self._weights = (wfp, wfn)
            self._mode = mode
        self._family = fam
        h = c_void_p()
        check(lib.minlsh_index_new(byref(h), fam.handle, config_id, b, r, None),
              "minlsh_index_new", "bands=%d rows=%d num_perm=%d" % (b, r, num_perm))
        self._handle = h.value

    # -- lifetime --------------------------------------------------------------

    def close(self):
        """Release the index now (otherwise when the object is collected),
        and close the journal recording its changes (records not synced are
        dropped)."""
        if self._journal is not None:
            self._journal.close()
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
    def threshold(self) -> Optional[float]:
        """The threshold the index was planned for (None if unknown)."""
        return self._threshold

    @property
    def preset(self) -> Optional[_preset.Preset]:
        """The :class:`minlsh.Preset` given to the constructor, or None."""
        return self._preset

    @property
    def weights(self) -> Optional[Tuple[float, float]]:
        """The (false positive, false negative) weights the planner used
        (None with ``params=`` or for a loaded index without them)."""
        return self._weights

    @property
    def params(self) -> Tuple[int, int]:
        """(bands, rows)."""
        h = self._h()
        return (lib.minlsh_index_bands(h), lib.minlsh_index_rows(h))

    @property
    def h(self) -> int:
        """num_perm, under datasketch's name."""
        return self.num_perm

    @property
    def b(self) -> int:
        """The number of bands."""
        return self.params[0]

    @property
    def r(self) -> int:
        """The rows per band."""
        return self.params[1]

    @property
    def num_perm(self) -> int:
        """The signatures' number of values."""
        return lib.minlsh_index_k(self._h())

    @property
    def seed(self) -> int:
        """The signatures' family seed."""
        return lib.minlsh_index_seed(self._h())

    @property
    def scheme(self) -> str:
        """The signatures' scheme: "classic" or "oph" (``scheme=`` of the
        constructor; a loaded index has its file's)."""
        return _SCHEMES[lib.minlsh_index_scheme(self._h())]

    @property
    def config_id(self) -> int:
        """The config id stored with the index (checked on load)."""
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
                                "minhash", lib.minlsh_index_scheme(h))

    def _sig_fast(self, minhash):
        """The signature as the library reads it: a MinHash's own buffer
        when it matches (no copy; the caller must not update that MinHash
        from another thread during the call), else a checked copy."""
        if isinstance(minhash, MinHash) and minhash._family is self._family and self._handle:
            return minhash._sig
        return self._sig(minhash)

    def _flush(self):
        """Insert what an insertion session buffered (one minlsh_index_insert_many
        call); every public method calls it first, so buffered keys are
        visible everywhere, as in datasketch."""
        with writing(self._lock):
            self._flush_locked()

    def _flush_locked(self):
        pending = self._pending
        if not pending:
            return
        self._pending = []
        self._pending_keys = set()
        keys = [k for k, _ in pending]
        raw = b"".join(sig for _, sig in pending)
        self._insert_raw_locked(keys, raw)

    def _insert_raw_locked(self, keys, raw):
        """Insert n keys (all new, checked by the caller) with their n*k
        values in raw, in one minlsh_index_insert_many call."""
        n = len(keys)
        if not n:
            return
        h = self._h()
        k = lib.minlsh_index_k(h)
        # A key the journal cannot record raises before anything changes.
        datas = [_key_record(key) for key in keys] if self._journal is not None else None
        first = self._next_id
        ids = array.array("Q", range(first, first + n))
        done = c_size_t()
        rc = lib.minlsh_index_insert_many(h, ids.buffer_info()[0], raw, n, k, byref(done))
        done = done.value
        what = "minlsh_index_insert_many"
        if datas is not None:
            jh, step = self._journal._handle, 4 * k
            for i in range(done):
                jrc = lib.minlsh_journal_append(jh, _ffi.JOURNAL_INSERT, first + i,
                                                raw[i * step:(i + 1) * step], k, datas[i],
                                                len(datas[i]))
                if jrc != 0:
                    # Unrecorded changes must not stay: take them back.
                    for x in range(i, done):
                        lib.minlsh_index_remove(h, first + x)
                    done, rc, what = i, jrc, "minlsh_journal_append"
                    break
        # Those before a failure are in the index: record them either way.
        new_ids = range(first, first + done)
        self._key_to_id.update(zip(keys, new_ids))
        self._id_to_key.update(zip(new_ids, keys))
        self._next_id = first + n if rc == 0 else first + done
        check(rc, what)

    def _journal_insert(self, ident, sig, data):
        """Record the insert of ``ident`` just made (write lock held; data
        None: no journal); on failure take it back and raise."""
        if data is None:
            return
        rc = lib.minlsh_journal_append(self._journal._handle, _ffi.JOURNAL_INSERT, ident, sig,
                                       lib.minlsh_index_k(self._handle), data, len(data))
        if rc != 0:
            lib.minlsh_index_remove(self._handle, ident)
            check(rc, "minlsh_journal_append")

    def insert(self, key, minhash, check_duplication=True):
        """Index ``minhash`` under ``key`` (any hashable). A key already in the
        index raises ValueError. datasketch lets ``check_duplication=False``
        store a key twice; minlsh maps each key to one document, so the check
        is always made."""
        hash(key)
        if self._pending:
            self._flush()
        with writing(self._lock):
            sig = self._sig(minhash)
            if key in self._key_to_id:
                raise ValueError("The given key already exists: %r" % (key,))
            data = _key_record(key) if self._journal is not None else None
            ident = self._next_id
            check(lib.minlsh_index_insert(self._handle, ident, sig, len(sig)),
                  "minlsh_index_insert")
            self._journal_insert(ident, sig, data)
            self._next_id = ident + 1
            self._key_to_id[key] = ident
            self._id_to_key[ident] = key

    def insert_many(self, keys: Iterable[Hashable], minhashes: Any) -> None:
        """Insert ``keys[i]`` with ``minhashes[i]`` for every i, in one foreign
        call (minlsh_index_insert_many). ``minhashes`` is a sequence of
        MinHash objects or an n x num_perm matrix of uint32 (a numpy array,
        or anything whose rows are sequences of num_perm ints). All or
        nothing for the checks: a key already indexed, or repeated in
        ``keys``, raises ValueError before anything is inserted."""
        keys = list(keys)
        if self._pending:
            self._flush()
        with writing(self._lock):
            h = self._h()
            k = lib.minlsh_index_k(h)
            raw = _matrix_bytes(minhashes, k, lib.minlsh_index_seed(h), len(keys),
                                lib.minlsh_index_scheme(h))
            seen = set()
            for key in keys:
                if key in self._key_to_id or key in seen:
                    raise ValueError("The given key already exists: %r" % (key,))
                seen.add(key)
            self._insert_raw_locked(keys, raw)

    def insertion_session(self, buffer_size: int = 50000) -> MinHashLSHInsertionSession:
        """A context manager for fast insertion, as in datasketch:
        ``session.insert(key, minhash)`` buffers, and every ``buffer_size``
        documents (and on leaving the ``with`` block) the buffer goes into
        the index in one foreign call. A duplicate key raises ValueError at
        ``session.insert``. Any other use of the index sees buffered keys
        (the buffer is inserted first)."""
        return MinHashLSHInsertionSession(self, buffer_size)

    def deletion_session(self, buffer_size: int = 50000) -> MinHashLSHDeletionSession:
        """A context manager for removal, as in datasketch:
        ``session.remove(key)`` (ValueError if the key is not indexed)."""
        return MinHashLSHDeletionSession(self, buffer_size)

    @property
    def buffer_size(self) -> int:
        """How many documents an insertion session buffers (default 50000)."""
        return self._buffer_size

    @buffer_size.setter
    def buffer_size(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError("buffer_size must be an integer >= 1")
        self._buffer_size = value

    def _session_insert(self, key, minhash, check_duplication=True):
        if minhash.__class__ in _MINHASH_TYPES and minhash._family is self._family:
            sig = bytes(minhash._sig)
        else:
            with reading(self._lock):
                sig = bytes(self._sig(minhash))  # ValueError for another num_perm or seed
        # Dict lookups are atomic under the interpreter lock; the index's
        # lock guards the C handle, which this does not touch.
        if key in self._key_to_id or key in self._pending_keys:
            raise ValueError("The given key already exists: %r" % (key,))
        self._pending.append((key, sig))
        self._pending_keys.add(key)
        if len(self._pending) >= self._buffer_size:
            self._flush()

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
        if self._pending:
            self._flush()
        with writing(self._lock):
            sig = self._sig(minhash)
            if key in self._key_to_id:
                raise ValueError("the key %r is already in the index" % (key,))
            data = _key_record(key) if self._journal is not None else None
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
                self._journal_insert(ident, sig, data)
                self._next_id = ident + 1
                self._key_to_id[key] = ident
                self._id_to_key[ident] = key
            if not res.has_match:
                return Novelty(bool(res.novel), None, None)
            return Novelty(bool(res.novel), self._id_to_key[res.match], res.similarity)

    def remove(self, key):
        """Remove ``key``; ValueError if it is not in the index."""
        if self._pending:
            self._flush()
        with writing(self._lock):
            h = self._h()
            try:
                ident = self._key_to_id[key]
            except KeyError:
                raise ValueError("The given key does not exist: %r is not in the index"
                                 % (key,)) from None
            if self._journal is not None:
                data = _key_record(key)
                k = lib.minlsh_index_k(h)
                sig = (c_uint32 * k)()
                check(lib.minlsh_index_copy_signature(h, ident, sig, k, None),
                      "minlsh_index_copy_signature")
                check(lib.minlsh_index_remove(h, ident), "minlsh_index_remove")
                rc = lib.minlsh_journal_append(self._journal._handle, _ffi.JOURNAL_REMOVE, ident,
                                               None, 0, data, len(data))
                if rc != 0:
                    lib.minlsh_index_insert(h, ident, sig, k)  # unrecorded: taken back
                    check(rc, "minlsh_journal_append")
            else:
                check(lib.minlsh_index_remove(h, ident), "minlsh_index_remove")
            del self._key_to_id[key]
            del self._id_to_key[ident]

    def __contains__(self, key):
        if self._pending:
            self._flush()
        with reading(self._lock):
            return key in self._key_to_id

    def __len__(self):
        if self._pending:
            self._flush()
        with reading(self._lock):
            return len(self._key_to_id)

    def is_empty(self) -> bool:
        """True when no key is indexed."""
        return len(self) == 0

    @property
    def keys(self) -> Keys:
        """The keys, as datasketch's key storage (``key in lsh.keys``,
        ``for key in lsh.keys``, ``lsh.keys.keys()``, ``len``), and callable:
        ``lsh.keys()`` is the list of keys in insertion order."""
        return Keys(self)

    def _key_list(self):
        if self._pending:
            self._flush()
        with reading(self._lock):
            return [self._id_to_key[i] for i in sorted(self._id_to_key)]

    def _band_keys_of(self, key):
        """The b band keys of key's signature (KeyError if absent)."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            h = self._h()
            ident = self._key_to_id[key]
            b, r, k = lib.minlsh_index_bands(h), lib.minlsh_index_rows(h), lib.minlsh_index_k(h)
            sig, out = (c_uint32 * k)(), (c_uint64 * b)()
            check(lib.minlsh_index_copy_signature(h, ident, sig, k, None),
                  "minlsh_index_copy_signature")
            check(lib.minlsh_band_keys(sig, k, b, r, out, b, None), "minlsh_band_keys")
            return list(out)

    def get_minhash(self, key: Hashable) -> MinHash:
        """A MinHash with the signature stored for ``key`` (KeyError if absent)."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            h = self._h()
            ident = self._key_to_id[key]
            m = MinHash(lib.minlsh_index_k(h), lib.minlsh_index_seed(h),
                        scheme=lib.minlsh_index_scheme(h))
            check(lib.minlsh_index_copy_signature(h, ident, m._sig, len(m._sig), None),
                  "minlsh_index_copy_signature")
            return m

    def merge(self, other: MinHashLSH, check_overlap: bool = False) -> None:
        """Add every key of ``other`` (a MinHashLSH with the same num_perm,
        seed, bands and rows; ValueError otherwise) with its signature, in one
        foreign call (minlsh_index_merge). A key of ``other`` already in this
        index raises ValueError and nothing changes, whatever
        ``check_overlap`` says: datasketch would store the key twice, minlsh
        maps each key to one document. ``other`` is unchanged."""
        if not isinstance(other, MinHashLSH):
            raise ValueError("Cannot merge type MinHashLSH and type %s." % type(other).__name__)
        if other is self:
            raise ValueError("Cannot merge a MinHashLSH into itself")
        if self._pending:
            self._flush()
        if other._pending:
            other._flush()
        with writing(self._lock), reading(other._lock):
            h, oh = self._h(), other._h()
            if (lib.minlsh_index_k(h), lib.minlsh_index_bands(h), lib.minlsh_index_rows(h),
                    lib.minlsh_index_seed(h), lib.minlsh_index_scheme(h)) != (
                    lib.minlsh_index_k(oh), lib.minlsh_index_bands(oh),
                    lib.minlsh_index_rows(oh), lib.minlsh_index_seed(oh),
                    lib.minlsh_index_scheme(oh)):
                raise ValueError("Cannot merge MinHashLSH with different initialization "
                                 "parameters.")
            overlap = [key for key in other._key_to_id if key in self._key_to_id]
            if overlap:
                raise ValueError("The keys are overlapping, duplicate key exists: %r"
                                 % (overlap[0],))
            datas = None
            if self._journal is not None:
                datas = [(ident, _key_record(key)) for ident, key in other._id_to_key.items()]
            offset = self._next_id
            try:
                check(lib.minlsh_index_merge(h, oh, offset), "minlsh_index_merge")
            except _ffi.Error as exc:
                if exc.code == _ffi.E_MISMATCH:
                    raise ValueError("Cannot merge MinHashLSH with different initialization "
                                     "parameters (%s)." % exc) from None
                raise
            if datas is not None:
                self._journal_merged(oh, offset, datas)
            for ident, key in other._id_to_key.items():
                self._key_to_id[key] = ident + offset
                self._id_to_key[ident + offset] = key
            self._next_id = offset + other._next_id

    def _journal_merged(self, oh, offset, datas):
        """Record the inserts a merge made (other's ids + offset); on failure
        take the whole merge back and raise."""
        h, k = self._handle, lib.minlsh_index_k(self._handle)
        sig = (c_uint32 * k)()
        rc = 0
        for ident, data in datas:
            rc = lib.minlsh_index_copy_signature(oh, ident, sig, k, None)
            if rc == 0:
                rc = lib.minlsh_journal_append(self._journal._handle, _ffi.JOURNAL_INSERT,
                                               ident + offset, sig, k, data, len(data))
            if rc != 0:
                break
        if rc != 0:
            for ident, _ in datas:
                lib.minlsh_index_remove(h, ident + offset)
            check(rc, "minlsh_journal_append")

    def get_counts(self) -> List[Dict[int, int]]:
        """For each band, a dict from band key (minlsh's 64-bit band key, where
        datasketch has the band's bytes) to the number of keys in its
        bucket."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            return self._counts(list(self._id_to_key))

    def get_subset_counts(self, *keys: Hashable) -> List[Dict[int, int]]:
        """:meth:`get_counts` restricted to the given keys (each counted once;
        KeyError for a key not in the index)."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            return self._counts([self._key_to_id[k] for k in set(keys)])

    def _counts(self, idents):
        h = self._h()
        b, r, k = lib.minlsh_index_bands(h), lib.minlsh_index_rows(h), lib.minlsh_index_k(h)
        counts = [collections.Counter() for _ in range(b)]
        sig = (c_uint32 * k)()
        keys = (c_uint64 * b)()
        for ident in idents:
            check(lib.minlsh_index_copy_signature(h, ident, sig, k, None),
                  "minlsh_index_copy_signature")
            check(lib.minlsh_band_keys(sig, k, b, r, keys, b, None), "minlsh_band_keys")
            for j in range(b):
                counts[j][keys[j]] += 1
        return [dict(c) for c in counts]

    # -- pickling ---------------------------------------------------------------

    def __getstate__(self):
        """The index as minlsh_index_save_buffer's bytes, the keys (pickled as
        they are, so any picklable key works) and the parameters; an
        insertion session's buffer is inserted first."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            data = _ffi.save_to_bytes(lib.minlsh_index_save_buffer, self._h(),
                                      "minlsh_index_save_buffer")
            return {"version": 1, "index": data,
                    "keys": sorted(self._id_to_key.items()), "next_id": self._next_id,
                    "threshold": self._threshold, "weights": self._weights,
                    "mode": self._mode, "buffer_size": self._buffer_size}

    # A datasketch pickle of a MinHashLSH names one of these bound methods
    # (its band hash); unpickling looks it up before __setstate__, which
    # then says what the pickle is.
    def _byteswap(self, hs):
        raise TypeError("datasketch's band hash: not used by minlsh")

    _hashed_byteswap = _byteswap

    def __setstate__(self, state):
        if isinstance(state, dict) and "hashtables" in state:
            raise ValueError(_datasketch_refusal(
                "pickle of a MinHashLSH", ", then insert them into a minlsh MinHashLSH"))
        if not isinstance(state, dict) or state.get("version") != 1:
            raise ValueError("not a pickled minlsh MinHashLSH of this version")
        self._handle = None
        self._lock = _ffi.RWLock()
        self._pending, self._pending_keys, self._query_buffer = [], set(), []
        raw = state["index"]
        h = c_void_p()
        check(lib.minlsh_index_load_buffer(byref(h), raw, len(raw), None),
              "minlsh_index_load_buffer")
        self._handle = h.value
        self._family = family(lib.minlsh_index_k(h.value), lib.minlsh_index_seed(h.value),
                              lib.minlsh_index_scheme(h.value))
        self._id_to_key = dict(state["keys"])
        self._key_to_id = {key: ident for ident, key in self._id_to_key.items()}
        self._next_id = state["next_id"]
        self._threshold = state["threshold"]
        self._weights = state["weights"]
        self._mode = state["mode"]
        self._buffer_size = state.get("buffer_size", 50000)

    # -- queries ----------------------------------------------------------------------

    def _query(self, minhash, with_similarity=True):
        if minhash.__class__ in _MINHASH_TYPES and minhash._family is self._family:
            sig = minhash._sig  # no copy: see _sig_fast
        else:
            sig = self._sig(minhash)
        h = self._handle
        if not h:
            raise ValueError("the MinHashLSH is closed")
        # Per-thread output buffers: a query is a few microseconds, and
        # allocating them was a third of it. Readers run concurrently, each
        # on its own thread's buffers.
        bufs = _query_buffers.__dict__.get("q")
        if bufs is None:
            bufs = _new_query_buffers()
        ids, n, cap, byref_n, _ = bufs
        sims = None
        while True:
            if with_similarity:
                sims = (c_double * cap)()
            rc = lib.minlsh_index_query(h, sig, len(sig), ids, sims, cap, byref_n)
            if rc != _ffi.E_BUFSIZE:
                break
            cap = n.value
            ids = (c_uint64 * cap)()
            bufs[0], bufs[2], bufs[4] = ids, cap, c_size_t(cap)
        if rc < 0:
            check(rc, "minlsh_index_query")
        id_to_key = self._id_to_key
        if not with_similarity:
            return [id_to_key[i] for i in ids[:n.value]]
        return [(id_to_key[ids[i]], sims[i]) for i in range(n.value)]

    def query(self, minhash: Any) -> List[Hashable]:
        """The keys of the candidates sharing at least one band with
        ``minhash`` (a stored document finds itself), in insertion order.
        ValueError for a MinHash of another num_perm or seed."""
        if self._pending:
            self._flush()
        lock = self._lock
        # The datasketch idiom's inner loop, a microsecond or two per call:
        # a MinHash of this index's family, no writer about, is asked
        # through _ffi.gil_lib (the interpreter lock held through the call,
        # so no writer can start until it returns, and no read lock is
        # needed) with the arguments already in C form, or through the
        # accelerator's query, which does the same in one C call. Keys are
        # looked up after the call; a key removed in between (KeyError, or
        # None from the accelerator) sends the query down the locked path.
        h = self._handle
        if (h and not lock._writer and not lock._writers_waiting
                and minhash.__class__ in _MINHASH_TYPES and minhash._family is self._family):
            if _fast_query is not None:
                keys = _fast_query(h, minhash._sig, self._id_to_key)
                if keys is not None:
                    return keys
            else:
                if h != self._query_handle:
                    self._query_handle = h
                    self._query_args = (c_void_p(h), c_size_t(len(minhash._sig)))
                harg, karg = self._query_args
                bufs = _query_buffers.__dict__.get("q")
                if bufs is None:
                    bufs = _new_query_buffers()
                ids, n, cap, byref_n, cap_arg = bufs
                rc = _gil_query(harg, minhash._sig, karg, ids, None, cap_arg, byref_n)
                if rc == 0:
                    try:
                        return list(map(self._id_to_key.__getitem__, ids[:n.value]))
                    except KeyError:
                        pass
        lock.acquire_read()
        try:
            return self._query(minhash, False)
        finally:
            lock.release_read()

    def query_with_similarity(self, minhash: Any,
                              min_similarity: float = 0.0) -> List[Tuple[Hashable, float]]:
        """[(key, estimated Jaccard)] of the candidates whose estimate is at
        least ``min_similarity``, in insertion order."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            return [(k, s) for k, s in self._query(minhash) if s >= min_similarity]

    def query_limited(self, minhash: Any, max_members: int) -> Tuple[List[Hashable], int]:
        """:meth:`query` with a bound on the work for hot buckets
        (minlsh_index_query_limited): bands are searched in order until the
        next one would bring the bucket members collected above
        ``max_members`` (0: no limit). Returns (keys, bands_searched);
        bands_searched < b means the answer was cut short."""
        if self._pending:
            self._flush()
        max_members = _ffi.as_u64(max_members, "max_members")
        with reading(self._lock):
            sig = self._sig_fast(minhash)
            cap = 64
            searched = c_uint32()
            while True:
                ids = (c_uint64 * cap)()
                n = c_size_t()
                rc = lib.minlsh_index_query_limited(self._h(), sig, len(sig), max_members, ids,
                                                    None, cap, byref(n), byref(searched))
                if rc == _ffi.E_BUFSIZE:
                    cap = n.value
                    continue
                check(rc, "minlsh_index_query_limited")
                return [self._id_to_key[i] for i in ids[:n.value]], searched.value

    def _query_many_raw(self, raw, n, with_similarity=False):
        """(offsets, ids, sims) for n signatures in raw: one
        minlsh_index_query_many call (two if the first guess of the output
        size is short)."""
        h = self._h()
        k = lib.minlsh_index_k(h)
        np = _ffi.numpy
        offsets = (c_size_t * (n + 1))()
        cap = max(16 * n, 64)
        while True:
            if np is not None:
                ids = np.empty(cap, dtype=np.uint64)
                sims = np.empty(cap, dtype=np.float64) if with_similarity else None
            else:
                ids = array.array("Q", bytes(8 * cap))
                sims = array.array("d", bytes(8 * cap)) if with_similarity else None
            total = c_size_t()
            rc = lib.minlsh_index_query_many(
                h, raw, n, k, offsets, _ffi.address(ids),
                _ffi.address(sims) if sims is not None else None, cap, byref(total))
            if rc == _ffi.E_BUFSIZE:
                cap = total.value
                continue
            check(rc, "minlsh_index_query_many")
            t = total.value
            return offsets, ids[:t], (sims[:t] if sims is not None else None)

    def query_many(self, minhashes: Any) -> List[List[Hashable]]:
        """:meth:`query` for many signatures in one foreign call
        (minlsh_index_query_many): a list of key lists. ``minhashes`` is a
        sequence of MinHash objects or an n x num_perm uint32 matrix."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            h = self._h()
            n = len(minhashes)
            raw = _matrix_bytes(minhashes, lib.minlsh_index_k(h), lib.minlsh_index_seed(h), n,
                                lib.minlsh_index_scheme(h))
            offsets, ids, _ = self._query_many_raw(raw, n)
            id_to_key = self._id_to_key
            ids = ids.tolist()
            return [[id_to_key[i] for i in ids[offsets[j]:offsets[j + 1]]] for j in range(n)]

    def query_csr(self, minhashes: Any, with_similarity: bool = False) -> Tuple[Any, ...]:
        """The candidates of many signatures as CSR arrays, in one foreign
        call: (indptr, ids) or, with ``with_similarity``, (indptr, ids,
        similarities); query j's candidates are ids[indptr[j]:indptr[j+1]],
        ascending. ids are the index's document ids: the insertion number of
        each key (0 for the first key inserted, then 1, 2, ...; a removed
        key's number is not reused), so after ``insert_many(range(n), M)``
        into an empty index they are the keys. numpy arrays (uint64 indptr
        and ids, float64 similarities) when numpy is installed, else
        array.array."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            h = self._h()
            n = len(minhashes)
            raw = _matrix_bytes(minhashes, lib.minlsh_index_k(h), lib.minlsh_index_seed(h), n,
                                lib.minlsh_index_scheme(h))
            offsets, ids, sims = self._query_many_raw(raw, n, with_similarity)
            np = _ffi.numpy
            if np is not None:
                indptr = np.frombuffer(offsets, dtype=np.uintp).astype(np.uint64)
            else:
                indptr = array.array("Q", offsets)
            return (indptr, ids, sims) if with_similarity else (indptr, ids)

    def key_of(self, ident: int) -> Hashable:
        """The key of a document id (as :meth:`query_csr` gives them)."""
        with reading(self._lock):
            return self._id_to_key[int(ident)]

    def add_to_query_buffer(self, minhash: Any) -> None:
        """Buffer a query for :meth:`collect_query_buffer` (datasketch's API).
        ValueError for a MinHash of another num_perm or seed."""
        with reading(self._lock):
            self._query_buffer.append(bytes(self._sig(minhash)))

    def collect_query_buffer(self) -> List[Hashable]:
        """Run the buffered queries in one foreign call and empty the buffer.
        As in datasketch, the result is the keys found by *every* buffered
        query (the intersection of their candidate sets), here in insertion
        order; [] if nothing was buffered."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            buffered, self._query_buffer = self._query_buffer, []
            if not buffered:
                return []
            offsets, ids, _ = self._query_many_raw(b"".join(buffered), len(buffered))
            ids = ids.tolist()
            common = None
            for j in range(len(buffered)):
                got = set(ids[offsets[j]:offsets[j + 1]])
                common = got if common is None else common & got
            return [self._id_to_key[i] for i in sorted(common)]

    def candidate_pairs(self, min_similarity: float = 0.0, with_similarity: bool = False,
                        max_pairs: int = 0) -> List[Tuple[Any, ...]]:
        """Every pair of indexed keys sharing a band, once each, whose
        estimated Jaccard is >= ``min_similarity`` (0: all candidates; the
        threshold: the verified pairs). A list of (key_a, key_b) with key_a
        inserted before key_b, sorted by insertion order; with
        ``with_similarity`` (key_a, key_b, similarity). ``max_pairs`` (0: no
        limit): more pairs than that raise :class:`minlsh.ParameterError`
        (MINLSH_E_TOOBIG) before any is listed."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            out = c_void_p()
            check(lib.minlsh_pairs_from_index(byref(out), self._h(), float(min_similarity),
                                              _ffi.as_u64(max_pairs, "max_pairs"), None),
                  "minlsh_pairs_from_index")
            keys = self._id_to_key
            return [(keys[a], keys[b], sim) if with_similarity else (keys[a], keys[b])
                    for a, b, sim in _ffi.take_pairs(out)]

    def clusters(self, min_similarity: float = 0.0) -> List[List[Hashable]]:
        """Groups of near-duplicates: the connected components (two or more
        keys) of the graph of :meth:`candidate_pairs` at ``min_similarity``.
        Members in insertion order; groups ordered by their first member."""
        if self._pending:
            self._flush()
        with reading(self._lock):
            out = c_void_p()
            check(lib.minlsh_clusters_from_index(byref(out), self._h(), float(min_similarity),
                                                 None), "minlsh_clusters_from_index")
            return [[self._id_to_key[i] for i in members]
                    for members in _ffi.take_clusters(out)]

    # -- files ---------------------------------------------------------------------------

    def _metadata(self, journal=None):
        """The store's metadata (minlsh_store_encode_metadata): the keys as
        names in their compact JSON, the threshold and the next id, so that
        a saved MinHashLSH is a store every front end reads. journal: the
        Journal handle a compaction folds in (synced)."""
        idents = sorted(self._id_to_key)
        names = [_key_record(self._id_to_key[ident]) for ident in idents]
        offsets = (c_uint64 * (len(names) + 1))()
        total = 0
        for i, raw in enumerate(names):
            offsets[i] = total
            total += len(raw)
        offsets[len(names)] = total
        blob = b"".join(names)
        # The store keeps a threshold in (0, 1]; one given as params (or 0)
        # is recorded as the banding's own, (1/b)^(1/r).
        t = self._threshold
        if t is None or not 0.0 < t <= 1.0:
            t = threshold_of(*self.params)
        n = c_size_t()
        h = self._h()
        rc = lib.minlsh_store_encode_metadata(h, journal, t, self._next_id, blob, offsets,
                                              None, 0, byref(n))
        if rc not in (0, _ffi.E_BUFSIZE):
            check(rc, "minlsh_store_encode_metadata")
        buf = ctypes.create_string_buffer(max(n.value, 1))
        check(lib.minlsh_store_encode_metadata(h, journal, t, self._next_id, blob, offsets,
                                               buf, n.value, byref(n)),
              "minlsh_store_encode_metadata")
        return buf.raw[:n.value]

    def save(self, path: Union[str, bytes, os.PathLike], mapped: bool = False) -> None:
        """Save atomically to ``path`` as a store's file (docs/format.md,
        "Store"): the signatures and parameters (minlsh_index_save), and in
        the store's metadata the threshold, the next id and each key as the
        document's name, its compact JSON, as :class:`Store`, the command
        and the Go binding write names. ``minlsh index stats``, Go's
        OpenStore and ``Store(path, readonly=True)`` read it; a store opened
        on it takes signatures only, unless ``config_id`` is that of the
        shingling it records (the library's defaults). Keys must be str, int,
        float, bool, None, bytes or tuples of those (TypeError otherwise,
        before anything is written): no pickle, so loading a file never
        runs code. ``weights`` and ``mode`` are not kept. ``mapped=True``
        writes format version 2 (minlsh_index_save_mapped), which
        :meth:`map` opens in place; :meth:`load` reads both, and the files
        of earlier versions. Saving makes a journal of the old file stale:
        compact it (:meth:`Journal.compact`) instead."""
        path = os.fsencode(path)
        if self._pending:
            self._flush()
        with writing(self._lock):
            self._save_locked(path, lib.minlsh_index_save_mapped if mapped
                              else lib.minlsh_index_save,
                              "minlsh_index_save_mapped" if mapped else "minlsh_index_save")

    def save_mapped(self, path: Union[str, bytes, os.PathLike]) -> None:
        """``save(path, mapped=True)``."""
        self.save(path, mapped=True)

    def _save_locked(self, path, fn, name, *args, journal=None):
        h = self._h()
        meta = self._metadata(journal)  # raises for an unsaveable key: nothing changed
        check(lib.minlsh_index_set_metadata(h, meta, len(meta)), "minlsh_index_set_metadata")
        check(fn(*(args + (h, path))), name, os.fsdecode(path))

    @classmethod
    def load(cls, path: Union[str, bytes, os.PathLike], num_perm: Optional[int] = None,
             seed: Optional[int] = None, config_id: int = 0,
             scheme: Optional[str] = None) -> MinHashLSH:
        """Load an index saved by :meth:`save` (or any minlsh index file: its
        keys are then its 64-bit ids). With ``num_perm`` or ``seed`` (the
        other defaulting to 128 or 1) the file must have them and
        ``config_id``, else minlsh.Error MINLSH_E_MISMATCH; without either,
        any valid file loads."""
        return cls._open(path, num_perm, seed, config_id, scheme, lib.minlsh_index_load,
                         "minlsh_index_load")

    @classmethod
    def map(cls, path: Union[str, bytes, os.PathLike], num_perm: Optional[int] = None,
            seed: Optional[int] = None, config_id: int = 0,
            scheme: Optional[str] = None) -> MinHashLSH:
        """Open an index file read-only in place (minlsh_index_map), with the
        checks of :meth:`load`. A file written by ``save(path, mapped=True)``
        is not loaded: queries read a few pages of it (processes mapping one
        file share them), so opening costs little beyond reading the keys
        from its metadata; an older file is loaded whole. Inserts (insert,
        insert_many, insert_if_novel, merge) go to an in-memory delta that
        every query merges with the file's answers, so the index answers as
        the loaded one would; removing a key of the file raises
        minlsh.Error ``E_STATE`` (load the file to remove it). ``save``,
        pairs, clusters and counts work on a copy loaded for the call."""
        return cls._open(path, num_perm, seed, config_id, scheme, lib.minlsh_index_map,
                         "minlsh_index_map")

    @classmethod
    def _open(cls, path, num_perm, seed, config_id, scheme, opener, name):
        bpath = os.fsencode(path)
        fam = None
        if num_perm is not None or seed is not None or scheme is not None:
            fam = family(128 if num_perm is None else num_perm, 1 if seed is None else seed,
                         "classic" if scheme is None else scheme)
        h = c_void_p()
        opts = _ffi.LoadOptions()
        check(lib.minlsh_load_options_init(byref(opts), _ffi.LOAD_OPTIONS_VERSION),
              "minlsh_load_options_init")
        opts.family = fam.handle if fam else None
        opts.config_id = _ffi.as_u64(config_id, "config_id")
        check(opener(byref(h), bpath, byref(opts)), name, os.fsdecode(bpath))
        self = cls.__new__(cls)
        self._handle = h.value
        self._lock = _ffi.RWLock()
        self._family = family(lib.minlsh_index_k(h.value), lib.minlsh_index_seed(h.value),
                              lib.minlsh_index_scheme(h.value))
        self._threshold = self._weights = self._mode = None
        self._key_to_id, self._id_to_key = {}, {}
        self._pending, self._pending_keys, self._query_buffer = [], set(), []
        self._buffer_size = 50000
        self._store_flags = 0
        ids = self._stored_ids()
        meta = self._stored_metadata()
        doc = None
        if meta.startswith((b"minlsh store\n", b"minlsh-cli-index 1\n")):
            self._restore_store(ids, os.fsdecode(bpath))
            return self
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

    def open_journal(self, path: Union[str, bytes, os.PathLike], mode: str = "w") -> Journal:
        """Open the journal at ``path`` (conventionally the index's path +
        ``".journal"``, as the ``minlsh index`` commands use) and replay its
        records into this index: see :class:`Journal`. The index must be as
        it came from its file (:meth:`map` or :meth:`load`; a journal names
        the file it extends, and one left beside an older file is skipped).
        ``mode="w"`` (hold :class:`FileLock` exclusively) keeps the journal
        open: from then on every insert and removal made through this
        MinHashLSH is recorded, and :meth:`Journal.sync` makes them durable.
        ``mode="r"`` (a reader, under a shared lock) only replays.
        One journal at a time records an index (ValueError otherwise)."""
        if mode not in ("r", "w"):
            raise ValueError('mode must be "r" or "w"')
        return Journal(self, path, mode)

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

    def _restore_store(self, ids, where):
        """The keys from a store's metadata (minlsh_store_decode_metadata):
        names that are JSON keys become those keys, others their bytes, and
        a document without a name is keyed by its id."""
        h = self._h()
        n = len(ids)
        offsets = (c_uint64 * (n + 1))()
        t, nxt, flags, size = c_double(), c_uint64(), c_uint32(), c_size_t()
        rc = lib.minlsh_store_decode_metadata(byref(t), byref(nxt), byref(flags), h, offsets,
                                              None, 0, byref(size))
        if rc not in (0, _ffi.E_BUFSIZE):
            check(rc, "minlsh_store_decode_metadata", where)
        buf = ctypes.create_string_buffer(max(size.value, 1))
        check(lib.minlsh_store_decode_metadata(byref(t), byref(nxt), byref(flags), h, offsets,
                                               buf, size.value, byref(size)),
              "minlsh_store_decode_metadata", where)
        raw = buf.raw
        for i, ident in enumerate(ids):
            key = _key_of_name(raw[offsets[i]:offsets[i + 1]], ident)
            if key in self._key_to_id:
                raise ValueError("%s: two documents have the key %r" % (where, key))
            self._id_to_key[ident] = key
            self._key_to_id[key] = ident
        self._next_id = nxt.value
        self._threshold = t.value
        self._store_flags = flags.value

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


class Keys:
    """``lsh.keys``: the keys of a MinHashLSH as datasketch's key storage
    presents them, a live view (it follows the index). ``key in lsh.keys``,
    ``for key in lsh.keys`` and ``len(lsh.keys)`` as for a set;
    ``keys()`` and calling it (``lsh.keys()``, minlsh's own spelling) give
    the list in insertion order; ``has_key``, ``size``; ``get(key)`` and
    ``lsh.keys[key]`` give the key's band keys (datasketch: the bands'
    bytes), ``itemcounts()`` the number of bands of each key."""

    __slots__ = ("_lsh",)

    def __init__(self, lsh: MinHashLSH) -> None:
        self._lsh = lsh

    def __call__(self) -> List[Hashable]:
        return self._lsh._key_list()

    def keys(self) -> List[Hashable]:
        """The keys in insertion order (a list)."""
        return self._lsh._key_list()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._lsh

    def has_key(self, key: Hashable) -> bool:
        """``key in lsh``."""
        return key in self._lsh

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._lsh._key_list())

    def __len__(self) -> int:
        return len(self._lsh)

    def size(self) -> int:
        """The number of keys."""
        return len(self._lsh)

    def get(self, key: Hashable) -> List[int]:
        """The key's b band keys, in band order (KeyError if absent)."""
        return self._lsh._band_keys_of(key)

    __getitem__ = get

    def getmany(self, *keys: Hashable) -> List[List[int]]:
        """:meth:`get` of each key."""
        return [self.get(k) for k in keys]

    def itemcounts(self) -> Dict[Hashable, int]:
        """Each key with its number of band keys (the index's b)."""
        b = self._lsh.params[0]
        return {k: b for k in self._lsh._key_list()}

    def __repr__(self) -> str:
        return "Keys(%r)" % (self._lsh._key_list(),)


class MinHashLSHInsertionSession:
    """What :meth:`MinHashLSH.insertion_session` returns: ``insert`` buffers,
    and the buffer goes into the index in one foreign call when full and on
    ``close`` (leaving the ``with`` block)."""

    def __init__(self, lsh, buffer_size=50000):
        self.lsh = lsh
        lsh.buffer_size = buffer_size
        if _fast_session_insert is not None:
            # The datasketch idiom's inner loop: no Python frame per insert.
            self.insert = functools.partial(_fast_session_insert, _MINHASH_TYPES, lsh)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()

    def close(self):
        """Insert what is buffered."""
        self.lsh._flush()

    def insert(self, key, minhash, check_duplication=True):
        """Buffer ``minhash`` under ``key`` (ValueError at once for a key
        already indexed or buffered, or a MinHash of another num_perm or
        seed)."""
        self.lsh._session_insert(key, minhash)


class MinHashLSHDeletionSession:
    """What :meth:`MinHashLSH.deletion_session` returns: ``remove(key)``
    removes at once (a removal is one cheap foreign call), ValueError if the
    key is not indexed."""

    def __init__(self, lsh, buffer_size=50000):
        self.lsh = lsh
        lsh.buffer_size = buffer_size

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()

    def close(self):
        """Nothing is buffered: kept for datasketch's API."""

    def remove(self, key):
        """Remove ``key`` (ValueError if it is not in the index)."""
        self.lsh.remove(key)
