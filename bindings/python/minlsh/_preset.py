"""Presets: the dedup settings of published pipelines, read from the C
library's table (minlsh_preset_get), so that Python, Go and the command
offer the same ones. docs/presets.md gives their sources."""

from ctypes import byref
from typing import Any, Dict, List, NamedTuple

from . import _ffi
from ._ffi import check, lib
from ._shingle import (_UNIT_NAMES, NORM_CASEFOLD, NORM_CJK_WORDS, NORM_DIGITS, NORM_HTML,
                       NORM_NFKC, NORM_PUNCT, NORM_UCASEFOLD, NORM_UPUNCT, NORM_UWHITESPACE,
                       NORM_WHITESPACE, Shingler)

# Shingler keyword for each flag; a Unicode keyword implies its ASCII twin.
_FLAG_OPTIONS = (("casefold", NORM_UCASEFOLD), ("unicode_punct", NORM_UPUNCT),
                 ("unicode_space", NORM_UWHITESPACE), ("lowercase", NORM_CASEFOLD),
                 ("strip_punct", NORM_PUNCT), ("collapse_space", NORM_WHITESPACE),
                 ("html", NORM_HTML), ("nfkc", NORM_NFKC), ("fold_digits", NORM_DIGITS))
_TWINS = {"casefold": NORM_CASEFOLD, "unicode_punct": NORM_PUNCT,
          "unicode_space": NORM_WHITESPACE}


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
        opts: Dict[str, bool] = {}
        left = self.flags
        for name, bit in _FLAG_OPTIONS:
            if left & bit:
                opts[name] = True
                left &= ~(bit | _TWINS.get(name, 0))
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
