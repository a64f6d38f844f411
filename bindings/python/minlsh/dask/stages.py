"""The work of each task of :func:`minlsh.dask.dedup`: numpy arrays in, numpy
arrays out, and one call of the C library per partition for each stage
(lib/dedup/stages.c), never one per document or per pair.

A partition's documents travel as a dict of arrays (``_Part``); the
shuffles are done by hand: a task splits its rows into one piece per output
partition (``np.argsort`` of the destination, then slices), and each task
of the next stage concatenates its pieces. Numpy arrays cross process
boundaries as raw buffers, so a piece costs its bytes and nothing per row.
"""

import collections.abc
import ctypes
import json
import math
from ctypes import POINTER, c_size_t, c_void_p

import dask.bag as db
import dask.dataframe as dd
import numpy as np
import pandas as pd

from .. import _ffi, _jsonl
from .._ffi import lib
from .._minhash import family as _family
from . import spill
from .common import _id_key, _shingler


# ---- input -------------------------------------------------------------------

def input_parts(collection, id_field, text_field):
    """The collection's partitions as delayed objects (lists of records or
    pandas frames)."""
    return input_bag(collection, id_field, text_field).to_delayed()


def input_bag(collection, id_field, text_field):
    """The collection as a bag whose partitions are lists (or iterators) of
    records, or pandas frames: a task mapped over it fuses with the task
    that reads the partition, so records never cross processes as Python
    objects."""
    if isinstance(collection, db.Bag):
        return collection
    if isinstance(collection, pd.DataFrame):
        collection = dd.from_pandas(collection, npartitions=1, sort=False)
    if isinstance(collection, dd.DataFrame):
        missing = [c for c in (id_field, text_field) if c not in collection.columns]
        if missing:
            raise KeyError("the dataframe has no column %s" % ", ".join(map(repr, missing)))
        return collection[[id_field, text_field]].to_bag(format="frame")
    raise TypeError("collection must be a dask bag of records ({id: ..., text: ...} or "
                    "(id, text)) or a dask/pandas dataframe, not %s" % type(collection).__name__)


def _records(part, id_field, text_field):
    """(ids, texts) of a partition: a list of records (dicts or (id, text)
    pairs) or a pandas frame."""
    if isinstance(part, pd.DataFrame):
        return part[id_field].tolist(), part[text_field].tolist()
    if not isinstance(part, list):  # a bag's partition may be any iterable
        part = list(part)
    try:  # the common case: every record a dict with both fields
        return [r[id_field] for r in part], [r[text_field] for r in part]
    except (KeyError, TypeError, IndexError):
        pass
    ids, texts = [], []
    for r in part:
        if isinstance(r, dict):
            ids.append(r.get(id_field))
            texts.append(r.get(text_field))
        elif isinstance(r, (tuple, list)) and len(r) == 2:
            ids.append(r[0])
            texts.append(r[1])
        else:
            ids.append(None)
            texts.append(None)
    return ids, texts


def _as_bytes(text):
    if isinstance(text, str):
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:  # an unpaired surrogate: refused, as by the command
            return None
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    return None


def _valid_id(ident):
    if isinstance(ident, bool) or not isinstance(ident, (str, int, float)):
        return False
    if isinstance(ident, float):
        return math.isfinite(ident)
    if isinstance(ident, str):
        return _as_bytes(ident) is not None
    return True


def _pointers(buf, starts):
    """Addresses of the texts at starts in buf (bytes, or a uint8 array that
    may be a read-only map), as the C calls take them; buf must outlive the
    call."""
    if isinstance(buf, np.ndarray):
        base = buf.ctypes.data if buf.nbytes else 0
    else:
        base = ctypes.cast(ctypes.c_char_p(buf), c_void_p).value or 0
    return np.ascontiguousarray(starts, dtype=np.uintp) + np.uintp(base)


def _buffer(texts):
    """(one bytes buffer, start of each text, byte length of each text)."""
    lens = np.fromiter(map(len, texts), dtype=np.uint64, count=len(texts))
    starts = np.zeros(len(texts), dtype=np.uint64)
    if len(texts) > 1:
        np.cumsum(lens[:-1], out=starts[1:])
    return b"".join(texts), starts, lens


