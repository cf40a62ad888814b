"""MLX adapter: ``mlx.core`` (``mx``, its numpy-like operators) with ``mlx.core.linalg``,
``mlx.core.fft`` and ``mlx.core.random``, and the plain functions of ``mlx.nn`` (activations)
and ``mlx.nn.losses``; the CPU build (``mlx[cpu]``, Linux), on the CPU device.

MLX is Apple's array framework; its Linux CPU wheel (``mlx-cpu``) runs the same operators on
the CPU. It brings its own numpy-independent core, but it lives in a virtual environment of its
own (``.venv-mlx``, made by ``make venv-mlx``), as every library outside the reference six does,
so that Xamt's main venv never changes for it; its calls run in a sandbox zygote started from
that interpreter (:class:`~xamt.libraries.base.Runtime`) and its catalog is mined there too.
Without the venv the library reports itself not installed and is skipped.

What each setting is there for:

- Lazy evaluation: an MLX operator checks its arguments (shapes, dtypes) and records a node of
  a graph; the kernel runs only when the array is evaluated (``mx.eval``, or reading it). A
  kernel's failure (``linalg.inv`` of a singular matrix: ``[Inverse::eval_cpu] LU factorization
  failed``) would otherwise surface in :func:`to_numpy`, where it reads as a failed output
  conversion. :func:`finish` (the adapter's ``finish`` hook) evaluates every array of a result
  inside the call, so such an error, a crash or a hang is the call's, and its time the call's.
- The CPU device: :func:`configure` makes ``mx.cpu`` the default device (every operator's
  ``stream``), which the zygote calls as its warm-up and :func:`from_numpy` once per process
  otherwise. The CPU wheel's default is the CPU already; it is set so that a build with a GPU
  (Metal, CUDA) runs the same kernels, and because ``mlx.core.linalg`` has CPU kernels only.
  Setting it starts no thread; MLX starts its stream's worker thread at the first evaluation,
  which runs only in a forked worker, and importing MLX starts none once the sandbox's
  ``OPENBLAS_NUM_THREADS=1`` is set (measured: one thread), so the zygote forks its workers.
- ``MLX_DISABLE_COMPILE=0`` (the runtime's, whatever the user's environment says): MLX reads it
  at import; set, ``mx.compile`` returns the function uncompiled, and ``mlx.nn``'s activations
  (compiled, ``shapeless=True``, at import) would run unfused kernels: another implementation.
- Conversions: ``mx.array(numpy_array)`` copies, but narrows ``float64`` to ``float32`` and
  ``complex128`` to ``complex64`` unless told the dtype, so :func:`from_numpy` always passes
  ``dtype=``; MLX has no ``complex128`` (such an array is refused, not narrowed, so the
  registry's dtype probe records it unsupported). bfloat16 comes in from ``ml_dtypes.bfloat16``
  directly and goes back through its ``uint16`` bit pattern (``np.array`` of a bfloat16 MLX
  array fails: no PEP 3118 format for it). ``np.asarray`` of an MLX array shares its memory, so
  :func:`to_numpy` copies. A ``mx.Dtype`` comes back as its numpy-style name (``"float32"``).
- Dtypes: MLX holds every numpy dtype but ``complex128``, plus bfloat16. ``float64`` exists on
  the CPU only and many operators refuse it; ``error_kinds.toml`` reads MLX's dtype refusals as
  benign, and the registry's probe finds which each API takes.
- Random: ``mlx.core.random``'s samplers take ``key=None`` (then a global seed's state), or a
  key made by ``mx.random.key(seed)`` (:func:`prng_key`), compared by status only (the
  ``random`` category).
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, ParamSpec, Runtime, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype", "finish", "configure", "prng_key",
           "nanobind_signature"]

#: numpy's dtypes less complex128, which MLX does not have; names are numpy's
_DTYPES = same_dtype_names(("complex128",))

#: the modules mined (``mlx.nn``'s classes are layers with parameters: only its functions)
_NAMESPACES = ("mlx.core", "mlx.core.linalg", "mlx.core.fft", "mlx.core.random", "mlx.nn",
               "mlx.nn.losses")

#: ``mlx.core`` functions that evaluate, transform functions (autodiff, vmap, compilation,
#: export), manage devices, streams, memory and printing, or read and write files: not operators
_CORE_PLUMBING = (
    "eval", "async_eval", "checkpoint", "compile", "disable_compile", "enable_compile",
    "grad", "value_and_grad", "vjp", "jvp", "vmap", "depends",
    "export_function", "export_to_dot", "exporter", "import_function",
    "default_device", "set_default_device", "default_stream", "set_default_stream", "stream",
    "new_stream", "new_thread_local_stream", "new_thread_unsafe_stream", "clear_streams",
    "synchronize", "device_count", "device_info", "is_available",
    "clear_cache", "get_active_memory", "get_cache_memory", "get_memory_limit",
    "get_peak_memory", "reset_peak_memory", "set_cache_limit", "set_memory_limit",
    "set_wired_limit", "get_array_buffer_size",
    "get_printoptions", "set_printoptions", "printoptions",
    "load", "save", "save_gguf", "save_safetensors", "savez", "savez_compressed", "from_dlpack",
)

_EXCLUDE = frozenset(
    [f"mlx.core.{name}" for name in _CORE_PLUMBING]
    + [
        # the global seed (state, not an operator)
        "mlx.core.random.seed",
        # mlx.nn's training helpers: gradients of a model, distributed averaging and sharding
        "mlx.nn.value_and_grad", "mlx.nn.average_gradients", "mlx.nn.fully_shard",
    ])

#: set by :func:`configure` in this process (a forked worker inherits it from the zygote)
_configured = False


def configure() -> None:
    """Make the CPU MLX's default device (idempotent; a setting, no kernel and no thread): the
    zygote's warm-up."""
    global _configured
    if _configured:
        return
    import mlx.core as mx

    mx.set_default_device(mx.cpu)
    _configured = True


