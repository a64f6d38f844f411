"""Stage 6, clusters: connected components of the verified pairs and the
exact-duplicate groups, by union-find on the client
(minlsh_clusters_from_edges) or by hooking and contraction in Dask."""

import logging
from ctypes import byref, c_void_p

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from .. import _ffi
from .._ffi import lib
from .common import _copartitioned

log = logging.getLogger("minlsh.dask")


#: Below this many edges plus exact-duplicate members, ``components="auto"``
#: gathers the graph on the client for union-find; above, it stays in Dask.
LOCAL_COMPONENTS_LIMIT = 2_000_000


def _clusters_of_edges(a, b):
    """Connected components of the edges (a[i], b[i]) (uint64 arrays) with
    minlsh_clusters_from_edges: lists of ids, members ascending, groups by
    their smallest member."""
    a = np.ascontiguousarray(a, dtype=np.uint64)
    b = np.ascontiguousarray(b, dtype=np.uint64)
    handle = c_void_p()
    rc = lib.minlsh_clusters_from_edges(byref(handle), a.ctypes.data if len(a) else None,
                                        b.ctypes.data if len(b) else None, len(a), None)
    if rc < 0:
        raise _ffi.error(rc, "minlsh_clusters_from_edges")
    return [np.asarray(members, dtype=np.int64) for members in _ffi.take_clusters(handle)]


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
