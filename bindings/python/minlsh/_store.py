"""Store: the crawler's index in one handle (minlsh_store_*, docs/api.md 2.15).

MinHashLSH indexes signatures the caller made (any hashing, any tokens, as
datasketch does) and saves them as a store's file; the Store is the
crawler's API on one: configuration, names and the journal in the file,
check-and-insert, group commit, exact verdicts from stored sets. Both store
a document's name as the same JSON token (_keys.py), so names written here,
by MinHashLSH, by the command or by Go read alike.
"""

from __future__ import annotations

import collections
import ctypes
import json
import os
from ctypes import byref, c_size_t, c_uint64, c_void_p
from typing import Any, Hashable, Iterator, List, Optional, Union

from . import _ffi
from ._ffi import check, lib, reading, writing
from ._keys import _decode_key, _key_record
from ._minhash import scheme_id
from ._plan import _u32
from ._shingle import key_bytes, parse_spec, shingler_options

StoreResult = collections.namedtuple(
    "StoreResult",
    ["novel", "inserted", "id", "match", "match_name", "similarity", "exact", "candidates"])
StoreResult.__doc__ = """What :meth:`Store.add` or :meth:`Store.query` decided: ``novel`` (no
stored document reaches the threshold), ``inserted`` (the document was added, under
``id``; None otherwise), ``match`` and ``match_name`` (the near-duplicate found, or the
most similar candidate checked; None without one), its ``similarity`` (the exact Jaccard
when ``exact``, else the signature estimate; None without a match) and the number of LSH
``candidates`` looked at."""

_NAME_MODES = ("json", "bytes")


