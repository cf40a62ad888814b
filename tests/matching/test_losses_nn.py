"""Losses, metrics and nn functions across torch / TF / keras / jax (aliases, roles, plans, seeds).

TF and keras are slow to mine, so their APIs are given as small hand-written records (the
signatures of TF 2 / keras 3); torch and jax come from the session's mined catalogs.
"""
import numpy as np
import pytest

from xamt.catalog import ApiRecord, LibraryCatalog, Param
from xamt.inputs import materialise, seed_inputs
from xamt.matching.categories import infer_category
from xamt.matching.engine import match
from xamt.matching.names import canonical_name
from xamt.matching.roles import inputs_of


def _rec(lib: str, qualname: str, params: list[tuple[str, str | None]]) -> ApiRecord:
    """A function record; a param given as (name, None) is required, else (name, default)."""
    ns, _, name = qualname.rpartition(".")
    ps = [Param(n, "positional_or_keyword", d, d is None) for n, d in params]
    return ApiRecord(library=lib, qualname=qualname, name=name, namespace=ns, kind="function",
                     target=f"{ns}:{name}", params=ps, signature_source="inspect")


TF = [
    _rec("tensorflow", "tensorflow.nn.softmax_cross_entropy_with_logits",
         [("labels", None), ("logits", None), ("axis", "-1")]),
    _rec("tensorflow", "tensorflow.nn.sparse_softmax_cross_entropy_with_logits",
         [("labels", None), ("logits", None)]),
    _rec("tensorflow", "tensorflow.nn.log_poisson_loss",
         [("targets", None), ("log_input", None), ("compute_full_loss", "False")]),
    _rec("tensorflow", "tensorflow.nn.embedding_lookup",
         [("params", None), ("ids", None), ("max_norm", "None")]),
    _rec("tensorflow", "tensorflow.identity", [("input", None)]),
    _rec("tensorflow", "tensorflow.math.in_top_k", [("targets", None), ("predictions", None), ("k", None)]),
    _rec("tensorflow", "tensorflow.signal.frame",
         [("signal", None), ("frame_length", None), ("frame_step", None), ("pad_end", "False"),
          ("pad_value", "0"), ("axis", "-1")]),
    _rec("tensorflow", "tensorflow.image.crop_to_bounding_box",
         [("image", None), ("offset_height", None), ("offset_width", None),
          ("target_height", None), ("target_width", None)]),
    _rec("tensorflow", "tensorflow.nn.depthwise_conv2d",
         [("input", None), ("filter", None), ("strides", None), ("padding", None),
          ("data_format", "None"), ("dilations", "None")]),
]
KERAS = [
    _rec("keras", "keras.losses.sparse_categorical_crossentropy",
         [("y_true", None), ("y_pred", None), ("from_logits", "False"), ("ignore_class", "None"),
          ("axis", "-1")]),
    _rec("keras", "keras.losses.categorical_crossentropy",
         [("y_true", None), ("y_pred", None), ("from_logits", "False"), ("label_smoothing", "0.0"),
          ("axis", "-1")]),
    _rec("keras", "keras.metrics.sparse_top_k_categorical_accuracy",
         [("y_true", None), ("y_pred", None), ("k", "5"), ("from_sorted_ids", "False")]),
    _rec("keras", "keras.ops.in_top_k", [("targets", None), ("predictions", None), ("k", None)]),
    _rec("keras", "keras.activations.linear", [("x", None)]),
    _rec("keras", "keras.ops.extract_sequences",
         [("x", None), ("sequence_length", None), ("sequence_stride", None)]),
    _rec("keras", "keras.ops.image.crop_images",
         [("images", None), ("top_cropping", "None"), ("left_cropping", "None"),
          ("bottom_cropping", "None"), ("right_cropping", "None"), ("target_height", "None"),
          ("target_width", "None"), ("data_format", "None")]),
    _rec("keras", "keras.ops.depthwise_conv",
         [("inputs", None), ("kernel", None), ("strides", "1"), ("padding", "'valid'"),
          ("data_format", "None"), ("dilation_rate", "1")]),
]


