"""minlsh.dask: near-duplicate detection on a Dask cluster.

``dedup(collection, ...)`` runs the pipeline of the ``minlsh dedup`` command
on a Dask bag or dataframe of documents, spread over the workers of a
``distributed`` cluster (or Dask's local schedulers), and gives the same
answer the command gives on one machine for the same parameters: the same
pairs with the same similarities, the same clusters in the same order.

Stages (docs/scale-out.md explains why each is shaped the way it is):

1. **Signatures** per input partition: the threaded batch call
   (``minlsh_family_sign_batch``), the 16-byte fingerprint of every
   document, and a global input-order number ``(partition << 32) | row``.
   Records without a usable id or text, empty documents (no shingle) and
   repeated ids (the first is kept) are dropped, as the command drops them.
2. **Exact duplicates**: a shuffle by fingerprint; each group of identical
   documents (similarity 1.0) is represented by its first member.
3. **Band keys**: one row ``(band, key, n, fingerprint)`` per document and
   band (``minlsh_band_keys``, the interchange format of docs/format.md).
4. **Buckets**: a shuffle by ``(band, key)``; in each bucket the members
   collapse to their exact-duplicate representatives, and every pair of
   representatives is a candidate. A bucket with more than ``max_bucket``
   representatives is left out whole and reported (never silently).
   Candidates found in several bands are counted once.
5. **Verification**: the candidates are joined back to their documents:
   exact Jaccard of the two shingle sets (``verify="exact"``, the texts are
   read again from the input) or the signature estimate
   (``verify="signature"``).
6. **Output**: pairs of representatives expand to their exact-duplicate
   groups (pairs), or connected components of the verified pairs and the
   groups (clusters): union-find on the client (``minlsh_clusters_from_edges``)
   when the edges are few, else iterative minimum-label propagation with
   pointer jumping, in Dask, until no label changes.

For other engines (Spark, SQL): :func:`prepare` runs stage 1 alone,
:func:`band_key_rows` makes the (band, key) table, :func:`band_keys_matrix`
computes band keys of a numpy signature matrix.

The functions run on the workers import this module, so minlsh (the package
and libminlsh) must be installed on every worker host.
"""

import logging
import math
import time
import warnings
from ctypes import POINTER, byref, c_double, c_int, c_size_t, c_uint32, c_void_p

import numpy as np
import pandas as pd

import dask
import dask.bag as db
import dask.dataframe as dd

from . import _ffi
from ._lsh import plan as _plan
from ._minhash import signatures as _signatures
from ._shingle import Shingler

__all__ = ["dedup", "prepare", "band_key_rows", "band_keys_matrix"]

log = logging.getLogger("minlsh.dask")

#: Below this many edges plus exact-duplicate members, ``components="auto"``
#: gathers the graph on the client for union-find; above, it stays in Dask.
LOCAL_COMPONENTS_LIMIT = 2_000_000
#: Up to this many candidate pairs, the numbers of their documents are sent
#: to every task to filter the documents before the verification joins.
SEMIJOIN_LIMIT = 2_000_000
#: Default ``max_bucket``: a bucket of more distinct representatives than
#: this (12.5 million candidate pairs) is left out and reported.
MAX_BUCKET = 5000

_EMPTY = 0xFFFFFFFF
_SHINGLER_OPTIONS = ("lowercase", "strip_punct", "collapse_space", "normalize", "html", "key",
                     "stopwords", "max_document_bytes")


# ---- C functions this module calls that the binding does not wrap ----------------
# Private function pointers (their own argtypes, not shared with the binding's
# declarations of the same symbols).

def _cfunc(name, restype, argtypes):
    fn = _ffi.lib._FuncPtr((name, _ffi.lib))
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


_c_band_keys = _cfunc("minlsh_band_keys", c_int,
                      [c_void_p, c_size_t, c_uint32, c_uint32, c_void_p, c_size_t, c_void_p])
_c_jaccard = _cfunc("minlsh_jaccard_sorted", c_int,
                    [POINTER(c_double), c_void_p, c_size_t, c_void_p, c_size_t])
_c_clusters_from_edges = _cfunc("minlsh_clusters_from_edges", c_int,
                                [POINTER(c_void_p), c_void_p, c_void_p, c_size_t, c_void_p])
_c_clusters_count = _cfunc("minlsh_clusters_count", c_size_t, [c_void_p])
_c_clusters_members = _cfunc("minlsh_clusters_copy_members", c_int,
                             [c_void_p, c_size_t, c_void_p, c_size_t, POINTER(c_size_t)])
_c_clusters_free = _cfunc("minlsh_clusters_free", None, [c_void_p])


def band_keys_matrix(signatures, bands, rows):
    """The band keys of every row of an n x k uint32 signature matrix (e.g.
    :func:`minlsh.signatures`): an n x bands uint64 array, row i being
    ``minlsh.band_keys(signatures[i], bands, rows)`` (one C call per row)."""
    sigs = np.ascontiguousarray(signatures, dtype=np.uint32)
    if sigs.ndim != 2:
        raise ValueError("signatures must be a 2-dimensional array (n x num_perm)")
    n, k = sigs.shape
    bands, rows = int(bands), int(rows)
    if bands < 1 or rows < 1 or bands * rows > k:
        raise _ffi.error(_ffi.E_PARAM, "minlsh_band_keys",
                         "bands=%d rows=%d num_perm=%d" % (bands, rows, k))
    out = np.empty((n, bands), dtype=np.uint64)
    src, dst = sigs.ctypes.data, out.ctypes.data
    for i in range(n):
        rc = _c_band_keys(src + 4 * k * i, k, bands, rows, dst + 8 * bands * i, bands, None)
        if rc < 0:
            raise _ffi.error(rc, "minlsh_band_keys", "row %d" % i)
    return out


def _jaccard(x, y):
    """Exact Jaccard of two sorted uint64 arrays (minlsh_jaccard_sorted: the
    very double the minlsh command computes)."""
    out = c_double()
    rc = _c_jaccard(byref(out), x.ctypes.data if len(x) else None, len(x),
                    y.ctypes.data if len(y) else None, len(y))
    if rc < 0:
        raise _ffi.error(rc, "minlsh_jaccard_sorted")
    return out.value


