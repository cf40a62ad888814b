"""Classify a value divergence from its evidence (inputs and outputs), never from API names.

Given a group's outputs on one input, the index of the outlier member and of the reference (the
float64 evaluation where one exists, else a member or the median), :func:`classify_value` decides
which :class:`~xamt.findings.FindingClass` the divergence belongs to. The checks run in this
order, and the first that holds wins:

1. ``default``   — shapes differ (a keepdims / axis default), or every finite element of the
                   outlier is the reference times one constant factor other than 1 (a ddof-like
                   default);
2. ``nan``       — the inputs hold NaN and the outlier differs in its NaN pattern, or differs
                   only in the order of its elements (NaN ordering in sorts / arg-reductions);
                   or the two differ only where the outlier returns NaN and the reference a
                   number;
   ``validation`` — the reverse of the last: the two differ only where the reference returns
                   NaN (an input outside the domain) and the outlier a number;
3. ``subnormal`` — the inputs hold subnormal numbers and, where a re-run is possible, the
                   reference evaluated on the inputs flushed to zero agrees with the outlier;
                   without a re-run, the differing elements are where the flushed and unflushed
                   inputs differ (elementwise case);
4. ``promotion`` — integer overflow: where the outlier differs, the reference evaluated on the
                   integer inputs widened to 64 bits does not fit the outlier's dtype; or the
                   outlier's dtype differs from the reference's and the reference cast to the
                   outlier's dtype (with wrap-around or overflow to inf) agrees with it;
5. ``precision`` — the outlier agrees with the reference under a looser tolerance (triage also
                   classes a ``value`` divergence ``precision`` when the outlier itself, run on
                   the float64 inputs, agrees with the reference);
6. ``value``     — anything else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from xamt.compare import Tolerance, compare_group
from xamt.findings import FindingClass

__all__ = ["Classification", "classify_value", "LOOSE_TOLERANCE", "loosely_agree", "flush_subnormals", "subnormal_mask",
           "normal_stand_ins", "ties_only"]

#: "agrees under a looser tolerance": the bounds differential fuzzers use in practice
#: (NNSmith, TitanFuzz: rtol 1e-2, atol 1e-3), see research/anchors.md §4.1.
LOOSE_TOLERANCE = Tolerance(rtol=1e-2, atol=1e-3)


@dataclass(frozen=True)
class Classification:
    """The class decided and the piece of evidence that decided it."""

    finding_class: FindingClass
    why: str


def _smallest_normal(dt: np.dtype) -> float | None:
    if dt.kind not in "fc":
        return None
    if dt.name == "bfloat16":
        import ml_dtypes

        return float(ml_dtypes.finfo(dt).smallest_normal)
    base = np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64) if dt.kind == "c" else dt
    return float(np.finfo(base).smallest_normal)


def subnormal_mask(a: np.ndarray) -> np.ndarray:
    """Where ``a`` holds subnormal numbers (either part, for complex); all False for ints."""
    tiny = _smallest_normal(a.dtype)
    if tiny is None:
        return np.zeros(a.shape, dtype=bool)
    if a.dtype.kind == "c":
        z = a.astype(np.complex128)
        return ((np.abs(z.real) < tiny) & (z.real != 0)) | ((np.abs(z.imag) < tiny) & (z.imag != 0))
    mag = np.abs(a.astype(np.float64))
    return (mag < tiny) & (mag != 0)


def flush_subnormals(inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Copies of ``inputs`` with subnormal numbers replaced by zero of the same sign."""
    out = {}
    for k, v in inputs.items():
        a = np.asarray(v)
        mask = subnormal_mask(a)
        if mask.any():
            a = a.copy()
            a[mask] = np.copysign(0, a[mask].astype(np.float64)).astype(a.dtype) if a.dtype.kind == "f" else 0
        out[k] = a
    return out


