"""Documented policies (xamt/data/policies.toml): matched on evidence, never on API names."""
from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest

from xamt.errors import DataFileError
from xamt.findings import FindingClass
from xamt.triage.policy import computation_dtype, load_policies


def test_the_packaged_policies_match_on_evidence():
    p = load_policies()
    linalg = NS(category="linalg", canonical="qr")
    generic = NS(category="generic", canonical="exp")
    ftz = p.match(FindingClass.SUBNORMAL, library="jax", computation="float32", trigger="subnormal",
                  group=generic)
    assert ftz is not None and ftz.name == "flush-to-zero" and "jax#16200" in ftz.reason
    # numpy and torch do not document flushing: their subnormal findings stay bugs
    assert p.match(FindingClass.SUBNORMAL, library="torch", computation="float32",
                   trigger="subnormal", group=generic) is None
    half = p.match(FindingClass.PRECISION, library="torch", computation="float16", trigger="ordinary",
                   group=generic)
    assert half is not None and half.name == "half-precision rounding"
    assert p.match(FindingClass.PRECISION, library="torch", computation="float32", trigger="ordinary",
                   group=generic) is None
    qr = p.match(FindingClass.VALUE, library="torch", computation="float32", trigger="+inf", group=linalg)
    assert qr is not None and "factorisation" in qr.name
    assert p.match(FindingClass.VALUE, library="torch", computation="float32", trigger="ordinary",
                   group=linalg) is None
    # PyTorch documents that torch.linalg may even segfault on non-finite input; others do not
    crash = p.match(FindingClass.CRASH, library="torch", computation="float32", trigger="nan", group=linalg)
    assert crash is not None and "factorisation" in crash.name
    assert p.match(FindingClass.CRASH, library="numpy", computation="float32", trigger="nan",
                   group=linalg) is None
    assert p.match(FindingClass.CRASH, library="torch", computation="float32", trigger="ordinary",
                   group=linalg) is None


def test_non_finite_transforms_floor_division_at_infinity_and_zero_vectors_normalised_are_policies():
    p = load_policies()
    idctn, shift = NS(category="fft", canonical="idctn"), NS(category="fft", canonical="fftshift")
    m = p.match(FindingClass.NAN, library="jax", computation="float32", trigger="-inf", group=idctn)
    assert m is not None and m.name == "non-finite input to a transform"
    # an ordinary input, or a shift that does no arithmetic, stays a bug
    assert p.match(FindingClass.NAN, library="jax", computation="float32", trigger="ordinary", group=idctn) is None
    assert p.match(FindingClass.VALUE, library="jax", computation="float32", trigger="+inf", group=shift) is None
    fdiv = NS(category="arithmetic", canonical="floor_divide")
    m = p.match(FindingClass.VALUE, library="tensorflow", computation="float32", trigger="+inf", group=fdiv)
    assert m is not None and m.name == "floor division at an infinite operand"
    assert p.match(FindingClass.VALUE, library="tensorflow", computation="float32", trigger="zero",
                   group=fdiv) is None
    # a zero vector normalised: eps-clamped 0 against a plain 0/0
    norm = NS(category="nn", canonical="normalize")
    m = p.match(FindingClass.NAN, library="tensorflow", computation="float32", trigger="-0", group=norm)
    assert m is not None and m.name == "normalising a zero vector"
    assert p.match(FindingClass.NAN, library="tensorflow", computation="float32", trigger="nan", group=norm) is None


def test_the_computation_dtype_is_the_lowest_float():
    assert computation_dtype([np.dtype("float16"), np.dtype("float64")]) == "float16"
    assert computation_dtype(["int32", "float32", "complex128"]) == "float32"
    assert computation_dtype([np.dtype("int64")]) is None


