"""Tolerances: the ``Tolerance`` value type and how a group's tolerance is resolved."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from xamt.compare.errors import ToleranceError

if TYPE_CHECKING:  # dtypes imports this module
    from xamt.compare.dtypes import DtypeInfo

__all__ = ["Tolerance", "resolve_tolerance"]


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


def _as_tolerance(value: object, where: str) -> Tolerance:
    if isinstance(value, Tolerance):
        return value
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) == 2:
        return Tolerance(value[0], value[1])
    raise ToleranceError(f"{where}: expected a Tolerance or an (rtol, atol) pair, got {value!r}")


def _dtype_name(key: object) -> str:
    try:
        return np.dtype(key).name  # accepts names, dtypes and scalar types alike
    except TypeError:
        raise ToleranceError(f"tolerance mapping key {key!r} is not a dtype") from None


def resolve_tolerance(tol: object, infos: Sequence["DtypeInfo"]) -> Tolerance:
    """The group tolerance: the largest rtol and the largest atol over the members' dtypes.

    ``tol`` is None (defaults per dtype), a :class:`Tolerance` or (rtol, atol) pair (applies to
    every dtype), or a mapping dtype -> Tolerance / pair that overrides the defaults of the
    dtypes it names.
    """
    if tol is None:
        first = infos[0].default_tol
        if all(info.default_tol is first for info in infos):
            return first
        rtol = atol = 0.0
        for info in infos:
            r, a = info.tol
            rtol = r if r > rtol else rtol
            atol = a if a > atol else atol
        return Tolerance(rtol, atol)
    if isinstance(tol, Mapping):
        table = {_dtype_name(k): _as_tolerance(v, f"tolerance for {k!r}") for k, v in tol.items()}
        rtol = atol = 0.0
        for info in infos:
            over = table.get(info.name)
            r, a = (over.rtol, over.atol) if over is not None else info.tol
            rtol = r if r > rtol else rtol
            atol = a if a > atol else atol
        return Tolerance(rtol, atol)
    return _as_tolerance(tol, "tol")
