"""The MindSpore adapter, whose library lives in a venv of its own (``make venv-mindspore``):
the version asked of that interpreter, a sandbox runtime started from it (eager, CPU,
launch-blocking, a forking zygote), conversions, a group run across runtimes, a raise and a crash
attributed, mining in it.

The tests that need the venv skip without it. Tasks run in the venv's workers come from
``mindspore_tasks.py`` (the venv has no pytest to import this module with).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from sandbox import Status, Task
from xamt.libraries.registry import Registry

TASKS = "tests.catalog.mindspore_tasks:"

ADAPTER = Registry().get("mindspore")
needs_venv = pytest.mark.skipif(
    not os.access(ADAPTER.runtime.python(), os.X_OK),
    reason=f"{ADAPTER.runtime.venv} is absent (make venv-mindspore makes it; it needs the network)")


def _task(name: str, *args) -> Task:
    return Task(TASKS + name, args, runtime="mindspore")


def test_the_adapter_describes_a_venv_runtime_without_importing_mindspore():
    import sys

    assert ADAPTER.runtime.venv == ".venv-mindspore" and ADAPTER.runtime.python().endswith(
        os.path.join(".venv-mindspore", "bin", "python"))
    assert ADAPTER.pivot_rank > Registry().get("numpy").pivot_rank
    env = ADAPTER.runtime.child_environment({"PYTHONPATH": "elsewhere"})
    assert env["PYTHONPATH"].split(os.pathsep)[1:] == ["elsewhere"]
    assert env["MS_DEV_LAUNCH_BLOCKING"] == "1"
    assert "mindspore" not in sys.modules


@needs_venv
def test_installed_and_version_are_asked_of_the_venv():
    assert ADAPTER.is_installed()
    assert ADAPTER.version() == "2.10.0"


@pytest.fixture(scope="module")
def pools():
    """A pool set from ``pool_settings([numpy, mindspore])``: the main zygote and MindSpore's."""
    from xamt.exec.pools import open_pool, pool_settings

    settings = pool_settings([Registry().get("numpy"), ADAPTER])
    assert set(settings["runtimes"]) == {"mindspore"}
    with open_pool(workers=1, timeout=60, confirm=False, **settings) as ps:
        yield ps


@needs_venv
def test_a_task_of_the_mindspore_runtime_runs_in_the_venv_eagerly_on_the_cpu(pools):
    main, there = pools.run([Task(TASKS + "interpreter"), _task("interpreter")])
    assert main.status is Status.RAISED  # no mindspore in this interpreter
    assert there.status is Status.OK, there
    info = there.value
    assert os.path.samefile(info["executable"], ADAPTER.runtime.python())
    assert info["numpy"].startswith("1.") and info["mindspore"] == "2.10.0"
    assert info["mode"] == info["pynative"] and info["device"] == "CPU"
    assert info["blocking"] == "1"
    # the zygote stayed single-threaded after importing mindspore and its warm-up: it forks
    assert pools.pool_for(_task("interpreter")).mode == "fork"


@needs_venv
def test_a_call_returns_the_right_numbers(pools):
    x = np.array([[1.5, -2.0], [3.25, 4.0], [-0.5, 8.0]], dtype=np.float32)
    (out,) = pools.run([_task("cumsum", x)])
    assert out.status is Status.OK, out
    assert out.value.dtype == np.float32 and np.array_equal(out.value, np.cumsum(x, axis=0))


@needs_venv
def test_a_kernel_refusal_is_raised_by_the_call_and_a_crash_is_the_task_s(pools):
    caught, raised, crashed = pools.run(
        [_task("gather_out_of_range"), _task("gather_unchecked"), _task("crash")])
    # launch-blocking: the CPU kernel's refusal comes from the call, not from reading the result
    assert caught.status is Status.OK and caught.value["raised_by"] == "call", caught.value
    assert "Gather" in caught.value["error"]
    assert raised.status is Status.RAISED and raised.error_type == "RuntimeError"
    assert "input_indices" in raised.error_message
    assert crashed.status is Status.CRASHED and crashed.signal_name == "SIGSEGV"


@needs_venv
def test_a_group_runs_its_mindspore_members_in_their_runtime(pools):
    from tests.groups.helpers import unary
    from xamt.exec.group import ExecItem, GroupExecutor
    from xamt.inputs import seed_inputs

    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                ("mindspore", "mindspore.ops.abs", "mindspore.ops:abs"),
                                ("mindspore", "mindspore.numpy.abs", "mindspore.numpy:abs"),
                                ("mindspore", "mindspore.ops.cholesky", "mindspore.ops:cholesky")])
    libraries = {"numpy": Registry().get("numpy"), "mindspore": ADAPTER}
    (run,) = GroupExecutor(pools, libraries, timeout=60).run([ExecItem(g, seed_inputs(g)[0])])
    statuses = [r.status for r in run.results]
    assert statuses[:3] == ["ok", "ok", "ok"], run.results
    reference = run.results[0].value
    for result in run.results[1:3]:
        assert result.value.dtype == reference.dtype and np.array_equal(result.value, reference)
    # a member's own refusal is its raise (a seed input is not a batch of square matrices)
    assert statuses[3] == "raised", run.results[3]


@needs_venv
def test_mining_runs_in_the_venv():
    from xamt.catalog.worker import mine_in_child

    cat = mine_in_child(ADAPTER, timeout=300)
    names = {r.qualname for r in cat.records}
    assert cat.version == "2.10.0" and len(names) >= 1200  # 1338 measured
    assert {"mindspore.ops.cumsum", "mindspore.numpy.cumsum", "mindspore.mint.cumsum",
            "mindspore.Tensor.cumsum", "mindspore.numpy.fft.fft", "mindspore.mint.linalg.vector_norm"} <= names
    # plumbing methods, graph-mode primitives, autodiff and communication stay out
    assert not {"mindspore.Tensor.asnumpy", "mindspore.ops.tuple_getitem", "mindspore.ops.grad",
                "mindspore.ops.all_reduce", "mindspore.ops.coo_abs"} & names


@needs_venv
def test_a_missing_cpu_kernel_is_a_benign_refusal_and_an_argument_check_is_not(pools):
    from xamt.oracle import ErrorKinds

    kinds = ErrorKinds.load()
    missing, refused = pools.run([_task("missing_kernels"), _task("gather_unchecked")])
    assert missing.status is Status.OK and len(missing.value) == 2, missing
    for error_type, text in missing.value:
        assert kinds.classify(error_type, text)[0] == "benign", text
    # an argument MindSpore checks (an index out of range) is neither benign nor internal
    assert kinds.classify(refused.error_type, refused.error_message)[0] == "other"
