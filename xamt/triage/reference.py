"""The reference of a divergence: which member the others are measured against, and which
member is the outlier.

Where the input holds lower-precision floats the reference is a float64 evaluation: the member
that ranks first in :func:`pivot_order` run on the inputs upcast to float64 (:func:`upcast`).
Otherwise it is the member that agrees with the element-wise median of a strict majority, or
without one the first pivot. A group inside one library (an eager call and its compiled twin, a
function and its namespace twin) first asks a :class:`Referee`: a cross-library group holding
one of its APIs, run on the same input, whose other libraries say which side is right. The
outlier is the member farthest from the reference (:func:`find_outlier`).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from xamt.compare import compare_group, computation_tolerance
from xamt.groups.agree import Agreement, input_dtypes
from xamt.exec.group import MemberResult
from xamt.exec.normalise import leaves
from xamt.triage.dedup import trigger

__all__ = ["ReferenceChooser", "pivot_order", "find_outlier", "agreement", "upcast", "call_rank",
           "float_computed_slots", "Conditioning", "load_conditioning", "perturbed", "element_moves",
           "within_noise", "nan_against_majority", "drops_nan", "shared_loss", "voting_members", "implementation",
           "declared_originals", "load_call_order", "Referee", "referee_index", "translate", "output_leaf",
           "LIMIT_PROBES", "limit_at_infinity", "same_shapes", "NO_MAJORITY", "as_float64", "output_shapes"]

#: how a reference chosen by pivot rank alone is labelled: nothing but the rank decided between
#: the outlier and it, so the cause may lie on either side
NO_MAJORITY = "first pivot; no majority"

#: float dtypes a float64 reference evaluation improves on
_LOW_FLOATS = {"float16": "float64", "bfloat16": "float64", "float32": "float64",
               "complex64": "complex128"}


def upcast(values: Mapping[int, Any], ints: Collection[int] = ()) -> dict[int, Any] | None:
    """``values`` with lower-precision float arrays as float64 (complex128), a dtype argument
    naming one as float64 too (``cumulative_sum(x, dtype=float32)``: asked for float32, the
    float64 run is asked for float64, or it gives no float64 reference), and the integer arrays
    of the slots ``ints`` as float64; None if nothing changed."""
    changed = False
    out: dict[int, Any] = {}
    for slot, v in values.items():
        if isinstance(v, np.dtype) and v.name in _LOW_FLOATS:
            out[slot] = np.dtype(_LOW_FLOATS[v.name])
            changed = True
        elif isinstance(v, np.ndarray) and v.dtype.name in _LOW_FLOATS:
            out[slot] = v.astype(_LOW_FLOATS[v.dtype.name])
            changed = True
        elif isinstance(v, np.ndarray) and slot in ints and v.dtype.kind in "iu":
            out[slot] = v.astype(np.float64)
            changed = True
        elif isinstance(v, list) and v and all(isinstance(a, np.ndarray) for a in v):
            new = [a.astype(_LOW_FLOATS[a.dtype.name]) if a.dtype.name in _LOW_FLOATS
                   else a.astype(np.float64) if slot in ints and a.dtype.kind in "iu" else a for a in v]
            changed |= any(a is not b for a, b in zip(new, v))
            out[slot] = new
        else:
            out[slot] = v
    return out if changed else None


def float_computed_slots(group: Any, values: Mapping[int, Any], outputs: Mapping[int, Any]) -> set[int]:
    """The tensor slots holding integers when the members compute in floats (some output is a
    float array): their reference is evaluated in float64, where an integer evaluation may wrap
    (``scipy.stats.pareto.pdf`` on uint64, ``np.unwrap`` on uint8). Index, count and other
    roles keep their integers."""
    floats = any(isinstance(a, np.ndarray) and (a.dtype.kind in "fc" or a.dtype.name == "bfloat16")
                 for out in outputs.values() for a in leaves(out))
    if not floats:
        return set()
    roles = {s.index: s.role for s in getattr(group, "slots", ())}
    return {slot for slot, v in values.items()
            if roles.get(slot) in ("tensor", "tensors")
            and any(isinstance(a, np.ndarray) and a.dtype.kind in "iu"
                    for a in (v if isinstance(v, list) else [v]))}


def _rounds_to(a: np.ndarray, ref: np.ndarray, tol: Any, dtypes: Counter) -> bool:
    """Whether ``a`` equals the float64 ``ref`` rounded to ``a``'s own dtype (overflow to inf
    and underflow to 0 included), where that dtype is the one most members returned — a
    member that alone returns a narrower dtype than the rest is still a promotion outlier."""
    if a.dtype == ref.dtype or a.dtype.kind not in "fc" or a.shape != ref.shape:
        return False
    if dtypes and dtypes.most_common(1)[0][0] != a.dtype:
        return False
    with np.errstate(all="ignore"):
        rounded = ref.astype(a.dtype)
    return compare_group([rounded, a], reference=0, tol=tol).values_agree


def call_rank(call: str, order: Sequence[str]) -> int:
    """Position of a call style in a plainest-first order (``triage.toml``); unlisted last."""
    return order.index(call) if call in order else len(order)


def declared_originals(members: Sequence[Any]) -> set[int]:
    """Indices of the members that another member of another library declares it implements
    (``Member.implements`` names the API or its namespace: ``scipy.stats.cauchy``)."""
    out: set[int] = set()
    for i, m in enumerate(members):
        for o in members:
            if o.library == m.library:
                continue
            name = getattr(m, "qualname", "")
            if any(name == ref or name.startswith(ref + ".")
                   for ref in getattr(o, "implements", None) or ()):
                out.add(i)
                break
    return out


def load_call_order(path: str | Path | None = None) -> tuple[str, ...]:
    """``[reference] call_order`` of ``triage.toml``: call styles, plainest first.

    Raises:
        DataFileError: the file is unreadable or names a call style that does not exist.
    """
    from xamt.datafiles import read_toml
    from xamt.errors import DataFileError
    from xamt.matching.model import CALL_STYLES

    data, where, _ = read_toml("triage.toml", path)
    order = data.get("reference", {}).get("call_order")
    if not isinstance(order, list) or not all(isinstance(c, str) for c in order):
        raise DataFileError(f"{where}: [reference] call_order must be a list of call styles")
    unknown = sorted(set(order) - set(CALL_STYLES))
    if unknown:
        raise DataFileError(f"{where}: unknown call style(s) {unknown}; known: {list(CALL_STYLES)}")
    return tuple(order)


@dataclass(frozen=True)
class Conditioning:
    """``[conditioning]`` of ``triage.toml``: how far the float64 reference moves when the
    lower-precision inputs move by one unit roundoff of their dtype (``draws`` random-sign
    perturbations), and how many times that move an outlier may stray (``factor``)."""

    factor: float = 4.0
    draws: int = 3


def load_conditioning(path: str | Path | None = None) -> Conditioning:
    """``[conditioning]`` of ``triage.toml`` (defaults where absent).

    Raises:
        DataFileError: a value is not a positive number (``draws``: a positive integer).
    """
    from xamt.datafiles import read_toml
    from xamt.errors import DataFileError

    data, where, _ = read_toml("triage.toml", path)
    sec = data.get("conditioning", {})
    factor, draws = sec.get("factor", Conditioning.factor), sec.get("draws", Conditioning.draws)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0:
        raise DataFileError(f"{where}: [conditioning] factor must be a positive number, got {factor!r}")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise DataFileError(f"{where}: [conditioning] draws must be a positive integer, got {draws!r}")
    return Conditioning(float(factor), draws)


def _unit_roundoff(dtype: np.dtype) -> float:
    try:
        return float(np.finfo(dtype).eps) / 2
    except (TypeError, ValueError):  # bfloat16 without ml_dtypes' finfo: 8 significand bits
        return 2.0 ** -8


def perturbed(values: Mapping[int, Any], upcast_values: Mapping[int, Any],
              rng: np.random.Generator, scale: float = 1.0) -> dict[int, Any]:
    """``upcast_values`` (:func:`upcast` of ``values``) with every element of each slot that held
    lower-precision floats in ``values`` multiplied by ``1 ± scale * u``, ``u`` that dtype's
    unit roundoff and the sign random: inputs as far off as rounding them to their own dtype
    could have put them. Other slots (integers, indices, float64) are left as they are."""
    def move(orig: Any, up: Any) -> Any:
        if (isinstance(orig, np.ndarray) and isinstance(up, np.ndarray) and orig.dtype.name in _LOW_FLOATS
                and up.shape == orig.shape):
            signs = rng.choice(np.array([-1.0, 1.0]), size=up.shape)
            return up * (1.0 + scale * _unit_roundoff(orig.dtype) * signs)
        return up

    out: dict[int, Any] = {}
    for slot, up in upcast_values.items():
        orig = values.get(slot)
        if isinstance(orig, list) and isinstance(up, list) and len(orig) == len(up):
            out[slot] = [move(a, b) for a, b in zip(orig, up)]
        else:
            out[slot] = move(orig, up)
    return out


def element_moves(moved: np.ndarray, ref: np.ndarray) -> np.ndarray | None:
    """Per element, how far ``moved`` (the reference on perturbed inputs) is from ``ref``: 0
    where they are equal (the same infinity, NaN against NaN), inf where only one is finite.
    None when ``moved`` is not a float array of ``ref``'s shape."""
    if moved.shape != ref.shape or moved.dtype.kind not in "fc":
        return None
    with np.errstate(all="ignore"):
        r = ref.astype(np.complex128 if ref.dtype.kind == "c" else np.float64)
        a = moved.astype(r.dtype)
        d = np.where((a == r) | (np.isnan(a) & np.isnan(r)), 0.0, np.abs(a - r))
    return np.where(np.isfinite(d), d, np.inf)


