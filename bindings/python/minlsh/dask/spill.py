"""The ``memory=`` budget of :func:`minlsh.dask.dedup`: what one worker
process keeps of its partitions between stages (signatures, texts,
fingerprints, numbers: the data that grows with the corpus) stays in memory
while the process's total is within the budget; past it, a partition's
arrays go to a temporary file in ``tmpdir`` and are read back through a
read-only memory map. The file is unlinked as soon as it is made, so none
survives the process; the kernel pages the map in and out as the stages
read it, and the values are the same bytes either way, so results do not
depend on the budget.

The count is per process because the budget is: every task of a worker
process (Dask may run several, on several threads) adds what it keeps, and
an array gives its bytes back when the last reference to it goes."""

import mmap
import tempfile
import threading
import weakref

import numpy as np

_lock = threading.Lock()
_held = [0]  # bytes of kept arrays in memory in this process


def held_bytes():
    """Bytes of kept arrays this process holds in memory now."""
    with _lock:
        return _held[0]


def _release(nbytes):
    with _lock:
        _held[0] -= nbytes


def _to_file(arr, tmpdir):
    """arr's bytes in an unlinked temporary file, as a read-only array of
    the same dtype and shape over a map of that file."""
    with tempfile.TemporaryFile(dir=tmpdir, prefix="minlsh-dask-") as f:
        f.write(memoryview(np.ascontiguousarray(arr)).cast("B"))
        f.flush()
        # The map keeps the file's pages alive after the file is closed.
        mapped = mmap.mmap(f.fileno(), arr.nbytes, access=mmap.ACCESS_READ)
    return np.frombuffer(mapped, dtype=arr.dtype).reshape(arr.shape)


def keep(arrays, memory, tmpdir):
    """The arrays (a dict name -> numpy array or None) as this process keeps
    them: in memory while the process's kept total stays within memory
    (bytes; None or 0: no limit), else each in a temporary file. Returns
    (the dict of kept arrays, bytes written to temporary files)."""
    out, written = dict(arrays), 0
    for name, arr in arrays.items():
        if arr is None or arr.nbytes == 0:
            continue
        with _lock:
            fits = not memory or _held[0] + arr.nbytes <= memory
            if fits:
                _held[0] += arr.nbytes
        if fits:
            weakref.finalize(arr, _release, arr.nbytes)
            continue
        out[name] = _to_file(arr, tmpdir)
        written += arr.nbytes
    return out, written
