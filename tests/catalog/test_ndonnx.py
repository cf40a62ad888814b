"""The ndonnx adapter, whose library lives in a venv of its own (``make venv-ndonnx``): the
version asked of that interpreter, a sandbox runtime started from it (ONNX Runtime as the
backend, conversions, a call that returns, one the graph builder refuses, one ONNX Runtime
fails), mining in it.

The tests that need the venv skip without it. Tasks run in the venv's workers come from
``ndonnx_tasks.py`` (the venv has no pytest to import this module with).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from sandbox import Status, Task
from tests.groups.helpers import group, member, unary
from xamt.libraries.registry import Registry

TASKS = "tests.catalog.ndonnx_tasks:"

ADAPTER = Registry().get("ndonnx")
needs_venv = pytest.mark.skipif(
    not os.access(ADAPTER.runtime.python(), os.X_OK),
    reason=f"{ADAPTER.runtime.venv} is absent (make venv-ndonnx makes it; it needs the network)")


def test_the_adapter_describes_a_venv_runtime_and_ndonnx_s_dtypes():
    assert ADAPTER.runtime.venv == ".venv-ndonnx" and ADAPTER.runtime.python().endswith(
        os.path.join(".venv-ndonnx", "bin", "python"))
    assert ADAPTER.finish_ref == "xamt.libraries.ndonnx:finish"
    # no complex and no bfloat16 arrays in ndonnx; every other dtype under numpy's name
    assert not {"complex64", "complex128", "bfloat16"} & set(ADAPTER.dtypes)
    assert {"bool", "uint64", "float16", "float64"} <= set(ADAPTER.dtypes.values())
    assert ADAPTER.is_excluded("ndonnx.build") and ADAPTER.is_excluded("ndonnx.extensions.is_float_dtype")
    assert not ADAPTER.is_excluded("ndonnx.extensions.isin")


def test_a_dtype_ndonnx_lacks_is_an_expected_refusal():
    """ndonnx's refusal of a dtype it has no array of (from ``asarray``, and from the adapter's
    dtype hook in the same words, without importing ndonnx) reads as benign; the campaign filed
    both as status findings before (``asarray`` of a bfloat16 array, ``isdtype(complex128)``)."""
    from xamt.libraries.base import resolve_ref
    from xamt.oracle import ErrorKinds

    kinds = ErrorKinds.load()
    for name in ("complex128", "bfloat16"):
        with pytest.raises(ValueError) as refused:
            resolve_ref(ADAPTER.dtype_ref)(name)
        assert kinds.classify("ValueError", str(refused.value))[0] == "benign"
    assert kinds.classify("ValueError", "'bfloat16' does not have a corresponding ndonnx data type")[0] == "benign"
    # another ValueError of ndonnx's is left to the status oracle
    assert kinds.classify("ValueError", "no propagated value available")[0] == "other"


@needs_venv
def test_installed_and_version_are_asked_of_the_venv():
    assert ADAPTER.is_installed()
    assert ADAPTER.version() == "0.23.0"


@pytest.fixture(scope="module")
def pools():
    """A pool set from ``pool_settings([numpy, ndonnx])``: the main zygote and ndonnx's."""
    from xamt.exec.pools import open_pool, pool_settings

    settings = pool_settings([Registry().get("numpy"), ADAPTER])
    assert set(settings["runtimes"]) == {"ndonnx"}
    with open_pool(workers=1, **settings) as ps:
        yield ps


@needs_venv
def test_a_task_of_the_ndonnx_runtime_runs_in_the_venv_on_onnx_runtime(pools):
    main, there = pools.run([Task(TASKS + "interpreter"), Task(TASKS + "interpreter", runtime="ndonnx")])
    assert main.status is Status.RAISED  # no ndonnx in this interpreter
    assert there.status is Status.OK, there
    info = there.value
    assert os.path.samefile(info["executable"], ADAPTER.runtime.python())
    assert info["ndonnx"] == "0.23.0" and info["onnxruntime"] == "1.32.0"
    assert info["numpy"].startswith("2.")
    # results are computed by ONNX Runtime, not by spox's reference implementation
    assert info["backend"] == "ONNXRUNTIME"
    # importing onnxruntime may leave native threads running (two here, none on CI's machine):
    # the zygote spawns its workers exactly when it saw more than its own thread
    info = pools.pool_for(Task(TASKS + "interpreter", runtime="ndonnx")).info
    assert info["mode"] == ("spawn" if info["threads"] > 1 else "fork"), info


