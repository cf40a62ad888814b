"""Shared helper for compiled execution: trace only the array arguments.

Compilers (``jax.jit``, ``tf.function``) trace their arguments; axes, shapes, flags and dtypes
must stay Python constants or many APIs refuse them. :func:`split_arrays` separates the array
arguments (traced) from the rest (closed over as constants).
"""
from __future__ import annotations

import time
from typing import Any, Callable

__all__ = ["split_arrays", "compiled_call", "traced_seconds"]


def split_arrays(
    args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]
) -> tuple[list[Any], dict[str, Any], Callable[[list[Any], dict[str, Any]], tuple[tuple, dict]]]:
    """Return (array args, array kwargs, rebuild) where ``rebuild(dyn_args, dyn_kwargs)`` gives
    back the full ``(args, kwargs)`` with the traced values in place of the arrays."""
    flags = [is_array(a) for a in args]
    dyn_args = [a for a, f in zip(args, flags) if f]
    dyn_kwargs = {k: v for k, v in kwargs.items() if is_array(v)}
    static_kwargs = {k: v for k, v in kwargs.items() if k not in dyn_kwargs}

    def rebuild(traced_args: list[Any], traced_kwargs: dict[str, Any]) -> tuple[tuple, dict]:
        it = iter(traced_args)
        full = tuple(next(it) if f else a for a, f in zip(args, flags))
        return full, {**static_kwargs, **traced_kwargs}

    return dyn_args, dyn_kwargs, rebuild


#: compiled callables by (target, which arguments are arrays, the constants' repr): compiling
#: is the expensive part (jax.jit and tf.function trace and compile a fresh function object
#: every time), so a worker keeps what it compiled for the next call with the same constants
_COMPILED: dict[tuple, Callable[..., Any]] = {}
_COMPILED_LIMIT = 4096
#: constants whose repr is longer than this are not used as a cache key (never cached)
_KEY_LIMIT = 400
#: seconds spent in calls of compiled functions that traced (and so compiled) on the way
_TRACED_S = [0.0]


def compiled_call(target: str, fn: Callable[..., Any], compile_fn: Callable[[Callable[..., Any]], Any],
                  args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]) -> Any:
    """Call ``fn(*args, **kwargs)`` through ``compile_fn`` (``jax.jit``, ``tf.function``), tracing
    only the array arguments, and reuse the compiled function for later calls whose non-array
    arguments are the same."""
    dyn_args, dyn_kwargs, rebuild = split_arrays(args, kwargs, is_array)
    flags = tuple(is_array(a) for a in args)
    statics = repr(([a for a, f in zip(args, flags) if not f],
                    sorted((k, v) for k, v in kwargs.items() if k not in dyn_kwargs)))
    key = (target, flags, tuple(sorted(dyn_kwargs)), statics)
    compiled = _COMPILED.get(key) if len(statics) <= _KEY_LIMIT else None
    if compiled is None:
        def traced(dyn_a, dyn_k):
            full_args, full_kwargs = rebuild(list(dyn_a), dict(dyn_k))
            return fn(*full_args, **full_kwargs)

        compiled = compile_fn(traced)
        if len(statics) <= _KEY_LIMIT and len(_COMPILED) < _COMPILED_LIMIT:
            _COMPILED[key] = compiled
    # a compiler that counts its traces (tf.function) says which calls compiled: those calls'
    # seconds are compile time (its clock, :func:`traced_seconds`)
    traces = getattr(compiled, "experimental_get_tracing_count", None)
    if traces is None:
        return compiled(dyn_args, dyn_kwargs)
    before, start = traces(), time.perf_counter()
    try:
        return compiled(dyn_args, dyn_kwargs)
    finally:
        if traces() != before:
            _TRACED_S[0] += time.perf_counter() - start


def traced_seconds() -> float:
    """Seconds this process spent in :func:`compiled_call` calls that traced anew (tracing,
    compiling and running once), for compilers that count their traces."""
    return _TRACED_S[0]
