"""Dask adapter (``dask.array`` and its ``linalg``, ``fft`` and ``random`` modules; CPU only).

A dask array is a lazy graph of numpy blocks: an API call checks its arguments and builds the
graph, and the values, with any error numpy raises inside a block, appear only when
:func:`to_numpy` computes it. Such an error therefore reaches the group executor as a failed
output conversion (``unserializable``, which the oracle ignores), not as the call raising
(``dask.array.unravel_index`` of an index out of bounds): a known gap, which only a hook run
inside the call could close. Two choices of this adapter:

- Chunks: :func:`from_numpy` makes one chunk of the whole array. That is what dask itself gives
  an array this small (``chunks="auto"`` aims at 128 MiB blocks), and the only layout every API
  mined accepts: ``dask.array.fft`` needs one chunk along the transformed axis, ``linalg.qr``
  and ``svd`` one chunk along a dimension, ``linalg.solve`` (through ``lu``) square chunks.
  Dask's block-combining algorithms (tree reductions, overlaps across blocks) are therefore not
  exercised: a multi-chunk layout would be a second conversion, not this one.
- Scheduler: a sandbox worker is a process forked from a single-threaded zygote, and dask's
  default scheduler for arrays is a thread pool. ``DASK_SCHEDULER=synchronous`` (dask reads
  ``DASK_*`` variables into ``dask.config`` when it is imported) makes every ``compute`` run in
  the calling thread, so no worker ever starts a thread and a crash or a hang is the call's own.
"""
from __future__ import annotations

import re
from typing import Any

from xamt.libraries.base import LibraryAdapter, MethodOwner, ParamSpec, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "finish", "import_array_modules", "forwarded_signature"]

#: numpy's table: dask's blocks are numpy arrays and its dtypes numpy's
_DTYPES = same_dtype_names(("bfloat16",))

#: the modules mined, imported by the zygote's warm-up (``import dask`` alone loads none of them)
_MODULES = ("dask.array", "dask.array.linalg", "dask.array.fft", "dask.array.random")

#: Array methods that schedule, store, re-block or describe the graph rather than compute values
_METHOD_PLUMBING = frozenset({
    "compute", "persist", "visualize", "to_svg", "to_delayed", "to_backend", "to_dask_dataframe",
    "to_hdf5", "to_tiledb", "to_zarr", "store", "rechunk", "compute_chunk_sizes", "map_blocks",
    "map_overlap", "shuffle",
})


def from_numpy(array: Any) -> Any:
    """numpy array → dask array of one chunk (see the module docstring), over a private copy:
    the graph reads its block only when computed, after the caller may have changed the array."""
    import dask.array as da
    import numpy as np

    return da.from_array(np.array(array, copy=True), chunks=-1)


def to_numpy(value: Any) -> Any:
    """A dask collection (an array, a delayed value) → its computed value as numpy; anything
    else through ``np.asarray``. Computing here is what runs the API's work."""
    import dask
    import numpy as np

    if dask.is_dask_collection(value):
        (value,) = dask.compute(value)
    return np.asarray(value)


def finish(value: Any) -> Any:
    """The adapter's ``finish`` hook: a dask collection computed (a tuple of them at once), so
    an error in the graph is the call's error and the compute time the call's time."""
    import dask

    if isinstance(value, (tuple, list)) and any(dask.is_dask_collection(v) for v in value):
        return type(value)(dask.compute(*value))
    if dask.is_dask_collection(value):
        (value,) = dask.compute(value)
    return value


#: the pointer dask's ``derived_from`` writes into a wrapper's docstring
_COPIED_FROM = re.compile(r"This docstring was copied from (numpy(?:\.\w+)*)\.")


def forwarded_signature(obj: Any, name: str, owner: str | None) -> list[list[ParamSpec]] | None:
    """The adapter's signature hook: the parameters of a dask function that inspection shows
    only as ``(*args, **kwargs)`` because it forwards them, read from where it forwards them.

    - ``dask.array.random``'s functions call the same-named method of a module-wide
      ``RandomState``, whose signature is dask's own (``normal(loc, scale, size, chunks)``);
    - the other forwarders (elementwise wrappers such as ``sinc``, ``real``, ``clip``; the
      partials ``isneginf``/``isposinf``; ``zeros``, ``ones``, ``empty``) call a numpy function
      on each block: the one their docstring says it was copied from, else numpy's function of
      the same name and namespace. Its leading parameters without a default become
      positional-only, since a wrapper finds its dask arrays among the positional arguments
      (an array passed by keyword reaches numpy as a dask array, or the wrapper returns
      ``NotImplemented``).

    None for methods and for functions that name any parameter of their own.
    """
    import importlib
    import inspect

    if owner is not None:
        return None
    try:
        if any(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in inspect.signature(obj).parameters.values()):
            return None
    except (TypeError, ValueError):
        return None
    module = getattr(obj, "__module__", None) or ""
    if module == "dask.array.random":
        import dask.array.random

        method = getattr(dask.array.random.RandomState, getattr(obj, "__name__", name), None)
        if method is None:
            return None
        params = list(inspect.signature(method).parameters.values())[1:]  # without self
        return [[_spec(p, p.kind) for p in params]]
    found = _COPIED_FROM.search(getattr(obj, "__doc__", None) or "")
    if found:
        numpy_name = found.group(1)
    else:
        numpy_name = f"{_NUMPY_TWIN.get(module, 'numpy')}.{name}"
    parent, _, attr = numpy_name.rpartition(".")
    target = getattr(importlib.import_module(parent), attr, None)
    if target is None:
        return None
    params = list(inspect.signature(target).parameters.values())
    leading = True
    specs = []
    for p in params:
        leading = leading and p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                  p.POSITIONAL_OR_KEYWORD)
        specs.append(_spec(p, p.POSITIONAL_ONLY if leading else p.kind))
    return [specs]


