"""Deduplication with the library's dedup engine (minlsh_dedup).

The engine owns the whole policy (docs/dedup.md): exact copies by
fingerprint, signatures, banding, verification, clusters and the keep or drop
decision of every document. This module only moves documents in and results
out: texts go to the engine in batches, one ``minlsh_dedup_add_texts`` call
per batch (one buffer, an array of pointers into it and an array of lengths),
and the results come back as plain Python objects.
"""

import ctypes
import itertools
import os
import warnings
from collections.abc import Mapping
from ctypes import byref, c_int32, c_size_t, c_void_p
from typing import (Any, Dict, Hashable, Iterable, Iterator, List, NamedTuple, Optional,
                    Tuple, Union)

from . import _ffi, _preset
from ._ffi import check, lib, reading, writing
from ._minhash import family
from ._shingle import Shingler, shingler_for

__all__ = ["Decision", "DedupResult", "dedup"]

_KEEP = {"first": _ffi.KEEP_FIRST, "longest": _ffi.KEEP_LONGEST}
_GROUP = {"components": _ffi.GROUP_COMPONENTS, "strict": _ffi.GROUP_STRICT}
_VERIFY = {"exact": _ffi.VERIFY_EXACT, "signature": _ffi.VERIFY_SIGNATURE}

#: Documents per minlsh_dedup_add_texts call unless told otherwise.
DEFAULT_BATCH_SIZE = 4096

Text = Union[str, bytes, bytearray, memoryview]
Document = Union[Text, Tuple[Hashable, Text], Mapping]


class Decision(NamedTuple):
    """What happens to one document.

    ``id``: the document's id. ``kept``: True if it stays. ``representative``:
    the id of the kept document it is attributed to (its own id when kept).
    ``cluster``: the number of its cluster in :meth:`DedupResult.clusters`
    counted from 1 (clusters of two or more documents, ordered by their first
    document in input order), 0 when it is in none: the numbering of
    ``minlsh dedup --output decisions``. ``similarity``: the verified Jaccard
    similarity to the representative (1.0 for itself and for exact copies).
    ``exact``: True if it was dropped as an exact copy of the representative.
    """

    id: Any
    kept: bool
    representative: Any
    cluster: int
    similarity: float
    exact: bool


def _choice(value: str, table: Dict[str, int], what: str) -> int:
    if not isinstance(value, str) or value not in table:
        raise ValueError("%s must be one of %s, not %r"
                         % (what, ", ".join(repr(k) for k in table), value))
    return table[value]


def _count(value: Optional[int], what: str, limit: int) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an integer, not %s" % (what, type(value).__name__))
    if not 0 <= value <= limit:
        raise ValueError("%s must be in 0..%d, got %d" % (what, limit, value))
    return value


def _split(item: Any, position: int, id_field: str, text_field: str) -> Tuple[Any, Any]:
    """(id, text) of one input item."""
    if isinstance(item, (str, bytes, bytearray, memoryview)):
        return position, item
    if isinstance(item, tuple):
        if len(item) != 2:
            raise ValueError("document %d: a tuple must be (id, text), not %d items"
                             % (position, len(item)))
        return item
    if isinstance(item, Mapping):
        try:
            return item[id_field], item[text_field]
        except KeyError as exc:
            raise ValueError("document %d: no %r key" % (position, exc.args[0])) from None
    raise TypeError("document %d: expected str, bytes, an (id, text) tuple or a mapping, "
                    "not %s" % (position, type(item).__name__))


