"""PyTensor adapter: ``pytensor.tensor`` (with its ``math``, ``linalg``, ``slinalg``,
``nlinalg``, ``special`` and ``extra_ops`` modules), each function called on symbolic inputs of
the arrays' types and the graph compiled by ``pytensor.function`` for PyTensor's C backend; CPU
only.

PyTensor 3.0.7 needs numba, llvmlite and a scipy of its own choosing; it lives in a virtual
environment of its own (``.venv-pytensor``, made by ``make venv-pytensor``) so that the main
venv's pins stay as they are, and its calls run in a sandbox zygote started from that
interpreter (:class:`~xamt.libraries.base.Runtime`); the catalog is mined there too. Without the
venv the library reports itself not installed and is skipped.

How a call runs, and why:

- Symbolic inputs: :func:`from_numpy` makes a fresh symbolic variable of the array's PyTensor
  type, ``pt.tensor(dtype, shape)`` with ``1`` for each axis of length one and ``None`` for the
  others (PyTensor broadcasts only axes its type declares of length one: a ``None`` axis of
  length one at run time is refused), and keeps a private copy of the array on the variable
  (``tag.xamt_value``). The API then builds a graph, as a user's code does; what it refuses
  while building (a type check in ``make_node``) is the call's error. Non-array arguments
  (``axis=1``, a Python scalar, a dtype name) reach the API as they are and become constants of
  the graph, or the op's parameters.
- Compilation: the :func:`finish` hook (run inside the call) compiles the graph from those
  inputs to the API's outputs with ``pytensor.function`` and runs it on the kept arrays, so a
  rewrite or C compilation failure, and what the compiled function raises, are the call's too.
  Compiled functions are kept per worker (at most :data:`_CACHE_SIZE`), keyed by the graph
  built: its input types and, node after node, each op with what it takes (inputs, or the value
  of a constant). The same API called on inputs of the same types with the same keyword and
  constant values builds the same graph, so it compiles once per (API, input types, keyword
  values); PyTensor's own merge rewrite relies on the same op equality. A graph holding an op
  or a constant that cannot be hashed is compiled for that call only.
- The backend is pinned in code, ``Mode(linker="cvm", optimizer="o4")``: PyTensor 3's default
  linker (``"auto"``) is Numba, whose first call of each function spends seconds in LLVM (5 to
  12 s, measured, against well under 1 s for the C backend once an op's module is compiled);
  the C backend is the one that compiles each op with the C compiler into the compile folder.
  Outputs are copied (a compiled function may reuse its output storage on the next call). The
  flags' ``linker=cvm`` pins it for the functions PyTensor compiles by itself too: an
  ``OpFromGraph`` op (``pad``, the linear-control solvers) has no C code, and its ``perform``
  compiles its inner graph with the configured default, which was Numba (8.6 s for ``pad`` on
  float64, then 2.5 s for every new dtype, against 4.9 s and 0.1 s on the C backend).
- Dtype probes compile nothing (:func:`probe_call`): the graph runs on the Python linker, each
  op's ``perform``, inner graphs included. The registry build's workers run every call so
  (:func:`linker`); a campaign's run on the C backend.
- The runtime's ``PYTENSOR_FLAGS`` pin the configuration that changes results or their dtypes,
  whatever the user's environment says: ``floatX=float64`` (the dtype of Python floats and of
  integer-to-float promotion), ``cast_policy=custom`` (PyTensor's own promotion rules, its
  default), ``optimizer=o4`` (the default rewrites), ``linker=cvm`` (the C backend, above),
  ``openmp=False`` (no OpenMP threads in a forked worker), ``blas__ldflags=`` (no BLAS probe at
  the first compilation, which would start a compiler in a subprocess and warn; dot products go
  through numpy's BLAS),
  ``on_opt_error=warn`` (a failing rewrite is skipped, as by default) and
  ``base_compiledir``: a temporary folder per Xamt process (``<tmp>/xamt-pytensor-<pid>``,
  removed when that process exits), so no two processes (a build, a campaign, a test session,
  another user's PyTensor) share one compile folder and its lock, and nothing is written to
  ``~/.pytensor``. Within a process its pools' workers share it (a runtime pool runs one
  worker at a time). ``XAMT_PYTENSOR_CACHE_DIR`` names the same folder: the sandbox lets
  confined workers write the folders of variables ending in ``_CACHE_DIR``.
- Dtypes: every numpy dtype but bfloat16 (PyTensor has none); the inputs' dtypes are the
  arrays'. Results are numpy arrays (0-d for scalars).
- PyTensor's elementwise operators (``exp``, ``add``, ``gammaln`` ...) are ``Elemwise``
  instances, not functions (``routine_types``); their call signature is ``(*inputs)``, so
  :func:`elemwise_signature` gives them positional parameters by their arity (``x`` for one
  input, ``x1``, ``x2`` for two, as numpy's ufuncs; three or more by the names of the Python
  function PyTensor wrapped: ``clip(x, min, max)``).
"""
from __future__ import annotations

