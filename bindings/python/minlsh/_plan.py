"""LSH planning: (bands, rows) from a threshold, the S-curve, band keys."""

from __future__ import annotations

import collections
from ctypes import byref, c_double, c_size_t, c_uint32, c_uint64
from typing import Any, List, Tuple

from . import _ffi
from ._ffi import check, lib
from ._minhash import MinHash, signature_buffer

MODES = {"rule": 1, "balanced": 2, "recall": 3}

Plan = collections.namedtuple("Plan", ["bands", "rows", "fp_area", "fn_area"])
Plan.__doc__ = """(bands, rows) chosen by minlsh.plan, with the false-positive area
(integral of P(s) over [0, t]) and false-negative area (integral of 1 - P(s) over
[t, 1]) of that choice."""


def _plan_options(threshold, num_perm, weights, mode, target_recall):
    if mode not in MODES:
        raise ValueError("mode must be one of %s, not %r" % (", ".join(MODES), mode))
    try:
        wfp, wfn = weights
    except (TypeError, ValueError):
        raise ValueError("weights must be a pair (false_positive, false_negative)") from None
    opts = _ffi.PlanOptions()
    check(lib.minlsh_plan_options_init(byref(opts), _ffi.PLAN_OPTIONS_VERSION),
          "minlsh_plan_options_init")
    opts.mode = MODES[mode]
    if isinstance(num_perm, bool) or not isinstance(num_perm, int) \
            or not 0 <= num_perm <= 0xFFFFFFFF:
        raise _ffi.error(_ffi.E_PARAM, "minlsh_plan_compute", "num_perm = %r" % (num_perm,))
    opts.k = num_perm
    opts.threshold = float(threshold)
    opts.weight_fp = float(wfp)
    opts.weight_fn = float(wfn)
    opts.target_recall = float(target_recall)
    return opts


def plan(threshold: float, num_perm: int = 128, weights: Tuple[float, float] = (0.5, 0.5),
         mode: str = "balanced", target_recall: float = 0.99) -> Plan:
    """Choose (bands, rows) for a Jaccard threshold (minlsh_plan_compute).

    ``mode``: ``"balanced"`` minimises ``weights[0] * FP area + weights[1] *
    FN area`` over bands * rows <= num_perm; ``"recall"`` takes the least FP
    area with P(candidate | threshold) >= target_recall; ``"rule"`` is the
    rule of thumb (1/b)^(1/r) ~ threshold. Returns a :class:`Plan`.
    """
    opts = _plan_options(threshold, num_perm, weights, mode, target_recall)
    b, r, fp, fn = c_uint32(), c_uint32(), c_double(), c_double()
    check(lib.minlsh_plan_compute(byref(b), byref(r), byref(fp), byref(fn), byref(opts)),
          "minlsh_plan_compute",
          "threshold=%r num_perm=%r weights=%r mode=%r target_recall=%r"
          % (threshold, num_perm, tuple(weights), mode, target_recall))
    return Plan(b.value, r.value, fp.value, fn.value)


def _u32(value, what):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise _ffi.error(_ffi.E_PARAM, "minlsh", "%s = %r" % (what, value))
    return value


def probability(s: float, bands: int, rows: int) -> float:
    """P(candidate | similarity s) = 1 - (1 - s^rows)^bands."""
    out = c_double()
    check(lib.minlsh_plan_probability(byref(out), _u32(bands, "bands"), _u32(rows, "rows"),
                                      float(s)), "minlsh_plan_probability")
    return out.value


def threshold_of(bands: int, rows: int) -> float:
    """The rule-of-thumb threshold (1/bands)^(1/rows)."""
    out = c_double()
    check(lib.minlsh_plan_threshold(byref(out), _u32(bands, "bands"), _u32(rows, "rows")),
          "minlsh_plan_threshold")
    return out.value


def band_keys(signature: Any, bands: int, rows: int) -> List[int]:
    """The band keys of a signature (a MinHash or a sequence of uint32):
    a list of ``bands`` 64-bit ints (docs/lsh.md, "Band keys")."""
    if isinstance(signature, MinHash):
        k = signature.num_perm
    else:
        if _ffi.numpy is not None and isinstance(signature, _ffi.numpy.ndarray):
            signature = signature.tolist()
        k = len(signature)
    sig = signature_buffer(signature, k)
    b = _u32(bands, "bands")
    keys = (c_uint64 * max(b, 1))()
    n = c_size_t()
    check(lib.minlsh_band_keys(sig, k, b, _u32(rows, "rows"), keys, b, byref(n)),
          "minlsh_band_keys", "bands=%d rows=%d num_perm=%d" % (bands, rows, k))
    return list(keys[:n.value])