def within_noise(out: np.ndarray, ref: np.ndarray, noise: np.ndarray, tol: Any, factor: float) -> bool:
    """Whether ``out`` is as close to the float64 ``ref`` as the input's conditioning lets a
    lower-precision evaluation be: equal where either is not finite (NaN where NaN, the same
    infinity), and elsewhere within ``tol`` plus ``factor`` times ``noise``, how far ``ref``
    moved on inputs perturbed by one unit roundoff (:func:`perturbed`). A reference that moved
    to a non-finite value there is at the edge of its range: any finite ``out`` is within it.
    False when nothing is ill-conditioned (``noise`` all zero) or shapes differ."""
    if out.shape != ref.shape or out.shape != noise.shape or out.dtype.kind not in "fc":
        return False
    with np.errstate(all="ignore"):
        o = out.astype(np.complex128 if out.dtype.kind == "c" else np.float64)
        r = ref.astype(o.dtype)
        fin = np.isfinite(o) & np.isfinite(r)
        if not np.all(fin | (np.isnan(o) & np.isnan(r)) | (o == r)):
            return False
        n = np.abs(noise).astype(np.float64)
        if not np.any(n[fin] > 0):
            return False
        rtol = float(getattr(tol, "rtol", 0.0) or 0.0)
        atol = float(getattr(tol, "atol", 0.0) or 0.0)
        bound = atol + rtol * np.abs(r[fin]) + factor * n[fin]  # an infinite move: anything goes
        return bool(np.all(np.abs(o[fin] - r[fin]) <= bound))


