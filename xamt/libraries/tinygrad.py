"""tinygrad adapter: the ``tinygrad.Tensor`` methods (``x.exp()``, ``x.sum(axis)``,
``x.conv2d(w)`` ...) and the tensor factories of its class (``Tensor.arange``, ``Tensor.eye``,
``Tensor.einsum`` ...), run on tinygrad's ``PYTHON`` device.

tinygrad 0.14.0 installs beside Xamt's numpy, but it lives in a virtual environment of its own
(``.venv-tinygrad``, made by ``make venv-tinygrad``), as every library outside the main pins does:
Xamt's main environment does not change. Its calls run in a sandbox zygote started from that
interpreter (:class:`~xamt.libraries.base.Runtime`); the catalog is mined there too. Without the
venv the library reports itself not installed and is skipped.

What each setting is there for:

- Device, ``DEV=PYTHON``: tinygrad's default ``CPU`` device compiles every kernel with a
  ``clang`` subprocess (and needs it even to start: its worker loop is compiled with clang at
  device creation, whichever renderer ``DEV=CPU:LLVM`` or ``CPU:X86`` asks for), so on a machine
  without clang no device is found. The ``PYTHON`` device runs the same scheduler and code
  generation (the same lowered UOp programs, the same decompositions of transcendental
  functions) and executes the program in a Python emulator instead of compiled C: slow
  (a 64x64 matmul about a second) but it needs nothing beyond the wheel, and its arithmetic is
  IEEE (float32 rounded through numpy/struct). It is pinned by the runtime, whatever the user's
  environment says, so the results compared are those of one device.
- The other variables tinygrad reads at import that change results, pinned at their defaults:
  ``DEFAULT_FLOAT=float32`` and ``DEFAULT_INT=int32`` (the dtypes of what a call creates from
  Python numbers: ``Tensor.arange(5)`` is int32), ``TRANSCENDENTAL=1`` (exp, log, sin ... as
  tinygrad's own polynomial decompositions where the device has no such instruction),
  ``FLOAT16=0``, ``IMAGE=0``, ``BEAM=0`` and ``NOOPT=0`` (kernel search and optimisation
  switches). ``CACHELEVEL=0`` keeps tinygrad's on-disk compile cache (one sqlite file in the
  user's cache folder) out of the workers: forked workers would share it, and a cached program
  would hide the compile step of a call. ``DEBUG=0`` keeps the kernels from being printed.
- Lazy: a tinygrad call builds a graph of UOps; nothing is scheduled, compiled or run until
  ``realize()`` or ``numpy()``. :func:`finish` (the adapter's ``finish_ref``) realizes every
  tensor of a result inside the call, so an error in scheduling, code generation or execution is
  the call's error and its time the call's.
- Deviceless constants: a tensor made from a Python number or a 0-d array (``Tensor(3.0)``, a
  reduction folded to a constant) carries no device, and tinygrad reads such a tensor's data
  through a copy to the hard-coded ``"CPU"`` device (``Tensor._buffer``), whatever ``DEV``
  says; :func:`finish` and :func:`to_numpy` copy it to the default device first.
- Dtypes: every numpy dtype but the complex ones (tinygrad has none) converts. bfloat16 crosses
  as its uint16 bit pattern both ways (``Tensor`` of an ``ml_dtypes.bfloat16`` array and
  ``numpy()`` of a bfloat16 tensor both fail: Python's buffer protocol has no bfloat16 format);
  tinygrad's own fp8 dtypes come back as ml_dtypes' fp8 types the same way.
- One thread: importing tinygrad starts none, so the zygote forks its workers; a worker starts
  one thread of tinygrad's own at its first realize.
- ``TRAINING=0`` (the default, pinned): ``dropout`` is the identity, as a torch module in eval
  mode; the samplers (``rand``, ``randn`` ...) are the ``random`` category, compared by status
  only.
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import LibraryAdapter, MethodOwner, Runtime, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype", "finish"]

#: tinygrad has no complex dtype; the other names are numpy's (``dtypes.float32`` ...)
_DTYPES = same_dtype_names(("complex64", "complex128"))

#: tinygrad's 8-bit floating dtypes (by ``DType.name``), returned as ml_dtypes' types of the
#: same bits (``numpy()`` would widen them to float32)
_FP8 = {"float8_e4m3": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
        "float8_e4m3fnuz": "float8_e4m3fnuz", "float8_e5m2fnuz": "float8_e5m2fnuz"}

#: the class's tensor factories (classmethods), mined as functions of the ``tinygrad.Tensor``
#: namespace (``Tensor.arange(5)``), not as methods of a receiver. ``empty`` and ``invalids``
#: (uninitialised memory) and ``random_bits`` (raw PRNG output) are left out
_FACTORIES = frozenset({
    "arange", "einsum", "eye", "full", "linspace", "ones", "zeros", "rand", "randn", "randint",
    "normal", "uniform", "randperm", "glorot_uniform", "kaiming_normal", "kaiming_uniform",
    "scaled_uniform",
})

#: ``tinygrad.Tensor`` methods that realize, copy out, move between devices, shard, record
#: gradients, seed, load, assign, or reach tinygrad's internals (UOps, kernels, schedules),
#: rather than compute an array; ``empty_like`` is uninitialised memory
_METHOD_PLUMBING = frozenset({
    "numpy", "tolist", "item", "data", "realize", "to", "to_", "shard", "shard_", "shard_like",
    "backward", "gradient", "detach", "contiguous_backward", "requires_grad_", "as_param",
    "is_param_", "assign", "replace", "manual_seed", "from_blob", "from_url", "call", "callify",
    "custom_kernel", "schedule_linear", "alu", "ufix", "linear_with_vars", "sequential",
    "decode_hevc_frame", "image_conv2d", "image_dot", "element_size", "nbytes", "max_numel",
    "empty_like", "threefry", "keccak", "hash", "empty", "invalids", "random_bits",
}) | _FACTORIES


def from_numpy(array: Any) -> Any:
    """numpy array -> ``tinygrad.Tensor`` on the default device, of the same dtype, over a
    private copy; bfloat16 through its uint16 bit pattern; a complex array raises."""
    import numpy as np
    from tinygrad import Tensor, dtypes

    arr = np.array(array, copy=True)
    if arr.dtype.kind == "c":
        raise TypeError(f"tinygrad has no complex dtype ({arr.dtype.name})")
    if arr.dtype.name == "bfloat16":
        return Tensor(arr.view(np.uint16)).bitcast(dtypes.bfloat16)
    return Tensor(arr)


def _on_device(value: Any) -> Any:
    """A tensor without a device (a constant) copied to the default device: tinygrad reads a
    deviceless tensor through its ``CPU`` device whatever ``DEV`` says."""
    from tinygrad import Device

    return value.clone(Device.DEFAULT) if value.uop.device is None else value


def to_numpy(value: Any) -> Any:
    """A ``tinygrad.Tensor`` -> numpy (bfloat16 as ``ml_dtypes.bfloat16``, fp8 as ml_dtypes'
    fp8 types); a tinygrad ``DType`` -> its numpy name (``"float32"``); anything else through
    ``np.asarray``."""
    import numpy as np
    from tinygrad import Tensor, dtypes
    from tinygrad.dtype import DType

    if isinstance(value, DType):
        for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float16", "bfloat16", "float32", "float64"):
            if getattr(dtypes, name) == value:
                return name
        return _FP8.get(value.name, value.name)
    if isinstance(value, Tensor):
        value = _on_device(value)
        if value.dtype == dtypes.bfloat16 or value.dtype.name in _FP8:
            import ml_dtypes

            if value.dtype == dtypes.bfloat16:
                return value.bitcast(dtypes.uint16).numpy().view(ml_dtypes.bfloat16)
            return value.bitcast(dtypes.uint8).numpy().view(getattr(ml_dtypes, _FP8[value.dtype.name]))
        return value.numpy()
    return np.asarray(value)


def finish(value: Any) -> Any:
    """The adapter's ``finish`` hook: every tensor of a result (a tuple or list of them too)
    realized inside the call, so what scheduling, code generation or execution raises is the
    call's error."""
    from tinygrad import Tensor

    if isinstance(value, Tensor):
        return _on_device(value).realize()
    if isinstance(value, (tuple, list)) and any(isinstance(v, Tensor) for v in value):
        done = [_on_device(v) if isinstance(v, Tensor) else v for v in value]
        tensors = [v for v in done if isinstance(v, Tensor)]
        tensors[0].realize(*tensors[1:])
        return type(value)(done)
    return value


