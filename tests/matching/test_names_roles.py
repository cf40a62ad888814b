import pytest

from xamt.catalog import Param
from xamt.matching.categories import infer_category, partition
from xamt.matching.names import canonical_name, snake
from xamt.matching.roles import inputs_of, role_of, type_of


@pytest.mark.parametrize("raw,expected", [
    ("LeakyReLU", "leaky_re_lu"), ("Conv2D", "conv2d"), ("reduce-sum", "reduce_sum"),
    ("BatchNorm2d", "batch_norm2d"), ("MSELoss", "mse_loss"),
])
def test_snake(raw, expected):
    assert snake(raw) == expected


@pytest.mark.parametrize("raw,lib,expected", [
    ("reduce_sum", None, "sum"), ("absolute", None, "abs"), ("amax", None, "max"),
    ("clip_by_value", None, "clip"), ("LeakyReLU", None, "leaky_relu"), ("matrix_inverse", None, "inv"),
    ("expit", None, "sigmoid"), ("conv2d_transpose", None, "conv_transpose2d"),
    ("gather", "torch", "take_along_axis"), ("gather", "tensorflow", "take"),
    ("lgamma", None, "lgamma"), ("gammaln", None, "lgamma"), ("reduce_variance", None, "var"),
    ("MeanSquaredError", None, "mse_loss"), ("fft2d", None, "fft2"),
])
def test_canonical_names(raw, lib, expected, data):
    assert canonical_name(raw, data, lib).name == expected


def test_lossy_aliases_are_flagged(data):
    assert canonical_name("unbind", data).lossy
    assert not canonical_name("top_k", data).lossy
    # in_top_k (membership booleans) is no lossy top_k any more: a group of its own
    assert canonical_name("in_top_k", data).name == "in_top_k"


@pytest.mark.parametrize("name,role", [
    ("dim", "axis"), ("axis", "axis"), ("keepdim", "keepdim"), ("keep_dims", "keepdim"),
    ("input_tensor", "tensor"), ("x1", "tensor"), ("ddof", "correction"), ("out", None),
    ("name", None), ("reduction_axes", "axis"), ("new_shape", "shape"), ("y_true", "target"),
    ("frobnicate", "param:frobnicate"), ("out_dtype", "dtype"),
])
def test_roles(name, role, data):
    assert role_of(name, data) == role


def test_types_from_defaults_and_annotations(data):
    assert type_of(Param("k", "positional_or_keyword", "False", False), data) == "bool"
    assert type_of(Param("axes", "positional_or_keyword", None, True, "Sequence[int]"), data) == "sequence"
    assert type_of(Param("x", "positional_or_keyword", None, True, "ArrayLike"), data) == "tensor"


def test_inputs_drop_control_and_put_receiver_first(data):
    params = [Param("dim", "positional_or_keyword", "None", False),
              Param("out", "keyword_only", "None", False),
              Param("kwargs", "var_keyword", None, False)]
    inputs = inputs_of(params, data, receiver=True)
    assert [(i.name, i.role, i.position) for i in inputs] == [("self", "tensor", 0), ("dim", "axis", 1)]
    star = inputs_of([Param("xi", "var_positional", None, False)], data)
    assert star[0].role == "tensors" and star[0].kind == "var_positional"


@pytest.mark.parametrize("canonical,namespace,category", [
    ("fft", "tensorflow.signal", "fft"), ("conv2d", "torch.nn.functional", "nn"),
    ("mse_loss", "keras.losses", "loss"), ("normal", "numpy.random", "random"),
    ("sum", "numpy", "reduction"), ("inv", "numpy.linalg", "linalg"), ("abs", "numpy", "generic"),
    ("norm_pdf", "scipy.stats.norm", "stats"), ("set_printoptions", "torch", "runtime"),
])
def test_categories(canonical, namespace, category, data):
    assert infer_category(canonical, namespace, data) == category


def test_soft_categories_share_a_partition(data):
    assert partition("linalg", data) == partition("generic", data) == "core"
    assert partition("random", data) == "random"