@pytest.mark.parametrize("body, match", [
    ('[[policy]]\nname = "x"\nreason = "y"\n', "classes"),
    ('[[policy]]\nname = "x"\nreason = "y"\nclasses = ["bogus"]\n', "unknown class"),
    ('[[policy]]\nname = "x"\nreason = "y"\nclasses = ["value"]\ntriggers = ["+nan"]\n', "unknown trigger"),
    ('[[policy]]\nname = "x"\nreason = "y"\nclasses = ["value"]\nwhen = 1\n', "unknown key"),
    ('[[policy]]\nname = ""\nreason = "y"\nclasses = ["value"]\n', "name"),
])
def test_bad_policy_files_are_refused_with_the_reason(tmp_path, body, match):
    path = tmp_path / "policies.toml"
    path.write_text(body)
    with pytest.raises(DataFileError, match=match):
        load_policies(path)


def test_flush_to_zero_seen_through_other_classes_and_jax_32_bit_default():
    p = load_policies()
    generic = NS(category="generic", canonical="divide")
    ftz = p.match(FindingClass.VALUE, library="tensorflow", computation="float32", trigger="subnormal",
                  group=generic)
    assert ftz is not None and ftz.name == "flush-to-zero"
    assert p.match(FindingClass.VALUE, library="torch", computation="float32", trigger="subnormal",
                   group=generic) is None
    x64 = p.match(FindingClass.PROMOTION, library="jax", computation="float32", trigger="int-extreme",
                  group=generic, narrowed=True)
    assert x64 is not None and "jax_enable_x64" in x64.reason
    assert p.match(FindingClass.PROMOTION, library="jax", computation="float32", trigger="int-extreme",
                   group=generic, narrowed=False) is None


def test_narrowed_compares_kinds():
    from xamt.triage.policy import narrowed

    i64, i32, f64, f32 = (np.dtype(n) for n in ("int64", "int32", "float64", "float32"))
    assert narrowed([i64], [i32]) and narrowed([f64, i32], [f32])
    assert not narrowed([i32], [i32]) and not narrowed([f32], [i64]) and not narrowed([i64], [f32])
    assert narrowed([np.dtype("complex128")], [np.dtype("complex64")])
    # an int64 input beyond 32 bits wraps in a 32-bit computation, whatever dtype comes out
    # (jax ldexp's exponent: float32 in, float32 out, int64 -2**63 as the exponent)
    big = [np.array([1.0], np.float32), np.array([-2**63, 3], np.int64)]
    assert narrowed([f32, i64], [f32], big)
    assert not narrowed([f32, i64], [f32], [big[0], np.array([-2**31, 2**31 - 1], np.int64)])
    assert narrowed([f32], [f32], [np.array([2**32], np.uint64)])
    assert not narrowed([f32], [f32], [np.array([2**32 - 1], np.uint64), np.array([], np.int64)])
    # integers only in, float32 out: an integer beyond 2**24 is rounded in the conversion (JAX's
    # cholesky of a uint32 matrix); within it, or beside a float input, it is not
    u32 = np.dtype("uint32")
    assert narrowed([u32], [f32], [np.array([4_000_000_000, 1], np.uint32)])
    assert not narrowed([u32], [f32], [np.array([2**24, 1], np.uint32)])
    assert not narrowed([u32], [f64], [np.array([4_000_000_000], np.uint32)])
    assert narrowed([i32], [np.dtype("float16")], [np.array([5000], np.int32)])


def test_a_dtype_argument_counts_as_an_input_of_its_kind():
    """jax's astype(x, int64) returns int32 without x64: asked for 64 bits, got 32."""
    from xamt.triage.policy import narrowed, requested_dtypes

    values = {0: np.array([np.inf], np.float32), 1: np.dtype("int64"), 2: "same_kind"}
    asked = requested_dtypes(values)
    assert asked == [np.dtype("int64")]
    assert narrowed([np.dtype("float32"), *asked], [np.dtype("int32")])
    assert not narrowed([np.dtype("float32")], [np.dtype("int32")])
    assert not narrowed([np.dtype("float32"), *asked], [np.dtype("int64")])