def _clusters_of_edges(a, b):
    """Connected components of the edges (a[i], b[i]) (uint64 arrays) with
    minlsh_clusters_from_edges: lists of ids, members ascending, groups by
    their smallest member."""
    a = np.ascontiguousarray(a, dtype=np.uint64)
    b = np.ascontiguousarray(b, dtype=np.uint64)
    handle = c_void_p()
    rc = _c_clusters_from_edges(byref(handle), a.ctypes.data if len(a) else None,
                                b.ctypes.data if len(b) else None, len(a), None)
    if rc < 0:
        raise _ffi.error(rc, "minlsh_clusters_from_edges")
    try:
        out = []
        cap = 64
        buf = np.empty(cap, dtype=np.uint64)
        got = c_size_t()
        for i in range(_c_clusters_count(handle)):
            rc = _c_clusters_members(handle, i, buf.ctypes.data, cap, byref(got))
            if rc == _ffi.E_BUFSIZE:
                cap = got.value
                buf = np.empty(cap, dtype=np.uint64)
                rc = _c_clusters_members(handle, i, buf.ctypes.data, cap, byref(got))
            if rc < 0:
                raise _ffi.error(rc, "minlsh_clusters_copy_members")
            out.append(buf[:got.value].astype(np.int64))
        return out
    finally:
        _c_clusters_free(handle)


# ---- configuration ----------------------------------------------------------------

def _banding(threshold, num_perm, verify, bands, rows):
    """(bands, rows, how) exactly as the minlsh command chooses them."""
    if bands is not None or rows is not None:
        b = int(bands) if bands is not None else None
        r = int(rows) if rows is not None else None
        if b is None:
            b = num_perm // r if r > 0 else 0
        if r is None:
            r = num_perm // b if b > 0 else 0
        if b <= 0 or r <= 0 or b * r > num_perm:
            raise ValueError("bands=%r rows=%r do not fit num_perm=%d" % (bands, rows, num_perm))
        return b, r, "manual"
    mode = "recall" if verify == "exact" else "balanced"
    try:
        p = _plan(threshold, num_perm, mode=mode, target_recall=0.99)
    except _ffi.Error as exc:
        raise ValueError("no banding of %d hash values reaches recall 0.99 at threshold %g; "
                         "use a larger num_perm or give bands and rows (%s)"
                         % (num_perm, threshold, exc)) from None
    return p.bands, p.rows, mode


class _Config:
    """Everything the workers need, as plain picklable values."""

    def __init__(self, shingle, shingler_options, num_perm, seed, threads, bands, rows,
                 threshold, verify, max_bucket):
        self.shingle = shingle
        self.shingler_options = tuple(sorted(shingler_options.items()))
        self.num_perm = num_perm
        self.seed = seed
        self.threads = threads
        self.bands = bands
        self.rows = rows
        self.threshold = threshold
        self.verify = verify
        self.max_bucket = max_bucket

    def sig_columns(self, suffix=""):
        return ["s%d%s" % (i, suffix) for i in range(self.num_perm)]


_shinglers = {}


def _shingler(cfg):
    """The worker's Shingler for cfg (one per process: they are immutable)."""
    key = (cfg.shingle, cfg.shingler_options)
    sh = _shinglers.get(key)
    if sh is None:
        sh = Shingler.from_spec(cfg.shingle, **dict(cfg.shingler_options))
        _shinglers[key] = sh
    return sh


def _id_key(v):
    """Ids are compared with their type, as the command compares ids as
    written: 1 and 1.0 and "1" are three different ids."""
    return "%s:%r" % (type(v).__name__, v)


# ---- stage 0: the input as a dataframe (id, text) ------------------------------------

def _empty_input():
    return pd.DataFrame({"id": pd.Series([], dtype=object), "text": pd.Series([], dtype=object)})


def _records_to_frame(records, id_field, text_field):
    ids, texts = [], []
    for r in records:
        if isinstance(r, dict):
            ids.append(r.get(id_field))
            texts.append(r.get(text_field))
        elif isinstance(r, (tuple, list)) and len(r) == 2:
            ids.append(r[0])
            texts.append(r[1])
        else:
            ids.append(None)
            texts.append(None)
    return pd.DataFrame({"id": pd.Series(ids, dtype=object),
                         "text": pd.Series(texts, dtype=object)})


def _as_frame(collection, id_field, text_field):
    if isinstance(collection, db.Bag):
        parts = collection.map_partitions(_records_to_frame, id_field, text_field).to_delayed()
        return dd.from_delayed(parts, meta=_empty_input(), verify_meta=False)
    if isinstance(collection, pd.DataFrame):
        collection = dd.from_pandas(collection, npartitions=1, sort=False)
    if isinstance(collection, dd.DataFrame):
        missing = [c for c in (id_field, text_field) if c not in collection.columns]
        if missing:
            raise KeyError("the dataframe has no column %s" % ", ".join(map(repr, missing)))
        return collection.map_partitions(
            lambda p: pd.DataFrame({"id": p[id_field].astype(object).values,
                                    "text": p[text_field].astype(object).values}),
            meta=_empty_input())
    raise TypeError("collection must be a dask bag of records ({id: ..., text: ...} or "
                    "(id, text)) or a dask/pandas dataframe, not %s" % type(collection).__name__)


def _as_bytes(text):
    """The text's bytes, or None when the record cannot be a document: not
    text, or a str with an unpaired surrogate (which the command refuses in
    JSON Lines input)."""
    if isinstance(text, str):
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    return None


def _valid_id(ident):
    """A string (valid Unicode) or a finite number, as the command accepts."""
    if isinstance(ident, bool) or not isinstance(ident, (str, int, float)):
        return False
    if isinstance(ident, float):
        return math.isfinite(ident)
    if isinstance(ident, str):
        return _as_bytes(ident) is not None
    return True


def _numbers(partition_info, length):
    part = partition_info["number"] if partition_info else 0
    return (np.int64(part) << np.int64(32)) + np.arange(length, dtype=np.int64)


# ---- stage 1: signatures and fingerprints ----------------------------------------------

STATUS_OK, STATUS_BAD, STATUS_EMPTY = 0, 1, 2