class DedupResult:
    """The outcome of :func:`dedup`.

    ``decisions`` is one :class:`Decision` per document, in input order;
    ``ids`` the ids in input order; ``kept`` and ``dropped`` the ids of the
    kept and dropped documents, in input order; ``stats`` the engine's
    counts (``documents``, ``empty``, ``exact_groups``, ``candidates``,
    ``verified``, ``capped_buckets``, ``kept``, ``dropped``, ``bytes``,
    ``bands``, ``rows``; and ``repeated_ids`` and ``refused_ids``, the
    documents skipped for their id).

    The result holds the engine for :meth:`pairs` (with exact verification
    it keeps every shingle set: see ``stats["bytes"]``). :meth:`close`, or
    leaving a ``with`` block, releases it; everything else stays available.
    The object may be read from any number of threads.
    """

    def __init__(self, handle: int, ids: List[Any],
                 skipped: Optional[Dict[str, int]] = None) -> None:
        # Owned only once built: until then the caller frees it on failure.
        self._handle: Optional[int] = None
        self._lock = _ffi.RWLock()
        self.ids: List[Any] = ids
        n = len(ids)
        st = _ffi.DedupStats()
        check(lib.minlsh_dedup_copy_stats(byref(st), handle), "minlsh_dedup_copy_stats")
        self.stats: Dict[str, int] = {name: getattr(st, name) for name, _ in st._fields_}
        self.stats.update(skipped or {"repeated_ids": 0, "refused_ids": 0})
        dec = (_ffi.DedupDecision * max(n, 1))()
        got = c_size_t()
        check(lib.minlsh_dedup_copy_decisions(handle, 0, dec, n, byref(got)),
              "minlsh_dedup_copy_decisions")
        if got.value != n:
            raise _ffi.error(_ffi.E_STATE, "minlsh_dedup_copy_decisions",
                             "%d decisions for %d documents" % (got.value, n))
        self._members = self._cluster_members(handle)
        self.decisions: List[Decision] = [
            Decision(ids[i], bool(d.kept), ids[d.representative], d.cluster, d.similarity,
                     bool(d.exact))
            for i, d in enumerate(dec[:n])]
        self.kept: List[Any] = [d.id for d in self.decisions if d.kept]
        self.dropped: List[Any] = [d.id for d in self.decisions if not d.kept]
        self._handle = handle

    @staticmethod
    def _cluster_members(handle: int) -> List[List[int]]:
        cl = c_void_p()
        check(lib.minlsh_clusters_from_dedup(byref(cl), handle, None),
              "minlsh_clusters_from_dedup")
        return _ffi.take_clusters(cl)

    def __del__(self, _free=lib.minlsh_dedup_free) -> None:
        if getattr(self, "_handle", None):
            _free(self._handle)
            self._handle = None

    def close(self) -> None:
        """Release the engine (what :meth:`pairs` needs); idempotent."""
        with writing(self._lock):
            if self._handle:
                lib.minlsh_dedup_free(self._handle)
                self._handle = None

    def __enter__(self) -> "DedupResult":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self.decisions)

    def __iter__(self) -> Iterator[Decision]:
        return iter(self.decisions)

    def __repr__(self) -> str:
        return "DedupResult(documents=%d, kept=%d, dropped=%d, clusters=%d)" % (
            len(self.decisions), len(self.kept), len(self.dropped), len(self._members))

    def clusters(self) -> List[List[Any]]:
        """The clusters of the decisions (minlsh_clusters_from_dedup): each kept
        document with the documents attributed to it, two or more ids in
        input order; clusters ordered by their first document. With
        ``group="components"`` these are the connected components of the
        verified pairs and the exact copies."""
        return [[self.ids[m] for m in members] for members in self._members]

    def pairs(self, max_pairs: int = 0) -> List[Tuple[Any, Any, float]]:
        """Every verified pair (minlsh_pairs_from_dedup) as ``(id_a, id_b,
        similarity)``, ``id_a`` before ``id_b`` in input order, sorted by
        their positions; exact copies are pairs of similarity 1.0. More
        than ``max_pairs`` (0: no limit) raises a ParameterError
        (MINLSH_E_TOOBIG) without building any."""
        max_pairs = _ffi.as_u64(max_pairs, "max_pairs")
        with reading(self._lock):
            if not self._handle:
                raise _ffi.error(_ffi.E_STATE, "DedupResult.pairs", "the result is closed")
            out = c_void_p()
            check(lib.minlsh_pairs_from_dedup(byref(out), self._handle, max_pairs, None),
                  "minlsh_pairs_from_dedup")
        pairs = _ffi.take_pairs(out)
        ids = self.ids
        return [(ids[a], ids[b], sim) for a, b, sim in pairs]


