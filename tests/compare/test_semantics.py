"""The comparison rules of xamt.compare, one at a time, checked on every backend."""
from __future__ import annotations

import json
import math

import ml_dtypes
import numpy as np
import pytest

from xamt.compare import (
    PATTERN_PENALTY,
    VALUE_DISTANCE_CAP,
    CompareUsageError,
    Tolerance,
    ToleranceError,
    compare_group,
)

BACKENDS = ["c", "numba", "numpy"]
f32, f64 = np.float32, np.float64
nan, inf = float("nan"), float("inf")


@pytest.fixture(params=BACKENDS)
def cmp(request):
    def run(outputs, **kw):
        return compare_group(outputs, backend=request.param, **kw)
    return run


def counts(rep, i):
    m = rep.members[i]
    return (m.nan_mismatch, m.inf_mismatch, m.signed_zero_mismatch, m.value_mismatch)


# ----------------------------------------------------------------------------- element rules

def test_nan_equals_nan_and_mismatches_numbers(cmp):
    a = f64([nan, 1.0, nan])
    b = f64([nan, nan, 2.0])
    rep = cmp([a, b], reference=0)
    assert counts(rep, 1) == (2, 0, 0, 0)
    assert rep.members[1].first_mismatch == 1
    assert not rep.agree


def test_complex_nan_in_either_part_is_nan(cmp):
    a = np.array([complex(nan, 1), complex(1, nan), complex(1, 1)])
    b = np.array([complex(2, nan), complex(nan, 5), complex(1, nan)])
    rep = cmp([a, b], reference=0)
    assert counts(rep, 1) == (1, 0, 0, 0)  # only the last element: number vs NaN
    assert rep.members[1].first_mismatch == 2


def test_infinities(cmp):
    a = f64([inf, -inf, inf, inf, 1.0])
    b = f64([inf, -inf, -inf, 1e308, inf])
    rep = cmp([a, b], reference=0)
    assert counts(rep, 1) == (0, 3, 0, 0)
    assert rep.members[1].first_mismatch == 2
    assert rep.members[1].max_abs_diff == 0.0  # no finite pair differs


def test_complex_with_an_infinite_part_compares_each_part(cmp):
    """inf-403.65152j in float32 against inf-403.6515197j: the infinite parts are equal, the finite
    ones agree within the tolerance of their own magnitude (|ref| is infinite, no scale)."""
    a = np.array([complex(inf, -403.6515197), complex(inf, 0.0), complex(inf, 1.0), complex(1.0, inf)])
    b = np.array([complex(inf, -403.65152), complex(inf, -0.0), complex(-inf, 1.0), complex(1.5, inf)])
    rep = cmp([a, b], reference=0, tol=Tolerance(rtol=1e-6, atol=1e-5))
    assert counts(rep, 1) == (0, 2, 0, 0)  # the sign of an infinite part, a finite part 50 % off
    assert rep.members[1].first_mismatch == 2


def test_signed_zero_only_when_asked(cmp):
    a, b = f64([0.0, -0.0, 1.0]), f64([-0.0, -0.0, 1.0])
    assert cmp([a, b], reference=0).agree
    rep = cmp([a, b], reference=0, signed_zero=True)
    assert counts(rep, 1) == (0, 0, 1, 0)
    assert rep.members[1].first_mismatch == 0


def test_signed_zero_complex_parts(cmp):
    a = np.array([complex(0.0, 1.0), complex(1.0, 0.0)])
    b = np.array([complex(-0.0, 1.0), complex(1.0, -0.0)])
    rep = cmp([a, b], reference=0, signed_zero=True)
    assert counts(rep, 1) == (0, 0, 2, 0)