def _docs_meta(cfg):
    cols = {"_n": pd.Series([], dtype=np.int64), "id": pd.Series([], dtype=object),
            "fp0": pd.Series([], dtype=np.int64), "fp1": pd.Series([], dtype=np.int64),
            "status": pd.Series([], dtype=np.int8)}
    for c in cfg.sig_columns():
        cols[c] = pd.Series([], dtype=np.uint32)
    return pd.DataFrame(cols)


def _sign_partition(pdf, cfg, partition_info=None):
    n = len(pdf)
    nums = _numbers(partition_info, n)
    ids = pdf["id"].tolist()
    texts = pdf["text"].tolist()
    sh = _shingler(cfg)
    ok, data, raw = [], [], []
    for i in range(n):
        t = _as_bytes(texts[i]) if _valid_id(ids[i]) else None
        if t is None:
            continue
        try:
            fp = sh.fingerprint(t)
        except _ffi.Error:  # e.g. over max_document_bytes: refused, as by the command
            continue
        ok.append(i)
        data.append(t)
        raw.append(fp)
    k = cfg.num_perm
    sigs = np.full((n, k), _EMPTY, dtype=np.uint32)
    fps = np.zeros((n, 2), dtype=np.int64)
    status = np.full(n, STATUS_BAD, dtype=np.int8)
    if ok:
        s = _signatures(data, num_perm=k, seed=cfg.seed, shingler=sh, threads=cfg.threads,
                        errors="empty")
        sigs[ok] = s
        fps[ok] = np.frombuffer(b"".join(raw), dtype="<i8").reshape(len(ok), 2)
        empty = (s == _EMPTY).all(axis=1)
        status[ok] = np.where(empty, STATUS_EMPTY, STATUS_OK)
    out = pd.DataFrame({"_n": nums, "id": pd.Series(ids, dtype=object),
                        "fp0": fps[:, 0], "fp1": fps[:, 1], "status": status})
    sig_df = pd.DataFrame(sigs, columns=cfg.sig_columns())
    return pd.concat([out, sig_df], axis=1)


def _texts_partition(pdf, partition_info=None):
    """(n, text bytes) of the input again (exact verification reads it twice
    rather than keeping every text in worker memory)."""
    nums = _numbers(partition_info, len(pdf))
    texts = [_as_bytes(t) or b"" for t in pdf["text"].tolist()]
    return pd.DataFrame({"_n": nums, "text": pd.Series(texts, dtype=object)})


# ---- repeated ids ---------------------------------------------------------------

def _id_keys(p):
    return pd.DataFrame({"_n": p["_n"].values,
                         "k": pd.Series([_id_key(v) for v in p["id"].tolist()], dtype=object)})


def _repeated(p):
    p = p.sort_values("_n", kind="mergesort")
    return p.loc[p.duplicated("k"), ["_n"]]


def _drop_numbers(p, numbers):
    return p[~p["_n"].isin(numbers)]


# ---- stage 2: exact-duplicate groups ---------------------------------------------------

def _groups_meta():
    return pd.DataFrame({"rep": pd.Series([], dtype=np.int64), "_n": pd.Series([], dtype=np.int64),
                         "id": pd.Series([], dtype=object)})


def _dup_groups(p):
    """Members of the groups of two or more equal fingerprints, with their
    representative (the first member in input order)."""
    if len(p) == 0:
        return _groups_meta()
    p = p.sort_values(["fp0", "fp1", "_n"], kind="mergesort")
    g = p.groupby(["fp0", "fp1"], sort=False)["_n"]
    size = g.transform("size")
    rep = g.transform("min")
    keep = size.values >= 2
    return pd.DataFrame({"rep": rep.values[keep].astype(np.int64),
                         "_n": p["_n"].values[keep], "id": p["id"].values[keep]})


def _group_pairs(p, with_estimate):
    """Every pair inside each exact-duplicate group: similarity 1.0."""
    ra, rb, ia, ib = [], [], [], []
    if len(p):
        p = p.sort_values(["rep", "_n"], kind="mergesort")
        reps, ns, ids = p["rep"].values, p["_n"].values, p["id"].values
        starts = np.flatnonzero(np.r_[True, reps[1:] != reps[:-1]])
        ends = np.r_[starts[1:], len(reps)]
        for s, e in zip(starts, ends):
            i, j = _triu(e - s)
            ra.append(ns[s + i])
            rb.append(ns[s + j])
            ia.append(ids[s + i])
            ib.append(ids[s + j])
    return _pairs_frame(ra, rb, ia, ib, None, None, with_estimate, fill=1.0)


def _pairs_frame(ra, rb, ia, ib, sim, est, with_estimate, fill=None):
    cat = (lambda v, dt: np.concatenate(v).astype(dt) if v else np.empty(0, dtype=dt))
    a, b = cat(ra, np.int64), cat(rb, np.int64)
    out = pd.DataFrame({"a_n": a, "b_n": b,
                        "a": pd.Series(cat(ia, object), dtype=object),
                        "b": pd.Series(cat(ib, object), dtype=object)})
    out["similarity"] = np.full(len(a), fill) if fill is not None else cat(sim, np.float64)
    if with_estimate:
        out["estimate"] = np.full(len(a), fill) if fill is not None else cat(est, np.float64)
    return out


def _output_pairs_meta(with_estimate):
    return _pairs_frame([], [], [], [], [], [], with_estimate)


# ---- stage 3 and 4: band rows, buckets, candidates -----------------------------------------

def _rows_meta():
    return pd.DataFrame({"band": pd.Series([], dtype=np.int32),
                         "key": pd.Series([], dtype=np.int64),
                         "_n": pd.Series([], dtype=np.int64),
                         "fp0": pd.Series([], dtype=np.int64),
                         "fp1": pd.Series([], dtype=np.int64)})


def _band_rows(p, cfg):
    n = len(p)
    b = cfg.bands
    if n == 0:
        return _rows_meta()
    sigs = p[cfg.sig_columns()].to_numpy(dtype=np.uint32)
    keys = band_keys_matrix(sigs, b, cfg.rows).view(np.int64)  # n x b
    return pd.DataFrame({"band": np.tile(np.arange(b, dtype=np.int32), n),
                         "key": keys.reshape(-1),
                         "_n": np.repeat(p["_n"].values, b),
                         "fp0": np.repeat(p["fp0"].values, b),
                         "fp1": np.repeat(p["fp1"].values, b)})


