"""TensorFlow adapter.

``tf.keras`` is not mined here: with Keras 3 installed it is the ``keras`` package itself, mined by
the keras adapter. ``tf.sparse`` / ``tf.strings`` (need SparseTensor / string inputs) are not mined
either. ``tf.raw_ops`` (1,400+ low-level ops, the public ops' kernels) is mined, but only the ops
of the computation modules (:data:`RAW_OPS_ORIGINS`: math, arrays, nn, linalg, fft, special,
bitwise) and not those :data:`RAW_OPS_EXCLUDED` names (gradients, quantized, sparse, graph-only).
Raw ops take keyword arguments only (``tf.raw_ops.Abs(x=t)``), so their parameters are recorded
keyword-only; they get no ``tf.function`` twin (it would compile the kernel their public
wrapper's twin already compiles). Their names are matched through
``[namespace_aliases."tensorflow.raw_ops"]`` of ``aliases.toml`` where an op's name means
something else than the public name (``Mod`` is a truncated remainder, ``Inv`` a reciprocal). ``tf.Tensor`` has no
operation methods and ``tf.Variable``'s methods are state updates on a Variable receiver, so TF
contributes no tensor methods.
"""
from __future__ import annotations

import functools
from typing import Any

from xamt.libraries._compile import compiled_call
from xamt.libraries.base import LibraryAdapter, resolve_ref, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype", "prng_key", "devices", "place", "device_scope",
           "call_compiled"]

_DTYPES = same_dtype_names()

_RAW_OPS = "tensorflow.raw_ops"

#: modules of the raw ops that compute on plain tensors; the others hold resource/variable,
#: dataset/iterator, queue/stack (data_flow), summary, string, IO/file, lookup-table, collective,
#: TPU/XLA-internal, control-flow, random and training ops
RAW_OPS_ORIGINS = tuple(f"tensorflow.python.ops.gen_{m}_ops" for m in (
    "math", "array", "nn", "linalg", "spectral", "special_math", "bitwise", "manip",
))

#: raw ops of those modules that are not plain computations (pattern, reason)
RAW_OPS_EXCLUDED: tuple[tuple[str, str], ...] = (
    ("*Grad", "gradient kernels: inputs are upstream gradients"),
    ("*GradV2", "gradient kernels"),
    ("*GradV3", "gradient kernels"),
    ("*GradA", "gradient kernels"),
    ("*Gradient", "gradient kernels"),
    ("*GradGrad*", "gradient kernels"),
    ("*GradWithArgmax", "gradient kernels"),
    ("*Backprop*", "gradient kernels of convolutions"),
    ("*GradientArgs", "gradient bookkeeping (BroadcastGradientArgs)"),
    ("DebugGradient*", "gradient debugging identity"),
    ("PreventGradient", "gradient control, an identity that fails under differentiation"),
    ("StopGradient", "gradient control, an identity"),
    ("Quantize*", "quantized arithmetic (min/max range tensors)"),
    ("Quantized*", "quantized arithmetic (min/max range tensors)"),
    ("Requantiz*", "quantized arithmetic"),
    ("Dequantize", "quantized arithmetic"),
    ("FakeQuant*", "quantization simulation"),
    ("Sparse*", "sparse tensors or segment ids with indices: not plain dense inputs"),
    ("RaggedBincount", "ragged tensor inputs"),
    ("Batch*Matrix*", "deprecated pre-broadcasting batch ops (removed kernels)"),
    ("BatchFFT*", "deprecated pre-broadcasting batch ops (removed kernels)"),
    ("BatchIFFT*", "deprecated pre-broadcasting batch ops (removed kernels)"),
    ("BatchCholesky*", "deprecated pre-broadcasting batch ops (removed kernels)"),
    ("BatchSelfAdjointEig*", "deprecated pre-broadcasting batch ops (removed kernels)"),
    ("BatchSvd", "deprecated pre-broadcasting batch ops (removed kernels)"),
    ("BatchNormWithGlobalNormalization", "deprecated (GraphDef version 9)"),
    ("Placeholder*", "graph-only: a feed point"),
    ("Const", "graph-only: the value is a TensorProto attribute"),
    ("ImmutableConst", "graph-only: memory-mapped file region"),
    ("GuaranteeConst", "graph-only constant-folding hint"),
    ("RefIdentity", "reference (ref-typed) tensors"),
    ("*Assign", "updates a variable or ref tensor in place"),
    ("Inplace*", "updates its input buffer in place"),
    ("DeepCopy", "copy plumbing"),
    ("Snapshot", "copy plumbing"),
    ("Empty", "uninitialised memory: contents are arbitrary"),
    ("ParallelConcat", "graph-only: inputs are written in place as they arrive"),
    ("AccumulateNV2", "graph-only: needs a temporary variable (rewritten to AddN)"),
    ("CheckNumerics*", "debugging assertion"),
    ("EnsureShape", "shape assertion"),
    ("Fingerprint", "hashing, not arithmetic"),
    ("EditDistance", "sparse tensor inputs"),
    ("IdentityN", "plumbing: identity of a list"),
    ("SobolSample", "quasi-random sequence generator"),
)