@needs_venv
def test_conversions_copy_name_dtypes_and_raise_onnx_runtime_s_errors(pools):
    (out,) = pools.run([Task(TASKS + "conversions", runtime="ndonnx")])
    assert out.status is Status.OK, out
    got = out.value
    assert got["put"] == [7.0, 0.0, 0.0] and got["caller_unchanged"]
    assert got["dtype"] == "float64"
    assert got["unique"] == ["tuple", ["int64", [1, 3]], ["int64", [1, 2]]]
    # spox swallowed ONNX Runtime's error: the array has no value, and both hooks raise it
    assert not got["lazy_has_value"]
    for error in got["errors"]:
        assert error is not None and error[0] == "InvalidArgument", got["errors"]
        assert "out of data bounds" in error[1]


@needs_venv
def test_members_run_in_the_runtime_with_results_and_errors_attributed(pools):
    """Groups of numpy's and ndonnx's ``sin`` and ``take``, through the group executor as the
    registry build and the campaign run them: ndonnx's member returns numpy's numbers on
    float32, raises the graph builder's TypeError on int32 (no ``Sin`` kernel for integers) and
    ONNX Runtime's error for an index out of bounds, from the call (the ``finish`` hook)."""
    from xamt.exec.group import ExecItem, GroupExecutor

    adapters = {"numpy": Registry().get("numpy"), "ndonnx": ADAPTER}
    sin = unary("x:sin/generic", [("numpy", "numpy.sin", "numpy:sin"),
                                  ("ndonnx", "ndonnx.sin", "ndonnx:sin")])
    args = [(0, "x", 0, None, True), (1, "indices", 1, None, True)]
    take = group("x:take/generic", [member("numpy", "numpy.take", "numpy:take", args),
                                    member("ndonnx", "ndonnx.take", "ndonnx:take", args)],
                 [(0, "x", "tensor"), (1, "indices", "tensor")])
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    ex = GroupExecutor(pools, adapters, timeout=60)
    floats, ints, outside = ex.run([ExecItem(sin, {0: x}), ExecItem(sin, {0: x.astype(np.int32)}),
                                    ExecItem(take, {0: x, 1: np.array([5])})])
    assert [r.status for r in floats.results] == ["ok", "ok"], floats.results
    got = floats.results[1].value
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.sin(x), rtol=1e-6)
    assert [r.status for r in ints.results] == ["ok", "raised"], ints.results
    assert ints.results[1].error_type == "TypeError", ints.results[1]
    assert "not implemented for data type `int32`" in (ints.results[1].error_message or "")
    assert [r.status for r in outside.results] == ["raised", "raised"], outside.results
    assert outside.results[1].error_type.endswith("InvalidArgument"), outside.results[1]
    assert "out of data bounds" in (outside.results[1].error_message or "")


@needs_venv
def test_mining_runs_in_the_venv():
    from xamt.catalog.worker import mine_in_child

    cat = mine_in_child(ADAPTER, timeout=300)
    names = {r.qualname for r in cat.records}
    assert cat.version == "0.23.0" and len(names) >= 140  # 143 measured
    assert {"ndonnx.sum", "ndonnx.take_along_axis", "ndonnx.unique_all", "ndonnx.extensions.isin",
            "ndonnx.Array.sum"} <= names
    # graph building, exports, dtype helpers and plumbing methods stay out
    assert not {"ndonnx.build", "ndonnx.argument", "ndonnx.from_numpy_dtype",
                "ndonnx.extensions.is_float_dtype", "ndonnx.extensions.fill_null",
                "ndonnx.Array.unwrap_numpy", "ndonnx.Array.to_device"} & names
    sin = next(r for r in cat.records if r.qualname == "ndonnx.sin")
    assert sin.kind == "function" and sin.target == "ndonnx:sin"
