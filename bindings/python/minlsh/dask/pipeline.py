"""The whole pipeline: :func:`dedup` builds the graph of the stages
(minlsh/dask/stages.py: one C call per partition and stage, shuffles of
numpy pieces) and chooses between the output strategies from the counts of
the earlier ones."""

import logging
import time
import warnings

import dask
import dask.bag as db
import dask.dataframe as dd
import numpy as np
import pandas as pd

from .. import _ffi
from .._ffi import lib
from .._minhash import scheme_id
from . import stages
from .clusters import _clusters_output
from .common import _banding, _config
from .pairs import _pairs_output

log = logging.getLogger("minlsh.dask")


#: Kept for compatibility: the verification no longer needs a semi-join.
SEMIJOIN_LIMIT = 2_000_000

#: Default ``max_bucket``: a bucket of more distinct texts than this (12.5
#: million candidate pairs) is left out and reported.
MAX_BUCKET = 5000

_KEEP = {"first": _ffi.KEEP_FIRST, "longest": _ffi.KEEP_LONGEST}
_GROUP = {"components": _ffi.GROUP_COMPONENTS, "strict": _ffi.GROUP_STRICT}


def read_jsonl(urlpath, blocksize="64MiB", **kwargs):
    """A Dask bag of the records of JSON Lines files: blocks of whole lines
    (``dask.bytes.read_bytes``), each a sequence of records parsed by one
    ``json.loads`` call when first iterated (about three times faster than
    a call per line on short records). A line that is not valid JSON
    becomes ``None`` (counted in ``stats["bad_records"]``, as the command
    counts it); blank lines are skipped, and a byte-order mark at a file's
    start. :func:`dedup` given this bag reads each block with the library's
    JSON Lines reader instead (the reader and rules of ``minlsh dedup
    --jsonl``): no Python object per record but its id. Extra keyword
    arguments go to ``read_bytes`` (e.g. ``compression``,
    ``storage_options``)."""
    from dask.bytes import read_bytes
    _, blocks = read_bytes(urlpath, delimiter=b"\n", blocksize=blocksize, **kwargs)
    parts = [dask.delayed(stages.JsonlBlock)(blk, i == 0)
             for file in blocks for i, blk in enumerate(file)]
    return db.from_delayed(parts)


def _shuffle(sources, split, nparts, *args):
    """pieces[j] = [piece j of split(source, *args) for each source]: the
    send half of a hand-made shuffle (the receive half concatenates)."""
    out = [dask.delayed(split, nout=nparts)(s, *args) for s in sources]
    return [[o[j] for o in out] for j in range(nparts)]