def test_asymmetric_tolerance_formula(cmp):
    tol = Tolerance(rtol=0.1, atol=0.0)
    # |a - ref| <= 0.1 * |ref|: 1.0625 vs 1 inside, 0.75 vs 1 and 9 vs 8 outside
    ref, other = f64([1.0, 1.0, 8.0]), f64([1.0625, 0.75, 9.0])
    rep = cmp([ref, other], reference=0, tol=tol)
    assert counts(rep, 1) == (0, 0, 0, 2)
    assert rep.members[1].first_mismatch == 1
    # the bound scales with the reference's magnitude, not the member's
    tol = Tolerance(0.5, 0.0)
    assert cmp([f64([100.0]), f64([60.0])], reference=0, tol=tol).agree  # 40 <= 50
    assert not cmp([f64([100.0]), f64([60.0])], reference=1, tol=tol).agree  # 40 > 30


def test_tolerance_boundary_is_inclusive(cmp):
    rep = cmp([f64([1.0]), f64([1.5])], reference=0, tol=Tolerance(0.0, 0.5))
    assert rep.agree
    assert rep.members[1].max_tol_units == 1.0
    rep = cmp([f64([1.0]), f64([1.5000000000000002])], reference=0, tol=Tolerance(0.0, 0.5))
    assert not rep.agree and rep.members[1].max_tol_units > 1.0


def test_reference_member_reports_nothing(cmp):
    rep = cmp([f64([1, 2]), f64([5, 6]), f64([1, 2])], reference=1)
    ref = rep.members[1]
    assert ref.agree and ref.mismatches == 0 and ref.distance == 0.0
    assert rep.reference == 1 and rep.reference_rule == "index"
    assert counts(rep, 0) == (0, 0, 0, 2) and counts(rep, 2) == (0, 0, 0, 2)


def test_negative_reference_index(cmp):
    rep = cmp([f64([1.0]), f64([2.0]), f64([3.0])], reference=-1)
    assert rep.reference == 2


# ----------------------------------------------------------------------------- median reference

def test_median_reference_is_reported(cmp):
    rep = cmp([f64([1.0]), f64([2.0]), f64([9.0])])
    assert rep.reference is None and rep.reference_rule == "median"
    # median 2.0: member 2 is 7 away, member 0 is 1 away
    assert rep.members[1].max_abs_diff == 0.0
    assert rep.members[2].max_abs_diff == 7.0 and rep.members[0].max_abs_diff == 1.0
    assert rep.outlier == 2


def test_median_even_count_is_midpoint(cmp):
    rep = cmp([f64([1.0]), f64([3.0])])
    assert rep.members[0].max_abs_diff == 1.0 and rep.members[1].max_abs_diff == 1.0


def test_median_midpoint_does_not_overflow(cmp):
    big = 1.7976931348623157e308
    rep = cmp([f64([big]), f64([big]), f64([big * 0.5]), f64([big])])
    # middle values big, big: reference big exactly (x + y overflows, x/2 + y/2 does not)
    assert rep.members[0].max_abs_diff == 0.0
    assert rep.members[2].max_abs_diff == big - big * 0.5


def test_median_ignores_non_finite_when_finite_is_plural(cmp):
    rep = cmp([f64([1.0]), f64([nan]), f64([3.0]), f64([inf])])
    # 2 finite >= 1 NaN and >= 1 inf: reference = midpoint of 1 and 3
    assert counts(rep, 1) == (1, 0, 0, 0) and counts(rep, 3) == (0, 1, 0, 0)
    assert rep.members[0].max_abs_diff == 1.0


def test_median_all_nan_agrees(cmp):
    rep = cmp([f64([nan, 1.0]), f64([nan, 1.0]), f64([nan, 1.0])])
    assert rep.agree and rep.dispersion == 0.0


def test_median_nan_majority_flags_the_number(cmp):
    rep = cmp([f64([nan]), f64([nan]), f64([nan]), f64([1.0])])
    assert counts(rep, 3) == (1, 0, 0, 0)
    assert all(rep.members[i].agree for i in range(3))
    assert rep.outlier == 3


def test_median_infinity_majority(cmp):
    rep = cmp([f64([inf]), f64([inf]), f64([-inf]), f64([2.0])])
    assert counts(rep, 2) == (0, 1, 0, 0) and counts(rep, 3) == (0, 1, 0, 0)
    assert rep.members[0].agree and rep.members[1].agree


