"""TensorFlow adapter.

``tf.keras`` is not mined here: with Keras 3 installed it is the ``keras`` package itself, mined by
the keras adapter. ``tf.raw_ops`` (1,400+ low-level twins of the public ops) and ``tf.sparse`` /
``tf.strings`` (need SparseTensor / string inputs) are not mined either. ``tf.Tensor`` has no
operation methods and ``tf.Variable``'s methods are state updates on a Variable receiver, so TF
contributes no tensor methods.
"""
from __future__ import annotations

import functools
from typing import Any

from xamt.libraries._compile import compiled_call
from xamt.libraries.base import LibraryAdapter, resolve_ref, same_dtype_names

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype", "devices", "place", "device_scope",
           "call_compiled"]

_DTYPES = same_dtype_names()


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
            "tensorflow.experimental.numpy.random",
        ),
        own_modules=("tensorflow",),
        from_numpy_ref="xamt.libraries.tensorflow:from_numpy",
        to_numpy_ref="xamt.libraries.tensorflow:to_numpy",
        dtype_ref="xamt.libraries.tensorflow:dtype",
        dtypes=_DTYPES,
        # Quiet TF's C++ INFO/WARNING banner; on a GPU, take device memory as needed rather than
        # all of it in the first worker (every sandbox worker is a process of its own). A user's
        # own settings win.
        environment={"TF_CPP_MIN_LOG_LEVEL": "2", "TF_FORCE_GPU_ALLOW_GROWTH": "true"},
        pivot_rank=40,
        compile_ref="xamt.libraries.tensorflow:call_compiled",
        compile_label="tf.function(jit_compile=True)",
        devices_ref="xamt.libraries.tensorflow:devices",
        placement_ref="xamt.libraries.tensorflow:place",
        device_scope_ref="xamt.libraries.tensorflow:device_scope",
    )
