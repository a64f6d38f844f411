"""JSON Lines read as ``minlsh dedup --jsonl`` reads them: the library's
reader (minlsh_jsonl_parse_block, docs/api.md "JSON Lines records"), one C
call per block of whole lines, so that a file gives the same records, and
the same refusals, to the command, :func:`minlsh.dedup` and
:mod:`minlsh.dask`.
"""

import ctypes
import json
import os
import warnings
from ctypes import byref, c_size_t
from typing import Any, Iterator, List, Optional, Tuple, Union

from . import _ffi
from ._ffi import lib

__all__ = ["read_jsonl"]

#: Bytes read from a file per C call (whole lines: a longer line is read whole).
BLOCK_BYTES = 64 << 20

_U64 = 8


class Block:
    """The arrays of one minlsh_jsonl_parse_block call, as writable buffers
    (``empty(nbytes)`` made them: bytearrays, or numpy arrays for
    minlsh.dask): record i's text is ``texts[text_offsets[i] :
    text_offsets[i+1]]``, its id token ``raw[id_offsets[i] : + id_lengths[i]]``,
    its line at ``line_offsets[i]``, its status ``status[i]`` (0, or
    E_FORMAT: not a record). Offsets are native uint64, statuses int32, n
    records in all."""

    __slots__ = ("n", "texts", "text_offsets", "id_offsets", "id_lengths", "line_offsets",
                 "status")


def _address(buf):
    """The address of a writable buffer's first byte (None when empty)."""
    return ctypes.addressof(ctypes.c_char.from_buffer(buf)) if memoryview(buf).nbytes else None


def field_names(id_field, text_field):
    """The two field names as the C reader takes them (UTF-8, no NUL), or
    None when they cannot be given to it."""
    if not (isinstance(id_field, str) and isinstance(text_field, str)) \
            or "\0" in id_field + text_field:
        return None
    try:
        return id_field.encode("utf-8"), text_field.encode("utf-8")
    except UnicodeEncodeError:
        return None


def parse_block(raw: bytes, fields: Tuple[bytes, bytes], input_start: bool,
                empty=bytearray) -> Block:
    """One minlsh_jsonl_parse_block call on raw (bytes of whole lines; the
    last newline optional). input_start: raw starts its input (a byte-order
    mark before the first line is left out)."""
    cap = raw.count(b"\n") + 1
    b = Block()
    b.texts = empty(max(len(raw), 1))
    b.text_offsets = empty((cap + 1) * _U64)
    b.id_offsets = empty(cap * _U64)
    b.id_lengths = empty(cap * _U64)
    b.line_offsets = empty(cap * _U64)
    b.status = empty(cap * 4)
    n = c_size_t(0)
    rc = lib.minlsh_jsonl_parse_block(
        raw, len(raw), _ffi.JSONL_INPUT_START if input_start else 0, fields[0], fields[1],
        _address(b.texts), len(raw), _address(b.text_offsets), _address(b.id_offsets),
        _address(b.id_lengths), _address(b.line_offsets), _address(b.status), cap, byref(n))
    _ffi.check(rc, "minlsh_jsonl_parse_block")
    b.n = n.value
    return b


def line_error(raw: bytes, at: int, fields: Tuple[bytes, bytes]) -> str:
    """The reader's reason for refusing the line of raw at offset at."""
    end = raw.find(b"\n", at)
    line = raw[at:] if end < 0 else raw[at:end]
    if line.endswith(b"\r"):
        line = line[:-1]
    text = ctypes.create_string_buffer(len(line) + 1)
    msg = ctypes.create_string_buffer(256)
    tl, io, il = c_size_t(), c_size_t(), c_size_t()
    lib.minlsh_jsonl_parse_line(line, len(line), fields[0], fields[1], text, len(line) + 1,
                                byref(tl), byref(io), byref(il), msg, len(msg))
    return msg.value.decode("utf-8", "replace")


def _blocks(source) -> Iterator[Tuple[bytes, bool]]:
    """(block of whole lines, starts the input) from bytes or a file."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        yield bytes(source), True
        return
    with open(os.fspath(source), "rb") as f:
        first, rest = True, b""
        while True:
            chunk = f.read(BLOCK_BYTES)
            if not chunk:
                if rest:
                    yield rest, first
                return
            data = rest + chunk if rest else chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # no line ends here yet: read on
                rest = data
                continue
            rest = data[cut:]
            yield data[:cut], first
            first = False


def read_jsonl(source: Union[bytes, str, "os.PathLike[str]"], id: str = "id",
               text: str = "text", errors: Optional[List[Tuple[int, str]]] = None
               ) -> Iterator[Tuple[Any, Union[str, bytes]]]:
    """The (id, text) records of JSON Lines, a file name or bytes, read as
    ``minlsh dedup --jsonl`` reads them, ready for :func:`minlsh.dedup`:
    every line that is not blank is one JSON object whose id field is a
    string or a number (given as ``json.loads`` reads it) and whose text
    field is a string (a ``str``; ``bytes`` where ``\\udc80``-style escapes
    stand for bytes that are not UTF-8). A byte-order mark at the start and
    the CR of CRLF are left out. A line that is not such a record is
    skipped; its (line number, reason) goes to ``errors`` when a list is
    given, else one warning at the end counts them. A file is read
    ``BLOCK_BYTES`` at a time; memory: a block and its texts."""
    fields = field_names(id, text)
    if fields is None:
        raise ValueError("field names must be strings without NUL bytes, not %r and %r"
                         % (id, text))
    refused, first_refusal, line_base = 0, None, 1
    for raw, start in _blocks(source):
        b = parse_block(raw, fields, start)
        n = b.n
        toff = memoryview(b.text_offsets).cast("Q")
        ioff = memoryview(b.id_offsets).cast("Q")
        ilen = memoryview(b.id_lengths).cast("Q")
        loff = memoryview(b.line_offsets).cast("Q")
        status = memoryview(b.status).cast("i")
        good = [i for i in range(n) if status[i] == 0]
        tokens = b",".join(raw[ioff[i]:ioff[i] + ilen[i]] for i in good)
        ids = json.loads(b"[" + tokens + b"]")
        texts = memoryview(b.texts)
        for i in range(n):
            if status[i] != 0:
                refused += 1
                at = loff[i]
                where = (line_base + raw.count(b"\n", 0, at), line_error(raw, at, fields))
                if errors is not None:
                    errors.append(where)
                elif first_refusal is None:
                    first_refusal = where
        for ident, i in zip(ids, good):
            t = texts[toff[i]:toff[i + 1]]
            try:
                yield ident, str(t, "utf-8")
            except UnicodeDecodeError:
                yield ident, bytes(t)
        line_base += raw.count(b"\n")
    if refused and errors is None:
        warnings.warn("minlsh.read_jsonl: %d line%s not a record, skipped (line %d: %s)"
                      % (refused, " is" if refused == 1 else "s are", first_refusal[0],
                         first_refusal[1]), stacklevel=2)
