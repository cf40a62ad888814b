"""Keras 3 adapters: keras on TensorFlow (``keras``), on JAX (``keras_jax``) and on PyTorch
(``keras_torch``).

Keras runs on a backend chosen by ``KERAS_BACKEND`` before import, and its authors document the
backends as interchangeable: three implementations of one API that should agree. One process
holds one backend, so ``keras`` runs in the main sandbox zygote on TensorFlow (unless the
environment names another; docs/registry.md) and the other two in zygotes of their own
(:class:`~xamt.libraries.base.Runtime`), built here by :func:`keras_adapter` and declared by
``keras_jax.py`` and ``keras_torch.py``. The backend is part of each catalog's version key
(``3.15.1+jax``) because conversions and behaviour depend on it.
"""
from __future__ import annotations

import os
from typing import Any

from xamt.libraries.base import (ClassNamespace, ConstructedNamespace, LibraryAdapter, Runtime,
                                 same_dtype_names)

__all__ = ["adapter", "keras_adapter", "from_numpy", "to_numpy", "dtype", "backend_name",
           "DEFAULT_BACKEND"]

DEFAULT_BACKEND = "tensorflow"

_DTYPES = same_dtype_names()


def backend_name() -> str:
    """The backend keras will use (the environment's, else Xamt's default); no import."""
    return os.environ.get("KERAS_BACKEND", DEFAULT_BACKEND)


def from_numpy(array: Any) -> Any:
    import keras
    import numpy as np

    return keras.ops.convert_to_tensor(np.asarray(array))


def to_numpy(value: Any) -> Any:
    import keras

    return keras.ops.convert_to_numpy(value)


def dtype(name: str) -> Any:
    # Keras names dtypes by their standard string everywhere in its API.
    return name


def adapter() -> LibraryAdapter:
    return keras_adapter()


def keras_adapter(backend: str | None = None) -> LibraryAdapter:
    """Keras on ``backend`` (``jax``, ``torch``): a library named ``keras_<backend>`` in a runtime
    of its own that sets ``KERAS_BACKEND``; None: ``keras``, in the main zygote, on the backend
    :func:`backend_name` says. The backend's adapter lends its environment (so that its
    library is imported as Xamt imports it elsewhere) and its compile clock."""
    environment = {"KERAS_BACKEND": DEFAULT_BACKEND, "TF_CPP_MIN_LOG_LEVEL": "2"}
    # Keras ops call its backend's: on a divergence's reference they vote as the backend does
    extra: dict[str, Any] = {"version_tag_ref": "xamt.libraries.keras:backend_name",
                             "kernels": DEFAULT_BACKEND}
    if backend is not None:
        import importlib

        own = importlib.import_module(f"xamt.libraries.{backend}").adapter()
        environment = {**own.environment, "TF_CPP_MIN_LOG_LEVEL": "2"}
        extra = dict(runtime=Runtime(f"keras_{backend}", env={"KERAS_BACKEND": backend}),
                     compile_clock_ref=own.compile_clock_ref,
                     version_tag_ref=f"xamt.libraries.keras_{backend}:backend_name",
                     kernels=own.kernels or own.name)
    return LibraryAdapter(
        name="keras" if backend is None else f"keras_{backend}",
        import_name="keras",
        distributions=("keras",),
        namespaces=(
            "keras.ops", "keras.ops.image", "keras.ops.linalg", "keras.activations",
            "keras.losses", "keras.metrics", "keras.random", "keras.layers", "keras.initializers",
            "keras.regularizers",
        ),
        own_modules=("keras",),
        from_numpy_ref="xamt.libraries.keras:from_numpy",
        to_numpy_ref="xamt.libraries.keras:to_numpy",
        dtype_ref="xamt.libraries.keras:dtype",
        literal_array="keras.ops.convert_to_tensor({})", literal_dtype="'{}'", literal_imports=("import keras",),
        literal_environment=("KERAS_BACKEND",),
        dtypes=_DTYPES,
        class_namespaces=(
            ClassNamespace("keras.layers", "keras:Layer", "call"),
            ClassNamespace("keras.losses", "keras.losses:Loss", "call"),
        ),
        # initializers are configured objects called on (shape, dtype): HeNormal(seed=1)(shape),
        # matched with jax.nn.initializers' factories under the class's name
        constructed_namespaces=(ConstructedNamespace(
            "keras.initializers", "keras.initializers:Initializer", ("__call__",),
            named_by_class=True,
        ),),
        environment=environment,
        pivot_rank=45,
        doc_prefixes={"keras": "keras"},
        **extra,
    )