class Store:
    """A near-duplicate index kept at ``path`` and shared by any number of
    processes (minlsh_store_*): ``add`` checks a text against every stored
    document and, if none reaches the threshold, stores it, durably once
    committed; the configuration lives in the file, so another worker opens
    it with its path alone (and the ``key``, if not the default).

    ``Store(path)`` opens the store, creating it when missing (``create=False``
    refuses with minlsh.Error ``E_NOTFOUND``); ``readonly=True`` opens it for
    queries only. Creation options (None or 0: the library's default on a new
    store, "whatever the file says" on an existing one, where a value that
    disagrees is ``E_MISMATCH``): ``threshold`` (0.8), ``num_perm`` (128),
    ``scheme`` ("classic" or "oph"), ``seed`` (1), ``bands`` and ``rows``
    (planned for recall 0.999 at the threshold), ``sets=True`` (keep each
    document's shingle set in ``PATH.sets``: verdicts by exact Jaccard, not
    the estimate), ``shingle`` (a spec such as ``"word:5"``) and the
    :class:`Shingler` options (``lowercase``, ``html``, ``normalize``,
    ``stopwords``...; with none given the library's defaults, ``word:5`` with
    CJK words). Per handle: ``key`` (16 bytes; never stored, checked through
    the shingler's config id), ``lock_timeout`` in seconds (None: wait without
    limit; past it ``E_BUSY``), ``max_document_bytes`` (longer texts are
    ``E_TOOBIG``; 0: no limit). ``any_key=True`` opens an existing store
    whose config id the key does not give (made with another key, or saved
    by :meth:`MinHashLSH.save` from signatures made elsewhere): names and
    counts read, texts refused with ``E_MISMATCH``.

    Names: with ``names="json"`` (the default) a name is any key
    :meth:`MinHashLSH.save` accepts (str, int, float, bool, bytes, tuples of
    those) stored as its compact JSON token, as the command and the Go
    binding store theirs; ``names="bytes"`` stores str (UTF-8) or bytes as
    they are and gives bytes back. ``name=None`` adds a document without a
    name. Names of a store are unique (``E_EXISTS``).

    Outside a transaction each ``add`` and ``remove`` takes the lock, commits
    and releases it: durable when it returns. ``with store.begin():`` groups
    them under one lock and one fdatasync (leaving the block commits; an
    exception rolls every change of the block back). Other processes'
    commits are seen at the next ``begin``/``add``/``remove``, or after
    :meth:`refresh`. Thread-safe (calls on one handle are serialised; queries
    and name lookups run concurrently); give each process its own Store.
    A context manager: leaving ``with Store(...)`` closes it.
    """

    def __init__(self, path: Union[str, bytes, os.PathLike], *, create: bool = True,
                 readonly: bool = False, threshold: Optional[float] = None,
                 num_perm: Optional[int] = None, scheme: Optional[str] = None,
                 seed: Optional[int] = None, bands: Optional[int] = None,
                 rows: Optional[int] = None, sets: bool = False, key: Any = None,
                 shingle: Optional[str] = None, lock_timeout: Optional[float] = None,
                 max_document_bytes: int = 0, names: str = "json", any_key: bool = False,
                 **shingler: Any) -> None:
        self._handle = None
        self._lock = _ffi.RWLock()
        if names not in _NAME_MODES:
            raise ValueError("names must be 'json' or 'bytes', not %r" % (names,))
        self._json_names = names == "json"
        self._path = os.fsencode(path)
        opts = _ffi.StoreOptions()
        check(lib.minlsh_store_options_init(byref(opts), _ffi.STORE_OPTIONS_VERSION),
              "minlsh_store_options_init")
        flags = 0
        if readonly:
            flags |= _ffi.STORE_READONLY
        elif create:
            flags |= _ffi.STORE_CREATE
        if sets:
            flags |= _ffi.STORE_SETS
        if any_key:
            if not readonly and create:
                raise ValueError("any_key opens an existing store: give create=False or "
                                 "readonly=True")
            flags |= _ffi.STORE_ANY_KEY
        opts.flags = flags
        if shingle is not None or shingler:
            if "key" in shingler or "max_document_bytes" in shingler:
                raise TypeError("give key and max_document_bytes to the Store itself")
            unit, k = parse_spec("word:5" if shingle is None else shingle)
            sopts, _, _ = shingler_options(unit, k, **shingler)
            opts.shingler = ctypes.pointer(sopts)
        if num_perm is not None:
            opts.num_perm = _u32(num_perm, "num_perm")
        if scheme is not None:
            opts.scheme = scheme_id(scheme)
        if seed is not None:
            opts.seed = _ffi.as_u64(seed, "seed")
        if threshold is not None:
            opts.threshold = float(threshold)
        if (bands is None) != (rows is None):
            raise ValueError("give both bands and rows, or neither")
        if bands is not None:
            opts.bands, opts.rows = _u32(bands, "bands"), _u32(rows, "rows")
        if key is not None:
            opts.key = key_bytes(key)
        if lock_timeout is not None:
            ms = int(round(float(lock_timeout) * 1000))
            if not 0 <= ms < 0xFFFFFFFF:
                raise ValueError("lock_timeout must be None or 0 to 4294967 seconds")
            # 0 means "no limit" to the library: "do not wait" is 1 ms.
            opts.lock_timeout_ms = max(ms, 1)
        opts.max_document_bytes = _ffi.as_u64(max_document_bytes, "max_document_bytes")
        h = c_void_p()
        check(lib.minlsh_store_open(byref(h), self._path, byref(opts)), "minlsh_store_open",
              os.fsdecode(self._path))
        self._handle = h.value

    # -- lifetime --------------------------------------------------------------

    def close(self) -> None:
        """Close the store now; changes not committed are dropped."""
        with writing(self._lock):
            if self._handle:
                lib.minlsh_store_free(self._handle)
                self._handle = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self, _free=lib.minlsh_store_free):
        if getattr(self, "_handle", None):
            _free(self._handle)
            self._handle = None

    def _h(self):
        if not self._handle:
            raise ValueError("the Store is closed")
        return self._handle

    @property
    def path(self) -> str:
        """The path the store was opened at."""
        return os.fsdecode(self._path)

    @property
    def threshold(self) -> float:
        """The threshold the store decides at (kept in the file)."""
        with reading(self._lock):
            return lib.minlsh_store_threshold(self._h())

    def __repr__(self):
        if not self._handle:
            return "Store(%r, closed)" % self.path
        return "Store(%r, documents=%d, threshold=%g)" % (self.path, len(self), self.threshold)

    # -- names -----------------------------------------------------------------

    def _encode(self, name):
        if name is None:
            return b""
        if self._json_names:
            return _key_record(name)
        if isinstance(name, str):
            return name.encode("utf-8")
        return _ffi.as_bytes(name, "name")

    def _decode(self, raw):
        if not self._json_names:
            return raw
        if not raw:
            return None
        try:
            return _decode_key(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, ValueError):
            raise ValueError("%s: the name %r is not a JSON token: open the store with "
                             "names='bytes'" % (self.path, raw)) from None

    def _copy_name(self, h, ident):
        """The raw name of ident, or None if there is no such document."""
        n = c_size_t()
        rc = lib.minlsh_store_copy_name(h, ident, None, 0, byref(n))
        if rc == _ffi.E_NOTFOUND:
            return None
        if rc == 0:
            return b""
        if rc != _ffi.E_BUFSIZE:
            check(rc, "minlsh_store_copy_name")
        buf = ctypes.create_string_buffer(n.value)
        check(lib.minlsh_store_copy_name(h, ident, buf, n.value, byref(n)),
              "minlsh_store_copy_name")
        return buf.raw[:n.value]

    def name_of(self, ident: int) -> Hashable:
        """The name of document ``ident`` (None if it has none); KeyError if
        there is no such document."""
        ident = _ffi.as_u64(ident, "id")
        with reading(self._lock):
            raw = self._copy_name(self._h(), ident)
        if raw is None:
            raise KeyError(ident)
        return self._decode(raw)

    def id_of(self, name: Hashable) -> int:
        """The id of the document named ``name``; KeyError if none is."""
        raw = self._encode(name)
        out = c_uint64()
        with reading(self._lock):
            rc = lib.minlsh_store_find_name(byref(out), self._h(), raw, len(raw))
        if rc == _ffi.E_NOTFOUND:
            raise KeyError(name)
        check(rc, "minlsh_store_find_name")
        return out.value

    def __contains__(self, name: Hashable) -> bool:
        try:
            self.id_of(name)
        except (KeyError, TypeError, ValueError):
            return False
        return True

    def __len__(self) -> int:
        with reading(self._lock):
            return lib.minlsh_store_count(self._h())

    def count(self) -> int:
        """The documents in the store, as this handle sees it."""
        return len(self)

    def items(self) -> List[tuple]:
        """(id, name) of every document, by id (names of unnamed ones None)."""
        out = []
        with reading(self._lock):
            h = self._h()
            left, ident = lib.minlsh_store_count(h), 0
            # Ids are dense from 0; removed ones (not found) are skipped.
            while left:
                raw = self._copy_name(h, ident)
                if raw is not None:
                    out.append((ident, raw))
                    left -= 1
                ident += 1
        return [(i, self._decode(raw)) for i, raw in out]

    def names(self) -> List[Hashable]:
        """The names of every document, by id (None for unnamed ones)."""
        return [name for _, name in self.items()]

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self.names())

    # -- check-and-insert ------------------------------------------------------

    def _result(self, h, r, inserted_id):
        match = match_name = similarity = None
        if r.has_match:
            match, similarity = r.match, r.similarity
            raw = self._copy_name(h, match)
            match_name = None if raw is None else self._decode(raw)
        return StoreResult(bool(r.novel), bool(r.inserted), inserted_id, match, match_name,
                           similarity, bool(r.exact), r.candidates)

    def add(self, text: Union[str, bytes], name: Hashable = None, *,
            always: bool = False) -> StoreResult:
        """Check-and-insert: store ``text`` under ``name`` unless a stored
        document reaches the threshold (``always=True`` stores it anyway).
        Outside ``begin()`` the change is durable when this returns.
        minlsh.Error ``E_EXISTS`` if the name is taken."""
        data = _ffi.as_bytes(text)
        raw = self._encode(name)
        r = _ffi.StoreResult()
        with writing(self._lock):
            h = self._h()
            check(lib.minlsh_store_add(byref(r), h, data, len(data), raw, len(raw),
                                       _ffi.STORE_ADD_ALWAYS if always else 0),
                  "minlsh_store_add", self.path)
            return self._result(h, r, r.id if r.inserted else None)

    def query(self, text: Union[str, bytes]) -> StoreResult:
        """The decision :meth:`add` would make, without storing anything,
        from this handle's view (:meth:`refresh` first to see other
        processes' commits)."""
        data = _ffi.as_bytes(text)
        r = _ffi.StoreResult()
        with reading(self._lock):
            h = self._h()
            check(lib.minlsh_store_query(byref(r), h, data, len(data)), "minlsh_store_query",
                  self.path)
            return self._result(h, r, None)

    def remove(self, name: Hashable) -> None:
        """Remove the document named ``name`` (KeyError if none is).
        Outside ``begin()`` the change is durable when this returns."""
        raw = self._encode(name)
        with writing(self._lock):
            rc = lib.minlsh_store_remove_name(self._h(), raw, len(raw))
        if rc == _ffi.E_NOTFOUND:
            raise KeyError(name)
        check(rc, "minlsh_store_remove_name", self.path)

    def remove_id(self, ident: int) -> None:
        """Remove document ``ident`` (KeyError if there is none)."""
        ident = _ffi.as_u64(ident, "id")
        with writing(self._lock):
            rc = lib.minlsh_store_remove(self._h(), ident)
        if rc == _ffi.E_NOTFOUND:
            raise KeyError(ident)
        check(rc, "minlsh_store_remove", self.path)

    # -- transactions ----------------------------------------------------------

    def begin(self) -> Transaction:
        """Take the store's lock (catching up with other processes) until
        :meth:`commit` or :meth:`rollback`. ``with store.begin():`` commits
        when the block ends and rolls back if it raises."""
        with writing(self._lock):
            check(lib.minlsh_store_begin(self._h()), "minlsh_store_begin", self.path)
        return Transaction(self)

    def commit(self) -> None:
        """Make every change since :meth:`begin` durable (one fdatasync) and
        release the lock. If it fails, nothing since begin was committed."""
        with writing(self._lock):
            check(lib.minlsh_store_commit(self._h()), "minlsh_store_commit", self.path)

    def rollback(self) -> None:
        """Drop every change since :meth:`begin` and release the lock."""
        with writing(self._lock):
            check(lib.minlsh_store_rollback(self._h()), "minlsh_store_rollback", self.path)

    def sync(self) -> None:
        """Make the changes since :meth:`begin` durable, keeping the lock."""
        with writing(self._lock):
            check(lib.minlsh_store_sync(self._h()), "minlsh_store_sync", self.path)

    def refresh(self) -> None:
        """Catch up with what other processes committed (reading only the
        journal's new records)."""
        with writing(self._lock):
            check(lib.minlsh_store_refresh(self._h()), "minlsh_store_refresh", self.path)

    # -- compaction ------------------------------------------------------------

    @property
    def compact_due(self) -> bool:
        """True when the journal has grown past max(1 MiB, 1/32 of the
        file): time to :meth:`compact`."""
        with reading(self._lock):
            return check(lib.minlsh_store_compact_due(self._h()),
                         "minlsh_store_compact_due") == 1

    def compact(self) -> None:
        """Fold the journal into a new file without stalling other writers
        (removed documents leave the index here). minlsh.Error ``E_BUSY`` if
        another compaction is running; ``E_STATE`` inside begin()."""
        with writing(self._lock):
            check(lib.minlsh_store_compact(self._h()), "minlsh_store_compact", self.path)


class Transaction:
    """What :meth:`Store.begin` returns: a context manager that commits when
    its block ends and rolls back if the block raises."""

    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    def __enter__(self) -> Store:
        return self._store

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self._store.commit()
        else:
            self._store.rollback()

