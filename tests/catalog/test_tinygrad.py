"""The tinygrad adapter, whose library lives in a venv of its own (``make venv-tinygrad``) and runs
on its ``PYTHON`` device: the version asked of that interpreter, a sandbox runtime started from
it (the device and configuration pinned, conversions, results realized inside the call, a group
run beside numpy with a method member), mining in it.

The tests that need the venv skip without it. Tasks run in the venv's workers come from
``tinygrad_tasks.py`` (the venv has no pytest to import this module with).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from sandbox import Status, Task
from tests.groups.helpers import group, member
from xamt.libraries.registry import Registry

TASKS = "tests.catalog.tinygrad_tasks:"

ADAPTER = Registry().get("tinygrad")
needs_venv = pytest.mark.skipif(
    not os.access(ADAPTER.runtime.python(), os.X_OK),
    reason=f"{ADAPTER.runtime.venv} is absent (make venv-tinygrad makes it; it needs the network)")


def test_the_adapter_describes_a_venv_runtime_without_importing_tinygrad():
    import sys

    assert ADAPTER.runtime.venv == ".venv-tinygrad" and ADAPTER.runtime.python().endswith(
        os.path.join(".venv-tinygrad", "bin", "python"))
    assert ADAPTER.pivot_rank > Registry().get("numpy").pivot_rank
    env = ADAPTER.runtime.child_environment({"PYTHONPATH": "elsewhere", "DEV": "CPU",
                                             "DEFAULT_FLOAT": "float16", "CACHELEVEL": "2"})
    assert env["PYTHONPATH"].split(os.pathsep)[1:] == ["elsewhere"]
    # the runtime's device and defaults win over the user's: they change what is compared
    assert (env["DEV"], env["DEFAULT_FLOAT"], env["CACHELEVEL"]) == ("PYTHON", "float32", "0")
    # a reproducer script sets the device and the defaults, not the cache
    script = ADAPTER.script_environment()
    assert script["DEV"] == "PYTHON" and script["DEFAULT_INT"] == "int32"
    assert "CACHELEVEL" not in script and "DEBUG" not in script
    # tinygrad has no complex dtype; it holds bfloat16 and every integer width
    assert not {"complex64", "complex128"} & set(ADAPTER.dtypes.values())
    assert {"bfloat16", "uint64", "float64"} <= set(ADAPTER.dtypes.values())
    assert ADAPTER.finish_ref == "xamt.libraries.tinygrad:finish"
    assert "tinygrad" not in sys.modules


def _plan(pivot, method, category, qualname):
    """The plan of a tinygrad method (``method``: its parameters after the receiver) against a
    torch pivot, from hand-written signatures: matching data only, no library."""
    from xamt.catalog import Param
    from xamt.matching.argplan import plan_for, slots_from
    from xamt.matching.data import load_matching_data
    from xamt.matching.roles import inputs_of

    def params(spec):
        return [Param(n, "positional_or_keyword", d, d is None, None) for n, d in spec]

    data = load_matching_data()
    piv = inputs_of(params(pivot), data, category=category)
    plan, _ = plan_for(piv, inputs_of(params(method), data, receiver=True, category=category),
                       data, data.overrides_for(qualname))
    return {a.param: a for a in plan.args}, {s.name: s.index for s in slots_from(piv)}, plan


def test_tinygrad_argument_names_meet_the_others():
    # a loss is a method of the prediction, the target its Y (not torch's weight)
    args, slots, plan = _plan([("input", None), ("target", None), ("weight", "None"),
                               ("reduction", "'mean'")], [("Y", None), ("reduction", "'mean'")],
                              "loss", "tinygrad.Tensor.binary_crossentropy")
    assert (args["self"].slot, args["Y"].slot) == (slots["input"], slots["target"]) and plan.complete
    # x.dot(w): w is the second operand
    args, slots, plan = _plan([("a", None), ("b", None)], [("w", None), ("dtype", "None")],
                              "generic", "tinygrad.Tensor.dot")
    assert args["w"].slot == slots["b"] and plan.complete
    # the population statistic, as numpy's default (tinygrad's own is correction=1)
    args, _, _ = _plan([("input", None), ("dim", "None"), ("correction", "0"), ("keepdim", "False")],
                       [("axis", "None"), ("keepdim", "False"), ("correction", "1")],
                       "reduction", "tinygrad.Tensor.var")
    assert args["correction"].default == 0


@needs_venv
def test_installed_and_version_are_asked_of_the_venv():
    assert ADAPTER.is_installed()
    assert ADAPTER.version() == "0.14.0"


@pytest.fixture(scope="module")
def pools():
    """A pool set from ``pool_settings([numpy, tinygrad])``: the main zygote and tinygrad's."""
    from xamt.exec.pools import open_pool, pool_settings

    settings = pool_settings([Registry().get("numpy"), ADAPTER])
    assert set(settings["runtimes"]) == {"tinygrad"}
    with open_pool(workers=1, timeout=120, **settings) as ps:
        yield ps


