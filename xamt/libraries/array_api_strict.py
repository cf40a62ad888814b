"""array-api-strict adapter: the array API standard's strict reference implementation (CPU only).

Its arrays wrap numpy arrays and its functions keep to the standard's signatures (positional-only
arrays, keyword-only options, no float16, no bfloat16), so it meets numpy, jax and torch under
the standard's names (``concat``, ``permute_dims``, ``pow``), which ``xamt/data/aliases.toml``
already maps. Its ``linalg`` and ``fft`` extensions are module attributes, not importable
submodules; the catalog resolves them as objects of the top-level module.
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype"]

#: the standard has no float16 and no bfloat16
_DTYPES = same_dtype_names(("float16", "bfloat16"))


def from_numpy(array: Any) -> Any:
    """numpy array → ``array_api_strict`` array on its default (CPU) device, a private copy so
    that nothing the API does reaches the caller's array."""
    import array_api_strict as xp
    import numpy as np

    return xp.asarray(np.array(array, copy=True))


def to_numpy(value: Any) -> Any:
    """``array_api_strict`` array → numpy array (a copy); a dtype object → its numpy-style name
    (``"float32"``), so what ``result_type`` returns compares with other libraries' dtypes.

    Arrays cross through DLPack, the standard's interchange protocol, which works on every
    Python: the library's ``__array__`` raises on Python 3.12 and later (numpy then reads the
    buffer protocol instead) and for arrays on its test devices other than the CPU."""
    import array_api_strict as xp
    import numpy as np

    if isinstance(value, type(xp.float32)):
        names = {v: k for k, v in xp.__array_namespace_info__().dtypes(kind=None).items()}
        return names.get(value, repr(value).rpartition(".")[2])
    if hasattr(value, "__dlpack__") and hasattr(value, "__array_namespace__"):
        return np.array(np.from_dlpack(value), copy=True)
    return np.asarray(value)


def dtype(name: str) -> Any:
    """The library's dtype object for a numpy dtype name (``array_api_strict.float32``). A name the
    standard lacks (float16, bfloat16) is the library's refusal of that dtype, said in the words
    the oracle reads as an unsupported dtype (an AttributeError was filed as a status finding)."""
    import array_api_strict as xp

    if name in _DTYPES:
        return getattr(xp, name)
    raise TypeError(f"dtype {name} is not supported by array_api_strict (the array API standard has no {name})")


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="array_api_strict",
        import_name="array_api_strict",
        distributions=("array-api-strict",),
        namespaces=("array_api_strict", "array_api_strict.linalg", "array_api_strict.fft"),
        own_modules=("array_api_strict",),
        from_numpy_ref="xamt.libraries.array_api_strict:from_numpy",
        to_numpy_ref="xamt.libraries.array_api_strict:to_numpy",
        dtype_ref="xamt.libraries.array_api_strict:dtype",
        dtypes=_DTYPES,
        # Array's only public method is to_device (placement); its operators are dunders and its
        # other attributes (T, mT, shape, ...) properties: no method owner.
        # Not array operations: the library's configuration functions and the decorators and
        # helper its linalg and fft modules are built with.
        exclude=frozenset({
            "array_api_strict.*array_api_strict_flags",   # get_/set_/reset_ (also linalg's get_)
            "array_api_strict.*.requires_*",             # requires_api_version / _extension
            "array_api_strict.fft.device_supports_dtype",
        }),
        # not the reference: numpy (0) computes the same values under richer signatures, so it
        # (and jax, scipy, torch, tensorflow, keras) pivots plans before this library does
        pivot_rank=55,
        kernels="numpy",  # a strict wrapper around numpy's arrays and functions
        literal_array="array_api_strict.asarray({})", literal_dtype="array_api_strict.{}",
        literal_imports=("import array_api_strict",),
        doc_prefixes={"array_api_strict": "array_api_strict"},
    )
