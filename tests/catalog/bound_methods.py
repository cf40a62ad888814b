"""A tiny 'library' for ``test_signatures.py``: a tensor class whose methods are module functions
set on it (as paddle does), a staticmethod and an ordinary method."""
from __future__ import annotations

from typing import Any


def scale(x: Any, factor: float = 2.0, name: str | None = None) -> Any:
    """A function that is also a method: ``x`` is the receiver when called as one."""
    return x * factor


class Box:
    """The tensor class."""

    scale = scale

    @staticmethod
    def make(x: Any, fill: float = 0.0) -> Any:
        """A staticmethod: ``x`` is a real argument."""
        return x

    def total(self, axis: int = 0) -> Any:
        """An ordinary method."""
        return axis
