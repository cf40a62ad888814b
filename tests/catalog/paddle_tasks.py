"""Sandbox tasks for ``test_paddle.py``, run by a worker of the paddle runtime (the interpreter of
``.venv-paddle``, which has no pytest): this module imports nothing that venv lacks."""
from __future__ import annotations

import os
import sys
from typing import Any


def interpreter() -> dict[str, Any]:
    """Where this worker runs: its interpreter, numpy's and paddle's versions, the execution
    mode, the flags the runtime pins as paddle read them, and this process's thread count."""
    import numpy
    import paddle

    flags = paddle.get_flags(["FLAGS_check_nan_inf", "FLAGS_call_stack_level", "FLAGS_use_onednn",
                              "FLAGS_use_mkldnn"])
    return {"executable": sys.executable, "numpy": numpy.__version__,
            "paddle": paddle.__version__, "dynamic": bool(paddle.in_dynamic_mode()),
            "device": paddle.device.get_device(),
            "flags": {k: (v if isinstance(v, int) and not isinstance(v, bool) else bool(v))
                      for k, v in flags.items()},
            "threads": len(os.listdir("/proc/self/task"))}


def uint16_refused() -> str:
    """What ``from_numpy`` says of a uint16 array (paddle would read it as bfloat16)."""
    import numpy as np

    from xamt.libraries.paddle import from_numpy

    try:
        from_numpy(np.arange(3, dtype=np.uint16))
    except TypeError as exc:
        return str(exc)
    return "accepted"


def copies_its_input() -> list[Any]:
    """``from_numpy`` copies: an in-place op on the tensor leaves the numpy array as it was."""
    import numpy as np

    from xamt.libraries.paddle import from_numpy, to_numpy

    x = np.ones(3, dtype=np.float32)
    t = from_numpy(x)
    t.add_(from_numpy(np.full(3, 2, dtype=np.float32)))
    return [x, to_numpy(t)]


def reduce_out_of_range() -> Any:
    """A reduction over an axis the input lacks: paddle's shape inference refuses it in the call
    (``ValueError: (InvalidArgument) ...``)."""
    import numpy as np
    import paddle

    from xamt.libraries.paddle import from_numpy

    return paddle.sum(from_numpy(np.ones((2, 2), dtype=np.float32)), axis=5)
