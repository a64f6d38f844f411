"""The C library: finding it, checking its version, its prototypes and errors.

Every prototype (restype and argtypes) of the package is declared here, once;
the other modules, minlsh.dask included, call ``lib.minlsh_*`` through them
and turn return codes into exceptions with :func:`check`.

ctypes releases the interpreter lock around every call into a ``CDLL``, so
long calls (signing, queries, saves) let other Python threads run.
:data:`gil_lib` is the one exception, for calls shorter than the lock's
round trip. :data:`speedups` is the optional C accelerator (minlsh._speedups):
the same results as the Python code it replaces, without the Python work per
token and per query.
"""

import ctypes
import json as _json
import ctypes.util
import os
import threading
from ctypes import (POINTER, Structure, c_char_p, c_double, c_int, c_int32,
                    c_size_t, c_uint32, c_uint64, c_void_p)

try:  # optional: results become numpy arrays when it is installed
    import numpy
except ImportError:  # pragma: no cover - depends on the machine
    numpy = None

#: The major version of the C library this binding was written for. A
#: library with another major version has another ABI: refuse it.
ABI_MAJOR = 0
#: The oldest library version (major*10000 + minor*100 + patch) it needs.
MIN_VERSION = 100
SONAME = "libminlsh.so.%d" % ABI_MAJOR

# ---- errors ------------------------------------------------------------------

OK = 0
E_NULL = -1
E_PARAM = -2
E_NOMEM = -3
E_BUFSIZE = -4
E_IO = -5
E_FORMAT = -6
E_CORRUPT = -7
E_MISMATCH = -8
E_TOOBIG = -9
E_EXISTS = -10
E_NOTFOUND = -11
E_VERSION = -12
E_STATE = -13
E_UNSUPPORTED = -14
E_BUSY = -15


class Error(Exception):
    """An error reported by the C library.

    ``code`` is the negative ``MINLSH_E_*`` value, ``name`` its symbolic
    name (``minlsh_error_name``), ``message`` the library's description
    (``minlsh_strerror``) and ``function`` the C function that failed.
    ``str(err)`` combines them, e.g.
    ``minlsh_index_new: a parameter is out of range (MINLSH_E_PARAM)``.
    """

    def __new__(cls, code, *args, **kwargs):
        # Error(code) gives the subclass for the code (ParameterError, ...).
        if cls is Error:
            cls = _ERROR_CLASSES.get(int(code), Error)
        return Exception.__new__(cls, code, *args, **kwargs)

    def __init__(self, code, function="minlsh", detail=None):
        self.code = int(code)
        self.name = lib.minlsh_error_name(self.code).decode("ascii")
        self.message = lib.minlsh_strerror(self.code).decode("utf-8", "replace")
        self.function = function
        self.detail = detail
        text = "%s: %s (%s)" % (function, self.message, self.name)
        if detail:
            text += ": " + detail
        Exception.__init__(self, text)

    def __reduce__(self):
        return (_rebuild_error, (self.code, self.function, self.detail))


class ParameterError(Error, ValueError):
    """MINLSH_E_PARAM, MINLSH_E_NULL, MINLSH_E_VERSION and MINLSH_E_TOOBIG:
    an argument the library refuses. Also a ``ValueError``."""


class NoMemoryError(Error, MemoryError):
    """MINLSH_E_NOMEM. Also a ``MemoryError``."""


_ERROR_CLASSES = {
    E_NULL: ParameterError,
    E_PARAM: ParameterError,
    E_VERSION: ParameterError,
    E_TOOBIG: ParameterError,
    E_NOMEM: NoMemoryError,
}


def error(code, function="minlsh", detail=None):
    """The exception for a negative return code."""
    return Error(code, function, detail)


def _rebuild_error(code, function, detail):
    return Error(code, function, detail)


def check(rc, function, detail=None):
    """Raise the exception for ``rc`` if it is an error; return it otherwise."""
    if rc < 0:
        raise error(rc, function, detail)
    return rc


# ---- finding the library -----------------------------------------------------

def _candidates():
    """Where to look, in order: (description, path or name)."""
    env = os.environ.get("MINLSH_LIBRARY")
    if env:
        # An explicit choice: use it or fail, never fall back silently.
        return [("MINLSH_LIBRARY", env)]
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    local = os.path.join(here, SONAME)
    if os.path.exists(local):
        out.append(("next to the package", local))
    out.append(("the system loader", SONAME))
    found = ctypes.util.find_library("minlsh")
    if found and found != SONAME:
        out.append(("ctypes.util.find_library", found))
    return out


def _load():
    tried = []
    for how, where in _candidates():
        try:
            return ctypes.CDLL(where), where
        except OSError as exc:
            tried.append("%s (%s): %s" % (where, how, exc))
            if how == "MINLSH_LIBRARY":
                break
    raise ImportError(
        "minlsh: cannot load the C library libminlsh (%s). Install it (make install "
        "PREFIX=...), make the system loader find it (ldconfig or LD_LIBRARY_PATH), put "
        "%s next to the minlsh package, or set MINLSH_LIBRARY to its full path."
        % ("; ".join(tried), SONAME))


