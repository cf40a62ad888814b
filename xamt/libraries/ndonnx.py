"""ndonnx adapter: ``ndonnx``, an Array API implementation that builds ONNX graphs, with its
public ``ndonnx.extensions`` (``isin``, ``put``, ``static_map``) and the ``ndonnx.Array``
methods that compute (``sum``, ``max``, ``astype`` ...); CPU only.

ndonnx 0.23.0 has no conflict with Xamt's pins (numpy 2), but a library stays out of the main
venv: it lives in a virtual environment of its own (``.venv-ndonnx``, made by ``make
venv-ndonnx``) with ONNX Runtime, and its calls run in a sandbox pool started from that
interpreter (:class:`~xamt.libraries.base.Runtime`); the catalog is mined there too. Without the
venv the library reports itself not installed and is skipped.

What each setting is there for:

- Eager values: every ndonnx function adds ONNX nodes to a graph (through spox); an array made
  from a constant (``ndonnx.asarray(numpy_array)``, what :func:`from_numpy` makes) carries its
  value, and spox's *value propagation* runs each new node on the values of its inputs as it is
  built. ndonnx's import makes ONNX Runtime that propagation's backend whenever ``onnxruntime``
  is installed (the venv pins it; without it spox's incomplete reference implementation runs),
  so a call's result is computed by ONNX Runtime inside the call, and ``Array.unwrap_numpy()``
  returns it. What the graph builder refuses (a dtype an operator lacks: ``TypeError: 'sin' is
  not implemented for data type `int32```; ONNX shape inference: ``InferenceError``) raises from
  the call itself.
- Errors of ONNX Runtime are the call's: spox swallows an exception of the propagation session
  (``logging.debug``) and returns a *lazy* array, without a value (``unwrap_numpy`` then raises
  ``ValueError: no propagated value available``). The ``finish`` hook (run inside the call)
  therefore takes every array of the result to numpy, and for one without a value builds its
  graph (``ndonnx.build``, the library's own export) and runs it in an ONNX Runtime session set
  as spox sets its own (no graph optimisation): the session's exception (``InvalidArgument:
  [ONNXRuntimeError] : 2 : INVALID_ARGUMENT : ... Gather ... indices element out of data
  bounds``) is raised as the call's, and where the session computes what propagation did not
  (ndonnx switches propagation off for a few operators, a zero-sized ``matmul``), its value is
  the result. :func:`to_numpy` does the same, so a reproducer without the hook reproduces it.
- Dtypes: ndonnx's array dtypes are numpy's bool, (u)int8-64 and float16/32/64, named as numpy
  names them (``str(ndonnx.int32) == "int32"``); it has no complex and no bfloat16 (``asarray``
  raises ``ValueError: 'complex64' does not have a corresponding ndonnx data type``). Its own
  nullable (``nint32`` ...), string (``utf8``) and datetime dtypes have no numpy array of
  Xamt's and are not produced by the conversions. A dtype object in a result is named by its
  ``str`` (``result_type``); a dtype argument is ``getattr(ndonnx, name)``, and one ndonnx
  lacks is refused in ``asarray``'s words, which ``error_kinds.toml`` reads as benign.
- Threads: importing ndonnx imports ``onnxruntime`` (it computes its module constants at import),
  whose native module may start threads of its own when it loads: two threads after
  ``import onnxruntime`` on this project's development machine, one (no extra thread) on its CI
  machine. Where there are more, the zygote cannot fork: it reports ``N threads after the
  imports`` and spawns fresh workers (an import of about half a second each). Each
  propagation session makes ONNX Runtime's intra-op pool for its run (one thread per core, the
  default of the ``SessionOptions`` spox passes) and frees it with the session: no variable sets
  its size, and ONNX Runtime reads no environment variable that changes results, so the runtime
  sets none.
- Arrays go in as private copies (:func:`from_numpy` copies before ``asarray``, which keeps the
  buffer it is given as the constant's value), so ``extensions.put``, which updates its first
  argument, cannot write into the caller's array.
- Mined: ``ndonnx`` (its ``__all__``: the standard's functions, ``finfo``/``iinfo``,
  ``result_type`` ...) and ``ndonnx.extensions``; left out are what builds graphs or models rather
  than computing (``argument``, ``build``), dtype conversions, the nullable and datetime helpers
  and the dtype predicates of the extensions. ``Array``'s methods (``sum``, ``max``, ``min``,
  ``prod``, ``all``, ``any``, ``astype``, ``copy``) are mined too; note that they default to
  ``axis=0``, not to every axis as the functions do (ndonnx's own signature).
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, MethodOwner, Runtime, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "finish", "dtype"]

#: numpy's dtypes less those ndonnx has no array of (see the module docstring)
_DTYPES = same_dtype_names(("bfloat16", "complex64", "complex128"))

#: ``ndonnx.Array`` methods that export, convert or move rather than compute
_METHOD_PLUMBING = frozenset({"unwrap_numpy", "unwrap_spox", "disassemble", "to_device"})


def from_numpy(array: Any) -> Any:
    """numpy array -> ``ndonnx.Array`` holding a private copy as its constant value."""
    import ndonnx
    import numpy as np

    return ndonnx.asarray(np.array(array, copy=True))


def _value(array: Any) -> Any:
    """An ``ndonnx.Array``'s value as numpy: the propagated one, else what ONNX Runtime computes
    for the array's graph (its exception raised as it comes; see the module docstring)."""
    import ndonnx
    import numpy as np

    try:
        return np.asarray(array.unwrap_numpy())
    except ValueError:
        pass  # no propagated value: run the graph, so that ONNX Runtime says why
    import onnxruntime

    model = ndonnx.build({}, {"out": array})
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(model.SerializeToString(), options)
    (out,) = session.run(None, {})
    return np.asarray(out)


