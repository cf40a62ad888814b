"""Sandbox tasks for ``test_tinygrad.py``, run by a worker of the tinygrad runtime (the interpreter
of ``.venv-tinygrad``, which has no pytest): this module imports nothing that venv lacks."""
from __future__ import annotations

import os
import sys
from typing import Any


def interpreter() -> dict[str, Any]:
    """Where this worker runs: its interpreter, numpy's and tinygrad's versions, the device and
    the configuration tinygrad read from the runtime's variables at import, and this process's
    thread count before anything is realized (a forked worker of a single-threaded zygote has
    one)."""
    threads = len(os.listdir("/proc/self/task"))
    import numpy
    import tinygrad
    from tinygrad import Device, dtypes
    from tinygrad.helpers import CACHELEVEL, TRAINING

    from xamt.libraries.tinygrad import to_numpy

    return {"executable": sys.executable, "numpy": numpy.__version__,
            "tinygrad": getattr(tinygrad, "__version__", None) or _dist_version(),
            "device": Device.DEFAULT, "default_float": to_numpy(dtypes.default_float),
            "default_int": to_numpy(dtypes.default_int), "cachelevel": int(CACHELEVEL.value),
            "training": int(TRAINING.value), "threads": threads}


def _dist_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("tinygrad")


def complex_refused() -> str:
    """What ``from_numpy`` says of a complex array (tinygrad has no complex dtype)."""
    import numpy as np

    from xamt.libraries.tinygrad import from_numpy

    try:
        from_numpy(np.ones(2, np.complex64))
    except TypeError as exc:
        return str(exc)
    return "accepted"


def finish_realizes() -> dict[str, Any]:
    """``finish`` realizes a lazy result (a tuple of them too) and moves a deviceless constant
    (``Tensor(3.0)``, which tinygrad would read through its clang-compiled CPU device) onto the
    default device; ``from_numpy`` copies the caller's array."""
    import numpy as np
    from tinygrad import Device, Tensor

    from xamt.libraries.tinygrad import finish, from_numpy, to_numpy

    lazy = from_numpy(np.arange(4, dtype=np.float32)).exp()
    before = lazy.uop.is_realized
    done = finish(lazy)
    pair = finish(from_numpy(np.arange(5, dtype=np.float32)).topk(2))
    const = finish(Tensor(3.0))
    x = np.zeros(3, np.float32)
    t = from_numpy(x)
    x[0] = 7.0
    return {"lazy_before": bool(before), "realized": bool(done.uop.is_realized),
            "pair": [bool(v.uop.is_realized) for v in pair], "pair_type": type(pair).__name__,
            "const_device": const.device, "const": to_numpy(const).tolist(),
            "copy": to_numpy(t).tolist(), "default": Device.DEFAULT}


def narrow_dtypes() -> dict[str, Any]:
    """Results whose buffers Python cannot read as such: bfloat16 and fp8 come back as
    ml_dtypes' types of the same bits, a 0-d result as a 0-d array."""
    import numpy as np
    from tinygrad import Tensor, dtypes

    from xamt.libraries.tinygrad import to_numpy

    bf = to_numpy(Tensor([1.5, -2.25]).cast(dtypes.bfloat16) * 2)
    f8 = to_numpy(Tensor([1.0, 3.5]).cast(dtypes.fp8e4m3))
    scalar = to_numpy(Tensor([1.0, 2.0]).sum())
    return {"bf16": [bf.dtype.name, bf.astype(np.float32).tolist()],
            "fp8": [f8.dtype.name, f8.astype(np.float32).tolist()],
            "scalar": [scalar.shape, float(scalar)]}