def test_median_signed_zero_total_order(cmp):
    # total order -0.0 < +0.0: the median of (-0, -0, +0) is -0.0
    rep = cmp([f64([-0.0]), f64([-0.0]), f64([0.0])], signed_zero=True)
    assert counts(rep, 2) == (0, 0, 1, 0) and rep.members[0].agree


def test_integer_lower_median(cmp):
    rep = cmp([np.int64([1]), np.int64([5])])
    assert rep.members[0].agree and counts(rep, 1) == (0, 0, 0, 1)
    assert rep.members[1].max_abs_diff == 4.0


def test_complex_median_is_componentwise(cmp):
    a = np.array([complex(1, 9)])
    b = np.array([complex(2, 8)])
    c = np.array([complex(3, 7)])
    rep = cmp([a, b, c])
    assert rep.members[1].max_abs_diff == 0.0  # reference (2, 8)
    assert rep.members[0].max_abs_diff == math.hypot(1.0, 1.0)


# ----------------------------------------------------------------------------- integers

def test_integer_extremes_exact(cmp):
    lo = np.array([np.iinfo(np.int64).min], dtype=np.int64)
    hi = np.array([np.iinfo(np.uint64).max], dtype=np.uint64)
    rep = cmp([lo, hi], reference=0)
    assert counts(rep, 1) == (0, 0, 0, 1)
    assert rep.members[1].max_abs_diff == float(2**64 - 1 + 2**63)  # no wrap-around
    assert rep.domain == "int"


def test_int64_max_equals_uint64_same_value(cmp):
    a = np.array([2**63 - 1, 0, 7], dtype=np.int64)
    b = np.array([2**63 - 1, 0, 7], dtype=np.uint64)
    assert cmp([a, b], reference=0).agree


def test_minus_one_is_not_uint64_max(cmp):
    rep = cmp([np.int64([-1]), np.uint64([2**64 - 1])], reference=0)
    assert counts(rep, 1) == (0, 0, 0, 1) and rep.members[1].max_abs_diff == float(2**64)


def test_integer_diff_rounded_once(cmp):
    # |(2**63 - 1) - (-(2**63))| = 2**64 - 1 rounds to 2**64
    rep = cmp([np.int64([-(2**63)]), np.int64([2**63 - 1])], reference=0)
    assert rep.members[1].max_abs_diff == 18446744073709551616.0


def test_integer_tolerance_override(cmp):
    rep = cmp([np.int32([100]), np.int32([101])], reference=0, tol=Tolerance(0.0, 1.0))
    assert rep.agree
    assert rep.members[1].max_ulp_diff == 1.0  # integer ulp is 1


def test_bool_vs_int_kind_mismatch_but_values_equal(cmp):
    rep = cmp([np.array([True, False]), np.int8([1, 0])], reference=0)
    assert not rep.members[1].kind_ok
    assert rep.members[1].mismatches == 0
    assert not rep.agree and rep.values_agree
    assert rep.dispersion == 0.0 and rep.outlier == 1


# ----------------------------------------------------------------------------- kinds, shapes

def test_int_vs_float_compared_numerically(cmp):
    rep = cmp([np.int64([1, 2, 3]), f64([1.0, 2.0, 3.5])], reference=0)
    assert not rep.members[1].kind_ok
    assert counts(rep, 1) == (0, 0, 0, 1)
    assert rep.domain == "float"


def test_kind_majority_with_median(cmp):
    rep = cmp([f32([1]), f64([1]), np.int32([1])])
    assert rep.kind == "float"
    assert [m.kind_ok for m in rep.members] == [True, True, False]


def test_shape_mismatch_not_compared(cmp):
    rep = cmp([f64([1, 2, 3]), f64([1, 2]), f64([1, 2, 3])])
    m = rep.members[1]
    assert not m.shape_ok and m.mismatches == 0 and math.isnan(m.max_abs_diff)
    assert m.first_mismatch is None
    assert m.distance == PATTERN_PENALTY * 3
    assert rep.shape == (3,) and rep.outlier == 1 and not rep.agree


