"""The PaddlePaddle adapter, whose library lives in a venv of its own (``make venv-paddle``): the
version asked of that interpreter, a sandbox runtime started from it (conversions, a group run
beside numpy, a raise and a crash attributed), mining in it.

The tests that need the venv skip without it. Tasks run in the venv's workers come from
``paddle_tasks.py`` (the venv has no pytest to import this module with).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from sandbox import Status, Task
from xamt.libraries.registry import Registry

TASKS = "tests.catalog.paddle_tasks:"

ADAPTER = Registry().get("paddle")
needs_venv = pytest.mark.skipif(
    not os.access(ADAPTER.runtime.python(), os.X_OK),
    reason=f"{ADAPTER.runtime.venv} is absent (make venv-paddle makes it; it needs the network)")


def test_the_adapter_describes_a_venv_runtime_without_importing_paddle():
    import sys

    assert ADAPTER.runtime.venv == ".venv-paddle" and ADAPTER.runtime.python().endswith(
        os.path.join(".venv-paddle", "bin", "python"))
    assert ADAPTER.pivot_rank > Registry().get("numpy").pivot_rank
    env = ADAPTER.runtime.child_environment({"PYTHONPATH": "elsewhere", "FLAGS_check_nan_inf": "1"})
    assert env["PYTHONPATH"].split(os.pathsep)[1:] == ["elsewhere"]
    # the runtime's flags win over the user's: they change what is compared
    assert env["FLAGS_check_nan_inf"] == "0" and env["FLAGS_call_stack_level"] == "1"
    # paddle has no uint16/32/64 tensor made from numpy
    assert not {"uint16", "uint32", "uint64"} & set(ADAPTER.dtypes.values())
    assert "paddle" not in sys.modules


@needs_venv
def test_installed_and_version_are_asked_of_the_venv():
    assert ADAPTER.is_installed()
    assert ADAPTER.version() == "3.3.1"


@pytest.fixture(scope="module")
def pools():
    """A pool set from ``pool_settings([numpy, paddle])``: the main zygote and paddle's."""
    from xamt.exec.pools import open_pool, pool_settings

    settings = pool_settings([Registry().get("numpy"), ADAPTER])
    assert set(settings["runtimes"]) == {"paddle"}
    with open_pool(workers=1, timeout=60, **settings) as ps:
        yield ps


@needs_venv
def test_a_task_of_the_paddle_runtime_runs_in_the_venv(pools):
    main, there = pools.run([Task(TASKS + "interpreter"), Task(TASKS + "interpreter", runtime="paddle")])
    assert main.status is Status.RAISED  # no paddle in this interpreter
    assert there.status is Status.OK, there
    info = there.value
    assert os.path.samefile(info["executable"], ADAPTER.runtime.python())
    assert info["paddle"] == "3.3.1" and info["device"] == "cpu" and info["dynamic"]
    assert info["flags"] == {"FLAGS_check_nan_inf": False, "FLAGS_call_stack_level": 1,
                             "FLAGS_use_onednn": False, "FLAGS_use_mkldnn": False}
    # the zygote stayed single-threaded after importing paddle: it forks its workers
    assert pools.pool_for(Task(TASKS + "interpreter", runtime="paddle")).mode == "fork"


@needs_venv
def test_each_dtype_is_held_as_itself_uint16_is_refused_and_inputs_are_copied(pools):
    names = list(ADAPTER.dtypes.values())
    held, refused, copied = pools.run([Task("tests.catalog.venv_tasks:held_dtypes", ("paddle", names), runtime="paddle"),
                                       Task(TASKS + "uint16_refused", runtime="paddle"),
                                       Task(TASKS + "copies_its_input", runtime="paddle")])
    # the tensor's own dtype: bfloat16 is not read as uint16 or back (the arrays' round trip is
    # test_venv_libraries.py's)
    assert held.status is Status.OK and held.value == names, held
    assert refused.status is Status.OK and "bfloat16" in refused.value
    assert copied.status is Status.OK, copied
    assert copied.value[0].tolist() == [1.0] * 3 and copied.value[1].tolist() == [3.0] * 3


