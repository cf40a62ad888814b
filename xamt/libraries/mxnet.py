"""MXNet adapter: ``mxnet.numpy`` (``mx.np``, numpy-like), with its ``linalg`` and ``random``
modules, and ``mxnet.numpy_extension`` (``mx.npx``, neural-network operators); CPU only.

MXNet 1.9.1, the last release, needs numpy < 2 while Xamt pins numpy 2, so the library lives in a
virtual environment of its own (``.venv-mxnet``, made by ``make venv-mxnet``) and its calls run
in a sandbox zygote started from that interpreter (:class:`~xamt.libraries.base.Runtime`); the
catalog is mined there too. Without the venv the library reports itself not installed and is
skipped. The legacy ``mxnet.ndarray`` (``mx.nd``) operators are not mined: they take and return
another array type (``NDArray``, not ``mx.np.ndarray``), with legacy shape and dtype rules of
their own, and ``mx.np`` covers the numpy names they would be matched under.

Three settings make the library behave as the fuzzer needs:

- NumPy semantics: without ``npx.set_np()`` MXNet treats a zero-size or zero-dim shape as
  unknown (``mx.np.zeros((0, 3))`` fails shape inference). :func:`numpy_semantics` turns them
  on: the zygote calls it (workers forked from it inherit the flags; it starts no thread), and
  so does :func:`from_numpy`, for a process that had no zygote (a standalone reproducer).
- ``MXNET_ENGINE_TYPE=NaiveEngine``: MXNet's default engine runs operators asynchronously in a
  thread pool it starts at the first operation, and an operator's error surfaces only when the
  result is read (``asnumpy``), where it would be taken for a failed output conversion. The
  naive engine runs each operator in the calling thread, so an error is the call's and a
  worker starts no thread. Set in the runtime's environment: it defines how results are
  attributed, whatever the user's environment says.
- One OpenMP thread: the sandbox's thread settings (``OMP_NUM_THREADS=1``, applied to every
  zygote) keep MXNet's import from starting an OpenMP pool, so the zygote stays
  single-threaded and forks its workers.
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, MethodOwner, Runtime

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype", "numpy_semantics"]

#: the dtypes ``mx.np`` arrays hold (a numpy array of another dtype does not convert: int16,
#: the unsigned types wider than 8 bits, complex); names are numpy's
_DTYPES = {name: name for name in ("bool", "int8", "int32", "int64", "uint8", "float16",
                                   "float32", "float64")}

#: the modules mined (real module names: ``mxnet.np`` is an attribute, not an importable module)
_NAMESPACES = ("mxnet.numpy", "mxnet.numpy.linalg", "mxnet.numpy.random",
               "mxnet.numpy_extension", "mxnet.numpy_extension.random")

#: ``mx.np.ndarray`` methods that move, copy out, serialise, or record gradients rather than
#: compute an array
_METHOD_PLUMBING = frozenset({
    "as_in_context", "as_in_ctx", "as_nd_ndarray", "as_np_ndarray", "asnumpy", "attach_grad",
    "backward", "copyto", "detach", "to_dlpack_for_read", "to_dlpack_for_write", "tolist",
    "wait_to_read", "item",
})

#: ``mx.np.ndarray`` methods inherited from the legacy ``NDArray`` that ``mx.np.ndarray``
#: overrides only to raise ``AttributeError("... has no attribute ...")`` (MXNet 1.9.1's
#: ``numpy/multiarray.py``): stubs, not operations
_METHOD_STUBS = frozenset({
    "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "argmax_channel",
    "asscalar", "broadcast_axes", "broadcast_like", "cbrt", "ceil", "cos", "cosh", "degrees",
    "depth_to_space", "diag", "exp", "expand_dims", "expm1", "fix", "flip", "floor", "log",
    "log10", "log1p", "log2", "log_softmax", "nanprod", "nansum", "norm", "one_hot", "ones_like",
    "pad", "pick", "radians", "rcbrt", "reciprocal", "relu", "reshape_like", "rint", "rsqrt",
    "shape_array", "sigmoid", "sign", "sin", "sinh", "size_array", "slice", "slice_axis",
    "slice_like", "softmax", "softmin", "space_to_depth", "split", "split_v2", "sqrt", "square",
    "tan", "tanh", "tile", "topk", "tostype", "trunc", "zeros_like",
})


def numpy_semantics() -> None:
    """Turn on MXNet's NumPy shape and array semantics in this thread (idempotent, cheap; sets
    two flags, runs no operator and starts no thread): the zygote's warm-up."""
    import mxnet

    if not (mxnet.util.is_np_shape() and mxnet.util.is_np_array()):
        mxnet.npx.set_np()


