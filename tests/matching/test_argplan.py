import dataclasses

import pytest

from xamt.catalog import Param
from xamt.matching.argplan import plan_for, slots_from
from xamt.matching.model import ArgSpec, ArgumentPlan
from xamt.matching.roles import inputs_of


def P(name, kind="positional_or_keyword", default=None, annotation=None):
    return Param(name, kind, default, default is None and kind not in ("var_positional", "var_keyword"),
                 annotation)


NP_SUM = [P("a"), P("axis", default="None"), P("dtype", default="None"), P("out", default="None"),
          P("keepdims", default="False")]
TORCH_SUM = [P("input"), P("dim", default="None"), P("keepdim", default="False"),
             P("dtype", "keyword_only", "None")]


def by_param(plan):
    return {a.param: a for a in plan.args}


def test_dim_meets_axis_and_keepdim_meets_keepdims(data):
    pivot, member = inputs_of(NP_SUM, data), inputs_of(TORCH_SUM, data)
    plan, _ = plan_for(pivot, member, data)
    slots = {s.name: s.index for s in slots_from(pivot)}
    args = by_param(plan)
    assert args["input"].slot == slots["a"] and args["input"].position == 0
    assert args["dim"].slot == slots["axis"] and args["dim"].keyword == "dim"
    assert args["keepdim"].slot == slots["keepdims"]
    assert args["dtype"].slot == slots["dtype"] and args["dtype"].transform == "dtype"
    assert args["input"].transform == "tensor" and plan.complete


def test_known_roles_never_cross(data):
    pivot = inputs_of([P("x"), P("keepdims", default="False")], data)
    member = inputs_of([P("x"), P("axis", default="None")], data)
    plan, _ = plan_for(pivot, member, data)
    assert "axis" not in by_param(plan)


def test_override_reorders_clamp(data):
    pivot = inputs_of([P("a"), P("a_min"), P("a_max")], data)
    member = inputs_of([P("min"), P("x"), P("max")], data)
    plan, _ = plan_for(pivot, member, data, data.overrides_for("jax.lax.clamp"))
    args = by_param(plan)
    assert (args["x"].slot, args["x"].position) == (0, 1)
    assert (args["min"].slot, args["min"].position) == (1, 0)
    assert (args["max"].slot, args["max"].position) == (2, 2)
    assert plan.source == "assignment+override"
    assert plan.bind({0: "X", 1: "LO", 2: "HI"}) == (["LO", "X", "HI"], {})


def test_polygammas_order_meets_the_first_tensor_only_in_its_group(data):
    """scipy.special.polygamma(n, x): n names a count, which no tensor slot takes, so scipy and
    jax.scipy stayed out of the group of jax.lax.polygamma(m, x) and tf.math.polygamma(a, x),
    leaving two voters; the override pairs n with m in the polygamma group only."""
    pivot = inputs_of([P("m"), P("x")], data)
    member = inputs_of([P("n"), P("x")], data)
    plan, _ = plan_for(pivot, member, data)
    assert not plan.complete
    plan, _ = plan_for(pivot, member, data, data.overrides_for("scipy.special.polygamma", "polygamma"))
    args = by_param(plan)
    assert (args["n"].slot, args["n"].position) == (0, 0) and args["n"].transform == "tensor"
    assert (args["x"].slot, args["x"].position) == (1, 1) and plan.complete
    assert not data.overrides_for("scipy.special.polygamma", "digamma")


def test_correction_default_made_equal_by_override(data):
    pivot = inputs_of([P("a"), P("axis", default="None"), P("correction", "keyword_only", "0")], data)
    member = inputs_of([P("input"), P("dim", default="None"),
                        P("correction", "keyword_only", "1")], data)
    plan, _ = plan_for(pivot, member, data, data.overrides_for("torch.std"))
    corr = by_param(plan)["correction"]
    assert corr.has_default and corr.default == 0
    assert plan.bind({0: "X"}) == (["X"], {"correction": 0})


def test_literal_defaults_equalised_without_override(data):
    pivot = inputs_of([P("x"), P("axis", default="-1")], data)
    member = inputs_of([P("input"), P("dim", default="0")], data)
    plan, mismatch = plan_for(pivot, member, data)
    assert by_param(plan)["dim"].default == -1 and not mismatch
    pivot = inputs_of([P("x"), P("axis", default="None")], data)
    plan, mismatch = plan_for(pivot, member, data)
    assert mismatch == {1: True}  # None vs 0 cannot be equalised: the fuzzer must give it