def _loaded_path(handle, fallback):
    """The file the loader actually opened (dladdr on one of its symbols):
    a name such as libminlsh.so.0 becomes a path, for messages and tests."""
    class DlInfo(Structure):
        _fields_ = [("dli_fname", c_char_p), ("dli_fbase", c_void_p),
                    ("dli_sname", c_char_p), ("dli_saddr", c_void_p)]
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        try:
            dladdr = ctypes.CDLL(ctypes.util.find_library("dl") or "libdl.so.2").dladdr
        except (OSError, AttributeError):
            return fallback
    info = DlInfo()
    addr = ctypes.cast(handle.minlsh_version_number, c_void_p)
    if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
        return os.fsdecode(info.dli_fname)
    return fallback


lib, _where = _load()
#: The path of the library in use.
LIBRARY = _loaded_path(lib, _where)

#: The same library through a ``PyDLL``: calls keep the interpreter lock,
#: and have no argtypes (arguments must already be ctypes objects of the
#: C types: c_void_p handles, c_size_t sizes, arrays, byref()). For the
#: hot calls of datasketch's per-item idioms, a query of a microsecond,
#: where the lock's release and the argument conversions cost as much as
#: the call; holding the lock also keeps a writer from starting during it.
gil_lib = ctypes.PyDLL(LIBRARY)
gil_lib.minlsh_index_query.restype = c_int
gil_lib.minlsh_index_query.argtypes = None

# ---- prototypes ----------------------------------------------------------------

u32p = POINTER(c_uint32)
u64p = POINTER(c_uint64)
sizep = POINTER(c_size_t)
dblp = POINTER(c_double)


class ShinglerOptions(Structure):
    """minlsh_shingler_options, version 1."""
    _fields_ = [("version", c_uint32), ("unit", c_uint32), ("k", c_uint32),
                ("flags", c_uint32), ("key", c_char_p), ("stopwords", c_char_p),
                ("stopwords_len", c_size_t), ("max_document_bytes", c_uint64)]


class PlanOptions(Structure):
    """minlsh_plan_options, version 1."""
    _fields_ = [("version", c_uint32), ("mode", c_uint32), ("k", c_uint32),
                ("reserved", c_uint32), ("threshold", c_double), ("weight_fp", c_double),
                ("weight_fn", c_double), ("target_recall", c_double)]


class LoadOptions(Structure):
    """minlsh_load_options, version 1."""
    _fields_ = [("version", c_uint32), ("reserved", c_uint32), ("family", c_void_p),
                ("config_id", c_uint64), ("alloc", c_void_p)]


class DedupOptions(Structure):
    """minlsh_dedup_options, version 2 (experimental API); pool stays NULL:
    the engine makes its own."""
    _fields_ = [("version", c_uint32), ("keep", c_uint32), ("group", c_uint32),
                ("verify", c_uint32), ("threshold", c_double), ("bands", c_uint32),
                ("rows", c_uint32), ("threads", c_uint32), ("all_pairs", c_uint32),
                ("max_bucket", c_uint64), ("memory", c_uint64), ("tmpdir", c_char_p),
                ("pool", c_void_p)]


class DedupDecision(Structure):
    """minlsh_dedup_decision (experimental API)."""
    _fields_ = [("cluster", c_uint64), ("representative", c_uint64),
                ("similarity", c_double), ("kept", c_uint32), ("exact", c_uint32)]


class DedupEdge(Structure):
    """minlsh_dedup_edge (experimental API): a verified pair of exact-group
    firsts, a < b."""
    _fields_ = [("a", c_uint64), ("b", c_uint64), ("similarity", c_double)]


class DedupStats(Structure):
    """minlsh_dedup_stats (experimental API)."""
    _fields_ = [("documents", c_uint64), ("empty", c_uint64), ("exact_groups", c_uint64),
                ("candidates", c_uint64), ("verified", c_uint64),
                ("capped_buckets", c_uint64), ("kept", c_uint64), ("dropped", c_uint64),
                ("bytes", c_uint64), ("temp_bytes", c_uint64), ("bands", c_uint32),
                ("rows", c_uint32), ("repeated_ids", c_uint64)]


class Preset(Structure):
    """minlsh_preset, version 1 (experimental API)."""
    _fields_ = [("version", c_uint32), ("unit", c_uint32), ("shingle_k", c_uint32),
                ("flags", c_uint32), ("num_perm", c_uint32), ("bands", c_uint32),
                ("rows", c_uint32), ("reserved", c_uint32), ("threshold", c_double),
                ("name", c_char_p), ("pipeline", c_char_p), ("source", c_char_p)]


PRESET_VERSION = 1

# int (*)(void *opaque, uint64_t id, double estimate, double *similarity)
VERIFY_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint64, c_double, POINTER(c_double))
#: minlsh_journal_record_fn: (opaque, op, id, data, len) -> 0 or a code.
JOURNAL_RECORD_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint32, c_uint64, c_void_p, c_size_t)
JOURNAL_READ, JOURNAL_WRITE = 0, 1
JOURNAL_INSERT, JOURNAL_REMOVE = 1, 2


