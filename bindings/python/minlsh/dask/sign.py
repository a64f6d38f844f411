""":func:`prepare`: stage 1 as a Dask dataframe for other engines (Spark,
SQL): one row per input record with its status, fingerprint and signature
columns. :func:`minlsh.dask.dedup` itself signs with stages.sign (arrays,
not frames)."""

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from .. import _ffi
from .common import _config
from .stages import _as_bytes, _buffer, _records, _sign_buffer, _valid_id, input_parts


def _empty_input():
    return pd.DataFrame({"id": pd.Series([], dtype=object), "text": pd.Series([], dtype=object)})


def _part_frame(part, id_field, text_field):
    ids, texts = _records(part, id_field, text_field)
    return pd.DataFrame({"id": pd.Series(ids, dtype=object),
                         "text": pd.Series(texts, dtype=object)})


def _as_frame(collection, id_field, text_field):
    """The collection as a frame of (id, text), a partition per input
    partition."""
    parts = [dask.delayed(_part_frame)(p, id_field, text_field)
             for p in input_parts(collection, id_field, text_field)]
    return dd.from_delayed(parts, meta=_empty_input(), verify_meta=False)


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
    """One partition as stage 1 rows: the usable texts signed and
    fingerprinted in one buffer by one C call (stages._sign_buffer), as
    minlsh.dask.dedup does."""
    n = len(pdf)
    nums = _numbers(partition_info, n)
    ids = pdf["id"].tolist()
    texts = pdf["text"].tolist()
    ok, data = [], []
    for i in range(n):
        t = _as_bytes(texts[i]) if _valid_id(ids[i]) else None
        if t is not None:
            ok.append(i)
            data.append(t)
    k = cfg.num_perm
    sigs = np.full((n, k), _ffi.EMPTY_VALUE, dtype=np.uint32)
    fps = np.zeros((n, 2), dtype=np.int64)
    status = np.full(n, STATUS_BAD, dtype=np.int8)
    if ok:
        m = len(ok)
        buf, starts, lens = _buffer(data)
        s = np.empty((m, k), dtype=np.uint32)
        f = np.zeros((m, 2), dtype=np.uint64)
        counts = np.zeros(m, dtype=np.uint64)
        st = np.zeros(m, dtype=np.int32)
        _sign_buffer(buf, starts, lens, cfg, s, f, counts, st)
        good = st == 0  # over max_document_bytes: refused, as by the command
        rows = np.asarray(ok, dtype=np.int64)[good]
        sigs[rows] = s[good]
        fps[rows] = f[good].view(np.int64)
        status[rows] = np.where(counts[good] == 0, STATUS_EMPTY, STATUS_OK)
    out = pd.DataFrame({"_n": nums, "id": pd.Series(ids, dtype=object),
                        "fp0": fps[:, 0], "fp1": fps[:, 1], "status": status})
    sig_df = pd.DataFrame(sigs, columns=cfg.sig_columns())
    return pd.concat([out, sig_df], axis=1)


def prepare(collection, id="id", text="text", num_perm=128, seed=1, shingle="word:5",
            threads=1, scheme="classic", **shingler_options):
    """Stage 1 alone, for other engines: a lazy Dask dataframe with one row
    per input record: ``_n`` (the input-order number), ``id``, the 128-bit
    fingerprint as ``fp0``, ``fp1`` (int64), ``status`` (0 usable, 1 no
    usable id or text, 2 empty document) and the signature as columns
    ``s0`` .. ``s{num_perm-1}`` (uint32). :func:`band_keys_matrix` turns the
    signature columns into band keys. ``scheme``: ``"classic"`` or ``"oph"``."""
    cfg = _config(shingle, shingler_options, num_perm, seed, threads, 1, 1, 0.5, "signature",
                  None, scheme)
    frame = _as_frame(collection, id, text)
    return frame.map_partitions(_sign_partition, cfg, meta=_docs_meta(cfg))
