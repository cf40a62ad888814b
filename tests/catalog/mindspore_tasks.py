"""Sandbox tasks for ``test_mindspore.py``, run by a worker of the MindSpore runtime (the
interpreter of ``.venv-mindspore``, which has no pytest): this module imports nothing that venv
lacks."""
from __future__ import annotations

import os
import sys
from typing import Any


def interpreter() -> dict[str, Any]:
    """Where this worker runs: its interpreter, numpy's and MindSpore's versions, the mode and
    device target the zygote's warm-up set, and the launch setting the runtime set."""
    import mindspore
    import numpy

    return {"executable": sys.executable, "numpy": numpy.__version__,
            "mindspore": mindspore.__version__, "mode": mindspore.get_context("mode"),
            "pynative": mindspore.PYNATIVE_MODE,
            "device": mindspore.get_context("device_target"),
            "blocking": os.environ.get("MS_DEV_LAUNCH_BLOCKING")}


def cumsum(values: Any) -> Any:
    """``mindspore.ops.cumsum`` of ``values`` along axis 0, converted as a member's output is."""
    import mindspore

    from xamt.libraries.mindspore import from_numpy, to_numpy

    return to_numpy(mindspore.ops.cumsum(from_numpy(values), 0))


def gather_out_of_range() -> Any:
    """``ops.gather`` with an index past the end: the CPU kernel refuses it when it runs, which
    under launch-blocking is inside the call (the caught error says where it came from)."""
    import mindspore
    import numpy as np

    from xamt.libraries.mindspore import from_numpy

    x = from_numpy(np.arange(6, dtype=np.float32))
    index = from_numpy(np.array([0, 10], dtype=np.int32))
    try:
        result = mindspore.ops.gather(x, index, 0)
    except RuntimeError as error:
        return {"raised_by": "call", "error": str(error).splitlines()[0]}
    try:
        result.asnumpy()
    except RuntimeError as error:
        return {"raised_by": "read", "error": str(error).splitlines()[0]}
    return {"raised_by": None}


def gather_unchecked() -> Any:
    """The same refusal left uncaught: the task raises, as a member call would."""
    import mindspore
    import numpy as np

    from xamt.libraries.mindspore import from_numpy

    return mindspore.ops.gather(from_numpy(np.arange(6, dtype=np.float32)),
                                from_numpy(np.array([0, 10], dtype=np.int32)), 0)


def crash() -> None:
    """Die as a segfaulting kernel would (SIGSEGV)."""
    import signal

    import mindspore  # noqa: F401  (the crash happens with the library loaded)

    os.kill(os.getpid(), signal.SIGSEGV)


def missing_kernels() -> list[tuple[str, str]]:
    """``(type, message)`` of two calls MindSpore's CPU build has no kernel for: ``ops.fmin``
    (no CPU kernel at all) and ``mint.sort`` on uint32 (none for that dtype)."""
    import mindspore
    import numpy as np

    from xamt.libraries.mindspore import from_numpy

    calls = [lambda: mindspore.ops.fmin(from_numpy(np.ones(3, np.float32)), from_numpy(np.zeros(3, np.float32))),
             lambda: mindspore.mint.sort(from_numpy(np.arange(3, dtype=np.uint32)))]
    out = []
    for call in calls:
        try:
            call()
        except RuntimeError as error:
            out.append((type(error).__name__, str(error)))
    return out
