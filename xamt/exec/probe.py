"""Dtype probing, worker side: which dtypes a member's call accepts.

The sandbox resolves :func:`probe_dtypes` as ``"xamt.exec.probe:probe_dtypes"``; the parent side
is :meth:`GroupExecutor.probe <xamt.exec.group.GroupExecutor.probe>`. A member is called as
everywhere else (:mod:`xamt.exec.member`), with its data arrays cast to each dtype in turn, or,
for libraries that compile every new dtype, given to an evaluator that compiles nothing
(``validation.toml [probe.abstract]``: JAX's traces the call, PyTensor's runs its graph on the
Python linker).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from sandbox import mark
from sandbox.classify import type_name as _type_name

from xamt.exec.member import (BindError, PreparedMember, error_status, function, invoke, message,
                              prepared)
from xamt.exec.normalise import to_numpy_tree

__all__ = ["PROBE_DTYPES", "probe_dtypes", "abstract_call"]

PROBE_DTYPES = "xamt.exec.probe:probe_dtypes"


def abstract_call(prep: PreparedMember, values: Mapping[int, Any], evaluator: Callable[..., Any]) -> Any:
    """Trace the member's call with ``evaluator`` (``jax.eval_shape``): the converted arrays are
    traced, everything else stays a constant of the traced function. Nothing is compiled."""
    from xamt.libraries._compile import split_arrays

    converted: set[int] = set()

    def conv(slot: int, v: Any) -> Any:
        out = prep.convert_slot(slot, v)
        if out is not v:
            for item in (out if isinstance(out, list) else [out]):
                converted.add(id(item))
        return out

    target, args, kwargs = prep.bind({slot: conv(slot, v) for slot, v in values.items() if slot in prep.slots})
    fn = function(target)
    dyn_args, dyn_kwargs, rebuild = split_arrays(tuple(args), dict(kwargs), lambda v: id(v) in converted)

    def traced(a: list, k: dict) -> Any:
        full_args, full_kwargs = rebuild(list(a), dict(k))
        return fn(*full_args, **full_kwargs)

    return evaluator(traced, dyn_args, dyn_kwargs)


def probe_dtypes(member: Sequence[Any], values: Mapping[int, Any], data_slots: Sequence[int],
                 dtypes: Sequence[str], abstract: str | None = None) -> list:
    """Worker entry point: call one member with its data arrays cast to each of ``dtypes``.

    Returns one ``[dtype, status, error_type, message]`` per dtype (``status`` ``ok`` or
    ``raised``; a result that cannot be converted to numpy counts as ``ok``: the call worked).
    A lazy library's result is computed by its adapter's ``finish`` hook first, and what that
    raises is the call's refusal.
    ``abstract`` names an evaluator (``"xamt.libraries.jax:probe_call"``) that is given the
    call instead of it being run, for libraries that compile every new dtype (JAX's traces it).
    """
    from xamt.inputs.arrays import numpy_dtype

    mid, spec_bytes = member
    prep = prepared(mid, spec_bytes)
    evaluator = function(abstract) if abstract else None
    # every dtype resolved before the first step's clock starts: bfloat16 imports ml_dtypes,
    # a second in some environments, which a one-second step limit took for a hang
    resolved: dict[str, Any] = {}
    for name in dtypes:
        try:
            resolved[name] = numpy_dtype(name)
        except (TypeError, ValueError) as exc:
            resolved[name] = exc
    results = []
    for step, name in enumerate(dtypes):
        mark(step)  # a task with a step limit is killed in the dtype that hangs, naming it
        cast = dict(values)
        try:
            dt = resolved[name]
            if isinstance(dt, Exception):
                raise dt
            for slot in data_slots:
                v = cast.get(slot)
                with np.errstate(all="ignore"):
                    if isinstance(v, np.ndarray):
                        cast[slot] = _cast(v, dt)
                    elif isinstance(v, list):
                        cast[slot] = [_cast(a, dt) for a in v]
        except (TypeError, ValueError) as exc:
            results.append([name, "raised", _type_name(type(exc)), message(exc)])
            continue
        try:
            if evaluator is not None:
                abstract_call(prep, cast, evaluator)
            else:
                raw = invoke(prep, prep.describe(cast))
                if prep.hooks.finish is not None:  # a lazy library computes here, as in a run
                    raw = prep.hooks.finish(raw)
                try:
                    to_numpy_tree(raw, prep.hooks.to_numpy)
                except BaseException:
                    pass
            results.append([name, "ok", None, None])
        except BaseException as exc:
            if isinstance(exc, BindError):  # reads as the ValueError the plan's binding raised
                exc = ValueError(str(exc))
            type_name = _type_name(type(exc))
            text = message(exc)
            results.append([name, error_status(exc, type_name, text), type_name, text])
    return results


def _cast(a: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt.kind in "iu" and a.dtype.kind in "fc":
        a = np.nan_to_num(a.real if a.dtype.kind == "c" else a)
        a = np.rint(a * 3.0)  # ordinary integers, not all zeros
    elif dt.kind == "b" and a.dtype.kind in "fc":
        return (a.real > 0) if a.dtype.kind == "c" else (a > 0)
    elif dt.kind != "c" and a.dtype.kind == "c":
        a = a.real
    return a.astype(dt)
