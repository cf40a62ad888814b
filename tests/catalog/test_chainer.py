"""The Chainer adapter, whose library lives in a venv of its own (``make venv-chainer``): the
version asked of that interpreter, a sandbox runtime started from it (conversions, a call that
returns, one that raises), mining in it.

The tests that need the venv skip without it. Tasks run in the venv's workers come from
``chainer_tasks.py`` (the venv has no pytest to import this module with).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from sandbox import Status, Task
from tests.groups.helpers import unary
from xamt.libraries.registry import Registry

TASKS = "tests.catalog.chainer_tasks:"

ADAPTER = Registry().get("chainer")
needs_venv = pytest.mark.skipif(
    not os.access(ADAPTER.runtime.python(), os.X_OK),
    reason=f"{ADAPTER.runtime.venv} is absent (make venv-chainer makes it; it needs the network)")


def test_the_adapter_describes_a_venv_runtime_without_importing_chainer():
    assert ADAPTER.runtime.venv == ".venv-chainer" and ADAPTER.runtime.python().endswith(
        os.path.join(".venv-chainer", "bin", "python"))
    assert ADAPTER.pivot_rank > Registry().get("numpy").pivot_rank
    assert "bfloat16" not in ADAPTER.dtypes and ADAPTER.dtypes["float16"] == "float16"
    env = ADAPTER.runtime.child_environment({"PYTHONPATH": "elsewhere", "CHAINER_DEBUG": "1"})
    assert env["PYTHONPATH"].split(os.pathsep)[1:] == ["elsewhere"]
    # the runtime's configuration wins over the user's environment
    assert env["CHAINER_DEBUG"] == "0" and env["CHAINER_TYPE_CHECK"] == "1"


def test_chainer_dtype_refusals_are_benign_and_shape_refusals_judged():
    """Chainer's type check (``InvalidType``, its messages as Chainer 7.8.1 words them): a
    refused dtype (float-only maths, no mixed-dtype promotion) is an expected refusal; a refused
    shape is neither benign nor internal, the status oracle judges it."""
    from xamt.oracle import ErrorKinds

    kinds = ErrorKinds.load()
    invalid = "chainer.utils.type_check.InvalidType"

    def message(op, expect, actual):
        return f"\nInvalid operation is performed in: {op} (Forward)\n\nExpect: {expect}\nActual: {actual}"

    assert kinds.classify(invalid, message("Exp", "x.dtype.kind == f", "i != f"))[0] == "benign"
    assert kinds.classify(invalid, message("Minimum", "x1.dtype == x2.dtype",
                                           "float32 != float64"))[0] == "benign"
    assert kinds.classify(invalid, message("LinearFunction", "x.shape[1] == W.shape[1]",
                                           "3 != 2"))[0] == "other"


def _plan(pivot, member, category, qualname=None):
    """The plan of a Chainer API (``member``, its parameters) against a torch pivot, from
    hand-written signatures: matching data only, no library."""
    from xamt.catalog import Param
    from xamt.matching.argplan import plan_for, slots_from
    from xamt.matching.data import load_matching_data
    from xamt.matching.roles import inputs_of

    def params(spec):
        return [Param(n, "positional_or_keyword", d, d is None, None) for n, d in spec]

    data = load_matching_data()
    piv = inputs_of(params(pivot), data, category=category)
    plan, _ = plan_for(piv, inputs_of(params(member), data, category=category), data,
                       data.overrides_for(qualname) if qualname else ())
    slots = {s.name: s.index for s in slots_from(piv)}
    return {a.param: a for a in plan.args}, slots, plan


def test_chainer_argument_names_meet_torch_s():
    # a loss's (x0, x1) is torch's (input, target), not (input, weight)
    args, slots, plan = _plan([("input", None), ("target", None), ("reduction", "'mean'"),
                               ("weight", "None")], [("x0", None), ("x1", None)], "loss")
    assert (args["x0"].slot, args["x1"].slot) == (slots["input"], slots["target"]) and plan.complete
    # a layer's W is its weights tensor: chainer.functions.linear(x, W, b)
    args, slots, plan = _plan([("input", None), ("weight", None), ("bias", "None")],
                              [("x", None), ("W", None), ("b", "None")], "nn")
    assert args["W"].slot == slots["weight"] and plan.complete
    # leaky_relu's slope meets negative_slope and takes the pivot's default (chainer's is 0.2)
    args, slots, _ = _plan([("input", None), ("negative_slope", "0.01")],
                           [("x", None), ("slope", "0.2")], "nn")
    assert args["slope"].slot == slots["negative_slope"] and args["slope"].default == 0.01


def test_chainer_max_pooling_is_planned_in_floor_mode():
    args, slots, _ = _plan(
        [("input", None), ("kernel_size", None), ("stride", "None"), ("padding", "0"),
         ("ceil_mode", "False")],
        [("x", None), ("ksize", None), ("stride", "None"), ("pad", "0"), ("cover_all", "True")],
        "nn", "chainer.functions.max_pooling_2d")
    assert args["ksize"].slot == slots["kernel_size"] and args["pad"].slot == slots["padding"]
    # no slot feeds cover_all (torch has no such name): the override always passes it
    assert args["cover_all"].slot is None and args["cover_all"].value is False


@needs_venv
def test_installed_and_version_are_asked_of_the_venv():
    assert ADAPTER.is_installed()
    assert ADAPTER.version() == "7.8.1"


@pytest.fixture(scope="module")
def pools():
    """A pool set from ``pool_settings([numpy, chainer])``: the main zygote and Chainer's."""
    from xamt.exec.pools import open_pool, pool_settings

    settings = pool_settings([Registry().get("numpy"), ADAPTER])
    assert set(settings["runtimes"]) == {"chainer"}
    with open_pool(workers=1, **settings) as ps:
        yield ps


