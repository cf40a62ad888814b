import numpy as np
import pytest

pytest.importorskip("xamt.compare")

from xamt.findings import FindingClass
from xamt.triage.classify import classify_value, flush_subnormals, subnormal_mask

F32_SUB = np.float32(1e-44)


def cls(outputs, outlier, ref, inputs, **kw):
    return classify_value(outputs, outlier, ref, inputs, **kw).finding_class


def test_shape_difference_is_a_default():
    ref = np.zeros((2, 1), np.float32)
    assert cls([ref, np.zeros(2, np.float32)], 1, ref, {"x": np.ones((2, 3))}) is FindingClass.DEFAULT


def test_constant_factor_is_a_default():
    x = np.array([1.0, 2.0, 3.0, 5.0])
    ref = x * 2.0
    out = ref * np.sqrt(4 / 3)  # population vs sample statistic
    assert cls([ref, out], 1, ref, {"x": x}) is FindingClass.DEFAULT


def test_nan_pattern_with_nan_input():
    x = np.array([1.0, np.nan, 3.0])
    ref = np.array([1.0, np.nan, 3.0])
    out = np.array([1.0, 0.0, 3.0])
    assert cls([ref, out], 1, ref, {"x": x}) is FindingClass.NAN


def test_nan_ordering_with_nan_input():
    x = np.array([3.0, np.nan, 1.0])
    ref = np.array([1.0, 3.0, np.nan])
    out = np.array([np.nan, 1.0, 3.0])
    assert cls([ref, out], 1, ref, {"x": x}) is FindingClass.NAN


def test_subnormal_via_rerun_with_flushed_inputs():
    x = np.array([1e-30, np.float32(1e-39), 2e-30], np.float32)  # 1e-39 is subnormal in float32
    scale = np.float32(2.0 ** 126)
    ref = x * scale
    out = flush_subnormals({"x": x})["x"] * scale

    def rerun(inputs):
        return inputs["x"] * scale

    assert cls([ref, out], 1, ref, {"x": x}, rerun_reference=rerun) is FindingClass.SUBNORMAL


def test_flushing_explains_a_nan_before_the_nan_rules_do():
    """XLA flushes -1e-45 to -0, and -0 * inf is NaN: the outlier's NaN where the reference
    returns -inf is flush-to-zero, not a NaN bug (the reference on the flushed input says so)."""
    x = np.array([1.0, -F32_SUB, 1.0, np.inf], np.float32)
    with np.errstate(invalid="ignore"):
        ref = np.prod(x, keepdims=True)
        out = np.prod(flush_subnormals({"x": x})["x"], keepdims=True)
    assert np.isneginf(ref).all() and np.isnan(out).all()

    def rerun(inputs):
        with np.errstate(invalid="ignore"):
            return np.prod(inputs["x"], keepdims=True)

    assert cls([ref, out], 1, ref, {"x": x}, rerun_reference=rerun) is FindingClass.SUBNORMAL
    # the same NaN where flushing does not explain it stays a NaN finding
    assert cls([ref, out], 1, ref, {"x": x}, rerun_reference=lambda inputs: ref) is FindingClass.NAN


def test_subnormal_elementwise_without_rerun():
    x = np.array([1.0, F32_SUB, 2.0], np.float32)
    ref = np.array([1.0, 5.0, 2.0], np.float32)
    out = np.array([1.0, np.inf, 2.0], np.float32)
    assert cls([ref, out], 1, ref, {"x": x}) is FindingClass.SUBNORMAL


def test_integer_overflow_is_promotion():
    x = np.array([100, 50, 7], np.int8)
    ref = x.astype(np.int64) * 3           # exact
    out = (x * np.int8(3))                 # wraps in int8
    with np.errstate(over="ignore"):
        assert cls([ref, out], 1, ref, {"x": x}) is FindingClass.PROMOTION


def test_precision_only():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    ref = np.exp(x.astype(np.float64))
    out = (ref * (1 + np.array([1e-4, -2e-4, 0]))).astype(np.float32)
    assert cls([ref, out], 1, ref, {"x": x}) is FindingClass.PRECISION


def test_repeated_value_is_not_a_constant_factor():
    x = np.array([2.0, 2.0])
    ref = np.array([4.0, 4.0])
    assert cls([ref, ref * 3], 1, ref, {"x": x}) is FindingClass.VALUE


def test_plain_value_difference():
    x = np.array([1.0, 2.0, 3.0])
    ref = np.array([1.0, 4.0, 9.0])
    out = np.array([1.0, 4.0, -9.0])
    assert cls([ref, out], 1, ref, {"x": x}) is FindingClass.VALUE


def test_flush_keeps_sign_and_normals():
    x = np.array([-F32_SUB, F32_SUB, 1.0], np.float32)
    f = flush_subnormals({"x": x})["x"]
    assert f[0] == 0 and np.signbit(f[0]) and f[1] == 0 and not np.signbit(f[1]) and f[2] == 1.0