def _cand_meta():
    return pd.DataFrame({"a": pd.Series([], dtype=np.int64), "b": pd.Series([], dtype=np.int64),
                         "band": pd.Series([], dtype=np.int32),
                         "key": pd.Series([], dtype=np.int64)})


def _bucket_pairs(p, max_bucket):
    """Candidate pairs of one shuffled partition of band rows: per (band, key)
    bucket, the distinct exact-duplicate representatives (members with equal
    fingerprints all sit in the same buckets, so the smallest number among
    them here is their global representative), and every pair of them. A
    bucket of more than max_bucket representatives gives one row with
    a = -1, b = its size: it is reported, not expanded."""
    if len(p) < 2:
        return _cand_meta()
    p = p.sort_values(["band", "key", "fp0", "fp1", "_n"], kind="mergesort")
    p = p.drop_duplicates(["band", "key", "fp0", "fp1"], keep="first")
    band, key, num = p["band"].values, p["key"].values, p["_n"].values
    start = np.r_[True, (band[1:] != band[:-1]) | (key[1:] != key[:-1])]
    starts = np.flatnonzero(start)
    ends = np.r_[starts[1:], len(band)]
    sizes = ends - starts
    out_a, out_b, out_band, out_key = [], [], [], []
    two = starts[sizes == 2]  # most multi-member buckets: one pair, vectorised
    if len(two):
        x, y = num[two], num[two + 1]
        out_a.append(np.minimum(x, y))
        out_b.append(np.maximum(x, y))
        out_band.append(band[two])
        out_key.append(key[two])
    for m in np.flatnonzero(sizes > 2):
        s, e = starts[m], ends[m]
        size = e - s
        if max_bucket is not None and size > max_bucket:
            out_a.append(np.array([-1], dtype=np.int64))
            out_b.append(np.array([size], dtype=np.int64))
            out_band.append(band[s:s + 1])
            out_key.append(key[s:s + 1])
            continue
        members = np.sort(num[s:e])
        i, j = _triu(size)
        out_a.append(members[i])
        out_b.append(members[j])
        out_band.append(np.full(len(i), band[s], dtype=np.int32))
        out_key.append(np.full(len(i), key[s], dtype=np.int64))
    if not out_a:
        return _cand_meta()
    return pd.DataFrame({"a": np.concatenate(out_a), "b": np.concatenate(out_b),
                         "band": np.concatenate(out_band).astype(np.int32),
                         "key": np.concatenate(out_key).astype(np.int64)})


_triu_cache = {}


def _triu(m):
    """The (i, j), i < j, index pairs of m items (cached for small m)."""
    got = _triu_cache.get(m)
    if got is None:
        got = np.triu_indices(m, 1)
        if m <= 64:
            _triu_cache[m] = got
    return got


def _unique_pairs(p):
    return p.drop_duplicates(["a", "b"])[["a", "b"]]


# ---- stage 5: verification --------------------------------------------------------------

def _lookup_meta(exact):
    m = {"_n": pd.Series([], dtype=np.int64), "id": pd.Series([], dtype=object),
         "sig": pd.Series([], dtype=object)}
    if exact:
        m["text"] = pd.Series([], dtype=object)
    return pd.DataFrame(m)


def _lookup(docs, cfg, numbers=None, texts=None):
    """One row per document (only those in numbers, if given) for the
    verification joins: number, id, the signature packed into one bytes
    value (a narrow frame moves through a shuffle much faster than 4k
    columns), and with texts (partition i of the input again, the same
    numbers as partition i of docs) the text."""
    if numbers is not None:
        docs = docs[docs["_n"].isin(numbers)]
    sigs = np.ascontiguousarray(docs[cfg.sig_columns()].to_numpy(dtype=np.uint32))
    row = 4 * cfg.num_perm
    raw = sigs.tobytes()
    out = pd.DataFrame({"_n": docs["_n"].values, "id": docs["id"].values,
                        "sig": pd.Series([raw[i * row:(i + 1) * row] for i in range(len(docs))],
                                         dtype=object)})
    if texts is None:
        return out
    if numbers is not None:
        texts = texts[texts["_n"].isin(numbers)]
    return out.merge(texts, on="_n", how="inner")


def _lookup_texts(texts, docs, cfg, numbers=None):
    return _lookup(docs, cfg, numbers, texts)


def _unpack(column, k):
    return np.frombuffer(b"".join(column.tolist()), dtype="<u4").reshape(-1, k)


def _verified_meta():
    return pd.DataFrame({"a": pd.Series([], dtype=np.int64), "b": pd.Series([], dtype=np.int64),
                         "ida": pd.Series([], dtype=object), "idb": pd.Series([], dtype=object),
                         "similarity": pd.Series([], dtype=np.float64),
                         "estimate": pd.Series([], dtype=np.float64)})


def _verify(p, cfg):
    """Similarity of each candidate pair; only the pairs at or above the
    threshold are kept."""
    if len(p) == 0:
        return _verified_meta()
    k = cfg.num_perm
    sa = _unpack(p["sig_a"], k)
    sb = _unpack(p["sig_b"], k)
    estimate = (sa == sb).sum(axis=1) / float(k)  # as minlsh_signature_estimate
    if cfg.verify == "exact":
        sh = _shingler(cfg)
        cache = {}

        def sets(num, text):
            s = cache.get(num)
            if s is None:
                s = np.ascontiguousarray(sh.shingles(text), dtype=np.uint64)
                cache[num] = s
            return s

        sim = np.array([_jaccard(sets(x, tx), sets(y, ty)) for x, tx, y, ty in
                        zip(p["a"].tolist(), p["text_a"].tolist(), p["b"].tolist(),
                            p["text_b"].tolist())], dtype=np.float64)
    else:
        sim = estimate
    keep = sim >= cfg.threshold
    return pd.DataFrame({"a": p["a"].values[keep], "b": p["b"].values[keep],
                         "ida": p["id_a"].values[keep], "idb": p["id_b"].values[keep],
                         "similarity": sim[keep], "estimate": estimate[keep]})


