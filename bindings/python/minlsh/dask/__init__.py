"""minlsh.dask: near-duplicate detection on a Dask cluster.

``dedup(collection, ...)`` runs the pipeline of the ``minlsh dedup`` command
on a Dask bag or dataframe of documents, spread over the workers of a
``distributed`` cluster (or Dask's local schedulers), and gives the same
answer the command gives on one machine for the same parameters: the same
pairs with the same similarities, the same clusters in the same order.

Stages (docs/scale-out.md explains why each is shaped the way it is):

1. **Signatures** per input partition: the threaded batch call
   (``minlsh_family_sign_batch``), the 16-byte fingerprint of every
   document, and a global input-order number ``(partition << 32) | row``.
   Records without a usable id or text, empty documents (no shingle) and
   repeated ids (the first is kept) are dropped, as the command drops them.
2. **Exact duplicates**: a shuffle by fingerprint; each group of identical
   documents (similarity 1.0) is represented by its first member.
3. **Band keys**: one row ``(band, key, n, fingerprint)`` per document and
   band (``minlsh_band_keys``, the interchange format of docs/format.md).
4. **Buckets**: a shuffle by ``(band, key)``; in each bucket the members
   collapse to their exact-duplicate representatives, and every pair of
   representatives is a candidate. A bucket with more than ``max_bucket``
   representatives is left out whole and reported (never silently).
   Candidates found in several bands are counted once.
5. **Verification**: the candidates are joined back to their documents:
   exact Jaccard of the two shingle sets (``verify="exact"``, the texts are
   read again from the input) or the signature estimate
   (``verify="signature"``).
6. **Output**: pairs of representatives expand to their exact-duplicate
   groups (pairs), or connected components of the verified pairs and the
   groups (clusters): union-find on the client (``minlsh_clusters_from_edges``)
   when the edges are few, else iterative minimum-label propagation with
   pointer jumping, in Dask, until no label changes.

For other engines (Spark, SQL): :func:`prepare` runs stage 1 alone,
:func:`band_key_rows` makes the (band, key) table, :func:`band_keys_matrix`
computes band keys of a numpy signature matrix.

The package has one module per stage: ``sign`` (1), ``duplicates`` (2),
``bands`` (3), ``candidates`` (4), ``verify`` (5), ``pairs`` and ``clusters``
(6), ``common`` (the configuration and helpers they share) and ``pipeline``
(:func:`dedup`). Its public names are the ones imported here.

The functions run on the workers live in these modules, so minlsh (the
package and libminlsh) must be installed on every worker host.
"""

from .bands import band_key_rows, band_keys_matrix
from .pipeline import dedup, read_jsonl
from .sign import prepare
# The tuning constants and status values, importable from here as before
# (changing them here does not change the modules that read them).
from .clusters import LOCAL_COMPONENTS_LIMIT  # noqa: F401
from .pipeline import MAX_BUCKET, SEMIJOIN_LIMIT  # noqa: F401
from .sign import STATUS_BAD, STATUS_EMPTY, STATUS_OK  # noqa: F401

__all__ = ["dedup", "read_jsonl", "prepare", "band_key_rows", "band_keys_matrix"]