def test_at_edge_reads_the_reference_against_the_computation_dtype():
    from xamt.triage.policy import at_edge

    f32_max = float(np.finfo(np.float32).max)
    assert at_edge([np.array([1.96e38])], "float32")           # a float64 result near FLT_MAX
    assert at_edge([np.array([2.2e232, np.nan])], "float32")   # past it: float32 overflows
    assert not at_edge([np.array([4.2e20])], "float32")        # hypot(3e20, 3e20): far inside
    assert not at_edge([np.array([0.0, np.inf, np.nan])], "float32")
    assert at_edge([np.array([f32_max], np.float32)]) and not at_edge([np.array([1e300])], "float64")
    assert at_edge([np.array([1e38 + 2e38j], np.complex64)])


def test_an_overflow_to_the_references_sign_with_nothing_else_differing():
    from xamt.triage.policy import overflows_toward

    ref = np.array([-4.06e31, 2.0])
    assert overflows_toward(np.array([-np.inf, 2.0], np.float32), ref)
    assert not overflows_toward(np.array([np.inf, 2.0], np.float32), ref)       # the other sign
    assert not overflows_toward(np.array([-np.inf, 3.0], np.float32), ref)      # something else differs
    assert not overflows_toward(np.array([np.inf], np.float32), np.array([0.0]))  # pareto.pdf(2, 1e38)
    assert not overflows_toward(np.array([1.0, 2.0], np.float32), ref)          # no overflow at all


def test_near_subnormal_reads_each_array_against_its_own_dtype():
    from xamt.triage.policy import near_subnormal

    assert near_subnormal([np.array([1.0, 1.1754944e-38], np.float32)])
    assert near_subnormal([np.array([-1e-35], np.float32)])
    assert not near_subnormal([np.array([1e-30, 0.0], np.float32)])
    assert not near_subnormal([np.array([1e-35])])                                # normal in float64
    assert near_subnormal([np.array([1e-300])])


def test_the_edge_policy_matches_results_at_the_top_of_the_range_only():
    pol = load_policies()
    generic = NS(category="fft", canonical="ihfft")
    hit = pol.match(FindingClass.VALUE, library="numpy", computation="float32", trigger="large",
                    group=generic, edge=True)
    assert hit is not None and hit.name == "overflow at the edge of the float range"
    # not in half precision, where the edge (65504 / 1024) is where ordinary values live
    assert pol.match(FindingClass.VALUE, library="numpy", computation="float16", trigger="large",
                     group=generic, edge=True) is None
    assert pol.match(FindingClass.VALUE, library="numpy", computation="float32", trigger="large",
                     group=generic, edge=False) is None
    # a member that returns a number where the others' float32 results overflowed to NaN
    hit = pol.match(FindingClass.VALIDATION, library="torch", computation="float32", trigger="large",
                    group=generic, edge=True)
    assert hit is not None and hit.name == "overflow at the edge of the float range"
    # a result past the range that is by chance a multiple of the reference (tensorsolve)
    hit = pol.match(FindingClass.DEFAULT, library="torch", computation="float32", trigger="large",
                    group=generic, edge=True)
    assert hit is not None and hit.name == "overflow at the edge of the float range"


def test_a_refusal_stating_its_precondition_is_a_policy_and_others_stay_bugs():
    p = load_policies()
    generic = NS(category="generic", canonical="wald")
    pol = p.match(FindingClass.STATUS, library="numpy", computation="float32", trigger="ordinary",
                  group=generic, precondition=True)
    assert pol is not None and pol.name == "refuses outside its stated precondition"
    assert p.match(FindingClass.STATUS, library="numpy", computation="float32", trigger="ordinary",
                   group=generic) is None
    # only status findings: a value divergence is never excused by an error message
    assert p.match(FindingClass.VALUE, library="numpy", computation="float32", trigger="ordinary",
                   group=generic, precondition=True) is None


