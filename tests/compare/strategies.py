"""Hypothesis strategies for comparator tests: groups of arrays with nasty values."""
from __future__ import annotations

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

FLOAT_DTYPES = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32),
                np.dtype(np.float64)]
COMPLEX_DTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]
INT_DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                    np.uint16, np.uint32, np.uint64)]
ALL_DTYPES = FLOAT_DTYPES + COMPLEX_DTYPES + INT_DTYPES

SPECIALS = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 5e-324, -5e-324, 2.2250738585072014e-308,
            1e-310, 1.7976931348623157e308, -1.7976931348623157e308, 1e300, 1e-300, 1.0, -1.0,
            3.4028234663852886e38, 1.401298464324817e-45, 65504.0, 6e-8, 1e-7, 1.0000001]

shapes = st.one_of(st.just(()), hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=5))

finite_or_not = st.one_of(
    st.sampled_from(SPECIALS),
    st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.floats(-10.0, 10.0),
)


def _cast(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        if dt.kind == "b":
            return x != 0
        if dt in INT_DTYPES:
            info = np.iinfo(dt)
            y = np.nan_to_num(x, nan=0.0, posinf=float(info.max), neginf=float(info.min))
            return np.clip(y, float(info.min), float(info.max)).astype(dt)
        return x.astype(dt)


@st.composite
def int_values(draw, dt: np.dtype, n: int) -> np.ndarray:
    if dt.kind == "b":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=dt)
    info = np.iinfo(dt)
    edge = st.sampled_from([int(info.min), int(info.max), 0, 1, -1 if info.min < 0 else 2,
                            int(info.max) - 1, int(info.min) + 1])
    vals = draw(st.lists(st.one_of(edge, st.integers(int(info.min), int(info.max))),
                         min_size=n, max_size=n))
    return np.array(vals, dtype=dt)


@st.composite
def groups(draw, max_k: int = 8, dtype_pool=None):
    """(arrays, reference, signed_zero): k arrays, mostly sharing a shape and many values."""
    k = draw(st.integers(2, max_k))
    shape = draw(shapes)
    n = int(np.prod(shape))
    mode = draw(st.sampled_from(["same", "mixed-float", "mixed-any", "ints"]))
    pool = dtype_pool or ALL_DTYPES
    if mode == "same" or dtype_pool:
        dts = [draw(st.sampled_from(pool))] * k if mode == "same" else \
            [draw(st.sampled_from(pool)) for _ in range(k)]
    elif mode == "mixed-float":
        dts = [draw(st.sampled_from(FLOAT_DTYPES + COMPLEX_DTYPES)) for _ in range(k)]
    elif mode == "ints":
        dts = [draw(st.sampled_from(INT_DTYPES)) for _ in range(k)]
    else:
        dts = [draw(st.sampled_from(ALL_DTYPES)) for _ in range(k)]
    base = np.array(draw(st.lists(finite_or_not, min_size=n, max_size=n)), dtype=np.float64)
    arrays = []
    for dt in dts:
        if dt in INT_DTYPES and draw(st.booleans()):
            arr = draw(int_values(dt, n))
        else:
            x = base.copy()
            # perturb some elements: a neighbour, a special value, or a fresh number
            for j in draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=min(n, 4))) if n else []:
                how = draw(st.sampled_from(["next", "special", "any", "neg"]))
                if how == "next":
                    x[j] = np.nextafter(x[j], np.inf)
                elif how == "special":
                    x[j] = draw(st.sampled_from(SPECIALS))
                elif how == "neg":
                    x[j] = -x[j]
                else:
                    x[j] = draw(finite_or_not)
            arr = _cast(x, dt)
            if dt.kind == "c":
                im = base[::-1].copy() if draw(st.booleans()) else np.zeros(n)
                with np.errstate(all="ignore"):
                    arr = arr.copy()
                    arr.imag = im.astype(arr.real.dtype)
        arrays.append(arr.reshape(shape))
    if k > 2 and draw(st.booleans()):
        arrays[draw(st.integers(1, k - 1))] = arrays[0].copy()  # an exact twin
    if draw(st.integers(0, 9)) == 0:  # sometimes a wrong shape
        i = draw(st.integers(0, k - 1))
        arrays[i] = arrays[i].reshape(-1)[:-1] if n else np.zeros(1, arrays[i].dtype)
    reference = draw(st.one_of(st.none(), st.integers(0, k - 1)))
    return arrays, reference, draw(st.booleans())