# ---- stage 6: pairs -------------------------------------------------------------------

def _expand(v, g, side):
    """Replace the representative in column `side` of the verified pairs v
    by every member of its group (g: rep, _n, id of this partition's
    groups); representatives without a group stand for themselves."""
    col, idcol = side, "id" + side
    has = v[col].isin(g["rep"])
    alone = v[~has].copy()
    alone["x_" + side] = alone[col].values
    alone["xid_" + side] = alone[idcol].values
    grouped = v[has].merge(g.rename(columns={"rep": col, "_n": "x_" + side,
                                             "id": "xid_" + side}), on=col, how="inner")
    return pd.concat([alone, grouped], ignore_index=True)


def _finish_pairs(v, with_estimate):
    """(x_a, x_b) to (a_n, b_n) in input order, with their ids."""
    xa, xb = v["x_a"].values.astype(np.int64), v["x_b"].values.astype(np.int64)
    ia, ib = v["xid_a"].values, v["xid_b"].values
    swap = xa > xb
    out = pd.DataFrame({"a_n": np.where(swap, xb, xa), "b_n": np.where(swap, xa, xb),
                        "a": pd.Series(np.where(swap, ib, ia), dtype=object),
                        "b": pd.Series(np.where(swap, ia, ib), dtype=object),
                        "similarity": v["similarity"].values.astype(np.float64)})
    if with_estimate:
        out["estimate"] = v["estimate"].values.astype(np.float64)
    return out


def _copartitioned(left, lcol, right, rcol, func, meta, npartitions, *args):
    """func(left_part, right_part, *args) on hash-co-partitioned frames."""
    left = left.shuffle(lcol, npartitions=npartitions)
    right = right.shuffle(rcol, npartitions=npartitions)
    return dd.map_partitions(func, left, right, *args, meta=meta, align_dataframes=False)


def _sort_pairs(p, **_):
    return p.sort_values(["a_n", "b_n"], kind="mergesort")


# ---- stage 6: clusters -------------------------------------------------------------------

def _clusters_meta():
    return pd.DataFrame({"cluster": pd.Series([], dtype=np.int64),
                         "size": pd.Series([], dtype=np.int64),
                         "members": pd.Series([], dtype=object)})


def _clusters_local(edges_a, edges_b, ids_of):
    comps = _clusters_of_edges(edges_a, edges_b)
    return pd.DataFrame({"cluster": np.arange(1, len(comps) + 1, dtype=np.int64),
                         "size": np.array([len(c) for c in comps], dtype=np.int64),
                         "members": pd.Series([[ids_of[int(x)] for x in c] for c in comps],
                                              dtype=object)})


def _hook(p):
    """Every node's parent: the smallest of itself and its neighbours."""
    m = np.minimum(p["dst"].values, p["src"].values)
    return pd.DataFrame({"node": p["src"].values, "parent": m})


def _relabel(labels, parents):
    """label <- parent(label) where the label has a parent (hash-co-partitioned:
    labels by label, parents by node)."""
    lab = labels["label"].values
    if len(parents) == 0 or len(lab) == 0:
        return labels
    mapping = pd.Series(parents["parent"].values, index=parents["node"].values)
    hit = pd.Index(mapping.index).get_indexer(lab)
    new = np.where(hit >= 0, mapping.values[np.maximum(hit, 0)], lab)
    return pd.DataFrame({"node": labels["node"].values, "label": new.astype(np.int64)})


def _relabel_local(labels, mapping):
    return _relabel(labels, mapping)


def _contract(p):
    """Edges between distinct parents, each once, smaller end first."""
    x, y = p["pa"].values, p["pb"].values
    keep = x != y
    x, y = x[keep], y[keep]
    out = pd.DataFrame({"a": np.minimum(x, y), "b": np.maximum(x, y)})
    return out.drop_duplicates()


def _components_dask(edges, npartitions, local_limit=0):
    """Connected components of an edge list (columns a, b) in Dask, by
    hooking and contraction: each round, every node hooks to the smallest
    of itself and its neighbours (a forest whose roots are local minima),
    pointer jumping (parent <- parent of parent, repeated until nothing
    changes) takes every node to its root, the roots become every label
    that pointed into their trees, and the edges are rewritten between
    roots (self-loops and repeats dropped). A path of n randomly numbered
    nodes shrinks to about a third per round, so rounds grow like log n.
    Once at most local_limit edges are left, the rest is solved on the
    client by union-find. Labels end as the smallest node of each
    component. Returns (labels: node, label; rounds)."""
    meta_l = {"node": np.int64, "label": np.int64}
    e = edges[edges["a"] != edges["b"]]
    nodes = dd.concat([e[["a"]].rename(columns={"a": "node"}),
                       e[["b"]].rename(columns={"b": "node"})])
    labels = nodes.drop_duplicates(split_out=npartitions)
    labels = labels.assign(label=labels["node"])
    labels, e = dask.persist(labels, e)
    rounds = 0
    while True:
        n_edges = int(e.shape[0].compute())
        if n_edges == 0:
            return labels, rounds
        if n_edges <= local_limit:
            small = e.compute()
            comps = _clusters_of_edges(small["a"].values, small["b"].values)
            root = np.concatenate(comps) if comps else np.empty(0, dtype=np.int64)
            low = np.concatenate([np.full(len(c), c[0]) for c in comps]) if comps else root
            mapping = pd.DataFrame({"node": root.astype(np.int64), "parent": low.astype(np.int64)})
            labels = labels.map_partitions(_relabel_local, dask.delayed(mapping), meta=meta_l)
            return labels, rounds
        rounds += 1
        both = dd.concat([e.rename(columns={"a": "src", "b": "dst"}),
                          e.rename(columns={"b": "src", "a": "dst"})])
        parents = both.map_partitions(_hook, meta={"node": np.int64, "parent": np.int64})
        parents = parents.groupby("node", sort=False)["parent"].min(
            split_out=npartitions).reset_index()
        parents, = dask.persist(parents)
        while True:  # pointer jumping
            up = parents.merge(parents.rename(columns={"node": "parent", "parent": "grand"}),
                               on="parent", npartitions=npartitions)
            changed = (up["grand"] != up["parent"]).sum()
            parents = up[["node", "grand"]].rename(columns={"grand": "parent"})
            parents, changed = dask.persist(parents, changed)
            if int(changed.compute()) == 0:
                break
        labels = _copartitioned(labels, "label", parents, "node", _relabel, meta_l,
                                npartitions)
        ea = e.merge(parents.rename(columns={"node": "a", "parent": "pa"}), on="a",
                     npartitions=npartitions)
        eb = ea.merge(parents.rename(columns={"node": "b", "parent": "pb"}), on="b",
                      npartitions=npartitions)
        e = eb[["pa", "pb"]].map_partitions(_contract, meta={"a": np.int64, "b": np.int64})
        e = e.shuffle(["a", "b"], npartitions=npartitions).map_partitions(
            lambda p: p.drop_duplicates(), meta={"a": np.int64, "b": np.int64})
        labels, e = dask.persist(labels, e)
        log.debug("components round %d: %d edges before", rounds, n_edges)


