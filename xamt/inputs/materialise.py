"""Turn a :class:`~xamt.inputs.model.GroupInput` into concrete values (numpy and Python).

The result maps slot index → value ready to travel to a sandbox worker: numpy arrays, lists of
arrays, ``numpy.dtype`` objects for dtype slots, and plain literals (JSON lists become tuples).
The worker converts arrays and dtypes to the member's library (:mod:`xamt.exec.member`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from xamt.errors import ConfigError
from xamt.inputs.arrays import numpy_dtype
from xamt.inputs import structured
from xamt.inputs.model import GroupInput, SlotValue

__all__ = ["materialise", "as_literal"]


def as_literal(value: Any) -> Any:
    """A JSON literal as the call receives it: lists become tuples (axes, shapes), recursively."""
    if isinstance(value, list):
        return tuple(as_literal(v) for v in value)
    return value


def _one(slot_value: SlotValue, ctx: dict[int, Any]) -> Any:
    kind = slot_value.kind
    if kind == "array":
        base = slot_value.recipe.build()  # type: ignore[union-attr]
        if slot_value.structure:
            return structured.apply_array(slot_value.structure, base, ctx)
        return base
    if kind == "arrays":
        out = []
        for recipe in slot_value.recipes:
            base = recipe.build()
            out.append(structured.apply_array(slot_value.structure, base, ctx)
                       if slot_value.structure else base)
        return out
    if kind == "literal":
        return as_literal(slot_value.value)
    if kind == "dtype":
        return numpy_dtype(slot_value.value)
    if kind == "derived":
        return structured.apply_derived(slot_value.structure, ctx)  # type: ignore[arg-type]
    raise ConfigError(f"cannot materialise a slot value of kind {kind!r}")


def materialise(inp: GroupInput) -> dict[int, Any]:
    """Slot index → concrete value, bit for bit the same on every call with the same input.

    Slots whose structure reads another slot are computed after it (chains are followed).
    """
    ctx: dict[int, Any] = {}
    pending = dict(inp.values)
    while pending:
        progressed = False
        for slot, value in list(pending.items()):
            dep = value.depends_on()
            if dep is not None and dep != slot and dep in pending:
                continue
            if dep is not None and dep not in ctx and dep not in pending:
                raise ConfigError(f"slot {slot}: structure {value.structure!r} refers to slot {dep}, "
                                  f"which this input does not give")
            ctx[slot] = _one(value, ctx)
            del pending[slot]
            progressed = True
        if not progressed:
            raise ConfigError(f"slots {sorted(pending)} refer to each other in a cycle")
    return ctx


def describe(values: dict[int, Any]) -> dict[int, str]:
    """Short text per slot (shape/dtype for arrays), for logs and reports."""
    out = {}
    for slot, v in values.items():
        if isinstance(v, np.ndarray):
            out[slot] = f"{v.dtype.name}{list(v.shape)}"
        elif isinstance(v, list) and all(isinstance(a, np.ndarray) for a in v):
            out[slot] = "[" + ", ".join(f"{a.dtype.name}{list(a.shape)}" for a in v) + "]"
        else:
            out[slot] = repr(v)
    return out