def nan_against_majority(ref: Any, others: Sequence[Any]) -> bool:
    """Whether ``ref``, a candidate reference's output, is NaN or infinite at an element where
    a strict majority of ``others`` (the other implementations' outputs, one each), and at
    least two of them, return a number, or against an infinity another number or infinity
    (not NaN: NaN from an infinite input is the commonest bug of all). Such a reference is
    not one: scipy's ``airy`` returns NaN for x >= 1e10 where the independent implementations
    agree on a value, and scipy's ``gammaln(-inf)`` is -inf where the others (and C99's lgamma)
    give +inf; every one of them was blamed. A finite reference is never passed over (float32
    results that all overflow or round alike are no majority against a float64 evaluation)."""
    ref_leaves = leaves(ref)
    other_leaves = [lv for lv in (leaves(o) for o in others) if len(lv) == len(ref_leaves)]
    for j, r in enumerate(ref_leaves):
        if not isinstance(r, np.ndarray) or r.dtype.kind not in "fc":
            continue
        with np.errstate(all="ignore"):
            odd = ~np.isfinite(r)
            if not odd.any():
                continue
            rv = r.astype(np.complex128 if r.dtype.kind == "c" else np.float64)
            differ = np.zeros(r.shape, dtype=np.int64)
            n = 0
            for lv in other_leaves:
                o = lv[j]
                if not isinstance(o, np.ndarray) or o.shape != r.shape or o.dtype.kind not in "biufc":
                    continue
                n += 1
                ov = o.astype(rv.dtype) if o.dtype.kind in "fc" else o.astype(np.float64)
                # against an infinity, only a number or another infinity counts: NaN where
                # the true result is infinite is the commonest bug there is, not a majority
                differ += ~((ov == rv) | np.isnan(ov))
        if np.any(odd & (differ >= 2) & (2 * differ > n)):
            return True
    return False


def drops_nan(ref: Any, others: Sequence[Any], values: Mapping[int, Any]) -> bool:
    """Whether ``ref``, a candidate reference's output on inputs holding NaN, is a number (±inf
    included) at an element where every one of ``others`` (the other implementations' outputs,
    one each, at least one) is NaN: it dropped the NaN the others propagate (scipy's
    ``chebyshev`` takes Python's ``max``, which skips a NaN that is not first, and ``torch.dist``
    was blamed, also where an inf beside the NaN made scipy's result inf). Such a reference is
    passed over like a NaN one against numbers (:func:`nan_against_majority`)."""
    if trigger(values) != "nan":  # the most telling trigger: NaN whenever an input holds one
        return False
    ref_leaves = leaves(ref)
    other_leaves = [lv for lv in (leaves(o) for o in others) if len(lv) == len(ref_leaves)]
    for j, r in enumerate(ref_leaves):
        if not isinstance(r, np.ndarray) or r.dtype.kind not in "fc":
            continue
        outs = [lv[j] for lv in other_leaves if isinstance(lv[j], np.ndarray) and lv[j].shape == r.shape
                and lv[j].dtype.kind in "fc"]
        if not outs:
            continue
        with np.errstate(all="ignore"):
            if np.any(~np.isnan(r) & np.logical_and.reduce([np.isnan(o) for o in outs])):
                return True
    return False


def same_shapes(value: Any, own: Any) -> bool:
    """Whether a float64 run's output ``value`` has the shapes of the member's own output ``own``
    (None: unknown, taken as the same). A result whose shape follows the input's dtype is no
    float64 evaluation of the same call: ``view(x, float64)`` reinterprets a float32 pair as one
    float64, and on an upcast input reinterprets nothing."""
    return own is None or output_shapes(value) == output_shapes(own)


def as_float64(values: Mapping[int, Any]) -> dict[int, Any] | None:
    """``values`` with every numeric array that is not float64 as float64 (a complex array's
    real part); None if nothing changed."""
    def cast(a: np.ndarray) -> np.ndarray:
        return (a.real if a.dtype.kind == "c" else a).astype(np.float64)

    changed = False
    out: dict[int, Any] = {}
    for slot, v in values.items():
        if isinstance(v, np.ndarray) and v.dtype.kind in "biufc" and v.dtype != np.float64:
            out[slot], changed = cast(v), True
        else:
            out[slot] = v
    return out if changed else None


def output_shapes(value: Any) -> tuple[tuple[int, ...], ...]:
    """The shapes of ``value``'s leaves, in order."""
    return tuple(tuple(np.shape(v)) for v in leaves(value))


