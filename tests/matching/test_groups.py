"""Behaviour of matching on the real catalogs of numpy, scipy, torch and jax."""
import re

import numpy as np


def members(group):
    return {m.qualname: m for m in group.members}


def test_sum_group_and_its_plans(groups):
    g = groups["x:sum/reduction"]
    m = members(g)
    assert {"numpy.sum", "numpy.ndarray.sum", "torch.sum", "torch.Tensor.sum", "jax.numpy.sum",
            "jax.Array.sum"} <= set(m)
    assert g.pivot == "numpy.sum" and g.equivalence == "value" and g.band == "high"
    axis = next(s.index for s in g.slots if s.name == "axis")
    torch_dim = next(a for a in m["torch.sum"].plan.args if a.slot == axis)
    assert torch_dim.keyword == "dim"
    assert m["torch.Tensor.sum"].call == "method" and m["torch.Tensor.sum"].receiver_slot == 0


def test_clamp_argument_order(groups):
    clamp = members(groups["x:clip/generic"])["jax.lax.clamp"]
    positions = {a.param: (a.slot, a.position) for a in clamp.plan.args}
    assert positions == {"x": (0, 1), "min": (1, 0), "max": (2, 2)}


def test_torch_std_population_default(groups):
    std = members(groups["x:std/reduction"])["torch.std"]
    corr = next(a for a in std.plan.args if a.param == "correction")
    assert corr.has_default and corr.default == 0


def test_homonyms_stay_out(groups):
    equal = members(groups["x:equal/comparison"])
    assert "torch.eq" in equal and "torch.equal" not in equal
    for key, g in groups.items():
        if g.relation == "cross_library":
            # torch.select indexes along a dim: jax.lax.index_in_dim's group, never numpy.select's
            if "torch.select" in members(g):
                assert g.canonical == "index_in_dim", key
            # numpy.resize repeats data: only ever with jnp.resize, never with image resizing
            if "numpy.resize" in members(g):
                assert set(members(g)) == {"numpy.resize", "jax.numpy.resize"}, key


def test_documentation_contradicting_a_name_is_not_followed(groups, result):
    fftfreq = [g for k, g in groups.items() if k.startswith("x:fftfreq")]
    assert fftfreq and all("jax.numpy.fft.rfftfreq" not in members(g) for g in fftfreq)


def test_intra_library_relations(groups):
    keys = set(groups)
    assert "function_method:torch.abs|torch.Tensor.abs" in keys
    assert "inplace:torch.Tensor.abs|torch.Tensor.abs_" in keys
    assert "out_variant:torch.abs" in keys and "eager_compiled:jax.numpy.sum" in keys
    relu = groups["functional_module:torch.nn.functional.relu|torch.nn.ReLU"]
    assert relu.equivalence == "value"
    conv = groups["functional_module:torch.conv2d|torch.nn.Conv2d"]
    assert conv.equivalence == "status"
    alias = next(g for g in groups.values() if g.relation == "alias" and not g.same_object
                 and {"torch.abs", "torch.absolute"} <= set(members(g)))
    assert alias.equivalence == "value"
    twin = next(g for g in groups.values() if g.relation == "namespace_twin"
                and {"torch.det", "torch.linalg.det"} <= set(members(g)))
    assert not twin.same_object
    # tril/triu are related by what they take, not by name: an inferred candidate, whose
    # equivalence the registry build decides
    sib = groups["inferred:torch.tril|torch.triu"]
    assert sib.relation == "inferred" and sib.evidence["score"] >= 0.5
    softmax = groups["functional_module:torch.nn.functional.softmax|torch.nn.Softmax"]
    module = members(softmax)["torch.nn.Softmax"]
    assert [a.param for a in module.plan.init_args] == ["dim"]


def test_every_member_has_a_sandbox_target(result):
    target = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
    keys = [g.key for g in result.groups]
    assert len(keys) == len(set(keys))
    for g in result.groups:
        for m in g.members:
            assert target.match(m.target), (g.key, m.target)
            assert m.call in ("function", "method", "module", "compiled", "out", "constructed",
                              "fill")
            if m.call in ("compiled", "out", "fill"):
                assert target.match(m.via)


