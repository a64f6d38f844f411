"""Presets: the dedup settings of published pipelines, read from the C
library's table (minlsh_preset_get), so that Python, Go and the command
offer the same ones. docs/presets.md gives their sources."""

from ctypes import byref, c_size_t, create_string_buffer
from typing import Any, Dict, List, NamedTuple

from . import _ffi
from ._ffi import check, lib
from ._shingle import _UNIT_NAMES, NORM_CJK_WORDS, Shingler

# A Unicode keyword implies its ASCII twin, which is then not listed.
_TWINS = {"casefold": "lowercase", "unicode_punct": "strip_punct",
          "unicode_space": "collapse_space"}


def _flag_keywords(flags: int) -> List[str]:
    """The Shingler keywords of flags' bits: the library's names of the
    flags (minlsh_norm_flags_format), spelled with '_' for '-'."""
    n = c_size_t()
    lib.minlsh_norm_flags_format(flags, None, 0, byref(n))  # asks the length
    buf = create_string_buffer(n.value)
    check(lib.minlsh_norm_flags_format(flags, buf, n.value, byref(n)),
          "minlsh_norm_flags_format")
    text = buf.raw[:n.value].decode("ascii")
    return [] if text == "none" else [w.replace("-", "_") for w in text.split(",")]


class Preset(NamedTuple):
    """One pipeline's settings, as minlsh's nearest equivalents.

    ``shingle`` is the spec (``"word:5"``), ``flags`` the library's
    normalisation bits and ``normalization`` the same as :class:`Shingler`
    keywords; ``num_perm``, ``bands``, ``rows`` and ``threshold`` the
    signature length, banding and Jaccard threshold; ``pipeline`` and
    ``source`` say who used them and where the figures come from."""
    name: str
    shingle: str
    flags: int
    num_perm: int
    bands: int
    rows: int
    threshold: float
    pipeline: str
    source: str

    @property
    def normalization(self) -> Dict[str, bool]:
        """The Shingler keywords that give ``flags``."""
        words = _flag_keywords(self.flags)
        implied = {_TWINS[w] for w in words if w in _TWINS}
        opts = {w: True for w in words if w != "cjk_words" and w not in implied}
        opts["cjk_words"] = bool(self.flags & NORM_CJK_WORDS)
        return opts

    def shingler(self, shingle: Any = None, **options: Any) -> Shingler:
        """A Shingler with the preset's unit, length and normalisation;
        ``shingle`` (a spec) replaces the unit and length, ``options``
        (Shingler keywords, ``key=`` say) add to or replace the rest."""
        opts: Dict[str, Any] = dict(self.normalization)
        opts.update(options)
        return Shingler.from_spec(shingle or self.shingle, **opts)


def _from_c(p: _ffi.Preset) -> Preset:
    return Preset(name=p.name.decode("ascii"),
                  shingle="%s:%d" % (_UNIT_NAMES[p.unit], p.shingle_k),
                  flags=p.flags, num_perm=p.num_perm, bands=p.bands, rows=p.rows,
                  threshold=p.threshold, pipeline=p.pipeline.decode("utf-8"),
                  source=p.source.decode("utf-8"))


def presets() -> List[Preset]:
    """Every preset, in the library's order."""
    out = []
    for i in range(lib.minlsh_preset_count()):
        p = _ffi.Preset(version=_ffi.PRESET_VERSION)
        check(lib.minlsh_preset_get(byref(p), i), "minlsh_preset_get")
        out.append(_from_c(p))
    return out


def preset(name: Any) -> Preset:
    """The preset called ``name`` (case ignored), a :class:`Preset` (returned
    as it is); ValueError naming the known ones otherwise."""
    if isinstance(name, Preset):
        return name
    if not isinstance(name, str):
        raise TypeError("preset must be a name such as 'fineweb', not %s"
                        % type(name).__name__)
    p = _ffi.Preset(version=_ffi.PRESET_VERSION)
    rc = lib.minlsh_preset_find(byref(p), name.encode("utf-8", "replace"))
    if rc == _ffi.E_NOTFOUND:
        raise ValueError("unknown preset %r: expected one of %s"
                         % (name, ", ".join(q.name for q in presets())))
    check(rc, "minlsh_preset_find")
    return _from_c(p)
