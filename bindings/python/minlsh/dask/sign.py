""":func:`prepare`: stage 1 as a Dask dataframe for other engines (Spark,
SQL): one row per input record with its status, fingerprint and signature
columns. :func:`minlsh.dask.dedup` itself signs with stages.sign (arrays,
not frames)."""

import math

import dask.bag as db
import dask.dataframe as dd
import numpy as np
import pandas as pd

from .. import _ffi
from .._minhash import signatures as _signatures
from .common import _config, _id_key, _shingler


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


#: The ``status`` column of stage 1: usable, no usable id or text, empty
#: document (no shingle).
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
    sigs = np.full((n, k), _ffi.EMPTY_VALUE, dtype=np.uint32)
    fps = np.zeros((n, 2), dtype=np.int64)
    status = np.full(n, STATUS_BAD, dtype=np.int8)
    if ok:
        s = _signatures(data, num_perm=k, seed=cfg.seed, shingler=sh, threads=cfg.threads,
                        errors="empty")
        sigs[ok] = s
        fps[ok] = np.frombuffer(b"".join(raw), dtype="<i8").reshape(len(ok), 2)
        empty = (s == _ffi.EMPTY_VALUE).all(axis=1)
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


def _id_keys(p):
    return pd.DataFrame({"_n": p["_n"].values,
                         "k": pd.Series([_id_key(v) for v in p["id"].tolist()], dtype=object)})


def _repeated(p):
    p = p.sort_values("_n", kind="mergesort")
    return p.loc[p.duplicated("k"), ["_n"]]


def _drop_numbers(p, numbers):
    return p[~p["_n"].isin(numbers)]


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