def test_group_json_is_stable(result):
    from xamt.matching.model import CandidateGroup

    for g in result.groups[:200]:
        assert CandidateGroup.from_json(g.to_json()).to_json() == g.to_json()


def test_distribution_classes_join_scipy_distribution_methods(groups):
    """torch.distributions.Normal.log_prob is norm_logpdf: constructed from the scipy slots
    loc/scale, called on the variate; a parameter that is not a rename is fixed, not mapped."""
    norm = members(groups["x:norm_logpdf/stats"])
    assert {"scipy.stats.norm.logpdf", "jax.scipy.stats.norm.logpdf"} <= set(norm)
    torch = norm["torch.distributions.Normal.log_prob"]
    assert torch.call == "constructed" and torch.kind == "constructed"
    slot = {s.name: s.index for s in groups["x:norm_logpdf/stats"].slots}
    assert [(a.param, a.slot, a.position) for a in torch.plan.args] == [("value", slot["x"], 0)]
    init = {a.param: a for a in torch.plan.init_args}
    assert (init["loc"].slot, init["scale"].slot) == (slot["loc"], slot["scale"])
    assert init["validate_args"].slot is None and init["validate_args"].value is True
    # Gamma(concentration, rate): rate is 1/scale, so fixed at 1 (scipy's default scale)
    gamma = members(groups["x:gamma_logpdf/stats"])["torch.distributions.Gamma.log_prob"]
    g_init = {a.param: a for a in gamma.plan.init_args}
    assert g_init["rate"].slot is None and g_init["rate"].value == 1.0
    assert g_init["concentration"].slot == next(
        s.index for s in groups["x:gamma_logpdf/stats"].slots if s.name == "a")
    # discrete: log_prob is logpmf and its variate the slot k; icdf is ppf on q
    binom = members(groups["x:binom_logpmf/stats"])["torch.distributions.Binomial.log_prob"]
    assert {a.param for a in binom.plan.init_args} >= {"total_count", "probs"}
    assert "torch.distributions.Normal.icdf" in members(groups["x:norm_ppf/stats"])
    assert "torch.distributions.Normal.entropy" in members(groups["x:norm_entropy/stats"])
    # counting failures (torch) vs trials (scipy): the mass functions never meet; the entropy,
    # which the shift leaves alone, does
    for key, g in groups.items():
        if key.startswith("x:geom_") and key != "x:geom_entropy/stats":
            assert not any(m.library == "torch" for m in g.members), key
    assert "torch.distributions.Geometric.entropy" in members(groups["x:geom_entropy/stats"])


def test_multivariate_distributions_meet_scipy(groups):
    """Multinomial, Dirichlet, MultivariateNormal, Wishart and Categorical (s11): renamed
    parameters, the variate x of a multivariate mass function, layouts kept apart."""
    mult = groups["x:multinomial_logpmf/stats"]
    assert {"scipy.stats.multinomial.logpmf", "jax.scipy.stats.multinomial.logpmf",
            "torch.distributions.Multinomial.log_prob"} <= set(members(mult))
    slot = {s.name: s.index for s in mult.slots}
    torch = members(mult)["torch.distributions.Multinomial.log_prob"]
    assert [(a.param, a.slot) for a in torch.plan.args] == [("value", slot["x"])]
    init = {a.param: a.slot for a in torch.plan.init_args}
    assert init["total_count"] == slot["n"] and init["probs"] == slot["p"]
    for key, scipy_name, torch_name in [
        ("x:multinomial_entropy/stats", "scipy.stats.multinomial.entropy", "Multinomial.entropy"),
        ("x:dirichlet_entropy/stats", "scipy.stats.dirichlet.entropy", "Dirichlet.entropy"),
        ("x:multivariate_normal_entropy/stats", "scipy.stats.multivariate_normal.entropy",
         "MultivariateNormal.entropy"),
        ("x:multivariate_normal_logpdf/stats", "scipy.stats.multivariate_normal.logpdf",
         "MultivariateNormal.log_prob"),
        ("x:wishart_entropy/stats", "scipy.stats.wishart.entropy", "Wishart.entropy"),
    ]:
        assert {scipy_name, f"torch.distributions.{torch_name}"} <= set(members(groups[key])), key
    # scipy/jax take Dirichlet variates along the first axis, torch along the last
    assert not any(m.library == "torch" for m in groups["x:dirichlet_logpdf/stats"].members)
    # scipy.stats.entropy meets Categorical.entropy along the last axis, without qk or base
    ent = members(groups["x:entropy/stats"])
    assert "torch.distributions.Categorical.entropy" in ent
    plan = ent["scipy.stats.entropy"].plan
    assert {"qk", "base"} <= set(plan.dropped)
    assert [a.value for a in plan.args if a.param == "axis"] == [-1]


