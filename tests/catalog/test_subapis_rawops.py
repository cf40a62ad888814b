"""Mining of tf.raw_ops (keyword-only, filtered by origin and name patterns) and of ufunc
methods as APIs of their own (numpy.add.reduce)."""
import dataclasses

import pytest

from xamt.catalog import mine_library
from xamt.libraries.base import LibraryAdapter, resolve_ref
from xamt.libraries.registry import Registry


def test_exclude_accepts_glob_patterns():
    a = LibraryAdapter(name="x", import_name="x", distributions=(), namespaces=(), own_modules=(),
                       from_numpy_ref="m:f", to_numpy_ref="m:f", dtypes={},
                       exclude=frozenset({"x.raw.*Grad", "x.testing.", "x.info"}))
    assert a.is_excluded("x.raw.ReluGrad") and a.is_excluded("x.testing.assert_equal")
    assert a.is_excluded("x.info")
    assert not a.is_excluded("x.raw.Relu") and not a.is_excluded("x.raw.GradientTape2")


@pytest.fixture(scope="module")
def raw_ops():
    pytest.importorskip("tensorflow")
    adapter = Registry().get("tensorflow")
    # only the raw-ops namespace: what is mined there does not depend on the others
    only = dataclasses.replace(adapter, namespaces=("tensorflow.raw_ops",))
    return {r.qualname: r for r in mine_library(only).records}


def test_raw_ops_are_filtered_by_module_and_pattern(raw_ops):
    for kept in ("Abs", "Sub", "Sum", "ArgMax", "BatchMatMulV2", "Xlog1py", "Igammac", "FFT"):
        assert f"tensorflow.raw_ops.{kept}" in raw_ops
    for dropped in ("ReluGrad", "Conv2DBackpropInput", "QuantizedAdd", "SparseSegmentSum",
                    "Placeholder", "Empty", "VarHandleOp", "RandomUniform", "TensorDataset",
                    "QueueDequeue", "WriteSummary", "StringJoin"):
        assert f"tensorflow.raw_ops.{dropped}" not in raw_ops, dropped
    assert 150 < len(raw_ops) < 500


def test_raw_op_parameters_are_keyword_only_and_bind_by_keyword(raw_ops):
    import numpy as np

    from xamt.catalog import Param
    from xamt.matching.argplan import plan_for
    from xamt.matching.data import load_matching_data
    from xamt.matching.roles import inputs_of

    data = load_matching_data()
    sub = raw_ops["tensorflow.raw_ops.Sub"]
    assert [(p.name, p.kind) for p in sub.params] == [("x", "keyword_only"),
                                                       ("y", "keyword_only"),
                                                       ("name", "keyword_only")]
    fn = resolve_ref(sub.target)
    with pytest.raises(TypeError):  # why they must be keyword-only: positional calls raise
        fn(np.float32(3), np.float32(1))
    # the declaration order still pairs x with numpy.subtract's x1 (subtract is not symmetric)
    member = inputs_of(sub.params, data)
    assert [i.position for i in member] == [0, 1]
    x1x2 = [Param("x1", "positional_only"), Param("x2", "positional_only")]
    plan, _ = plan_for(inputs_of(x1x2, data), member, data)
    args, kwargs = plan.bind({0: np.float32([5, 7]), 1: np.float32([1, 2])})
    assert args == [] and set(kwargs) == {"x", "y"}
    assert np.asarray(fn(**kwargs)).tolist() == [4.0, 5.0]


@pytest.fixture(scope="module")
def numpy_records():
    pytest.importorskip("numpy")
    return {n: r for r in mine_library(Registry().get("numpy")).records for n in r.names}


def test_numpy_ufunc_methods_are_records(numpy_records):
    red = numpy_records["numpy.add.reduce"]
    assert red.target == "numpy:add.reduce" and red.kind == "function"
    assert red.qualifier == "add" and red.sub_api_of == "numpy.add"
    assert [p.name for p in red.params][:2] == ["array", "axis"]
    # the shared ufunc.reduce docstring declares nothing about this ufunc
    assert red.doc_equiv == [] and red.alias_of is None
    assert resolve_ref(red.target)([1, 2, 3]) == 6
    for q in ("numpy.add.accumulate", "numpy.subtract.outer", "numpy.maximum.reduceat"):
        assert q in numpy_records
    # unary ufuncs and generalised ufuncs have the methods, but they raise
    assert "numpy.negative.reduce" not in numpy_records
    assert "numpy.matmul.reduce" not in numpy_records
    assert "numpy.add.at" not in numpy_records  # an in-place update, not a computation


def test_jax_ufunc_methods_are_records():
    pytest.importorskip("jax")
    recs = {r.qualname: r for r in mine_library(Registry().get("jax")).records}
    red = recs["jax.numpy.add.reduce"]
    assert red.target == "jax.numpy:add.reduce" and red.qualifier == "add"
    assert [p.name for p in red.params][:2] == ["a", "axis"]
    assert "jax.numpy.logaddexp.accumulate" in recs and "jax.numpy.negative.reduce" not in recs
