"""Sandbox tasks for ``test_mxnet.py``, run by a worker of the MXNet runtime (the interpreter of
``.venv-mxnet``, which has no pytest): this module imports nothing that venv lacks."""
from __future__ import annotations

import os
import sys
from typing import Any


def interpreter() -> dict[str, Any]:
    """Where this worker runs: its interpreter, numpy's and MXNet's versions, whether MXNet's
    NumPy semantics are on (the zygote's warm-up) and the engine the runtime set."""
    import mxnet
    import numpy

    return {"executable": sys.executable, "numpy": numpy.__version__,
            "mxnet": mxnet.__version__, "np_shape": bool(mxnet.util.is_np_shape()),
            "np_array": bool(mxnet.util.is_np_array()),
            "engine": os.environ.get("MXNET_ENGINE_TYPE")}


def zero_size_sum() -> Any:
    """A zero-size input, which MXNet accepts only under its NumPy shape semantics."""
    import mxnet

    from xamt.libraries.mxnet import to_numpy

    return to_numpy(mxnet.np.sum(mxnet.np.zeros((0, 3)), axis=0))