def normal_stand_ins(inputs: Mapping[Any, np.ndarray]) -> dict[Any, np.ndarray]:
    """Copies of ``inputs`` with each subnormal number replaced by its dtype's smallest normal
    number of the same sign (each part of a complex number apart): the nearest input that no
    CPU flushes to zero. Arrays without subnormals are returned as they are."""
    out = {}
    for k, v in inputs.items():
        a = np.asarray(v)
        tiny = _smallest_normal(a.dtype)
        if tiny is None or not subnormal_mask(a).any():
            out[k] = a
            continue

        def lift(part: np.ndarray) -> np.ndarray:
            return np.where((np.abs(part) < tiny) & (part != 0), np.copysign(tiny, part), part)

        z = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        out[k] = (lift(z.real) + 1j * lift(z.imag) if a.dtype.kind == "c" else lift(z)).astype(a.dtype)
    return out


def _agree(a: np.ndarray, b: np.ndarray, tol: Tolerance | None = None) -> bool:
    return compare_group([b, a], reference=0, tol=tol).agree


def loosely_agree(a: Any, ref: Any) -> bool:
    """Whether float arrays ``a`` and ``ref`` of one shape hold the same values under
    :data:`LOOSE_TOLERANCE` (rounding, however coarse, not a different result)."""
    return (isinstance(a, np.ndarray) and isinstance(ref, np.ndarray) and a.shape == ref.shape
            and a.dtype.kind in "fc" and ref.dtype.kind in "fc"
            and compare_group([ref, a], reference=0, tol=LOOSE_TOLERANCE).values_agree)


def _has_nan(inputs: Mapping[str, np.ndarray]) -> bool:
    for v in inputs.values():
        a = np.asarray(v)
        if a.dtype.kind == "c" and (np.isnan(a.real).any() or np.isnan(a.imag).any()):
            return True
        if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
            if np.isnan(a.astype(np.float64)).any():
                return True
    return False


def _has_inf(inputs: Mapping[str, np.ndarray]) -> bool:
    for v in inputs.values():
        a = np.asarray(v)
        if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
            x = a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64)
            if np.isinf(x).any():
                return True
    return False


def _nan_pattern_differs(a: np.ndarray, ref: np.ndarray) -> bool:
    if a.shape != ref.shape or a.dtype.kind not in "fc" and a.dtype.name != "bfloat16":
        return False
    an = np.isnan(a.astype(np.complex128)) if a.dtype.kind == "c" else np.isnan(a.astype(np.float64))
    if ref.dtype.kind not in "fc" and ref.dtype.name != "bfloat16":
        return bool(an.any())
    rn = np.isnan(ref.astype(np.complex128)) if ref.dtype.kind == "c" else np.isnan(ref.astype(np.float64))
    return bool((an != rn).any())


def _agree_outside_nan(a: np.ndarray, ref: np.ndarray) -> bool:
    """Whether ``a`` and ``ref`` agree wherever neither is NaN (same shapes assumed)."""
    if a.dtype.kind not in "fc" and a.dtype.name != "bfloat16":
        return False
    wide = np.complex128 if a.dtype.kind == "c" or ref.dtype.kind == "c" else np.float64
    x, r = a.astype(wide).reshape(-1), ref.astype(wide).reshape(-1)
    keep = ~(np.isnan(x) | np.isnan(r))
    return not keep.any() or _agree(x[keep], r[keep])


def _numbers_where_reference_nan(a: np.ndarray, ref: np.ndarray) -> bool:
    """Whether ``a`` has numbers exactly where it differs from ``ref`` in NaN pattern, ``ref``
    NaN there (never the reverse)."""
    if a.shape != ref.shape or ref.dtype.kind not in "fc" and ref.dtype.name != "bfloat16":
        return False
    an = np.isnan(a.astype(np.complex128)) if a.dtype.kind in "fc" or a.dtype.name == "bfloat16" \
        else np.zeros(a.shape, bool)
    rn = np.isnan(ref.astype(np.complex128))
    differ = an != rn
    return bool(differ.any() and rn[differ].all())


def _order_only(a: np.ndarray, ref: np.ndarray) -> bool:
    if a.shape != ref.shape or a.size < 2:
        return False
    sa = np.sort(a.astype(np.float64).reshape(-1)) if a.dtype.kind != "c" else None
    sr = np.sort(ref.astype(np.float64).reshape(-1)) if ref.dtype.kind != "c" else None
    if sa is None or sr is None:
        return False
    return _agree(sa, sr)


