"""The whole pipeline: :func:`dedup` runs the stages in order and chooses
between their strategies from the counts of the earlier ones."""

import logging
import time
import warnings

import dask
import dask.dataframe as dd
import numpy as np

from .bands import _band_rows, _rows_meta
from .candidates import _bucket_pairs, _cand_meta, _unique_pairs
from .clusters import _clusters_output
from .common import _banding, _config
from .duplicates import _dup_groups, _groups_meta
from .pairs import _pairs_output
from .sign import (STATUS_BAD, STATUS_EMPTY, STATUS_OK, _as_frame, _docs_meta, _drop_numbers,
                   _id_keys, _repeated, _sign_partition, _texts_partition)
from .verify import _lookup, _lookup_meta, _lookup_texts, _verified_meta, _verify

log = logging.getLogger("minlsh.dask")


#: Up to this many candidate pairs, the numbers of their documents are sent
#: to every task to filter the documents before the verification joins.
SEMIJOIN_LIMIT = 2_000_000

#: Default ``max_bucket``: a bucket of more distinct representatives than
#: this (12.5 million candidate pairs) is left out and reported.
MAX_BUCKET = 5000


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
    planned as the command plans: P(candidate | threshold) >= 0.999). ``threads``: signing threads per
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
