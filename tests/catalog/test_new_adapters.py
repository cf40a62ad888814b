"""The array-api-strict and dask adapters: discovery, conversions, mining, dask's scheduler.

Each test that needs a library skips when it is not installed. ``dask_compute_probe`` is a
sandbox task (imported inside a worker), not a test.
"""
import json
import subprocess
import sys

import pytest

from xamt.libraries.base import resolve_ref
from xamt.libraries.registry import Registry

NEW = ("array_api_strict", "dask")


def _values(np, name):
    """A small array of numpy dtype ``name`` with values the dtype holds exactly."""
    if name == "bool":
        return np.array([[True, False, True], [False, False, True]])
    x = np.arange(-2, 4).reshape(2, 3)
    if name.startswith("uint"):
        x = x + 2
    if name.startswith("complex"):
        x = x + 0.5j * x[::-1]
    return x.astype(name)


def test_registry_discovers_the_new_adapters_after_the_preferred_ones():
    names = Registry().names()
    # not in the preferred (reference) order: after those libraries, by name
    rest = [n for n in names if n not in ("numpy", "scipy", "torch", "tensorflow", "jax", "keras")]
    assert names[0] == "numpy" and set(NEW) <= set(rest) and rest == sorted(rest)
    for name in NEW:
        assert Registry().get(name).pivot_rank > Registry().get("numpy").pivot_rank


