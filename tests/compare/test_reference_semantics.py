"""Agreement with numpy.isclose and with exact Python-int arithmetic (hypothesis)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from xamt.compare import Tolerance, compare_group

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

floats64 = st.one_of(st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True),
                     st.sampled_from([0.0, -0.0, 1.0, 5e-324, 1.7976931348623157e308]))
any64 = st.one_of(floats64, st.sampled_from([np.nan, np.inf, -np.inf]))
tols = st.builds(Tolerance, st.sampled_from([0.0, 1e-12, 1e-7, 1e-3, 0.5]),
                 st.sampled_from([0.0, 1e-300, 1e-8, 1e-3, 1.0]))


def _pairs(elements):
    return st.integers(0, 40).flatmap(
        lambda n: st.tuples(hnp.arrays(np.float64, n, elements=elements),
                            hnp.arrays(np.float64, n, elements=elements)))


@pytest.mark.parametrize("backend", ["c", "numba", "numpy"])
@SETTINGS
@given(pair=_pairs(floats64), tol=tols, near=st.booleans())
def test_matches_isclose_on_finite_floats(backend, pair, tol, near):
    a, r = pair
    if near:  # make most elements close, so both outcomes occur
        a = np.where(np.arange(a.size) % 3 == 0, a, r * (1 - 1e-9))
    rep = compare_group([a, r], reference=1, tol=tol, backend=backend)
    with np.errstate(all="ignore"):
        close = np.isclose(a, r, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
    m = rep.members[0]
    assert m.value_mismatch == int((~close).sum())
    assert m.nan_mismatch == m.inf_mismatch == 0
    bad = np.flatnonzero(~close)
    assert m.first_mismatch == (int(bad[0]) if bad.size else None)


@pytest.mark.parametrize("backend", ["c", "numba", "numpy"])
@SETTINGS
@given(pair=_pairs(any64), tol=tols)
def test_mismatch_union_matches_isclose_equal_nan(backend, pair, tol):
    a, r = pair
    rep = compare_group([a, r], reference=1, tol=tol, backend=backend)
    with np.errstate(all="ignore"):
        close = np.isclose(a, r, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
    assert rep.members[0].mismatches == int((~close).sum())


int_edges = st.sampled_from([-(2**63), -(2**63) + 1, -1, 0, 1, 2**53 + 1, 2**63 - 1, 2**63,
                             2**64 - 2, 2**64 - 1])


@pytest.mark.parametrize("backend", ["c", "numba", "numpy"])
@SETTINGS
@given(values=st.lists(st.tuples(st.one_of(int_edges, st.integers(-(2**63), 2**63 - 1)),
                                 st.one_of(int_edges, st.integers(0, 2**64 - 1))),
                       min_size=1, max_size=30))
def test_integers_exact_at_int64_uint64_extremes(backend, values):
    signed = [s if -(2**63) <= s < 2**63 else s - 2**64 for s, _ in values]
    unsigned = [u % 2**64 for _, u in values]
    a = np.array(signed, dtype=np.int64)
    b = np.array(unsigned, dtype=np.uint64)
    rep = compare_group([a, b], reference=0, backend=backend)
    m = rep.members[1]
    diffs = [abs(u - s) for s, u in zip(signed, unsigned)]
    assert m.value_mismatch == sum(1 for d in diffs if d)
    assert m.max_abs_diff == float(max(diffs))  # exact difference, rounded once
    first = next((j for j, d in enumerate(diffs) if d), None)
    assert m.first_mismatch == first
    assert rep.agree == (max(diffs) == 0)