def from_numpy(array: Any) -> Any:
    import numpy as np
    import tensorflow as tf

    return tf.constant(np.asarray(array))


def to_numpy(value: Any) -> Any:
    """Tensor → numpy array; a ``tf.DType`` → its name (``"float32"``)."""
    import numpy as np
    import tensorflow as tf

    if isinstance(value, tf.dtypes.DType):
        return value.name
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)


def prng_key(seed: int) -> Any:
    """The seed TensorFlow's stateless samplers take (``tf.random.stateless_normal``,
    ``fold_in``, ``split``): "a shape [2] Tensor" of int32 or int64, from an int seed."""
    import tensorflow as tf

    return tf.constant([int(seed), 0], dtype=tf.int64)


def dtype(name: str) -> Any:
    import tensorflow as tf

    return tf.as_dtype(name)


def devices() -> list[str]:
    import tensorflow as tf

    found = ["cpu"]
    found += [f"gpu:{i}" for i, _ in enumerate(tf.config.list_physical_devices("GPU"))]
    return found


def _tf_device(device: str) -> str:
    """``gpu:0`` → ``/GPU:0`` (TensorFlow's device name); ``cpu`` → ``/CPU:0``."""
    kind, _, index = device.partition(":")
    return f"/{kind.upper()}:{index or 0}"


def place(value: Any, device: str) -> Any:
    """A tensor copied onto ``device`` (``cpu``, ``gpu:0``); other values as they are."""
    import tensorflow as tf

    if not isinstance(value, tf.Tensor):
        return value
    with tf.device(_tf_device(device)):
        return tf.identity(value)


def device_scope(device: str) -> Any:
    """``tf.device``: TensorFlow places the ops of the call on ``device`` (without it, a GPU
    build runs them on the GPU whatever the inputs' placement)."""
    import tensorflow as tf

    return tf.device(_tf_device(device))


def _is_tensor(value: Any) -> bool:
    import numpy as np
    import tensorflow as tf

    return isinstance(value, (tf.Tensor, tf.Variable, np.ndarray))


@functools.lru_cache(maxsize=256)
def _resolve(target: str) -> Any:
    return resolve_ref(target)


def call_compiled(target: str, *args: Any, **kwargs: Any) -> Any:
    """Run ``target`` inside ``tf.function(jit_compile=True)`` (XLA); non-tensor arguments are
    constants of the traced function."""
    import tensorflow as tf

    return compiled_call(target, _resolve(target), lambda f: tf.function(f, jit_compile=True), args, kwargs, _is_tensor)


def adapter() -> LibraryAdapter:
    return LibraryAdapter(
        name="tensorflow",
        import_name="tensorflow",
        distributions=("tensorflow", "tensorflow-cpu", "tensorflow-gpu"),
        namespaces=(
            "tensorflow", "tensorflow.math", "tensorflow.linalg", "tensorflow.nn",
            "tensorflow.signal", "tensorflow.image", "tensorflow.bitwise", "tensorflow.random",
            "tensorflow.math.special", "tensorflow.experimental.numpy",
            "tensorflow.experimental.numpy.random", _RAW_OPS,
        ),
        exclude=frozenset(f"{_RAW_OPS}.{pattern}" for pattern, _ in RAW_OPS_EXCLUDED),
        namespace_origins={_RAW_OPS: RAW_OPS_ORIGINS},
        keyword_only_namespaces=(_RAW_OPS,),
        uncompiled_namespaces=(_RAW_OPS,),
        own_modules=("tensorflow",),
        from_numpy_ref="xamt.libraries.tensorflow:from_numpy",
        to_numpy_ref="xamt.libraries.tensorflow:to_numpy",
        dtype_ref="xamt.libraries.tensorflow:dtype",
        prng_key_ref="xamt.libraries.tensorflow:prng_key",
        dtypes=_DTYPES,
        # Quiet TF's C++ INFO/WARNING banner; on a GPU, take device memory as needed rather than
        # all of it in the first worker (every sandbox worker is a process of its own). A user's
        # own settings win.
        environment={"TF_CPP_MIN_LOG_LEVEL": "2", "TF_FORCE_GPU_ALLOW_GROWTH": "true"},
        pivot_rank=40,
        # tf.function(jit_compile=True) runs XLA, not TensorFlow's kernels: it votes with JAX
        compiled_kernels="xla",
        doc_prefixes={"tf": "tensorflow", "tensorflow": "tensorflow"},
        compile_ref="xamt.libraries.tensorflow:call_compiled",
        literal_array="tensorflow.constant({})", literal_dtype="tensorflow.{}",
        literal_compile="tensorflow.function({}, jit_compile=True)", literal_imports=("import tensorflow",),
        compile_label="tf.function(jit_compile=True)",
        # tf.function counts its traces: the calls that traced are its compile time
        compile_clock_ref="xamt.libraries._compile:traced_seconds",
        devices_ref="xamt.libraries.tensorflow:devices",
        placement_ref="xamt.libraries.tensorflow:place",
        device_scope_ref="xamt.libraries.tensorflow:device_scope",
    )
