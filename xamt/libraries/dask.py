"""Dask adapter (``dask.array`` and its ``linalg``, ``fft`` and ``random`` modules; CPU only).

A dask array is a lazy graph of numpy blocks: an API call only builds the graph, and the values
(and most errors) appear when :func:`to_numpy` computes it. Two choices follow.

- Chunks: :func:`from_numpy` makes one chunk of the whole array. That is what dask itself gives
  an array this small (``chunks="auto"`` aims at 128 MiB blocks), and the only layout every API
  mined accepts: ``dask.array.fft`` needs one chunk along the transformed axes, ``linalg.qr``
  and ``svd`` tall-and-skinny blocks, ``linalg.solve`` and ``inv`` square ones. Dask's
  block-combining algorithms (tree reductions, overlaps across blocks) are therefore not
  exercised: a multi-chunk layout would be a second conversion, not this one.
- Scheduler: a sandbox worker is a process forked from a single-threaded zygote, and dask's
  default scheduler for arrays is a thread pool. ``DASK_SCHEDULER=synchronous`` (dask reads
  ``DASK_*`` variables into ``dask.config`` when it is imported) makes every ``compute`` run in
  the calling thread, so no worker ever starts a thread and a crash or a hang is the call's own.
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, MethodOwner, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "import_array_modules"]

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
        dtype_ref="xamt.libraries.numpy:dtype",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("dask.array", "Array", _METHOD_PLUMBING),),
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
        environment={"DASK_SCHEDULER": "synchronous"},
        zygote_warmup=("xamt.libraries.dask:import_array_modules",),
        # a reproducer runs the call as the fuzzer did: one chunk, the synchronous scheduler
        # (its `np.asarray` of the result computes the graph)
        literal_array="dask.array.from_array({}, chunks=-1)", literal_dtype="np.dtype('{}')",
        literal_imports=("import dask.array",),
        literal_environment=("DASK_SCHEDULER",),
    )