def test_unmatched_required_parameter(data):
    pivot = inputs_of([P("x")], data)
    member = inputs_of([P("x"), P("weights")], data)
    plan, _ = plan_for(pivot, member, data)
    assert plan.unmatched_required == ["weights"] and not plan.complete


def test_bind_gap_falls_back_to_keywords_or_fails():
    plan = ArgumentPlan(args=[
        ArgSpec(slot=0, param="x", position=0),
        ArgSpec(slot=1, param="y", position=1, keyword="y"),
        ArgSpec(slot=2, param="z", position=2, keyword="z"),
    ])
    assert plan.bind({0: 1, 2: 3}) == ([1], {"z": 3})
    strict = ArgumentPlan(args=[ArgSpec(slot=0, param="x", position=0),
                                ArgSpec(slot=1, param="y", position=1)])
    with pytest.raises(ValueError, match="positional argument 1"):
        strict.bind({1: 2})


def test_star_arguments_are_spread():
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param="tensors", position=0, star=True),
                              ArgSpec(slot=1, param="indexing", keyword="indexing")])
    assert plan.bind({0: ["a", "b"], 1: "ij"}) == (["a", "b"], {"indexing": "ij"})


def test_compatible_data_roles_pair_when_required(data):
    # jax.scipy.special.ndtri(p) (probability) is torch.special.ndtri(input) (tensor);
    # scipy.stats.gumbel_l.ppf(q) (scalar) is jax's ppf(p) (probability)
    pivot = inputs_of([P("p")], data)
    member = inputs_of([P("input")], data)
    plan, _ = plan_for(pivot, member, data)
    assert by_param(plan)["input"].slot == 0 and plan.complete
    plan, _ = plan_for(inputs_of([P("q"), P("loc", default="0")], data),
                       inputs_of([P("p"), P("loc", default="0")], data), data)
    assert by_param(plan)["p"].slot == 0 and plan.complete


def test_compatible_roles_do_not_pair_two_unlike_optional_extras(data):
    # an optional scalar (alpha) and an optional tensor (weight) of unlike names stay apart
    pivot = inputs_of([P("x"), P("alpha", default="1.0")], data)
    member = inputs_of([P("input"), P("weight", default="None")], data)
    plan, _ = plan_for(pivot, member, data)
    assert "weight" not in by_param(plan)


def test_other_known_roles_still_forbidden_next_to_compatible_ones(data):
    pivot = inputs_of([P("x"), P("p")], data)
    member = inputs_of([P("x"), P("axis")], data)
    plan, _ = plan_for(pivot, member, data)
    assert "axis" not in by_param(plan) and not plan.complete


def test_torch_polynomials_take_degree_second(data):
    pivot = inputs_of([P("x1", "positional_only"), P("x2", "positional_only")], data)
    member = inputs_of([P("input"), P("n")], data)
    plan, _ = plan_for(pivot, member, data,
                       data.overrides_for("torch.special.chebyshev_polynomial_t"))
    args = by_param(plan)
    assert (args["n"].slot, args["input"].slot) == (0, 1) and plan.complete


def test_positional_only_inputs_pair_by_place(data):
    # scipy.special.boxcox(x1, x2) (a ufunc: positional-only x1, x2) is jax's boxcox(x, lmbda)
    pivot = inputs_of([P("x"), P("lmbda")], data)
    member = inputs_of([P("x1", "positional_only"), P("x2", "positional_only")], data)
    plan, _ = plan_for(pivot, member, data)
    args = by_param(plan)
    assert (args["x1"].slot, args["x2"].slot) == (0, 1) and plan.complete
    # named inputs of unlike names in one place stay apart (conv's weight vs. filters layouts)
    plan, _ = plan_for(inputs_of([P("x"), P("lmbda")], data),
                       inputs_of([P("input"), P("weight_matrix")], data), data)
    assert "weight_matrix" not in by_param(plan)


def test_a_prng_key_no_slot_feeds_is_given_a_fixed_key(data):
    """numpy.random.gumbel(loc, scale, size) vs jax.random.gumbel(key, shape, dtype): the key is
    given the fixed canonical seed (made a key by the prng_key transform), never numpy's loc."""
    pivot = inputs_of([P("loc", default="0.0"), P("scale", default="1.0"), P("size", default="None")], data)
    member = inputs_of([P("key"), P("shape", default="()"), P("dtype", default="None")], data,
                       category="random")
    plan, _ = plan_for(pivot, member, data)
    args = by_param(plan)
    assert plan.complete
    key = args["key"]
    assert key.slot is None and key.transform == "prng_key" and key.value == data.role_fixed["prng_key"]
    assert key.position == 0 and key.required
    assert args["shape"].slot == 2
    # the key goes first in the call
    call_args, _ = plan.bind({2: (3, 4)})
    assert call_args[0] == data.role_fixed["prng_key"]


