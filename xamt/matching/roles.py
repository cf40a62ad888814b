"""Parameter roles and type classes (driven by ``roles.toml``), and the per-API input view.

:func:`inputs_of` turns a catalog record into the list of :class:`Input` s the matcher compares:
control parameters (``name``, ``out``, ``device`` …) and ``*args/**kwargs`` are dropped; a
method's receiver comes first as a required tensor input.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from xamt.catalog import ApiRecord, Param
from xamt.matching.data import MatchingData
from xamt.matching.names import snake

__all__ = ["Input", "role_of", "type_of", "inputs_of", "literal", "NO_LITERAL"]


class _NoLiteral:
    def __repr__(self) -> str:
        return "<no literal>"


#: marker for a default whose repr is not a Python literal
NO_LITERAL: Any = _NoLiteral()


def literal(text: str | None) -> Any:
    """The Python value of a default's repr, or :data:`NO_LITERAL`."""
    if text is None:
        return NO_LITERAL
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NO_LITERAL


def role_of(name: str, data: MatchingData, category: str | None = None) -> str | None:
    """Role of a parameter name (of an API of ``category``); None for control parameters."""
    n = snake(name) or name.lower()
    if n in data.control_names:
        return None
    role = data.role_category_names.get(category or "", {}).get(n)
    if role is not None:
        return role
    role = data.role_names.get(n)
    if role is not None:
        return role
    for prefix, role in data.role_prefixes:
        if n.startswith(prefix):
            return role
    for suffix, role in data.role_suffixes:
        if n.endswith(suffix):
            return role
    return f"param:{n}"


def type_of(param: Param, data: MatchingData) -> str | None:
    """Type class (tensor, int, float, bool, str, dtype, sequence, callable) or None."""
    value = literal(param.default)
    if value is not NO_LITERAL and value is not None:
        if isinstance(value, bool):
            return "bool"
        if isinstance(value, int):
            return "int"
        if isinstance(value, float):
            return "float"
        if isinstance(value, str):
            return "str"
        if isinstance(value, (tuple, list)):
            return "sequence"
    if param.annotation:
        text = param.annotation.lower().replace(" ", "")
        for tclass, words in data.type_words:
            if any(w in text for w in words):
                return tclass
    return None


@dataclass(frozen=True)
class Input:
    """One input of an API as the matcher sees it.

    ``position`` is the index among the API's positional parameters (None for keyword-only);
    ``receiver`` marks a method's receiver (passed as ``self``).
    """

    name: str
    role: str
    kind: str
    required: bool
    default: str | None
    type: str | None
    position: int | None
    receiver: bool = False

    @property
    def keyword_ok(self) -> bool:
        return self.kind in ("positional_or_keyword", "keyword_only") and not self.receiver

    @property
    def positional_ok(self) -> bool:
        return self.kind in ("positional_only", "positional_or_keyword") or self.receiver


def inputs_of(params: list[Param], data: MatchingData, *, receiver: bool = False,
              category: str | None = None) -> list[Input]:
    """Inputs of a parameter list (see the module docstring); ``category`` is the API's (some
    names have a role only in one category: a sampler's ``key``)."""
    out: list[Input] = []
    position = 0
    # A function whose named parameters are all keyword-only (tf.raw_ops.Sub(x=, y=)) still
    # declares them in an order, and that order is what positions mean to the argument
    # assignment (x pairs with numpy.subtract's x1). They are passed by keyword all the same.
    ordered = not receiver and any(p.kind == "keyword_only" for p in params) and all(
        p.kind in ("keyword_only", "var_keyword") for p in params)
    if receiver:
        out.append(Input("self", "tensor", "positional_only", True, None, "tensor", 0, True))
        position = 1
    for p in params:
        if p.kind == "var_positional":
            # *tensors / *xi / *args: a list of arrays spread positionally
            # (torch.broadcast_tensors, numpy.meshgrid); *size stays a shape
            role = role_of(p.name, data, category)
            if role is None or role.startswith("param:") or role in ("tensor", "tensors"):
                role = "tensors"
            out.append(Input(p.name, role, "var_positional", False, None,
                             "tensor" if role == "tensors" else None, position))
            position += 1
            continue
        if p.kind == "var_keyword":
            continue
        role = role_of(p.name, data, category)
        pos = position if ordered or p.kind in ("positional_only", "positional_or_keyword") else None
        if ordered or p.kind in ("positional_only", "positional_or_keyword"):
            position += 1
        if role is None:
            continue
        out.append(Input(p.name, role, p.kind, p.required, p.default, type_of(p, data), pos))
    return out


def record_inputs(record: ApiRecord, data: MatchingData) -> list[Input]:
    """Inputs of a catalog record (its call signature; receiver first for methods)."""
    return inputs_of(record.params, data, receiver=record.receiver)
