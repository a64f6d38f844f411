"""Stage 6, pairs: verified pairs of representatives expanded to their
exact-duplicate groups, plus the pairs inside each group, in input order."""

import dask.dataframe as dd
import numpy as np
import pandas as pd

from .common import _copartitioned, _triu


def _groups_meta():
    """The exact-duplicate groups: each member of a group of two or more
    with its representative (the first member in input order)."""
    return pd.DataFrame({"rep": pd.Series([], dtype=np.int64), "_n": pd.Series([], dtype=np.int64),
                         "id": pd.Series([], dtype=object)})


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


def _sort_pairs(p, **_):
    return p.sort_values(["a_n", "b_n"], kind="mergesort")


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