def test_an_own_check_in_one_of_two_different_functions_is_a_policy_and_nowhere_else():
    p = load_policies()
    inferred = NS(category="linalg", canonical="ordqz", relation="inferred")
    cross = NS(category="linalg", canonical="split", relation="cross_library")
    kw = dict(library="scipy", computation="float32", trigger="large")
    pol = p.match(FindingClass.STATUS, group=inferred, own_check=True, **kw)
    assert pol is not None and pol.name == "its own check, in a different function"
    # raised by what the function called (scipy's entropy sum in np.arange): a bug
    assert p.match(FindingClass.STATUS, group=inferred, **kw) is None
    # equivalents across libraries: their refusals are still compared
    assert p.match(FindingClass.STATUS, group=cross, own_check=True, **kw) is None
    # a crash is never a check
    assert p.match(FindingClass.CRASH, group=inferred, own_check=True, **kw) is None


def test_an_inferred_relation_parting_on_a_special_value_is_a_policy():
    p = load_policies()
    inferred = NS(category="generic", canonical="divide_no_nan", relation="inferred")
    cross = NS(category="generic", canonical="divide", relation="cross_library")
    pol = p.match(FindingClass.VALUE, library="tensorflow", computation="float32", trigger="zero",
                  group=inferred)
    assert pol is not None and pol.name == "inferred relation parts on a special value"
    # on other inputs the pair parts beyond what validated it (fftshift and ifftshift at odd
    # lengths); another relation, or a crash or a refusal: still bugs
    for trigger in ("ordinary", "negative", "large"):
        pol = p.match(FindingClass.VALUE, library="scipy", computation="float64", trigger=trigger,
                      group=inferred)
        assert pol is not None and pol.name == "inferred relation parts beyond its validation"
    assert p.match(FindingClass.VALUE, library="tensorflow", computation="float32", trigger="ordinary",
                   group=cross) is None
    assert p.match(FindingClass.STATUS, library="numpy", computation="float32", trigger="ordinary",
                   group=inferred) is None
    assert p.match(FindingClass.VALUE, library="tensorflow", computation="float32", trigger="zero",
                   group=cross) is None
    assert p.match(FindingClass.CRASH, library="tensorflow", computation="float32", trigger="nan",
                   group=inferred) is None


def test_jax_accepting_a_value_others_refuse_is_its_documented_lack_of_value_checks():
    p = load_policies()
    generic = NS(category="random", canonical="chisquare")
    pol = p.match(FindingClass.VALIDATION, library="jax", computation="float32", trigger="-inf",
                  group=generic)
    assert pol is not None and pol.name == "no checks on values in traced code" and "checkify" in pol.reason
    # another library accepting it, or JAX refusing, crashing or computing a wrong number: bugs
    assert p.match(FindingClass.VALIDATION, library="torch", computation="float32", trigger="-inf",
                   group=generic) is None
    for cls in (FindingClass.STATUS, FindingClass.CRASH, FindingClass.VALUE, FindingClass.NAN):
        assert p.match(cls, library="jax", computation="float32", trigger="ordinary", group=generic) is None


def test_a_refusal_where_every_returning_member_gives_only_nan_is_a_policy():
    """numpy.fft.rfftfreq(0) divides by zero; JAX's and torch's rfftfreq(0) return [nan]: no
    library has a value there. A member that returns a number keeps the refusal a bug."""
    from xamt.triage.policy import undefined_everywhere

    nan = np.array([np.nan], np.float32)
    assert undefined_everywhere([nan, (nan, np.array([np.nan + 1j * np.nan]))])
    assert not undefined_everywhere([nan, np.array([np.nan, 0.5])])
    assert not undefined_everywhere([])                          # nobody returned
    assert not undefined_everywhere([np.array([], np.float32)])  # empty: no NaN said
    assert not undefined_everywhere([np.array([0], np.int64)])
    p = load_policies()
    fft = NS(category="fft", canonical="rfftfreq")
    pol = p.match(FindingClass.STATUS, library="numpy", computation=None, trigger="zero", group=fft,
                  undefined=True)
    assert pol is not None and pol.name == "refuses where the others return NaN"
    assert p.match(FindingClass.STATUS, library="numpy", computation=None, trigger="zero", group=fft) is None
    assert p.match(FindingClass.VALUE, library="numpy", computation=None, trigger="zero", group=fft,
                   undefined=True) is None