def from_numpy(array: Any) -> Any:
    """numpy array → ``mx.array`` of the same dtype (a copy); float64 kept (``dtype=``), a
    complex128 array refused (MLX has no such dtype), bfloat16 from ``ml_dtypes``' type.
    Configures the process first (see the module docstring)."""
    import mlx.core as mx
    import numpy as np

    configure()
    arr = np.asarray(array)
    name = arr.dtype.name
    if name == "complex128":
        raise TypeError("mlx has no complex128 array (mx.array would narrow it to complex64)")
    if name == "bfloat16":
        return mx.array(np.array(arr, order="C").view(np.uint16)).view(mx.bfloat16)
    return mx.array(arr, dtype=dtype(name))


def to_numpy(value: Any) -> Any:
    """An ``mx.array`` → a numpy array of its own (bfloat16 as ``ml_dtypes.bfloat16``, through
    its bit pattern); an ``mx.Dtype`` → its numpy-style name; anything else ``np.asarray``."""
    import mlx.core as mx
    import numpy as np

    if isinstance(value, mx.Dtype):
        return _dtype_name(value)
    if isinstance(value, mx.array):
        if value.dtype == mx.bfloat16:
            import ml_dtypes

            return np.array(value.view(mx.uint16), copy=True).view(ml_dtypes.bfloat16)
        return np.array(value, copy=True)
    return np.asarray(value)


def _dtype_name(value: Any) -> str:
    """``mlx.core.float32`` → ``"float32"``, ``mlx.core.bool`` → ``"bool"``."""
    return str(value).rpartition(".")[2]


def dtype(name: str) -> Any:
    """MLX's dtype object for a numpy dtype name (``bool`` is ``mx.bool_``); a name MLX has no
    dtype for (``complex128``) is refused with a TypeError, as :func:`from_numpy` refuses such
    an array, rather than the AttributeError ``getattr`` would raise (which the oracles would
    take for the API's own failure: ``mx.isdtype(complex128, ...)``)."""
    import mlx.core as mx

    if name == "bool":
        return mx.bool_
    found = getattr(mx, name, None)
    if not isinstance(found, mx.Dtype):
        raise TypeError(f"mlx has no {name} dtype")
    return found


