"""The PyTensor adapter, whose library lives in a venv of its own (``make venv-pytensor``): the
runtime it describes (flags, compile folder), the signatures of its ``Elemwise`` operators, the
version asked of that interpreter, a sandbox runtime started from it (configuration, compiled
calls kept per graph, errors of the compiled function), members run through the group executor,
mining in it.

The tests that need the venv skip without it. Tasks run in the venv's workers come from
``pytensor_tasks.py`` (the venv has no pytest to import this module with).
"""
from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

from sandbox import Status, Task
from tests.groups.helpers import unary
from xamt.libraries.registry import Registry

TASKS = "tests.catalog.pytensor_tasks:"

ADAPTER = Registry().get("pytensor")
needs_venv = pytest.mark.skipif(
    not os.access(ADAPTER.runtime.python(), os.X_OK),
    reason=f"{ADAPTER.runtime.venv} is absent (make venv-pytensor makes it; it needs the network)")


def _flags(text):
    return dict(item.split("=", 1) for item in text.split(","))


def test_the_adapter_describes_a_venv_runtime_and_pins_pytensor_s_flags():
    assert ADAPTER.runtime.venv == ".venv-pytensor" and ADAPTER.runtime.python().endswith(
        os.path.join(".venv-pytensor", "bin", "python"))
    assert ADAPTER.pivot_rank > Registry().get("numpy").pivot_rank
    assert "bfloat16" not in ADAPTER.dtypes and ADAPTER.dtypes["complex64"] == "complex64"
    env = ADAPTER.runtime.child_environment({"PYTHONPATH": "elsewhere",
                                             "PYTENSOR_FLAGS": "floatX=float32,linker=numba"})
    assert env["PYTHONPATH"].split(os.pathsep)[1:] == ["elsewhere"]
    # the runtime's flags win over the user's
    flags = _flags(env["PYTENSOR_FLAGS"])
    assert flags["floatX"] == "float64" and flags["cast_policy"] == "custom" and flags["openmp"] == "False"
    # the C backend: pinned in code for the compiled functions, in the flags for those PyTensor
    # compiles by itself (an OpFromGraph op's inner graph)
    assert flags["linker"] == "cvm"
    # one compile folder per process, under the temporary folder, which the sandbox lets
    # confined workers write (a variable ending in _CACHE_DIR names it)
    folder = flags["base_compiledir"]
    assert folder == os.path.join(tempfile.gettempdir(), f"xamt-pytensor-{os.getpid()}")
    assert env["XAMT_PYTENSOR_CACHE_DIR"] == folder
    assert ADAPTER.literal_environment == ("PYTENSOR_FLAGS",)


def test_elemwise_operators_get_positional_parameters_by_arity():
    from xamt.libraries.pytensor import elemwise_signature

    class Scalar:
        def __init__(self, nin):
            self.nin = nin

    class Elemwise:  # named as PyTensor's class: the hook reads the type's name, not the library
        def __init__(self, nin):
            self.scalar_op = Scalar(nin)

    (unary_spec,) = elemwise_signature(Elemwise(1), "exp", None)
    assert [p[:2] for p in unary_spec] == [("x", "positional_only"), ("name", "keyword_only"),
                                           ("return_list", "keyword_only")]
    (variadic,) = elemwise_signature(Elemwise(-1), "add", None)  # add, mul: any number of inputs
    assert [p[0] for p in variadic[:2]] == ["x1", "x2"]
    (ternary,) = elemwise_signature(Elemwise(3), "betainc", None)
    assert [p[0] for p in ternary[:3]] == ["x1", "x2", "x3"]
    # three inputs or more: the names of the Python function PyTensor's decorator wrapped

    def clip(x, min, max):
        pass

    named = Elemwise(3)
    setattr(named, "__epydoc_asRoutine", clip)
    (spec,) = elemwise_signature(named, "clip", None)
    assert [p[:2] for p in spec[:3]] == [("x", "positional_only"), ("min", "positional_only"),
                                         ("max", "positional_only")]
    # a scalar op without a fixed arity (nin -1): the wrapped function's three or more names,
    # else two inputs (add's wrapped function is add(a, *other_terms))

    def betaincinv(a, b, x):
        pass

    def add(a, *other_terms):
        pass

    for wrapped, expected in ((betaincinv, ["a", "b", "x"]), (add, ["x1", "x2"])):
        op = Elemwise(-1)
        setattr(op, "__epydoc_asRoutine", wrapped)
        (spec,) = elemwise_signature(op, wrapped.__name__, None)
        assert [p[0] for p in spec if p[1] == "positional_only"] == expected
    assert elemwise_signature(Elemwise(1), "exp", "pytensor:TensorVariable") is None
    assert elemwise_signature(Scalar(1), "nin", None) is None