def _cluster_rows(p):
    """Rows (label, size, members) of the components in this partition
    (shuffled by label), members in input order."""
    if len(p) == 0:
        return pd.DataFrame({"label": pd.Series([], dtype=np.int64),
                             "size": pd.Series([], dtype=np.int64),
                             "members": pd.Series([], dtype=object)})
    p = p.sort_values(["label", "node"], kind="mergesort")
    lab, ids = p["label"].values, p["id"].values
    starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
    ends = np.r_[starts[1:], len(lab)]
    return pd.DataFrame({"label": lab[starts].astype(np.int64),
                         "size": (ends - starts).astype(np.int64),
                         "members": pd.Series([list(ids[s:e]) for s, e in zip(starts, ends)],
                                              dtype=object)})


def _number_clusters(p, offsets, partition_info=None):
    i = partition_info["number"] if partition_info else 0
    p = p.sort_values("label", kind="mergesort")
    return pd.DataFrame({"cluster": offsets[i] + 1 + np.arange(len(p), dtype=np.int64),
                         "size": p["size"].values,
                         "members": p["members"].values})


# ---- the pipeline -----------------------------------------------------------------------------

def prepare(collection, id="id", text="text", num_perm=128, seed=1, shingle="word:5",
            threads=1, **shingler_options):
    """Stage 1 alone, for other engines: a lazy Dask dataframe with one row
    per input record: ``_n`` (the input-order number), ``id``, the 128-bit
    fingerprint as ``fp0``, ``fp1`` (int64), ``status`` (0 usable, 1 no
    usable id or text, 2 empty document) and the signature as columns
    ``s0`` .. ``s{num_perm-1}`` (uint32). :func:`band_keys_matrix` turns the
    signature columns into band keys."""
    cfg = _config(shingle, shingler_options, num_perm, seed, threads, 1, 1, 0.5, "signature",
                  None)
    frame = _as_frame(collection, id, text)
    return frame.map_partitions(_sign_partition, cfg, meta=_docs_meta(cfg))


def _key_rows(p, bands, rows, sig_cols):
    if len(p) == 0:
        return _key_rows_meta()
    sigs = p[sig_cols].to_numpy(dtype=np.uint32)
    keys = band_keys_matrix(sigs, bands, rows).view(np.int64)
    n = len(p)
    return pd.DataFrame({"_n": np.repeat(p["_n"].values, bands),
                         "id": pd.Series(np.repeat(p["id"].values, bands), dtype=object),
                         "band": np.tile(np.arange(bands, dtype=np.int32), n),
                         "key": keys.reshape(-1),
                         "fp0": np.repeat(p["fp0"].values, bands),
                         "fp1": np.repeat(p["fp1"].values, bands)})


def _key_rows_meta():
    return pd.DataFrame({"_n": pd.Series([], dtype=np.int64), "id": pd.Series([], dtype=object),
                         "band": pd.Series([], dtype=np.int32),
                         "key": pd.Series([], dtype=np.int64),
                         "fp0": pd.Series([], dtype=np.int64),
                         "fp1": pd.Series([], dtype=np.int64)})


def band_key_rows(prepared, bands, rows):
    """The (band, key) table other engines group by: one row per usable
    document of :func:`prepare`'s frame (status 0) and band, with columns
    ``_n``, ``id``, ``band`` (0 .. bands-1), ``key`` and the fingerprint
    ``fp0``, ``fp1``. ``key`` is the 64-bit band key of docs/format.md
    stored as a signed int64 (the same 8 bytes; SQL engines call it
    BIGINT): grouping needs only equality. Write it out with
    ``to_parquet`` for Spark or DuckDB (docs/scale-out.md has the SQL)."""
    sig_cols = [c for c in prepared.columns if c.startswith("s") and c[1:].isdigit()]
    ok = prepared[prepared["status"] == STATUS_OK]
    return ok.map_partitions(_key_rows, int(bands), int(rows), sig_cols, meta=_key_rows_meta())


def _config(shingle, shingler_options, num_perm, seed, threads, bands, rows, threshold, verify,
            max_bucket):
    unknown = set(shingler_options) - set(_SHINGLER_OPTIONS)
    if unknown:
        raise TypeError("unknown option%s: %s" % ("s" if len(unknown) > 1 else "",
                                                  ", ".join(sorted(unknown))))
    opts = dict(shingler_options)
    if isinstance(opts.get("stopwords"), (list, tuple)):
        opts["stopwords"] = " ".join(opts["stopwords"])
    Shingler.from_spec(shingle, **opts)  # refuse bad options here, not on the workers
    if isinstance(num_perm, bool) or not isinstance(num_perm, int) \
            or not 1 <= num_perm <= _ffi.FAMILY_K_MAX:
        raise ValueError("num_perm must be 1..%d" % _ffi.FAMILY_K_MAX)
    return _Config(shingle, opts, num_perm, _ffi.as_u64(seed, "seed"), int(threads), bands,
                   rows, threshold, verify, max_bucket)