def _add_batch(handle: int, texts: List[bytes], ids: List[Any], first: int) -> None:
    """One minlsh_dedup_add_texts call for a batch: one buffer holding every
    text, pointers into it and the lengths."""
    n = len(texts)
    buf = b"".join(texts)
    base = ctypes.cast(ctypes.c_char_p(buf), c_void_p).value
    lens = [len(t) for t in texts]
    offs = itertools.accumulate(lens, initial=base)
    ptrs = (c_void_p * n)(*itertools.islice(offs, n))
    clens = (c_size_t * n)(*lens)
    status = (c_int32 * n)()
    rc = lib.minlsh_dedup_add_texts(handle, ptrs, clens, n, status)
    del buf  # kept alive up to here: the library reads it during the call only
    if rc < 0:
        for i in range(n):
            if status[i] < 0:
                raise _ffi.error(status[i], "minlsh_dedup_add_texts",
                                 "document %d (id %r)" % (first + i, ids[first + i]))
        check(rc, "minlsh_dedup_add_texts")


def dedup(docs: Iterable[Document], threshold: Optional[float] = None,
          num_perm: Optional[int] = None, seed: int = 1, *,
          shingler: Union[Shingler, str, None] = None, preset: Any = None, keep: str = "first",
          group: str = "components", verify: str = "exact", bands: Optional[int] = None,
          rows: Optional[int] = None, threads: int = 0, max_bucket: int = 0,
          memory: int = 0, tmpdir: Optional[str] = None,
          batch_size: int = DEFAULT_BATCH_SIZE, id_field: str = "id",
          text_field: str = "text", scheme: str = "classic") -> DedupResult:
    """Find the near-duplicates among ``docs`` and decide which to keep.

    ``docs`` is an iterable (read once, in order) of documents, each one of:

    - a text: ``str`` (encoded as UTF-8) or bytes-like; its id is its
      position in the input, 0, 1, ...;
    - a tuple ``(id, text)``;
    - a mapping with the keys ``id_field`` and ``text_field`` (default "id"
      and "text", as a JSON Lines record of ``minlsh dedup --jsonl``).

    The kinds may be mixed. An id is a str or a number and is compared as
    ``minlsh dedup --jsonl`` compares JSON ids (minlsh_dedup_canonical_id):
    numbers by value (1 and 1.0 are one id), strings by their text. A
    document whose id repeats an earlier one, or whose id is of another kind
    (bool, None, a tuple...), is skipped, counted in ``stats`` and reported
    in one warning, as the command skips it. Every other document is added,
    those without any shingle too: the engine keeps each of them, nobody's
    copy and nobody's near-duplicate (as ``minlsh dedup`` does).

    Parameters, as ``minlsh dedup`` names them:
    ``threshold`` Jaccard threshold in (0, 1] (default 0.8); ``num_perm``
    (default 128), ``seed`` and
    ``scheme`` ("classic" or "oph", as ``--scheme``) the MinHash family; ``shingler`` a :class:`minlsh.Shingler` or a spec such as
    ``"char:4"`` (default ``"word:5"``); ``keep`` "first" (input order) or
    "longest" (the most bytes, ties the first); ``group`` "components" (one
    kept document per connected component) or "strict" (drop a document only
    for a kept near-duplicate); ``verify`` "exact" (exact Jaccard of the
    shingle sets) or "signature" (the MinHash estimate, less memory);
    ``bands`` and ``rows`` the banding, both or neither (default:
    minlsh_dedup_plan, P(candidate | threshold) >= 0.999, a ParameterError
    where no banding of ``num_perm`` values reaches it); ``threads`` 0 for one per
    processor; ``max_bucket`` leaves out band buckets of more documents (0: no
    cap; counted in ``stats["capped_buckets"]``); ``memory`` the bytes the
    engine's growing data may take before it goes to temporary files in
    ``tmpdir`` (default: $TMPDIR, else /tmp; 0, the default: half the
    physical memory, as the command; ``minlsh.DEDUP_MEMORY_UNLIMITED``: no
    limit; the answer does not depend on it); ``batch_size`` documents
    per call into the library. The result never depends on ``threads`` or
    ``batch_size``.

    ``preset`` (a name such as ``"fineweb"``, or a :class:`minlsh.Preset`;
    :func:`minlsh.presets` lists them) fills in every parameter not given,
    as ``minlsh dedup --preset`` does: the shingling and normalisation (a
    ``shingler`` spec replaces the unit and length and keeps the preset's
    normalisation; a Shingler object replaces both), ``num_perm``,
    ``threshold``, and ``bands`` and ``rows`` unless ``num_perm`` is given
    (one of them given alone keeps the preset's other one).

    Bad options raise ValueError (a :class:`minlsh.ParameterError` for those
    the library refuses); a document the library refuses (e.g. over the
    shingler's ``max_document_bytes``) raises a ParameterError naming it.
    The library does the work with the interpreter lock released.
    """
    if isinstance(docs, (str, bytes, bytearray, memoryview)):
        raise TypeError("docs must be an iterable of documents, not one %s"
                        % type(docs).__name__)
    opts = _ffi.DedupOptions()
    check(lib.minlsh_dedup_options_init(byref(opts), _ffi.DEDUP_OPTIONS_VERSION),
          "minlsh_dedup_options_init")
    opts.keep = _choice(keep, _KEEP, "keep")
    opts.group = _choice(group, _GROUP, "group")
    opts.verify = _choice(verify, _VERIFY, "verify")
    if preset is not None:
        p = _preset.preset(preset)
        if num_perm is None:
            num_perm = p.num_perm
            if bands is None:
                bands = p.bands
            if rows is None:
                rows = p.rows
        if threshold is None:
            threshold = p.threshold
        if shingler is None or isinstance(shingler, str):
            shingler = p.shingler(shingler)
    if threshold is None:
        threshold = 0.8
    if num_perm is None:
        num_perm = 128
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError("threshold must be a number, not %s" % type(threshold).__name__)
    if not 0.0 < threshold <= 1.0:
        raise ValueError("threshold must be in (0, 1], got %r" % (threshold,))
    opts.threshold = float(threshold)
    if (bands is None) != (rows is None):
        raise ValueError("give both bands and rows, or neither")
    opts.bands = _count(bands, "bands", 0xFFFFFFFF)
    opts.rows = _count(rows, "rows", 0xFFFFFFFF)
    opts.threads = _count(threads, "threads", 0xFFFFFFFF)
    opts.max_bucket = _ffi.as_u64(max_bucket, "max_bucket")
    opts.memory = _ffi.as_u64(memory, "memory")
    opts.all_pairs = 1  # DedupResult.pairs() lists every verified pair
    tmpdir_bytes = os.fsencode(tmpdir) if tmpdir is not None else None
    opts.tmpdir = tmpdir_bytes
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError("batch_size must be an integer >= 1")
    if shingler is None or isinstance(shingler, str):
        sh = shingler_for(shingler or "word:5")
    elif isinstance(shingler, Shingler):
        sh = shingler
    else:
        raise TypeError("shingler must be a minlsh.Shingler or a spec such as 'word:5'")
    fam = family(num_perm, seed, scheme)
    _ffi.dedup_plan(opts, fam.k)

    handle = c_void_p()
    check(lib.minlsh_dedup_new(byref(handle), sh._handle, fam.handle, byref(opts), None),
          "minlsh_dedup_new", "threshold %g, num_perm %d, bands %d, rows %d, max_bucket %d"
          % (opts.threshold, num_perm, opts.bands, opts.rows, opts.max_bucket))
    h = handle.value
    try:
        ids: List[Any] = []
        seen = set()
        skipped = {"repeated_ids": 0, "refused_ids": 0}
        batch: List[bytes] = []
        for position, item in enumerate(docs):
            ident, text = _split(item, position, id_field, text_field)
            key = _ffi.canonical_id(ident)
            if key is None or key in seen:
                skipped["refused_ids" if key is None else "repeated_ids"] += 1
                continue
            seen.add(key)
            batch.append(_ffi.as_bytes(text))
            ids.append(ident)
            if len(batch) == batch_size:
                _add_batch(h, batch, ids, len(ids) - len(batch))
                batch = []
        if batch:
            _add_batch(h, batch, ids, len(ids) - len(batch))
        del seen, batch
        check(lib.minlsh_dedup_run(h), "minlsh_dedup_run")
        result = DedupResult(h, ids, skipped)
    except BaseException:
        lib.minlsh_dedup_free(h)
        raise
    if skipped["repeated_ids"] or skipped["refused_ids"]:
        warnings.warn("minlsh.dedup: %d documents repeat an earlier id and %d have an id that is "
                      "not a string or a number; skipped (stats['repeated_ids'], "
                      "stats['refused_ids'])"
                      % (skipped["repeated_ids"], skipped["refused_ids"]), stacklevel=2)
    return result
