"""``compare_group``: the front end shared by the three backends.

It classifies the members (shape, kind, dtype), resolves the tolerance, takes the bitwise-equal
shortcut when it can, hands contiguous native arrays to a backend kernel and turns the kernel's
counts and maxima into a :class:`GroupReport`. It is written for the fuzzer's hot loop (groups
of a few small arrays, thousands of calls a second): per-dtype facts come from a cached table
and the common all-same-shape, all-same-dtype case skips the general bookkeeping.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from xamt.compare.dtypes import DtypeInfo, dtype_info, resolve_tolerance
from xamt.compare.errors import BackendUnavailableError, CompareUsageError
from xamt.compare.report import (
    PATTERN_PENALTY,
    SIGNED_ZERO_UNITS,
    GroupReport,
    MemberReport,
    value_distance,
)
from xamt.compare.tolerance import Tolerance
from xamt.log import get_logger

__all__ = ["compare_group", "get_backend", "available_backends", "BACKENDS"]

log = get_logger("compare")

BACKENDS = ("c", "numba", "numpy")
_DOMAINS = {"int": 0, "float": 1, "complex": 2}
_NAN = float("nan")
#: With the C backend missing, "auto" uses numba from this many elements (all members together).
#: Once compiled numba is faster than numpy at every size (bench/compare_bench.py), but its first
#: call costs about 2 s (0.6 s from the disk cache), which small comparisons should not pay.
NUMBA_MIN_ELEMENTS = 1 << 16
#: Bitwise-equal shortcut: arrays up to this many bytes are compared with tobytes(), larger ones
#: with memcmp (C) or numpy, without copies.
_SMALL_BYTES = 1 << 12


@functools.cache
def get_backend(name: str):
    """The backend object named ``name`` ("c", "numba", "numpy"); raises when it cannot run."""
    if name == "numpy":
        from xamt.compare.backend_numpy import NumpyBackend
        return NumpyBackend()
    if name == "c":
        from xamt.compare.backend_c import CBackend
        return CBackend.load()
    if name == "numba":
        try:
            from xamt.compare.backend_numba import NumbaBackend
        except ImportError as exc:
            raise BackendUnavailableError(f"numba backend unavailable: {exc}") from exc
        return NumbaBackend()
    raise CompareUsageError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)} or auto")


def available_backends() -> list[str]:
    """Backends that can run in this process, fastest first."""
    names = []
    for name in BACKENDS:
        try:
            get_backend(name)
        except BackendUnavailableError:
            continue
        names.append(name)
    return names


@functools.cache
def _c_or_none():
    try:
        return get_backend("c")
    except BackendUnavailableError as exc:
        log.warning("C comparator unavailable, falling back to numba/numpy: %s", exc)
        return None


def _pick_backend(name: str, elements: int):
    """The backend for a call: the named one, or for "auto" the fastest available (see
    ``bench/compare_bench.py``: C wins at every size; numba only above NUMBA_MIN_ELEMENTS)."""
    if name == "auto":
        c = _c_or_none()
        if c is not None:
            return c
        if elements >= NUMBA_MIN_ELEMENTS:
            try:
                return get_backend("numba")
            except BackendUnavailableError:
                pass
        return get_backend("numpy")
    return get_backend(name)


def _as_array(obj) -> np.ndarray:
    if type(obj) is np.ndarray:
        return obj
    try:
        return np.asarray(obj)
    except Exception:  # ragged nesting and other unconvertible data: compare as one object
        holder = np.empty((), dtype=object)
        holder[()] = obj
        return holder


def _majority(values: list) -> object:
    """The most common value; ties go to the one that occurs first."""
    best, best_count = values[0], 0
    for v in values:
        c = values.count(v)
        if c > best_count:
            best, best_count = v, c
    return best


def _kernel_array(a: np.ndarray, info: DtypeInfo) -> np.ndarray:
    if info.convert is not None:
        a = a.astype(info.convert)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a


def _small_equal(arrays: list[np.ndarray]) -> bool:
    first = arrays[0].tobytes()
    for a in arrays[1:]:
        if a.tobytes() != first:
            return False
    return True


def _bytes_equal(arrays: list[np.ndarray], nbytes: int) -> bool:
    c = _c_or_none()
    if c is not None:
        return c.bytes_equal(arrays, nbytes)
    flat0 = arrays[0].reshape(-1).view(np.uint8)
    return all(np.array_equal(flat0, a.reshape(-1).view(np.uint8)) for a in arrays[1:])


def _opaque_equal(x, y) -> bool:
    try:
        return x is y or bool(x == y)
    except Exception:
        return False


def _opaque_compare(arrays, active, ref, n):
    """Exact element equality for dtypes without arithmetic (strings, objects, datetimes...)."""
    k = len(arrays)
    counts = [0, 0, 0, 0, -1] * k
    maxima = [0.0] * (4 * k)
    r = arrays[ref].reshape(-1)
    for i in range(k):
        if not active[i] or i == ref:
            continue
        a = arrays[i].reshape(-1)
        if a.dtype == r.dtype and a.dtype != object:
            width = a.dtype.itemsize
            same = (a.view(np.uint8).reshape(n, width) == r.view(np.uint8).reshape(n, width)).all(1) \
                if width else np.ones(n, bool)
        else:
            same = np.array([_opaque_equal(x, y) for x, y in zip(a.tolist(), r.tolist())], bool)
        bad = np.flatnonzero(~same)
        counts[5 * i + 3] = int(bad.size)
        counts[5 * i + 4] = int(bad[0]) if bad.size else -1
    return counts, maxima


def compare_group(outputs, reference=None, tol=None, signed_zero=False, backend="auto") -> GroupReport:
    """Compare k >= 2 outputs of the same operation; see :mod:`xamt.compare` for the semantics.

    ``outputs``: numpy arrays (anything ``np.asarray`` accepts) of any numpy / ml_dtypes dtype.
    ``reference``: index of the member the others are measured against, or None for the
    element-wise median. ``tol``: None (per-dtype defaults), a :class:`Tolerance` or (rtol,
    atol) pair, or a mapping dtype -> Tolerance. ``signed_zero``: -0.0 and +0.0 differ.
    ``backend``: "auto", "c", "numba" or "numpy" (identical reports).

    Raises :class:`CompareUsageError` for bad arguments, never for differences in the data.
    """
    if isinstance(outputs, np.ndarray):
        raise CompareUsageError("outputs must be a sequence of arrays, not one array")
    try:
        k = len(outputs)
    except TypeError:
        raise CompareUsageError("outputs must be a sequence of arrays") from None
    if k < 2:
        raise CompareUsageError(f"compare_group needs at least 2 outputs, got {k}")
    arrays = [o if type(o) is np.ndarray else _as_array(o) for o in outputs]
    if reference is not None:
        if isinstance(reference, bool) or not isinstance(reference, (int, np.integer)):
            raise CompareUsageError(f"reference must be an index or None, got {reference!r}")
        if not -k <= reference < k:
            raise CompareUsageError(f"reference {reference} out of range for {k} outputs")
        reference = int(reference) % k
    signed_zero = bool(signed_zero)
    if backend != "auto" and backend not in BACKENDS:
        raise CompareUsageError(
            f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)} or auto")
    a0 = arrays[0]
    shape0, dt0 = a0.shape, a0.dtype
    uniform = True
    for a in arrays:
        if a.shape != shape0 or a.dtype != dt0:
            uniform = False
            break

    if uniform:  # the fuzzer's usual case: one shape, one dtype
        info = dtype_info(dt0)
        infos = [info] * k
        ref_shape = shape0
        active = (True,) * k
        ref_kind = info.kind
        kind_ok = active
        kinds = {info.kind}
        act_infos = infos
        labels = [info.label] * k
    else:
        infos = [dtype_info(a.dtype) for a in arrays]
        shapes = [a.shape for a in arrays]
        ref_shape = shapes[reference] if reference is not None else _majority(shapes)
        active = tuple(s == ref_shape for s in shapes)
        act_infos = [inf for inf, act in zip(infos, active) if act]
        all_kinds = [inf.kind for inf in infos]
        ref_kind = all_kinds[reference] if reference is not None else _majority(all_kinds)
        kind_ok = tuple(kd == ref_kind for kd in all_kinds)
        kinds = {inf.kind for inf in act_infos}
        labels = [inf.label for inf in infos]

    if "other" in kinds:
        domain = "opaque"
    elif "complex" in kinds:
        domain = "complex"
    elif "float" in kinds:
        domain = "float"
    else:
        domain = "int"
    if type(tol) is Tolerance:
        tolerance = tol
    elif tol is None and uniform:
        tolerance = infos[0].default_tol
    else:
        tolerance = resolve_tolerance(tol, act_infos)
    n = math.prod(ref_shape)
    ref_rule = "index" if reference is not None else "median"
    if domain == "opaque" and reference is None:
        reference, ref_rule = active.index(True), "first"

    if uniform and n and (_small_equal(arrays) if n * dt0.itemsize <= _SMALL_BYTES
                          else _bytes_equal(arrays, n * dt0.itemsize)):
        counts = None
        used = "identical"
    elif domain == "opaque":
        counts, maxima = _opaque_compare(arrays, active, reference, n)
        used = "opaque"
    else:
        be = _c_or_none() if backend == "auto" else None
        if be is None:
            be = _pick_backend(backend, n * len(act_infos))
        if uniform:
            info = infos[0]
            if info.convert is None:
                kernel_arrays = [a if a.flags.c_contiguous else np.ascontiguousarray(a)
                                 for a in arrays]
            else:
                kernel_arrays = [_kernel_array(a, info) for a in arrays]
            codes = (info.code,) * k
            scales = (info.ulp_scale,) * k
            mins = (info.ulp_min,) * k
        else:
            kernel_arrays = [_kernel_array(a, inf) if act else a
                             for a, inf, act in zip(arrays, infos, active)]
            codes = tuple(inf.code for inf in infos)
            scales = tuple(inf.ulp_scale for inf in infos)
            mins = tuple(inf.ulp_min for inf in infos)
        counts, maxima = be.run(kernel_arrays, codes, active, n,
                                -1 if reference is None else reference, _DOMAINS[domain],
                                tolerance.rtol, tolerance.atol, signed_zero, scales, mins)
        used = be.name
    if backend != "auto" and used in ("identical", "opaque"):
        get_backend(backend)  # still reject a backend that cannot run here

    # Distances, agreement and outlier now; the MemberReport objects only when asked for.
    big = PATTERN_PENALTY
    agree = True
    dispersion = 0.0
    outlier = None
    if counts is None:  # bitwise identical: nothing differs
        def members():
            return tuple(MemberReport(i, labels[i], shape0, True, True) for i in range(k))
    else:
        dists = []
        opaque = domain == "opaque"
        best = -1.0
        for i in range(k):
            if not active[i]:
                dist = big * (n if n > 0 else 1)
                agree = False
            else:
                j = 5 * i
                c0, c1, c2, c3 = counts[j], counts[j + 1], counts[j + 2], counts[j + 3]
                if opaque:
                    dist = big * c3
                else:
                    m3 = maxima[4 * i + 3]
                    dist = ((m3 if m3 <= 1.0 else value_distance(m3)) + big * (c0 + c1)
                            + SIGNED_ZERO_UNITS * c2)
                if c0 or c1 or c2 or c3 or not kind_ok[i]:
                    agree = False
            dists.append(dist)
            dispersion += dist
            if dist > best:
                best, outlier = dist, i
        if agree:
            outlier = None
        elif best == 0.0:  # only kinds differ
            outlier = kind_ok.index(False)

        # shapes, not arrays: a report must not keep the outputs alive
        odd_shapes = {i: arrays[i].shape for i in range(k) if not active[i]}

        def members():
            out = []
            for i in range(k):
                if not active[i]:
                    out.append(MemberReport(i, labels[i], odd_shapes[i], False, kind_ok[i], 0,
                                            0, 0, 0, _NAN, _NAN, _NAN, _NAN, None, dists[i]))
                else:
                    c0, c1, c2, c3, first = counts[5 * i:5 * i + 5]
                    m0, m1, m2, m3 = maxima[4 * i:4 * i + 4]
                    out.append(MemberReport(i, labels[i], ref_shape, True, kind_ok[i], c0, c1, c2,
                                            c3, m0, m1, m2, m3, None if first < 0 else first,
                                            dists[i]))
            return tuple(out)

    return GroupReport(agree, members, reference if ref_rule != "median" else None,
                       ref_rule, ref_shape, ref_kind, domain, tolerance, signed_zero,
                       dispersion, outlier, used)