@pytest.fixture(scope="module")
def nn_groups(catalogs, data):
    cats = {"torch": catalogs["torch"], "jax": catalogs["jax"], "numpy": catalogs["numpy"],
            "tensorflow": LibraryCatalog("tensorflow", "test", TF),
            "keras": LibraryCatalog("keras", "test", KERAS)}
    return {g.key: g for g in match(cats, data).groups if g.relation == "cross_library"}


def _args(group, qualname):
    m = next(m for m in group.members if m.qualname == qualname)
    return {a.param: a for a in m.plan.args}


def test_canonical_names_and_categories(data):
    def canon(name, lib, ns):
        return canonical_name(name, data, lib, ns).name

    assert canon("softmax_cross_entropy_with_logits", "tensorflow", "tensorflow.nn") == "categorical_cross_entropy"
    assert canon("sparse_softmax_cross_entropy_with_logits", "tensorflow", "tensorflow.nn") == "sparse_categorical_cross_entropy"
    # torch's cross_entropy only: the alias is torch's
    assert canon("cross_entropy", "torch", "torch.nn.functional") == "categorical_cross_entropy"
    assert canon("cross_entropy", "jax", "jax.nn") == "cross_entropy"
    assert canon("extract_sequences", "keras", "keras.ops") == "frame"
    assert canon("embedding_lookup", "tensorflow", "tensorflow.nn") == "embedding"
    assert canon("crop_to_bounding_box", "tensorflow", "tensorflow.image") == "crop_images"
    assert canon("pad_to_bounding_box", "tensorflow", "tensorflow.image") == "pad_images"
    assert canon("average_pool", "keras", "keras.ops") == "avg_pool"
    # in_top_k is membership, not top_k's values: its own name, a metric with keras' accuracy
    assert canon("in_top_k", "tensorflow", "tensorflow.math") == "in_top_k"
    assert canon("sparse_top_k_categorical_accuracy", "keras", "keras.metrics") == "in_top_k"
    assert infer_category("in_top_k", "keras.ops", data) == "metric"
    assert infer_category("categorical_cross_entropy", "torch.nn.functional", data) == "loss"


def test_category_scoped_roles(data):
    """Frame length/step are a window's size/stride in signal APIs; a convolution's filter is a
    tensor in nn; crop/pad offsets are where a box starts in image APIs."""
    frame = inputs_of([Param("x", "positional_or_keyword"), Param("sequence_length", "positional_or_keyword"),
                       Param("sequence_stride", "positional_or_keyword")], data, category="signal")
    assert [i.role for i in frame] == ["tensor", "kernel", "stride"]
    conv = inputs_of([Param("input", "positional_or_keyword"), Param("filters", "positional_or_keyword")],
                     data, category="nn")
    assert [i.role for i in conv] == ["tensor", "tensor"]
    # elsewhere `kernel` stays a kernel size
    assert inputs_of([Param("kernel", "positional_or_keyword")], data, category="generic")[0].role == "kernel"
    crop = inputs_of([Param("offset_height", "positional_or_keyword"),
                      Param("top_cropping", "positional_or_keyword")], data, category="image")
    assert [i.role for i in crop] == ["start", "start"]