def to_numpy(value: Any) -> Any:
    """An ``ndonnx.Array`` -> its value (:func:`_value`); an ndonnx dtype -> its name
    (``"int32"``); anything else through ``np.asarray``."""
    import ndonnx
    import numpy as np

    if isinstance(value, ndonnx.Array):
        return _value(value)
    if isinstance(value, ndonnx.DType):
        return str(value)
    return np.asarray(value)


def finish(value: Any) -> Any:
    """The adapter's ``finish`` hook: every ``ndonnx.Array`` of the result (in a tuple, a list
    or a named tuple too) as numpy, inside the call, so that an error of ONNX Runtime is the
    call's (see the module docstring)."""
    import ndonnx

    if isinstance(value, ndonnx.Array):
        return _value(value)
    if isinstance(value, (tuple, list)):
        return tuple(finish(v) for v in value)
    return value


def dtype(name: str) -> Any:
    """ndonnx's dtype of a numpy dtype name (``ndonnx.float32``; ``ndonnx.bool``); a dtype
    ndonnx lacks (``complex128``) is refused with ndonnx's own words for it (``asarray``'s), an
    expected refusal, not an ``AttributeError`` of the module."""
    if name not in _DTYPES:
        raise ValueError(f"{name!r} does not have a corresponding ndonnx data type")
    import ndonnx

    return getattr(ndonnx, _DTYPES[name])


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="ndonnx",
        import_name="ndonnx",
        distributions=("ndonnx",),
        namespaces=("ndonnx", "ndonnx.extensions"),
        own_modules=("ndonnx",),
        from_numpy_ref="xamt.libraries.ndonnx:from_numpy",
        to_numpy_ref="xamt.libraries.ndonnx:to_numpy",
        finish_ref="xamt.libraries.ndonnx:finish",
        dtype_ref="xamt.libraries.ndonnx:dtype",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("ndonnx", "Array", _METHOD_PLUMBING),),
        exclude=frozenset({
            # a graph's symbolic input and the export of a model: graph building, not values
            "ndonnx.argument", "ndonnx.build",
            # conversions between dtype objects, and an import from another library's array
            # (an ndonnx array has no __dlpack__)
            "ndonnx.from_numpy_dtype", "ndonnx.to_nullable_dtype", "ndonnx.from_dlpack",
            # the extensions' dtype predicates (is_float_dtype ...), and the helpers of ndonnx's
            # own nullable and datetime dtypes, which have no numpy twin of Xamt's
            "ndonnx.extensions.is_*", "ndonnx.extensions.fill_null", "ndonnx.extensions.get_data",
            "ndonnx.extensions.get_mask", "ndonnx.extensions.make_nullable",
            "ndonnx.extensions.datetime_to_year_month_day",
        }),
        # after the other Array API libraries as the pivot of plans and triage's reference: its
        # names are the standard's, its kernels ONNX Runtime's
        pivot_rank=70,
        runtime=Runtime("ndonnx", venv=".venv-ndonnx"),
        doc_prefixes={"ndonnx": "ndonnx", "ndx": "ndonnx"},
    )
