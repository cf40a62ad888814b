"""Shared helper for compiled execution: trace only the array arguments.

Compilers (``jax.jit``, ``tf.function``) trace their arguments; axes, shapes, flags and dtypes
must stay Python constants or many APIs refuse them. :func:`split_arrays` separates the array
arguments (traced) from the rest (closed over as constants).
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["split_arrays"]


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