def implementation(member: Any, adapters: Mapping[str, Any]) -> str:
    """What ``member`` computes with: its adapter's ``compiled_kernels`` for a compiled call,
    else its ``kernels``, else its library (a library of its own kernels)."""
    ad = adapters.get(member.library)
    if member.call == "compiled" and getattr(ad, "compiled_kernels", None):
        return ad.compiled_kernels
    return getattr(ad, "kernels", None) or member.library


def voting_members(group: Any, ok: Sequence[int], order: Sequence[int],
                   implementation: Callable[[Any], str] | None = None) -> list[int]:
    """The members of ``ok`` that vote on a reference: one per implementation (the first in
    ``order``) where they span several, else every one (an intra-library group's members are
    the only independent calls there are). ``implementation(member)`` names what a member
    computes with (:func:`implementation`); default: its library."""
    impl = implementation or (lambda m: m.library)
    if len({impl(group.members[m]) for m in ok}) < 2:
        return list(ok)
    seen: set[str] = set()
    out = []
    for m in order:
        key = impl(group.members[m])
        if m in ok and key not in seen:
            seen.add(key)
            out.append(m)
    return out


def _width_class(dtype: np.dtype) -> str | None:
    """Integers (signed or not), reals and complexes each widen within their class."""
    return {"i": "int", "u": "int", "f": "float", "c": "complex"}.get(dtype.kind)


def narrower_members(outputs: Mapping[int, Any], ok: Sequence[int]) -> set[int]:
    """Members of ``ok`` whose result holds a narrower number than another member's at the same
    place (int32 where another returns int64; float32 against float64): they computed in less
    than the others (JAX without x64 turns an int64 input into int32) and are not preferred
    as the reference, whose wider peers would otherwise be blamed for keeping the value."""
    widest: dict[tuple[int, str], int] = {}
    per_member: dict[int, list[tuple[tuple[int, str], int]]] = {}
    for mi in ok:
        marks = []
        for j, leaf in enumerate(leaves(outputs[mi])):
            dt = getattr(leaf, "dtype", None)
            cls = _width_class(dt) if isinstance(dt, np.dtype) else None
            if cls is not None:
                marks.append(((j, cls), dt.itemsize))
                widest[(j, cls)] = max(widest.get((j, cls), 0), dt.itemsize)
        per_member[mi] = marks
    return {mi for mi, marks in per_member.items() if any(size < widest[at] for at, size in marks)}


def _holds(a: Any, ref_leaf: np.ndarray, tol: Any, inputs: Sequence[np.dtype], dtypes: Counter) -> bool:
    """Whether output leaf ``a`` gives the float64 reference ``ref_leaf`` within the tolerance of
    the dtype it computed in, or is that reference rounded to its dtype."""
    own = computation_tolerance(tol, [*inputs, a.dtype]) if inputs else tol
    return compare_group([ref_leaf, a], reference=0, tol=own).values_agree or _rounds_to(a, ref_leaf, tol, dtypes)


def _leaf_dtypes(outputs: Mapping[int, Any], ok: Sequence[int]) -> Counter:
    return Counter(a.dtype for mi in ok for a in leaves(outputs[mi]) if isinstance(a, np.ndarray))


def output_leaf(outputs: Mapping[int, Any], mi: int, leaf: int) -> Any:
    """Leaf ``leaf`` of member ``mi``'s output in ``outputs``, or None where it has fewer."""
    lv = leaves(outputs[mi])
    return lv[leaf] if leaf < len(lv) else None


def none_holds(outputs: Mapping[int, Any], ok: Sequence[int], leaf: int, ref_leaf: np.ndarray,
               tol: Any, inputs: Sequence[np.dtype] = ()) -> bool:
    """Whether no member of ``ok`` gives the float64 reference ``ref_leaf`` at leaf ``leaf``
    within the tolerance of the dtype it computed in (or that reference rounded to its dtype):
    every library's evaluation in the input's precision lost the result, so none of them is
    the one to blame. A member whose result is a 64-bit float where an input is a narrower
    float evaluated in float64 (scipy upcasts float32), not in the input's precision: it does
    not count (jax's and torch's float32 cauchy.logpdf at 3.4e38 both overflow; scipy's was
    taken as the float32 evaluation that holds)."""
    dtypes = _leaf_dtypes(outputs, ok)
    narrow = any(np.dtype(d).name in _LOW_FLOATS for d in inputs)
    for mi in ok:
        a = output_leaf(outputs, mi, leaf)
        if not isinstance(a, np.ndarray) or a.shape != ref_leaf.shape:
            continue
        if narrow and a.dtype.kind in "fc" and a.dtype.name not in _LOW_FLOATS:
            continue
        if _holds(a, ref_leaf, tol, inputs, dtypes):
            return False
    return True


def shared_loss(group: Any, outputs: Mapping[int, Any], ok: Sequence[int], outlier: int, leaf: int,
                ref_leaf: np.ndarray, adapters: Mapping[str, Any], inputs: Sequence[np.dtype] = ()) -> bool:
    """Whether a member of another implementation than the outlier's, with a float result
    narrower than the float64 reference ``ref_leaf``, does not hold that reference either: the
    outlier's loss is then the computation's precision (two libraries' float32 cancellation in
    squareplus's documented formula, blamed on whichever the fuzzer met first), not one
    library's unstable method (JAX's expon.logcdf, whose float32 peers stay exact)."""
    own = implementation(group.members[outlier], adapters)
    dtypes = _leaf_dtypes(outputs, ok)
    for mi in ok:
        if mi == outlier or mi not in outputs or implementation(group.members[mi], adapters) == own:
            continue
        a = output_leaf(outputs, mi, leaf)
        if (isinstance(a, np.ndarray) and a.shape == ref_leaf.shape and a.dtype.name in _LOW_FLOATS
                and not _holds(a, ref_leaf, group.tolerance or None, inputs, dtypes)):
            return True
    return False


