"""Keras 3 on PyTorch: ``keras_torch``, in a sandbox zygote of its own with ``KERAS_BACKEND=torch``
(see :mod:`xamt.libraries.keras`)."""
from __future__ import annotations

from xamt.libraries.base import LibraryAdapter
from xamt.libraries.keras import keras_adapter

__all__ = ["adapter", "backend_name"]


def backend_name() -> str:
    """The version tag: this library's backend, whatever ``KERAS_BACKEND`` says here."""
    return "torch"


def adapter() -> LibraryAdapter:
    return keras_adapter("torch")