def test_an_adapter_s_routine_types_make_callable_instances_apis():
    from xamt.catalog.ownership import is_api_callable

    class Elemwise:
        def __call__(self, *inputs):
            return inputs

    op = Elemwise()
    assert not is_api_callable(op)
    assert is_api_callable(op, frozenset({"Elemwise"}))
    assert not is_api_callable(Elemwise, frozenset({"Elemwise"}))  # the class itself is not
    assert not is_api_callable(object(), frozenset({"object"}))  # nor what cannot be called


@needs_venv
def test_installed_and_version_are_asked_of_the_venv():
    assert ADAPTER.is_installed()
    assert ADAPTER.version() == "3.0.7"


@pytest.fixture(scope="module")
def pools():
    """A pool set from ``pool_settings([numpy, pytensor])``: the main zygote and PyTensor's."""
    from xamt.exec.pools import open_pool, pool_settings

    settings = pool_settings([Registry().get("numpy"), ADAPTER])
    assert set(settings["runtimes"]) == {"pytensor"}
    with open_pool(workers=1, timeout=300, **settings) as ps:
        yield ps


@needs_venv
def test_a_task_of_the_pytensor_runtime_runs_in_the_venv_with_its_flags(pools):
    main, there = pools.run([Task(TASKS + "interpreter"), Task(TASKS + "interpreter", runtime="pytensor")])
    assert main.status is Status.RAISED  # no pytensor in this interpreter
    assert there.status is Status.OK, there
    info = there.value
    assert os.path.samefile(info["executable"], ADAPTER.runtime.python())
    assert info["numpy"] == "2.4.6" and info["pytensor"] == "3.0.7"
    assert info["floatX"] == "float64" and info["cast_policy"] == "custom" and info["optimizer"] == "o4"
    assert info["openmp"] is False and info["blas"] == ""
    folder = _flags(ADAPTER.runtime.env["PYTENSOR_FLAGS"])["base_compiledir"]
    assert info["base_compiledir"] == folder and info["compiledir"].startswith(folder + os.sep)
    # the zygote stayed single-threaded after importing pytensor: it forks its workers
    assert pools.pool_for(Task(TASKS + "interpreter", runtime="pytensor")).mode == "fork"
    assert info["threads"] in (None, 1)


@needs_venv
def test_graphs_are_compiled_for_the_c_backend_and_kept_per_graph(pools):
    (keys,) = pools.run([Task(TASKS + "graph_keys", runtime="pytensor")])
    assert keys.status is Status.OK, keys
    assert keys.value == dict.fromkeys(keys.value, True) and len(keys.value) == 6
    (out,) = pools.run([Task(TASKS + "compiled_calls", runtime="pytensor")], timeout=600)
    assert out.status is Status.OK, out
    got = out.value
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.array([[10.0], [20.0]], np.float32)
    np.testing.assert_array_equal(got["first"], x + y)
    np.testing.assert_array_equal(got["again"], x + 1 + y)
    assert got["first"].dtype == np.float32 and got["cached"]
    np.testing.assert_array_equal(got["sums"][0], x.sum(axis=0))
    np.testing.assert_array_equal(got["sums"][1], x.sum(axis=1))
    assert got["linker"] == "VMLinker"  # the C backend's linker ("cvm"), not Numba's
    assert got["mismatch"] == "ValueError"
    assert [p.tolist() for p in got["parts"]] == [[0.0], [1.0, 2.0]]
    assert got["compiled_files"] > 0  # compiled modules landed in the process's compile folder


@needs_venv
def test_members_run_in_the_runtime_with_results_attributed(pools):
    """A group of numpy.exp and pytensor.tensor.exp through the group executor, as the registry
    build and the campaign run it: the PyTensor member is sent to its runtime and returns
    numpy's numbers, in float32 for float32 and, like numpy, float64 for int32 (PyTensor's
    custom cast policy upcasts int32 to float64 for a float result)."""
    from xamt.exec.group import ExecItem, GroupExecutor

    adapters = {"numpy": Registry().get("numpy"), "pytensor": ADAPTER}
    grp = unary("x:exp/generic", [("numpy", "numpy.exp", "numpy:exp"),
                                  ("pytensor", "pytensor.tensor.exp", "pytensor.tensor:exp")])
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    ex = GroupExecutor(pools, adapters, timeout=300)
    floats, ints = ex.run([ExecItem(grp, {0: x}), ExecItem(grp, {0: x.astype(np.int32)})])
    assert [r.status for r in floats.results] == ["ok", "ok"], floats.results
    got = floats.results[1].value
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)
    assert [r.status for r in ints.results] == ["ok", "ok"], ints.results
    assert ints.results[1].value.dtype == np.float64
    np.testing.assert_allclose(ints.results[1].value, np.exp(x.astype(np.int32)), rtol=1e-12)