def dedup(collection, id="id", text="text", threshold=0.8, num_perm=128, seed=1,
          shingle="word:5", verify="exact", output="pairs", bands=None, rows=None, threads=1,
          max_bucket=MAX_BUCKET, components="auto", npartitions=None, stats=None,
          **shingler_options):
    """Near-duplicates of a Dask collection of documents, as ``minlsh dedup``
    finds them on one machine.

    ``collection``: a Dask bag of records (dicts with fields ``id`` and
    ``text``, or ``(id, text)`` tuples; e.g. ``dask.bag.read_text(...).map(
    json.loads)``), or a Dask (or pandas) dataframe with those columns.
    ``id`` and ``text`` name the fields. Ids are strings or numbers, kept as
    given; texts are str (UTF-8) or bytes. Records without a usable id or
    text, empty documents (no shingle) and repeated ids (the first in input
    order is kept) are dropped, as the command drops them, and counted in
    ``stats``. Input order is partition order, then order inside a partition.

    Parameters as the command's options: ``threshold`` (Jaccard, 0..1),
    ``num_perm`` (signature length), ``seed`` (MinHash family), ``shingle``
    (``"word:5"``, ``"char:N"``, ``"codepoint:N"``, ``"stopword[:N]"``) with
    the shingler options ``lowercase``, ``strip_punct``, ``collapse_space``,
    ``normalize``, ``html``, ``key`` (16 bytes), ``stopwords``,
    ``max_document_bytes``; ``verify`` ``"exact"`` (exact Jaccard of the
    shingle sets; the texts are read from the collection a second time) or
    ``"signature"`` (the MinHash estimate); ``bands``/``rows`` (default:
    planned as the command plans: recall 0.99 at the threshold for exact
    verification, balanced for signature). ``threads``: signing threads per
    task (1 suits one-thread workers).

    ``max_bucket``: a (band, key) bucket with more distinct documents
    (exact duplicates count once) is left out whole, listed in
    ``stats["capped_buckets"]`` and warned about; pairs of its members may
    still be found through other bands. ``None``: no cap, like the command
    (whose result this then always equals).

    ``output="pairs"``: a Dask dataframe with columns ``a``, ``b``,
    ``similarity`` and, with exact verification, ``estimate``: every pair of
    documents at or above the threshold, a before b in input order, sorted
    by (a, b) in input order; exact duplicates have similarity 1.0.
    ``output="clusters"``: columns ``cluster`` (1, 2, ...), ``size`` and
    ``members`` (a list of ids in input order): the connected components of
    the pairs, numbered in the order of their first member.

    ``components``: ``"local"`` (gather the edges on the client and use
    union-find, minlsh_clusters_from_edges), ``"dask"`` (minimum-label
    propagation in Dask), or ``"auto"`` (local below
    LOCAL_COMPONENTS_LIMIT edges plus exact-duplicate members).

    The work up to the verified pairs runs when dedup is called (persisted on
    the cluster; intermediate counts are needed to choose the strategy); the
    returned dataframe's last steps run when it is computed. ``stats``, if a
    dict, receives the counts of every stage and their times.
    """
    t0 = time.monotonic()
    if verify not in ("exact", "signature"):
        raise ValueError("verify must be 'exact' or 'signature'")
    if output not in ("pairs", "clusters"):
        raise ValueError("output must be 'pairs' or 'clusters'")
    if components not in ("auto", "local", "dask"):
        raise ValueError("components must be 'auto', 'local' or 'dask'")
    if not 0.0 < float(threshold) < 1.0:
        raise ValueError("threshold must be in (0, 1)")
    if max_bucket is not None and int(max_bucket) < 2:
        raise ValueError("max_bucket must be at least 2 (or None)")
    threshold = float(threshold)
    b, r, how = _banding(threshold, num_perm, verify, bands, rows)
    cfg = _config(shingle, shingler_options, num_perm, seed, threads, b, r, threshold, verify,
                  None if max_bucket is None else int(max_bucket))
    st = stats if isinstance(stats, dict) else {}
    st.update(bands=b, rows=r, plan=how, num_perm=num_perm, threshold=threshold, verify=verify)
    times = st.setdefault("seconds", {})
    exact = verify == "exact"

    # 1. signatures, fingerprints; drop what the command drops
    frame = _as_frame(collection, id, text)
    nparts = int(npartitions or frame.npartitions)
    signed = frame.map_partitions(_sign_partition, cfg, meta=_docs_meta(cfg))
    signed, = dask.persist(signed)
    counts = signed["status"].value_counts().compute()
    st["records"] = int(counts.sum())
    st["bad_records"] = int(counts.get(STATUS_BAD, 0))
    st["empty_documents"] = int(counts.get(STATUS_EMPTY, 0))
    docs = signed[signed["status"] == STATUS_OK]
    keys = docs[["_n", "id"]].map_partitions(
        _id_keys, meta={"_n": np.int64, "k": object}).shuffle("k", npartitions=nparts)
    repeated = keys.map_partitions(_repeated, meta={"_n": np.int64})["_n"].compute().values
    st["repeated_ids"] = int(len(repeated))
    if len(repeated):
        warnings.warn("minlsh.dask.dedup: %d records repeat an earlier id and were dropped"
                      % len(repeated), stacklevel=2)
        docs = docs.map_partitions(_drop_numbers, dask.delayed(np.sort(repeated)),
                                   meta=docs._meta)
    docs, = dask.persist(docs)
    del signed
    st["documents"] = int(docs.shape[0].compute())
    times["signatures"] = time.monotonic() - t0

    # 2. exact duplicates
    t = time.monotonic()
    groups = docs[["_n", "id", "fp0", "fp1"]].shuffle(["fp0", "fp1"], npartitions=nparts)
    groups = groups.map_partitions(_dup_groups, meta=_groups_meta())
    groups, = dask.persist(groups)
    n_members, n_groups = dask.compute(groups.shape[0],
                                       (groups["rep"] == groups["_n"]).sum())
    st["exact_duplicate_groups"] = int(n_groups)
    st["exact_duplicate_members"] = int(n_members)
    times["exact_duplicates"] = time.monotonic() - t

    # 3, 4. band rows, buckets, candidates
    t = time.monotonic()
    band_rows = docs.map_partitions(_band_rows, cfg, meta=_rows_meta())
    bucketed = band_rows.shuffle(["band", "key"], npartitions=nparts)
    found = bucketed.map_partitions(_bucket_pairs, cfg.max_bucket, meta=_cand_meta())
    found, = dask.persist(found)
    capped = found[found["a"] < 0].compute()
    cand = found[found["a"] >= 0][["a", "b"]].shuffle("a", npartitions=nparts)
    cand = cand.map_partitions(_unique_pairs, meta={"a": np.int64, "b": np.int64})
    cand, = dask.persist(cand)
    st["candidates"] = int(cand.shape[0].compute())
    st["capped_buckets"] = [
        {"band": int(row.band), "key": "%016x" % (int(row.key) & 0xFFFFFFFFFFFFFFFF),
         "documents": int(row.b)} for row in capped.itertuples()]
    if len(capped):
        warnings.warn("minlsh.dask.dedup: %d bucket(s) had more than max_bucket=%d documents "
                      "and were left out (stats['capped_buckets'])" % (len(capped), max_bucket),
                      stacklevel=2)
    del found
    times["candidates"] = time.monotonic() - t

    # 5. verification
    t = time.monotonic()
    # Only the documents of some candidate pair take part in the joins: when
    # they are few enough, their numbers go to every task and filter the
    # lookup before it is shuffled (a broadcast semi-join).
    numbers = None
    if st["candidates"] <= SEMIJOIN_LIMIT:
        numbers = dask.delayed(np.unique(np.concatenate(
            dask.compute(cand["a"].values, cand["b"].values))))
    if exact:
        texts = frame.map_partitions(_texts_partition,
                                     meta={"_n": np.int64, "text": object})
        lookup = dd.map_partitions(_lookup_texts, texts, docs, cfg, numbers,
                                   meta=_lookup_meta(True), align_dataframes=False)
    else:
        lookup = docs.map_partitions(_lookup, cfg, numbers, meta=_lookup_meta(False))
    cols = list(_lookup_meta(exact).columns)
    la = lookup.rename(columns={c: c + "_a" for c in cols})
    lb = lookup.rename(columns={c: c + "_b" for c in cols})
    joined = cand.merge(la, left_on="a", right_on="_n_a", npartitions=nparts)
    joined = joined.merge(lb, left_on="b", right_on="_n_b", npartitions=nparts)
    verified = joined.map_partitions(_verify, cfg, meta=_verified_meta())
    verified, = dask.persist(verified)
    st["verified"] = int(verified.shape[0].compute())
    times["verification"] = time.monotonic() - t

    # 6. output
    t = time.monotonic()
    if output == "pairs":
        result = _pairs_output(verified, groups, exact, nparts)
    else:
        result = _clusters_output(verified, groups, components, nparts, st)
    times["output"] = time.monotonic() - t
    times["total"] = time.monotonic() - t0
    log.info("minlsh.dask.dedup: %s", st)
    return result


