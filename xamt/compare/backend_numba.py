"""The ``numba`` backend: one fused pass per element over all members, no array temporaries.

The members are read in place through raw pointers (each member keeps its own dtype; an element
is decoded when it is used), so one compiled kernel per arithmetic domain serves every dtype
combination and every group size. The arithmetic is the C scalar path's, operation for
operation, in float64 (see ``csrc/xamt_compare.c``), which is what makes the three backends'
reports bit-identical.

Compilation happens on first use (about a second per domain) and is cached on disk
(``cache=True``; numba writes next to this file when it can, else to its user-wide cache, and
``NUMBA_CACHE_DIR`` overrides both).
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from xamt.compare.dtypes import Code

__all__ = ["NumbaBackend"]

_EXP64 = np.int64(0x7FF0000000000000)
_F32 = np.float32(0)
_F64 = np.float64(0)
_U8, _U16, _U32, _U64 = np.uint8(0), np.uint16(0), np.uint32(0), np.uint64(0)
_I8, _I16, _I32, _I64 = np.int8(0), np.int16(0), np.int32(0), np.int64(0)


@intrinsic
def _as_ptr(typingctx, addr, like):
    """``addr`` (an integer) as a pointer to elements of ``like``'s type."""
    sig = types.CPointer(like)(addr, like)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


@intrinsic
def _f64_bits(typingctx, x):
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


@intrinsic
def _bits_f64(typingctx, b):
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


