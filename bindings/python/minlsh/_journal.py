"""A saved MinHashLSH's companions: the file lock and the journal."""

from __future__ import annotations

import ctypes
import os
from ctypes import byref, c_void_p
from typing import TYPE_CHECKING, Union

from . import _ffi
from ._ffi import check, lib, reading, writing
from ._keys import _key_of_name

if TYPE_CHECKING:
    from ._lsh import MinHashLSH


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
        """Take the lock, waiting as ``timeout`` says (E_BUSY past it)."""
        if self._handle:
            raise RuntimeError("the lock is already held by this object")
        h = c_void_p()
        check(lib.minlsh_filelock_new(byref(h), self._path, self._mode, self._ms, None),
              "minlsh_filelock_new", os.fsdecode(self._path) + ".lock")
        self._handle = h.value

    def release(self):
        """Release the lock (nothing happens if it is not held)."""
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


class Journal:
    """A journal of an index's changes (minlsh_journal; docs/format.md, "Index
    journal"): an append-only file beside a saved index whose records are
    inserts and removals, so a crawler makes each change durable in time
    proportional to the change instead of rewriting the index.

    Made by :meth:`MinHashLSH.open_journal`, which replays the records into
    the index. Opened for writing (``"w"``), it records every insert
    (insert, insert_many, insertion sessions, insert_if_novel when novel,
    merge) and removal made through that MinHashLSH; :meth:`sync` writes
    them durably (a kill -9 after it returns loses none; records not synced
    are lost, never half-applied). Each record carries the key as the
    compact JSON :meth:`MinHashLSH.save` stores (str, int, float, bool,
    None, bytes, tuples of those: TypeError before the index changes for
    other keys; at most 1 MiB), so a replay restores equal keys and never
    runs code. When :meth:`compact_due` says so, :meth:`compact` saves the
    index over its file (format version 2, keys included) and starts an
    empty journal.

    A context manager: leaving the ``with`` block closes it (without a
    sync). Thread-safe with the index it records (it takes the index's lock).
    """

    def __init__(self, lsh: MinHashLSH, path: Union[str, bytes, os.PathLike], mode: str):
        self._lsh = lsh
        self._path = os.fsencode(path)
        self._handle = None
        self._writing = mode == "w"
        raised = []

        def _replayed(_opaque, op, ident, data, length):
            try:
                key = _key_of_name(ctypes.string_at(data, length), ident)
                if op == _ffi.JOURNAL_INSERT:
                    if key in lsh._key_to_id:
                        raise ValueError("key %r inserted twice" % (key,))
                    lsh._key_to_id[key] = ident
                    lsh._id_to_key[ident] = key
                    lsh._next_id = max(lsh._next_id, ident + 1)
                else:
                    del lsh._key_to_id[lsh._id_to_key.pop(ident)]
            except Exception as e:  # noqa: BLE001 (re-raised below)
                raised.append(e)
                return -1
            return 0

        if lsh._store_flags & _ffi.STORE_SETS:
            # its records carry the offsets of shingle sets MinHashLSH has not
            raise ValueError("%s: a store with shingle sets: open it with minlsh.Store"
                             % os.fsdecode(self._path))
        if lsh._pending:
            lsh._flush()
        with writing(lsh._lock):
            if self._writing and lsh._journal is not None:
                raise ValueError("a journal is already recording this index")
            h = c_void_p()
            cb = _ffi.JOURNAL_RECORD_FN(_replayed)
            rc = lib.minlsh_journal_open(byref(h), lsh._h(), self._path,
                                         _ffi.JOURNAL_WRITE if self._writing
                                         else _ffi.JOURNAL_READ, cb, None)
            if raised:
                raise ValueError("%s: a journal record does not fit this index (%s)"
                                 % (os.fsdecode(self._path), raised[0])) from raised[0]
            check(rc, "minlsh_journal_open", os.fsdecode(self._path))
            self._handle = h.value
            if self._writing:
                lsh._journal = self

    def _h(self):
        if not self._handle:
            raise ValueError("the Journal is closed")
        return self._handle

    @property
    def path(self) -> str:
        """The journal's path."""
        return os.fsdecode(self._path)

    def sync(self) -> None:
        """Write the records appended since the last sync, and fdatasync:
        once this returns they survive a crash or kill -9. minlsh.Error
        ``E_STATE`` for a journal opened for reading."""
        with writing(self._lsh._lock):
            check(lib.minlsh_journal_sync(self._h()), "minlsh_journal_sync", self.path)

    def compact_due(self) -> bool:
        """True when the journal has passed max(1 MiB, 1/32 of the index
        file): time to :meth:`compact`."""
        with reading(self._lsh._lock):
            rc = lib.minlsh_journal_compact_due(self._h(), self._lsh._h())
        if rc < 0:
            check(rc, "minlsh_journal_compact_due")
        return rc == 1

    def compact(self, index_path: Union[str, bytes, os.PathLike]) -> None:
        """Save the index over ``index_path`` (the file it came from; format
        version 2, with its keys, atomically) and start an empty journal
        naming the new file; records not synced are in the new file. Killed
        at any point, the file and journal on disk hold every synced change
        exactly once. The MinHashLSH stays as it is (a mapped one keeps
        its delta: :meth:`MinHashLSH.map` the file again to drop it)."""
        lsh = self._lsh
        with writing(lsh._lock):
            # Synced first, the new file's metadata says how much of the
            # journal it holds: a kill before the journal's reset then
            # leaves a pair a store replays without applying anything twice.
            check(lib.minlsh_journal_sync(self._h()), "minlsh_journal_sync", self.path)
            lsh._save_locked(os.fsencode(index_path), lib.minlsh_journal_compact,
                             "minlsh_journal_compact", self._h(), journal=self._h())

    @property
    def bytes(self) -> int:
        """The journal's size: header, records on disk and buffered."""
        return lib.minlsh_journal_bytes(self._handle) if self._handle else 0

    @property
    def records(self) -> int:
        """Records replayed and appended since the last compaction."""
        return lib.minlsh_journal_records(self._handle) if self._handle else 0

    def close(self) -> None:
        """Close the journal; records not synced are dropped (the index keeps
        their changes: sync first to keep them on disk too)."""
        lsh = self._lsh
        with writing(lsh._lock):
            if self._handle:
                lib.minlsh_journal_free(self._handle)
                self._handle = None
            if lsh._journal is self:
                lsh._journal = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self, _free=lib.minlsh_journal_free):
        if getattr(self, "_handle", None):
            _free(self._handle)
            self._handle = None
