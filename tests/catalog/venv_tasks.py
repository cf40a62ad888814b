"""Tasks the venv-library tests run in a library's own interpreter (``test_venv_libraries.py``).

Imported by that interpreter, which has no pytest: only numpy (and ml_dtypes) and Xamt's own
modules here."""
from __future__ import annotations

import importlib
from typing import Any


def round_trip(library: str, names: list[str]) -> list[Any]:
    """Each numpy dtype of ``names`` through ``xamt.libraries.<library>``'s ``from_numpy`` and
    ``to_numpy`` in this process, a 2x3 array and a 0-d one: ``[array, scalar]`` per name, as
    they come back (to the pool as numpy)."""
    import numpy as np

    adapter_module = importlib.import_module(f"xamt.libraries.{library}")
    out = []
    for name in names:
        x = np.arange(-2, 4).reshape(2, 3)
        if name == "bfloat16":
            import ml_dtypes

            x = x.astype(ml_dtypes.bfloat16)
        else:
            x = (x > 0) if name == "bool" else (x + 2 if name.startswith("uint") else x).astype(name)
        out.append(adapter_module.to_numpy(adapter_module.from_numpy(x)))
        out.append(adapter_module.to_numpy(adapter_module.from_numpy(x[0, 0])))
    return out


def held_dtypes(library: str, names: list[str]) -> list[str]:
    """The library's dtype (its name as ``to_numpy`` gives it) of the tensor ``from_numpy`` of
    ``xamt.libraries.<library>`` makes of a 2x3 array of each numpy dtype of ``names`` (the
    arrays' own round trip is :func:`round_trip`'s)."""
    import numpy as np

    adapter_module = importlib.import_module(f"xamt.libraries.{library}")
    out = []
    for name in names:
        if name == "bfloat16":
            import ml_dtypes

            x = np.ones((2, 3), dtype=ml_dtypes.bfloat16)
        else:
            x = np.ones((2, 3), dtype=name)
        out.append(adapter_module.to_numpy(adapter_module.from_numpy(x).dtype))
    return out
