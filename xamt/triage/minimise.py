"""Shrink a failing input while the divergence persists (delta debugging over shapes and values).

The minimiser knows nothing about libraries: it gets the input as ``{argument name: array}`` and
a predicate ``still_fails(candidate) -> bool`` that re-runs the group (in the sandbox) and says
whether the same finding still shows. It tries, in order:

1. **shape**: cut every array that shares the leading shape of the largest array along one axis
   (first half, then a single slice), so arguments that must agree in shape shrink together;
2. **values**: replace chunks of elements by a plain value (``1`` for numbers, ``False`` for
   bool), halving the chunk size each round (ddmin), keeping elements that matter.

Each predicate call costs a sandbox round trip, so the number of calls is bounded by ``budget``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping

import numpy as np

__all__ = ["MinimiseResult", "minimise"]

Inputs = dict[str, np.ndarray]


@dataclass
class MinimiseResult:
    """The smallest input found, and how many predicate calls it took."""

    inputs: Inputs
    calls: int
    shrunk: bool


def _plain_value(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "b":
        return np.zeros((), dtype=a.dtype)
    return np.ones((), dtype=a.dtype)


def minimise(
    inputs: Mapping[str, np.ndarray],
    still_fails: Callable[[Inputs], bool],
    *,
    budget: int = 48,
    frozen: Collection[Any] = (),
) -> MinimiseResult:
    """Smallest variant of ``inputs`` for which ``still_fails`` holds, within ``budget`` calls.

    ``still_fails`` must be True for ``inputs`` itself (not re-checked). Scalars (0-d arrays) and
    non-array values are left alone, and so are the ``frozen`` arguments: values with a structure
    the API requires (an SPD covariance, a probability vector), which cutting or overwriting
    elements would break, turning the divergence into one about an invalid argument.
    """
    # only arrays shrink: lists of arrays, dtypes, None and literals pass through unchanged
    # (np.asarray would turn them into object arrays the sandbox cannot carry)
    current: Inputs = dict(inputs)
    calls = 0
    shrunk = False

    def attempt(candidate: Inputs) -> bool:
        nonlocal calls, current, shrunk
        if calls >= budget:
            return False
        calls += 1
        if still_fails(candidate):
            current, shrunk = candidate, True
            return True
        return False

    # 1. shapes: arrays sharing the largest array's shape prefix along an axis shrink together
    progress = True
    while progress and calls < budget:
        progress = False
        arrays = [a for k, a in current.items()
                  if isinstance(a, np.ndarray) and a.ndim > 0 and k not in frozen]
        if not arrays:
            break
        big = max(arrays, key=lambda a: a.size)
        for axis in range(big.ndim):
            n = big.shape[axis]
            if n <= 1:
                continue
            # first half, second half, then the first and the last single slice
            windows = [np.arange(n // 2), np.arange(n // 2, n), np.arange(1), np.arange(n - 1, n)]
            for keep in windows:
                if keep.size >= n or keep.size == 0:
                    continue
                cand = {}
                for k, a in current.items():
                    if (k not in frozen and isinstance(a, np.ndarray) and a.ndim > axis
                            and a.shape[axis] == n and a.shape[:axis] == big.shape[:axis]):
                        cand[k] = np.ascontiguousarray(np.take(a, keep, axis=axis))
                    else:
                        cand[k] = a
                if attempt(cand):
                    progress = True
                    break
            if progress:
                break

    # 2. values: ddmin over element chunks of each array, replacing them by a plain value
    for name in list(current):
        a = current[name]
        if name in frozen or not isinstance(a, np.ndarray) or a.ndim == 0 or a.size <= 1:
            continue
        plain = _plain_value(a)
        chunk = max(1, a.size // 2)
        while chunk >= 1 and calls < budget:
            a = current[name]
            flat = a.reshape(-1)
            changed = False
            for start in range(0, flat.size, chunk):
                seg = flat[start:start + chunk]
                if np.array_equal(seg, np.broadcast_to(plain, seg.shape), equal_nan=False):
                    continue
                new = flat.copy()
                new[start:start + chunk] = plain
                cand = dict(current)
                cand[name] = new.reshape(a.shape)
                if attempt(cand):
                    changed = True
                    flat = current[name].reshape(-1)
                if calls >= budget:
                    break
            if not changed:
                if chunk == 1:
                    break
                chunk //= 2
    return MinimiseResult(current, calls, shrunk)