def agreement(group: Any) -> Agreement:
    """The agreement test of ``group`` (its own tolerance, else the comparator's defaults)."""
    return Agreement(getattr(group, "tolerance", None) or None)


def pivot_order(group: Any, members: Sequence[int], adapters: Mapping[str, Any],
                call_order: Sequence[str]) -> list[int]:
    """Members in reference preference: an API another member's documentation says it
    implements (``scipy.stats.cauchy.ppf`` before ``jax.scipy.stats.cauchy.ppf``, "JAX
    implementation of scipy.stats.cauchy"), then the numpy-like library, then inside one
    library the plainest call style (``triage.toml``)."""
    order = call_order
    declared = declared_originals(group.members)

    def rank(mi: int) -> tuple[int, int, int, int, int]:
        m = group.members[mi]
        ad = adapters.get(m.library)
        style = call_rank(m.call, order)
        # a device twin (torch.sum@cuda:0) is measured against the CPU run, never the reverse
        on_device = 0 if getattr(m, "device", None) in (None, "cpu") else 1
        return (0 if mi in declared else 1, getattr(ad, "pivot_rank", 50), style, on_device, mi)
    return sorted(members, key=rank)


def find_outlier(group: Any, outputs: Mapping[int, Any], ok: Sequence[int], ref_member: int,
                 ref_value: Any, *, precise: bool = False,
                 inputs: Sequence[np.dtype] = ()) -> tuple[int | None, int]:
    """The member farthest from the reference and the index of the leaf where it differs.

    ``precise``: the reference is a float64 evaluation. A member whose lower-precision
    result equals that reference rounded to its own dtype (a float32 determinant that
    overflows to inf where the float64 one is 1e39) did what its dtype allows and is not
    an outlier; without this the member that overflows honestly was blamed. ``inputs``: the
    dtypes of the input arrays; each member is measured at the tolerance of the dtype it
    computed in (:func:`xamt.compare.computation_tolerance`)."""
    best: tuple[float, int, int] | None = None
    ref_leaves = leaves(ref_value)
    tol = group.tolerance or None
    dtypes = Counter(a.dtype for mi in ok for a in leaves(outputs[mi]) if isinstance(a, np.ndarray))
    for mi in ok:
        lv = leaves(outputs[mi])
        if len(lv) != len(ref_leaves):
            d = float("inf")
            cand = (d, mi, 0)
        else:
            cand = None
            for j, (a, r) in enumerate(zip(lv, ref_leaves)):
                if isinstance(a, np.ndarray) and isinstance(r, np.ndarray):
                    own = computation_tolerance(tol, [*inputs, a.dtype]) if inputs else tol
                    rep = compare_group([r, a], reference=0, tol=own)
                    if not rep.values_agree and precise and _rounds_to(a, r, tol, dtypes):
                        continue
                    if not rep.values_agree:
                        cand = (rep.members[1].distance, mi, j)
                        break
                elif a != r:
                    cand = (float("inf"), mi, j)
                    break
        if cand is not None and (best is None or cand[0] > best[0]):
            best = cand
    if best is None:
        return None, 0
    return best[1], best[2]


#: finite stand-ins for an infinite input, in float64, growing; each of the smaller ones also a
#: fraction off (a function with poles on the way, such as beta(a, b) as b goes to -inf, takes
#: values of either sign between them and has no limit)
LIMIT_PROBES = (1e4, 1e6, 1e8, 1e12, 1e16)
_PROBE_OFFSET = 0.3


def _far(v: Any, huge: bool) -> Any:
    """Which elements of a slot value (a float array or a Python float) the stand-ins replace:
    its infinities, and with ``huge`` its finite values beyond the largest stand-in too."""
    if isinstance(v, np.ndarray):
        if v.dtype.kind != "f":
            return np.zeros(v.shape, bool)
        with np.errstate(invalid="ignore"):
            return np.isinf(v) | (huge & (np.abs(v) > LIMIT_PROBES[-1]))
    return isinstance(v, float) and (math.isinf(v) or (huge and abs(v) > LIMIT_PROBES[-1]))


def _with_probe(values: Mapping[int, Any], p: float, huge: bool) -> dict[int, Any]:
    """``values`` with each element :func:`_far` replaced by ``p`` of its sign."""
    out: dict[int, Any] = {}
    for s, v in values.items():
        far = _far(v, huge)
        if not np.any(far):
            out[s] = v
        elif isinstance(v, np.ndarray):
            out[s] = np.where(far, np.sign(v) * p, v).astype(v.dtype)
        else:
            out[s] = math.copysign(p, v)
    return out


def _tends_to(main: np.ndarray, v: float) -> bool:
    """Whether the values at growing stand-ins ``main`` approach the finite number ``v``: the last
    is within 1e-2 of it (relative above 1) and no farther than the first. Bessel's y0 tends to
    0 while changing sign, too slowly for the values to settle."""
    if not math.isfinite(v):
        return False
    gap = np.abs(main - v)
    return bool(gap[-1] <= 1e-2 * max(1.0, abs(v)) and gap[-1] <= gap[0])


