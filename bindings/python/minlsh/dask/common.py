"""What every stage of minlsh.dask shares: the configuration the workers
receive, their shingler, and small helpers for frames."""

import ctypes

import dask.dataframe as dd
import numpy as np

from .. import _ffi
from .._minhash import scheme_id
from .._shingle import Shingler

_SHINGLER_OPTIONS = ("lowercase", "strip_punct", "collapse_space", "normalize", "html", "key",
                     "nfkc", "casefold", "unicode_punct", "unicode_space", "fold_digits",
                     "cjk_words", "stopwords", "max_document_bytes")


def _banding(threshold, num_perm, verify, bands, rows):
    """(bands, rows, how) exactly as the minlsh command chooses them."""
    if bands is not None or rows is not None:
        b = int(bands) if bands is not None else None
        r = int(rows) if rows is not None else None
        if b is None:
            b = num_perm // r if r > 0 else 0
        if r is None:
            r = num_perm // b if b > 0 else 0
        if b <= 0 or r <= 0 or b * r > num_perm:
            raise ValueError("bands=%r rows=%r do not fit num_perm=%d" % (bands, rows, num_perm))
        return b, r, "manual"
    # The library's plan (minlsh_dedup_plan), as every front end.
    opts = _ffi.DedupOptions()
    _ffi.check(_ffi.lib.minlsh_dedup_options_init(ctypes.byref(opts),
                                                  _ffi.DEDUP_OPTIONS_VERSION),
               "minlsh_dedup_options_init")
    opts.threshold = threshold
    try:
        b, r = _ffi.dedup_plan(opts, num_perm)
    except _ffi.Error as exc:
        raise ValueError(str(exc)) from None
    return b, r, "recall"


class _Config:
    """Everything the workers need, as plain picklable values."""

    def __init__(self, shingle, shingler_options, num_perm, seed, threads, bands, rows,
                 threshold, verify, max_bucket, scheme=0, memory=0, tmpdir=None):
        self.shingle = shingle
        self.shingler_options = tuple(sorted(shingler_options.items()))
        self.num_perm = num_perm
        # The leading values of each signature the run makes and reads
        # (pipeline.dedup may cut it to the band keys' b x r).
        self.sig_values = num_perm
        self.seed = seed
        self.scheme = scheme  # MINLSH_SCHEME_*
        self.threads = threads
        self.bands = bands
        self.rows = rows
        self.threshold = threshold
        self.verify = verify
        self.max_bucket = max_bucket
        self.memory = memory  # bytes kept in memory per process (0: no limit)
        self.tmpdir = tmpdir  # where the rest goes (None: Python's default)

    def sig_columns(self, suffix=""):
        return ["s%d%s" % (i, suffix) for i in range(self.num_perm)]


def memory_bytes(memory):
    """memory= as bytes: a number of bytes, or a string as the command's
    --memory takes it (digits, then K, M or G for 2^10, 2^20, 2^30); None
    and 0 mean no limit."""
    if memory is None:
        return 0
    if isinstance(memory, str):
        units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
        digits, unit = memory, 1
        if memory[-1:].lower() in units:
            digits, unit = memory[:-1], units[memory[-1].lower()]
        if not digits.isdigit() or not digits.isascii():
            raise ValueError("memory must be bytes or a size such as 512M or 4G, not %r"
                             % memory)
        return int(digits) * unit
    if isinstance(memory, bool) or not isinstance(memory, int) or memory < 0:
        raise ValueError("memory must be bytes (an int >= 0) or a size such as 512M, not %r"
                         % (memory,))
    return memory


def _config(shingle, shingler_options, num_perm, seed, threads, bands, rows, threshold, verify,
            max_bucket, scheme="classic", memory=None, tmpdir=None):
    unknown = set(shingler_options) - set(_SHINGLER_OPTIONS)
    if unknown:
        raise TypeError("unknown option%s: %s" % ("s" if len(unknown) > 1 else "",
                                                  ", ".join(sorted(unknown))))
    opts = dict(shingler_options)
    if isinstance(opts.get("stopwords"), (list, tuple)):
        opts["stopwords"] = " ".join(opts["stopwords"])
    Shingler.from_spec(shingle, **opts)  # refuse bad options here, not on the workers
    if isinstance(num_perm, bool) or not isinstance(num_perm, int) \
            or not 1 <= num_perm <= _ffi.FAMILY_K_MAX:
        raise ValueError("num_perm must be 1..%d" % _ffi.FAMILY_K_MAX)
    if tmpdir is not None and (not isinstance(tmpdir, str) or not tmpdir):
        raise ValueError("tmpdir must be a directory name (None: the default), not %r"
                         % (tmpdir,))
    return _Config(shingle, opts, num_perm, _ffi.as_u64(seed, "seed"), int(threads), bands,
                   rows, threshold, verify, max_bucket, scheme_id(scheme),
                   memory_bytes(memory), tmpdir)


_shinglers = {}


def _shingler(cfg):
    """The worker's Shingler for cfg (one per process: they are immutable)."""
    key = (cfg.shingle, cfg.shingler_options)
    sh = _shinglers.get(key)
    if sh is None:
        sh = Shingler.from_spec(cfg.shingle, **dict(cfg.shingler_options))
        _shinglers[key] = sh
    return sh


def _id_key(v):
    """The id as the library compares ids (minlsh_dedup_canonical_id:
    numbers by value, so 1 and 1.0 are one id and "1" another)."""
    key = _ffi.canonical_id(v)
    return key.decode("utf-8", "surrogateescape") if key is not None else "!%r" % (v,)


def _copartitioned(left, lcol, right, rcol, func, meta, npartitions, *args):
    """func(left_part, right_part, *args) on hash-co-partitioned frames."""
    left = left.shuffle(lcol, npartitions=npartitions)
    right = right.shuffle(rcol, npartitions=npartitions)
    return dd.map_partitions(func, left, right, *args, meta=meta, align_dataframes=False)


_triu_cache = {}


def _triu(m):
    """The (i, j), i < j, index pairs of m items (cached for small m)."""
    got = _triu_cache.get(m)
    if got is None:
        got = np.triu_indices(m, 1)
        if m <= 64:
            _triu_cache[m] = got
    return got