def test_shape_of_reference_member_wins(cmp):
    rep = cmp([f64([1, 2]), f64([1, 2, 3]), f64([1, 2, 3])], reference=0)
    assert rep.shape == (2,)
    assert [m.shape_ok for m in rep.members] == [True, False, False]


def test_zero_d_and_empty(cmp):
    assert cmp([np.float32(1.5), np.float32(1.5)]).agree
    rep = cmp([np.array(1.0), np.array(2.0)], reference=0)
    assert counts(rep, 1) == (0, 0, 0, 1) and rep.members[1].first_mismatch == 0
    rep = cmp([np.zeros((0, 3), f32), np.zeros((0, 3), f32)])
    assert rep.agree and rep.size == 0 and rep.dispersion == 0.0
    rep = cmp([np.zeros(0, f32), np.zeros(0, f64)])
    assert rep.agree


def test_first_mismatch_is_flat_c_order(cmp):
    a = np.zeros((3, 4))
    b = a.copy()
    b[2, 1] = 1.0
    b[1, 3] = np.nan
    rep = cmp([a, b], reference=0)
    assert rep.members[1].first_mismatch == 1 * 4 + 3


def test_non_contiguous_and_byte_swapped(cmp):
    a = np.arange(20, dtype=np.float64).reshape(4, 5)[:, ::2]
    b = np.ascontiguousarray(a).astype(">f8")
    c = a.copy()
    c[3, 2] += 1
    rep = cmp([a, b, c], reference=0)
    assert rep.members[1].agree and rep.members[1].dtype == ">f8"
    assert counts(rep, 2) == (0, 0, 0, 1) and rep.members[2].first_mismatch == 3 * 3 + 2


def test_opaque_dtypes_compared_exactly(cmp):
    rep = cmp([np.array(["a", "b"]), np.array(["a", "c"])])
    assert rep.domain == "opaque" and rep.reference == 0 and rep.reference_rule == "first"
    assert counts(rep, 1) == (0, 0, 0, 1)
    rep = cmp([np.array([1, "x"], dtype=object), np.array([1, "x"], dtype=object)])
    assert rep.agree
    rep = cmp([np.array(["2020-01-01"], "M8[D]"), np.array(["NaT"], "M8[D]")])
    assert not rep.agree


# ----------------------------------------------------------------------------- dtypes

def test_bfloat16_and_float16_exact_decoding(cmp):
    a = np.array([1.0, 3.0e38, 1e-40, -0.0, 65504], dtype=ml_dtypes.bfloat16)
    rep = cmp([a, a.astype(np.float64)], reference=0)
    assert rep.agree and rep.members[1].max_abs_diff == 0.0
    h = np.array([6e-8, 65504, -2.0, np.inf, np.nan], dtype=np.float16)
    rep = cmp([h, h.astype(np.float64)], reference=0)
    assert rep.agree


def test_narrow_ml_dtypes(cmp):
    a = np.array([1.0, 2.0, 448.0], dtype=ml_dtypes.float8_e4m3fn)
    b = np.array([1.0, 2.0, 416.0], dtype=ml_dtypes.float8_e4m3fn)  # neighbours in e4m3fn
    rep = cmp([a, b], reference=0)
    assert rep.agree and rep.members[1].max_ulp_diff == 1.0  # default tolerance: one ulp
    b[2] = 384.0
    rep = cmp([a, b], reference=0)
    assert counts(rep, 1) == (0, 0, 0, 1) and rep.members[1].max_ulp_diff == 2.0
    i4 = np.array([-8, 7], dtype=ml_dtypes.int4)
    assert cmp([i4, np.int8([-8, 7])], reference=0).agree


def test_ulp_is_in_the_members_own_dtype(cmp):
    x = f32([1.0, 3.0])
    y = np.nextafter(x, f32(10))
    rep = cmp([x, y], reference=0)
    assert rep.members[1].max_ulp_diff == 1.0
    assert rep.members[1].max_abs_diff == float(np.spacing(f32(3.0)))
    rep = cmp([x.astype(f64), y.astype(f64)], reference=0)  # same values, float64 ulps
    assert rep.members[1].max_ulp_diff == 2.0**29
    rep = cmp([f64([0.0]), f32([1.401298464324817e-45])], reference=0)
    assert rep.members[1].max_ulp_diff == 1.0  # subnormal spacing of float32 at 0