def from_numpy(array: Any) -> Any:
    """numpy array → ``mx.np.ndarray`` on the CPU, a copy of the same dtype (a dtype MXNet lacks
    raises). Turns the NumPy semantics on first (see the module docstring)."""
    import mxnet
    import numpy as np

    numpy_semantics()
    array = np.asarray(array)
    return mxnet.np.array(array, dtype=array.dtype, ctx=mxnet.cpu())


def to_numpy(value: Any) -> Any:
    """An MXNet array (``mx.np.ndarray`` or a legacy ``NDArray``) → numpy through ``asnumpy``,
    which waits for the result; anything else through ``np.asarray``."""
    import numpy as np

    asnumpy = getattr(value, "asnumpy", None)
    if asnumpy is not None and type(value).__module__.startswith("mxnet."):
        return asnumpy()
    return np.asarray(value)


def dtype(name: str) -> Any:
    """MXNet names dtypes by numpy's scalar types (``mx.np.float32`` is ``numpy.float32``)."""
    import numpy as np

    return np.dtype(name).type


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="mxnet",
        import_name="mxnet",
        distributions=("mxnet",),
        namespaces=_NAMESPACES,
        # mxnet.numpy re-exports some ~80 of numpy's own functions (its fallbacks: numpy's
        # function, dispatched back through __array_function__) and ufuncs: those carry numpy's
        # module or none and stay numpy's
        own_modules=("mxnet",),
        from_numpy_ref="xamt.libraries.mxnet:from_numpy",
        to_numpy_ref="xamt.libraries.mxnet:to_numpy",
        dtype_ref="xamt.libraries.mxnet:dtype",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("mxnet.numpy", "ndarray", _METHOD_PLUMBING | _METHOD_STUBS),),
        exclude=frozenset({
            # file input/output, printing and dtype helpers of mx.np
            "mxnet.numpy.genfromtxt", "mxnet.numpy.set_printoptions",
            # npx: semantics switches, contexts and devices, serialisation, synchronisation
            "mxnet.numpy_extension.set_np", "mxnet.numpy_extension.reset_np",
            "mxnet.numpy_extension.is_np_array", "mxnet.numpy_extension.is_np_shape",
            "mxnet.numpy_extension.cpu", "mxnet.numpy_extension.cpu_pinned",
            "mxnet.numpy_extension.gpu", "mxnet.numpy_extension.num_gpus",
            "mxnet.numpy_extension.current_context", "mxnet.numpy_extension.gpu_memory_info",
            "mxnet.numpy_extension.get_cuda_compute_capability",
            "mxnet.numpy_extension.save", "mxnet.numpy_extension.load",
            "mxnet.numpy_extension.waitall", "mxnet.numpy_extension.check_call",
            "mxnet.numpy_extension.classproperty", "mxnet.numpy_extension.with_metaclass",
            "mxnet.numpy_extension.random.seed",
        }),
        # after the other libraries as the pivot of plans and triage's reference: its names are
        # numpy's, its semantics a reimplementation on another engine
        pivot_rank=70,
        runtime=Runtime("mxnet", env={"MXNET_ENGINE_TYPE": "NaiveEngine"}, venv=".venv-mxnet"),
        zygote_warmup=("xamt.libraries.mxnet:numpy_semantics",),
        doc_prefixes={"mx": "mxnet", "mxnet": "mxnet", "npx": "mxnet.numpy_extension"},
        # no literal forms: a literal script reads results with np.asarray, which makes an
        # object array of 0-d MXNet arrays from an mx.np.ndarray (it has no __array__), and
        # would need set_np() before its first call; findings keep the msgpack form, which
        # converts with this module's functions. Its scripts set the engine as workers had it
        literal_environment=("MXNET_ENGINE_TYPE",),
    )
