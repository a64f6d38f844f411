"""Band keys (minlsh_band_keys, the interchange format of docs/format.md) for
other engines: of a numpy signature matrix (one C call), and as the (band,
key) rows of :func:`prepare`'s frame."""

import numpy as np
import pandas as pd

from .. import _ffi
from .._ffi import lib
from .sign import STATUS_OK


def band_keys_matrix(signatures, bands, rows):
    """The band keys of every row of an n x k uint32 signature matrix (e.g.
    :func:`minlsh.signatures`): an n x bands uint64 array, row i being
    ``minlsh.band_keys(signatures[i], bands, rows)``, in one C call
    (minlsh_signatures_band_keys)."""
    sigs = np.ascontiguousarray(signatures, dtype=np.uint32)
    if sigs.ndim != 2:
        raise ValueError("signatures must be a 2-dimensional array (n x num_perm)")
    n, k = sigs.shape
    bands, rows = int(bands), int(rows)
    if bands < 1 or rows < 1 or bands * rows > k:
        raise _ffi.error(_ffi.E_PARAM, "minlsh_signatures_band_keys",
                         "bands=%d rows=%d num_perm=%d" % (bands, rows, k))
    out = np.empty((n, bands), dtype=np.uint64)
    if n:
        rc = lib.minlsh_signatures_band_keys(sigs.ctypes.data, n, k, bands, rows,
                                             out.ctypes.data, n * bands, None)
        if rc < 0:
            raise _ffi.error(rc, "minlsh_signatures_band_keys")
    return out


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
