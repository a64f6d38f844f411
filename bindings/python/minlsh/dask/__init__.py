"""minlsh.dask: near-duplicate detection on a Dask cluster.

``dedup(collection, ...)`` runs the stages of the ``minlsh dedup`` command's
engine (docs/dedup.md) on a Dask bag or dataframe of documents, spread over
the workers of a ``distributed`` cluster (or Dask's local schedulers), and
gives the same answer the command gives on one machine for the same
parameters: the same pairs with the same similarities, the same clusters in
the same order, the same keep/drop decisions.

Each stage is a few calls of the C library per partition (numpy arrays in,
numpy arrays out; lib/dedup/stages.c), and the shuffles between them move
numpy pieces between delayed tasks (docs/scale-out.md explains each shape):

1. **Signatures** per input partition, in the task that reads it
   (``minlsh_family_sign_texts``: the signature, 16-byte fingerprint and
   set size of every text in one call). What a partition keeps for the
   later stages stays in memory within ``memory=`` per process, else in
   memory-mapped temporary files.
   Records without a usable id or text and repeated ids (the first is kept)
   are dropped, as the command drops them; the rest are numbered densely in
   input order, as the command numbers them.
2. **Repeated ids and exact duplicates**: one shuffle of 128-bit id hashes
   and of fingerprints, by row; each group of identical texts is
   represented by its first member.
3. **Band keys** of the groups' first members only
   (``minlsh_signatures_band_keys``), as (band, key, number) records, sent
   to bucket partitions: whole bands when there are no more partitions
   than bands, else by key.
4. **Candidates** per bucket partition (``minlsh_buckets_pair``): every pair
   in a bucket, a bucket of more than ``max_bucket`` distinct texts left out
   and reported (the command's ``--max-bucket``); then a shuffle by first
   document counts each pair once.
5. **Verification** per shard of pairs: each input partition sends each
   shard the signatures of the documents it needs and, for exact
   verification, their shingle sets as one CSR buffer
   (``minlsh_shingler_hash_texts``); one ``minlsh_sets_jaccard`` call per
   shard gives the very doubles the command computes.
6. **Output**: pairs of representatives expand to their exact groups
   (pairs); connected components (clusters: union-find on the client, or
   hooking and contraction in Dask for large graphs); or the library's
   keep/drop policy (``minlsh_dedup_decide``) on the verified edges, with a
   second verification round for the similarity of a document joined to
   its representative through others (decisions).

For other engines (Spark, SQL): :func:`prepare` runs stage 1 alone,
:func:`band_key_rows` makes the (band, key) table, :func:`band_keys_matrix`
computes band keys of a numpy signature matrix. :func:`read_jsonl` reads
JSON Lines files into a bag with one ``json.loads`` call per block.

Modules: ``stages`` (what each task runs), ``pipeline`` (:func:`dedup`, the
graph), ``pairs`` and ``clusters`` (outputs), ``sign`` and ``bands``
(:func:`prepare` and the band-key helpers), ``spill`` (the ``memory=``
budget), ``common`` (configuration).
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