def dtype(name: str) -> Any:
    """tinygrad's dtype object for a numpy dtype name (``dtypes.float32``)."""
    from tinygrad import dtypes

    return getattr(dtypes, name)


def adapter() -> LibraryAdapter:
    """The tinygrad adapter (see the module docstring)."""
    return LibraryAdapter(
        name="tinygrad",
        import_name="tinygrad",
        distributions=("tinygrad",),
        # the class as a namespace: its factories (classmethods) are functions
        namespaces=("tinygrad.Tensor",),
        object_members=_FACTORIES,
        own_modules=("tinygrad",),
        from_numpy_ref="xamt.libraries.tinygrad:from_numpy",
        to_numpy_ref="xamt.libraries.tinygrad:to_numpy",
        dtype_ref="xamt.libraries.tinygrad:dtype",
        finish_ref="xamt.libraries.tinygrad:finish",
        dtypes=_DTYPES,
        method_owners=(MethodOwner("tinygrad", "Tensor", _METHOD_PLUMBING),),
        # after the other libraries as the pivot of plans and triage's reference: its names
        # mix torch's and numpy's, and it runs on an emulator here
        pivot_rank=70,
        runtime=Runtime("tinygrad", env={
            "DEV": "PYTHON", "DEFAULT_FLOAT": "float32", "DEFAULT_INT": "int32",
            "TRANSCENDENTAL": "1", "FLOAT16": "0", "IMAGE": "0", "BEAM": "0", "NOOPT": "0",
            "TRAINING": "0", "CACHELEVEL": "0", "DEBUG": "0"}, venv=".venv-tinygrad"),
        doc_prefixes={"tinygrad": "tinygrad"},
        # no literal forms: findings keep the msgpack form, converted with this module's
        # functions; a script sets the variables that change results as the workers had them
        literal_environment=("DEV", "DEFAULT_FLOAT", "DEFAULT_INT", "TRANSCENDENTAL", "FLOAT16",
                             "IMAGE", "BEAM", "NOOPT", "TRAINING"),
    )