import os
import tempfile
from collections import OrderedDict
from typing import Any

from xamt.libraries.base import LibraryAdapter, ParamSpec, Runtime, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype", "finish", "probe_call", "elemwise_signature"]

#: numpy's dtypes less bfloat16 (PyTensor has none); names are numpy's
_DTYPES = same_dtype_names(("bfloat16",))

#: the modules mined: ``pytensor.tensor`` re-exports most of the others' functions (an object
#: is mined once, under its first name)
_NAMESPACES = ("pytensor.tensor", "pytensor.tensor.math", "pytensor.tensor.linalg",
               "pytensor.tensor.slinalg", "pytensor.tensor.nlinalg", "pytensor.tensor.special",
               "pytensor.tensor.extra_ops")

#: compiled functions kept per worker process
_CACHE_SIZE = 512
_COMPILED: "OrderedDict[Any, Any]" = OrderedDict()
_MODE: list[Any] = []


def from_numpy(array: Any) -> Any:
    """numpy array -> a fresh symbolic variable of its PyTensor type (length-one axes declared
    broadcastable), holding a private copy of the array as ``tag.xamt_value``."""
    import numpy as np
    import pytensor.tensor as pt

    value = np.array(array, copy=True)
    var = pt.tensor(dtype=value.dtype.name, shape=tuple(1 if n == 1 else None for n in value.shape))
    var.tag.xamt_value = value
    return var


def to_numpy(value: Any) -> Any:
    """A variable -> its value (an input's kept array; anything else computed as :func:`finish`
    does); anything else through ``np.asarray``."""
    import numpy as np
    from pytensor.graph.basic import Constant, Variable

    if isinstance(value, Variable):
        kept = getattr(value.tag, "xamt_value", None)
        if kept is not None:
            return kept
        if isinstance(value, Constant):
            return np.asarray(value.data)
        return np.asarray(finish(value))
    return np.asarray(value)


def dtype(name: str) -> Any:
    """PyTensor names dtypes by numpy's names, as strings (``pt.cast(x, "float32")``)."""
    return name


#: the variable naming the linker that runs the calls (see :func:`linker`)
LINKER_VARIABLE = "XAMT_PYTENSOR_LINKER"


def linker() -> str:
    """The linker that runs the calls in this process: ``cvm``, the C backend (the default; what
    a campaign tests), or ``py``, PyTensor's Python linker, each op's ``perform``, set by
    ``validation.toml``'s ``[build_environment]`` for the registry build's workers. The C
    backend compiles a module per op, dtype and rank (about 0.6 s of the C compiler each): with
    it a build of numpy and PyTensor took 526 s of CPU, with the Python linker 68 s, and the two
    registries differed in one inferred pair's status on an invalid input."""
    value = os.environ.get(LINKER_VARIABLE, "cvm")
    if value not in ("cvm", "py"):
        raise ValueError(f"{LINKER_VARIABLE} must be 'cvm' or 'py', not {value!r}")
    return value


def finish(result: Any) -> Any:
    """The adapter's ``finish`` hook: the variables of an API's result (one, or a tuple or list
    of them) compiled from the symbolic inputs they depend on and computed on the arrays those
    hold, on the C backend or, where :func:`linker` says so, the Python linker. Anything else is
    returned as it is."""
    if linker() == "py":
        import pytensor

        # the inner graphs of OpFromGraph ops take the configured linker: Python's too
        with pytensor.config.change_flags(linker="py"):
            return _finish(result, python=True)
    return _finish(result)


def _finish(result: Any, python: bool = False) -> Any:
    """:func:`finish`, compiled for the C backend or (``python``) run by the Python linker."""
    from pytensor.graph.basic import Variable

    if isinstance(result, Variable):
        return _evaluate([result], python)[0]
    if isinstance(result, (tuple, list)) and any(isinstance(v, Variable) for v in result):
        slots = [k for k, v in enumerate(result) if isinstance(v, Variable)]
        values = _evaluate([result[k] for k in slots], python)
        out = list(result)
        for k, v in zip(slots, values):
            out[k] = v
        return type(result)(out) if isinstance(result, tuple) else out
    return result


def probe_call(fn: Any, *args: Any) -> Any:
    """The dtype probe's evaluator (``validation.toml [probe.abstract]``, see
    :func:`xamt.exec.probe.abstract_call`): the API's graph built on the cast inputs and run with
    PyTensor's Python linker, each op's ``perform`` (the numpy and scipy code the C backend
    falls back to), so nothing is compiled. Graph building checks the inputs' types; running
    catches what ``perform`` refuses (``gammaln`` of complex64). A probed dtype costs
    milliseconds, where the C backend compiles each op for it (one to three seconds a call).
    The inner graphs of ``OpFromGraph`` ops, compiled with the configured linker, run on the
    Python linker too."""
    import pytensor

    with pytensor.config.change_flags(linker="py"):
        return _finish(fn(*args), python=True)


