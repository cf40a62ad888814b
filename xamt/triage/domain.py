"""Argument domains the documentation states (``triage.toml`` ``[[domain]]``).

A percent point function takes a probability: scipy's ``uniform.ppf(-1.4e-45)`` is NaN, as its
documentation says, where torch's ``Uniform.icdf`` computes a number and JAX, flushing the
subnormal to -0, does too. Without the domain the majority blamed scipy. Where an input breaks a
stated domain, NaN is the documented answer (:func:`broken_domain`); where all of it lies outside,
no number is promised either (:func:`wholly_outside`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["Domain", "load_domains", "broken_domain", "wholly_outside", "onto_edge"]


@dataclass(frozen=True)
class Domain:
    """``low <= value <= high`` for the parameters ``params`` of groups whose canonical name ends
    with ``suffix``; ``reason`` cites the documentation."""

    suffix: str
    params: tuple[str, ...]
    low: float
    high: float
    reason: str

    def slots(self, group: Any) -> set[int]:
        """The group's slots passed as one of :attr:`params` (none unless its canonical name
        ends with :attr:`suffix`)."""
        if not str(getattr(group, "canonical", "") or "").endswith(self.suffix):
            return set()
        return {a.slot for m in group.members for a in m.plan.args + m.plan.init_args
                if a.slot is not None and a.param in self.params}

    @staticmethod
    def _numbers(value: Any) -> np.ndarray | None:
        """``value``'s elements that are not NaN, flat in float64 (NaN breaks nothing, it is
        its own trigger), or None for a value that is not a number or a numeric array."""
        if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
            v = value.astype(np.float64).ravel()
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            v = np.array([value], np.float64)
        else:
            return None
        return v[~np.isnan(v)]

    def _outside(self, value: Any) -> np.ndarray | None:
        """Whether each of :meth:`_numbers` lies outside ``[low, high]`` (a flat boolean
        array), or None."""
        v = self._numbers(value)
        return None if v is None else (v < self.low) | (v > self.high)

    def broken_by(self, value: Any) -> bool:
        """Whether ``value`` (an array or a number) holds an element outside ``[low, high]``."""
        out = self._outside(value)
        return out is not None and bool(out.any())

    def holds_nothing_in(self, value: Any) -> bool:
        """Whether every element of ``value`` that is not NaN lies outside ``[low, high]`` (and
        one does): no element of the slot is an input the documentation gives a value for."""
        out = self._outside(value)
        return out is not None and bool(out.size) and bool(out.all())

    def rounds_onto_edge(self, value: Any) -> bool:
        """Whether ``value`` is a float array with an element outside ``[low, high]`` and every
        such element lies within its dtype's rounding of the bound it passes (machine epsilon
        times the bound, at least 1): arithmetic in that dtype cannot tell it from the bound
        (``-FLT_MIN - 0.5`` is ``-0.5`` in float32)."""
        if not (isinstance(value, np.ndarray) and value.dtype.kind == "f"):
            return False
        v = self._numbers(value)
        eps = float(np.finfo(value.dtype).eps)
        below, above = v[v < self.low], v[v > self.high]
        if not (below.size or above.size):
            return False
        near = True
        if below.size:
            near &= math.isfinite(self.low) and bool((self.low - below <= eps * max(1.0, abs(self.low))).all())
        if above.size:
            near &= math.isfinite(self.high) and bool((above - self.high <= eps * max(1.0, abs(self.high))).all())
        return near

    def describe(self) -> str:
        return f"{'/'.join(self.params)} in [{self.low:g}, {self.high:g}]"


def load_domains(path: str | Path | None = None) -> tuple[Domain, ...]:
    """``[[domain]]`` of ``triage.toml``.

    Raises:
        DataFileError: the file is unreadable or an entry lacks a field or has a wrong type.
    """
    from xamt.datafiles import read_toml
    from xamt.errors import DataFileError

    data, where, _ = read_toml("triage.toml", path)
    out = []
    for i, entry in enumerate(data.get("domain", [])):
        try:
            dom = Domain(suffix=str(entry["suffix"]), params=tuple(str(p) for p in entry["params"]),
                         low=float(entry["low"]), high=float(entry["high"]), reason=str(entry["reason"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataFileError(f"{where}: [[domain]] entry {i + 1}: {type(exc).__name__}: {exc}") from None
        if not dom.suffix or not dom.params or not dom.low <= dom.high:
            raise DataFileError(f"{where}: [[domain]] entry {i + 1} needs a suffix, params and low <= high")
        out.append(dom)
    return tuple(out)


def broken_domain(domains: Sequence[Domain], group: Any, values: Mapping[int, Any]) -> Domain | None:
    """The first of ``domains`` that an input of ``values`` breaks in ``group``, or None."""
    for dom in domains:
        if any(dom.broken_by(values.get(s)) for s in dom.slots(group) if s in values):
            return dom
    return None


def wholly_outside(domain: Domain, group: Any, values: Mapping[int, Any]) -> bool:
    """Whether every element of ``group``'s slots that ``domain`` constrains lies outside it: the
    documentation promises no value for any of the input."""
    slots = [s for s in domain.slots(group) if s in values]
    return bool(slots) and all(domain.holds_nothing_in(values[s]) for s in slots)


def onto_edge(domain: Domain, group: Any, values: Mapping[int, Any]) -> dict[int, Any] | None:
    """``values`` with ``group``'s slots that ``domain`` constrains clipped to its bounds, where
    every element outside lies within rounding of a bound (:meth:`Domain.rounds_onto_edge`);
    None when one lies farther, or none is outside."""
    slots = [s for s in domain.slots(group) if s in values and domain.broken_by(values[s])]
    if not slots or not all(domain.rounds_onto_edge(values[s]) for s in slots):
        return None
    out = dict(values)
    for s in slots:
        v = values[s]
        out[s] = np.clip(v, domain.low, domain.high).astype(v.dtype)
    return out