def finish(value: Any) -> Any:
    """The adapter's ``finish`` hook: evaluate every MLX array in a result (an array, or a
    tuple, list or dict holding them), so a kernel's error is the call's (MLX is lazy)."""
    import mlx.core as mx

    arrays = []

    def collect(v: Any) -> None:
        if isinstance(v, mx.array):
            arrays.append(v)
        elif isinstance(v, (tuple, list)):
            for item in v:
                collect(item)
        elif isinstance(v, dict):
            for item in v.values():
                collect(item)

    collect(value)
    if arrays:
        mx.eval(*arrays)
    return value


def prng_key(seed: int) -> Any:
    """MLX's PRNG key for an int seed (``mx.random.key``), a sampler's ``key``."""
    import mlx.core as mx

    configure()
    return mx.random.key(seed)


def nanobind_signature(obj: Any, name: str, owner: str | None) -> list[list[ParamSpec]] | None:
    """The adapter's signature hook: the parameters of an ``mlx.core`` function (a nanobind
    function, which ``inspect`` cannot read) from nanobind's ``__nb_signature__``, one list per
    overload, where the docstring's first line does not parse either: a default written as a
    list (``shape: Sequence[int] = []``, ``axes: ... = [-2, -1]``) is dropped by the docstring
    reader's clean-up of optional ``[...]`` groups. nanobind writes each overload as
    ``def name(a: T, /, b: U = \\0, *, c: V = ...) -> R`` with ``\\N`` standing for the N-th
    value of its defaults tuple (or, without one, the default written out)."""
    import ast
    import re

    overloads = getattr(obj, "__nb_signature__", None)
    if not overloads:
        return None
    found = []
    for entry in overloads:
        text, defaults = entry[0], entry[2] if len(entry) > 2 else None
        text = re.sub(r"\\(\d+)", lambda m: repr(defaults[int(m.group(1))]) if defaults else "None", text)
        text = re.sub(r"\)\s*->.*$", ")", text.strip(), flags=re.S)
        try:
            fn = ast.parse(f"{text}: pass").body[0]
        except (SyntaxError, IndexError, ValueError):
            return None
        if not isinstance(fn, ast.FunctionDef):
            return None
        args, specs = fn.args, []
        positional = [*args.posonlyargs, *args.args]
        pos_defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for i, (arg, default) in enumerate(zip(positional, pos_defaults)):
            kind = "positional_only" if i < len(args.posonlyargs) else "positional_or_keyword"
            specs.append(_param_spec(arg, kind, default))
        if args.vararg is not None:
            specs.append((args.vararg.arg, "var_positional", None, None))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            specs.append(_param_spec(arg, "keyword_only", default))
        if args.kwarg is not None:
            specs.append((args.kwarg.arg, "var_keyword", None, None))
        found.append(specs)
    return found or None


def _param_spec(arg: Any, kind: str, default: Any) -> ParamSpec:
    import ast

    annotation = ast.unparse(arg.annotation) if arg.annotation is not None else None
    return (arg.arg, kind, None if default is None else ast.unparse(default), annotation)


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="mlx",
        import_name="mlx.core",
        distributions=("mlx",),
        namespaces=_NAMESPACES,
        own_modules=("mlx",),
        from_numpy_ref="xamt.libraries.mlx:from_numpy",
        to_numpy_ref="xamt.libraries.mlx:to_numpy",
        dtype_ref="xamt.libraries.mlx:dtype",
        dtypes=_DTYPES,
        finish_ref="xamt.libraries.mlx:finish",
        prng_key_ref="xamt.libraries.mlx:prng_key",
        signature_hook_ref="xamt.libraries.mlx:nanobind_signature",
        exclude=_EXCLUDE,
        # after the other libraries as the pivot of plans and triage's reference: its names are
        # numpy's, its semantics a reimplementation (float32 first, lazy)
        pivot_rank=65,
        runtime=Runtime("mlx", env={"MLX_DISABLE_COMPILE": "0"}, venv=".venv-mlx"),
        zygote_warmup=("xamt.libraries.mlx:configure",),
        # not "mx": the MXNet adapter's documentation prefix already
        doc_prefixes={"mlx": "mlx"},
        # no literal forms: findings keep the msgpack form, which converts with this module's
        # functions (a literal script would need configure() and the lazy evaluation)
        literal_environment=("MLX_DISABLE_COMPILE",),
    )