def test_cross_entropy_groups_take_logits_everywhere(nn_groups):
    sparse = nn_groups["x:sparse_categorical_cross_entropy/loss"]
    dense = nn_groups["x:categorical_cross_entropy/loss"]
    assert sparse.pivot == dense.pivot == "torch.nn.functional.cross_entropy"
    assert {m.qualname for m in sparse.members} >= {
        "tensorflow.nn.sparse_softmax_cross_entropy_with_logits",
        "keras.losses.sparse_categorical_crossentropy"}
    assert {m.qualname for m in dense.members} >= {
        "tensorflow.nn.softmax_cross_entropy_with_logits", "keras.losses.categorical_crossentropy"}
    keras = _args(sparse, "keras.losses.sparse_categorical_crossentropy")
    assert keras["from_logits"].slot is None and keras["from_logits"].value is True
    assert (keras["y_pred"].slot, keras["y_true"].slot) == (0, 1)
    assert "ignore_class" not in keras  # not torch's ignore_index (another reduction)
    tf = _args(sparse, "tensorflow.nn.sparse_softmax_cross_entropy_with_logits")
    assert (tf["logits"].slot, tf["labels"].slot) == (0, 1)
    # sparse targets are class indices valid for the logits' rows; dense ones probabilities
    logits, labels = (materialise(seed_inputs(sparse)[0])[i] for i in (0, 1))
    assert labels.dtype.kind == "i" and labels.shape == logits.shape[:1]
    assert labels.min() >= 0 and labels.max() < logits.shape[-1]
    target = materialise(seed_inputs(dense)[0])[1]
    assert target.dtype.kind == "f" and np.allclose(target.sum(-1), 1.0)


def test_log_poisson_loss_log_input_is_the_tensor(nn_groups):
    g = nn_groups["x:poisson_nll_loss/loss"]
    tf = _args(g, "tensorflow.nn.log_poisson_loss")
    slots = {s.index: s.name for s in g.slots}
    assert slots[tf["log_input"].slot] == "input" and slots[tf["targets"].slot] == "target"
    assert slots[tf["compute_full_loss"].slot] == "full"


def test_in_top_k_and_identity_and_embedding(nn_groups):
    top = nn_groups["x:in_top_k/metric"]
    assert {m.qualname for m in top.members} == {"tensorflow.math.in_top_k", "keras.ops.in_top_k",
                                                 "keras.metrics.sparse_top_k_categorical_accuracy"}
    targets, predictions = (materialise(seed_inputs(top)[0])[i] for i in (0, 1))
    assert targets.dtype.kind == "i" and targets.max() < predictions.shape[-1]
    ident = nn_groups["x:identity_function/nn"]
    assert {m.qualname for m in ident.members} == {"jax.nn.identity", "tensorflow.identity",
                                                   "keras.activations.linear"}
    # the identity *matrix* group keeps numpy.identity without the pass-throughs
    assert not any("jax.nn.identity" in {m.qualname for m in g.members}
                   for k, g in nn_groups.items() if g.canonical == "identity")
    emb = nn_groups["x:embedding/nn"]
    assert emb.pivot == "torch.nn.functional.embedding"
    tf = _args(emb, "tensorflow.nn.embedding_lookup")
    torch_fn = _args(emb, "torch.embedding")
    assert (tf["ids"].slot, tf["params"].slot) == (0, 1) == (torch_fn["indices"].slot, torch_fn["weight"].slot)
    ids, table = (materialise(seed_inputs(emb)[0])[i] for i in (0, 1))
    assert ids.dtype.kind == "i" and ids.max() < table.shape[0]


def test_frame_crop_and_depthwise_plans(nn_groups):
    frame = nn_groups["x:frame/signal"]
    keras = _args(frame, "keras.ops.extract_sequences")
    assert (keras["sequence_length"].slot, keras["sequence_stride"].slot) == (1, 2)
    crop = nn_groups["x:crop_images/image"]
    keras = _args(crop, "keras.ops.image.crop_images")
    assert [keras[p].slot for p in ("top_cropping", "left_cropping", "target_height", "target_width")] == [1, 2, 3, 4]
    image = materialise(seed_inputs(crop)[0])[0]
    assert image.ndim == 4
    conv = nn_groups["x:depthwise_conv/nn"]
    tf = _args(conv, "tensorflow.nn.depthwise_conv2d")
    assert tf["padding"].value == "VALID" and tf["strides"].value == [1, 1, 1, 1]
    assert _args(conv, "keras.ops.depthwise_conv")["kernel"].slot == tf["filter"].slot == 1
    # TF's padding spelling is no shared slot the fuzzer would feed
    assert not any(s.required for s in conv.slots if s.role == "padding")
