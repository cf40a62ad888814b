"""Sandbox tasks for ``test_chainer.py``, run by a worker of the Chainer runtime (the interpreter
of ``.venv-chainer``, which has no pytest): this module imports nothing that venv lacks."""
from __future__ import annotations

import os
import sys
from typing import Any


def interpreter() -> dict[str, Any]:
    """Where this worker runs: its interpreter, numpy's and Chainer's versions, the
    configuration Chainer read from the runtime's variables at import, and this process's
    thread count (a forked worker of a single-threaded zygote has one)."""
    import chainer
    import numpy

    return {"executable": sys.executable, "numpy": numpy.__version__,
            "chainer": chainer.__version__, "type_check": bool(chainer.config.type_check),
            "debug": bool(chainer.config.debug), "dtype": str(chainer.config.dtype),
            "use_ideep": str(chainer.config.use_ideep),
            "threads": len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None}


def private_copy() -> dict[str, Any]:
    """Whether ``from_numpy`` wraps a copy: a write into the Variable's array leaves the
    caller's array as it was, and the wrapper is a ``chainer.Variable``."""
    import chainer
    import numpy as np

    from xamt.libraries.chainer import from_numpy

    x = np.zeros(3, np.float32)
    v = from_numpy(x)
    v.array[0] = 7.0
    return {"variable": isinstance(v, chainer.Variable), "caller_unchanged": bool(x[0] == 0.0)}
