"""One execution path: a member called by a sandbox worker (a real SandboxPool through
GroupExecutor) and the same member called by its rendered standalone reproducer (xamt.repro,
run by this interpreter in a fresh process, without Xamt) give the same outputs, for the call
styles where the worker and the renderer used to keep copies of one logic: tuple slots, fixed
tuple values, methods, fixed dtype arguments and dtype slots, PRNG keys (fixed and in a slot),
fill calls, out= calls, callable classes, in-place methods."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from tests.groups.helpers import group
from xamt import repro
from xamt.exec.group import ExecItem, GroupExecutor
from xamt.libraries.registry import Registry
from xamt.matching.model import ArgSpec, ArgumentPlan, Member

X = np.array([[[1.0, -2.0, 3.0], [4.0, 0.5, -6.0], [0.25, 8.0, -1.0]],
              [[2.0, 1.0, 0.0], [-1.0, 3.0, 2.0], [5.0, -4.0, 1.5]]], np.float32)


def _member(library: str, qualname: str, target: str, args: list[ArgSpec], *, call: str = "function",
            receiver_slot: int | None = None, via: str | None = None,
            init_args: list[ArgSpec] | None = None) -> Member:
    return Member(library=library, qualname=qualname, target=target, kind=call, call=call,
                  plan=ArgumentPlan(args=args, init_args=init_args or []),
                  receiver_slot=receiver_slot, via=via)


def _cases() -> list[tuple[str, tuple[str, ...], Member, dict[int, Any]]]:
    """(name, libraries it needs, member, slot values)."""
    t = "tensor"
    return [
        # a fixed sequence read back from JSON: numpy.linalg.norm takes two axes only as a tuple
        ("norm-fixed-axes", ("numpy",), _member("numpy", "numpy.linalg.norm", "numpy.linalg:norm", [
            ArgSpec(slot=0, param="x", position=0, transform=t),
            ArgSpec(slot=None, param="ord", keyword="ord", value="nuc"),
            ArgSpec(slot=None, param="axis", keyword="axis", value=[-2, -1], transform="tuple")]),
         {0: X.astype(np.float64)}),
        # a method on its receiver, a Python int in a keyword slot
        ("ndarray-method", ("numpy",), _member("numpy", "numpy.ndarray.sum", "numpy:ndarray.sum", [
            ArgSpec(slot=0, param="self", position=0, transform=t),
            ArgSpec(slot=1, param="axis", keyword="axis")], call="method", receiver_slot=0),
         {0: X, 1: 1}),
        # a fixed dtype name becomes the library's dtype; a float slot keeps its bits
        ("cumsum-fixed-dtype", ("numpy",), _member("numpy", "numpy.cumsum", "numpy:cumsum", [
            ArgSpec(slot=0, param="a", position=0, transform=t),
            ArgSpec(slot=None, param="dtype", keyword="dtype", value="float64", transform="dtype")]),
         {0: X * np.float32(0.1)}),
        # a dtype slot (numpy.dtype in the input) and a shape tuple
        ("full-dtype-slot", ("numpy",), _member("numpy", "numpy.full", "numpy:full", [
            ArgSpec(slot=0, param="shape", position=0),
            ArgSpec(slot=1, param="fill_value", position=1),
            ArgSpec(slot=2, param="dtype", keyword="dtype", transform="dtype")]),
         {0: (2, 3), 1: 0.1, 2: np.dtype("float16")}),
        # out=: the library's helper, copied into the script as glue
        ("add-out", ("numpy",), _member("numpy", "numpy.add", "numpy:add", [
            ArgSpec(slot=0, param="x1", position=0, transform=t),
            ArgSpec(slot=1, param="x2", position=1, transform=t)],
            call="out", via="xamt.libraries.numpy:call_with_out"),
         {0: X, 1: X[::-1].copy()}),
        # a scalar in a slot taken as a sequence: jax.lax.reduce_sum's axes
        ("reduce-sum-tuple-slot", ("jax",), _member("jax", "jax.lax.reduce_sum", "jax.lax:reduce_sum", [
            ArgSpec(slot=0, param="operand", position=0, transform=t),
            ArgSpec(slot=1, param="axes", position=1, transform="tuple")]),
         {0: X, 1: 1}),
        ("argmax-fixed-index-dtype", ("jax",), _member("jax", "jax.lax.argmax", "jax.lax:argmax", [
            ArgSpec(slot=0, param="operand", position=0, transform=t),
            ArgSpec(slot=1, param="axis", position=1),
            ArgSpec(slot=None, param="index_dtype", position=2, value="int32", transform="dtype")]),
         {0: X, 1: 2}),
        # PRNG keys: an int seed in a slot, and a fixed one
        ("uniform-key-slot", ("jax",), _member("jax", "jax.random.uniform", "jax.random:uniform", [
            ArgSpec(slot=0, param="key", position=0, transform="prng_key"),
            ArgSpec(slot=1, param="shape", keyword="shape")]),
         {0: 7, 1: (2, 3)}),
        ("normal-fixed-key", ("jax",), _member("jax", "jax.random.normal", "jax.random:normal", [
            ArgSpec(slot=None, param="key", position=0, value=3, transform="prng_key"),
            ArgSpec(slot=0, param="shape", keyword="shape")]),
         {0: (4,)}),
        # fill: torch makes the tensor from the shape, torch.nn.init fills it
        ("eye-fill", ("torch",), _member("torch", "torch.nn.init.eye_", "torch.nn.init:eye_", [
            ArgSpec(slot=0, param="shape", position=0)], call="fill", via="xamt.libraries.torch:call_filling"),
         {0: (2, 3)}),
        # an in-place tensor method, and a callable class constructed from a slot
        ("tensor-inplace-method", ("torch",), _member("torch", "torch.Tensor.mul_", "torch:Tensor.mul_", [
            ArgSpec(slot=0, param="self", position=0, transform=t),
            ArgSpec(slot=1, param="other", position=1)], call="method", receiver_slot=0),
         {0: X, 1: 1.5}),
        ("softmax-module", ("torch",), _member("torch", "torch.nn.Softmax", "torch.nn:Softmax", [
            ArgSpec(slot=0, param="input", position=0, transform=t)], call="module",
            init_args=[ArgSpec(slot=1, param="dim", keyword="dim")]),
         {0: X, 1: -1}),
    ]


def _installed(libs: tuple[str, ...]) -> bool:
    return all(importlib.util.find_spec(lib) is not None for lib in libs)


CASES = _cases()

#: runs a reproducer script in this process and prints its results as JSON (exact: arrays as
#: dtype, shape and bytes), then whether any module of Xamt got imported
_RUN_SCRIPT = r'''
import json, sys
path = sys.argv[1]
ns = {"__name__": "__main__", "__file__": path}
try:
    exec(compile(open(path).read(), path, "exec"), ns)
except SystemExit:
    pass
def enc(v):
    if isinstance(v, tuple):
        return {"tuple": [enc(x) for x in v]}
    if hasattr(v, "dtype") and hasattr(v, "tobytes"):
        return {"dtype": v.dtype.name, "shape": list(v.shape), "hex": v.tobytes().hex()}
    return {"value": v}
out = [[status, None if value is None else enc(value), error] for status, value, error in ns["results"]]
print("RESULTS=" + json.dumps(out))
print("XAMT_MODULES=" + json.dumps(sorted(m for m in sys.modules if m == "xamt" or m.startswith("xamt."))))
'''


def _decode(e: Any) -> Any:
    if "tuple" in e:
        return tuple(_decode(x) for x in e["tuple"])
    if "dtype" in e:
        return np.frombuffer(bytes.fromhex(e["hex"]), dtype=np.dtype(e["dtype"])).reshape(e["shape"])
    return e["value"]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    return type(a) is type(b) and a == b


@pytest.fixture(scope="module")
def runnable():
    cases = [c for c in CASES if _installed(c[1])]
    if not cases:
        pytest.skip("none of the libraries of these cases is installed")
    return cases


def test_the_cases_cover_every_library_they_need():
    missing = sorted({lib for _, libs, _, _ in CASES for lib in libs if not _installed((lib,))})
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (their cases are left out of the comparison)")


def test_worker_and_reproducer_agree(pool, runnable, tmp_path):
    libs = {a.name: a for a in Registry() if a.name in {lib for _, ls, _, _ in runnable for lib in ls}}
    # the worker: every case through GroupExecutor in the sandbox pool (jax is imported there
    # on first use, hence the allowance)
    items = []
    for name, _, m, values in runnable:
        slots = [(s, f"s{s}", "tensor" if isinstance(v, np.ndarray) else "scalar") for s, v in values.items()]
        items.append(ExecItem(group(f"t:{name}", [m], slots), dict(values)))
    runs = GroupExecutor(pool, libs, timeout=120, max_task_timeout=300).run(items)
    worker = {}
    for (name, *_), run in zip(runnable, runs):
        res = run.results[0]
        assert res.status == "ok", (name, res.status, res.error_type, res.error_message)
        assert isinstance(res.value, np.ndarray), (name, res.value)
        worker[name] = res.value
    # the reproducer: one script calling every case, each on its own input file
    spec = repro.ReproSpec(title="single path", header="worker vs reproducer",
                           calls=[(name, m, libs[m.library], values) for name, _, m, values in runnable],
                           normalisation=None, expect="value", outlier=0, reference=None)
    text = repro.render(spec)
    assert "import xamt" not in text and "from xamt" not in text
    path = repro.write(tmp_path / "r", text, repro.spec_inputs(spec))
    env = dict(os.environ, PYTHONPATH="", OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([sys.executable, "-c", _RUN_SCRIPT, str(path)], cwd=path.parent, env=env,
                          capture_output=True, text=True, timeout=300)
    lines = dict(line.split("=", 1) for line in proc.stdout.splitlines()
                 if line.startswith(("RESULTS=", "XAMT_MODULES=")))
    assert "RESULTS" in lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert json.loads(lines["XAMT_MODULES"]) == [], "the reproducer imported Xamt"
    script = json.loads(lines["RESULTS"])
    assert len(script) == len(runnable)
    for (name, *_), (status, value, error) in zip(runnable, script):
        assert status == "ok", (name, error, proc.stdout[-3000:])
        assert _same(worker[name], _decode(value)), (name, worker[name], _decode(value))


def test_fixed_tuple_and_tuple_slot_are_written_as_tuples(runnable):
    """What the worker passes is what the script shows: axis=(-2, -1), and a scalar axes slot
    wrapped as a 1-tuple of the input's value."""
    libs = {a.name: a for a in Registry()}
    by_name = {c[0]: c for c in runnable}
    name, _, m, values = by_name["norm-fixed-axes"]
    text = repro.render(repro.ReproSpec(title="t", header="h", calls=[(name, m, libs["numpy"], values)],
                                        normalisation=None, expect="value", outlier=0))
    assert "numpy.linalg.norm(G_numpy.from_numpy(V[0]), ord='nuc', axis=(-2, -1))" in text
    if "reduce-sum-tuple-slot" in by_name:
        name, _, m, values = by_name["reduce-sum-tuple-slot"]
        text = repro.render(repro.ReproSpec(title="t", header="h", calls=[(name, m, libs["jax"], values)],
                                            normalisation=None, expect="value", outlier=0))
        assert "jax.lax.reduce_sum(G_jax.from_numpy(V[0]), (1,))" in text
