"""Sandbox tasks for ``test_mlx.py``, run by a worker of the MLX runtime (the interpreter of
``.venv-mlx``, which has no pytest): this module imports nothing that venv lacks."""
from __future__ import annotations

import os
import sys
from typing import Any


def interpreter() -> dict[str, Any]:
    """Where this worker runs: its interpreter, numpy's and MLX's versions, MLX's default device
    (set by the zygote's warm-up), the runtime's variable and this process's thread count (a
    forked worker of a single-threaded zygote has one before its first evaluation)."""
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None
    import mlx.core as mx
    import numpy

    return {"executable": sys.executable, "numpy": numpy.__version__, "mlx": mx.__version__,
            "device": str(mx.default_device()), "disable_compile": os.environ.get("MLX_DISABLE_COMPILE"),
            "threads": threads}


def conversions() -> dict[str, Any]:
    """What the adapter's conversions do where MLX's own would not: float64 kept (``mx.array``
    alone narrows it to float32), complex128 refused (not narrowed to complex64), a copy each
    way (neither the MLX array nor the numpy result shares the other's memory), a dtype object
    named as numpy names it, a dtype MLX lacks refused with a TypeError."""
    import mlx.core as mx
    import numpy as np

    from xamt.libraries.mlx import dtype, from_numpy, to_numpy

    x = np.array([1 / 3, 1e300], np.float64)
    a = from_numpy(x)
    try:
        from_numpy(np.ones(2, np.complex128))
        refused = None
    except TypeError as exc:
        refused = str(exc)
    try:
        dtype("complex128")
        no_dtype = None
    except TypeError as exc:  # benign (a refused argument), not an AttributeError of the call
        no_dtype = str(exc)
    x[0] = 7.0
    back = to_numpy(a)
    back[1] = 0.0
    return {"dtype": str(a.dtype), "exact": to_numpy(a).tolist() == [1 / 3, 1e300],
            "caller_copy": float(np.array(a)[0]) != 7.0, "result_copy": float(np.array(a)[1]) == 1e300,
            "complex128": refused, "no_dtype": no_dtype, "float64": str(dtype("float64")),
            "names": [to_numpy(mx.float32), to_numpy(mx.bool_),
                                             to_numpy(mx.bfloat16)]}
