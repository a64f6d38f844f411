"""The signature matrix (minlsh_sigmatrix): signatures by position, saved,
loaded or memory-mapped, and all-pairs banding without an index."""

from __future__ import annotations

import ctypes
import os
from ctypes import byref, c_double, c_size_t, c_uint64, c_void_p
from typing import Any, List, Optional, Tuple, Union

from . import _ffi
from ._ffi import check, lib
from ._minhash import SCHEMES, MinHash, family, matrix_bytes


def _load_options(num_perm, seed, config_id, scheme=None):
    opts = _ffi.LoadOptions()
    check(lib.minlsh_load_options_init(byref(opts), _ffi.LOAD_OPTIONS_VERSION),
          "minlsh_load_options_init")
    fam = None
    if num_perm is not None or seed is not None or scheme is not None:
        fam = family(128 if num_perm is None else num_perm, 1 if seed is None else seed,
                     "classic" if scheme is None else scheme)
        opts.family = fam.handle
        opts.config_id = _ffi.as_u64(config_id, "config_id")
    return opts, fam


class SigMatrix:
    """Signatures of k uint32 values addressed by position 0..n-1, with the
    family's num_perm and seed and a config id (minlsh_sigmatrix).

    ``SigMatrix(num_perm=128, seed=1, config_id=0)`` starts empty;
    :meth:`append` and :meth:`extend` add MinHash objects or rows of
    values; ``m[i]`` is position i as a MinHash; :meth:`save` writes the
    file format of docs/format.md, :meth:`load` reads it back, :meth:`map`
    maps it read-only (append then raises minlsh.Error MINLSH_E_STATE);
    :meth:`to_bytes`/:meth:`from_bytes` the same bytes in memory (also what
    pickling uses). :meth:`pairs` and :meth:`clusters` band the whole
    matrix without an index (minlsh_pairs_from_matrix,
    minlsh_clusters_from_matrix).

    Reads may run concurrently; append, extend, set_metadata and close need
    exclusive use (the caller's to provide, as for any Python list).
    """

    def __init__(self, num_perm: int = 128, seed: int = 1, config_id: int = 0, *,
                 scheme: str = "classic") -> None:
        self._handle = None
        fam = family(num_perm, seed, scheme)
        h = c_void_p()
        check(lib.minlsh_sigmatrix_new(byref(h), fam.handle,
                                       _ffi.as_u64(config_id, "config_id"), None),
              "minlsh_sigmatrix_new")
        self._handle = h.value

    @classmethod
    def _adopt(cls, handle):
        self = cls.__new__(cls)
        self._handle = handle
        return self

    def close(self):
        """Release the matrix now (a mapped one is unmapped)."""
        if self._handle:
            lib.minlsh_sigmatrix_free(self._handle)
            self._handle = None

    def __del__(self, _free=lib.minlsh_sigmatrix_free):
        if getattr(self, "_handle", None):
            _free(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _h(self):
        if not self._handle:
            raise ValueError("the SigMatrix is closed")
        return self._handle

    @property
    def num_perm(self) -> int:
        """k, the values per signature."""
        return lib.minlsh_sigmatrix_k(self._h())

    @property
    def seed(self) -> int:
        """The family's seed."""
        return lib.minlsh_sigmatrix_seed(self._h())

    @property
    def scheme(self) -> str:
        """The family's scheme: "classic" or "oph" (the file's, once loaded)."""
        return SCHEMES[lib.minlsh_sigmatrix_scheme(self._h())]

    @property
    def config_id(self) -> int:
        """The config id given at creation (checked on load)."""
        return lib.minlsh_sigmatrix_config_id(self._h())

    def __len__(self):
        return lib.minlsh_sigmatrix_count(self._h())

    def __repr__(self):
        if not self._handle:
            return "SigMatrix(closed)"
        return "SigMatrix(num_perm=%d, seed=%d, %d signatures)" % (
            self.num_perm, self.seed, len(self))

    def append(self, minhash: Any) -> int:
        """Add one signature (a MinHash of this num_perm and seed, or k
        ints); returns its position."""
        h = self._h()
        raw = matrix_bytes([minhash], lib.minlsh_sigmatrix_k(h), lib.minlsh_sigmatrix_seed(h),
                           None, lib.minlsh_sigmatrix_scheme(h))
        pos = c_uint64()
        check(lib.minlsh_sigmatrix_append(h, raw, lib.minlsh_sigmatrix_k(h), byref(pos)),
              "minlsh_sigmatrix_append")
        return pos.value

    def extend(self, rows: Any) -> None:
        """Add many signatures: MinHash objects or an n x k matrix (numpy
        array or rows of ints). All are converted and checked first."""
        h = self._h()
        k = lib.minlsh_sigmatrix_k(h)
        raw = matrix_bytes(rows, k, lib.minlsh_sigmatrix_seed(h), None,
                           lib.minlsh_sigmatrix_scheme(h))
        step = 4 * k
        buf = ctypes.create_string_buffer(raw, len(raw))
        base = ctypes.addressof(buf)
        for off in range(0, len(raw), step):
            check(lib.minlsh_sigmatrix_append(h, base + off, k, None), "minlsh_sigmatrix_append")

    def __getitem__(self, pos):
        h = self._h()
        n = lib.minlsh_sigmatrix_count(h)
        pos = pos.__index__()
        if pos < 0:
            pos += n
        if not 0 <= pos < n:
            raise IndexError("position out of range")
        m = MinHash(lib.minlsh_sigmatrix_k(h), lib.minlsh_sigmatrix_seed(h),
                    scheme=lib.minlsh_sigmatrix_scheme(h))
        check(lib.minlsh_sigmatrix_copy_column(h, pos, m._sig, len(m._sig), None),
              "minlsh_sigmatrix_copy_column")
        return m

    def estimate(self, i: int, j: int) -> float:
        """The estimated Jaccard of positions i and j."""
        out = c_double()
        check(lib.minlsh_sigmatrix_estimate(byref(out), self._h(), i, j),
              "minlsh_sigmatrix_estimate")
        return out.value

    def to_numpy(self) -> Any:
        """An n x k uint32 numpy array (a copy)."""
        np = _ffi.numpy
        if np is None:
            raise ImportError("to_numpy needs numpy")
        h = self._h()
        n, k = lib.minlsh_sigmatrix_count(h), lib.minlsh_sigmatrix_k(h)
        out = np.empty((n, k), dtype=np.uint32)
        for i in range(n):
            check(lib.minlsh_sigmatrix_copy_column(h, i, out[i].ctypes.data, k, None),
                  "minlsh_sigmatrix_copy_column")
        return out

    @property
    def metadata(self) -> bytes:
        """Application bytes saved with the matrix (b"" by default)."""
        h = self._h()
        n = c_size_t()
        rc = lib.minlsh_sigmatrix_copy_metadata(h, None, 0, byref(n))
        if rc == 0:
            return b""
        if rc != _ffi.E_BUFSIZE:
            check(rc, "minlsh_sigmatrix_copy_metadata")
        buf = ctypes.create_string_buffer(n.value)
        check(lib.minlsh_sigmatrix_copy_metadata(h, buf, n.value, byref(n)),
              "minlsh_sigmatrix_copy_metadata")
        return buf.raw[:n.value]

    @metadata.setter
    def metadata(self, data: Union[bytes, str]) -> None:
        data = _ffi.as_bytes(data, "metadata")
        check(lib.minlsh_sigmatrix_set_metadata(self._h(), data, len(data)),
              "minlsh_sigmatrix_set_metadata")

    # -- files and bytes --------------------------------------------------------

    def save(self, path: Union[str, bytes, os.PathLike]) -> None:
        """Save atomically to ``path`` (minlsh_sigmatrix_save)."""
        bpath = os.fsencode(path)
        check(lib.minlsh_sigmatrix_save(self._h(), bpath), "minlsh_sigmatrix_save",
              os.fsdecode(bpath))

    def to_bytes(self) -> bytes:
        """The bytes of :meth:`save`'s file."""
        return _ffi.save_to_bytes(lib.minlsh_sigmatrix_save_buffer, self._h(),
                                  "minlsh_sigmatrix_save_buffer")

    @classmethod
    def load(cls, path: Union[str, bytes, os.PathLike], num_perm: Optional[int] = None,
             seed: Optional[int] = None, config_id: int = 0, *,
             scheme: Optional[str] = None) -> SigMatrix:
        """Read a saved matrix. With ``num_perm``, ``seed`` or ``scheme``
        (the others defaulting to 128, 1 and "classic") the file must have
        them and ``config_id``, else minlsh.Error MINLSH_E_MISMATCH."""
        return cls._open(lib.minlsh_sigmatrix_load, "minlsh_sigmatrix_load", path,
                         num_perm, seed, config_id, scheme)

    @classmethod
    def map(cls, path: Union[str, bytes, os.PathLike], num_perm: Optional[int] = None,
            seed: Optional[int] = None, config_id: int = 0, *,
            scheme: Optional[str] = None) -> SigMatrix:
        """As :meth:`load`, but memory-mapped read-only: the signatures stay
        in the file's pages (minlsh_sigmatrix_map)."""
        return cls._open(lib.minlsh_sigmatrix_map, "minlsh_sigmatrix_map", path,
                         num_perm, seed, config_id, scheme)

    @classmethod
    def _open(cls, fn, name, path, num_perm, seed, config_id, scheme=None):
        bpath = os.fsencode(path)
        opts, fam = _load_options(num_perm, seed, config_id, scheme)
        h = c_void_p()
        check(fn(byref(h), bpath, byref(opts)), name, os.fsdecode(bpath))
        del fam  # the library keeps nothing of it
        return cls._adopt(h.value)

    @classmethod
    def from_bytes(cls, data: bytes, num_perm: Optional[int] = None, seed: Optional[int] = None,
                   config_id: int = 0, *, scheme: Optional[str] = None) -> SigMatrix:
        """The matrix of :meth:`to_bytes`'s bytes (checked as :meth:`load`)."""
        data = _ffi.as_bytes(data, "data")
        opts, fam = _load_options(num_perm, seed, config_id, scheme)
        h = c_void_p()
        check(lib.minlsh_sigmatrix_load_buffer(byref(h), data, len(data), byref(opts)),
              "minlsh_sigmatrix_load_buffer")
        del fam
        return cls._adopt(h.value)

    def __reduce__(self):
        return (SigMatrix.from_bytes, (self.to_bytes(),))

    # -- banding without an index --------------------------------------------------

    def pairs(self, bands: int, rows: int, min_similarity: float = 0.0, max_pairs: int = 0,
              with_similarity: bool = False) -> List[Tuple[Any, ...]]:
        """Positions (i, j), i < j, sharing one of ``bands`` bands of ``rows``
        rows, with estimate >= ``min_similarity``, sorted. ``max_pairs`` (0:
        no limit): more pairs raise :class:`minlsh.ParameterError`
        (MINLSH_E_TOOBIG) and none is built."""
        out = c_void_p()
        check(lib.minlsh_pairs_from_matrix(byref(out), self._h(), _u32(bands), _u32(rows),
                                           float(min_similarity),
                                           _ffi.as_u64(max_pairs, "max_pairs"), None),
              "minlsh_pairs_from_matrix")
        pairs = _ffi.take_pairs(out)
        return pairs if with_similarity else [(a, b) for a, b, _ in pairs]

    def clusters(self, bands: int, rows: int,
                 min_similarity: float = 0.0) -> List[List[int]]:
        """The connected components (two or more positions) of the graph of
        :meth:`pairs`, without listing the pairs (linear for identical
        documents, however many)."""
        out = c_void_p()
        check(lib.minlsh_clusters_from_matrix(byref(out), self._h(), _u32(bands), _u32(rows),
                                              float(min_similarity), None),
              "minlsh_clusters_from_matrix")
        return _ffi.take_clusters(out)


def _u32(value):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise _ffi.error(_ffi.E_PARAM, "minlsh", "bands/rows = %r" % (value,))
    return value


def _as_matrix(matrix, seed):
    if isinstance(matrix, SigMatrix):
        return matrix
    np = _ffi.numpy
    if np is not None and isinstance(matrix, np.ndarray):
        k = matrix.shape[1] if matrix.ndim == 2 else 0
    else:
        matrix = list(matrix)
        k = len(matrix[0]) if matrix else 128
    # MinHash rows bring their scheme (bare values are taken as they are)
    first = matrix[0] if isinstance(matrix, list) and matrix else None
    m = SigMatrix(k, seed, scheme=first.scheme if isinstance(first, MinHash) else "classic")
    m.extend(matrix)
    return m


def pairs_from_matrix(matrix: Any, bands: int, rows: int, min_similarity: float = 0.0,
                      max_pairs: int = 0, seed: int = 1,
                      with_similarity: bool = False) -> List[Tuple[Any, ...]]:
    """:meth:`SigMatrix.pairs` of a SigMatrix, or of an n x k matrix (numpy
    array, rows of ints, or MinHash objects of seed ``seed``): row numbers
    as ids."""
    return _as_matrix(matrix, seed).pairs(bands, rows, min_similarity, max_pairs,
                                          with_similarity)


def clusters_from_matrix(matrix: Any, bands: int, rows: int, min_similarity: float = 0.0,
                         seed: int = 1) -> List[List[int]]:
    """:meth:`SigMatrix.clusters` of a SigMatrix or an n x k matrix (row
    numbers as ids)."""
    return _as_matrix(matrix, seed).clusters(bands, rows, min_similarity)
