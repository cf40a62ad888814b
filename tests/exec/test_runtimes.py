"""Libraries in runtimes of their own: keras on TensorFlow in the main zygote, keras on JAX and on
PyTorch each in a zygote whose KERAS_BACKEND says so; one group task per runtime; reproducers
hold only the members that can share the outlier's process."""
from __future__ import annotations

import numpy as np
import pytest

from tests.groups.helpers import unary
from xamt.exec.group import ExecItem, GroupExecutor
from xamt.exec.pools import MAIN_RUNTIME, compatible, open_pool, pool_settings, runtime_of
from xamt.libraries.registry import Registry

KERAS = ("keras", "keras_jax", "keras_torch")
BACKENDS = ("tensorflow", "jax", "torch")


def backend_code() -> np.ndarray:
    """Run in a worker: the backend its process imported keras with, as a comparable number."""
    import keras

    return np.array(BACKENDS.index(keras.backend.backend()))


@pytest.fixture(scope="module")
def adapters():
    reg = Registry()
    ads = {n: reg.get(n) for n in ("numpy", *KERAS)}
    missing = [a.import_name for a in ads.values() if not a.is_installed()]
    for lib in ("tensorflow", "jax", "torch"):
        if not reg.get(lib).is_installed():
            missing.append(lib)
    if missing:
        pytest.skip(f"needs {', '.join(sorted(set(missing)))}")
    return ads


def test_keras_backends_are_runtimes_of_their_own(adapters, monkeypatch):
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    assert [runtime_of(adapters[n]) for n in KERAS] == [None, "keras_jax", "keras_torch"]
    settings = pool_settings(adapters.values())
    assert settings["env"]["KERAS_BACKEND"] == "tensorflow"
    assert sorted(settings["runtimes"]) == ["keras_jax", "keras_torch"]
    for name, backend in (("keras_jax", "jax"), ("keras_torch", "torch")):
        runtime = settings["runtimes"][name]
        assert runtime["env"]["KERAS_BACKEND"] == backend and "keras" in runtime["preload"]
        assert runtime["python"] is None  # this interpreter
    # the runtime's setting defines the library: a user's KERAS_BACKEND changes only `keras`
    monkeypatch.setenv("KERAS_BACKEND", "torch")
    assert adapters["keras_jax"].worker_environment()["KERAS_BACKEND"] == "jax"
    assert adapters["keras"].worker_environment()["KERAS_BACKEND"] == "torch"


def test_reproducers_share_a_process_only_with_compatible_libraries(adapters, monkeypatch):
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    a = adapters
    assert compatible(a["numpy"], a["keras_jax"]) and compatible(a["keras"], a["numpy"])
    assert not compatible(a["keras"], a["keras_jax"]) and not compatible(a["keras_jax"], a["keras_torch"])
    assert a["keras_jax"].script_environment() == {"KERAS_BACKEND": "jax"}
    assert a["keras"].version().endswith("+tensorflow") and a["keras_torch"].version().endswith("+torch")


def test_a_group_task_splits_by_runtime_and_each_member_runs_on_its_backend(adapters):
    grp = unary("x:relu/activation", [("numpy", "numpy.abs", "numpy:abs")]
                + [(n, "keras.ops.relu", "keras.ops:relu") for n in KERAS])
    # which backend each member's process imported keras with
    probe = unary("x:backend/probe", [(n, "backend_code", "tests.exec.test_runtimes:backend_code")
                                      for n in KERAS])
    for m in probe.members:
        m.plan.args.clear()
    settings = pool_settings(adapters.values())
    with open_pool(workers=1, spares=0, timeout=120, confirm=False, **settings) as pool:
        assert sorted(pool.pools) == sorted([MAIN_RUNTIME, "keras_jax", "keras_torch"])
        ex = GroupExecutor(pool, adapters, timeout=120)
        x = np.array([-1.5, 0.0, 2.0], np.float32)
        run, backends = ex.run([ExecItem(grp, {0: x}), ExecItem(probe, {})])
        assert ex.stats["group_tasks"] == 3 + 3  # main (numpy, keras), keras_jax, keras_torch; thrice
    assert [r.status for r in run.results] == ["ok"] * 4
    for r in run.results[1:]:
        np.testing.assert_array_equal(r.value, np.maximum(x, 0))
    assert [int(r.value) for r in backends.results] == [0, 1, 2]


def test_keras_on_jax_is_dtype_probed_by_tracing_with_the_verdicts_of_running(adapters):
    """validation.toml traces Keras-on-JAX's dtype probes (``jax.eval_shape``, as JAX's own), so
    a probed dtype costs no XLA compilation per operation; the verdicts are those of running
    the calls (bitwise_invert refuses floats, abs takes every dtype), a call the trace cannot
    take (``keras.ops.dtype`` returns a string) included."""
    from xamt.groups.annotations import load_settings
    from xamt.inputs import materialise, seed_inputs

    abstract = load_settings().probe_abstract
    assert abstract["keras_jax"] == "xamt.libraries.jax:probe_call"
    grp = unary("x:probe/generic", [("keras_jax", f"keras.ops.{n}", f"keras.ops:{n}")
                                    for n in ("abs", "bitwise_invert", "dtype")])
    values = materialise(seed_inputs(grp)[0])
    jobs = [(grp, k, values, [0]) for k in range(3)]
    dtypes = ["bool", "int32", "float16", "complex64"]
    settings = pool_settings([adapters["numpy"], adapters["keras_jax"]])
    with open_pool(workers=1, spares=0, timeout=120, confirm=False, **settings) as pool:
        ex = GroupExecutor(pool, adapters, timeout=120)
        traced = ex.probe(jobs, dtypes, abstract)
        ran = ex.probe(jobs, dtypes, {})
    statuses = [{d: s for d, (s, _) in r.items()} for r in traced]
    assert statuses == [{d: s for d, (s, _) in r.items()} for r in ran]
    assert statuses[0] == dict.fromkeys(dtypes, "ok")
    assert statuses[1]["int32"] == "ok" and statuses[1]["float16"] == "raised"
    assert statuses[2] == dict.fromkeys(dtypes, "ok")
