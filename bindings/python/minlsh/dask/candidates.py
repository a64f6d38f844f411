"""Stage 4: buckets of equal (band, key) and the candidate pairs in them,
with hot buckets reported instead of expanded."""

import numpy as np
import pandas as pd

from .common import _triu


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


def _unique_pairs(p):
    return p.drop_duplicates(["a", "b"])[["a", "b"]]