def test_relative_diff_against_zero_reference_is_inf(cmp):
    rep = cmp([f64([0.0, 2.0]), f64([1e-9, 3.0])], reference=0)
    assert rep.members[1].max_rel_diff == inf
    assert rep.members[1].max_abs_diff == 1.0


# ----------------------------------------------------------------------------- tolerances

def test_default_tolerance_table():
    cases = {np.float16: (1e-3, 1e-5), ml_dtypes.bfloat16: (1.6e-2, 1e-5),
             np.float32: (1.3e-6, 1e-5), np.float64: (1e-7, 1e-7), np.complex64: (1.3e-6, 1e-5),
             np.complex128: (1e-7, 1e-7), np.int32: (0.0, 0.0), np.bool_: (0.0, 0.0),
             np.uint64: (0.0, 0.0)}
    for dt, expected in cases.items():
        a = np.zeros(2, dtype=dt)
        t = compare_group([a, a]).tolerance
        assert (t.rtol, t.atol) == expected, dt


def test_mixed_dtypes_use_the_looser_tolerance():
    t = compare_group([np.zeros(2, f32), np.zeros(2, f64), np.zeros(2, np.float16)]).tolerance
    assert (t.rtol, t.atol) == (1e-3, 1e-5)
    t = compare_group([np.zeros(2, np.int64), np.zeros(2, f64)]).tolerance
    assert (t.rtol, t.atol) == (1e-7, 1e-7)


def test_tolerance_overrides(cmp):
    a, b = f32([1.0]), f32([1.001])
    assert not cmp([a, b], reference=0).agree
    assert cmp([a, b], reference=0, tol=Tolerance(1e-2, 0)).agree
    assert cmp([a, b], reference=0, tol=(1e-2, 0)).agree
    assert cmp([a, b], reference=0, tol={"float32": Tolerance(1e-2, 0.0)}).agree
    assert cmp([a, b], reference=0, tol={np.float32: (1e-2, 0.0)}).agree
    assert not cmp([a, b], reference=0, tol={np.float64: (1e-2, 0.0)}).agree


def test_tolerance_validation():
    for rtol, atol in [(-1, 0), (0, float("nan")), (float("inf"), 0), ("x", 0)]:
        with pytest.raises(ToleranceError):
            Tolerance(rtol, atol)
    with pytest.raises(ToleranceError):
        compare_group([f32([1]), f32([1])], tol=(1, 2, 3))
    with pytest.raises(ToleranceError):
        compare_group([f32([1]), f32([1])], tol={"not a dtype": (0, 0)})


def test_zero_tolerance_units_are_absolute(cmp):
    rep = cmp([f64([1.0]), f64([1.25])], reference=0, tol=Tolerance(0, 0))
    assert rep.members[1].max_tol_units == 0.25 and rep.members[1].value_mismatch == 1


# ----------------------------------------------------------------------------- dispersion

def test_dispersion_zero_iff_exactly_equal(cmp):
    x = f64([1.0, nan, inf, -0.0])
    assert cmp([x, x.copy(), x.copy()]).dispersion == 0.0
    y = x.copy()
    y[0] = np.nextafter(1.0, 2.0)
    rep = cmp([x, y], reference=0)
    assert rep.agree and 0.0 < rep.dispersion < 1.0


def test_dispersion_grows_with_spread(cmp):
    base = f64([1.0, 2.0, 3.0])
    spreads = [cmp([base, base + d, base - d]).dispersion for d in (1e-9, 1e-6, 1e-3, 1.0)]
    assert spreads == sorted(spreads) and spreads[0] > 0.0


def test_dispersion_counts_pattern_per_element(cmp):
    a = f64([1, 2, 3, 4])
    b1, b2 = a.copy(), a.copy()
    b1[0] = nan
    b2[:2] = nan
    d1 = cmp([a, b1], reference=0).dispersion
    d2 = cmp([a, b2], reference=0).dispersion
    assert d1 == PATTERN_PENALTY and d2 == 2 * PATTERN_PENALTY


