"""The MLX adapter, whose library lives in a venv of its own (``make venv-mlx``): the version asked
of that interpreter, a sandbox runtime started from it (conversions, a call that returns, a lazy
kernel's error attributed to the call, a benign dtype refusal), mining in it with the nanobind
signature hook.

The tests that need the venv skip without it. Tasks run in the venv's workers come from
``mlx_tasks.py`` (the venv has no pytest to import this module with).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from sandbox import Status, Task
from tests.groups.helpers import unary
from xamt.libraries.registry import Registry

TASKS = "tests.catalog.mlx_tasks:"

ADAPTER = Registry().get("mlx")
needs_venv = pytest.mark.skipif(
    not os.access(ADAPTER.runtime.python(), os.X_OK),
    reason=f"{ADAPTER.runtime.venv} is absent (make venv-mlx makes it; it needs the network)")


def test_the_adapter_describes_a_venv_runtime_without_importing_mlx():
    assert ADAPTER.runtime.venv == ".venv-mlx" and ADAPTER.runtime.python().endswith(
        os.path.join(".venv-mlx", "bin", "python"))
    assert ADAPTER.pivot_rank > Registry().get("numpy").pivot_rank
    # MLX has no complex128; it has bfloat16
    assert "complex128" not in ADAPTER.dtypes and ADAPTER.dtypes["bfloat16"] == "bfloat16"
    assert ADAPTER.finish_ref == "xamt.libraries.mlx:finish"  # lazy: evaluated inside the call
    env = ADAPTER.runtime.child_environment({"PYTHONPATH": "elsewhere", "MLX_DISABLE_COMPILE": "1"})
    assert env["PYTHONPATH"].split(os.pathsep)[1:] == ["elsewhere"]
    # the runtime's configuration wins over the user's environment
    assert env["MLX_DISABLE_COMPILE"] == "0"
    # plumbing is not mined
    assert ADAPTER.is_excluded("mlx.core.eval") and ADAPTER.is_excluded("mlx.core.random.seed")
    assert not ADAPTER.is_excluded("mlx.core.sum")


def test_a_nanobind_function_is_an_api_callable():
    """MLX's functions are nanobind ``nb_func`` objects, for which ``inspect.isroutine`` is
    False: the catalog takes them as routine-like by their type's name."""
    from xamt.catalog.ownership import is_api_callable

    nb_func = type("nb_func", (), {"__call__": lambda self, *a: None})
    other = type("nb_thing", (), {"__call__": lambda self, *a: None})
    assert is_api_callable(nb_func()) and not is_api_callable(other())


def test_mlx_dtype_refusals_are_benign_and_shape_refusals_judged():
    """MLX's refusals as 0.32.4 words them: a refused dtype is an expected refusal; a refused
    shape is neither benign nor internal, the status oracle judges it."""
    from xamt.oracle import ErrorKinds

    kinds = ErrorKinds.load()
    benign = [
        "[linalg::inv] Arrays must have type float32 or float64. Received array with type int32.",
        "[linalg::svd] Arrays must have type float32, float64 or complex64. Received array with type bool.",
        "[matmul] Only inexact types are supported but int32 and int32 were provided which results "
        "in int32, which is not a floating point type.",
        "[bitwise_invert] Bitwise inverse only allowed on integer types.",
        "[remainder] Complex type not supported.",
    ]
    for text in benign:
        assert kinds.classify("ValueError", text)[0] == "benign", text
    assert kinds.classify("ValueError", "[reshape] Cannot reshape array of size 6 into shape (4).")[0] == "other"
    assert kinds.classify("ValueError", "[conv] Only works for inputs with 1-3 spatial dimensions.")[0] == "other"


@needs_venv
def test_installed_and_version_are_asked_of_the_venv():
    assert ADAPTER.is_installed()
    assert ADAPTER.version() == "0.32.4"


@pytest.fixture(scope="module")
def pools():
    """A pool set from ``pool_settings([numpy, mlx])``: the main zygote and MLX's."""
    from xamt.exec.pools import open_pool, pool_settings

    settings = pool_settings([Registry().get("numpy"), ADAPTER])
    assert set(settings["runtimes"]) == {"mlx"}
    with open_pool(workers=1, **settings) as ps:
        yield ps


@needs_venv
def test_a_task_of_the_mlx_runtime_runs_in_the_venv(pools):
    main, there = pools.run([Task(TASKS + "interpreter"), Task(TASKS + "interpreter", runtime="mlx")])
    assert main.status is Status.RAISED  # no mlx in this interpreter
    assert there.status is Status.OK, there
    info = there.value
    assert os.path.samefile(info["executable"], ADAPTER.runtime.python())
    assert info["mlx"] == "0.32.4" and info["numpy"].startswith("2.")
    assert info["device"] == "Device(cpu, 0)" and info["disable_compile"] == "0"
    # the zygote stayed single-threaded after importing mlx: it forks its workers
    assert pools.pool_for(Task(TASKS + "interpreter", runtime="mlx")).mode == "fork"
    assert info["threads"] in (None, 1)
    (conv,) = pools.run([Task(TASKS + "conversions", runtime="mlx")])
    assert conv.status is Status.OK, conv
    assert conv.value["dtype"] == "mlx.core.float64" and conv.value["exact"]
    assert conv.value["caller_copy"] and conv.value["result_copy"]
    assert "complex128" in conv.value["complex128"] and "complex128" in conv.value["no_dtype"]
    assert conv.value["float64"] == "mlx.core.float64"
    assert conv.value["names"] == ["float32", "bool", "bfloat16"]