def test_integer_overflow_is_promotion_when_the_exact_result_does_not_fit():
    import numpy as np

    from xamt.findings import FindingClass
    from xamt.triage.classify import classify_value

    x = np.array([2**30, 3], np.int32)
    ref = np.array([-2147483648, 6], np.int32)     # lcm wrapped one way
    out = np.array([2147483647, 6], np.int32)      # ... and saturated the other
    wide = np.array([2**31, 6], np.int64)          # the exact result does not fit in int32
    c = classify_value([out], 0, ref, {"x": x}, wide_reference=wide)
    assert c.finding_class == FindingClass.PROMOTION and "integer overflow" in c.why
    # the same difference where the exact result fits is a plain value divergence
    c = classify_value([out], 0, ref, {"x": x}, wide_reference=np.array([5, 6], np.int64))
    assert c.finding_class == FindingClass.VALUE


def test_widen_integers_only_touches_narrow_integer_arrays():
    import numpy as np

    from xamt.triage.pipeline import widen_integers

    vals = {0: np.array([1], np.int8), 1: np.array([1.5], np.float32), 2: 3, 3: np.array([1], np.int64)}
    wide = widen_integers(vals)
    assert wide[0].dtype == np.int64 and wide[1].dtype == np.float32 and wide[2] == 3
    assert widen_integers({0: np.array([1], np.int64)}) is None


def test_a_number_where_the_reference_returns_nan_is_validation_and_the_reverse_nan():
    import numpy as np

    from xamt.findings import FindingClass
    from xamt.triage.classify import classify_value

    ref = np.array([np.nan, 0.5], np.float32)     # scipy: nan for an invalid parameter
    out = np.array([0.0, 0.5], np.float32)        # jax: 0
    c = classify_value([out], 0, ref, {"n": np.array([-1.0, 3.0], np.float32)})
    assert c.finding_class == FindingClass.VALIDATION
    # on an infinite input the reference's NaN is IEEE arithmetic (inf // 2 in numpy), no
    # domain check: tf's floor-divide returning inf is a NaN finding of its own (stop 31's #102)
    c = classify_value([out], 0, ref, {"n": np.array([np.inf, 3.0], np.float32)})
    assert c.finding_class == FindingClass.NAN and "infinite" in c.why
    # the outlier's NaN where the reference computes a number: a NaN finding on the outlier
    c = classify_value([ref], 0, out, {"n": np.array([-1.0, 3.0], np.float32)})
    assert c.finding_class == FindingClass.NAN
    # NaN where the reference has a number as well as the reverse: not a clean rejection
    mixed = np.array([0.0, np.nan], np.float32)
    assert classify_value([mixed], 0, ref, {"n": np.array([-1.0, 3.0], np.float32)}).finding_class \
        == FindingClass.NAN
    # a NaN difference next to a plain value difference stays a value finding
    out2 = np.array([0.0, 0.7], np.float32)
    assert classify_value([out2], 0, ref, {"n": np.array([-1.0, 3.0], np.float32)}).finding_class \
        == FindingClass.VALUE


def test_index_outputs_that_differ_only_among_ties_are_recognised():
    import numpy as np

    from xamt.triage.classify import ties_only

    x = np.array([[1.0, 1.0, 0.0], [3.0, 2.0, 2.0]], np.float32)
    stable = np.array([[2, 0, 1], [1, 2, 0]])       # numpy kind="stable"
    unstable = np.array([[2, 1, 0], [2, 1, 0]])     # another order among the equal values
    assert ties_only(unstable, stable, [x])
    wrong = np.array([[0, 2, 1], [1, 2, 0]])        # not a sort of the first row
    assert not ties_only(wrong, stable, [x])
    # float outputs, or indices into nothing of their shape, are no ties
    assert not ties_only(stable.astype(np.float32), stable, [x])
    assert not ties_only(unstable, stable, [np.ones(4)])


def test_flushing_is_no_cause_when_the_unflushed_rerun_gives_the_outlier_too():
    """numpy.cross of float32 MAX values overflows to NaN in float32 whether or not a subnormal
    elsewhere in the input is flushed; only the float64 reference is exact. The rerun on flushed
    inputs matching the outlier then says nothing about flushing (the stop-31 audit's #16)."""
    big = np.finfo(np.float32).max
    x = np.array([big, big, F32_SUB], np.float32)
    ref = np.array([0.0, 0.0, 0.0])  # the float64 evaluation
    out = np.array([np.nan, np.nan, 0.0], np.float32)
    assert cls([ref, out], 1, ref, {"x": x}, rerun_reference=lambda inputs: out) is not FindingClass.SUBNORMAL


def test_normal_stand_ins_lift_each_subnormal_to_the_smallest_normal_of_its_sign():
    from xamt.triage.classify import normal_stand_ins

    tiny32, tiny64 = np.finfo(np.float32).tiny, np.finfo(np.float64).tiny
    x = np.array([1.4e-45, -1e-40, 0.0, -0.0, 2.0, np.nan, np.inf], np.float32)
    z = np.array([1e-300 - 1e-310j, 1e-320 + 1j], np.complex128)
    ints = np.array([0, 1], np.int32)
    out = normal_stand_ins({"x": x, "z": z, "i": ints})
    assert out["x"].dtype == np.float32
    np.testing.assert_array_equal(out["x"][:2], [tiny32, -tiny32])
    np.testing.assert_array_equal(out["x"][2:], x[2:])
    assert np.signbit(out["x"][3]) and not subnormal_mask(out["x"]).any()
    assert out["z"][0] == 1e-300 - tiny64 * 1j and out["z"][1] == tiny64 + 1j
    assert out["i"] is ints
