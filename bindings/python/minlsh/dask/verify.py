"""Stage 5: the candidates joined back to their documents and verified, by
exact Jaccard of the shingle sets or by the signature estimate."""

from ctypes import byref, c_double

import numpy as np
import pandas as pd

from .. import _ffi
from .._ffi import lib
from .common import _shingler


def _jaccard(x, y):
    """Exact Jaccard of two sorted uint64 arrays (minlsh_jaccard_sorted: the
    very double the minlsh command computes)."""
    out = c_double()
    rc = lib.minlsh_jaccard_sorted(byref(out), x.ctypes.data if len(x) else None, len(x),
                                   y.ctypes.data if len(y) else None, len(y))
    if rc < 0:
        raise _ffi.error(rc, "minlsh_jaccard_sorted")
    return out.value


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