def test_distribution_samplers_meet_numpy_jax_and_torch(groups):
    """scipy.stats.<dist>.rvs joins numpy.random's / jax.random's sampler of the same
    distribution (renamed parameters) and torch.distributions' rsample (s11)."""
    for key, expected in [
        ("x:vonmises/random", {"numpy.random.vonmises", "scipy.stats.vonmises.rvs"}),
        ("x:negative_binomial/random", {"numpy.random.negative_binomial", "scipy.stats.nbinom.rvs"}),
        ("x:power/random", {"numpy.random.power", "scipy.stats.powerlaw.rvs"}),
        ("x:loggamma/random", {"jax.random.loggamma", "scipy.stats.loggamma.rvs"}),
        ("x:orthogonal/random", {"jax.random.orthogonal", "scipy.stats.ortho_group.rvs"}),
        ("x:standard_exponential/random", {"numpy.random.standard_exponential",
                                           "jax.random.exponential",
                                           "torch.distributions.Exponential.rsample"}),
        ("x:halfnorm_rvs/random", {"scipy.stats.halfnorm.rvs",
                                   "torch.distributions.HalfNormal.rsample"}),
        ("x:wishart_rvs/random", {"scipy.stats.wishart.rvs", "torch.distributions.Wishart.rsample"}),
    ]:
        g = groups[key]
        assert expected <= set(members(g)) and g.equivalence == "status", key
    # scipy's loc is numpy's mu; numpy's size is scipy's size
    g = groups["x:vonmises/random"]
    slot = {s.name: s.index for s in g.slots}
    plan = members(g)["scipy.stats.vonmises.rvs"].plan
    assert {a.param: a.slot for a in plan.args} == {"loc": slot["mu"], "kappa": slot["kappa"],
                                                     "size": slot["size"]}
    # torch's sample_shape is scipy's size; its scale is scipy's scale
    g = groups["x:halfnorm_rvs/random"]
    slot = {s.name: s.index for s in g.slots}
    torch = members(g)["torch.distributions.HalfNormal.rsample"]
    assert [(a.param, a.slot) for a in torch.plan.args] == [("sample_shape", slot["size"])]
    assert {a.param: a.slot for a in torch.plan.init_args}["scale"] == slot["scale"]
    # numpy's power sampler and the elementwise power stay apart
    assert "numpy.power" not in members(groups["x:power/random"])
    # the gamma sampler at scale 1 is numpy's gamma; scipy's a is numpy's gamma shape `shape`
    gamma = groups["x:gamma/random"]
    assert {"numpy.random.standard_gamma", "scipy.stats.gamma.rvs"} <= set(members(gamma))
    slot = {s.name: s.index for s in gamma.slots}
    assert {a.param: a.slot for a in members(gamma)["scipy.stats.gamma.rvs"].plan.args}["a"] == slot["shape"]


def test_multinomial_seed_gives_counts_of_n_trials(groups):
    """The multinomial groups' seed: integer counts summing to the literal n (jax refuses float
    counts), probabilities summing to one."""
    from xamt.inputs import materialise, seed_inputs

    g = groups["x:multinomial_logpmf/stats"]
    slot = {s.name: s.index for s in g.slots}
    values = materialise(seed_inputs(g)[0])
    x, n, p = values[slot["x"]], values[slot["n"]], values[slot["p"]]
    assert x.dtype.kind == "i" and int(x.sum(-1)) == n and np.isclose(p.sum(-1), 1.0)


def test_scalar_like_pivot_input_taken_as_tensor_is_seeded_as_array(groups):
    # jax's ndtri(p) is the pivot; torch's and scipy's members take p's slot as a tensor
    g = groups["x:ndtri/generic"]
    assert {"jax.scipy.special.ndtri", "torch.special.ndtri", "scipy.special.ndtri"} <= set(members(g))
    assert all(m.plan.complete for m in g.members)
    assert g.slots[0].role == "tensor"