def test_fixed_as_override_gives_a_parameter_a_key(data):
    from xamt.matching.data import PlanOverride

    pivot = inputs_of([P("shape"), P("mean", default="0.0")], data)
    member = inputs_of([P("shape"), P("seed"), P("mean", default="0.0")], data)
    ov = PlanOverride(apis=("tf.stateless_normal",), map={}, defaults={}, fixed={}, fixed_dtype={},
                      drop=(), reason="seed is a key", fixed_as={"seed": "prng_key"})
    plan, _ = plan_for(pivot, member, data, [ov])
    seed = by_param(plan)["seed"]
    assert plan.complete and seed.slot is None and seed.transform == "prng_key"


def test_key_is_a_prng_key_only_in_samplers(data):
    """attention's `key` (a tensor) is no PRNG key: the role is the random category's only."""
    params = [P("query"), P("key"), P("value")]
    assert [i.role for i in inputs_of(params, data, category="random")][1] == "prng_key"
    assert [i.role for i in inputs_of(params, data, category="nn")][1] != "prng_key"


def _override(**kw):
    from xamt.matching.data import PlanOverride

    base = dict(apis=("lib.dist",), map={}, defaults={}, fixed={}, fixed_dtype={}, drop=(),
                reason="")
    base.update(kw)
    return PlanOverride(**base)


def test_override_scoped_to_canonicals_applies_only_in_those_groups(data):
    """torch.dist with p fixed to 1 is the city-block distance: the fixed p must not leak into
    the Minkowski group, where p is the group's slot."""
    scoped = _override(fixed={"p": 1}, canonicals=("cityblock",))
    assert scoped.matches("lib.dist", "cityblock")
    assert not scoped.matches("lib.dist", "minkowski") and not scoped.matches("lib.dist")
    assert _override().matches("lib.dist", "anything") and _override().matches("lib.dist")
    data2 = dataclasses.replace(data, overrides=(*data.overrides, scoped))
    assert scoped in data2.overrides_for("lib.dist", "cityblock")
    assert scoped not in data2.overrides_for("lib.dist", "minkowski")
    assert scoped not in data2.overrides_for("lib.dist")


def test_fixed_parameter_of_the_member_is_fed_by_no_slot(data):
    """scipy.special.spherical_jn(n, z) with n fixed to 0 is torch's spherical_bessel_j0(input):
    even as the pivot (whose n is a slot), n is given 0 in its own place, never the slot."""
    jn = inputs_of([P("n"), P("z"), P("derivative", default="False")], data)
    ov = _override(apis=("scipy.special.spherical_jn",), fixed={"n": 0})
    plan, _ = plan_for(jn, jn, data, [ov], identity=True)
    args = by_param(plan)
    assert args["n"].slot is None and args["n"].value == 0 and args["n"].position == 0
    assert plan.complete and 0 not in plan.slots()
    assert plan.bind({0: 7, 1: "Z"}) == ([0, "Z"], {})
    j0 = inputs_of([P("input")], data)
    plan, _ = plan_for(j0, jn, data, [ov])
    assert plan.complete and plan.bind({0: "X"}) == ([0, "X"], {})
def test_a_fixed_parameter_is_fed_by_no_slot_even_in_the_pivots_own_plan(data):
    """jax.nn.initializers.variance_scaling(scale, mode, distribution) as the pivot with mode and
    distribution fixed: those parameters take the fixed values, not slots (a slot only the pivot
    takes, which no canonical input fills, left the group unsupported)."""
    from xamt.matching.data import PlanOverride

    params = [P("scale"), P("mode"), P("distribution"), P("in_axis", default="-2")]
    pivot = inputs_of(params, data)
    ov = PlanOverride(apis=("vs",), map={}, defaults={}, fixed={"mode": "fan_in",
                      "distribution": "truncated_normal"}, fixed_dtype={}, drop=(), reason="")
    for identity in (True, False):
        plan, _ = plan_for(pivot, inputs_of(params, data), data, [ov], identity=identity)
        args = [a for a in plan.args if a.param in ("mode", "distribution")]
        assert len(args) == 2 and all(a.slot is None for a in args), identity
        assert {a.value for a in args} == {"fan_in", "truncated_normal"}
        assert plan.complete and plan.slots() >= {0}
