"""The three backends give bit-identical reports (the issue's central property)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xamt.compare import Tolerance, available_backends, compare_group

from .strategies import groups

BACKENDS = available_backends()
SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

tolerances = st.one_of(st.none(), st.builds(Tolerance, st.sampled_from([0.0, 1e-9, 1e-3, 2.0]),
                                            st.sampled_from([0.0, 1e-300, 1e-3, 1e300])))


def test_all_backends_available():
    # the C extension is built by setup.py and numba is a pinned dependency: all three must run
    assert BACKENDS == ["c", "numba", "numpy"]


def _reports(arrays, reference, tol, signed_zero):
    return [compare_group(arrays, reference=reference, tol=tol, signed_zero=signed_zero, backend=b)
            for b in BACKENDS]


@SETTINGS
@given(groups(), tolerances)
def test_backends_identical(group, tol):
    arrays, reference, signed_zero = group
    reps = _reports(arrays, reference, tol, signed_zero)
    assert reps[0].key() == reps[1].key() == reps[2].key(), [r.summary() for r in reps]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 9), n=st.integers(1, 4000),
       dtype=st.sampled_from([np.float32, np.float64]), reference=st.one_of(st.none(), st.integers(0, 8)),
       specials=st.booleans(), tol=tolerances)
def test_backends_identical_large(seed, k, n, dtype, reference, specials, tol):
    """Many chunks: exercises the C fused pass, its candidate screening and the fallbacks."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300)
    outs = []
    for i in range(k):
        x = base.copy()
        hit = rng.random(n) < rng.random()
        x[hit] *= 1 + rng.standard_normal(int(hit.sum())) * 10.0 ** rng.integers(-9, -1)
        if specials and i % 2:
            q = rng.random(n) < 0.01
            x[q] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324], int(q.sum()))
        with np.errstate(all="ignore"):
            outs.append(x.astype(dtype))
    if k > 2 and seed % 3 == 0:
        outs[1] = outs[0].copy()
    ref = None if reference is None else reference % k
    reps = _reports(outs, ref, tol, bool(seed % 5 == 0))
    assert reps[0].key() == reps[1].key() == reps[2].key(), [r.summary() for r in reps]


@pytest.mark.parametrize("backend", ["c", "numba", "numpy"])
def test_named_backend_is_used(backend):
    a = np.float32([1, 2, 3])
    rep = compare_group([a, a + 1], backend=backend)
    assert rep.backend == backend


@pytest.mark.parametrize("reference", [0, None])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backends_identical_members_of_different_noise(reference, dtype):
    """Members whose differences differ in size: the C kernel switches to per-member screening."""
    rng = np.random.default_rng(11)
    base = rng.standard_normal(60000).astype(dtype)
    outs = [base] + [base + dtype(i * i) * np.spacing(base) * rng.integers(0, 2, base.size)
                     for i in range(1, 5)]
    outs[3][::997] = np.nan
    reps = _reports(outs, reference, None, False)
    assert reps[0].key() == reps[1].key() == reps[2].key(), [r.summary() for r in reps]


def _ulp_noise(rng, k: int, n: int, dtype) -> list[np.ndarray]:
    """k members that each move 25 % of the elements of one random array by one ulp."""
    base = rng.standard_normal(n).astype(dtype)
    outs = []
    for _ in range(k):
        x = base.copy()
        hit = np.flatnonzero(rng.random(n) < 0.25)
        towards = np.where(rng.random(hit.size) < 0.5, np.inf, -np.inf).astype(dtype)
        x[hit] = np.nextafter(x[hit], towards)
        outs.append(x)
    return outs


# one element of one member, in a chunk of its own, late in the array (see _settled_group);
# "ulp" first: later events raise the maximum ulp difference beyond its 3 ulps
LATE_EVENTS = ["ulp", "tol", "nan", "-nan", "inf", "-inf", "zeros", "subnormal", "all_nan",
               "all_inf", "record", "rel", "huge"]