@needs_venv
def test_a_task_of_the_chainer_runtime_runs_in_the_venv(pools):
    main, there = pools.run([Task(TASKS + "interpreter"), Task(TASKS + "interpreter", runtime="chainer")])
    assert main.status is Status.RAISED  # no chainer in this interpreter
    assert there.status is Status.OK, there
    info = there.value
    assert os.path.samefile(info["executable"], ADAPTER.runtime.python())
    assert info["numpy"].startswith("1.") and info["chainer"] == "7.8.1"
    # the runtime's variables set Chainer's configuration at import
    assert info["type_check"] and not info["debug"] and info["dtype"] == "float32"
    assert info["use_ideep"] == "never"
    # the zygote stayed single-threaded after importing chainer: it forks its workers
    assert pools.pool_for(Task(TASKS + "interpreter", runtime="chainer")).mode == "fork"
    assert info["threads"] in (None, 1)
    (copy,) = pools.run([Task(TASKS + "private_copy", runtime="chainer")])
    assert copy.status is Status.OK and copy.value == {"variable": True, "caller_unchanged": True}


@needs_venv
def test_members_run_in_the_runtime_with_results_and_errors_attributed(pools):
    """A group of numpy.exp and chainer.functions.exp, through the group executor as the
    registry build and the campaign run it: the Chainer member is sent to its runtime, returns
    numpy's numbers on float32, and raises Chainer's own type-check error on int32 (Chainer's
    maths take floating dtypes only) while numpy's member returns."""
    from xamt.exec.group import ExecItem, GroupExecutor

    adapters = {"numpy": Registry().get("numpy"), "chainer": ADAPTER}
    grp = unary("x:exp/generic", [("numpy", "numpy.exp", "numpy:exp"),
                                  ("chainer", "chainer.functions.exp", "chainer.functions:exp")])
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    ex = GroupExecutor(pools, adapters, timeout=60)
    floats, ints = ex.run([ExecItem(grp, {0: x}), ExecItem(grp, {0: x.astype(np.int32)})])
    assert [r.status for r in floats.results] == ["ok", "ok"], floats.results
    got = floats.results[1].value
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)
    assert [r.status for r in ints.results] == ["ok", "raised"], ints.results
    assert ints.results[1].error_type == "chainer.utils.type_check.InvalidType", ints.results[1]
    assert "dtype" in (ints.results[1].error_message or "")


@needs_venv
def test_mining_runs_in_the_venv():
    from xamt.catalog.worker import mine_in_child

    cat = mine_in_child(ADAPTER, timeout=300)
    names = {r.qualname for r in cat.records}
    assert cat.version == "7.8.1" and len(names) >= 200  # 216 measured
    assert {"chainer.functions.sum", "chainer.functions.relu", "chainer.functions.concat",
            "chainer.Variable.reshape"} <= names
    # plumbing: a device copy, a recomputing wrapper, gradient and device methods stay out
    assert not {"chainer.functions.copy", "chainer.functions.forget", "chainer.Variable.backward",
                "chainer.Variable.to_gpu"} & names
    exp = next(r for r in cat.records if r.qualname == "chainer.functions.exp")
    assert exp.kind == "function" and exp.target == "chainer.functions:exp"
