"""The MXNet adapter, whose library lives in a venv of its own (``make venv-mxnet``): the
version asked of that interpreter, a sandbox runtime started from it, mining in it.

The tests that need the venv skip without it. Tasks run in the venv's workers come from
``mxnet_tasks.py`` (the venv has no pytest to import this module with).
"""
from __future__ import annotations

import os

import pytest

from sandbox import Status, Task
from xamt.libraries.registry import Registry

TASKS = "tests.catalog.mxnet_tasks:"

ADAPTER = Registry().get("mxnet")
needs_venv = pytest.mark.skipif(
    not os.access(ADAPTER.runtime.python(), os.X_OK),
    reason=f"{ADAPTER.runtime.venv} is absent (make venv-mxnet makes it; it needs the network)")


def test_the_adapter_describes_a_venv_runtime_without_importing_mxnet():
    assert ADAPTER.runtime.venv == ".venv-mxnet" and ADAPTER.runtime.python().endswith(
        os.path.join(".venv-mxnet", "bin", "python"))
    assert ADAPTER.runtime.env["MXNET_ENGINE_TYPE"] == "NaiveEngine"
    assert ADAPTER.pivot_rank > Registry().get("numpy").pivot_rank
    env = ADAPTER.runtime.child_environment({"PYTHONPATH": "elsewhere"})
    assert env["PYTHONPATH"].split(os.pathsep)[1:] == ["elsewhere"]
    assert env["MXNET_ENGINE_TYPE"] == "NaiveEngine"


@needs_venv
def test_installed_and_version_are_asked_of_the_venv():
    assert ADAPTER.is_installed()
    assert ADAPTER.version() == "1.9.1"


@pytest.fixture(scope="module")
def pools():
    """A pool set from ``pool_settings([numpy, mxnet])``: the main zygote and MXNet's."""
    from xamt.exec.pools import open_pool, pool_settings

    settings = pool_settings([Registry().get("numpy"), ADAPTER])
    assert set(settings["runtimes"]) == {"mxnet"}
    with open_pool(workers=1, **settings) as ps:
        yield ps


@needs_venv
def test_a_task_of_the_mxnet_runtime_runs_in_the_venv(pools):
    main, there = pools.run([Task(TASKS + "interpreter"), Task(TASKS + "interpreter", runtime="mxnet")])
    assert main.status is Status.RAISED  # no mxnet in this interpreter
    assert there.status is Status.OK, there
    info = there.value
    assert os.path.samefile(info["executable"], ADAPTER.runtime.python())
    assert info["numpy"].startswith("1.") and info["mxnet"] == "1.9.1"
    # the zygote's warm-up turned the NumPy semantics on, and the workers inherited them
    assert info["np_shape"] and info["np_array"] and info["engine"] == "NaiveEngine"
    # the zygote stayed single-threaded after importing mxnet: it forks its workers
    assert pools.pool_for(Task(TASKS + "interpreter", runtime="mxnet")).mode == "fork"
    (zero,) = pools.run([Task(TASKS + "zero_size_sum", runtime="mxnet")])
    assert zero.status is Status.OK and zero.value.shape == (3,)


@needs_venv
def test_mining_runs_in_the_venv():
    from xamt.catalog.worker import mine_in_child

    cat = mine_in_child(ADAPTER, timeout=300)
    names = {r.qualname for r in cat.records}
    assert cat.version == "1.9.1" and len(names) >= 250  # 283 measured
    assert {"mxnet.numpy.sum", "mxnet.numpy.linalg.inv", "mxnet.numpy_extension.relu",
            "mxnet.numpy.ndarray.sum"} <= names
    # numpy's functions re-exported by mx.np, stub methods, and semantics switches stay out
    assert not {"mxnet.numpy.allclose", "mxnet.numpy.ndarray.sin",
                "mxnet.numpy_extension.set_np"} & names
