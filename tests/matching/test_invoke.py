"""Executing members through their argument plans gives the same values across libraries."""
import numpy as np
import pytest

from xamt.exec.member import call_member

X = np.array([[1, -2, 3], [4, 0.5, -6]], np.float32)


def run(group, values, libs=("numpy", "torch", "jax", "scipy")):
    out = {}
    for m in group.members:
        if m.library in libs:
            out[m.qualname] = np.asarray(call_member(m.to_json(), values))
    return out


@pytest.mark.parametrize("key,values", [
    ("x:sum/reduction", {0: X, 1: 1}),
    ("x:clip/generic", {0: X, 1: -1.0, 2: 2.0}),
    ("x:std/reduction", {0: X, 1: 1}),
    ("x:abs/generic", {0: X}),
    ("x:norm_pdf/stats", {0: X, 1: 0.5, 2: 2.0}),
])
def test_cross_library_members_agree(groups, key, values):
    g = groups[key]
    given = {k: v for k, v in values.items() if g.slots[k].shared or g.slots[k].required
             or k == 0}
    outs = run(g, given)
    ref = next(iter(outs.values()))
    assert len(outs) >= 2
    for name, out in outs.items():
        if out.shape != ref.shape:  # members that do not take every given slot are skipped
            continue
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("key", [
    "function_method:torch.abs|torch.Tensor.abs",
    "inplace:torch.Tensor.abs|torch.Tensor.abs_",
    "out_variant:torch.abs",
    "out_variant:numpy.add",
    "functional_module:torch.nn.functional.relu|torch.nn.ReLU",
    "eager_compiled:jax.numpy.sum",
])
def test_intra_library_members_agree(groups, key):
    g = groups[key]
    values = {s.index: X for s in g.slots if s.role in ("tensor",) and (s.required or s.shared)}
    # both members may share a qualified name (eager vs compiled): keep them apart
    outs = [np.asarray(call_member(m.to_json(), values)) for m in g.members]
    assert len(outs) == 2
    np.testing.assert_allclose(outs[0], outs[1])


def test_distribution_method_is_constructed_then_called(groups):
    """The constructed call style through the sandbox-free path: Normal(loc, scale) built from
    the group's slots, log_prob called on the variate, equal to scipy's norm.logpdf."""
    g = groups["x:norm_logpdf/stats"]
    slot = {s.name: s.index for s in g.slots}
    x = np.array([[0.5, 1.0], [1.5, 2.0]], np.float32)
    values = {slot["x"]: x, slot["loc"]: 1.0, slot["scale"]: 0.5}
    outs = run(g, values)
    assert "torch.distributions.Normal.log_prob" in outs
    for name, out in outs.items():
        np.testing.assert_allclose(out, outs["scipy.stats.norm.logpdf"], rtol=1e-5, err_msg=name)
    # an array parameter becomes a tensor (tensor_if_array), a number stays a number
    values[slot["scale"]] = np.array([0.5, 2.0], np.float32)
    outs = run(g, values)
    np.testing.assert_allclose(outs["torch.distributions.Normal.log_prob"],
                               outs["scipy.stats.norm.logpdf"], rtol=1e-5)


@pytest.mark.parametrize("key", [
    "x:multinomial_logpmf/stats", "x:multinomial_entropy/stats", "x:dirichlet_entropy/stats",
    "x:multivariate_normal_entropy/stats", "x:wishart_entropy/stats", "x:geom_entropy/stats",
    "x:entropy/stats",
])
def test_multivariate_distribution_members_agree_on_their_seed(groups, key):
    """The s11 distribution groups: every member, called on the group's seed (the wide
    variant: every slot a member may take), computes scipy's value."""
    from xamt.inputs import materialise, variant_inputs

    g = groups[key]
    seeds = {inp.variant: inp for inp in variant_inputs(g)}
    values = materialise(seeds.get("wide", seeds["base"]))
    outs = run(g, values)
    assert len({name.split(".")[0] for name in outs}) >= 2
    ref = next(v for k, v in outs.items() if k.startswith("scipy."))
    for name, out in outs.items():
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5, err_msg=name)


def test_validate_args_makes_out_of_support_a_status():
    """validate_args=True (fixed by distributions.toml): a variate outside the support raises
    instead of computing on an undefined domain."""
    pytest.importorskip("torch")
    from xamt.libraries.invoke import call_constructed

    with pytest.raises(ValueError):
        call_constructed("torch.distributions:Exponential.log_prob",
                         {"rate": 1.0, "validate_args": True}, __import__("torch").tensor([-1.0]))


def test_prng_key_transform_makes_the_library_key():
    """A jax.random sampler called with the fixed canonical seed as its key."""
    pytest.importorskip("jax")
    from xamt.exec.member import Hooks, PreparedMember, hook_refs
    from xamt.libraries.registry import Registry
    from xamt.matching.model import ArgSpec, ArgumentPlan, Member

    m = Member(library="jax", qualname="jax.random.normal", target="jax.random:normal",
               kind="function", call="function",
               plan=ArgumentPlan(args=[ArgSpec(slot=None, param="key", position=0, keyword="key",
                                               transform="prng_key", value=0, required=True),
                                       ArgSpec(slot=0, param="shape", keyword="shape")]))
    prep = PreparedMember(m, Hooks.resolve(hook_refs(m, Registry().get("jax"))))
    key = np.asarray(prep.member.plan.args[0].value)
    assert key.shape == (2,) and key.dtype == np.uint32
    assert m.plan.args[0].value == 0, "the member itself keeps its seed"
    # numpy has no PRNG keys: its adapter names no key hook, so a numpy member is not given one
    assert "prng_key" not in hook_refs(m, Registry().get("numpy"))
    out = call_member(m.to_json(), {0: (3, 4)})
    assert out.shape == (3, 4)
