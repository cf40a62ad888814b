"""Sandbox tasks for ``test_ndonnx.py``, run by a worker of the ndonnx runtime (the interpreter
of ``.venv-ndonnx``, which has no pytest): this module imports nothing that venv lacks."""
from __future__ import annotations

import os
import sys
from typing import Any


def interpreter() -> dict[str, Any]:
    """Where this worker runs: its interpreter, the versions of numpy, ndonnx and ONNX Runtime,
    the backend of spox's value propagation (ndonnx picks ONNX Runtime at import when it is
    installed), and this process's thread count."""
    import ndonnx
    import numpy
    import onnxruntime
    import spox._value_prop

    return {"executable": sys.executable, "numpy": numpy.__version__,
            "ndonnx": ndonnx.__version__, "onnxruntime": onnxruntime.__version__,
            "backend": spox._value_prop._VALUE_PROP_BACKEND.name,
            "threads": len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None}


def conversions() -> dict[str, Any]:
    """The adapter's hooks on what ndonnx returns: a private copy going in (``put`` writes into
    the ndonnx array, not the caller's), a dtype object named, a named tuple of arrays through
    ``finish``, and a lazy array (ONNX Runtime failed in propagation) raising ONNX Runtime's own
    error from ``finish`` and from ``to_numpy``."""
    import ndonnx
    import numpy as np

    from xamt.libraries.ndonnx import finish, from_numpy, to_numpy

    x = np.zeros(3, np.float32)
    a = from_numpy(x)
    ndonnx.extensions.put(a, from_numpy(np.array([0])), from_numpy(np.array([7.0], np.float32)))
    unique = finish(ndonnx.unique_counts(from_numpy(np.array([3, 1, 3], np.int64))))
    lazy = ndonnx.take(from_numpy(np.arange(5.0)), from_numpy(np.array([7])))
    errors = []
    for hook in (finish, to_numpy):
        try:
            hook(lazy)
            errors.append(None)
        except Exception as exc:  # noqa: BLE001 - the error is what is reported
            errors.append([type(exc).__name__, str(exc)])
    return {"put": to_numpy(a).tolist(), "caller_unchanged": bool(x[0] == 0.0),
            "dtype": to_numpy(ndonnx.result_type(ndonnx.int32, ndonnx.float32)),
            "unique": [type(unique).__name__] + [[v.dtype.name, v.tolist()] for v in unique],
            "lazy_has_value": _has_value(lazy), "errors": errors}


def _has_value(array: Any) -> bool:
    try:
        array.unwrap_numpy()
    except ValueError:
        return False
    return True
