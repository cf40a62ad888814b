"""Keras 3 adapter.

Keras runs on a backend chosen by ``KERAS_BACKEND`` before import; Xamt uses ``tensorflow``
unless the environment already names another (documented in docs/registry.md). The backend is part of
the catalog's version key (``3.15.1+tensorflow``) because conversions and behaviour depend on it.
"""
from __future__ import annotations

import os
from typing import Any

from xamt.libraries.base import (ClassNamespace, ConstructedNamespace, LibraryAdapter,
                                 same_dtype_names)

__all__ = ["adapter", "from_numpy", "to_numpy", "dtype", "backend_name", "DEFAULT_BACKEND"]

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
    return LibraryAdapter(
        name="keras",
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
        environment={"KERAS_BACKEND": DEFAULT_BACKEND, "TF_CPP_MIN_LOG_LEVEL": "2"},
        pivot_rank=45,
        doc_prefixes={"keras": "keras"},
        version_tag_ref="xamt.libraries.keras:backend_name",
    )
