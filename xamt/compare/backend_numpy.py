"""The ``numpy`` backend: the readable reference implementation of the comparison.

Whole-array numpy expressions, one member at a time, written to be read next to the definitions
in the package docstring; the other backends are tested against it. Integers are handled as
Python ints (object arrays), which is exact for any mix of int64 and uint64 values.
"""
from __future__ import annotations

import numpy as np

from xamt.compare.dtypes import Code

__all__ = ["NumpyBackend"]

_MAX = np.finfo(np.float64).max
_EXP = np.int64(0x7FF0000000000000)
_ABS = np.int64(0x7FFFFFFFFFFFFFFF)
_SENTINEL = np.iinfo(np.int64).max  # sorts after every finite key


def _as_float64(a: np.ndarray, code: int) -> np.ndarray:
    if code == Code.BOOL:
        return a.reshape(-1).astype(bool).astype(np.float64)
    return a.reshape(-1).astype(np.float64)  # exact for every float, rounds large integers


def _as_complex128(a: np.ndarray, code: int) -> np.ndarray:
    if code in (Code.C64, Code.C128):
        return a.reshape(-1).astype(np.complex128)
    return _as_float64(a, code).astype(np.complex128)  # imaginary part +0.0


def _as_ints(a: np.ndarray, code: int) -> np.ndarray:
    flat = a.reshape(-1)
    if code == Code.BOOL:
        flat = flat.astype(bool)
    return np.array([int(v) for v in flat.tolist()], dtype=object)


def _key(x: np.ndarray) -> np.ndarray:
    """int64 keys in the IEEE total order (-0.0 sorts before +0.0)."""
    b = x.view(np.int64)
    return np.where(b < 0, b ^ _ABS, b)


def _unkey(k: np.ndarray) -> np.ndarray:
    return np.where(k < 0, k ^ _ABS, k).view(np.float64)