@needs_venv
def test_a_group_runs_paddle_beside_numpy_and_attributes_a_crash(pools):
    from tests.groups.helpers import unary
    from xamt.exec.group import ExecItem, GroupExecutor
    from xamt.inputs import seed_inputs

    reg = Registry()
    adapters = {"numpy": reg.get("numpy"), "paddle": ADAPTER}
    g = unary("x:cumsum/generic", [("numpy", "numpy.cumsum", "numpy:cumsum"),
                                   ("paddle", "paddle.cumsum", "paddle:cumsum"),
                                   # a segfault in paddle's runtime, under paddle's own handler
                                   ("paddle", "tests.groups.crashers.segfault",
                                    "tests.groups.crashers:segfault")])
    inp = seed_inputs(g)[0]
    (run,) = GroupExecutor(pools, adapters, timeout=60).run([ExecItem(g, inp)])
    ours, theirs, crash = run.results
    assert ours.status == "ok" and theirs.status == "ok", (ours, theirs)
    assert np.allclose(theirs.value, ours.value) and theirs.value.dtype == ours.value.dtype
    assert crash.status == "crashed" and crash.outcome.signal_name == "SIGSEGV"


@needs_venv
def test_an_argument_check_raises_in_the_call_and_reads_as_ordinary(pools):
    from xamt.oracle import ErrorKinds

    (out,) = pools.run([Task(TASKS + "reduce_out_of_range", runtime="paddle")])
    assert out.status is Status.RAISED and out.error_type.endswith("ValueError"), out
    assert out.error_message.startswith("(InvalidArgument)")
    assert ErrorKinds.load().classify(out.error_type, out.error_message)[0] == "other"


@needs_venv
def test_mining_runs_in_the_venv():
    from xamt.catalog.worker import mine_in_child

    cat = mine_in_child(ADAPTER, timeout=300)
    names = {r.qualname for r in cat.records}
    assert cat.version == "3.3.1" and len(names) >= 900  # 1024 measured
    assert {"paddle.sum", "paddle.linalg.solve", "paddle.fft.rfft", "paddle.nn.functional.relu",
            "paddle.special.expm1", "paddle.Tensor.sum", "paddle.Tensor.abs_"} <= names
    # plumbing, paddle.fft's helpers, GPU-only kernels and Tensor conversions stay out
    assert not {"paddle.set_device", "paddle.seed", "paddle.fft.fft_c2c",
                "paddle.nn.functional.moe_permute", "paddle.Tensor.numpy",
                "paddle.Tensor.backward", "paddle.Tensor.concat"} & names


def test_a_missing_kernel_is_a_benign_refusal_and_an_argument_check_is_ordinary():
    """paddle's kernel registry refuses a dtype (or a CPU) it has no kernel for: a benign
    refusal, like TensorFlow's; its argument checks read as neither internal nor benign."""
    from xamt.oracle import ErrorKinds

    kinds = ErrorKinds.load()
    dtype = ("(NotFound) The kernel with key (CPU, Undefined(AnyLayout), float32) of kernel `real` "
             "is not registered. Selected wrong DataType `float32`. Paddle support following "
             "DataTypes: complex128, complex64.")
    assert kinds.classify("RuntimeError", dtype)[0] == "benign"
    assert kinds.classify("RuntimeError", "(NotFound) The kernel `rms_norm` is not registered.")[0] == "benign"
    check = ("(InvalidArgument) The reduce dim index 0 should be in the range [ -dimension(X), "
             "dimension(X) ) which dimension = 2. But received dim index = 5.\n  [Hint: Expected "
             "axis[i] < x_rank, but received axis[i]:5 >= x_rank:2.] (at /paddle/paddle/phi/"
             "infermeta/unary.cc:4104)")
    assert kinds.classify("ValueError", check)[0] == "other"
    # paddle's (Fatal) status is CPython's SystemError: internal
    assert kinds.classify("SystemError", "(Fatal) Operator rms_norm ...")[0] == "internal"
