import numpy as np
import pytest

from xamt.errors import DataFileError
from xamt.exec.normalise import (NotComparable, check_name, load_normalisation_rules, normalise,
                                   to_numpy_tree)


def test_to_numpy_tree_scalars_tuples_dtypes():
    tree = to_numpy_tree((1, 2.5, True, np.float32(3), [np.arange(3)], None, "x", np.dtype("int8")))
    assert isinstance(tree, tuple) and len(tree) == 8
    assert tree[0].shape == () and tree[0].dtype.kind == "i"
    assert tree[2].dtype == bool
    assert isinstance(tree[4], tuple) and tree[4][0].tolist() == [0, 1, 2]
    assert tree[5] is None and tree[6] == "x" and tree[7] == "int8"
    assert to_numpy_tree({"b": 1, "a": 2})[0] == 2  # dicts: values by sorted key
    with pytest.raises(NotComparable):
        to_numpy_tree(object())
    with pytest.raises(NotComparable):
        to_numpy_tree(np.array([object()]))


def test_named_normalisers():
    vals, idx = np.array([3.0, 1.0]), np.array([0, 1])
    assert normalise((vals, idx), "first") is vals
    assert normalise(vals, "first") is vals  # not a tuple: unchanged
    assert normalise((vals, idx), "second") is idx  # fresnel's (S, C) -> C
    assert normalise(vals, "second") is vals and normalise((vals,), "second") == (vals,)
    u, s, vh = np.ones((3, 3)), np.array([3.0, 1.0, 2.0]), np.ones((3, 3))
    assert normalise((u, s, vh), "min_ndim") is s
    assert normalise((u, s, vh), "min_ndim|sort").tolist() == [1.0, 2.0, 3.0]
    ev = np.array([2 + 1j, 1 - 1j, 1 + 1j])
    assert normalise(ev, "sort").tolist() == [1 - 1j, 1 + 1j, 2 + 1j]
    rows, cols = np.array([0, 1]), np.array([2, 3])
    assert normalise((rows, cols), "nonzero").tolist() == [[0, 2], [1, 3]]
    assert normalise((rows, cols), "stack").tolist() == [[0, 1], [2, 3]]
    assert normalise((np.array([1.0]), np.array([2.0])), "complex_pair").tolist() == [1 + 2j]
    assert normalise(np.array([1.0, 3.0]), "mean").item() == 2.0
    assert normalise(np.array([1], dtype=np.int32), "int64").dtype == np.int64
    assert normalise(np.array([[[1.0]]]), "squeeze").shape == ()


def test_rules_and_errors(tmp_path):
    rules = load_normalisation_rules()
    assert rules.for_group("topk", "generic", [])[0] == "first"
    assert rules.for_group("svd", "linalg", [])[0] == "min_ndim"
    assert rules.for_group("cross_entropy", "loss", [])[0] == "mean"
    assert rules.for_group("sin", "generic", [])[0] == "none"
    assert rules.for_group("fresnel_cos", "generic", [])[0] == "second"
    assert rules.for_group("airy_ai", "generic", [])[0] == "first"
    with pytest.raises(DataFileError):
        check_name("first|banana")
    bad = tmp_path / "n.toml"
    bad.write_text('[[rule]]\ncanonical = "x"\nnormalise = "first"\n')
    with pytest.raises(DataFileError, match="why"):
        load_normalisation_rules(bad)


def test_library_dtype_objects_are_named_by_their_adapter():
    torch = pytest.importorskip("torch")
    from xamt.libraries import torch as torch_adapter

    assert to_numpy_tree((torch.float32, torch.tensor([1])), torch_adapter.to_numpy)[0] == "float32"
    assert to_numpy_tree(torch.bfloat16, torch_adapter.to_numpy) == "bfloat16"


def test_tensorflow_dtypes_are_named_by_their_adapter():
    tf = pytest.importorskip("tensorflow")
    from xamt.libraries import tensorflow as tf_adapter

    assert to_numpy_tree([tf.int64, tf.constant([1.0])], tf_adapter.to_numpy)[0] == "int64"