def _limit(main: np.ndarray, offs: np.ndarray, ref_v: float, out_v: float, settle: int = 3
           ) -> float | None | str:
    """The limit of one element's values at growing stand-ins ``main`` (and ``offs``, the
    smaller ones a fraction further): a number, ±inf, None where there is none (NaN on the way,
    a change of sign, a magnitude that goes up and down), or ``"unknown"`` (a magnitude that
    shrinks without settling: 1/log(x) tends to 0 too slowly to tell). ``ref_v`` and ``out_v``:
    the two sides' results at the infinity, a limit either may be tending to. A NaN from the
    ``settle``-th stand-in on (1e12, 1e16: float64 special functions give up there, scipy's y0
    among them) ends the sequence instead."""
    bad = np.flatnonzero(np.isnan(main))
    if bad.size:
        if bad[0] < settle:
            return None
        main, offs = main[:bad[0]], offs[:bad[0]]
    if np.isnan(offs).any():
        return None
    for v in (ref_v, out_v):
        if _tends_to(main, v):
            return v
    last, prev = main[-1], main[-2]
    if np.isfinite(last) and np.isfinite(prev) and abs(last - prev) <= 1e-6 * max(1.0, abs(last)):
        return float(last)
    sign = np.sign(last)
    if sign == 0 or (np.sign(main) != sign).any() or (np.sign(offs) != sign).any():
        return None
    mags = np.abs(main)
    # comparisons, not differences: inf - inf is NaN where exp(1e4) and exp(1e6) overflow alike
    if (mags[1:] >= mags[:-1]).all():
        return float(sign * np.inf)
    if (mags[1:] <= mags[:-1]).all():
        return "unknown"
    return None


def limit_at_infinity(run: Callable[[dict[int, Any]], np.ndarray | None], values: Mapping[int, Any],
                      ref_leaf: np.ndarray, out_leaf: np.ndarray, *, huge: bool = False) -> str:
    """Which side the float64 reference's own limit takes where an input is infinite and one side
    is NaN and the other a number: ``"reference"``, ``"outlier"``, ``"none"`` (no limit: NaN is
    as right as the reference's number, scipy's ``beta(0.73, -inf)`` being inf), or
    ``"unknown"``. ``run(values)`` evaluates the reference member on float64 ``values`` with
    the infinities replaced by :data:`LIMIT_PROBES` (and a fraction off), returning the leaf
    compared. ``values`` are the float64 inputs the reference ran on.

    ``huge``: finite inputs beyond the largest stand-in are replaced too (3.4e38, where a
    float64 special function may give up: scipy's ``airy`` is NaN from 1e8 on where
    Ai(x) has underflowed to 0 long before, and torch's 0 was blamed)."""
    if out_leaf.shape != ref_leaf.shape or out_leaf.dtype.kind != "f" or ref_leaf.dtype.kind != "f":
        return "unknown"
    with np.errstate(all="ignore"):
        odd = np.isnan(out_leaf) != np.isnan(ref_leaf)
    if not odd.any() or not any(np.any(_far(v, huge)) for v in values.values()):
        return "unknown"
    main, offs = [], []
    for i, p in enumerate(LIMIT_PROBES):
        for seq, probe in ((main, p), (offs, p + _PROBE_OFFSET)) if i < len(LIMIT_PROBES) - 2 else ((main, p),):
            y = run(_with_probe(values, probe, huge))
            if y is None or np.shape(y) != ref_leaf.shape:
                return "unknown"
            seq.append(np.asarray(y, np.float64)[odd])
    m, o = np.stack(main), np.stack(offs)
    sides = set()
    for e in range(m.shape[1]):
        ref_v, out_v = float(ref_leaf[odd][e]), float(out_leaf[odd][e])
        # a reference that gives up at a huge finite input may do so from 1e8 on (scipy's airy)
        lim = _limit(m[:, e], o[:, e], ref_v, out_v, settle=2 if huge else 3)
        if lim is None:
            sides.add("none")
            continue
        if lim == "unknown":
            return "unknown"
        near = lambda v: v == lim or (math.isfinite(lim) and math.isfinite(v)  # noqa: E731
                                      and abs(v - lim) <= 1e-3 * abs(lim) + 1e-6)
        sides.add("reference" if near(ref_v) else "outlier" if near(out_v) else "unknown")
    return sides.pop() if len(sides) == 1 else "unknown"


@dataclass(frozen=True)
class Referee:
    """Member ``member`` of the cross-library group ``group``: an API that a group inside one
    library also holds. Its group's other libraries referee that group's divergences."""

    group: Any
    member: int


def referee_index(groups: Iterable[Any]) -> dict[tuple[str, str], list[Referee]]:
    """Cross-library groups by ``(library, target)`` of each member run where its library puts
    it (a device twin is measured against the CPU, never a referee)."""
    index: dict[tuple[str, str], list[Referee]] = {}
    for g in groups:
        if g.relation != "cross_library":
            continue
        for i, m in enumerate(g.members):
            if getattr(m, "device", None) in (None, "cpu"):
                index.setdefault((m.library, m.target), []).append(Referee(g, i))
    return index