def test_a_tensorflow_shift_by_a_negative_or_extreme_count_is_its_documented_policy():
    p = load_policies()
    shift = NS(category="generic", canonical="bitwise_left_shift")
    for trigger in ("negative", "int-extreme"):
        pol = p.match(FindingClass.VALUE, library="tensorflow", computation=None, trigger=trigger, group=shift)
        assert pol is not None and pol.name == "shift count outside the type's width"
    assert p.match(FindingClass.VALUE, library="tensorflow", computation=None, trigger="ordinary", group=shift) is None
    assert p.match(FindingClass.VALUE, library="torch", computation=None, trigger="negative", group=shift) is None


def test_with_no_float_input_another_members_float64_result_makes_a_float32_one_narrowed():
    """scipy.linalg.invhilbert(n) computes in float64, JAX's in float32 (its documented 32-bit
    default): with an integer n only, the other member's result says how wide it could be."""
    from xamt.triage.policy import narrowed, widths_elsewhere

    others = [np.zeros((3, 3)), (np.zeros(2, np.float32), np.zeros(2, np.int64))]
    assert widths_elsewhere([np.dtype(np.int64)], others) == [np.dtype(np.float64), np.dtype(np.float32)]
    assert widths_elsewhere([], others)[0] == np.float64
    # a float input says it already: the others' results add nothing
    assert widths_elsewhere([np.dtype(np.float32)], others) == []
    wide = widths_elsewhere([np.dtype(np.int64)], others)
    assert narrowed([np.dtype(np.int64), *wide], [np.dtype(np.float32)])
    assert not narrowed([np.dtype(np.int64)], [np.dtype(np.float32)])
    pol = load_policies().match(FindingClass.PRECISION, library="jax", computation="float32", trigger="ordinary",
                                group=NS(category="linalg", canonical="invhilbert"), narrowed=True)
    assert pol is not None and pol.name == "32-bit by default"


def test_torch_reducing_a_0d_tensor_over_dim_0_is_its_convention_and_a_bad_rule_is_refused(tmp_path):
    p = load_policies()
    norm = NS(category="linalg", canonical="vector_norm")
    bounds = "returns where others raise | ValueError: axis # is out of bounds for array of dimension #"
    pol = p.match(FindingClass.VALIDATION, library="torch", computation="float32", trigger="ordinary",
                  group=norm, rule=bounds, scalar=True)
    assert pol is not None and pol.name == "reduces a 0-d tensor over dim 0 or -1"
    assert p.match(FindingClass.VALIDATION, library="torch", computation="float32", trigger="ordinary",
                   group=norm, rule=bounds) is None  # no 0-d input
    assert p.match(FindingClass.VALIDATION, library="torch", computation="float32", trigger="ordinary",
                   group=norm, rule="returns where others raise | ValueError: scale <= 0", scalar=True) is None
    bad = tmp_path / "policies.toml"
    bad.write_text('[[policy]]\nname = "x"\nclasses = ["value"]\nrule = "("\nreason = "r"\n')
    with pytest.raises(DataFileError, match="regular expression"):
        load_policies(bad)