@needs_venv
def test_members_run_in_the_runtime_with_lazy_errors_attributed(pools):
    """Groups of numpy and mlx.core members through the group executor as the registry build
    and the campaign run them: ``exp`` returns numpy's numbers on float32; ``linalg.inv`` of a
    singular matrix raises MLX's kernel error from the call (MLX is lazy: without the adapter's
    ``finish`` it would surface converting the output, as ``unserializable``), and its int32
    refusal is MLX's dtype check."""
    from xamt.exec.group import ExecItem, GroupExecutor

    adapters = {"numpy": Registry().get("numpy"), "mlx": ADAPTER}
    exp = unary("x:exp/generic", [("numpy", "numpy.exp", "numpy:exp"),
                                  ("mlx", "mlx.core.exp", "mlx.core:exp")])
    inv = unary("x:inv/linalg", [("numpy", "numpy.linalg.inv", "numpy.linalg:inv"),
                                 ("mlx", "mlx.core.linalg.inv", "mlx.core.linalg:inv")])
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    singular = np.zeros((3, 3), np.float32)
    ex = GroupExecutor(pools, adapters, timeout=60)
    floats, lazy, ints = ex.run([ExecItem(exp, {0: x}), ExecItem(inv, {0: singular}),
                                 ExecItem(inv, {0: np.eye(3, dtype=np.int32)})])
    assert [r.status for r in floats.results] == ["ok", "ok"], floats.results
    got = floats.results[1].value
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)
    assert [r.status for r in lazy.results] == ["raised", "raised"], lazy.results
    assert lazy.results[1].error_type == "RuntimeError", lazy.results[1]
    assert "LU factorization failed" in (lazy.results[1].error_message or "")
    assert ints.results[0].status == "ok" and ints.results[1].status == "raised", ints.results
    assert "Received array with type int32" in (ints.results[1].error_message or "")


@needs_venv
def test_mining_runs_in_the_venv():
    from xamt.catalog.worker import mine_in_child

    cat = mine_in_child(ADAPTER, timeout=300)
    names = {r.qualname for r in cat.records}
    assert cat.version == "0.32.4" and len(names) >= 270  # 289 measured
    assert {"mlx.core.sum", "mlx.core.linalg.inv", "mlx.core.fft.rfft2", "mlx.core.random.normal",
            "mlx.nn.relu", "mlx.nn.losses.cross_entropy"} <= names
    # plumbing: evaluation, transforms, the seed, the model helpers stay out
    assert not {"mlx.core.eval", "mlx.core.compile", "mlx.core.grad", "mlx.core.random.seed",
                "mlx.nn.value_and_grad", "mlx.core.save"} & names
    # every API has a signature: the docstring's, or nanobind's where that does not parse
    assert all(r.params or r.signature_source != "none" for r in cat.records)
    by_name = {r.qualname: r for r in cat.records}
    total = by_name["mlx.core.sum"]
    assert total.kind == "function" and total.target == "mlx.core:sum"
    assert [p.name for p in total.params][:3] == ["a", "axis", "keepdims"]
    fft2 = {p.name: p.default for p in by_name["mlx.core.fft.fft2"].params}
    assert fft2["axes"] == "[-2, -1]" and fft2["norm"] == "'backward'"
    normal = {p.name: p.default for p in by_name["mlx.core.random.normal"].params}
    assert normal["shape"] == "[]" and normal["key"] == "None"


def _plan(pivot, member, category, qualname=None, canonical=None):
    """The plan of an MLX API (``member``, its parameters) against a torch pivot, from
    hand-written signatures: matching data only, no library."""
    from xamt.catalog import Param
    from xamt.matching.argplan import plan_for, slots_from
    from xamt.matching.data import load_matching_data
    from xamt.matching.roles import inputs_of

    def params(spec):
        return [Param(n, "keyword_only" if n == "stream" else "positional_or_keyword", d, d is None, None)
                for n, d in spec]

    data = load_matching_data()
    piv = inputs_of(params(pivot), data, category=category)
    overrides = data.overrides_for(qualname, canonical) if qualname else ()
    plan, _ = plan_for(piv, inputs_of(params(member), data, category=category), data, overrides)
    slots = {s.name: s.index for s in slots_from(piv)}
    return {a.param: a for a in plan.args}, slots, plan


def test_mlx_binary_cross_entropy_is_planned_on_probabilities():
    """mlx's binary_cross_entropy takes logits unless told ``with_logits=False``: planned
    against torch's (probabilities), the override always passes it."""
    args, slots, plan = _plan(
        [("input", None), ("target", None), ("weight", "None"), ("reduction", "'mean'")],
        [("inputs", None), ("targets", None), ("weights", "None"), ("with_logits", "True"),
         ("reduction", "'mean'")], "loss", "mlx.nn.losses.binary_cross_entropy",
        "binary_cross_entropy")
    assert (args["inputs"].slot, args["targets"].slot) == (slots["input"], slots["target"])
    assert args["with_logits"].slot is None and args["with_logits"].value is False and plan.complete


def test_mlx_full_s_vals_and_stream_are_planned():
    """mlx.core.full(shape, vals, dtype=None, *, stream=None) against numpy.full(shape,
    fill_value, dtype=None): ``vals`` is the fill value; ``stream`` is control, fed by no slot."""
    args, slots, plan = _plan([("shape", None), ("fill_value", None), ("dtype", "None")],
                              [("shape", None), ("vals", None), ("dtype", "None"), ("stream", "None")],
                              "creation")
    assert args["vals"].slot == slots["fill_value"] and plan.complete
    assert "stream" not in args or args["stream"].slot is None