def _same_literal(a: Any, b: Any) -> bool:
    """Whether two fixed plan values (numbers, strings, lists) are the same, type included."""
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):  # arrays: an ambiguous truth value
        return False


def translate(src: Any, values: Mapping[int, Any], dst: Any) -> dict[int, Any] | None:
    """The slot values of ``dst``'s group that make ``dst`` the call ``src`` makes on ``values``
    (both members of one API, in two groups): each parameter goes where ``dst``'s plan puts it.
    None when the calls cannot be the same: a parameter ``src`` passes that ``dst`` does not
    take, another transform, another fixed value, or a parameter ``dst`` requires and ``src``
    leaves out."""
    given: dict[str, tuple[str, Any, str | None]] = {}
    for a in src.plan.args + src.plan.init_args:
        if a.slot is None:
            given[a.param] = ("fixed", a.value, a.transform)
        elif a.slot in values:
            given[a.param] = ("slot", values[a.slot], a.transform)
        elif a.has_default:
            given[a.param] = ("default", a.default, None)
    out: dict[int, Any] = {}
    used: set[str] = set()
    for b in dst.plan.args + dst.plan.init_args:
        how = given.get(b.param)
        if how is None:
            if b.slot is None or b.required:
                return None
            continue
        kind, value, transform = how
        used.add(b.param)
        if b.slot is None:
            if kind == "slot" or transform != b.transform or not _same_literal(value, b.value):
                return None
        elif kind == "slot":
            if transform != b.transform:
                return None
            out[b.slot] = value
        elif kind == "default" and b.has_default and _same_literal(value, b.default):
            continue  # dst passes the same default where the slot has no value
        elif transform is None and b.transform is None:
            out[b.slot] = value
        else:
            return None
    if any(kind != "default" and p not in used for p, (kind, _, _) in given.items()):
        return None
    return out