def test_quantile_functions_meet_across_role_names(groups):
    g = groups["x:gumbel_l_ppf/stats"]
    assert {"scipy.stats.gumbel_l.ppf", "jax.scipy.stats.gumbel_l.ppf"} <= set(members(g))


def test_special_functions_are_not_losses_or_samplers(groups):
    for g in groups.values():
        if "scipy.special.huber" in members(g) or "jax.scipy.special.bernoulli" in members(g):
            assert g.category not in ("loss", "random"), g.key
    assert "torch.special.shifted_chebyshev_polynomial_t" in members(groups["x:eval_sh_chebyt/generic"])


def test_pairwise_distances_meet_scipy(groups):
    assert {"torch.cdist", "scipy.spatial.distance.cdist"} <= set(members(groups["x:cdist/distance"]))
    assert {"torch.pdist", "scipy.spatial.distance.pdist"} <= set(members(groups["x:pdist/distance"]))


def test_standard_samplers_meet_their_plain_names(groups):
    """numpy's standard_cauchy / standard_t are jax's cauchy / t; numpy's weibull(a) is the
    standard (scale 1) weibull_min, so jax's scale is fixed and a is its concentration."""
    assert {"numpy.random.standard_cauchy", "jax.random.cauchy"} <= set(members(groups["x:cauchy/random"]))
    assert {"numpy.random.standard_t", "jax.random.t"} <= set(members(groups["x:t/random"]))
    g = groups["x:weibull_min/random"]
    jax_args = {a.param: a for a in members(g)["jax.random.weibull_min"].plan.args}
    slot = {s.name: s.index for s in g.slots}
    assert jax_args["scale"].slot is None and jax_args["scale"].value == 1.0
    assert jax_args["concentration"].slot == slot["a"]
    assert all(grp.equivalence == "status" for grp in (g, groups["x:t/random"]))


def test_deterministic_names_of_a_status_only_category(data):
    """An initializer of zeros/ones/a constant computes a fixed value: value-compared."""
    assert "init" in data.status_only_categories
    assert {"zeros", "ones", "constant"} <= data.deterministic_names["init"]
    assert "normal" not in data.deterministic_names["init"]


def test_a_deterministic_name_makes_its_status_only_group_value_compared(catalogs, data):
    import dataclasses

    from xamt.matching.engine import match

    marked = dataclasses.replace(data, deterministic_names={"random": frozenset({"cauchy"})})
    got = {g.key: g for g in match(catalogs, marked).groups}
    assert got["x:cauchy/random"].equivalence == "value"
    assert got["x:t/random"].equivalence == "status"
def _fixed(member):
    return {a.param: a.value for a in member.plan.args if a.slot is None}


def test_a_fixed_argument_applies_only_in_its_group(groups):
    """torch.dist is the Minkowski distance (p a slot) and, with p fixed, the city-block and
    Chebyshev distances; numpy.linalg.norm keeps its ord slot in the norm group and is the
    nuclear norm with ord='nuc' fixed (argument_plans.toml entries scoped by `canonicals`)."""
    mink = members(groups["x:minkowski/distance"])
    assert {"torch.dist", "scipy.spatial.distance.minkowski"} <= set(mink)
    assert "p" not in _fixed(mink["torch.dist"])
    assert any(a.param == "p" and a.slot is not None for a in mink["torch.dist"].plan.args)
    assert _fixed(members(groups["x:cityblock/distance"])["torch.dist"])["p"] == 1
    assert _fixed(members(groups["x:chebyshev/distance"])["torch.Tensor.dist"])["p"] == float("inf")
    nuc = members(groups["x:nuclear_norm/linalg"])
    assert {"torch.nuclear_norm", "numpy.linalg.norm", "jax.numpy.linalg.norm"} <= set(nuc)
    assert _fixed(nuc["numpy.linalg.norm"]) == {"ord": "nuc", "axis": [-2, -1]}
    axis = next(a for a in nuc["numpy.linalg.norm"].plan.args if a.param == "axis")
    assert axis.transform == "tuple"  # numpy takes the axes only as a tuple
    assert "ord" not in _fixed(members(groups["x:norm/linalg"])["numpy.linalg.norm"])
    assert _fixed(members(groups["x:pinvh/linalg"])["numpy.linalg.pinv"]) == {"hermitian": True}
    # the general pinv group keeps hermitian False (a promise about the input fuzzing does not keep)
    assert _fixed(members(groups["x:pinv/linalg"])["numpy.linalg.pinv"]) == {"hermitian": False}


