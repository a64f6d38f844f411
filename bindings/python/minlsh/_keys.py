"""Keys and names: a hashable key as the JSON token every minlsh file stores
for a document's name (MinHashLSH's saves and journals, the Store). _META_*
name the JSON metadata MinHashLSH saved before it wrote the store's; such
files still load."""

from __future__ import annotations

import json
import math

_META_TAG = "minlsh-python-lsh"
_META_VERSION = 1


def _encode_key(key):
    """A JSON value that decodes back to an equal key of the same type:
    str, int, float (finite), bool, None as themselves; tuples as
    {"tuple": [...]}; bytes as {"bytes": "<hex>"}. Anything else raises."""
    if key is None or isinstance(key, (str, bool)):
        return key
    if isinstance(key, int):
        return int(key)  # an int subclass (e.g. IntEnum) becomes a plain int
    if isinstance(key, float):
        if not math.isfinite(key):
            raise ValueError("key %r cannot be saved: only finite floats" % (key,))
        return key
    if isinstance(key, tuple):
        return {"tuple": [_encode_key(x) for x in key]}
    if isinstance(key, bytes):
        return {"bytes": key.hex()}
    raise TypeError(
        "key %r of type %s cannot be saved; save() supports keys that are str, int, "
        "float, bool, None, bytes, or tuples of those" % (key, type(key).__name__))


def _decode_key(value):
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict) and len(value) == 1:
        if "tuple" in value and isinstance(value["tuple"], list):
            return tuple(_decode_key(x) for x in value["tuple"])
        if "bytes" in value and isinstance(value["bytes"], str):
            return bytes.fromhex(value["bytes"])
    raise ValueError("bad key in the saved key mapping: %r" % (value,))


_JOURNAL_DATA_MAX = 1 << 20


def _key_record(key):
    """A journal record's bytes for ``key``: the compact JSON of
    :func:`_encode_key` (what :meth:`MinHashLSH.save` stores), so a replay
    restores an equal key and never runs code. Raises TypeError for a key
    save() cannot store, ValueError past the journal's 1 MiB per record."""
    data = json.dumps(_encode_key(key), ensure_ascii=True, allow_nan=False,
                      separators=(",", ":")).encode("ascii")
    if len(data) > _JOURNAL_DATA_MAX:
        raise ValueError("a key of %d bytes as JSON is too long for a journal record (1 MiB)"
                         % len(data))
    return data


def _key_of_name(raw, ident):
    """The key of a stored document: its name read as a JSON key, else the
    name's bytes (a name another program chose), or the id for no name."""
    if not raw:
        return ident
    try:
        return _decode_key(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, ValueError):
        return bytes(raw)
