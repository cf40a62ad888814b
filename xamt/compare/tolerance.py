"""Tolerances: the ``Tolerance`` value type (a group's tolerance is resolved from its members'
dtypes in :mod:`xamt.compare.dtypes`)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from xamt.compare.errors import ToleranceError

__all__ = ["Tolerance"]


@dataclass(frozen=True, slots=True)
class Tolerance:
    """Closeness bound ``|a - ref| <= atol + rtol * |ref|``; both finite and non-negative."""

    rtol: float
    atol: float

    def __post_init__(self) -> None:
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ToleranceError(f"Tolerance.{name} must be a number, got {value!r}") from None
            if not (math.isfinite(value) and value >= 0.0):
                raise ToleranceError(f"Tolerance.{name} must be finite and >= 0, got {value!r}")
            object.__setattr__(self, name, value)

    @property
    def exact(self) -> bool:
        """True when both bounds are zero (values must be equal)."""
        return self.rtol == 0.0 and self.atol == 0.0
