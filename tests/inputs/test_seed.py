import numpy as np
import pytest

from tests.groups.helpers import group, member, unary
from xamt.errors import DataFileError
from xamt.inputs import load_input_rules, materialise, seed_inputs, seed_plan, variant_inputs
from xamt.inputs.rules import InputRules


def _sum_group():
    np_sum = member("numpy", "numpy.sum", "numpy:sum",
                    [(0, "a", 0, "a", True), (1, "axis", None, "axis", False), (2, "keepdims", None, "keepdims", False)])
    t_sum = member("torch", "torch.sum", "torch:sum",
                   [(0, "input", 0, "input", True), (1, "dim", 1, "dim", True), (2, "keepdim", None, "keepdim", False)])
    return group("x:sum/reduction", [np_sum, t_sum],
                 [(0, "a", "tensor"), (1, "axis", "axis"), (2, "keepdims", "keepdim")], category="reduction")


def test_needed_and_optional_slots():
    plan = seed_plan(_sum_group())
    assert plan.needed == [0, 1]          # torch.sum requires dim
    assert plan.optional == [2]           # keepdims: accepted by every member
    inputs = variant_inputs(_sum_group())
    names = [i.variant for i in inputs]
    assert names[:2] == ["base", "wide"]
    base, wide = inputs[0], inputs[1]
    assert set(base.values) == {0, 1} and set(wide.values) == {0, 1, 2}
    assert base[1].value == 1 and wide[2].value is True
    alt = [i for i in inputs if i.variant == "alt1"][0]
    assert alt[1].value == [1]            # the axis as a tuple


def test_axis_is_kept_within_the_rank():
    vector = [i for i in variant_inputs(_sum_group()) if i.variant == "vector"][0]
    assert vector[0].recipe.shape == (6,) and vector[1].value == 0


def test_domain_rules_from_data():
    log = unary("x:log/generic", [("numpy", "numpy.log", "numpy:log"), ("torch", "torch.log", "torch:log")])
    values = materialise(seed_inputs(log)[0])
    assert values[0].min() >= 0.5 and values[0].dtype == np.float32
    chol = unary("x:cholesky/linalg", [("numpy", "numpy.linalg.cholesky", "numpy.linalg:cholesky"),
                                       ("torch", "torch.linalg.cholesky", "torch.linalg:cholesky")],
                 category="linalg")
    m = materialise(seed_inputs(chol)[0])[0]
    assert m.shape == (4, 4)
    np.linalg.cholesky(m.astype(np.float64))


def test_binary_tensors_share_a_shape_but_not_values():
    add = group("x:add/generic", [member("numpy", "numpy.add", "numpy:add", [(0, "x", 0, None, True), (1, "y", 1, None, True)]),
                                  member("torch", "torch.add", "torch:add", [(0, "input", 0, None, True), (1, "other", 1, None, True)])],
                [(0, "x1", "tensor"), (1, "x2", "tensor")])
    v = materialise(seed_inputs(add)[0])
    assert v[0].shape == v[1].shape and not np.array_equal(v[0], v[1])


def test_index_tensor_is_valid_for_its_tensor():
    take = group("x:take/generic", [member("numpy", "numpy.take", "numpy:take", [(0, "a", 0, "a", True), (1, "indices", 1, "indices", True)])],
                 [(0, "a", "tensor"), (1, "indices", "index")])
    v = materialise(seed_inputs(take)[0])
    assert v[1].dtype == np.int64 and v[1].max() < min(v[0].shape)


def test_callable_slot_is_unsupported():
    g = group("x:apply/generic", [member("numpy", "numpy.apply_along_axis", "numpy:apply_along_axis",
                                         [(0, "func1d", 0, None, True), (1, "arr", 1, None, True)])],
              [(0, "func1d", "callable"), (1, "arr", "tensor")])
    plan = seed_plan(g)
    assert plan.unsupported == [0] and not plan.callable


def test_registered_groups_return_their_recorded_seeds():
    class Registered:
        seeds = [variant_inputs(_sum_group())[1].to_json()]

    assert seed_inputs(Registered())[0].variant == "wide"


def test_bad_rules_are_data_errors(tmp_path):
    path = tmp_path / "inputs.toml"
    path.write_text('[roles.tensor]\nkind = "tensorish"\n')
    with pytest.raises(DataFileError, match="kind"):
        load_input_rules(path)
    path.write_text('[[rule]]\ncanonical = "("\n')
    with pytest.raises(DataFileError, match="regular expression"):
        load_input_rules(path)
    path.write_text('[names]\nx = { structure = "nonsense" }\n')
    with pytest.raises(DataFileError, match="structure"):
        load_input_rules(path)


def test_packaged_rules_load():
    rules = load_input_rules()
    assert isinstance(rules, InputRules) and rules.roles["tensor"]["kind"] == "array"


def _seed(g):
    return materialise(seed_inputs(g)[0])


def test_nn_rules_give_the_documented_layouts():
    """Convolution and pooling take (N, C, H, W) images; a (3, 4) matrix made every member of
    eighteen libraries refuse them. The rules are scoped by canonical name and category."""
    conv = group("x:conv2d/nn", [member("torch", "torch.conv2d", "torch:conv2d",
                                        [(0, "input", 0, "input", True), (1, "weight", 1, "weight", True),
                                         (2, "bias", 2, "bias", False)])],
                 [(0, "input", "tensor"), (1, "weight", "tensor"), (2, "bias", "tensor")], category="nn")
    values = _seed(conv)
    x, w = values[0], values[1]
    assert x.shape == (2, 3, 6, 7) and w.shape == (4, 3, 2, 2) and w.shape[1] == x.shape[1]
    pool = group("x:adaptive_avg_pool2d/nn",
                 [member("torch", "torch.nn.functional.adaptive_avg_pool2d", "torch.nn.functional:adaptive_avg_pool2d",
                         [(0, "input", 0, "input", True), (1, "output_size", 1, "output_size", True)])],
                 [(0, "input", "tensor"), (1, "output_size", "shape")], category="nn")
    seed = seed_inputs(pool)[0]
    assert materialise(seed)[0].shape == (2, 3, 6, 7) and list(seed[1].value) == [3, 4]
    # the same name in another category keeps the default (3, 4) matrix
    other = group("x:conv2d/generic", conv.members, [(0, "input", "tensor"), (1, "weight", "tensor")])
    assert _seed(other)[0].shape == (3, 4)


def test_nd_indices_point_inside_their_params():
    g = group("x:gather_nd/generic", [member("tensorflow", "tensorflow.gather_nd", "tensorflow:gather_nd",
                                             [(0, "params", 0, "params", True), (1, "indices", 1, "indices", True)])],
              [(0, "params", "param:params"), (1, "indices", "index")])
    values = _seed(g)
    params, indices = values[0], values[1]
    assert indices.dtype == np.int64 and indices.shape == (2, 2)
    assert (indices >= 0).all() and (indices < np.array(params.shape)).all()
