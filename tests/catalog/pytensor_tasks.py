"""Sandbox tasks for ``test_pytensor.py``, run by a worker of the PyTensor runtime (the
interpreter of ``.venv-pytensor``, which has no pytest): this module imports nothing that venv
lacks."""
from __future__ import annotations

import os
import sys
from typing import Any


def interpreter() -> dict[str, Any]:
    """Where this worker runs: its interpreter, numpy's and PyTensor's versions, the
    configuration PyTensor read from the runtime's ``PYTENSOR_FLAGS`` at import, and this
    process's thread count (a forked worker of a single-threaded zygote has one)."""
    import numpy
    import pytensor

    c = pytensor.config
    return {"executable": sys.executable, "numpy": numpy.__version__, "pytensor": pytensor.__version__,
            "floatX": c.floatX, "cast_policy": c.cast_policy, "optimizer": c.optimizer,
            "openmp": bool(c.openmp), "blas": c.blas__ldflags, "base_compiledir": str(c.base_compiledir),
            "compiledir": str(c.compiledir),
            "threads": len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None}


def compiled_calls() -> dict[str, Any]:
    """Calls through the adapter's hooks: a broadcasting add (compiled once, then taken from the
    worker's cache for new inputs of the same types), a reduction whose keyword changes the
    graph, the linker the function was compiled for, and what a shape mismatch raises when the
    compiled function runs."""
    import numpy as np
    import pytensor.tensor as pt

    from xamt.libraries import pytensor as adapter

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.array([[10.0], [20.0]], np.float32)
    first = adapter.finish(pt.add(adapter.from_numpy(x), adapter.from_numpy(y)))
    size = len(adapter._COMPILED)
    again = adapter.finish(pt.add(adapter.from_numpy(x + 1), adapter.from_numpy(y)))
    cached = len(adapter._COMPILED) == size
    s0 = adapter.finish(pt.sum(adapter.from_numpy(x), axis=0))
    s1 = adapter.finish(pt.sum(adapter.from_numpy(x), axis=1))
    fn = next(reversed(adapter._COMPILED.values()))
    try:
        adapter.finish(pt.add(adapter.from_numpy(x), adapter.from_numpy(np.ones(4, np.float32))))
        mismatch = None
    except Exception as exc:  # the compiled function refuses the shapes when it runs
        mismatch = type(exc).__name__
    parts = adapter.finish(pt.split(adapter.from_numpy(x[0]), [1, 2], n_splits=2))
    return {"first": first, "again": again, "cached": cached, "sums": [s0, s1],
            "linker": type(fn.maker.linker).__name__, "mismatch": mismatch, "parts": list(parts),
            "compiled_files": compiled_files()}


def graph_keys() -> dict[str, bool]:
    """Whether graphs of the same API on inputs of the same types with the same keyword values
    share a key, and others do not."""
    import numpy as np
    import pytensor.tensor as pt

    from xamt.libraries import pytensor as adapter
    from pytensor.graph.traversal import graph_inputs

    def key(build, *arrays):
        variables = [adapter.from_numpy(a) for a in arrays]
        out = build(*variables)
        inputs = [v for v in graph_inputs([out]) if v in variables]
        return adapter._graph_key(inputs, [out])

    a, b = np.ones((2, 3)), np.zeros((2, 3))
    row = np.ones((1, 3))
    return {
        "same": key(lambda v: pt.sum(v, axis=0), a) == key(lambda v: pt.sum(v, axis=0), b),
        "other_axis": key(lambda v: pt.sum(v, axis=0), a) != key(lambda v: pt.sum(v, axis=1), a),
        "other_dtype": key(pt.exp, a) != key(pt.exp, a.astype(np.float32)),
        "other_broadcast": key(pt.exp, a) != key(pt.exp, row),
        "other_constant": key(lambda v: v + 1.0, a) != key(lambda v: v + 2.0, a),
        "other_api": key(pt.exp, a) != key(pt.log, a),
    }


def compiled_files() -> int:
    """How many files this process's PyTensor compile folder holds."""
    return sum(len(f) for _, _, f in os.walk(os.environ["XAMT_PYTENSOR_CACHE_DIR"]))


def inner_graphs() -> dict[str, Any]:
    """``pad`` (an OpFromGraph op) computed through the adapter's ``finish`` on float32, then
    probed on int16 (a dtype not compiled yet) through ``probe_call``: the result, the compile
    folder's file count around each, and whether Numba was ever imported."""
    import numpy as np
    import pytensor.tensor as pt

    from xamt.libraries import pytensor as adapter

    before = compiled_files()
    computed = adapter.finish(pt.pad(adapter.from_numpy(np.ones((2, 3), np.float32)), 1))
    after = compiled_files()
    numba_after_compute = "numba" in sys.modules
    adapter.probe_call(lambda x: pt.pad(x, 1), adapter.from_numpy(np.ones((2, 3), np.int16)))
    return {"computed": computed, "files_before": before, "files_after_compute": after,
            "numba_after_compute": numba_after_compute, "probe_files_added": compiled_files() - after,
            "numba_after_probe": "numba" in sys.modules}


def python_linker_calls() -> dict[str, Any]:
    """Calls through the adapter's ``finish`` with ``XAMT_PYTENSOR_LINKER=py`` (the registry
    build's setting), on dtypes and ops this worker has not compiled: ``gammaln`` of int16 and
    ``pad`` (an OpFromGraph op) of uint8. Their results, the compile folder's file count around
    them, and what an unknown linker name raises."""
    import numpy as np
    import pytensor.tensor as pt

    from xamt.libraries import pytensor as adapter

    os.environ[adapter.LINKER_VARIABLE] = "py"
    try:
        before = compiled_files()
        gammaln = adapter.finish(pt.gammaln(adapter.from_numpy(np.arange(1, 4, dtype=np.int16))))
        pad = adapter.finish(pt.pad(adapter.from_numpy(np.ones((2, 2), np.uint8)), 1))
        added = compiled_files() - before
        os.environ[adapter.LINKER_VARIABLE] = "llvm"
        try:
            adapter.finish(pt.exp(adapter.from_numpy(np.ones(2))))
            refused = ""
        except ValueError as exc:
            refused = str(exc)
    finally:
        os.environ.pop(adapter.LINKER_VARIABLE, None)
    return {"gammaln": gammaln, "pad": pad, "files_added": added, "refused": refused}