def dedup(collection, id="id", text="text", threshold=0.8, num_perm=128, seed=1,
          shingle="word:5", verify="exact", output="pairs", bands=None, rows=None, threads=1,
          max_bucket=None, components="auto", npartitions=None, stats=None,
          keep="first", group="components", scheme="classic", memory=None, tmpdir=None,
          **shingler_options):
    """Near-duplicates of a Dask collection of documents, as ``minlsh dedup``
    finds them on one machine.

    ``collection``: a Dask bag of records (dicts with fields ``id`` and
    ``text``, or ``(id, text)`` tuples; :func:`read_jsonl` reads JSON Lines
    files fastest), or a Dask (or pandas) dataframe with those columns.
    ``id`` and ``text`` name the fields. Ids are strings or numbers, kept as
    given; texts are str (UTF-8) or bytes. Records without a usable id or
    text and repeated ids (the first in input order is kept) are dropped, as
    the command drops them, and counted in ``stats``; empty documents (no
    shingle) are nobody's duplicate: kept, each alone. Input order is
    partition order, then order inside a partition.

    Parameters as the command's options: ``threshold`` (Jaccard, 0..1),
    ``num_perm`` (signature length), ``seed`` (MinHash family), ``scheme``
    (``"classic"`` or ``"oph"``, as ``--scheme``), ``shingle``
    (``"word:5"``, ``"char:N"``, ``"codepoint:N"``, ``"stopword[:N]"``) with
    the shingler options ``lowercase``, ``strip_punct``, ``collapse_space``,
    ``normalize``, ``html``, the Unicode options (``nfkc``, ``casefold``,
    ``unicode_punct``, ``unicode_space``, ``fold_digits``, ``cjk_words``),
    ``key`` (16 bytes), ``stopwords``, ``max_document_bytes``; ``verify`` ``"exact"`` (exact Jaccard of the
    shingle sets; each partition keeps its texts, in one UTF-8 buffer, until
    the verification) or ``"signature"`` (the MinHash estimate);
    ``bands``/``rows`` (default: planned as the command plans:
    P(candidate | threshold) >= 0.999). ``threads``: signing threads per task
    (1 suits one-thread workers).

    ``max_bucket``: the command's ``--max-bucket``: a (band, key) bucket of
    more distinct texts (exact copies count once) is left out whole, listed
    in ``stats["capped_buckets"]`` and warned about; pairs of its members may
    still be found through other bands. ``None`` or 0 (the default): no
    cap, the default of the library and every front end; ``MAX_BUCKET`` is
    a cap that suits large corpora.

    ``output="pairs"``: a Dask dataframe with columns ``a``, ``b``,
    ``similarity`` and, with exact verification, ``estimate``: every pair of
    documents at or above the threshold, a before b in input order, sorted
    by (a, b) in input order; exact duplicates have similarity 1.0.
    ``output="clusters"``: columns ``cluster`` (1, 2, ...), ``size`` and
    ``members`` (a list of ids in input order): the connected components of
    the pairs, numbered in the order of their first member.
    ``output="decisions"``: one row per document, in input order, with
    columns ``id``, ``cluster`` (the number the clusters output gives its
    cluster, 0 for none), ``decision`` (``"kept"`` or ``"dropped"``),
    ``representative`` (the id of the kept document it is dropped for;
    itself when kept), ``similarity`` (verified similarity to it) and
    ``exact``: ``minlsh dedup --output decisions``, record for record. The
    policy is the library's (``minlsh_dedup_decide``): ``keep`` ``"first"``
    (input order) or ``"longest"`` (UTF-8 bytes of the text; ties: the
    first), ``group`` ``"components"`` (one kept document per connected
    component) or ``"strict"`` (dropped only for a kept near-duplicate at or
    above the threshold).

    ``memory``: the command's ``--memory``, per worker process: bytes (or
    a size such as ``"512M"``) that the data each process keeps between
    stages (signatures, texts for exact verification, fingerprints and
    numbers of its partitions) may take in memory; past it a partition's
    arrays go to temporary files in ``tmpdir`` (default: Python's
    ``tempfile`` directory), unlinked at once and read back through memory
    maps. ``None`` or 0: no limit. The results do not depend on it;
    ``stats["temp_bytes"]`` gives the bytes written.

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
    if output not in ("pairs", "clusters", "decisions"):
        raise ValueError("output must be 'pairs', 'clusters' or 'decisions'")
    if components not in ("auto", "local", "dask"):
        raise ValueError("components must be 'auto', 'local' or 'dask'")
    if keep not in _KEEP:
        raise ValueError("keep must be 'first' or 'longest'")
    if group not in _GROUP:
        raise ValueError("group must be 'components' or 'strict'")
    if not 0.0 < float(threshold) <= 1.0:
        raise ValueError("threshold must be in (0, 1]")
    if max_bucket is not None and int(max_bucket) == 0:
        max_bucket = None  # 0: no cap, as the library's default
    if max_bucket is not None and int(max_bucket) < 2:
        raise ValueError("max_bucket must be at least 2 (or 0 or None)")
    threshold = float(threshold)
    b, r, how = _banding(threshold, num_perm, verify, bands, rows)
    cfg = _config(shingle, shingler_options, num_perm, seed, threads, b, r, threshold, verify,
                  None if max_bucket is None else int(max_bucket), scheme, memory, tmpdir)
    if verify == "exact" and output != "pairs" and cfg.scheme == scheme_id("classic"):
        # As the engine (minlsh_dedup_signature_values): with exact
        # verification only the band keys read a signature, b x r values of
        # it, and a classic family's first b x r functions are the family of
        # that size. The pairs output's estimate needs all of them.
        cfg.sig_values = b * r
    st = stats if isinstance(stats, dict) else {}
    st.update(bands=b, rows=r, plan=how, num_perm=num_perm, threshold=threshold, verify=verify)
    times = st.setdefault("seconds", {})
    delayed = dask.delayed

    # 1. signatures, fingerprints; repeated ids and exact duplicates
    # Mapped over the input bag, signing fuses with reading: the records
    # stay in the process that parsed them, and only arrays leave it. One
    # shuffle of id hashes and fingerprints finds both repeated ids and
    # exact duplicates, by row (partition, place), before numbering.
    signed = stages.input_bag(collection, id, text).map_partitions(stages.sign, cfg, id, text)
    signed = list(dask.persist(*signed.to_delayed()))
    n_in = len(signed)
    nparts = max(1, int(npartitions or n_in))
    out = [delayed(stages.key_pieces, nout=nparts)(s, i, nparts) for i, s in enumerate(signed)]
    pieces = [[o[j] for o in out] for j in range(nparts)]
    grouped = [delayed(stages.key_groups)(*pc) for pc in pieces]
    summary = [delayed(stages.doc_summary)(d) for d in signed]
    summary, grouped = dask.compute(summary, grouped)
    repeated = np.sort(np.concatenate([g[0] for g in grouped])) if grouped \
        else np.empty(0, dtype=np.int64)
    st["records"] = int(sum(x["records"] for x in summary))
    st["bad_records"] = st["records"] - int(sum(x["usable"] for x in summary))
    st["repeated_ids"] = int(len(repeated))
    if len(repeated):
        warnings.warn("minlsh.dask.dedup: %d records repeat an earlier id and were dropped"
                      % len(repeated), stacklevel=2)
    usable = np.array([x["usable"] for x in summary], dtype=np.int64)
    base = np.r_[0, np.cumsum(usable)[:-1]].astype(np.int64) if n_in else usable
    cut = np.searchsorted(repeated, np.arange(n_in + 1, dtype=np.int64) << np.int64(32))
    offsets = [int(base[i] - cut[i]) for i in range(n_in)]
    docs = [delayed(stages.number)(d, repeated[cut[i]:cut[i + 1]], offsets[i], cfg)
            for i, d in enumerate(signed)]
    n_docs = int(usable.sum()) - len(repeated)
    docs = list(dask.persist(*docs))
    del signed
    st["documents"] = n_docs
    times["signatures"] = time.monotonic() - t0

    # 2. exact duplicates: the groups of equal fingerprints without the
    # repeated ids, numbered
    t = time.monotonic()
    members, firsts = _exact_groups(grouped, repeated, base)
    copies = members[members != firsts]
    st["exact_duplicate_groups"] = int((members == firsts).sum())
    st["exact_duplicate_members"] = int(len(members))
    times["exact_duplicates"] = time.monotonic() - t

    # 3, 4, 5. band records, a shuffle by key, candidates per bucket
    # partition, a shuffle by first document that counts each pair once,
    # and the verification of each shard of pairs: one graph, computed
    # once (each partition sends each shard what it needs of its
    # documents: signatures, and sets made from the texts in one call)
    t = time.monotonic()
    bounds = np.array(offsets, dtype=np.int64)
    mine = _by_owner(copies, bounds)
    pieces = [delayed(stages.band_pieces, nout=nparts)(d, mine[i], cfg, nparts)
              for i, d in enumerate(docs)]
    pieces = [[p[j] for p in pieces] for j in range(nparts)]
    found = [delayed(stages.bucket_pairs, nout=2)(cfg.max_bucket, nparts, *pc) for pc in pieces]
    shards = [delayed(stages.unique_pairs)(*[f[0][j] for f in found]) for j in range(nparts)]
    verified = _verify_graph(docs, bounds, shards, cfg, nparts, keep_all=False)
    want_lengths = output == "decisions" and _KEEP[keep] == _ffi.KEEP_LONGEST
    verified, capped, n_cand, counts, lengths = dask.compute(
        verified, [f[1] for f in found], [delayed(len)(s[0]) for s in shards],
        [delayed(stages.doc_counts)(d) for d in docs],
        [delayed(stages.lengths_of)(d) for d in docs] if want_lengths else [])
    st["empty_documents"] = int(sum(c[0] for c in counts))
    st["temp_bytes"] = int(sum(c[1] for c in counts))
    st["candidates"] = int(sum(n_cand))
    capped = np.concatenate(capped) if capped else np.empty((0, 3), dtype=np.uint64)
    capped = capped[np.lexsort((capped[:, 0], capped[:, 1]))] if len(capped) else capped
    st["capped_buckets"] = [{"band": int(c[0]), "key": "%016x" % int(c[1]),
                             "documents": int(c[2])} for c in capped]
    if len(capped):
        warnings.warn("minlsh.dask.dedup: %d bucket(s) had more than max_bucket=%d documents "
                      "and were left out (stats['capped_buckets'])" % (len(capped), max_bucket),
                      stacklevel=2)
    va = np.concatenate([v[0] for v in verified])
    vb = np.concatenate([v[1] for v in verified])
    vsim = np.concatenate([v[2] for v in verified])
    vest = np.concatenate([v[3] for v in verified])
    order = np.lexsort((vb, va))
    va, vb, vsim, vest = va[order], vb[order], vsim[order], vest[order]
    st["verified"] = int(len(va))
    times["candidates_and_verification"] = time.monotonic() - t

    # 6. output
    t = time.monotonic()
    if output == "decisions":
        lengths = np.concatenate(lengths) if want_lengths and lengths else None
        if want_lengths and lengths is None:
            lengths = np.empty(0, dtype=np.uint64)
        result = _decisions_output(docs, offsets, n_docs, members, firsts, va, vb, vsim, cfg,
                                   _KEEP[keep], _GROUP[group], nparts, st, lengths)
    else:
        wanted = np.unique(np.concatenate([va, vb, members]))
        mine = _by_owner(wanted, bounds)
        got = dask.compute(*[delayed(stages.ids_of)(d, mine[i]) for i, d in enumerate(docs)])
        names = _id_map(got)
        vdf = pd.DataFrame({"a": va, "b": vb, "ida": names(va), "idb": names(vb),
                            "similarity": vsim, "estimate": vest})
        gdf = pd.DataFrame({"rep": firsts, "_n": members, "id": names(members)})
        vdd = dd.from_pandas(vdf, npartitions=max(1, min(nparts, len(vdf) // 50000 + 1)),
                             sort=False)
        gdd = dd.from_pandas(gdf, npartitions=max(1, min(nparts, len(gdf) // 50000 + 1)),
                             sort=False)
        if output == "pairs":
            result = _pairs_output(vdd, gdd, verify == "exact", nparts)
        else:
            result = _clusters_output(vdd, gdd, components, nparts, st)
    times["output"] = time.monotonic() - t
    times["total"] = time.monotonic() - t0
    log.info("minlsh.dask.dedup: %s", st)
    return result


def _id_map(got):
    """A function from document numbers to their ids, from the (numbers, ids)
    pieces of stages.ids_of."""
    nums = np.concatenate([g[0] for g in got]) if got else np.empty(0, dtype=np.int64)
    ids = np.concatenate([g[1] for g in got]) if got else np.empty(0, dtype=object)
    order = np.argsort(nums)
    nums, ids = nums[order], ids[order]

    def names(x):
        return pd.Series(ids[np.searchsorted(nums, x)] if len(x) else [], dtype=object).values
    return names


def _by_owner(nums, bounds):
    """Sorted document numbers split by the input partition that holds them
    (client side): a partition is sent only its own."""
    cut = np.searchsorted(nums, bounds)
    ends = np.r_[cut[1:], len(nums)]
    return [nums[lo:hi] for lo, hi in zip(cut, ends)]


def _verify_graph(docs, bounds, shards, cfg, nparts, keep_all):
    """The verification of the pairs of each shard ((a, b, numbers) tuples,
    delayed): the delayed (a, b, similarity, estimate) of each shard. Each
    shard asks each input partition for its own documents only."""
    n_in = len(docs)
    wanted = [dask.delayed(stages.shard_docs, nout=n_in)(s, bounds) for s in shards]
    data = [dask.delayed(stages.doc_data, nout=nparts)(d, cfg, *[w[i] for w in wanted])
            for i, d in enumerate(docs)]
    return [dask.delayed(stages.verify)(shards[j], cfg, keep_all, *[x[j] for x in data])
            for j in range(nparts)]


def _exact_groups(grouped, repeated, base):
    """Members of the groups of two or more exact copies as document numbers,
    by number, and the first member of each one's group: from the rows of
    stages.key_groups, the repeated ids taken out (a group may lose its
    first, or fall to one member) and rows numbered (base: the first row
    number of each partition, repeated ids counted)."""
    rows = np.concatenate([g[1] for g in grouped]) if grouped else np.empty(0, np.int64)
    label = np.concatenate([g[2] for g in grouped]) if grouped else np.empty(0, np.int64)
    if len(repeated) and len(rows):
        keep = ~np.isin(rows, repeated)
        rows, label = rows[keep], label[keep]
    if len(rows) == 0:
        e = np.empty(0, dtype=np.int64)
        return e, e
    order = np.lexsort((rows, label))
    rows, label = rows[order], label[order]
    start = np.r_[True, label[1:] != label[:-1]]
    gid = np.cumsum(start) - 1
    first = rows[start][gid]
    keep = np.bincount(gid)[gid] >= 2
    rows, first = rows[keep], first[keep]

    def numbered(r):
        raw = base[r >> np.int64(32)] + (r & np.int64(0xFFFFFFFF))
        return raw - np.searchsorted(repeated, r)
    members, firsts = numbered(rows), numbered(first)
    order = np.argsort(members, kind="stable")
    return members[order], firsts[order]


def _pairs_shards(a, b, nparts):
    """Client-side pairs as shards for _verify_graph."""
    out = []
    for j in range(nparts):
        sel = (a % nparts) == j
        x, y = a[sel], b[sel]
        out.append(dask.delayed((x, y, np.unique(np.concatenate([x, y])))))
    return out


# The C structs as numpy records (their layout is the ctypes structs',
# which tests/test_structs.py checks against the header).
_DECISION = np.dtype(_ffi.DedupDecision)
_EDGE = np.dtype(_ffi.DedupEdge)


def _decide(n_docs, exact_of, lengths, va, vb, vsim, keep, group):
    """minlsh_dedup_decide: the library's keep/drop policy on the verified
    edges (one call for the whole corpus)."""
    fn = lib.minlsh_dedup_decide
    edges = np.empty(len(va), dtype=_EDGE)
    edges["a"], edges["b"], edges["similarity"] = va, vb, vsim
    dec = np.zeros(n_docs, dtype=_DECISION)
    ex = np.ascontiguousarray(exact_of, dtype=np.uint64)
    ln = None if lengths is None else np.ascontiguousarray(lengths, dtype=np.uint64)
    import ctypes
    rc = fn(edges.ctypes.data_as(ctypes.POINTER(_ffi.DedupEdge)), len(edges), n_docs,
            ex.ctypes.data if n_docs else None,
            None if ln is None or not n_docs else ln.ctypes.data, keep, group,
            dec.ctypes.data_as(ctypes.POINTER(_ffi.DedupDecision)), None)
    if rc < 0:
        raise _ffi.error(rc, "minlsh_dedup_decide")
    return dec


def _id_table(*got):
    """(numbers, ids) of the pieces of stages.ids_of, by number."""
    nums = np.concatenate([g[0] for g in got]) if got else np.empty(0, dtype=np.int64)
    ids = np.concatenate([g[1] for g in got]) if got else np.empty(0, dtype=object)
    order = np.argsort(nums)
    return nums[order], ids[order]


def _pair_similarities(a, b, *res):
    """The similarity of each pair (a[i], b[i]) from the results of a
    verification round that kept every pair."""
    ra = np.concatenate([v[0] for v in res])
    rb = np.concatenate([v[1] for v in res])
    rs = np.concatenate([v[2] for v in res])
    span = np.int64(max(int(ra.max()), int(rb.max())) + 1) if len(ra) else np.int64(1)
    key = ra * span + rb
    order = np.argsort(key)
    return rs[order][np.searchsorted(key[order], a * span + b)]


def _decisions_frame(doc, rows, dec, cluster_no, rep_table, wait=None):
    """The decisions frame of one partition, from its documents and the
    decisions of its rows that are not kept alone (the others: kept, their
    own representative, similarity 1, cluster 0)."""
    n = len(doc["ids"])
    kept = np.ones(n, dtype=bool)
    kept[rows] = dec["kept"] == 1
    similarity = np.ones(n, dtype=np.float64)
    similarity[rows] = dec["similarity"]
    if wait is not None:  # (positions in rows, places in fill, fill)
        similarity[rows[wait[0]]] = wait[2][wait[1]]
    exact = np.zeros(n, dtype=bool)
    exact[rows] = dec["exact"] == 1
    cluster = np.zeros(n, dtype=np.int64)
    cluster[rows] = cluster_no
    rep_id = np.array(doc["ids"], dtype=object)
    dropped = dec["kept"] == 0
    if dropped.any():
        rep_nums, rep_ids = rep_table
        rep = dec["representative"][dropped].astype(np.int64)
        rep_id[rows[dropped]] = rep_ids[np.searchsorted(rep_nums, rep)]
    # Two shared objects, not a str per row: a pickled column of them
    # costs a few bytes per row, not a string each.
    decision = np.full(n, "kept", dtype=object)
    decision[~kept] = "dropped"
    return pd.DataFrame({"id": pd.Series(doc["ids"], dtype=object),
                         "cluster": cluster,
                         "decision": decision,
                         "representative": pd.Series(rep_id, dtype=object),
                         "similarity": similarity,
                         "exact": exact})


def _decisions_meta():
    return pd.DataFrame({"id": pd.Series([], dtype=object),
                         "cluster": pd.Series([], dtype=np.int64),
                         "decision": pd.Series([], dtype=object),
                         "representative": pd.Series([], dtype=object),
                         "similarity": pd.Series([], dtype=np.float64),
                         "exact": pd.Series([], dtype=bool)})


def _decisions_output(docs, offsets, n_docs, members, firsts, va, vb, vsim, cfg, keep, group,
                      nparts, st, lengths):
    exact_of = np.arange(n_docs, dtype=np.uint64)
    exact_of[members] = firsts.astype(np.uint64)
    dec = _decide(n_docs, exact_of, lengths, va, vb, vsim, keep, group)
    # A dropped document whose representative is not a verified neighbour
    # (components joined through others): one more verification round, of
    # the two exact-group firsts, measures the similarity. It is part of
    # the result's graph, so it costs no round trip of its own.
    miss = np.flatnonzero(np.isnan(dec["similarity"]))
    fill = None
    if len(miss):
        x = exact_of[miss].astype(np.int64)
        y = exact_of[dec["representative"][miss]].astype(np.int64)
        a, b = np.minimum(x, y), np.maximum(x, y)
        pa, pb = np.unique(np.stack([a, b], axis=1), axis=0).T
        bounds = np.array(offsets, dtype=np.int64)
        res = _verify_graph(docs, bounds, _pairs_shards(pa, pb, nparts), cfg, nparts,
                            keep_all=True)
        fill = dask.delayed(_pair_similarities)(a, b, *res)
    st["kept"] = int(dec["kept"].sum())
    st["dropped"] = n_docs - st["kept"]
    # minlsh_dedup_decide numbers the clusters as every front end shows them
    number = dec["cluster"].astype(np.int64) if n_docs else np.empty(0, dtype=np.int64)
    # The representatives' ids are looked up in the graph of the result,
    # not here: one round trip fewer.
    reps = np.unique(dec["representative"][dec["kept"] == 0].astype(np.int64))
    mine = _by_owner(reps, np.array(offsets, dtype=np.int64))
    got = [dask.delayed(stages.ids_of)(d, mine[i]) for i, d in enumerate(docs)]
    rep_table = dask.delayed(_id_table)(*got)
    # Most documents are kept alone: only the others' decisions go into
    # the graph (a few bytes per near-duplicate instead of 40 per document).
    alone = (dec["kept"] == 1) & (dec["exact"] == 0) & (dec["similarity"] == 1.0) & (number == 0)
    frames = []
    ends = list(offsets[1:]) + [n_docs]
    for d, lo, hi in zip(docs, offsets, ends):
        rows = np.flatnonzero(~alone[lo:hi])
        # which of rows wait for a similarity of the extra round, and where
        # it is in fill (miss is sorted)
        at = np.arange(np.searchsorted(miss, lo), np.searchsorted(miss, hi))
        wait = (np.searchsorted(rows, miss[at] - lo), at, fill) if len(at) else None
        frames.append(dask.delayed(_decisions_frame)(d, rows, dec[lo:hi][rows],
                                                     number[lo:hi][rows], rep_table, wait))
    return dd.from_delayed(frames, meta=_decisions_meta(), verify_meta=False)