def _constant_factor(a: np.ndarray, ref: np.ndarray) -> float | None:
    if a.shape != ref.shape or a.dtype.kind not in "fiu" or ref.dtype.kind not in "fiu":
        return None
    x = a.astype(np.float64).reshape(-1)
    r = ref.astype(np.float64).reshape(-1)
    ok = np.isfinite(x) & np.isfinite(r) & (r != 0)
    # one repeated value says nothing about a factor: need two distinct reference values
    if ok.sum() < 2 or np.unique(r[ok]).size < 2:
        return None
    ratios = x[ok] / r[ok]
    c = float(np.median(ratios))
    if not np.isfinite(c) or abs(c - 1.0) < 1e-3 or c == 0:
        return None
    if np.allclose(ratios, c, rtol=1e-5, atol=0):
        return c
    return None


def _diffs_within_subnormal_positions(
    a: np.ndarray, ref: np.ndarray, inputs: Mapping[str, np.ndarray]
) -> bool:
    """Elementwise case: inputs shaped like the output, differences only at their subnormals."""
    with np.errstate(invalid="ignore"):
        x, r = a.astype(np.complex128), ref.astype(np.complex128)
        differ = (x != r) & ~(np.isnan(x) & np.isnan(r))
    if not differ.any():
        return False
    masks = [subnormal_mask(np.asarray(v)) for v in inputs.values() if np.shape(v) == a.shape]
    if not masks:
        return False
    sub = np.logical_or.reduce(masks)
    return bool(sub.any() and not (differ & ~sub).any())


def _overflow(a: np.ndarray, ref: np.ndarray, wide: np.ndarray) -> str | None:
    """Why the divergence is an integer overflow: where the outlier and the reference differ,
    the exact (64-bit) result does not fit in the outlier's dtype. None if it fits."""
    if wide.shape != a.shape or ref.shape != a.shape or wide.dtype.kind not in "iuf":
        return None
    info = np.iinfo(a.dtype)
    with np.errstate(all="ignore"):
        differ = a.astype(np.float64) != ref.astype(np.float64)
        exact = wide.astype(np.float64)
        out = differ & ((exact > info.max) | (exact < info.min))
    if not out.any():
        return None
    i = int(np.flatnonzero(out.reshape(-1))[0])
    return (f"integer overflow: the exact result {wide.reshape(-1)[i]} (64-bit evaluation) does not "
            f"fit in {a.dtype}; members wrap or saturate differently")


def ties_only(a: np.ndarray, ref: np.ndarray, inputs: Iterable[np.ndarray]) -> bool:
    """Whether two index outputs differ only in the order of equal values: for an input array of
    their shape, gathering it along some axis by either gives the same array (argsort of
    ``[1, 1, 0]`` is ``[2, 0, 1]`` or ``[2, 1, 0]``; a sort need not be stable unless it says so).
    Decided from the evidence: integer outputs that index an input, never from the API's name."""
    if a.shape != ref.shape or a.ndim == 0 or a.dtype.kind not in "iu" or ref.dtype.kind not in "iu":
        return False
    for x in inputs:
        if x.shape != a.shape or x.dtype.kind not in "fiub":
            continue
        for axis in range(x.ndim):
            n = x.shape[axis]
            if not (((a >= 0) & (a < n)).all() and ((ref >= 0) & (ref < n)).all()):
                continue
            ga = np.take_along_axis(x, a.astype(np.int64), axis)
            gr = np.take_along_axis(x, ref.astype(np.int64), axis)
            if np.array_equal(ga, gr, equal_nan=x.dtype.kind == "f"):
                return True
    return False