def _midpoint(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        s = x + y
        return np.where(np.abs(s) <= _MAX, s * 0.5, x * 0.5 + y * 0.5)


def _median_of_finite(values: np.ndarray, finite: np.ndarray, nf: np.ndarray) -> np.ndarray:
    """Per column: median of the finite entries (middle value, or midpoint of the two middle
    values), in the total order; columns with no finite entry get garbage (callers override)."""
    keys = np.where(finite, _key(values), _SENTINEL)
    keys.sort(axis=0)
    lo_i = np.maximum((nf - 1) // 2, 0)[None, :]
    hi_i = np.maximum(nf // 2, 0)[None, :]
    lo = _unkey(np.take_along_axis(keys, lo_i, axis=0)[0])
    hi = _unkey(np.take_along_axis(keys, hi_i, axis=0)[0])
    return np.where(nf % 2 == 1, lo, _midpoint(lo, hi))


def _most_frequent_infinity(column: list) -> object:
    """The infinite value met most often in ``column``; ties go to the first one met."""
    best, best_count = None, 0
    for v in column:
        if v != v or np.isfinite(v):
            continue
        count = sum(1 for w in column if w == v)
        if count > best_count:
            best, best_count = v, count
    return best


def _reference_real(X: np.ndarray) -> np.ndarray:
    nan = np.isnan(X)
    inf = np.isinf(X)
    fin = ~nan & ~inf
    nn, ni, nf = nan.sum(0), inf.sum(0), fin.sum(0)
    ref = _median_of_finite(X, fin, nf)
    for j in np.flatnonzero(~((nf > 0) & (nf >= nn) & (nf >= ni))):
        ref[j] = np.nan if nn[j] >= ni[j] else _most_frequent_infinity(X[:, j].tolist())
    return ref


def _parts_close(x: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Elementwise: equal where either is not finite, else ``|x - b| <= atol + rtol * |b|``."""
    with np.errstate(invalid="ignore", over="ignore"):
        fin = np.isfinite(x) & np.isfinite(b)
        return np.where(fin, np.abs(x - b) <= atol + rtol * np.abs(b), x == b)


def _reference_complex(X: np.ndarray) -> np.ndarray:
    nan = np.isnan(X.real) | np.isnan(X.imag)
    fin = np.isfinite(X.real) & np.isfinite(X.imag)
    inf = ~nan & ~fin
    nn, ni, nf = nan.sum(0), inf.sum(0), fin.sum(0)
    ref = np.empty(X.shape[1], dtype=np.complex128)
    ref.real = _median_of_finite(X.real.copy(), fin, nf)
    ref.imag = _median_of_finite(X.imag.copy(), fin, nf)
    for j in np.flatnonzero(~((nf > 0) & (nf >= nn) & (nf >= ni))):
        if nn[j] >= ni[j]:
            ref[j] = complex(np.nan, np.nan)
        else:
            col = X[:, j].tolist()
            best, best_count = None, 0
            for v in col:
                if np.isnan(v) or (np.isfinite(v.real) and np.isfinite(v.imag)):
                    continue
                count = sum(1 for w in col if w.real == v.real and w.imag == v.imag)
                if count > best_count:
                    best, best_count = v, count
            ref[j] = best
    return ref


def _ulp(ab: np.ndarray, scale: float, mn: float) -> np.ndarray:
    """ulp of the member's dtype at |ref|: max(pow2floor(|ref|) * scale, mn)."""
    pow2floor = (ab.view(np.int64) & _EXP).view(np.float64)
    with np.errstate(invalid="ignore"):
        u = pow2floor * scale  # inf * 0 (|ref| overflowed, integer member) is NaN ...
    return np.where(u > mn, u, mn)  # ... and, as in C, NaN > mn is false: mn


def _maxima(d: np.ndarray, ab: np.ndarray, tau: np.ndarray, ulp: np.ndarray) -> list[float]:
    """(max |d|, max d/|ref|, max d/ulp, max d/tau) over the given finite pairs."""
    if d.size == 0:
        return [0.0, 0.0, 0.0, 0.0]
    pos = d > 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = np.where(pos, d / ab, 0.0)
        ulps = np.where(pos, d / ulp, 0.0)
        units = np.where(pos, d / tau, 0.0)
    units[np.isnan(units)] = 1.0  # inf / inf: an overflowing difference, infinite tolerance
    # rel and ulps are NaN for inf / inf too (a complex |ref| can overflow while its parts are
    # finite); such quotients raise no maximum, exactly as in the kernels' "q > max" updates
    return [float(_max0(d)), float(_max0(rel)), float(_max0(ulps)), float(_max0(units))]


def _max0(x: np.ndarray) -> float:
    """Largest non-NaN value of x, and at least 0."""
    return x.max(initial=0.0, where=~np.isnan(x))


def _first(*masks: np.ndarray) -> int:
    hit = np.flatnonzero(np.logical_or.reduce(masks))
    return int(hit[0]) if hit.size else -1


class NumpyBackend:
    """Reference implementation with whole-array numpy operations."""

    name = "numpy"

    def run(self, arrays, codes, active, n, ref, domain, rtol, atol, signed_zero, ulp_scale,
            ulp_min):
        """Kernel call; returns (counts: 5 ints per member, maxima: 4 floats per member)."""
        k = len(arrays)
        counts = [0, 0, 0, 0, -1] * k
        maxima = [0.0] * (4 * k)
        idx = [i for i in range(k) if active[i]]
        if not idx or n == 0:
            return counts, maxima
        tolzero = rtol == 0.0 and atol == 0.0
        if domain == 0:
            member = self._int_member
            X = [_as_ints(arrays[i], codes[i]) for i in idx]
            if ref >= 0:
                b = X[idx.index(ref)]
            else:  # lower median of exact integers
                b = np.sort(np.stack(X), axis=0)[(len(idx) - 1) // 2]
        else:
            member = self._complex_member if domain == 2 else self._real_member
            conv = _as_complex128 if domain == 2 else _as_float64
            X = np.stack([conv(arrays[i], codes[i]) for i in idx])
            if ref >= 0:
                b = X[idx.index(ref)]
            else:
                b = _reference_complex(X) if domain == 2 else _reference_real(X)
        for a, i in enumerate(idx):
            if i == ref:
                continue
            c, m = member(X[a], b, rtol, atol, tolzero, signed_zero, ulp_scale[i], ulp_min[i])
            counts[5 * i:5 * i + 5] = c
            maxima[4 * i:4 * i + 4] = m
        return counts, maxima

    @staticmethod
    def _real_member(x, b, rtol, atol, tolzero, signed_zero, scale, mn):
        ab = np.abs(b)
        with np.errstate(invalid="ignore", over="ignore"):
            thr = atol + rtol * ab
            xn, bn = np.isnan(x), np.isnan(b)
            nan_mm = xn != bn  # exactly one of them is NaN
            neither_nan = ~xn & ~bn
            some_inf = neither_nan & (np.isinf(x) | np.isinf(b))
            inf_mm = some_inf & (x != b)  # equal infinities agree
            fin = neither_nan & ~some_inf
            d = np.abs(x - b)
            val_mm = fin & (d > thr)
            sz_mm = (fin & ~val_mm & (x == 0.0) & (b == 0.0) & (np.signbit(x) != np.signbit(b))
                     if signed_zero else np.zeros_like(fin))
        tau = np.ones_like(thr) if tolzero else thr
        m = _maxima(d[fin], ab[fin], tau[fin], _ulp(ab[fin], scale, mn))
        c = [int(nan_mm.sum()), int(inf_mm.sum()), int(sz_mm.sum()), int(val_mm.sum()),
             _first(nan_mm, inf_mm, sz_mm, val_mm)]
        return c, m

    @staticmethod
    def _complex_member(x, b, rtol, atol, tolzero, signed_zero, scale, mn):
        ab = np.hypot(b.real, b.imag)
        with np.errstate(invalid="ignore", over="ignore"):
            thr = atol + rtol * ab
            xn = np.isnan(x.real) | np.isnan(x.imag)  # NaN if either part is
            bn = np.isnan(b.real) | np.isnan(b.imag)
            nan_mm = xn != bn
            neither_nan = ~xn & ~bn
            xf = np.isfinite(x.real) & np.isfinite(x.imag)
            bf = np.isfinite(b.real) & np.isfinite(b.imag)
            some_inf = neither_nan & ~(xf & bf)
            # with an infinite part, each part on its own: infinite parts equal, finite ones within
            # the tolerance of their own magnitude (|ref| is infinite: no scale for them there)
            inf_mm = some_inf & ~(_parts_close(x.real, b.real, rtol, atol)
                                  & _parts_close(x.imag, b.imag, rtol, atol))
            fin = neither_nan & xf & bf
            d = np.hypot(x.real - b.real, x.imag - b.imag)
            val_mm = fin & (d > thr)
            if signed_zero:
                zr = (x.real == 0) & (b.real == 0) & (np.signbit(x.real) != np.signbit(b.real))
                zi = (x.imag == 0) & (b.imag == 0) & (np.signbit(x.imag) != np.signbit(b.imag))
                sz_mm = fin & ~val_mm & (zr | zi)
            else:
                sz_mm = np.zeros_like(fin)
        tau = np.ones_like(thr) if tolzero else thr
        m = _maxima(d[fin], ab[fin], tau[fin], _ulp(ab[fin], scale, mn))
        c = [int(nan_mm.sum()), int(inf_mm.sum()), int(sz_mm.sum()), int(val_mm.sum()),
             _first(nan_mm, inf_mm, sz_mm, val_mm)]
        return c, m

    @staticmethod
    def _int_member(x, b, rtol, atol, tolzero, signed_zero, scale, mn):
        # exact differences of Python ints, each rounded once to float64
        d = np.array([float(abs(u - v)) for u, v in zip(x.tolist(), b.tolist())], dtype=np.float64)
        ab = np.array([float(abs(v)) for v in b.tolist()], dtype=np.float64)
        thr = atol + rtol * ab
        val_mm = d > thr
        tau = np.ones_like(thr) if tolzero else thr
        m = _maxima(d, ab, tau, np.ones_like(d))
        return [0, 0, 0, int(val_mm.sum()), _first(val_mm)], m