class NovelOptions(Structure):
    """minlsh_novel_options, version 1 (experimental API)."""
    _fields_ = [("version", c_uint32), ("reserved", c_uint32), ("threshold", c_double),
                ("min_estimate", c_double), ("verify", VERIFY_FN), ("opaque", c_void_p)]


class NovelResult(Structure):
    """minlsh_novel_result (experimental API)."""
    _fields_ = [("match", c_uint64), ("similarity", c_double), ("novel", c_uint32),
                ("has_match", c_uint32), ("candidates", c_uint64), ("verified", c_uint64)]


class StoreOptions(Structure):
    """minlsh_store_options, version 1."""
    _fields_ = [("version", c_uint32), ("flags", c_uint32),
                ("shingler", POINTER(ShinglerOptions)), ("num_perm", c_uint32),
                ("scheme", c_uint32), ("seed", c_uint64), ("threshold", c_double),
                ("bands", c_uint32), ("rows", c_uint32), ("key", c_char_p),
                ("lock_timeout_ms", c_uint32), ("reserved", c_uint32),
                ("max_document_bytes", c_uint64), ("alloc", c_void_p)]


class StoreResult(Structure):
    """minlsh_store_result."""
    _fields_ = [("id", c_uint64), ("match", c_uint64), ("similarity", c_double),
                ("novel", c_uint32), ("inserted", c_uint32), ("has_match", c_uint32),
                ("exact", c_uint32), ("candidates", c_uint64)]


STORE_OPTIONS_VERSION = 1
STORE_CREATE, STORE_READONLY, STORE_SETS = 0x1, 0x2, 0x4
STORE_ANY_KEY = 0x20
STORE_ADD_ALWAYS = 0x1
NOVEL_OPTIONS_VERSION = 1
LOAD_OPTIONS_VERSION = 1
DEDUP_OPTIONS_VERSION = 2
#: The dedup memory option's value for no limit (MINLSH_DEDUP_MEMORY_UNLIMITED).
DEDUP_MEMORY_UNLIMITED = 2**64 - 1
KEEP_FIRST, KEEP_LONGEST = 1, 2
GROUP_COMPONENTS, GROUP_STRICT = 1, 2
VERIFY_EXACT, VERIFY_SIGNATURE = 1, 2
#: minlsh_jsonl_parse_block's flag: the block starts its input (a byte-order mark is left out).
JSONL_INPUT_START = 1
# The binding sets every field itself, so version 1 (the layout, shared by
# version 2, whose only change is the C defaults) is all it needs.
SHINGLER_OPTIONS_VERSION = 1
PLAN_OPTIONS_VERSION = 1