_INT64 = 2 ** 63


def _as_number_id(v):
    """An integral float in int64 range as the int of the same value (the
    same id); anything else as it is."""
    if type(v) is float and v.is_integer() and -_INT64 <= v < _INT64:
        return int(v)
    return v


def _id_tag(v):
    """Which hash an id takes: "int" (int64 range), "float" (not integral),
    "str", or "repr" (the canonical form) for the rest."""
    t = type(v)
    if t is int:
        return "int" if -_INT64 <= v < _INT64 else "repr"
    if t is float:
        return "float" if not v.is_integer() else "repr"
    return "str" if t is str else "repr"


def _id_hashes(ids):
    """Two independent 64-bit hashes of each id as the library compares ids
    (minlsh_dedup_canonical_id: numbers by value, so 1 and 1.0 are one id
    and "1" another): equal ids have equal hashes, and two different ids
    collide with probability about 2^-128. Each kind is hashed with its own
    keys: strings, integers in int64 range (integral floats among them) and
    other floats vectorised, the rest through their canonical form."""
    n = len(ids)
    out = np.zeros((n, 2), dtype=np.uint64)
    if n == 0:
        return out
    kinds = set(map(type, ids))
    if kinds == {str}:
        groups = {"str": np.arange(n)}
    elif kinds == {int}:
        groups = {"int": np.arange(n)}
    else:
        ids = [_as_number_id(v) for v in ids]
        tags = np.array([_id_tag(v) for v in ids], dtype=object)
        groups = {t: np.flatnonzero(tags == t) for t in set(tags.tolist())}
    for tag, rows in groups.items():
        vals = ids if len(rows) == n else [ids[i] for i in rows]
        arr = None
        if tag == "int":
            try:
                arr = np.array(vals, dtype=np.int64)
            except OverflowError:
                arr = None
            if arr is not None and set(map(type, vals)) != {int}:
                arr = None
        elif tag == "float":
            arr = np.array(vals, dtype=np.float64)
        elif tag == "str":
            arr = np.array(vals, dtype=object)
        if arr is None:
            arr = np.array([_id_key(v) for v in vals], dtype=object)
            tag = "repr"
        out[rows, 0] = _hash_strings(arr, ("minlsh-%s-0" % tag)[:16].ljust(16))
        out[rows, 1] = _hash_strings(arr, ("minlsh-%s-1" % tag)[:16].ljust(16))
    return out


def _hash_strings(arr, key):
    """pandas' hash of each value; a str that UTF-8 cannot encode (a lone
    surrogate: an id's \\udcXX escape, a byte that is not UTF-8) is hashed as
    its bytes under surrogateescape. pandas hashes a str as its UTF-8
    bytes, so every other id keeps its hash, and those bytes, not being
    UTF-8, are no other str's."""
    try:
        return pd.util.hash_array(arr, hash_key=key)
    except UnicodeEncodeError:
        raw = np.array([v.encode("utf-8", "surrogateescape") if isinstance(v, str) else v
                        for v in arr], dtype=object)
        return pd.util.hash_array(raw, hash_key=key)


def _usable(ids, texts):
    """(ids, buffer, starts, lengths) of the records with a valid id and
    text (UTF-8 in one buffer). A fast path for the usual partition, whose
    ids are all str or all int and whose texts are all str: one encode of
    the joined texts (when it is ASCII the lengths are the str lengths)."""
    id_kinds = set(map(type, ids))
    if set(map(type, texts)) == {str} and id_kinds in ({str}, {int}):
        try:
            joined = "".join(texts)
            buf = joined.encode("utf-8")
            if id_kinds == {str}:
                "".join(ids).encode("utf-8")  # unpaired surrogates make ids invalid
            if len(buf) == len(joined):
                lens = np.fromiter(map(len, texts), dtype=np.uint64, count=len(texts))
                starts = np.zeros(len(texts), dtype=np.uint64)
                if len(texts) > 1:
                    np.cumsum(lens[:-1], out=starts[1:])
                return list(ids), buf, starts, lens
            return (list(ids),) + _buffer([t.encode("utf-8") for t in texts])
        except UnicodeEncodeError:
            pass
    keep_ids, keep_texts = [], []
    for ident, text in zip(ids, texts):
        t = _as_bytes(text) if _valid_id(ident) else None
        if t is not None:
            keep_ids.append(ident)
            keep_texts.append(t)
    return (keep_ids,) + _buffer(keep_texts)