def _mode(python: bool = False) -> Any:
    if not _MODE:
        from pytensor.compile.mode import Mode

        _MODE.extend([Mode(linker="cvm", optimizer="o4"), Mode(linker="py", optimizer="o4")])
    return _MODE[1 if python else 0]


def _evaluate(outputs: list[Any], python: bool = False) -> list[Any]:
    import numpy as np
    import pytensor
    from pytensor.graph.traversal import graph_inputs

    inputs = []
    for var in graph_inputs(outputs):
        if getattr(var.tag, "xamt_value", None) is not None and var not in inputs:
            inputs.append(var)
    key = _graph_key(inputs, outputs)
    key = None if key is None else (python, key)
    fn = _COMPILED.get(key) if key is not None else None
    if fn is None:
        fn = pytensor.function(inputs, outputs, mode=_mode(python), on_unused_input="ignore")
        if key is not None:
            _COMPILED[key] = fn
            while len(_COMPILED) > _CACHE_SIZE:
                _COMPILED.popitem(last=False)
    else:
        _COMPILED.move_to_end(key)
    values = fn(*[var.tag.xamt_value for var in inputs])
    return [np.array(v, copy=True) for v in values]


def _graph_key(inputs: list[Any], outputs: list[Any]) -> Any:
    """A hashable description of the graph from ``inputs`` to ``outputs``: the inputs' types,
    then per node (in topological order) its op and what each input is (a graph input, an
    earlier node's output, or a constant's signature), then what each output is. None when an
    op or a constant cannot be hashed, or the graph holds another root (a shared variable)."""
    from pytensor.graph.basic import Constant
    from pytensor.graph.traversal import io_toposort

    where: dict[Any, Any] = {var: ("in", k) for k, var in enumerate(inputs)}

    def ref(var: Any) -> Any:
        found = where.get(var)
        if found is not None:
            return found
        if isinstance(var, Constant):
            return ("const", var.signature())
        raise TypeError("not a graph input, node output or constant")

    try:
        parts: list[Any] = [tuple(var.type for var in inputs)]
        for n, node in enumerate(io_toposort(inputs, outputs)):
            parts.append((node.op, tuple(ref(v) for v in node.inputs)))
            for k, out in enumerate(node.outputs):
                where[out] = ("node", n, k)
        parts.append(tuple(ref(v) for v in outputs))
        key = tuple(parts)
        hash(key)
        return key
    except TypeError:
        return None


def elemwise_signature(obj: Any, name: str, owner: str | None) -> list[list[ParamSpec]] | None:
    """The adapter's signature hook: an ``Elemwise`` operator's inputs, positional-only, named
    by its arity (``x``; ``x1``, ``x2``, ...). None for anything else."""
    scalar_op = getattr(obj, "scalar_op", None)
    nin = getattr(scalar_op, "nin", None)
    if owner is not None or type(obj).__name__ != "Elemwise" or not isinstance(nin, int):
        return None
    if nin < 1:  # no fixed arity (add, mul; betaincinv's scalar op says -1 too): the wrapped
        # function's plain parameters when it has three or more, else two inputs
        wrapped = _wrapped_names(obj, None)
        nin = len(wrapped) if wrapped and len(wrapped) >= 3 else 2
    names = ["x"] if nin == 1 else [f"x{k + 1}" for k in range(nin)]
    if nin >= 3:  # numbered names meet nothing: the Python function PyTensor wrapped names them
        names = _wrapped_names(obj, nin) or names
    return [[(n, "positional_only", None, None) for n in names]
            + [("name", "keyword_only", "None", None), ("return_list", "keyword_only", "False", None)]]


def _wrapped_names(obj: Any, nin: int | None) -> list[str] | None:
    """The parameter names of the function ``scalar_elemwise`` turned into ``obj`` (it keeps it
    as ``__epydoc_asRoutine``: ``clip(x, min, max)``, ``switch(cond, ift, iff)``), when they are
    ``nin`` (None: any number of) plain parameters."""
    import inspect

    wrapped = getattr(obj, "__epydoc_asRoutine", None)
    try:
        params = list(inspect.signature(wrapped).parameters.values()) if callable(wrapped) else []
    except (TypeError, ValueError):
        return None
    if not params or (nin is not None and len(params) != nin) or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        return None
    return [p.name for p in params]