# Every function of minlsh.h the package calls. All are required: the import
# fails on a library that lacks one.
_PROTOTYPES = [
    # name, restype, argtypes
    ("minlsh_version_number", c_uint32, []),
    ("minlsh_version_string", c_char_p, []),
    ("minlsh_strerror", c_char_p, [c_int]),
    ("minlsh_error_name", c_char_p, [c_int]),
    ("minlsh_key_bytes", c_size_t, []),
    ("minlsh_fingerprint_bytes", c_size_t, []),
    ("minlsh_family_k_max", c_uint32, []),
    ("minlsh_shingle_k_max", c_uint32, []),
    ("minlsh_empty_value", c_uint32, []),
    ("minlsh_simd_kernel_name", c_char_p, []),
    ("minlsh_siphash24", c_int, [u64p, c_char_p, c_char_p, c_size_t]),
    ("minlsh_default_key", c_void_p, []),
    # shingler
    ("minlsh_shingler_options_init", c_int, [POINTER(ShinglerOptions), c_uint32]),
    ("minlsh_shingler_new", c_int, [POINTER(c_void_p), POINTER(ShinglerOptions), c_void_p]),
    ("minlsh_shingler_free", None, [c_void_p]),
    ("minlsh_shingler_unit", c_uint32, [c_void_p]),
    ("minlsh_shingler_k", c_uint32, [c_void_p]),
    ("minlsh_shingler_flags", c_uint32, [c_void_p]),
    ("minlsh_unicode_version", c_uint32, []),  # experimental
    ("minlsh_shingler_config_id", c_int, [u64p, c_void_p]),
    ("minlsh_shingler_hash", c_int, [c_void_p, c_char_p, c_size_t, c_void_p, c_char_p]),
    ("minlsh_shingleset_new", c_int, [POINTER(c_void_p), c_void_p]),
    ("minlsh_shingleset_free", None, [c_void_p]),
    ("minlsh_shingleset_count", c_size_t, [c_void_p]),
    ("minlsh_shingleset_copy_hashes", c_int, [c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_jaccard_sorted", c_int, [dblp, c_void_p, c_size_t, c_void_p, c_size_t]),
    ("minlsh_shinglestream_new", c_int, [POINTER(c_void_p), c_void_p, c_void_p]),
    ("minlsh_shinglestream_free", None, [c_void_p]),
    ("minlsh_shinglestream_feed", c_int, [c_void_p, c_char_p, c_size_t]),
    ("minlsh_shinglestream_finish", c_int, [c_void_p, c_void_p, c_char_p]),
    ("minlsh_shinglestream_reset", c_int, [c_void_p]),
    ("minlsh_shinglestream_bytes", c_uint64, [c_void_p]),
    # family and signatures
    ("minlsh_family_new", c_int, [POINTER(c_void_p), c_uint32, c_uint64, c_void_p]),
    ("minlsh_family_new_scheme", c_int,
     [POINTER(c_void_p), c_uint32, c_uint64, c_uint32, c_void_p]),
    ("minlsh_family_scheme", c_uint32, [c_void_p]),
    ("minlsh_family_free", None, [c_void_p]),
    ("minlsh_family_copy_coefficients", c_int, [c_void_p, c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_family_sign", c_int, [c_void_p, c_void_p, c_size_t, c_void_p, c_size_t, sizep]),
    ("minlsh_family_update", c_int, [c_void_p, c_void_p, c_size_t, c_void_p, c_size_t]),
    ("minlsh_family_sign_text", c_int,
     [c_void_p, c_void_p, c_char_p, c_size_t, c_void_p, c_size_t, sizep]),
    ("minlsh_family_sign_batch", c_int,
     [c_void_p, c_void_p, POINTER(c_void_p), POINTER(c_size_t), c_size_t, c_uint32,
      c_void_p, c_size_t, sizep, POINTER(c_int32)]),
    ("minlsh_signature_merge", c_int, [c_void_p, c_void_p, c_size_t]),
    ("minlsh_signature_estimate", c_int, [dblp, c_void_p, c_void_p, c_size_t]),
    ("minlsh_signature_is_empty", c_int, [c_void_p, c_size_t]),
    # planner and band keys
    ("minlsh_plan_options_init", c_int, [POINTER(PlanOptions), c_uint32]),
    ("minlsh_plan_compute", c_int,
     [u32p, u32p, dblp, dblp, POINTER(PlanOptions)]),
    ("minlsh_plan_probability", c_int, [dblp, c_uint32, c_uint32, c_double]),
    ("minlsh_plan_threshold", c_int, [dblp, c_uint32, c_uint32]),
    ("minlsh_band_keys", c_int,
     [c_void_p, c_size_t, c_uint32, c_uint32, c_void_p, c_size_t, sizep]),
    # index
    ("minlsh_index_new", c_int,
     [POINTER(c_void_p), c_void_p, c_uint64, c_uint32, c_uint32, c_void_p]),
    ("minlsh_index_free", None, [c_void_p]),
    ("minlsh_index_count", c_uint64, [c_void_p]),
    ("minlsh_index_bands", c_uint32, [c_void_p]),
    ("minlsh_index_rows", c_uint32, [c_void_p]),
    ("minlsh_index_k", c_uint32, [c_void_p]),
    ("minlsh_index_seed", c_uint64, [c_void_p]),
    ("minlsh_index_scheme", c_uint32, [c_void_p]),
    ("minlsh_index_config_id", c_uint64, [c_void_p]),
    ("minlsh_index_insert", c_int, [c_void_p, c_uint64, c_void_p, c_size_t]),
    ("minlsh_index_remove", c_int, [c_void_p, c_uint64]),
    ("minlsh_index_contains", c_int, [c_void_p, c_uint64]),
    ("minlsh_index_copy_ids", c_int, [c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_index_copy_signature", c_int, [c_void_p, c_uint64, c_void_p, c_size_t, sizep]),
    ("minlsh_index_query", c_int,
     [c_void_p, c_void_p, c_size_t, c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_pairs_from_index", c_int,
     [POINTER(c_void_p), c_void_p, c_double, c_uint64, c_void_p]),
    ("minlsh_pairs_free", None, [c_void_p]),
    ("minlsh_pairs_count", c_size_t, [c_void_p]),
    ("minlsh_pairs_copy_pair", c_int, [u64p, u64p, dblp, c_void_p, c_size_t]),
    ("minlsh_clusters_from_index", c_int, [POINTER(c_void_p), c_void_p, c_double, c_void_p]),
    ("minlsh_clusters_from_edges", c_int,
     [POINTER(c_void_p), c_void_p, c_void_p, c_size_t, c_void_p]),
    ("minlsh_clusters_free", None, [c_void_p]),
    ("minlsh_clusters_count", c_size_t, [c_void_p]),
    ("minlsh_clusters_copy_members", c_int, [c_void_p, c_size_t, c_void_p, c_size_t, sizep]),
    ("minlsh_index_set_metadata", c_int, [c_void_p, c_char_p, c_size_t]),
    ("minlsh_index_copy_metadata", c_int, [c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_index_save", c_int, [c_void_p, c_char_p]),
    ("minlsh_load_options_init", c_int, [POINTER(LoadOptions), c_uint32]),
    ("minlsh_index_load", c_int, [POINTER(c_void_p), c_char_p, POINTER(LoadOptions)]),
    ("minlsh_index_insert_many", c_int,
     [c_void_p, c_void_p, c_void_p, c_size_t, c_size_t, sizep]),
    ("minlsh_index_query_many", c_int,
     [c_void_p, c_void_p, c_size_t, c_size_t, c_void_p, c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_index_merge", c_int, [c_void_p, c_void_p, c_uint64]),
    ("minlsh_index_save_buffer", c_int, [c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_index_load_buffer", c_int,
     [POINTER(c_void_p), c_char_p, c_size_t, POINTER(LoadOptions)]),
    # signature matrix
    ("minlsh_sigmatrix_new", c_int, [POINTER(c_void_p), c_void_p, c_uint64, c_void_p]),
    ("minlsh_sigmatrix_free", None, [c_void_p]),
    ("minlsh_sigmatrix_count", c_uint64, [c_void_p]),
    ("minlsh_sigmatrix_k", c_uint32, [c_void_p]),
    ("minlsh_sigmatrix_seed", c_uint64, [c_void_p]),
    ("minlsh_sigmatrix_scheme", c_uint32, [c_void_p]),
    ("minlsh_sigmatrix_config_id", c_uint64, [c_void_p]),
    ("minlsh_sigmatrix_append", c_int, [c_void_p, c_void_p, c_size_t, u64p]),
    ("minlsh_sigmatrix_copy_column", c_int, [c_void_p, c_uint64, c_void_p, c_size_t, sizep]),
    ("minlsh_sigmatrix_view_column", c_void_p, [c_void_p, c_uint64]),
    ("minlsh_sigmatrix_estimate", c_int, [dblp, c_void_p, c_uint64, c_uint64]),
    ("minlsh_sigmatrix_set_metadata", c_int, [c_void_p, c_char_p, c_size_t]),
    ("minlsh_sigmatrix_copy_metadata", c_int, [c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_sigmatrix_save", c_int, [c_void_p, c_char_p]),
    ("minlsh_sigmatrix_save_buffer", c_int, [c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_sigmatrix_load", c_int, [POINTER(c_void_p), c_char_p, POINTER(LoadOptions)]),
    ("minlsh_sigmatrix_load_buffer", c_int,
     [POINTER(c_void_p), c_char_p, c_size_t, POINTER(LoadOptions)]),
    ("minlsh_sigmatrix_map", c_int, [POINTER(c_void_p), c_char_p, POINTER(LoadOptions)]),
    ("minlsh_pairs_from_matrix", c_int,
     [POINTER(c_void_p), c_void_p, c_uint32, c_uint32, c_double, c_uint64, c_void_p]),
    ("minlsh_clusters_from_matrix", c_int,
     [POINTER(c_void_p), c_void_p, c_uint32, c_uint32, c_double, c_void_p]),
    # experimental: bounded queries and pre-tokenized signing
    ("minlsh_index_query_limited", c_int,
     [c_void_p, c_void_p, c_size_t, c_uint64, c_void_p, c_void_p, c_size_t, sizep, u32p]),
    ("minlsh_family_sign_tokens", c_int,
     [c_void_p, c_char_p, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t, c_void_p,
      c_size_t, sizep]),
    ("minlsh_family_sign_delimited", c_int,
     [c_void_p, c_char_p, c_char_p, c_size_t, c_uint32, c_void_p, c_size_t, c_void_p,
      c_size_t, sizep]),
    ("minlsh_family_sign_token_array", c_int,
     [c_void_p, c_char_p, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t, c_void_p,
      c_size_t, sizep]),
    # the dedup engine (experimental API: the library ships with the binding,
    # so these are required like the others)
    ("minlsh_dedup_options_init", c_int, [POINTER(DedupOptions), c_uint32]),
    ("minlsh_dedup_plan", c_int,
     [POINTER(c_uint32), POINTER(c_uint32), POINTER(DedupOptions), c_uint32]),
    ("minlsh_dedup_default_memory", c_uint64, []),
    ("minlsh_dedup_canonical_id", c_int, [c_char_p, c_size_t, c_char_p, c_size_t, sizep]),
    ("minlsh_dedup_new", c_int,
     [POINTER(c_void_p), c_void_p, c_void_p, POINTER(DedupOptions), c_void_p]),
    ("minlsh_dedup_free", None, [c_void_p]),
    ("minlsh_dedup_count", c_uint64, [c_void_p]),
    ("minlsh_dedup_add_texts", c_int,
     [c_void_p, POINTER(c_void_p), POINTER(c_size_t), c_size_t, POINTER(c_int32)]),
    ("minlsh_dedup_run", c_int, [c_void_p]),
    ("minlsh_dedup_copy_decisions", c_int,
     [c_void_p, c_uint64, POINTER(DedupDecision), c_size_t, sizep]),
    ("minlsh_dedup_estimate", c_int, [dblp, c_void_p, c_uint64, c_uint64]),
    ("minlsh_dedup_copy_stats", c_int, [POINTER(DedupStats), c_void_p]),
    ("minlsh_pairs_from_dedup", c_int, [POINTER(c_void_p), c_void_p, c_uint64, c_void_p]),
    ("minlsh_clusters_from_dedup", c_int, [POINTER(c_void_p), c_void_p, c_void_p]),
    # the engine's stages over whole partitions (minlsh.dask): arrays are
    # passed as addresses (numpy's .ctypes.data)
    ("minlsh_family_sign_texts", c_int,
     [c_void_p, c_void_p, POINTER(c_void_p), POINTER(c_size_t), c_size_t, c_void_p, c_size_t,
      sizep, c_void_p, c_void_p, c_void_p, c_void_p]),
    ("minlsh_jsonl_parse_line", c_int,
     [c_char_p, c_size_t, c_char_p, c_char_p, c_char_p, c_size_t, sizep, sizep, sizep, c_char_p,
      c_size_t]),
    ("minlsh_jsonl_parse_block", c_int,
     [c_char_p, c_size_t, c_uint32, c_char_p, c_char_p, c_void_p, c_size_t, c_void_p, c_void_p,
      c_void_p, c_void_p, c_void_p, c_size_t, sizep]),
    ("minlsh_signatures_band_keys", c_int,
     [c_void_p, c_size_t, c_size_t, c_uint32, c_uint32, c_void_p, c_size_t, sizep]),
    ("minlsh_shingler_hash_texts", c_int,
     [c_void_p, POINTER(c_void_p), POINTER(c_size_t), c_size_t, c_void_p, c_void_p, c_size_t,
      sizep, c_void_p, c_void_p]),
    ("minlsh_sets_jaccard", c_int,
     [c_void_p, c_void_p, c_size_t, c_void_p, c_void_p, c_size_t, c_void_p]),
    ("minlsh_buckets_pair", c_int,
     [c_void_p, c_void_p, c_void_p, c_size_t, c_uint64, c_void_p, c_void_p, c_size_t, sizep,
      c_void_p, c_size_t, sizep, c_void_p]),
    ("minlsh_dedup_decide", c_int,
     [POINTER(DedupEdge), c_size_t, c_uint64, c_void_p, c_void_p, c_uint32, c_uint32,
      POINTER(DedupDecision), c_void_p]),
    ("minlsh_novel_options_init", c_int, [POINTER(NovelOptions), c_uint32]),
    ("minlsh_preset_count", c_uint32, []),
    ("minlsh_preset_get", c_int, [POINTER(Preset), c_uint32]),
    ("minlsh_preset_find", c_int, [POINTER(Preset), c_char_p]),
    ("minlsh_norm_flags_format", c_int, [c_uint32, c_char_p, c_size_t, sizep]),
    ("minlsh_filelock_new", c_int, [POINTER(c_void_p), c_char_p, c_uint32, c_uint32, c_void_p]),
    ("minlsh_filelock_free", None, [c_void_p]),
    ("minlsh_index_map", c_int, [POINTER(c_void_p), c_char_p, POINTER(LoadOptions)]),
    ("minlsh_index_save_mapped", c_int, [c_void_p, c_char_p]),
    ("minlsh_journal_open", c_int,
     [POINTER(c_void_p), c_void_p, c_char_p, c_uint32, JOURNAL_RECORD_FN, c_void_p]),
    ("minlsh_journal_append", c_int,
     [c_void_p, c_uint32, c_uint64, c_void_p, c_size_t, c_char_p, c_size_t]),
    ("minlsh_journal_sync", c_int, [c_void_p]),
    ("minlsh_journal_bytes", c_uint64, [c_void_p]),
    ("minlsh_journal_records", c_uint64, [c_void_p]),
    ("minlsh_journal_compact_due", c_int, [c_void_p, c_void_p]),
    ("minlsh_journal_compact", c_int, [c_void_p, c_void_p, c_char_p]),
    ("minlsh_journal_free", None, [c_void_p]),
    ("minlsh_store_options_init", c_int, [POINTER(StoreOptions), c_uint32]),
    ("minlsh_store_open", c_int, [POINTER(c_void_p), c_char_p, POINTER(StoreOptions)]),
    ("minlsh_store_free", None, [c_void_p]),
    ("minlsh_store_begin", c_int, [c_void_p]),
    ("minlsh_store_commit", c_int, [c_void_p]),
    ("minlsh_store_rollback", c_int, [c_void_p]),
    ("minlsh_store_sync", c_int, [c_void_p]),
    ("minlsh_store_refresh", c_int, [c_void_p]),
    ("minlsh_store_add", c_int,
     [POINTER(StoreResult), c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_uint32]),
    ("minlsh_store_query", c_int, [POINTER(StoreResult), c_void_p, c_char_p, c_size_t]),
    ("minlsh_store_remove", c_int, [c_void_p, c_uint64]),
    ("minlsh_store_remove_name", c_int, [c_void_p, c_char_p, c_size_t]),
    ("minlsh_store_find_name", c_int, [u64p, c_void_p, c_char_p, c_size_t]),
    ("minlsh_store_copy_name", c_int, [c_void_p, c_uint64, c_void_p, c_size_t, sizep]),
    ("minlsh_store_count", c_uint64, [c_void_p]),
    ("minlsh_store_threshold", c_double, [c_void_p]),
    ("minlsh_store_view_shingler", c_void_p, [c_void_p]),
    ("minlsh_store_compact_due", c_int, [c_void_p]),
    ("minlsh_store_compact", c_int, [c_void_p]),
    ("minlsh_store_encode_metadata", c_int,
     [c_void_p, c_void_p, c_double, c_uint64, c_char_p, u64p, c_void_p, c_size_t, sizep]),
    ("minlsh_store_decode_metadata", c_int,
     [POINTER(c_double), u64p, POINTER(c_uint32), c_void_p, u64p, c_void_p, c_size_t, sizep]),
    ("minlsh_index_insert_novel", c_int,
     [POINTER(NovelResult), c_void_p, c_uint64, c_void_p, c_size_t, POINTER(NovelOptions)]),
]



def _declare():
    missing = []
    for name, restype, argtypes in _PROTOTYPES:
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise ImportError("minlsh: the library %s lacks %s; it is older than this binding"
                          % (LIBRARY, ", ".join(missing)))


def _check_version():
    number = lib.minlsh_version_number()
    text = lib.minlsh_version_string().decode("ascii", "replace")
    if number // 10000 != ABI_MAJOR or number < MIN_VERSION:
        raise ImportError(
            "minlsh: the library %s is version %s; this binding needs %d.x with x >= %d "
            "(a different major version has a different ABI)"
            % (LIBRARY, text, ABI_MAJOR, MIN_VERSION // 100 % 100))
    return text


if not hasattr(lib, "minlsh_version_number"):
    raise ImportError("minlsh: %s is not the minlsh library" % LIBRARY)
lib.minlsh_version_number.restype = c_uint32
lib.minlsh_version_number.argtypes = []
lib.minlsh_version_string.restype = c_char_p
lib.minlsh_version_string.argtypes = []
VERSION = _check_version()
_declare()

EMPTY_VALUE = lib.minlsh_empty_value()
FAMILY_K_MAX = lib.minlsh_family_k_max()
SHINGLE_K_MAX = lib.minlsh_shingle_k_max()
KEY_BYTES = lib.minlsh_key_bytes()
FINGERPRINT_BYTES = lib.minlsh_fingerprint_bytes()
DEFAULT_KEY = ctypes.string_at(lib.minlsh_default_key(), KEY_BYTES)
UINT64_MAX = (1 << 64) - 1


# ---- the optional accelerator --------------------------------------------------

#: What minlsh._speedups's functions promise (its API constant); another
#: value is a stale build of another version of the package.
SPEEDUPS_API = 3


def _load_speedups():
    """(module, path) of the C accelerator minlsh._speedups, or (None, None).

    MINLSH_SPEEDUPS=PATH loads that file (a build from the source tree,
    make python-speedups) and fails if it cannot; MINLSH_SPEEDUPS=0 turns it
    off; otherwise the one pip built next to the package is used when it is
    there, and its absence is silent: the ctypes paths give the same results.
    """
    choice = os.environ.get("MINLSH_SPEEDUPS", "")
    if choice == "0":
        return None, None
    if choice:
        import importlib.machinery
        import importlib.util
        try:
            loader = importlib.machinery.ExtensionFileLoader("minlsh._speedups", choice)
            spec = importlib.util.spec_from_file_location("minlsh._speedups", choice,
                                                          loader=loader)
            mod = importlib.util.module_from_spec(spec)
            loader.exec_module(mod)
        except (ImportError, OSError) as exc:
            raise ImportError("minlsh: MINLSH_SPEEDUPS=%s: cannot load it: %s"
                              % (choice, exc)) from None
        if getattr(mod, "API", None) != SPEEDUPS_API:
            raise ImportError("minlsh: MINLSH_SPEEDUPS=%s is for another version of the "
                              "package (API %s, expected %d)"
                              % (choice, getattr(mod, "API", None), SPEEDUPS_API))
        return mod, choice
    try:
        from . import _speedups as mod
    except ImportError:
        return None, None
    if getattr(mod, "API", None) != SPEEDUPS_API:
        return None, None
    return mod, mod.__file__


speedups, SPEEDUPS = _load_speedups()
if speedups is not None:
    # The helpers call the library ctypes loaded, never a copy of their own.
    speedups.bind(ctypes.cast(lib.minlsh_index_query, c_void_p).value,
                  ctypes.cast(lib.minlsh_family_sign_token_array, c_void_p).value)


# ---- small helpers shared by the modules -------------------------------------

def as_bytes(data, what="text"):
    """bytes for a str (UTF-8) or a bytes-like object.

    bytes are immutable and passed as they are; anything mutable (bytearray,
    memoryview, array) is copied first, so that another thread changing it
    while the library reads it (the interpreter lock is released during the
    call) cannot produce a torn read.
    """
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    try:
        return bytes(memoryview(data))
    except TypeError:
        raise TypeError("%s must be str or bytes-like, not %s"
                        % (what, type(data).__name__)) from None


def as_u64(value, what):
    """A Python int in 0..2^64-1 (ValueError/TypeError otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = value.__index__()
        except AttributeError:
            raise TypeError("%s must be an integer, not %s"
                            % (what, type(value).__name__)) from None
    if not 0 <= value <= UINT64_MAX:
        raise ValueError("%s must be in 0..2**64-1, got %d" % (what, value))
    return value


def address(buf):
    """The address of a writable ctypes array, array.array or numpy array."""
    if numpy is not None and isinstance(buf, numpy.ndarray):
        return buf.ctypes.data
    if isinstance(buf, ctypes.Array):
        return ctypes.addressof(buf)
    return buf.buffer_info()[0]  # array.array


class RWLock:
    """Many readers or one writer. The library needs exclusive access for
    calls that modify an index and allows concurrent reads; this provides
    exactly that for the Python objects that own such handles.

    Reads are the hot path (a query is a few microseconds): taking and
    releasing a read lock is one plain mutex each, and the condition is
    only used when someone has to wait."""

    def __init__(self):
        self._mutex = threading.Lock()
        self._cond = threading.Condition(self._mutex)
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        # The context managers hold no state of their own: one of each
        # serves every thread.
        self.reading = _Reading(self)
        self.writing = _Writing(self)

    def acquire_read(self):
        with self._mutex:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1

    def release_read(self):
        with self._mutex:
            self._readers -= 1
            if self._readers == 0 and self._writers_waiting:
                self._cond.notify_all()

    def acquire_write(self):
        with self._mutex:
            self._writers_waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writer = True

    def release_write(self):
        with self._mutex:
            self._writer = False
            self._cond.notify_all()


class _Reading:
    __slots__ = ("lock",)

    def __init__(self, lock):
        self.lock = lock

    def __enter__(self):
        self.lock.acquire_read()

    def __exit__(self, *exc):
        self.lock.release_read()


class _Writing(_Reading):
    __slots__ = ()

    def __enter__(self):
        self.lock.acquire_write()

    def __exit__(self, *exc):
        self.lock.release_write()


def reading(lock):
    """``with reading(lock):`` holds a read lock for the block."""
    return lock.reading


def writing(lock):
    """``with writing(lock):`` holds the write lock for the block."""
    return lock.writing


def save_to_bytes(save_buffer, handle, name):
    """The bytes a minlsh_*_save_buffer call writes: its size asked first
    (a NULL buffer of 0 bytes), then the buffer filled."""
    n = c_size_t()
    rc = save_buffer(handle, None, 0, ctypes.byref(n))
    if rc != E_BUFSIZE:
        check(rc, name)
    buf = ctypes.create_string_buffer(n.value)
    check(save_buffer(handle, buf, n.value, ctypes.byref(n)), name)
    return buf.raw[:n.value]


def take_pairs(handle):
    """Every pair of a minlsh_pairs handle as (a, b, similarity) tuples, in
    its order; the handle is freed, whatever happens."""
    try:
        a, b, s = c_uint64(), c_uint64(), ctypes.c_double()
        out = []
        for i in range(lib.minlsh_pairs_count(handle)):
            check(lib.minlsh_pairs_copy_pair(ctypes.byref(a), ctypes.byref(b), ctypes.byref(s),
                                             handle, i), "minlsh_pairs_copy_pair")
            out.append((a.value, b.value, s.value))
        return out
    finally:
        lib.minlsh_pairs_free(handle)


def take_clusters(handle):
    """Every group of a minlsh_clusters handle, members ascending, as lists
    of ints; the handle is freed, whatever happens."""
    try:
        out = []
        cap = 64
        buf = (c_uint64 * cap)()
        got = c_size_t()
        for i in range(lib.minlsh_clusters_count(handle)):
            rc = lib.minlsh_clusters_copy_members(handle, i, buf, cap, ctypes.byref(got))
            if rc == E_BUFSIZE:
                cap = max(got.value, 2 * cap)
                buf = (c_uint64 * cap)()
                rc = lib.minlsh_clusters_copy_members(handle, i, buf, cap, ctypes.byref(got))
            check(rc, "minlsh_clusters_copy_members")
            out.append(buf[:got.value])
        return out
    finally:
        lib.minlsh_clusters_free(handle)


def canonical_id(ident):
    """minlsh_dedup_canonical_id of a Python id as bytes, or None when the
    library refuses its kind. An id is a str or a number (int, or a finite
    float); str goes in as JSON text (json.dumps), numbers as their decimal
    text, so the library compares them as the command compares JSON ids."""
    if isinstance(ident, bool) or not isinstance(ident, (str, int, float)):
        return None
    if isinstance(ident, str):
        text = _json.dumps(ident).encode("ascii")
    elif isinstance(ident, int):
        text = str(ident).encode("ascii")
    else:
        text = repr(ident).encode("ascii")  # nan and inf: refused below
    cap = len(text) + 32
    out = ctypes.create_string_buffer(cap)
    n = c_size_t()
    if lib.minlsh_dedup_canonical_id(text, len(text), out, cap, ctypes.byref(n)) != 0:
        return None
    return out.raw[:n.value]


def dedup_plan(opts, k):
    """(bands, rows) of minlsh_dedup_plan for a DedupOptions and k; raises
    ParameterError where no banding reaches the recall."""
    b, r = c_uint32(), c_uint32()
    check(lib.minlsh_dedup_plan(ctypes.byref(b), ctypes.byref(r), ctypes.byref(opts), k),
          "minlsh_dedup_plan",
          "no banding of %d hash values reaches recall 0.999 at threshold %g; use a larger "
          "num_perm or give bands and rows" % (k, opts.threshold))
    return b.value, r.value