class _NoGC:
    """The cyclic garbage collector paused: building a partition's many
    small objects (records, ids) otherwise triggers collections that
    traverse every object the worker holds."""

    def __enter__(self):
        import gc
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        import gc
        if self.was:
            gc.enable()


def _sign_buffer(buf, starts, lens, cfg, sigs, fps, counts, status):
    """minlsh_family_sign_texts over the texts, on cfg.threads threads (0:
    one per CPU): each thread signs a contiguous slice (ctypes releases the
    interpreter lock during the call), so the result does not depend on
    the thread count."""
    import os
    m, k = len(starts), cfg.sig_values
    ptrs = _pointers(buf, starts)
    lens_c = np.ascontiguousarray(lens, dtype=np.uintp)
    sh = _shingler(cfg)
    fam = _family(k, cfg.seed, cfg.scheme)

    def run(lo, hi):
        if hi <= lo:
            return 0
        return lib.minlsh_family_sign_texts(
            fam.handle, sh._handle, ptrs[lo:].ctypes.data_as(POINTER(c_void_p)),
            lens_c[lo:].ctypes.data_as(POINTER(c_size_t)), hi - lo, sigs[lo:].ctypes.data,
            (hi - lo) * k, None, fps[lo:].ctypes.data, counts[lo:].ctypes.data,
            status[lo:].ctypes.data, None)

    threads = cfg.threads if cfg.threads > 0 else (os.cpu_count() or 1)
    threads = max(1, min(threads, m // 1024 + 1))
    if threads == 1:
        rcs = [run(0, m)]
    else:
        from concurrent.futures import ThreadPoolExecutor
        bounds = [m * t // threads for t in range(threads + 1)]
        with ThreadPoolExecutor(threads) as pool:
            rcs = list(pool.map(run, bounds[:-1], bounds[1:]))
    for rc in rcs:  # a text over max_document_bytes is its own status, not an error
        if rc < 0 and rc != _ffi.E_TOOBIG:
            raise _ffi.error(rc, "minlsh_family_sign_texts")


def sign(part, cfg, id_field, text_field):
    """Stage 1 of one input partition: the usable records (a valid id and
    text, not over max_document_bytes) with their signatures, fingerprints,
    shingle counts (0: empty) and text lengths, in one C call
    (minlsh_family_sign_texts). The texts stay in one buffer for exact
    verification (signature verification drops it)."""
    with _NoGC():
        got = _block_records(part, id_field, text_field) if isinstance(part, JsonlBlock) else None
        if got is not None:
            n_records, keep_ids, buf, starts, lens = got
        else:
            ids, texts = _records(part, id_field, text_field)
            n_records = len(ids)
            keep_ids, buf, starts, lens = _usable(ids, texts)
            del ids, texts
        m, k = len(keep_ids), cfg.sig_values
        sigs = np.empty((m, k), dtype=np.uint32)
        fps = np.zeros((m, 2), dtype=np.uint64)
        counts = np.zeros(m, dtype=np.uint64)
        status = np.zeros(m, dtype=np.int32)
        if m:
            _sign_buffer(buf, starts, lens, cfg, sigs, fps, counts, status)
        keep_ids = np.array(keep_ids, dtype=object)
        if (status != 0).any():  # over max_document_bytes: refused, as by the command
            sel = np.flatnonzero(status == 0)
            keep_ids, sigs, fps, counts = keep_ids[sel], sigs[sel], fps[sel], counts[sel]
            lens, starts = lens[sel], starts[sel]
        exact = cfg.verify == "exact"
        kept, written = spill.keep(
            {"sig": sigs, "fp": fps, "count": counts, "length": lens,
             "buf": np.frombuffer(buf, dtype=np.uint8) if exact else None,
             "start": starts if exact else None}, cfg.memory, cfg.tmpdir)
        kept.update(records=n_records, ids=keep_ids, idh=_id_hashes(keep_ids.tolist()),
                    temp_bytes=written)
        return kept


def split_rows(dest, nparts, *columns):
    """Rows of each column grouped by destination (0 .. nparts-1): a list of
    nparts tuples of column slices, rows in their original order."""
    # A narrow integer type: numpy's stable sort is then a radix sort.
    dest = dest.astype(np.uint16 if nparts <= 65536 else np.uint32)
    order = np.argsort(dest, kind="stable")
    bounds = np.searchsorted(dest[order], np.arange(nparts + 1))
    cols = [c[order] for c in columns]
    return [tuple(c[bounds[j]:bounds[j + 1]] for c in cols) for j in range(nparts)]


def key_pieces(doc, part_no, nparts):
    """The records of one partition for the shuffle that finds repeated ids
    and exact duplicates at once: for each destination, (id hash0, id
    hash1, row) of every usable record, split by id hash0, and (fp0, fp1,
    row) of the non-empty ones, split by fp0. A row is the partition
    number in the high 32 bits and the record's place in the low: rows
    sort in input order before the documents are numbered."""
    idh, fp = doc["idh"], doc["fp"]
    rows = np.arange(len(idh), dtype=np.int64) | (np.int64(part_no) << np.int64(32))
    ids = split_rows(idh[:, 0] % np.uint64(nparts), nparts, idh[:, 0], idh[:, 1], rows)
    ne = np.flatnonzero(doc["count"] > 0)
    fps = split_rows(fp[ne, 0] % np.uint64(nparts), nparts, fp[ne, 0], fp[ne, 1], rows[ne])
    return [i + f for i, f in zip(ids, fps)]


def _equal_runs(h0, h1, rows):
    """Rows sorted by (h0, h1, row), the first row of each one's run of
    equal (h0, h1), whether it is that first, and the run's number."""
    order = np.lexsort((rows, h1, h0))
    h0, h1, rows = h0[order], h1[order], rows[order]
    start = np.ones(len(rows), dtype=bool)
    start[1:] = (h0[1:] != h0[:-1]) | (h1[1:] != h1[:-1])
    gid = np.cumsum(start) - 1
    return rows, rows[start][gid], start, gid


def key_groups(*pieces):
    """One destination of key_pieces: the rows whose id an earlier row (in
    input order) already has, and the rows of every group of two or more
    equal fingerprints with the first row of their group (repeated ids
    still among them: the client takes those out)."""
    cols = [np.concatenate([p[c] for p in pieces]) for c in range(6)]
    rows, _, start, _ = _equal_runs(*cols[0:3])
    repeated = np.sort(rows[~start])
    frows, first, _, gid = _equal_runs(*cols[3:6])
    keep = np.bincount(gid)[gid] >= 2 if len(gid) else np.zeros(0, dtype=bool)
    return repeated, frows[keep], first[keep]


def number(doc, repeated, offset, cfg):
    """Drop the repeated ids and number the documents densely in input order
    from offset (the command's document numbers)."""
    if len(repeated):
        rows = (repeated & np.int64(0xFFFFFFFF)).astype(np.int64)
        keep = np.ones(len(doc["ids"]), dtype=bool)
        keep[rows] = False
        sel = np.flatnonzero(keep)
        doc = dict(doc)
        doc["ids"], doc["idh"] = doc["ids"][sel], doc["idh"][sel]
        kept, written = spill.keep({c: None if doc[c] is None else doc[c][sel]
                                    for c in ("sig", "fp", "count", "length", "start")},
                                   cfg.memory, cfg.tmpdir)
        doc.update(kept)
        doc["temp_bytes"] += written
    doc = dict(doc)
    doc["first"] = int(offset)
    doc["num"] = np.arange(len(doc["ids"]), dtype=np.int64) + np.int64(offset)
    del doc["idh"]
    return doc


def doc_summary(doc):
    return {"records": doc["records"], "usable": len(doc["ids"])}


def doc_counts(doc):
    """Empty documents of this partition and the bytes its kept arrays
    wrote to temporary files."""
    return int((doc["count"] == 0).sum()), doc["temp_bytes"]


def band_pieces(doc, copies, cfg, nparts):
    """Band records (band, key, number) of the distinct non-empty texts (the
    first of each exact group) of a partition, band keys in one C call
    (minlsh_signatures_band_keys). A bucket lies in one band, so with no
    more partitions than bands whole bands go to a partition (band j to
    j mod nparts: slices, no sort); with more, each band is split by key."""
    num = doc["num"]
    take = doc["count"] > 0
    if len(copies):
        take &= ~np.isin(num, copies, assume_unique=True)
    sel = np.flatnonzero(take)
    # The keys of every row, then the rows taken: a row's keys (8 bytes a
    # band) are far fewer bytes to copy than its signature (4 a value).
    sigs = np.ascontiguousarray(doc["sig"])
    n, b = len(sigs), cfg.bands
    keys = np.empty((n, b), dtype=np.uint64)
    if n:
        rc = lib.minlsh_signatures_band_keys(sigs.ctypes.data, n, cfg.sig_values, b, cfg.rows,
                                             keys.ctypes.data, n * b, None)
        if rc < 0:
            raise _ffi.error(rc, "minlsh_signatures_band_keys")
    nums = num[sel].astype(np.uint64)
    if nparts <= b:
        # A piece is (its bands, their keys band by band, the documents
        # once): 8 bytes a record plus 8 a document, not 20 a record. One
        # gather per piece: the rows taken and the piece's bands.
        out = []
        for j in range(nparts):
            js = np.arange(j, b, nparts, dtype=np.uint32)
            out.append((js, keys.T[np.ix_(js, sel)], nums))  # C order: one copy
        return out
    if len(sel) < n:
        keys = keys[sel]
    n = len(sel)
    keys = keys.reshape(-1)
    bands = np.tile(np.arange(b, dtype=np.uint32), n)
    # band j owns partitions [j*nparts/b, (j+1)*nparts/b), the key picks one
    lo = (np.arange(b, dtype=np.uint64) * np.uint64(nparts)) // np.uint64(b)
    width = ((np.arange(1, b + 1, dtype=np.uint64) * np.uint64(nparts)) // np.uint64(b)) - lo
    dest = lo[bands] + (keys >> np.uint64(17)) % width[bands]
    return split_rows(dest, nparts, bands, keys, np.repeat(nums, b))


def _band_records(pieces):
    """(bands, keys, documents) of the pieces of band_pieces, one entry a
    record, whichever of its two shapes each has, each column written once."""
    total = sum(p[1].size for p in pieces)
    bands = np.empty(total, dtype=np.uint32)
    keys = np.empty(total, dtype=np.uint64)
    docs = np.empty(total, dtype=np.uint64)
    at = 0
    for p in pieces:
        if p[1].ndim == 2:  # whole bands: p[1][i] is band p[0][i]'s, of every document
            n = p[1].shape[1]
            for band, band_keys in zip(p[0], p[1]):
                bands[at:at + n] = band
                keys[at:at + n] = band_keys
                docs[at:at + n] = p[2]
                at += n
        else:
            n = len(p[1])
            bands[at:at + n], keys[at:at + n], docs[at:at + n] = p
            at += n
    return bands, keys, docs


def bucket_pairs(max_bucket, nshards, *pieces):
    """Candidate pairs of one shuffled partition of band records
    (minlsh_buckets_pair: buckets, the max_bucket cap, pairs once), split by
    their first document for the shards that drop repeats across
    partitions; and the capped buckets as (band, key, members) rows."""
    bands, keys, docs = _band_records(pieces)
    n = len(docs)
    # Most records share no bucket: a first guess of far fewer pairs than
    # records spares touching pages that are never written; a short buffer
    # costs one more call with the size the library reports.
    cap = n // 8 + 1024
    got, got_capped = c_size_t(), c_size_t()
    while True:
        a = np.empty(cap, dtype=np.uint64)
        b = np.empty(cap, dtype=np.uint64)
        capped_cap = 3 * max(256, got_capped.value)
        capped = np.empty(capped_cap, dtype=np.uint64)
        rc = lib.minlsh_buckets_pair(bands.ctypes.data, keys.ctypes.data, docs.ctypes.data, n,
                                     int(max_bucket or 0), a.ctypes.data, b.ctypes.data, cap,
                                     ctypes.byref(got), capped.ctypes.data, capped_cap,
                                     ctypes.byref(got_capped), None)
        if rc == _ffi.E_BUFSIZE:
            cap = max(cap, got.value)
            continue
        if rc < 0:
            raise _ffi.error(rc, "minlsh_buckets_pair")
        break
    a, b = a[:got.value].astype(np.int64), b[:got.value].astype(np.int64)
    capped = capped[:3 * got_capped.value].reshape(-1, 3)
    return split_rows(a % nshards, nshards, a, b), capped


def unique_pairs(*pieces):
    """The distinct pairs of one shard (sorted by (a, b)) and the sorted
    numbers of their documents."""
    a = np.concatenate([p[0] for p in pieces])
    b = np.concatenate([p[1] for p in pieces])
    if len(a) == 0:
        e = np.empty(0, dtype=np.int64)
        return e, e, e
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    keep = np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])]
    a, b = a[keep], b[keep]
    return a, b, np.unique(np.concatenate([a, b]))


def shard_docs(shard, bounds):
    """The documents a shard needs, split by the input partition that holds
    them (partition i holds numbers bounds[i] .. bounds[i+1]-1), so each
    partition receives only its own."""
    nums = shard[2]
    owner = np.searchsorted(bounds, nums, side="right") - 1
    return [p[0] for p in split_rows(owner, len(bounds), nums)]


def doc_data(doc, cfg, *wanted):
    """For each verification shard, what it needs of this partition's
    documents: (numbers, signatures, CSR sets offsets, CSR hashes). Sets come
    from one C call (minlsh_shingler_hash_texts) over the texts wanted by
    any shard."""
    num = doc["num"]
    lo, hi = doc["first"], doc["first"] + len(num)
    out = []
    need = [w[(w >= lo) & (w < hi)] for w in wanted]
    every = np.unique(np.concatenate(need)) if need else np.empty(0, dtype=np.int64)
    sets = None
    if cfg.verify == "exact" and len(every):
        rows = every - lo
        sets = _sets_of(doc["buf"], doc["start"][rows], doc["length"][rows], cfg)
    for w in need:
        rows = w - lo
        sig = doc["sig"][rows]
        if cfg.verify != "exact":
            out.append((w, sig, None, None))
            continue
        if sets is None:  # nothing of this partition is wanted
            out.append((w, sig, np.zeros(1, dtype=np.uint64), np.empty(0, dtype=np.uint64)))
            continue
        where = np.searchsorted(every, w)
        offs, hashes = sets
        starts, ends = offs[where], offs[where + 1]
        lens = (ends - starts).astype(np.int64)
        new_offs = np.zeros(len(w) + 1, dtype=np.uint64)
        np.cumsum(lens, out=new_offs[1:])
        idx = _ranges(starts.astype(np.int64), lens)
        out.append((w, sig, new_offs, hashes[idx]))
    return out


def _ranges(starts, lens):
    """Concatenation of arange(s, s + l) for each (s, l), vectorised."""
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    rep = np.repeat(starts - np.r_[0, np.cumsum(lens)[:-1]], lens)
    return np.arange(total, dtype=np.int64) + rep


def _sets_of(buf, starts, lens, cfg):
    """CSR shingle sets of the texts at starts in buf (one call of
    minlsh_shingler_hash_texts; again with the exact size if the first
    guess is short)."""
    n = len(starts)
    ptrs = _pointers(buf, starts)
    lens_c = np.ascontiguousarray(lens, dtype=np.uintp)
    sh = _shingler(cfg)
    offs = np.zeros(n + 1, dtype=np.uint64)
    cap = int(lens_c.sum()) // 2 + n
    got = c_size_t()
    while True:
        hashes = np.empty(max(cap, 1), dtype=np.uint64)
        rc = lib.minlsh_shingler_hash_texts(
            sh._handle, ptrs.ctypes.data_as(POINTER(c_void_p)),
            lens_c.ctypes.data_as(POINTER(c_size_t)), n, offs.ctypes.data, hashes.ctypes.data,
            cap, ctypes.byref(got), None, None)
        if rc == _ffi.E_BUFSIZE:
            cap = got.value
            continue
        if rc < 0:
            raise _ffi.error(rc, "minlsh_shingler_hash_texts")
        break
    return offs, hashes[:got.value]


def verify(shard, cfg, keep_all, *data):
    """Similarity of every pair of a shard: exact Jaccard of the two sets in
    one C call (minlsh_sets_jaccard) or the signature estimate, and the
    signature estimate beside it. Keeps the pairs at or above the threshold
    (all of them with keep_all): (a, b, similarity, estimate)."""
    a, b = shard[0], shard[1]
    if len(a) == 0:
        e = np.empty(0, dtype=np.int64)
        return e, e, np.empty(0), np.empty(0)
    num = np.concatenate([d[0] for d in data])
    order = np.argsort(num, kind="stable")
    num = num[order]
    sig = np.concatenate([d[1] for d in data])[order]
    ia, ib = np.searchsorted(num, a), np.searchsorted(num, b)
    sa, sb = sig[ia], sig[ib]
    if cfg.sig_values == cfg.num_perm:
        estimate = (sa == sb).sum(axis=1) / float(cfg.num_perm)  # as minlsh_signature_estimate
    else:  # cut signatures: no estimate, and none is output
        estimate = np.full(len(a), np.nan)
    if cfg.verify == "exact":
        lens = np.concatenate([np.diff(d[2].astype(np.int64)) for d in data])
        hashes = np.concatenate([d[3] for d in data])
        starts = np.r_[0, np.cumsum(lens)[:-1]].astype(np.int64)
        # Sets in the sorted order of the numbers, one CSR buffer.
        lens_s = lens[order]
        idx = _ranges(starts[order], lens_s)
        hashes = np.ascontiguousarray(hashes[idx], dtype=np.uint64)
        offs = np.zeros(len(num) + 1, dtype=np.uint64)
        np.cumsum(lens_s, out=offs[1:])
        sim = np.empty(len(a), dtype=np.float64)
        ua = np.ascontiguousarray(ia, dtype=np.uint64)
        ub = np.ascontiguousarray(ib, dtype=np.uint64)
        rc = lib.minlsh_sets_jaccard(offs.ctypes.data, hashes.ctypes.data if len(hashes) else None,
                                     len(num), ua.ctypes.data, ub.ctypes.data, len(a),
                                     sim.ctypes.data)
        if rc < 0:
            raise _ffi.error(rc, "minlsh_sets_jaccard")
    else:
        sim = estimate
    keep = np.ones(len(a), dtype=bool) if keep_all else sim >= cfg.threshold
    return a[keep], b[keep], sim[keep], estimate[keep]


def ids_of(doc, wanted):
    """The ids of the wanted document numbers that are in this partition."""
    lo = doc["first"]
    w = wanted[(wanted >= lo) & (wanted < lo + len(doc["num"]))]
    return w, doc["ids"][w - lo]


def lengths_of(doc):
    return doc["length"]


class JsonlBlock(collections.abc.Sequence):
    """A partition of :func:`read_jsonl`: a block of whole JSON Lines, and
    the sequence of its records (a dict, or None for a line that is not
    valid JSON; blank lines skipped), parsed by ``json.loads`` when first
    used. :func:`dedup` reads the block itself with the library's reader
    (minlsh_jsonl_parse_block, the reader of ``minlsh dedup --jsonl``):
    texts into one buffer and ids as tokens, no Python object per record
    but the id. Pickled as its bytes."""

    __slots__ = ("raw", "input_start", "_records")

    def __init__(self, raw, input_start=False):
        self.raw = bytes(raw)
        self.input_start = bool(input_start)
        self._records = None

    def __reduce__(self):
        return (JsonlBlock, (self.raw, self.input_start))

    def records(self):
        if self._records is None:
            raw = self.raw
            if self.input_start and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a byte-order mark, as the command leaves it out
            self._records = parse_jsonl_block(raw)
        return self._records

    def __len__(self):
        return len(self.records())

    def __getitem__(self, i):
        return self.records()[i]

    def __iter__(self):
        return iter(self.records())


def _json_values(raw, offsets, lengths):
    """The JSON tokens raw[offsets[i] .. + lengths[i]) as Python values, in
    one json.loads call: the tokens are gathered, each followed by a comma,
    into one array (numpy indexing, no Python step per token)."""
    n = len(offsets)
    if n == 0:
        return []
    size = lengths.astype(np.int64) + 1
    at = np.zeros(n, dtype=np.int64)
    np.cumsum(size[:-1], out=at[1:])
    # Byte j of the joined array comes from raw[offsets[i] + (j - at[i])].
    src = np.arange(int(at[-1] + size[-1]), dtype=np.int64) + np.repeat(
        offsets.astype(np.int64) - at, size)
    commas = at + size - 1
    src[commas] = 0
    joined = np.frombuffer(raw, dtype=np.uint8)[src]
    joined[commas] = ord(",")
    joined[-1] = ord("]")
    return json.loads(b"[" + joined.tobytes())


def _block_records(block, id_field, text_field):
    """(records, ids, texts buffer, starts, lengths) of the valid records of
    a JsonlBlock, read by the library (the command's reader and rules), or
    None where the field names cannot be given to it."""
    fields = _jsonl.field_names(id_field, text_field)
    if fields is None:
        return None
    raw = block.raw
    b = _jsonl.parse_block(raw, fields, block.input_start,
                           empty=lambda nbytes: np.empty(nbytes, dtype=np.uint8))
    n = b.n
    text_offsets = b.text_offsets.view(np.uint64)
    ok = np.flatnonzero(b.status.view(np.int32)[:n] == 0)
    starts = text_offsets[ok]
    lens = text_offsets[ok + 1] - starts
    ids = _json_values(raw, b.id_offsets.view(np.uint64)[ok], b.id_lengths.view(np.uint64)[ok])
    return n, ids, b.texts[:int(text_offsets[n])], starts, lens


def parse_jsonl_block(block):
    """Records of a block of JSON Lines bytes (whole lines): one json.loads
    call for the block when it has no blank line, else line by line."""
    text = block.decode("utf-8", errors="surrogateescape")
    # A blank or whitespace-only line (which the command skips) either
    # shows here or makes the one-call parse fail: then line by line.
    if text and "\r" not in text and "\n\n" not in text and text[0] != "\n":
        # Every newline a comma, the last line's too (then a null closes
        # the list, and is dropped): one copy of the block, not three.
        tail = text[-1] == "\n"
        try:
            with _NoGC():
                got = json.loads("".join(("[", text.replace("\n", ","), "null]" if tail else "]")))
        except ValueError:
            pass
        else:
            if tail:
                got.pop()
            return got
    return parse_jsonl(text.split("\n"))


def parse_jsonl(lines):
    """Records of a partition of JSON Lines text (a list of lines): one
    json.loads call for the whole partition, line by line only when a line
    is not valid JSON (that record becomes None: not a document, counted
    as the command counts it). Blank lines are skipped, as by the command."""
    lines = [ln for ln in lines if ln.strip()]
    try:
        with _NoGC():
            return json.loads("[" + ",".join(lines) + "]")
    except ValueError:
        out = []
        for ln in lines:
            try:
                out.append(json.loads(ln))
            except ValueError:
                out.append(None)
        return out