def _settled_group(rng, k: int, dtype, reference) -> list[np.ndarray]:
    """1-ulp noise whose running maxima settle in the first chunks (so the C kernel takes its
    spread-only pass), then every event of LATE_EVENTS in every member position, each in a
    chunk of its own: any event that pass missed would change the report."""
    chunk, lead = 256, 24
    events = [(e, i) for e in LATE_EVENTS for i in range(k)]
    n = chunk * (lead + 2 * len(events))
    outs = _ulp_noise(rng, k, n, dtype)
    info = np.finfo(dtype)
    for slot, (event, i) in enumerate(events):
        j = chunk * (lead + 2 * slot) + int(rng.integers(chunk))
        x = outs[i]
        with np.errstate(all="ignore"):
            if event in ("nan", "-nan", "inf", "-inf"):
                x[j] = dtype(event)
            elif event == "record":       # a larger |a - ref| than any so far
                x[j] = x[j] + dtype(64) * np.spacing(x[j])
            elif event == "rel":          # tiny |ref|: a large relative, tiny absolute difference
                for o in outs:
                    o[j] = dtype(1e-30)
                x[j] = dtype(1e-30) * dtype(1.001)
            elif event == "ulp":          # more ulps than so far, not a larger relative
                v = np.nextafter(dtype(2.0 ** -6), dtype(0))  # just below a power of two
                for o in outs:
                    o[j] = v
                x[j] = v - dtype(6 if k == 2 and reference is None else 3) * np.spacing(v)
            elif event == "tol":          # outside a zero tolerance, tiny |a - ref|
                for o in outs:
                    o[j] = dtype(1e-3)
                x[j] = np.nextafter(dtype(1e-3), dtype(1))
            elif event == "zeros":        # signed zeros and one tiny value
                for m, o in enumerate(outs):
                    o[j] = dtype(-0.0) if m % 2 else dtype(0.0)
                x[j] = info.smallest_subnormal
            elif event == "huge":         # finite, but sums overflow
                for o in outs:
                    o[j] = info.max
                x[j] = np.nextafter(info.max, dtype(0))
            elif event == "subnormal":    # subnormal reference and differences
                for m, o in enumerate(outs):
                    o[j] = info.smallest_subnormal * dtype(3 + m % 2)
                x[j] = info.smallest_subnormal * dtype(7)
            elif event == "all_nan":
                for o in outs:
                    o[j] = np.nan
            elif event == "all_inf":
                for o in outs:
                    o[j] = np.inf if i % 2 else -np.inf
    return outs


@pytest.mark.parametrize("tol", [None, Tolerance(0.0, 0.0)], ids=["default-tol", "zero-tol"])
@pytest.mark.parametrize("reference", [None, 0], ids=["median", "ref0"])
@pytest.mark.parametrize("k", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backends_identical_late_events(dtype, k, reference, tol):
    """Rare elements after the maxima settled: NaN/inf in each member position (the spread pass
    finds them through its network or a sum), new maxima of each kind, signed zeros,
    overflowing sums, subnormals."""
    rng = np.random.default_rng(1000 * k + (dtype == np.float64))
    outs = _settled_group(rng, k, dtype, reference)
    reps = _reports(outs, reference, tol, False)
    assert reps[0].key() == reps[1].key() == reps[2].key(), [r.summary() for r in reps]


@pytest.mark.parametrize("reference", [None, 0], ids=["median", "ref0"])
@pytest.mark.parametrize("k", [3, 4, 8])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backends_identical_nonfinite_stretches(dtype, k, reference):
    """Stretches of chunks that all hold NaN/inf (the C kernel stops trying its fused passes
    there for a while), between clean stretches with new maxima and mismatches."""
    rng = np.random.default_rng(77 * k + (dtype == np.float64))
    chunk, stretches = 256, [40, 24, 3, 60, 2, 30]  # chunks: dirty, clean, dirty, ...
    n = chunk * sum(stretches)
    outs = _ulp_noise(rng, k, n, dtype)
    start = 0
    for s, length in enumerate(stretches):
        lo, hi = start * chunk, (start + length) * chunk
        if s % 2 == 0:
            holes = lo + np.flatnonzero(rng.random(hi - lo) < 0.02)
            for i, x in enumerate(outs):
                x[holes[i::k]] = (np.nan, np.inf, -np.inf)[i % 3]
        else:
            j = int(rng.integers(lo, hi))
            outs[s % k][j] += dtype(100) * np.spacing(outs[s % k][j])  # a new maximum
        start += length
    reps = _reports(outs, reference, None, False)
    assert reps[0].key() == reps[1].key() == reps[2].key(), [r.summary() for r in reps]


@pytest.mark.parametrize("k", [2, 4, 5, 8])
def test_backends_identical_after_infinite_maxima(k):
    """Every member's largest |a - ref| is inf (float64 differences overflow) before NaNs and
    infinities arrive in later chunks: a NaN must not hide behind an infinite maximum."""
    rng = np.random.default_rng(5 + k)
    outs = _ulp_noise(rng, k, 256 * 40, np.float64)
    big = np.finfo(np.float64).max
    for e in range(k):  # chunk 0: member e alone at -max where the others are +max
        for i, x in enumerate(outs):
            x[e] = -big if i == e else big
    for slot in range(2 * k):  # later chunks: one NaN or inf, each member in turn
        j = 256 * (8 + 2 * slot) + int(rng.integers(256))
        outs[slot % k][j] = np.nan if slot < k else np.inf
    for reference in (None, 0):
        reps = _reports(outs, reference, None, False)
        assert reps[0].key() == reps[1].key() == reps[2].key(), [r.summary() for r in reps]
