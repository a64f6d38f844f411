"""minlsh: near-duplicate detection (shingling, MinHash, LSH banding).

A ctypes binding of the C library libminlsh, with an optional C accelerator
(minlsh._speedups; no compiler is needed without it, and results are the
same). The library is found through the MINLSH_LIBRARY environment variable
(a full path), then as libminlsh.so.0 next to this package, then through the
system loader. See docs/ffi.md in the minlsh sources.

Quick start::

    import minlsh
    docs = {"a": "the quick brown fox jumps over the lazy dog today",
            "b": "the quick brown fox jumps over the lazy cat today",
            "c": "something else entirely, with nothing in common"}
    lsh = minlsh.MinHashLSH(threshold=0.5, num_perm=128)
    sigs = minlsh.signatures(list(docs.values()), num_perm=128, shingle="word:2")
    for key, sig in zip(docs, sigs):
        lsh.insert(key, sig)
    lsh.clusters(min_similarity=0.5)       # [['a', 'b']]

The MinHash / MinHashLSH API follows datasketch's; what minlsh adds is the
Shingler, batch signing with threads, candidate pairs, clusters, saving and
loading, the planner, and :func:`dedup`: the library's whole deduplication
policy (exact copies, near-duplicates, keep or drop decisions) in one call.
"""

from ._ffi import (E_BUFSIZE, E_BUSY, E_CORRUPT, E_EXISTS, E_FORMAT, E_IO, E_MISMATCH, E_NOMEM,
                   E_NOTFOUND, E_NULL, E_PARAM, E_STATE, E_TOOBIG, E_UNSUPPORTED, E_VERSION,
                   Error, NoMemoryError, ParameterError)
from . import _ffi
from ._shingle import Shingler, ShingleStream, unicode_version
from ._minhash import (LeanMinHash, MinHash, SignatureMatrix, signatures,
                       signatures_from_tokens)
from ._plan import Plan, band_keys, plan, probability, threshold_of
from ._lsh import MinHashLSH, MinHashLSHDeletionSession, MinHashLSHInsertionSession, Novelty
from ._journal import FileLock, Journal
from ._store import Store, StoreResult
from ._sigmatrix import SigMatrix, clusters_from_matrix, pairs_from_matrix
from ._dedup import Decision, DedupResult, dedup
from ._jsonl import read_jsonl
from ._preset import Preset, preset, presets

# Show the public classes as minlsh.X (not minlsh._ffi.X) in reprs and tracebacks.
for _cls in (Error, ParameterError, NoMemoryError, Shingler, ShingleStream, MinHash,
             LeanMinHash, SignatureMatrix, MinHashLSH, MinHashLSHInsertionSession,
             MinHashLSHDeletionSession, SigMatrix, Novelty, FileLock, Journal, Store, StoreResult,
             Plan, Decision, DedupResult, Preset):
    _cls.__module__ = __name__
del _cls

#: The package version: always the version of the C library it was made for.
__version__ = "0.2.0"

#: Where the C library was loaded from.
LIBRARY = _ffi.LIBRARY
#: Where the optional C accelerator minlsh._speedups was loaded from, or
#: None when it is not in use (not built, or MINLSH_SPEEDUPS=0): results are
#: the same either way.
SPEEDUPS = _ffi.SPEEDUPS
#: Largest num_perm, largest shingle size, the SipHash key size and the
#: library's default shingle key.
FAMILY_K_MAX = _ffi.FAMILY_K_MAX
SHINGLE_K_MAX = _ffi.SHINGLE_K_MAX
KEY_BYTES = _ffi.KEY_BYTES
DEFAULT_KEY = _ffi.DEFAULT_KEY
EMPTY_VALUE = _ffi.EMPTY_VALUE
#: dedup(memory=...) for no memory limit (0, the default, is half the RAM).
DEDUP_MEMORY_UNLIMITED = _ffi.DEDUP_MEMORY_UNLIMITED

__all__ = [
    "Error", "ParameterError", "NoMemoryError",
    "Shingler", "ShingleStream", "MinHash", "LeanMinHash", "SignatureMatrix", "MinHashLSH",
    "MinHashLSHInsertionSession", "MinHashLSHDeletionSession", "SigMatrix", "Novelty",
    "FileLock", "Journal", "Store", "StoreResult", "Plan",
    "Decision", "DedupResult", "dedup", "read_jsonl", "Preset", "preset", "presets",
    "signatures", "signatures_from_tokens", "pairs_from_matrix", "clusters_from_matrix",
    "plan", "probability", "threshold_of", "band_keys", "siphash24",
    "version", "version_number", "simd_kernel", "unicode_version",
    "LIBRARY", "SPEEDUPS", "FAMILY_K_MAX", "SHINGLE_K_MAX", "KEY_BYTES", "DEFAULT_KEY", "EMPTY_VALUE",
    "DEDUP_MEMORY_UNLIMITED",
    "E_NULL", "E_PARAM", "E_NOMEM", "E_BUFSIZE", "E_IO", "E_FORMAT", "E_CORRUPT", "E_MISMATCH",
    "E_TOOBIG", "E_EXISTS", "E_NOTFOUND", "E_VERSION", "E_STATE", "E_UNSUPPORTED",
    "E_BUSY",
]


def version():
    """The version string of the loaded C library, e.g. "0.2.0"."""
    return _ffi.VERSION


def version_number():
    """The loaded library's major*10000 + minor*100 + patch."""
    return _ffi.lib.minlsh_version_number()


def simd_kernel():
    """The MinHash kernel the library chose ("portable", "avx2", "avx512")."""
    return _ffi.lib.minlsh_simd_kernel_name().decode("ascii", "replace")


def siphash24(key, data):
    """SipHash-2-4 of ``data`` (bytes, or str as UTF-8) under a 16-byte
    ``key``, as a 64-bit int (minlsh_siphash24)."""
    import ctypes
    if isinstance(key, str):
        raise TypeError("key must be %d bytes, not str" % KEY_BYTES)
    key = _ffi.as_bytes(key, "key")
    if len(key) != KEY_BYTES:
        raise ValueError("key must be %d bytes, got %d" % (KEY_BYTES, len(key)))
    data = _ffi.as_bytes(data, "data")
    out = ctypes.c_uint64()
    _ffi.check(_ffi.lib.minlsh_siphash24(ctypes.byref(out), key, data, len(data)),
               "minlsh_siphash24")
    return out.value