def _pairs_output(verified, groups, exact, nparts):
    meta_a = _expand(verified._meta, _groups_meta(), "a")
    va = _copartitioned(verified, "a", groups, "rep", _expand, meta_a, nparts, "a")
    meta_b = _expand(meta_a, _groups_meta(), "b")
    vb = _copartitioned(va, "b", groups, "rep", _expand, meta_b, nparts, "b")
    across = vb.map_partitions(_finish_pairs, exact, meta=_output_pairs_meta(exact))
    within = groups.map_partitions(_group_pairs, exact, meta=_output_pairs_meta(exact))
    pairs = dd.concat([within, across])
    pairs = pairs.sort_values("a_n", sort_function=_sort_pairs)
    cols = ["a", "b", "similarity"] + (["estimate"] if exact else [])
    return pairs[cols]


def _clusters_output(verified, groups, components, nparts, st):
    n_edges = st["verified"]
    n_members = st["exact_duplicate_members"]
    # "dask" asked for: every round in Dask; chosen by "auto": in Dask until
    # the contracted graph is small enough for the client.
    local_limit = 0
    if components == "auto":
        components = "local" if n_edges + n_members <= LOCAL_COMPONENTS_LIMIT else "dask"
        local_limit = LOCAL_COMPONENTS_LIMIT
    st["components"] = components
    if components == "local":
        v, g = dask.compute(verified[["a", "b", "ida", "idb"]], groups)
        ids_of = dict(zip(v["a"].tolist(), v["ida"].tolist()))
        ids_of.update(zip(v["b"].tolist(), v["idb"].tolist()))
        ids_of.update(zip(g["_n"].tolist(), g["id"].tolist()))
        ea = np.concatenate([v["a"].values, g["_n"].values]).astype(np.uint64)
        eb = np.concatenate([v["b"].values, g["rep"].values]).astype(np.uint64)
        table = _clusters_local(ea, eb, ids_of)
        st["clusters"] = len(table)
        parts = max(1, min(nparts, len(table) // 50000 + 1))
        return dd.from_pandas(table, npartitions=parts, sort=False)
    # In Dask: edges are the verified pairs and member -> representative.
    edges = dd.concat([verified[["a", "b"]],
                       groups[groups["_n"] != groups["rep"]][["_n", "rep"]].rename(
                           columns={"_n": "a", "rep": "b"})])
    edges, = dask.persist(edges.repartition(npartitions=max(1, nparts)))
    labels, rounds = _components_dask(edges, nparts, local_limit)
    st["component_rounds"] = rounds
    names = dd.concat([verified[["a", "ida"]].rename(columns={"a": "node", "ida": "id"}),
                       verified[["b", "idb"]].rename(columns={"b": "node", "idb": "id"}),
                       groups[["_n", "id"]].rename(columns={"_n": "node"})])
    names = names.shuffle("node", npartitions=nparts).map_partitions(
        lambda p: p.drop_duplicates("node"), meta={"node": np.int64, "id": object})
    members = labels.merge(names, on="node", npartitions=nparts)
    rows = members.shuffle("label", npartitions=nparts).map_partitions(
        _cluster_rows, meta={"label": np.int64, "size": np.int64, "members": object})
    rows = rows.sort_values("label")
    rows, = dask.persist(rows)
    lengths = rows.map_partitions(len).compute().tolist()
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    st["clusters"] = int(sum(lengths))
    return rows.map_partitions(_number_clusters, offsets, meta=_clusters_meta())