def test_a_refusal_in_an_inferred_relation_at_a_rank_beyond_its_seed_is_outside_its_validation():
    """scipy.ndimage.convolve1d refusing 4-D weights that convolve takes: the pair was validated
    on 1-D weights. At the seed's ranks the refusal stays a bug."""
    from xamt.inputs import GroupInput, SlotValue
    from xamt.inputs.arrays import ArrayRecipe
    from xamt.triage.policy import beyond_seed

    seed = GroupInput({0: SlotValue.array(ArrayRecipe(seed=1, dtype="float32", shape=(5,))),
                       1: SlotValue.array(ArrayRecipe(seed=2, dtype="float32", shape=(3,)))})
    pair = NS(category="nn", canonical="convolve1d", relation="inferred", seed_inputs=lambda: [seed])
    four_d = {0: np.ones(5, np.float32), 1: np.ones((1, 1, 1, 1), np.float32)}
    assert beyond_seed(pair, four_d)
    assert not beyond_seed(pair, {0: np.ones(7, np.float32), 1: np.ones(2, np.float32)})
    assert not beyond_seed(NS(), four_d)  # no seed known
    p = load_policies()
    pol = p.match(FindingClass.STATUS, library="scipy", computation="float32", trigger="ordinary",
                  group=pair, beyond_seed=True)
    assert pol is not None and pol.name == "inferred relation parts beyond its validation"
    assert p.match(FindingClass.STATUS, library="scipy", computation="float32", trigger="ordinary",
                   group=pair) is None
    assert p.match(FindingClass.STATUS, library="scipy", computation="float32", trigger="ordinary",
                   group=NS(category="nn", canonical="convolve1d", relation="cross_library"),
                   beyond_seed=True) is None


def test_ill_conditioned_reads_the_first_matrix_against_the_computation_dtype():
    from xamt.triage.policy import ill_conditioned

    singular = np.zeros((1, 1), np.float32)
    assert ill_conditioned({0: singular, 1: np.ones((1, 1), np.float32)}, "float32")
    # the first matrix decides: a full-rank A with a singular b is not the case documented
    assert not ill_conditioned({0: np.eye(2, dtype=np.float32), 1: np.zeros((2, 2), np.float32)}, "float32")
    # cond 1e5 is past 1/sqrt(eps) of float32 (2896) and well inside float64's (6.7e7)
    scaled = np.diag([1.0, 1e-5]).astype(np.float32)
    assert ill_conditioned({0: scaled}, "float32") and not ill_conditioned({0: scaled.astype(np.float64)}, "float64")
    # a stack of matrices: one singular slice is enough
    assert ill_conditioned({0: np.stack([np.eye(2), np.ones((2, 2))])}, None)
    # non-finite, vectors only, empty or too large: nothing to say
    assert not ill_conditioned({0: np.array([[np.inf, 0.0], [0.0, 1.0]])}, "float64")
    assert not ill_conditioned({0: np.zeros(3), 1: 2.0}, "float64")
    assert not ill_conditioned({0: np.zeros((0, 3))}, "float64")
    assert not ill_conditioned({0: np.zeros((300, 300))}, "float64")


def test_tensorflow_lstsq_on_an_ill_conditioned_matrix_is_its_documented_fast_path():
    p = load_policies()
    lstsq = NS(category="linalg", canonical="lstsq", relation="cross_library")
    pol = p.match(FindingClass.NAN, library="tensorflow", computation="float32", trigger="zero", group=lstsq,
                  ill_conditioned=True)
    assert pol is not None and pol.name == "normal equations on an ill-conditioned matrix"
    # a well-conditioned matrix, or another library, stays a bug
    assert p.match(FindingClass.NAN, library="tensorflow", computation="float32", trigger="zero", group=lstsq,
                   ill_conditioned=False) is None
    assert p.match(FindingClass.NAN, library="torch", computation="float32", trigger="zero", group=lstsq,
                   ill_conditioned=True) is None