@dataclass
class ReferenceChooser:
    """Picks the reference member of a divergence; ``run(group, values, members)`` calls members
    (triage's counted calls through the campaign's executor)."""

    adapters: Mapping[str, Any]
    #: reference preference among call styles inside one library (``triage.toml``)
    call_order: Sequence[str]
    run: Callable[[Any, Mapping[int, Any], Sequence[int]], list[MemberResult]]
    #: cross-library groups by ``(library, target)`` of a member (:func:`referee_index`)
    referees: Mapping[tuple[str, str], Sequence[Referee]] = field(default_factory=dict)
    #: referee groups run at most this many times for one choice
    max_referees: int = 2

    def pivot_order(self, group: Any, members: Sequence[int]) -> list[int]:
        """:func:`pivot_order` with this chooser's adapters and call order."""
        return pivot_order(group, members, self.adapters, self.call_order)

    def implementation(self, member: Any) -> str:
        """:func:`implementation` with this chooser's adapters."""
        return implementation(member, self.adapters)

    def refereed(self, group: Any, values: Mapping[int, Any], ok: Sequence[int],
                 outputs: Mapping[int, Any]) -> tuple[int, str] | None:
        """``(member, label)`` of the side a :class:`Referee` takes in a group inside one
        library, or None. The referee's members of implementations the group does not hold are
        run on the same call; at least two of them must agree, as a strict majority, and their
        result must agree with some of the group's members and not others. Without this an
        eager/compiled pair was decided by the call order (TensorFlow's eager ``argmax`` wrong,
        its XLA twin blamed), and a namespace twin by its own library's float64 run."""
        if getattr(group, "relation", "cross_library") == "cross_library" or not self.referees:
            return None
        impls = {self.implementation(group.members[m]) for m in ok}
        libs = {group.members[m].library for m in ok}
        norm = getattr(group, "normalisation", None) or "none"
        tried = 0
        for mi in self.pivot_order(group, ok):
            m = group.members[mi]
            for ref in self.referees.get((m.library, m.target), ()):
                if tried >= self.max_referees:
                    return None
                if (getattr(ref.group, "normalisation", None) or "none") != norm:
                    continue  # outputs reduced another way (sorted, by magnitude) do not compare
                vals = translate(m, values, ref.group.members[ref.member])
                if vals is None:
                    continue
                others = [i for i, c in enumerate(ref.group.members)
                          if c.library not in libs and self.implementation(c) not in impls
                          and getattr(c, "device", None) in (None, "cpu")]
                if len({self.implementation(ref.group.members[i]) for i in others}) < 2:
                    continue
                tried += 1
                res = self.run(ref.group, vals, others)
                got = {i: r.value for i, r in zip(others, res) if r.ok}
                voters = voting_members(ref.group, list(got), self.pivot_order(ref.group, list(got)),
                                        self.implementation)
                if len(voters) < 2:
                    continue
                test = agreement(ref.group)
                dtypes = input_dtypes(vals)
                flags = test.group([got[v] for v in voters], dtypes)
                if sum(flags) < 2 or 2 * sum(flags) <= len(voters):
                    continue
                judges = [v for v, f in zip(voters, flags) if f]
                verdict = got[judges[0]]
                own_dtypes = input_dtypes(values)
                side = [x for x in self.pivot_order(group, ok) if test.pair(verdict, outputs[x], own_dtypes)]
                if side and len(side) < len(ok):
                    names = ", ".join(ref.group.members[j].qualname for j in judges)
                    return side[0], f"{group.members[side[0]].qualname} (agrees with {names} on the same call)"
        return None

    def shape_side(self, group: Any, values: Mapping[int, Any], ok: Sequence[int],
                   outputs: Mapping[int, Any]) -> tuple[int, str] | None:
        """``(member, label)`` of the side whose outputs have the shape the group's other
        implementations give on the same input in float64, where the members that returned
        differ in shape with no majority among them, or None.

        Where the others refused the input's dtype, two members can be left, and a float64 run
        of either repeats its own shape: ``tf.experimental.numpy.isposinf`` returns a scalar
        for a complex array, Keras the array's shape, and the float64 run of the first blamed
        the second. The side must keep the shape of the input's arrays (broadcast together),
        and at least two implementations of the others must give that shape, all that return."""
        shapes = {m: output_shapes(outputs[m]) for m in ok}
        if len(set(shapes.values())) < 2:
            return None
        pivots = self.pivot_order(group, ok)
        voters = voting_members(group, ok, pivots, self.implementation)
        if 2 * max(Counter(shapes[v] for v in voters).values()) > len(voters):
            return None  # a majority of the implementations settles it
        arrays = [v.shape for v in values.values() if isinstance(v, np.ndarray)]
        try:
            expected = tuple(np.broadcast_shapes(*arrays)) if arrays else None
        except ValueError:
            return None
        side = [m for m in pivots if shapes[m] and all(s == expected for s in shapes[m])]
        cast = as_float64(values)
        if not side or len(side) == len(ok) or cast is None:
            return None
        impls = {self.implementation(group.members[m]) for m in ok}
        others = [i for i, c in enumerate(group.members) if i not in ok and self.implementation(c) not in impls
                  and getattr(c, "device", None) in (None, "cpu")]
        if len({self.implementation(group.members[i]) for i in others}) < 2:
            return None
        got = {i: r.value for i, r in zip(others, self.run(group, cast, others)) if r.ok}
        judges = voting_members(group, list(got), self.pivot_order(group, list(got)), self.implementation)
        if len(judges) < 2 or any(output_shapes(got[j]) != shapes[side[0]] for j in judges):
            return None
        names = ", ".join(group.members[j].qualname for j in judges)
        return side[0], f"{group.members[side[0]].qualname} (keeps the shape {names} give on the input in float64)"

    def choose(self, group: Any, values: Mapping[int, Any], ok: Sequence[int],
               outputs: Mapping[int, Any]) -> tuple[int, Any, str, dict[int, Any] | None]:
        """(member, its output, label, the values it ran on when not ``values``). Where the
        members span several implementations, each votes once (its first member in pivot
        order): a library's aliases (``tf.math.special.bessel_k0e`` and its ``raw_ops`` twin),
        or libraries on one backend (JAX, Keras on JAX and TensorFlow's XLA, which all flush subnormals; numpy,
        dask and array-api-strict), must not outvote the others. Members whose results are
        :func:`narrower_members` come last in the pivot order. A group inside one library
        takes the side its referee takes (:meth:`refereed`) before anything else; members that
        differ in shape with no majority, the side the others' shapes take (:meth:`shape_side`)."""
        refereed = self.refereed(group, values, ok, outputs) or self.shape_side(group, values, ok, outputs)
        if refereed is not None:
            return refereed[0], outputs[refereed[0]], refereed[1], None
        pivots = self.pivot_order(group, ok)
        narrow = narrower_members(outputs, ok)
        pivots = [m for m in pivots if m not in narrow] + [m for m in pivots if m in narrow]
        voters = voting_members(group, ok, pivots, self.implementation)
        single = len({self.implementation(group.members[o]) for o in voters}) < 2
        up = upcast(values, float_computed_slots(group, values, outputs))
        if up is not None:
            for mi in pivots:
                res = self.run(group, up, [mi])[0]
                # a library that silently computes in lower precision (JAX without x64) gives no
                # float64 reference: its float leaves must come back as float64/complex128
                if res.ok and all(not isinstance(v, np.ndarray) or v.dtype.kind not in "fc"
                                  or v.dtype.itemsize >= 8 and v.dtype != np.complex64
                                  for v in leaves(res.value)) and same_shapes(res.value, outputs.get(mi)):
                    own = self.implementation(group.members[mi])
                    # inside one implementation every other member is a voice of its own:
                    # torch.masked.median's float64 run drops the NaN torch.median keeps
                    others = [outputs[o] for o in voters if o != mi] if single else \
                        [outputs[o] for o in voters if self.implementation(group.members[o]) != own]
                    if nan_against_majority(res.value, others) or drops_nan(res.value, others, values):
                        # NaN where most others agree on numbers, or a number where every other
                        # propagates an input's NaN: the next one, or the majority
                        continue
                    return mi, res.value, f"{group.members[mi].qualname} on float64 inputs", up
        flags = agreement(group).group([outputs[m] for m in voters], input_dtypes(values))
        # a strict majority agreeing with the median is a reference; two voters, or a split
        # group, have none: then the library that ranks first as a pivot (numpy-like) is
        if 2 * sum(flags) > len(voters):
            mi = next(m for m, f in zip(voters, flags) if f)
            return mi, outputs[mi], f"{group.members[mi].qualname} (agrees with the majority)", None
        mi = pivots[0]
        return mi, outputs[mi], f"{group.members[mi].qualname} ({NO_MAJORITY})", None