def test_describing_the_new_adapters_imports_neither_library():
    code = (
        "import sys; from xamt.libraries.registry import Registry; "
        "r = Registry(); [(a.version(), a.describe()) for a in r if a.name in "
        f"{NEW!r}]; import json; "
        "print(json.dumps([m for m in ('dask', 'array_api_strict') if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("lib", NEW)
def test_round_trip_of_every_dtype_in_the_table(lib):
    np = pytest.importorskip("numpy")
    adapter = Registry().get(lib)
    pytest.importorskip(adapter.import_name, reason=f"{lib} is not installed")
    to_lib, to_numpy = resolve_ref(adapter.from_numpy_ref), resolve_ref(adapter.to_numpy_ref)
    dtype = resolve_ref(adapter.dtype_ref)
    assert "bfloat16" not in adapter.dtypes
    for name in adapter.dtypes.values():
        x = _values(np, name)
        back = to_numpy(to_lib(x))
        assert isinstance(back, np.ndarray) and back.dtype == np.dtype(name), name
        assert np.array_equal(back, x), name
        assert to_numpy(to_lib(x[0, 0])).shape == ()  # 0-d arrays too
        assert dtype(name) is not None
    # the conversion copies: changing the numpy array later changes nothing
    x = np.ones(3, dtype=np.float32)
    converted = to_lib(x)
    x[:] = 7
    assert (to_numpy(converted) == 1).all()


def test_array_api_strict_names_its_dtype_objects_and_results():
    np = pytest.importorskip("numpy")
    xp = pytest.importorskip("array_api_strict")
    adapter = Registry().get("array_api_strict")
    to_lib, to_numpy = resolve_ref(adapter.from_numpy_ref), resolve_ref(adapter.to_numpy_ref)
    assert to_numpy(xp.float32) == "float32" and to_numpy(xp.bool) == "bool"
    a = to_lib(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert to_numpy(xp.result_type(a, xp.float32)) == "float64"
    np.testing.assert_allclose(to_numpy(xp.linalg.matmul(a, a)), [[7.0, 10.0], [15.0, 22.0]])


def test_a_dtype_the_standard_lacks_is_an_unsupported_dtype_refusal():
    pytest.importorskip("array_api_strict")
    from xamt.oracle import ErrorKinds

    dtype = resolve_ref(Registry().get("array_api_strict").dtype_ref)
    for name in ("float16", "bfloat16"):
        with pytest.raises(TypeError) as err:
            dtype(name)
        assert ErrorKinds.load().classify("TypeError", str(err.value))[0] == "benign"


def test_dask_to_numpy_computes_lazy_results():
    np = pytest.importorskip("numpy")
    da = pytest.importorskip("dask.array")
    adapter = Registry().get("dask")
    to_lib, to_numpy = resolve_ref(adapter.from_numpy_ref), resolve_ref(adapter.to_numpy_ref)
    x = to_lib(np.arange(12.0).reshape(3, 4))
    assert x.numblocks == (1, 1)  # one chunk (see xamt/libraries/dask.py)
    total = da.sum(x, axis=0)
    assert isinstance(total, da.Array)  # lazy until to_numpy
    np.testing.assert_array_equal(to_numpy(total), [12.0, 15.0, 18.0, 21.0])
    q, r = da.linalg.qr(x)
    np.testing.assert_allclose(to_numpy(q) @ to_numpy(r), np.arange(12.0).reshape(3, 4), atol=1e-12)


@pytest.mark.parametrize("lib", NEW)
def test_literal_forms_evaluate(lib):
    np = pytest.importorskip("numpy")
    adapter = Registry().get(lib)
    pytest.importorskip(adapter.import_name, reason=f"{lib} is not installed")
    scope = {"np": np}
    for line in adapter.literal_imports:
        exec(line, scope)
    x = np.arange(4.0)
    scope["x"] = x
    made = eval(adapter.literal_array.format("x"), scope)
    np.testing.assert_array_equal(np.asarray(made), x)
    assert eval(adapter.literal_dtype.format("int32"), scope) == resolve_ref(adapter.dtype_ref)("int32")


@pytest.mark.parametrize("lib,target", [("array_api_strict", "array_api_strict:sqrt"),
                                        ("dask", "dask.array:sqrt")])
def test_reproducers_run_the_library_call(lib, target, tmp_path):
    """A literal reproducer and a msgpack one, each against numpy.cbrt (they differ) and
    numpy.sqrt (they agree): the script computes the library's result itself."""
    np = pytest.importorskip("numpy")
    adapter = Registry().get(lib)
    pytest.importorskip(adapter.import_name, reason=f"{lib} is not installed")
    from tests.groups.helpers import member
    from xamt import literal
    from xamt.repro import ReproSpec, render, verify, write

    x_slot = [(0, "x", 0, None, True)]
    values = {0: np.array([[0.25, 1.0], [np.inf, 4.0]], np.float32)}
    call = member(lib, target.replace(":", "."), target, x_slot)
    for ref, differs in (("numpy:cbrt", True), ("numpy:sqrt", False)):
        ref_call = member("numpy", ref.replace(":", "."), ref, x_slot)
        text = literal.render("t", literal.LiteralCall(target, call, adapter, values),
                              literal.LiteralCall(ref, ref_call, Registry().get("numpy"), values),
                              expect="value")
        script = tmp_path / f"literal_{ref[-4:]}.py"
        script.write_text(text)
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)
        assert done.returncode == int(differs), done.stdout + done.stderr
        spec = ReproSpec(title="t", header="h", normalisation=None, expect="value", outlier=1,
                         reference=0, calls=[(ref, ref_call, Registry().get("numpy"), values),
                                             (target, call, adapter, values)])
        result = verify(write(tmp_path / f"msgpack_{ref[-4:]}", render(spec), [values]),
                        expect="value", timeout=120)
        assert result.reproduced is differs, result.output_tail


@pytest.fixture(scope="module")
def mined():
    from xamt.catalog import mine_library

    def mine(lib):
        adapter = Registry().get(lib)
        pytest.importorskip(adapter.import_name, reason=f"{lib} is not installed")
        return {n: r for r in mine_library(adapter).records for n in r.names}

    return mine


def test_array_api_strict_mining(mined):
    recs = mined("array_api_strict")
    assert len({id(r) for r in recs.values()}) >= 170  # 174 with array-api-strict 2.6.1
    matmul = recs["array_api_strict.linalg.matmul"]
    assert matmul.target == "array_api_strict:linalg.matmul" and matmul.kind == "function"
    assert recs["array_api_strict.fft.fft"].target == "array_api_strict:fft.fft"
    for name in ("concat", "permute_dims", "pow", "cumulative_sum", "unique_values"):
        assert f"array_api_strict.{name}" in recs
    for name in ("set_array_api_strict_flags", "get_array_api_strict_flags",
                 "linalg.get_array_api_strict_flags", "linalg.requires_extension",
                 "fft.requires_extension", "fft.device_supports_dtype"):
        assert f"array_api_strict.{name}" not in recs


def test_dask_mining(mined):
    recs = mined("dask")
    assert len({id(r) for r in recs.values()}) >= 320  # 336 with dask 2026.8.0
    total = recs["dask.array.sum"]
    assert total.kind == "function" and [p.name for p in total.params][:2] == ["a", "axis"]
    method = recs["dask.array.Array.sum"]
    assert method.kind == "method" and method.receiver and method.target == "dask.array:Array.sum"
    for name in ("linalg.qr", "linalg.svd", "fft.fft", "random.normal", "sin", "zeros", "ones",
                 "isneginf", "einsum"):
        assert f"dask.array.{name}" in recs, name
    # forwarding wrappers, (*args, **kwargs) to inspection, get the signature they forward to
    sinc = recs["dask.array.sinc"]
    assert [(p.name, p.kind) for p in sinc.params] == [("x", "positional_only")]
    assert [p.name for p in recs["dask.array.zeros"].params][:2] == ["shape", "dtype"]
    normal = recs["dask.array.random.normal"]
    assert [p.name for p in normal.params][:4] == ["loc", "scale", "size", "chunks"]
    assert [p.name for p in recs["dask.array.Array.transpose"].params] == ["axes"]  # methods: as inspected
    # graph plumbing, test helpers and what the submodules import are not mined
    for name in ("map_blocks", "from_array", "rechunk", "assert_eq", "compute", "Array.compute",
                 "Array.persist", "linalg.tokenize", "linalg.concatenate", "linalg.default_rng",
                 "random.normalize_chunks", "fft.fft_wrap", "fft.asarray"):
        assert f"dask.array.{name}" not in recs, name


def dask_compute_probe() -> dict:
    """Sandbox task: compute a dask graph of several blocks through the adapter and report the
    scheduler dask uses and the threads the blocks ran in."""
    import threading

    import dask
    import dask.array as da
    import numpy as np

    from xamt.libraries.dask import from_numpy, to_numpy

    seen = set()

    def mark(block):
        seen.add(threading.get_ident())
        return block

    x = da.map_blocks(mark, from_numpy(np.arange(8.0)).rechunk(2))  # 4 blocks
    total = float(to_numpy(x.sum()))
    return {"scheduler": str(dask.config.get("scheduler", None)), "total": total,
            "block_threads": len(seen), "in_main": seen == {threading.main_thread().ident},
            "threads_after": threading.active_count()}


def test_dask_computes_synchronously_in_sandbox_workers(monkeypatch):
    pytest.importorskip("dask.array")
    from sandbox import SandboxPool, Task
    from xamt.exec.pools import pool_settings

    monkeypatch.delenv("DASK_SCHEDULER", raising=False)  # the adapter's setting, not the user's
    ps = pool_settings([Registry().get("numpy"), Registry().get("dask")])
    assert ps["env"]["DASK_SCHEDULER"] == "synchronous"
    assert "xamt.libraries.dask:import_array_modules" in ps["warmup"]
    with SandboxPool(preload=ps["preload"], warmup=ps["warmup"], env=ps["env"], workers=1,
                     timeout=60) as pool:
        # the warm-up imported dask.array and started no thread: workers are forked
        assert pool.mode == "fork" and pool.info["threads"] == 1
        outcome = pool.run([Task("tests.catalog.test_new_adapters:dask_compute_probe")])[0]
    assert outcome.ok, outcome
    assert outcome.value == {"scheduler": "synchronous", "total": 28.0, "block_threads": 1,
                             "in_main": True, "threads_after": 1}