def test_arrays_of_one_shape_in_every_seed_given_two_are_shapes_the_group_never_saw():
    """numpy.extract and tf.boolean_mask agree where the condition has the array's shape (every
    seed); a (3,) condition beside a (3, 4) array is a call the group was not validated on, and
    the members' results of different shapes there are a policy, not a bug. Shapes the seeds
    already differ in, or a finding of another class, say nothing."""
    from xamt.inputs import GroupInput, SlotValue
    from xamt.inputs.arrays import ArrayRecipe
    from xamt.triage.policy import unseen_shapes

    def seed(a, b):
        return GroupInput({0: SlotValue.array(ArrayRecipe(seed=1, dtype="bool", shape=a)),
                           1: SlotValue.array(ArrayRecipe(seed=2, dtype="float32", shape=b))})

    extract = NS(category="generic", canonical="extract", relation="cross_library",
                 seed_inputs=lambda: [seed((3, 4), (3, 4)), seed((5,), (5,))])
    lower = {0: np.ones(3, bool), 1: np.ones((3, 4), np.float32)}
    assert unseen_shapes(extract, lower)
    assert not unseen_shapes(extract, {0: np.ones((2, 2), bool), 1: np.ones((2, 2), np.float32)})
    assert not unseen_shapes(extract, {0: np.ones(3, bool), 1: 2.0})
    # one seed with two shapes: the group was validated on unequal shapes too
    mixed = NS(seed_inputs=lambda: [seed((3, 4), (3, 4)), seed((3, 4), (4,))])
    assert not unseen_shapes(mixed, lower)
    assert not unseen_shapes(NS(), lower)  # no seed known
    # the policy needs the evidence, and a finding of its class (a value divergence stays a bug)
    p = load_policies()
    evidence = dict(library="tensorflow", computation="float32", trigger="ordinary", group=extract)
    assert p.match(FindingClass.DEFAULT, unseen_shapes=True, **evidence).name == "shapes the group was not validated on"
    assert p.match(FindingClass.DEFAULT, **evidence) is None
    assert p.match(FindingClass.VALUE, unseen_shapes=True, **evidence) is None


def test_an_integer_result_that_is_the_float_result_rounded_keeps_its_input_s_dtype():
    """Keras' resize of an int16 image rounds its interpolation to int16 where the reference is
    the float result: the dtype differs, not the value. An integer result off the rounding, a
    NaN reference, or a float outlier stays a finding."""
    from xamt.triage.policy import rounded_to_integers

    img = np.array([[1], [10]], np.int16)
    ref = np.array([1.0, 3.25, 5.5, 7.75, 10.0])
    assert rounded_to_integers(np.array([1, 3, 6, 8, 10], np.int16), ref, [img])    # to nearest
    assert rounded_to_integers(np.array([1, 3, 5, 7, 10], np.int16), ref, [img])    # truncated
    assert not rounded_to_integers(np.array([1, 3, 5, 9, 10], np.int16), ref, [img])
    assert not rounded_to_integers(np.array([1, 3, 5, 7, 10], np.int32), ref, [img])  # not the input's dtype
    assert not rounded_to_integers(ref.astype(np.float32), ref, [img])
    assert not rounded_to_integers(np.array([1, 0], np.int16), np.array([1.0, np.nan]), [img])
    assert not rounded_to_integers(np.array([1, 3, 5, 7, 10], np.int16), ref, [img.astype(np.float32)])
    # clipped to the dtype's range, inside a tuple of results
    assert rounded_to_integers((np.array([255, 0], np.uint8),), (np.array([300.0, -4.0]),), [np.zeros(2, np.uint8)])
    p = load_policies()
    pol = p.match(FindingClass.VALUE, library="keras", computation=None, trigger="ordinary",
                  group=NS(category="image", canonical="resize", relation="cross_library"),
                  rounded_to_integers=True)
    assert pol is not None and pol.name == "an integer input's dtype kept"


def test_nan_in_unique_is_a_documented_choice_either_way():
    """numpy.unique collapses NaNs (equal_nan=True, documented) where the Array API standard
    keeps them distinct (torch.unique): one NaN or several is no bug; without a NaN, or in
    another group, a different count of unique values stays one."""
    p = load_policies()
    unique = NS(category="generic", canonical="unique", relation="cross_library")
    pol = p.match(FindingClass.DEFAULT, library="torch", computation="float32", trigger="nan", group=unique)
    assert pol is not None and pol.name == "NaN as a distinct value in unique"
    assert p.match(FindingClass.DEFAULT, library="torch", computation="float32", trigger="ordinary",
                   group=unique) is None
    assert p.match(FindingClass.DEFAULT, library="torch", computation="float32", trigger="nan",
                   group=NS(category="generic", canonical="sort", relation="cross_library")) is None