def _compile_folder() -> str:
    """This process's PyTensor compile folder (see the module docstring); removed at exit by
    the process that named it."""
    import atexit
    import shutil

    folder = os.path.join(tempfile.gettempdir(), f"xamt-pytensor-{os.getpid()}")
    if folder not in _REMOVE_AT_EXIT:
        _REMOVE_AT_EXIT.add(folder)
        atexit.register(shutil.rmtree, folder, True)
    return folder


_REMOVE_AT_EXIT: set[str] = set()


def _flags(folder: str) -> str:
    return ",".join((
        "floatX=float64", "cast_policy=custom", "optimizer=o4", "linker=cvm", "openmp=False",
        "blas__ldflags=", "on_opt_error=warn", f"base_compiledir={folder}"))


def adapter() -> LibraryAdapter:
    folder = _compile_folder()
    return LibraryAdapter(
        name="pytensor",
        import_name="pytensor",
        distributions=("pytensor",),
        namespaces=_NAMESPACES,
        own_modules=("pytensor",),
        from_numpy_ref="xamt.libraries.pytensor:from_numpy",
        to_numpy_ref="xamt.libraries.pytensor:to_numpy",
        finish_ref="xamt.libraries.pytensor:finish",
        dtype_ref="xamt.libraries.pytensor:dtype",
        dtypes=_DTYPES,
        routine_types=frozenset({"Elemwise"}),
        signature_hook_ref="xamt.libraries.pytensor:elemwise_signature",
        signature_hook_on_variadic=True,
        exclude=frozenset({
            # symbolic variable and type constructors (pt.matrix, pt.dvectors, pt.tensor ...),
            # graph plumbing and printing: they build or inspect graphs, not compute arrays
            "pytensor.tensor.*vector", "pytensor.tensor.*vectors", "pytensor.tensor.*matrix",
            "pytensor.tensor.*matrices", "pytensor.tensor.*scalar", "pytensor.tensor.*scalars",
            "pytensor.tensor.*row", "pytensor.tensor.*rows", "pytensor.tensor.*col",
            "pytensor.tensor.*cols", "pytensor.tensor.*tensor3*", "pytensor.tensor.*tensor4*",
            "pytensor.tensor.*tensor5*", "pytensor.tensor.*tensor6*", "pytensor.tensor.*tensor7*",
            "pytensor.tensor.tensor", "pytensor.tensor.tensor_copy", "pytensor.tensor.as_tensor",
            "pytensor.tensor.as_tensor_variable", "pytensor.tensor.constant",
            "pytensor.tensor.get_scalar_constant_value",
            "pytensor.tensor.get_underlying_scalar_constant_value", "pytensor.tensor.grad",
            "pytensor.tensor.Lop", "pytensor.tensor.Rop", "pytensor.tensor.jacobian",
            "pytensor.tensor.hessian", "pytensor.tensor.vectorize_graph",
            "pytensor.tensor.specify_shape", "pytensor.tensor.specify_broadcastable",
            "pytensor.tensor.shape_padleft", "pytensor.tensor.shape_padright",
            "pytensor.tensor.shape_padaxis", "pytensor.tensor.register_transfer",
            "pytensor.tensor.wrap_py", "pytensor.tensor.as_op", "pytensor.tensor.shared",
            "pytensor.tensor.*.as_tensor_variable", "pytensor.tensor.*.constant",
            "pytensor.tensor.math.tensor", "pytensor.tensor.math.specify_shape",
            "pytensor.tensor.transfer", "pytensor.tensor.vectorize", "pytensor.tensor.*vectorize_*",
            "pytensor.tensor.values_eq_approx_always_true", "pytensor.tensor.get_vector_length",
            "pytensor.tensor.is_flat", "pytensor.tensor.broadcast_shape",
            "pytensor.tensor.extra_ops.broadcast_shape_iter", "pytensor.tensor.extra_ops.grad_undefined",
            "pytensor.tensor.extra_ops.upcast", "pytensor.tensor.math.get_normalized_batch_axes",
            "pytensor.tensor.math.makeKeepDims", "pytensor.tensor.math.mod_check",
            "pytensor.tensor.math.normalize_reduce_axis", "pytensor.tensor.math.scalar_elemwise",
        }),
        # after the shipped references as the pivot of plans and triage's reference: its names
        # are mostly numpy's, its semantics a graph compiler's
        pivot_rank=68,
        runtime=Runtime("pytensor", env={
            "PYTENSOR_FLAGS": _flags(folder), "XAMT_PYTENSOR_CACHE_DIR": folder},
            venv=".venv-pytensor"),
        doc_prefixes={"pt": "pytensor.tensor", "pytensor": "pytensor"},
        # no literal forms: findings keep the msgpack form, converted with this module's
        # functions; a script sets the flags that change results as the workers had them
        literal_environment=("PYTENSOR_FLAGS",),
    )