#: the numpy namespace a dask.array module mirrors (functions of other modules: numpy's top level)
_NUMPY_TWIN = {"dask.array.linalg": "numpy.linalg", "dask.array.fft": "numpy.fft"}


def _spec(param: Any, kind: Any) -> ParamSpec:
    """An ``inspect.Parameter`` as a :data:`ParamSpec`, with the kind given."""
    default = None if param.default is param.empty else repr(param.default)
    return (param.name, kind.name.lower(), default, None)


def import_array_modules() -> None:
    """The zygote's warm-up: import :data:`_MODULES` once, so a worker does not pay it in its
    first task. Imports only: dask starts its thread pool when something is computed."""
    import importlib

    for name in _MODULES:
        importlib.import_module(name)


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="dask",
        import_name="dask",
        distributions=("dask",),
        namespaces=_MODULES,
        # dask.array's own modules only: what the submodules import from dask's core (delayed,
        # tokenize, wait) is plumbing. dask.array's isneginf and isposinf are functools.partial
        # objects, and its zeros, ones and empty functions wrapping partials (functools.wraps
        # copied the partial's module name): all five say their module is functools, and would
        # be taken for foreign objects without it. No functools function is re-exported by the
        # namespaces mined. (isin and ravel_multi_index carry numpy's module name the same way
        # and stay unmined: numpy's own objects must stay foreign.)
        own_modules=("dask.array", "functools"),
        # the submodules re-export dask.array's core functions (concatenate, eye, asarray,
        # broadcast_to) and helpers (normalize_chunks, svd_flip, meta_from_array): only the
        # functions they define are theirs (the core ones are mined at the top level)
        namespace_origins={ns: (ns,) for ns in _MODULES[1:]},
        from_numpy_ref="xamt.libraries.dask:from_numpy",
        to_numpy_ref="xamt.libraries.dask:to_numpy",
        finish_ref="xamt.libraries.dask:finish",
        doc_prefixes={"da": "dask.array", "dask": "dask"},
        dtype_ref="xamt.libraries.numpy:dtype",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("dask.array", "Array", _METHOD_PLUMBING),),
        signature_hook_ref="xamt.libraries.dask:forwarded_signature",
        signature_hook_on_variadic=True,
        exclude=frozenset({
            # graph building, re-blocking, scheduling and storage, not array operations
            "dask.array.blockwise", "dask.array.atop", "dask.array.map_blocks",
            "dask.array.map_overlap", "dask.array.rechunk", "dask.array.unify_chunks",
            "dask.array.reshape_blockwise", "dask.array.from_array", "dask.array.from_delayed",
            "dask.array.from_npy_stack", "dask.array.from_tiledb", "dask.array.from_zarr",
            "dask.array.to_hdf5", "dask.array.to_npy_stack", "dask.array.to_tiledb",
            "dask.array.to_zarr", "dask.array.store", "dask.array.register_chunk_type",
            "dask.array.array_expr_enabled", "dask.array.optimize", "dask.array.reduction",
            "dask.array.apply_gufunc", "dask.array.as_gufunc", "dask.array.frompyfunc",
            # a test helper (compares a dask array with a numpy one)
            "dask.array.assert_eq",
            # helpers the submodules define for themselves
            "dask.array.linalg.compression_level", "dask.array.fft.fft_wrap",
            "dask.array.fft.chunk_error", "dask.array.fft.fft_preamble",
        }),
        # not the reference: dask's functions forward to numpy's on each block, under numpy's
        # names with fewer parameters; numpy (0) and the other libraries pivot plans first
        pivot_rank=60,
        kernels="numpy",  # each chunk is computed by numpy's functions
        environment={"DASK_SCHEDULER": "synchronous"},
        zygote_warmup=("xamt.libraries.dask:import_array_modules",),
        # a reproducer runs the call as the fuzzer did: one chunk, the synchronous scheduler
        # (its `np.asarray` of the result computes the graph)
        literal_array="dask.array.from_array({}, chunks=-1)", literal_dtype="np.dtype('{}')",
        literal_imports=("import dask.array",),
        literal_environment=("DASK_SCHEDULER",),
    )
