"""Stage 2: exact duplicates, the groups of equal fingerprints."""

import numpy as np
import pandas as pd


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