@needs_venv
def test_a_task_of_the_tinygrad_runtime_runs_in_the_venv_on_the_python_device(pools):
    main, there = pools.run([Task(TASKS + "interpreter"), Task(TASKS + "interpreter", runtime="tinygrad")])
    assert main.status is Status.RAISED  # no tinygrad in this interpreter
    assert there.status is Status.OK, there
    info = there.value
    assert os.path.samefile(info["executable"], ADAPTER.runtime.python())
    assert info["tinygrad"] == "0.14.0" and info["numpy"] == "2.4.6"
    # the runtime's variables as tinygrad read them at import
    assert info["device"] == "PYTHON"
    assert (info["default_float"], info["default_int"]) == ("float32", "int32")
    assert info["cachelevel"] == 0 and info["training"] == 0
    # importing tinygrad starts no thread: the zygote forks its workers
    assert pools.pool_for(Task(TASKS + "interpreter", runtime="tinygrad")).mode == "fork"
    assert info["threads"] == 1


@needs_venv
def test_each_dtype_is_held_as_itself_and_complex_is_refused(pools):
    names = list(ADAPTER.dtypes.values())
    held, refused = pools.run([Task("tests.catalog.venv_tasks:held_dtypes", ("tinygrad", names), runtime="tinygrad"),
                               Task(TASKS + "complex_refused", runtime="tinygrad")])
    assert held.status is Status.OK and held.value == names, held
    assert refused.status is Status.OK and "no complex" in refused.value, refused


@needs_venv
def test_results_are_realized_in_the_call_and_narrow_dtypes_come_back(pools):
    done, narrow = pools.run([Task(TASKS + "finish_realizes", runtime="tinygrad"),
                              Task(TASKS + "narrow_dtypes", runtime="tinygrad")])
    assert done.status is Status.OK, done
    d = done.value
    assert not d["lazy_before"] and d["realized"] and d["pair"] == [True, True]
    assert d["pair_type"] == "tuple"
    # a deviceless constant is read on the PYTHON device, not through clang's CPU device
    assert d["const_device"] == "PYTHON" and d["const"] == 3.0
    assert d["copy"] == [0.0, 0.0, 0.0]
    assert narrow.status is Status.OK, narrow
    assert narrow.value["bf16"] == ["bfloat16", [3.0, -4.5]]
    assert narrow.value["fp8"] == ["float8_e4m3fn", [1.0, 3.5]]
    assert narrow.value["scalar"] == [(), 3.0] or narrow.value["scalar"] == [[], 3.0]


@needs_venv
def test_a_group_runs_a_tinygrad_method_beside_numpy(pools):
    """numpy.exp beside ``tinygrad.Tensor.exp`` (a method on its receiver), through the group
    executor as the registry build and the campaign run it: float32 gives numpy's numbers, an
    int32 input comes back as tinygrad's float32 (it promotes integers to its default float),
    and a 0-d input (a deviceless constant in tinygrad) converts back."""
    from xamt.exec.group import ExecItem, GroupExecutor

    adapters = {"numpy": Registry().get("numpy"), "tinygrad": ADAPTER}
    grp = group("x:exp/generic", [
        member("numpy", "numpy.exp", "numpy:exp", [(0, "x", 0, None, True)]),
        member("tinygrad", "tinygrad.Tensor.exp", "tinygrad:Tensor.exp",
               [(0, "self", 0, None, True)], call="method", receiver_slot=0),
    ], [(0, "x", "tensor")])
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    ex = GroupExecutor(pools, adapters, timeout=120)
    floats, ints, scalar = ex.run([ExecItem(grp, {0: x}), ExecItem(grp, {0: x.astype(np.int32)}),
                                   ExecItem(grp, {0: np.array(0.5, np.float32)})])
    assert [r.status for r in floats.results] == ["ok", "ok"], floats.results
    got = floats.results[1].value
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)
    assert [r.status for r in ints.results] == ["ok", "ok"], ints.results
    assert ints.results[1].value.dtype == np.float32
    assert [r.status for r in scalar.results] == ["ok", "ok"], scalar.results
    assert scalar.results[1].value.shape == ()
    np.testing.assert_allclose(scalar.results[1].value, np.exp(np.float32(0.5)), rtol=1e-6)


@needs_venv
def test_mining_runs_in_the_venv():
    from xamt.catalog.worker import mine_in_child

    cat = mine_in_child(ADAPTER, timeout=300)
    by_name = {r.qualname: r for r in cat.records}
    assert cat.version == "0.14.0" and len(by_name) >= 180  # 200 measured
    assert {"tinygrad.Tensor.exp", "tinygrad.Tensor.sum", "tinygrad.Tensor.conv2d",
            "tinygrad.Tensor.arange", "tinygrad.Tensor.eye"} <= set(by_name)
    # the factories are functions of the class namespace, not methods of a receiver
    arange = by_name["tinygrad.Tensor.arange"]
    assert arange.kind == "function" and arange.target == "tinygrad:Tensor.arange"
    assert not arange.receiver and arange.params[0].name == "start"
    exp = by_name["tinygrad.Tensor.exp"]
    assert exp.kind == "method" and exp.receiver
    # plumbing and uninitialised memory stay out
    assert not {"tinygrad.Tensor.numpy", "tinygrad.Tensor.realize", "tinygrad.Tensor.backward",
                "tinygrad.Tensor.empty", "tinygrad.Tensor.empty_like", "tinygrad.Tensor.shard",
                "tinygrad.Tensor.to"} & set(by_name)
