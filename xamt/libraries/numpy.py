"""NumPy adapter: the reference library (pivot of argument plans)."""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, MethodOwner, resolve_ref, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype", "call_with_out", "ufunc_methods",
           "UFUNC_METHODS"]

#: methods of a binary ufunc that compute on arrays (``at`` updates its operand in place)
UFUNC_METHODS = ("reduce", "accumulate", "outer", "reduceat")

_DTYPES = same_dtype_names(("bfloat16",))

#: ndarray methods that move, serialise or mutate flags rather than compute
_METHOD_PLUMBING = frozenset({
    "dump", "dumps", "tofile", "tobytes", "tolist", "setflags", "getfield", "setfield",
    "to_device", "byteswap", "resize", "fill", "itemset",
})


def from_numpy(array: Any) -> Any:
    """numpy → numpy: a private copy, so an in-place API cannot alter the caller's array."""
    import numpy as np

    return np.array(array, copy=True)


def to_numpy(value: Any) -> Any:
    import numpy as np

    return np.asarray(value)


def dtype(name: str) -> Any:
    import numpy as np

    return np.dtype(name)


def ufunc_methods(obj: Any) -> list[str]:
    """The sub-APIs of a mined numpy object: a binary scalar ufunc's :data:`UFUNC_METHODS`
    (``numpy.add.reduce``). Unary ufuncs and generalised ufuncs (``matmul``) have the methods
    but raise when they are called."""
    import numpy as np

    if isinstance(obj, np.ufunc) and obj.nin == 2 and obj.nout == 1 and obj.signature is None:
        return list(UFUNC_METHODS)
    return []


def call_with_out(target: str, *args: Any, **kwargs: Any) -> Any:
    """Call ``target`` once to learn the result's shape and dtype, then again with ``out=``."""
    import numpy as np

    fn = resolve_ref(target)
    first = fn(*args, **kwargs)
    out = np.empty_like(np.asarray(first))
    result = fn(*args, out=out, **kwargs)
    return result


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="numpy",
        import_name="numpy",
        distributions=("numpy",),
        namespaces=("numpy", "numpy.linalg", "numpy.fft", "numpy.random"),
        own_modules=("numpy",),
        from_numpy_ref="xamt.libraries.numpy:from_numpy",
        to_numpy_ref="xamt.libraries.numpy:to_numpy",
        dtype_ref="xamt.libraries.numpy:dtype",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("numpy", "ndarray", _METHOD_PLUMBING),),
        # PytestTester instances and printing/runtime configuration are not array operations.
        exclude=frozenset({
            "numpy.test", "numpy.linalg.test", "numpy.fft.test", "numpy.random.test",
            "numpy.show_config", "numpy.show_runtime", "numpy.get_include", "numpy.info",
        }),
        pivot_rank=0,
        doc_prefixes={"np": "numpy", "numpy": "numpy"},
        doc_possessives={"NumPy": "numpy"},
        reexported_by_others=True,
        out_call_ref="xamt.libraries.numpy:call_with_out",
        literal_array="{}", literal_dtype="np.dtype('{}')",
        sub_apis_ref="xamt.libraries.numpy:ufunc_methods",
    )