def test_special_functions_meet_through_a_fixed_order_or_an_output(groups):
    j0 = members(groups["x:spherical_bessel_j0/generic"])
    assert _fixed(j0["scipy.special.spherical_jn"]) == {"n": 0, "derivative": False}
    assert "torch.special.spherical_bessel_j0" in j0
    airy = groups["x:airy_ai/generic"]
    assert {"scipy.special.airy", "torch.special.airy_ai"} <= set(members(airy))
    assert {"scipy.special.bernoulli", "jax.scipy.special.bernoulli"} <= set(
        members(groups["x:bernoulli_numbers/generic"]))
    assert {"torch.ormqr", "jax.lax.linalg.ormqr"} <= set(members(groups["x:ormqr/generic"]))


def test_torch_init_fillers_meet_jax_initializers(groups):
    """torch.nn.init's fillers are called from a shape; kaiming_uniform_/xavier_uniform_ meet
    jax's he_uniform/glorot_uniform with torch's fan axes (in_axis=1, out_axis=0: an override
    scoped to the group's canonical name, so jax's he_uniform keeps its axes elsewhere)."""
    g = groups["x:kaiming_uniform/init"]
    ms = members(g)
    assert ms["torch.nn.init.kaiming_uniform_"].call == "fill"
    assert ms["torch.nn.init.kaiming_uniform_"].via == "xamt.libraries.torch:call_filling"
    jax_args = {a.param: a for a in ms["jax.nn.initializers.he_uniform"].plan.init_args}
    assert (jax_args["in_axis"].slot, jax_args["in_axis"].value) == (None, 1)
    assert (jax_args["out_axis"].slot, jax_args["out_axis"].value) == (None, 0)
    assert "x:xavier_uniform/init" in groups
    # untruncated torch normals are not jax's truncated he_normal/glorot_normal
    assert "x:kaiming_normal/init" not in groups and "x:xavier_normal/init" not in groups
    assert members(groups["x:zeros/init"])["torch.nn.init.zeros_"].call == "fill"


def test_an_override_scoped_to_a_canonical_applies_in_its_group_only(data):
    scoped = data.overrides_for("jax.nn.initializers.he_uniform", "kaiming_uniform")
    assert any("kaiming_uniform" in o.canonicals for o in scoped)
    assert not any(o.canonical for o in data.overrides_for("jax.nn.initializers.he_uniform"))
    assert not any(o.canonical for o in data.overrides_for("jax.nn.initializers.he_uniform",
                                                           "he_uniform"))


def test_bernoulli_probabilities_meet_jax_p(groups):
    """torch.bernoulli(input): input holds the probabilities, jax.random.bernoulli's p."""
    g = groups["x:bernoulli/random"]
    slot = {s.name: s.index for s in g.slots}
    torch_args = {a.param: a for a in members(g)["torch.bernoulli"].plan.args}
    assert torch_args["input"].slot == slot["p"]
    assert "jax.random.bernoulli" in members(g)


def test_trunc_normal_filler_is_the_truncated_standard_normal_sampler(groups):
    """torch.nn.init.trunc_normal_ (absolute bounds, mean 0, std 1 fixed) meets
    jax.random.truncated_normal(key, lower, upper), not the initializers truncating in stddevs."""
    g = groups["x:parameterized_truncated_normal/random"]
    args = {a.param: a for a in members(g)["torch.nn.init.trunc_normal_"].plan.args}
    slot = {s.name: s.index for s in g.slots}
    assert (args["a"].slot, args["b"].slot) == (slot["lower"], slot["upper"])
    assert (args["mean"].value, args["std"].value) == (0.0, 1.0)
    assert "jax.random.truncated_normal" in members(g)
    assert all("torch.nn.init.trunc_normal_" not in members(x) for k, x in groups.items()
               if k.startswith("x:truncated_normal/init"))