def test_a_factorisation_hanging_on_a_non_finite_matrix_is_lapacks_undefined_case_in_any_library():
    """jax.lax.linalg.svd hanging on a matrix holding inf, in LAPACK's xBDSQR (numpy's and
    scipy's svd hang on it too): the policy, whichever library called LAPACK. On a finite matrix,
    or outside linear algebra, a hang stays a bug."""
    p = load_policies()
    svd = NS(category="linalg", canonical="svd", relation="eager_compiled")
    pol = p.match(FindingClass.CRASH, library="jax", computation="float32", trigger="+inf", group=svd)
    assert pol is not None and pol.name == "non-finite input to a factorisation" and "xBDSQR" in pol.reason
    assert p.match(FindingClass.CRASH, library="jax", computation="float32", trigger="ordinary", group=svd) is None
    assert p.match(FindingClass.CRASH, library="jax", computation="float32", trigger="+inf",
                   group=NS(category="generic", canonical="hyp2f1", relation="cross_library")) is None


def test_tensorflow_s_value_outside_an_undocumented_domain_is_cephes_convention():
    """tf.math.special.bessel_y1(-0.5) = -inf where scipy and torch give NaN: Eigen's Cephes port
    answers a domain error with a value. Where the documentation states the domain, where the
    finding is a refusal by the others (a rule), or in another library, it stays a bug."""
    p = load_policies()
    y1 = NS(category="generic", canonical="y1", relation="cross_library")
    pol = p.match(FindingClass.VALIDATION, library="tensorflow", computation="float32", trigger="negative",
                  group=y1, rule="")
    assert pol is not None and pol.name == "a value by Cephes' convention outside the domain"
    assert "Eigen" in pol.reason
    assert p.match(FindingClass.VALIDATION, library="tensorflow", computation="float32", trigger="negative",
                   group=y1, rule="", documented_domain=True) is None
    assert p.match(FindingClass.VALIDATION, library="tensorflow", computation="float32", trigger="negative",
                   group=y1, rule="returns where others raise | ValueError") is None
    assert p.match(FindingClass.VALIDATION, library="torch", computation="float32", trigger="negative",
                   group=y1, rule="") is None
    assert p.match(FindingClass.NAN, library="tensorflow", computation="float32", trigger="negative",
                   group=y1, rule="") is None


def test_a_solve_with_a_singular_matrix_is_a_policy_and_an_ill_conditioned_regular_one_is_not():
    """tf.linalg.cholesky_solve on a factor with a zero on its diagonal: NaN compiled, inf eager;
    the system has no unique solution. A regular matrix, or a function other than a solve (an
    SVD of a singular matrix is well defined), stays a bug."""
    from xamt.triage.policy import ill_conditioned, singular

    p = load_policies()
    chol = np.array([[1.0, 0.0], [0.5, 0.0]], np.float32)  # a zero pivot
    near = np.array([[1.0, 0.0], [0.5, 1e-3]], np.float32)  # regular, cond ~1e3
    assert singular({0: chol, 1: np.ones((2, 2), np.float32)}, "float32")
    assert not singular({0: near}, "float32") and not singular({0: np.array([[np.inf, 0], [0, 1]])}, "float64")
    assert ill_conditioned({0: np.array([[1.0, 0.0], [0.5, 1e-4]], np.float32)}, "float32")
    solve = NS(category="linalg", canonical="cho_solve")
    pol = p.match(FindingClass.NAN, library="tensorflow", computation="float32", trigger="ordinary", group=solve,
                  singular=singular({0: chol}, "float32"))
    assert pol is not None and pol.name == "solving with a singular matrix"
    assert p.match(FindingClass.NAN, library="tensorflow", computation="float32", trigger="ordinary", group=solve,
                   singular=singular({0: near}, "float32")) is None
    assert p.match(FindingClass.NAN, library="tensorflow", computation="float32", trigger="ordinary",
                   group=NS(category="linalg", canonical="svd"), singular=True) is None
    assert p.match(FindingClass.CRASH, library="tensorflow", computation="float32", trigger="ordinary", group=solve,
                   singular=True) is None
