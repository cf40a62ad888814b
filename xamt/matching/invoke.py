"""Calling a group member inside a worker process (library imports happen here, lazily).

:func:`call_member` takes a member as JSON (``Member.to_json()``) and canonical slot values as
numpy arrays / Python scalars / numpy dtype names, converts them with the member library's
adapter (``from_numpy``, ``dtype``) according to the plan's transforms, calls the member and
returns the result converted back to numpy (``to_numpy``) unless told not to. A sandbox task
can name it as ``"xamt.matching.invoke:call_member"``.
"""
from __future__ import annotations

from typing import Any

from xamt.libraries.base import resolve_ref
from xamt.libraries.registry import Registry
from xamt.matching.model import ArgSpec, Member

__all__ = ["call_member", "convert_value", "result_to_numpy"]


def convert_value(value: Any, transform: str | None, library: str, registry: Registry) -> Any:
    """Apply one plan transform with ``library``'s adapter."""
    if transform is None:
        return value
    if transform == "tuple":
        return tuple(value) if isinstance(value, (tuple, list)) else (value,)
    adapter = registry.get(library)
    if transform == "tensor":
        return resolve_ref(adapter.from_numpy_ref)(value)
    if transform == "tensor_if_array":
        import numpy as np

        if not isinstance(value, np.ndarray):
            return value  # a Python number: constructors that take "Tensor | float" keep it
        return resolve_ref(adapter.from_numpy_ref)(value)
    if transform == "tensor_list":
        conv = resolve_ref(adapter.from_numpy_ref)
        return [conv(v) for v in value]
    if transform == "dtype":
        if adapter.dtype_ref is None:
            return value
        return resolve_ref(adapter.dtype_ref)(value)
    if transform == "prng_key":
        if adapter.prng_key_ref is None:
            raise ValueError(f"{library} has no PRNG keys (its adapter has no prng_key hook)")
        return resolve_ref(adapter.prng_key_ref)(value)
    raise ValueError(f"unknown transform {transform!r}")


def result_to_numpy(value: Any, library: str, registry: Registry) -> Any:
    """Convert a result (or a tuple/list of results) back to numpy with the library's adapter."""
    if isinstance(value, (tuple, list)):
        return type(value)(result_to_numpy(v, library, registry) for v in value)
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return value
    conv = resolve_ref(registry.get(library).to_numpy_ref)
    try:
        return conv(value)
    except Exception:  # non-array results (dtypes, named tuples of odd types) stay as they are
        return value


def _converted(specs: list[ArgSpec], values: dict[int, Any], library: str,
               registry: Registry) -> tuple[list[ArgSpec], dict[int, Any]]:
    out: dict[int, Any] = {}
    new_specs: list[ArgSpec] = []
    for spec in specs:
        if spec.slot is not None and spec.slot in values:
            out[spec.slot] = convert_value(values[spec.slot], spec.transform, library, registry)
        if spec.slot is None and spec.transform:
            spec = ArgSpec.from_json(spec.to_json())
            spec.value = convert_value(spec.value, spec.transform, library, registry)
        new_specs.append(spec)
    return new_specs, out


def call_member(member: dict[str, Any] | Member, values: dict[int, Any],
                to_numpy: bool = True) -> Any:
    """Convert ``values`` (slot index → canonical value), call the member, return its result."""
    registry = Registry()
    m = member if isinstance(member, Member) else Member.from_json(member)
    values = {int(k): v for k, v in values.items()}
    m.plan.args, converted = _converted(m.plan.args, values, m.library, registry)
    m.plan.init_args, init_conv = _converted(m.plan.init_args, values, m.library, registry)
    converted.update(init_conv)
    target, args, kwargs = m.task(converted)
    result = resolve_ref(target)(*args, **kwargs)
    return result_to_numpy(result, m.library, registry) if to_numpy else result