def classify_value(
    outputs: Sequence[np.ndarray],
    outlier: int,
    reference: np.ndarray,
    inputs: Mapping[str, np.ndarray],
    *,
    rerun_reference: Callable[[dict[str, np.ndarray]], np.ndarray | None] | None = None,
    wide_reference: np.ndarray | None = None,
) -> Classification:
    """Class of the divergence of ``outputs[outlier]`` from ``reference`` on ``inputs``.

    ``rerun_reference(inputs)``, when given, evaluates the reference on other inputs (through the
    sandbox) and returns its output or None; it is used for the flush-to-zero experiment (on the
    flushed inputs and, as its control, on the inputs as they are), which comes before the NaN rules: the reference on flushed inputs giving the outlier's result
    explains a NaN too (``prod([1, -1e-45, inf])`` is NaN once -1e-45 is -0: -0 * inf).
    ``wide_reference``: the reference evaluated on the integer inputs widened to 64 bits (the
    exact result where the narrow one overflows); it decides integer overflow.
    """
    a = np.asarray(outputs[outlier])
    ref = np.asarray(reference)
    if a.shape != ref.shape:
        return Classification(FindingClass.DEFAULT, f"shape {a.shape} vs reference {ref.shape}")
    c = _constant_factor(a, ref)
    if c is not None:
        return Classification(FindingClass.DEFAULT, f"outlier = {c:.6g} x reference on every element")
    flushed = flush_subnormals(inputs)
    has_sub = any(not np.array_equal(flushed[k], np.asarray(v), equal_nan=True) for k, v in inputs.items())
    if has_sub and rerun_reference is not None:
        ftz = rerun_reference(flushed)
        if ftz is not None and np.asarray(ftz).shape == a.shape and _agree(a, np.asarray(ftz)):
            # flushing must be what makes the difference: when the same evaluation of the
            # reference on the inputs as they are gives the outlier's result too (a float32
            # overflow where only the float64 reference is exact), the cause is elsewhere
            plain = rerun_reference({k: np.asarray(v) for k, v in inputs.items()})
            if plain is None or np.asarray(plain).shape != a.shape or not _agree(a, np.asarray(plain)):
                return Classification(
                    FindingClass.SUBNORMAL, "reference on inputs flushed to zero matches the outlier")
    if _has_nan(inputs):
        if _nan_pattern_differs(a, ref):
            return Classification(FindingClass.NAN, "NaN in the inputs; NaN positions differ")
        if _order_only(a, ref):
            return Classification(FindingClass.NAN, "NaN in the inputs; same values in another order")
    if _nan_pattern_differs(a, ref) and _agree_outside_nan(a, ref):
        if _numbers_where_reference_nan(a, ref):
            if _has_inf(inputs):
                # inf // 2, inf - inf: IEEE arithmetic on an infinity gives the reference's NaN,
                # no domain check does
                return Classification(FindingClass.NAN, "a number where the reference returns NaN, "
                                                        "on an infinite input; every other element agrees")
            # the reference says "outside the domain" (NaN for binom(n=-1), pareto(b<0)) and
            # the outlier computes a number anyway: it accepts what the reference rejects
            return Classification(FindingClass.VALIDATION,
                                  "returns a number where the reference returns NaN (an input "
                                  "outside the domain it rejects); every other element agrees")
        # the outlier's NaN where the reference computes a number
        return Classification(FindingClass.NAN, "NaN where the reference returns a number; every "
                                                "other element agrees")
    if has_sub and rerun_reference is None and _diffs_within_subnormal_positions(a, ref, inputs):
        return Classification(
            FindingClass.SUBNORMAL, "every differing element sits where an input is subnormal")
    if wide_reference is not None and a.dtype.kind in "iu":
        why = _overflow(a, ref, np.asarray(wide_reference))
        if why:
            return Classification(FindingClass.PROMOTION, why)
    if a.dtype != ref.dtype and a.dtype.kind in "fiuc" and ref.dtype.kind in "fiucb":
        with np.errstate(all="ignore"):
            cast = ref.astype(a.dtype)
        if _agree(a, cast):
            return Classification(
                FindingClass.PROMOTION, f"reference cast to {a.dtype} matches the outlier ({ref.dtype} vs {a.dtype})")
    if _agree(a, ref, LOOSE_TOLERANCE):
        return Classification(FindingClass.PRECISION, "agrees under rtol=1e-2, atol=1e-3")
    return Classification(FindingClass.VALUE, "differs beyond the loose tolerance")