@needs_venv
def test_dtypes_are_probed_on_the_python_linker_and_compile_nothing(pools):
    """validation.toml's dtype probe for PyTensor (``probe_call``) builds each member's graph on
    the cast inputs and runs it with the Python linker: the verdicts of calls compiled for the C
    backend (exp takes every dtype probed; gammaln refuses complex64 when it runs; invert
    refuses floats when its graph is built), and no module lands in the compile folder."""
    from xamt.exec.group import GroupExecutor
    from xamt.groups.annotations import load_settings
    from xamt.inputs.materialise import materialise
    from xamt.inputs.seed import seed_inputs

    abstract = load_settings().probe_abstract
    assert abstract["pytensor"] == "xamt.libraries.pytensor:probe_call"
    adapters = {"numpy": Registry().get("numpy"), "pytensor": ADAPTER}
    grp = unary("x:probe/generic", [("pytensor", f"pytensor.tensor.{n}", f"pytensor.tensor:{n}")
                                    for n in ("exp", "gammaln", "invert")])
    values = materialise(seed_inputs(grp)[0])
    ex = GroupExecutor(pools, adapters, timeout=300)
    (before,) = pools.run([Task(TASKS + "compiled_files", runtime="pytensor")])
    dtypes = ["bool", "int32", "uint8", "float16", "complex64"]
    exp, gammaln, invert = ex.probe([(grp, k, values, [0]) for k in range(3)], dtypes, abstract)
    (after,) = pools.run([Task(TASKS + "compiled_files", runtime="pytensor")])
    assert {d: s for d, (s, _) in exp.items()} == dict.fromkeys(dtypes, "ok"), exp
    assert gammaln["complex64"] == ("raised", "TypeError") and gammaln["float16"][0] == "ok", gammaln
    assert invert["int32"][0] == "ok" and invert["float16"] == ("raised", "TypeError"), invert
    assert before.status is Status.OK and after.value == before.value


@needs_venv
def test_inner_graphs_compile_for_the_c_backend_and_probes_compile_none(pools):
    """``pad`` is an OpFromGraph op, which compiles its inner graph with the configured linker:
    the runtime's flags make that the C backend (PyTensor's default is Numba, seconds of LLVM
    a call), and a dtype probe (``probe_call``) runs it on the Python linker, compiling
    nothing."""
    (out,) = pools.run([Task(TASKS + "inner_graphs", runtime="pytensor")], timeout=600)
    assert out.status is Status.OK, out
    got = out.value
    np.testing.assert_array_equal(got["computed"], np.pad(np.ones((2, 3), np.float32), 1))
    assert got["numba_after_compute"] is False and got["files_after_compute"] > got["files_before"]
    assert got["probe_files_added"] == 0 and got["numba_after_probe"] is False


@needs_venv
def test_the_builds_python_linker_compiles_nothing(pools):
    """``XAMT_PYTENSOR_LINKER=py``, which only the registry build's workers get
    (``validation.toml [build_environment]``), runs every call on the Python linker, inner
    graphs included: the values of the C backend, and no module in the compile folder. A linker
    name the adapter does not know is refused, not ignored."""
    from scipy.special import gammaln

    from xamt.groups.annotations import load_settings

    settings = load_settings()
    assert settings.build_environment["XAMT_PYTENSOR_LINKER"] == "py"
    assert "XAMT_PYTENSOR_LINKER" not in settings.environment  # a campaign's workers compile C
    (out,) = pools.run([Task(TASKS + "python_linker_calls", runtime="pytensor")], timeout=600)
    assert out.status is Status.OK, out
    got = out.value
    np.testing.assert_allclose(got["gammaln"], gammaln(np.arange(1, 4)), rtol=1e-6)  # int16 computes in float32
    np.testing.assert_array_equal(got["pad"], np.pad(np.ones((2, 2), np.uint8), 1))
    assert got["files_added"] == 0
    assert "XAMT_PYTENSOR_LINKER must be 'cvm' or 'py'" in got["refused"]


@needs_venv
def test_mining_runs_in_the_venv():
    from xamt.catalog.worker import mine_in_child

    cat = mine_in_child(ADAPTER, timeout=300)
    names = {r.qualname for r in cat.records}
    assert cat.version == "3.0.7" and len(names) >= 250  # 273 measured
    assert {"pytensor.tensor.exp", "pytensor.tensor.sum", "pytensor.tensor.concatenate",
            "pytensor.tensor.linalg.solve", "pytensor.tensor.special.softmax"} <= names
    # variable constructors, graph plumbing and gradients stay out
    assert not {"pytensor.tensor.matrix", "pytensor.tensor.dvectors", "pytensor.tensor.as_tensor_variable",
                "pytensor.tensor.grad", "pytensor.tensor.vectorize", "pytensor.tensor.math.scalar_elemwise"} & names
    # an Elemwise operator is mined, with its positional parameters from the signature hook
    exp = next(r for r in cat.records if r.qualname == "pytensor.tensor.exp")
    assert exp.kind == "function" and exp.target == "pytensor.tensor:exp"
    assert [p.name for p in exp.params][:1] == ["x"]
    add = next(r for r in cat.records if r.qualname == "pytensor.tensor.add")
    assert [p.name for p in add.params][:2] == ["x1", "x2"]