@intrinsic
def _bits_f32(typingctx, b):
    sig = types.float32(types.uint32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return sig, codegen


# ----------------------------------------------------------------------------- scalar helpers

@njit(inline="always", error_model="numpy")
def _isfin(x):
    return abs(x) <= 1.7976931348623157e308


@njit(inline="always", error_model="numpy")
def _signbit(x):
    return math.copysign(1.0, x) < 0.0


@njit(inline="always", error_model="numpy")
def _ulp_at(ax, scale, mn):
    u = _bits_f64(_f64_bits(ax) & _EXP64) * scale
    return u if u > mn else mn


@njit(inline="always", error_model="numpy")
def _midpoint(x, y):
    s = x + y
    return s * 0.5 if abs(s) <= 1.7976931348623157e308 else x * 0.5 + y * 0.5


@njit(inline="always", error_model="numpy")
def _tot_less(a, b):
    return a < b or (a == b and _signbit(a) and not _signbit(b))


@njit(inline="always", error_model="numpy")
def _h2d(h):
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    if e == 31:
        mag = np.nan if m != 0 else np.inf
    else:
        ee = e if e != 0 else 1
        mm = (m | 0x400) if e != 0 else m
        mag = float(mm) * _bits_f64(np.int64(ee + 1023 - 25) << 52)
    return -mag if (h & 0x8000) != 0 else mag


@njit(inline="always", error_model="numpy")
def _bf2d(h):
    return float(_bits_f32(np.uint32(h) << np.uint32(16)))


@njit(inline="always", error_model="numpy")
def _load_real(code, addr, j):
    if code == 11:
        return float(_as_ptr(addr, _F32)[j])
    if code == 12:
        return _as_ptr(addr, _F64)[j]
    if code == 9:
        return _h2d(np.int64(_as_ptr(addr, _U16)[j]))
    if code == 10:
        return _bf2d(_as_ptr(addr, _U16)[j])
    if code == 0:
        return 1.0 if _as_ptr(addr, _U8)[j] != 0 else 0.0
    if code == 1:
        return float(_as_ptr(addr, _I8)[j])
    if code == 2:
        return float(_as_ptr(addr, _I16)[j])
    if code == 3:
        return float(_as_ptr(addr, _I32)[j])
    if code == 4:
        return float(_as_ptr(addr, _I64)[j])
    if code == 5:
        return float(_as_ptr(addr, _U8)[j])
    if code == 6:
        return float(_as_ptr(addr, _U16)[j])
    if code == 7:
        return float(_as_ptr(addr, _U32)[j])
    if code == 8:
        return float(_as_ptr(addr, _U64)[j])
    return np.nan


@njit(inline="always", error_model="numpy")
def _load_cplx(code, addr, j):
    if code == 13:
        p = _as_ptr(addr, _F32)
        return float(p[2 * j]), float(p[2 * j + 1])
    if code == 14:
        p = _as_ptr(addr, _F64)
        return p[2 * j], p[2 * j + 1]
    return _load_real(code, addr, j), 0.0


@njit(inline="always", error_model="numpy")
def _load_int(code, addr, j):
    """(negative, magnitude) of an integer element, exactly."""
    if code == 8:
        return 0, _as_ptr(addr, _U64)[j]
    if code == 7:
        return 0, np.uint64(_as_ptr(addr, _U32)[j])
    if code == 6:
        return 0, np.uint64(_as_ptr(addr, _U16)[j])
    if code == 5:
        return 0, np.uint64(_as_ptr(addr, _U8)[j])
    if code == 0:
        return 0, np.uint64(1) if _as_ptr(addr, _U8)[j] != 0 else np.uint64(0)
    if code == 4:
        v = np.int64(_as_ptr(addr, _I64)[j])
    elif code == 3:
        v = np.int64(_as_ptr(addr, _I32)[j])
    elif code == 2:
        v = np.int64(_as_ptr(addr, _I16)[j])
    else:
        v = np.int64(_as_ptr(addr, _I8)[j])
    if v < 0:
        return 1, np.uint64(-(v + 1)) + np.uint64(1)
    return 0, np.uint64(v)


@njit(inline="always", error_model="numpy")
def _int_absdiff(an, am, bn, bm):
    if an == bn:
        return float(am - bm) if am >= bm else float(bm - am)
    s = am + bm  # wraps modulo 2**64
    if s >= am:
        return float(s)
    q = s >> np.uint64(12)
    rem = s & np.uint64(0xFFF)
    if rem > np.uint64(0x800) or (rem == np.uint64(0x800) and (q & np.uint64(1)) != np.uint64(0)):
        q += np.uint64(1)
    return 18446744073709551616.0 + float(q) * 4096.0


@njit(inline="always", error_model="numpy")
def _int_less(an, am, bn, bm):
    if an != bn:
        return an > bn
    return am > bm if an != 0 else am < bm


@njit(inline="always", error_model="numpy")
def _upd_stats(mx, a, d, ab, tau, ulp):
    # A quotient d/f can only exceed the running maximum M if d >= RN(M * f) (rounding is
    # monotone), so most divisions are skipped; the maxima are those of dividing every time.
    if d > mx[a, 0]:
        mx[a, 0] = d
    if d > 0.0:
        if not d < mx[a, 1] * ab:
            r = d / ab
            if r > mx[a, 1]:
                mx[a, 1] = r
        if not d < mx[a, 2] * ulp:
            u = d / ulp
            if u > mx[a, 2]:
                mx[a, 2] = u
        if not d < mx[a, 3] * tau:
            t = d / tau
            if t != t:
                t = 1.0
            if t > mx[a, 3]:
                mx[a, 3] = t


@njit(inline="always", error_model="numpy")
def _mark(cnt, first, a, cat, j):
    cnt[a, cat] += 1
    if first[a] < 0:
        first[a] = j


@njit(inline="always", error_model="numpy")
def _sort_median(t, nf):
    for a in range(1, nf):
        x = t[a]
        b = a - 1
        while b >= 0 and _tot_less(x, t[b]):
            t[b + 1] = t[b]
            b -= 1
        t[b + 1] = x
    if nf & 1:
        return t[nf // 2]
    return _midpoint(t[nf // 2 - 1], t[nf // 2])


@njit(inline="always", error_model="numpy")
def _median_real(ka, v, tmp):
    nf = 0
    nn = 0
    ni = 0
    for a in range(ka):
        x = v[a]
        if x != x:
            nn += 1
        elif not _isfin(x):
            ni += 1
        else:
            tmp[nf] = x
            nf += 1
    if nf > 0 and nf >= nn and nf >= ni:
        return _sort_median(tmp, nf)
    if nn >= ni:
        return np.nan
    best = -1
    bestc = 0
    for a in range(ka):
        if v[a] != v[a] or _isfin(v[a]):
            continue
        c = 0
        for b in range(ka):
            if v[b] == v[a]:
                c += 1
        if c > bestc:
            bestc = c
            best = a
    return v[best]


@njit(inline="always", error_model="numpy")
def _median_cplx(ka, vr, vi, tr, ti):
    nf = 0
    nn = 0
    ni = 0
    for a in range(ka):
        r = vr[a]
        i = vi[a]
        if r != r or i != i:
            nn += 1
        elif not _isfin(r) or not _isfin(i):
            ni += 1
        else:
            tr[nf] = r
            ti[nf] = i
            nf += 1
    if nf > 0 and nf >= nn and nf >= ni:
        return _sort_median(tr, nf), _sort_median(ti, nf)
    if nn >= ni:
        return np.nan, np.nan
    best = -1
    bestc = 0
    for a in range(ka):
        r = vr[a]
        i = vi[a]
        if r != r or i != i or (_isfin(r) and _isfin(i)):
            continue
        c = 0
        for b in range(ka):
            if vr[b] == r and vi[b] == i:
                c += 1
        if c > bestc:
            bestc = c
            best = a
    return vr[best], vi[best]


# ----------------------------------------------------------------------------- kernels

@njit(cache=True, nogil=True, error_model="numpy")
def _kernel_real(addrs, codes, refpos, n, rtol, atol, tolzero, sz, uscale, umin, cnt, first, mx):
    ka = addrs.shape[0]
    vals = np.empty(ka)
    tmp = np.empty(ka)
    for j in range(n):
        for a in range(ka):
            vals[a] = _load_real(codes[a], addrs[a], j)
        b = vals[refpos] if refpos >= 0 else _median_real(ka, vals, tmp)
        ab = abs(b)
        thr = atol + rtol * ab
        tau = 1.0 if tolzero else thr
        for a in range(ka):
            if a == refpos:
                continue
            x = vals[a]
            if x != x or b != b:
                if not (x != x and b != b):
                    _mark(cnt, first, a, 0, j)
            elif not _isfin(x) or not _isfin(b):
                if x != b:
                    _mark(cnt, first, a, 1, j)
            else:
                d = abs(x - b)
                _upd_stats(mx, a, d, ab, tau, _ulp_at(ab, uscale[a], umin[a]))
                if d > thr:
                    _mark(cnt, first, a, 3, j)
                elif sz and x == 0.0 and b == 0.0 and _signbit(x) != _signbit(b):
                    _mark(cnt, first, a, 2, j)


@njit(cache=True, nogil=True, error_model="numpy")
def _part_close(x, b, rtol, atol):
    # one part of a complex value that has an infinite part: infinite parts must be equal, finite
    # ones agree within the tolerance of their own magnitude (|ref| is infinite: no scale there)
    if not _isfin(x) or not _isfin(b):
        return x == b
    return abs(x - b) <= atol + rtol * abs(b)


@njit(cache=True, nogil=True, error_model="numpy")
def _kernel_cplx(addrs, codes, refpos, n, rtol, atol, tolzero, sz, uscale, umin, cnt, first, mx):
    ka = addrs.shape[0]
    vr = np.empty(ka)
    vi = np.empty(ka)
    tr = np.empty(ka)
    ti = np.empty(ka)
    for j in range(n):
        for a in range(ka):
            vr[a], vi[a] = _load_cplx(codes[a], addrs[a], j)
        if refpos >= 0:
            br = vr[refpos]
            bi = vi[refpos]
        else:
            br, bi = _median_cplx(ka, vr, vi, tr, ti)
        ab = math.hypot(br, bi)
        thr = atol + rtol * ab
        tau = 1.0 if tolzero else thr
        bn = br != br or bi != bi
        bfin = _isfin(br) and _isfin(bi)
        for a in range(ka):
            if a == refpos:
                continue
            ar = vr[a]
            ai = vi[a]
            an = ar != ar or ai != ai
            if an or bn:
                if not (an and bn):
                    _mark(cnt, first, a, 0, j)
            elif not _isfin(ar) or not _isfin(ai) or not bfin:
                if not (_part_close(ar, br, rtol, atol) and _part_close(ai, bi, rtol, atol)):
                    _mark(cnt, first, a, 1, j)
            else:
                d = math.hypot(ar - br, ai - bi)
                _upd_stats(mx, a, d, ab, tau, _ulp_at(ab, uscale[a], umin[a]))
                if d > thr:
                    _mark(cnt, first, a, 3, j)
                elif sz and ((ar == 0.0 and br == 0.0 and _signbit(ar) != _signbit(br))
                             or (ai == 0.0 and bi == 0.0 and _signbit(ai) != _signbit(bi))):
                    _mark(cnt, first, a, 2, j)


@njit(cache=True, nogil=True, error_model="numpy")
def _kernel_int(addrs, codes, refpos, n, rtol, atol, tolzero, sz, uscale, umin, cnt, first, mx):
    ka = addrs.shape[0]
    vn = np.empty(ka, np.int64)
    vm = np.empty(ka, np.uint64)
    tn = np.empty(ka, np.int64)
    tm = np.empty(ka, np.uint64)
    for j in range(n):
        for a in range(ka):
            vn[a], vm[a] = _load_int(codes[a], addrs[a], j)
        if refpos >= 0:
            bn = vn[refpos]
            bm = vm[refpos]
        else:  # lower median
            for a in range(ka):
                xn = vn[a]
                xm = vm[a]
                b = a - 1
                while b >= 0 and _int_less(xn, xm, tn[b], tm[b]):
                    tn[b + 1] = tn[b]
                    tm[b + 1] = tm[b]
                    b -= 1
                tn[b + 1] = xn
                tm[b + 1] = xm
            bn = tn[(ka - 1) // 2]
            bm = tm[(ka - 1) // 2]
        ab = float(bm)
        thr = atol + rtol * ab
        tau = 1.0 if tolzero else thr
        for a in range(ka):
            if a == refpos:
                continue
            d = _int_absdiff(vn[a], vm[a], bn, bm)
            _upd_stats(mx, a, d, ab, tau, 1.0)
            if d > thr:
                _mark(cnt, first, a, 3, j)


_KERNELS = (_kernel_int, _kernel_real, _kernel_cplx)


class NumbaBackend:
    """Runs the numba kernels (compiled on first use, then cached on disk)."""

    name = "numba"

    def run(self, arrays, codes, active, n, ref, domain, rtol, atol, signed_zero, ulp_scale,
            ulp_min):
        """Kernel call; returns (counts: 5 ints per member, maxima: 4 floats per member)."""
        k = len(arrays)
        idx = [i for i in range(k) if active[i]]
        ka = len(idx)
        counts = [0, 0, 0, 0, -1] * k
        maxima = [0.0] * (4 * k)
        if ka == 0 or n == 0:
            return counts, maxima
        addrs = np.array([arrays[i].ctypes.data for i in idx], dtype=np.int64)
        kcodes = np.array([codes[i] for i in idx], dtype=np.int64)
        scale = np.array([ulp_scale[i] for i in idx], dtype=np.float64)
        mins = np.array([ulp_min[i] for i in idx], dtype=np.float64)
        refpos = idx.index(ref) if ref >= 0 else -1
        cnt = np.zeros((ka, 4), np.int64)
        first = np.full(ka, -1, np.int64)
        mx = np.zeros((ka, 4), np.float64)
        _KERNELS[domain](addrs, kcodes, refpos, n, float(rtol), float(atol),
                         rtol == 0.0 and atol == 0.0, bool(signed_zero), scale, mins, cnt, first, mx)
        cl = cnt.tolist()
        fl = first.tolist()
        ml = mx.tolist()
        for a, i in enumerate(idx):
            counts[5 * i:5 * i + 5] = cl[a] + [fl[a]]
            maxima[4 * i:4 * i + 4] = ml[a]
        return counts, maxima