def test_outlier_is_the_farthest(cmp):
    base = f64(np.linspace(-1, 1, 50))
    outs = [base + 1e-12 * i for i in range(5)]
    outs[3] = base + 0.5
    rep = cmp(outs)
    assert rep.outlier == 3


def test_outlier_none_when_agreeing(cmp):
    rep = cmp([f32([1, 2]), f32([1, 2])])
    assert rep.agree and rep.outlier is None


# ----------------------------------------------------------------------------- API misuse

def test_usage_errors():
    with pytest.raises(CompareUsageError):
        compare_group([f32([1])])
    with pytest.raises(CompareUsageError):
        compare_group(f32([1, 2]))
    with pytest.raises(CompareUsageError):
        compare_group([f32([1]), f32([1])], reference=2)
    with pytest.raises(CompareUsageError):
        compare_group([f32([1]), f32([1])], reference=True)
    with pytest.raises(CompareUsageError):
        compare_group([f32([1]), f32([1])], backend="fortran")


def test_never_raises_on_odd_data():
    ragged = [[1], [1, 2]]
    rep = compare_group([ragged, ragged])
    assert rep.domain == "opaque"
    rep = compare_group([[1, 2], (1, 2), np.int64([1, 2])])  # lists become arrays
    assert rep.agree


# ----------------------------------------------------------------------------- report

def test_report_summary_and_json(cmp):
    rep = cmp([f64([1, nan, 3]), f64([1, 2, 3.5]), f64([1, 2])], reference=0)
    text = rep.summary()
    assert "member 1" in text and "NaN mismatch" in text and "shape" in text
    doc = json.loads(json.dumps(rep.to_dict()))
    assert doc["members"][2]["max_abs_diff"] == "nan"
    assert doc["reference"] == 0 and doc["agree"] is False
    assert "all agree" in cmp([f32([1]), f32([1])]).summary()


def test_value_distance_is_monotone_and_bounded(cmp):
    from xamt.compare import value_distance
    us = [0.0, 0.5, 1.0, 1.5, 10.0, 1e300, float("inf")]
    vs = [value_distance(u) for u in us]
    assert vs == sorted(vs) and vs[:3] == [0.0, 0.5, 1.0]
    assert vs[-1] == VALUE_DISTANCE_CAP < PATTERN_PENALTY
    # a wild value does not outweigh a NaN pattern change
    rep = cmp([f64([1.0, 1.0]), f64([1e300, 1.0]), f64([1.0, nan])], reference=0)
    assert rep.outlier == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_first_mismatch_across_vector_and_scalar_elements(cmp, dtype):
    x = np.linspace(1, 2, 3000).astype(dtype)
    y = x.copy()
    y[300] *= 2  # value mismatch, handled by the vector pass
    y[290] = np.nan  # NaN mismatch in the same chunk, handled by the scalar rules
    y[2900] = np.inf
    rep = cmp([x, y, x.copy()], reference=0)
    assert rep.members[1].first_mismatch == 290
    assert counts(rep, 1) == (1, 1, 0, 1)
    rep = cmp([x, y, x.copy(), y.copy()])  # median of (x, x, y, y) puts NaN and x in a tie
    assert rep.members[1].first_mismatch == rep.members[3].first_mismatch


def test_overflowing_complex_modulus(cmp):
    """|ref| overflows although its parts are finite: the finite pair still counts, inf / inf
    quotients raise no maximum."""
    huge = 1.7976931348623157e308
    ref = np.array([complex(huge, huge), complex(1.0, 0.0)])
    other = np.array([complex(1.0, 0.0), complex(3.0, 0.0)])
    rep = cmp([ref, other], reference=0, tol=Tolerance(0.5, 0.0))
    m = rep.members[1]
    assert m.max_abs_diff == inf and m.value_mismatch == 1  # |1 - 3| > 0.5, first element within inf
    assert m.max_rel_diff == 2.0 and m.first_mismatch == 1
