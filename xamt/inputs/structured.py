"""Named structures: arrays and literals with a shape or value constraint a recipe alone cannot give.

Data files (``xamt/data/canonical_inputs.toml``) refer to these by name; an input records the
name next to its recipe, so the same input always regenerates the same value. A structure is
``name`` or ``name:<slot>`` where ``<slot>`` is another slot of the same input (resolved from
``role#n`` references when the seed is made).

Array structures post-process the array built from the slot's recipe (deterministic, no new
randomness); derived structures compute a literal from another slot's array:

========================  ==========================================================================
``spd``                   ``A Aᴴ / n + I``: symmetric (Hermitian) positive definite, well conditioned
``well_conditioned``      ``A + n·I``: diagonally dominant square matrix (inverse, solve, det)
``lower_triangular``      ``tril(A) + n·I`` (and ``upper_triangular``)
``probabilities``         softmax over the last axis: positive rows summing to one
``one_hot``               one-hot rows (float) at the argmax of each row
``binary``                0/1 values of the slot's dtype (targets of binary losses)
``signs``                 -1/+1 values of the slot's dtype, +1 above the median (the similar /
                          dissimilar or ranking targets of embedding and margin losses)
``sorted``                sorted along the last axis (``searchsorted``'s sequence)
``index_into:<s>``        integers in ``[0, min(shape of s))``: valid along any axis of slot s
``index_out_of:<s>``      integers outside that range (deliberately invalid, for the status oracle)
``class_of:<s>``          integers in ``[0, v)`` where ``v`` is slot s's integer literal
``counts_of:<s>``         non-negative integers summing to slot s's integer literal ``n`` along the
                          last axis (a multinomial variate: counts of n trials per category)
``segments_of:<s>``       segment ids ``0, 0, 1, 1, 2 …`` for the rows of slot s: sorted, every
                          segment non-empty (an empty segment's max is -inf in JAX, the dtype's
                          lowest value in TF: a convention, not a finding)
``segment_count_of:<s>``  (derived) the number of those segments, ``ceil(rows of s / 2)``
``reshape_of:<s>``        (derived) slot s's shape reversed: same size, other layout
``shape_of:<s>``          (derived) slot s's shape
``broadcast_of:<s>``      (derived) ``(2,) + shape of s``: a shape s broadcasts to
``size_of:<s>``           (derived) number of elements of slot s
``permutation_of:<s>``    (derived) the reversed axis order of slot s
========================  ==========================================================================
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from xamt.errors import ConfigError

__all__ = ["ARRAY_STRUCTURES", "DERIVED_STRUCTURES", "apply_array", "apply_derived", "split", "check"]


def split(structure: str) -> tuple[str, str | None]:
    """``"index_into:2"`` → ``("index_into", "2")``."""
    name, sep, arg = structure.partition(":")
    return name, (arg if sep else None)


def _float_work(a: np.ndarray) -> np.ndarray:
    """The array as float64 (complex128 for complex) for structural arithmetic."""
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    with np.errstate(all="ignore"):
        return a.astype(np.float64)


def _back(work: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Cast structural arithmetic back to the recipe's dtype (ints are rounded)."""
    with np.errstate(all="ignore"):
        if like.dtype.kind in "iu":
            return np.rint(work.real).astype(like.dtype)
        if like.dtype.kind == "b":
            return (work.real != 0).astype(like.dtype)
        if like.dtype.kind != "c":
            work = work.real
        return work.astype(like.dtype)


def _square(a: np.ndarray, name: str) -> np.ndarray:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        # a reshape mutation broke squareness: use the largest leading square block
        if a.ndim < 2:
            return a
        n = min(a.shape[-1], a.shape[-2])
        return a[..., :n, :n]
    return a


def _eye_like(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    return np.broadcast_to(np.eye(n), a.shape)


def _spd(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    a = _square(a, "spd")
    if a.ndim < 2 or a.size == 0:
        return a
    w = _float_work(a)
    n = w.shape[-1]
    with np.errstate(all="ignore"):
        m = w @ np.conj(np.swapaxes(w, -1, -2)) / n + _eye_like(w)
    return _back(m, a)


def _well_conditioned(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    a = _square(a, "well_conditioned")
    if a.ndim < 2 or a.size == 0:
        return a
    w = _float_work(a)
    return _back(w + w.shape[-1] * _eye_like(w), a)


def _lower(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    a = _square(a, "lower_triangular")
    if a.ndim < 2 or a.size == 0:
        return a
    w = _float_work(a)
    return _back(np.tril(w) + w.shape[-1] * _eye_like(w), a)


def _upper(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    a = _square(a, "upper_triangular")
    if a.ndim < 2 or a.size == 0:
        return a
    w = _float_work(a)
    return _back(np.triu(w) + w.shape[-1] * _eye_like(w), a)


def _probabilities(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    if a.ndim == 0 or a.size == 0:
        return a
    w = _float_work(a).real
    with np.errstate(all="ignore"):
        e = np.exp(w - np.max(w, axis=-1, keepdims=True))
        p = e / np.sum(e, axis=-1, keepdims=True)
    return _back(p, a)


def _one_hot(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    if a.ndim == 0 or a.size == 0:
        return a
    w = _float_work(a).real
    idx = np.argmax(np.nan_to_num(w, nan=-np.inf), axis=-1)
    out = np.zeros(w.shape)
    np.put_along_axis(out, idx[..., None], 1.0, axis=-1)
    return _back(out, a)


def _median_split(a: np.ndarray, below: float, above: float) -> np.ndarray:
    """``above`` where an element exceeds the median, else ``below``: two targets, both drawn."""
    w = _float_work(a).real
    return _back(np.where(w > np.median(w), above, below) if w.size else w, a)


def _binary(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    return _median_split(a, 0.0, 1.0)


def _signs(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    return _median_split(a, -1.0, 1.0)


def _sorted(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    return np.sort(a, axis=-1) if a.ndim else a


def _target(ctx: dict[int, Any], arg: str | None, name: str) -> Any:
    if arg is None:
        raise ConfigError(f"structure {name!r} needs a slot: {name}:<slot>")
    try:
        return ctx[int(arg)]
    except (KeyError, ValueError):
        raise ConfigError(f"structure {name}:{arg}: slot {arg} has no value in this input") from None


def _bound(ctx: dict[int, Any], arg: str | None, name: str) -> int:
    target = np.asarray(_target(ctx, arg, name))
    return int(min(target.shape)) if target.ndim else 1


def _int_dtype(a: np.ndarray) -> np.dtype:
    return a.dtype if a.dtype.kind in "iu" else np.dtype(np.int64)


def _folded(a: np.ndarray, scale: float, n: int) -> np.ndarray:
    """Integers 0..n-1 from the recipe's values (|x| * scale, floored, modulo n; non-finite
    values count as 0), in ``a``'s integer dtype (int64 for a float recipe)."""
    w = np.nan_to_num(_float_work(a).real, nan=0.0, posinf=0.0, neginf=0.0)
    with np.errstate(all="ignore"):
        idx = np.floor(np.abs(w) * scale) % n
    return idx.astype(_int_dtype(a))


def _index_into(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    return _folded(a, 1000.0, max(_bound(ctx, arg, "index_into"), 1))


def _index_out_of(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    bound = max(_bound(ctx, arg, "index_out_of"), 1)
    w = np.nan_to_num(_float_work(a).real, nan=0.0, posinf=0.0, neginf=0.0)
    # half the elements past the end, half before the (negative) start
    far = bound + (np.floor(np.abs(w) * 1000.0) % 3)
    idx = np.where(w >= 0, far, -far - 1)
    dt = np.dtype(np.int64) if a.dtype.kind == "u" else _int_dtype(a)
    return idx.astype(dt)


def _count(ctx: dict[int, Any], arg: str | None, name: str, least: int) -> int:
    """The referenced slot as a count (an integer, or an array's size), at least ``least``."""
    value = _target(ctx, arg, name)
    try:
        return max(int(value), least)
    except (TypeError, ValueError):
        return max(int(np.asarray(value).size), least)


def _class_of(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    return _folded(a, 1000.0, _count(ctx, arg, "class_of", 1))


def _degree(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    """Non-negative integer degrees 0..10 (an orthogonal polynomial's n: scipy evaluates a
    non-integer or negative n as another function, torch truncates it)."""
    return _folded(a, 3.0, 11)


def _counts_of(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    n = _count(ctx, arg, "counts_of", 0)
    if a.ndim == 0 or a.size == 0:
        return np.full(a.shape, n).astype(_int_dtype(a))
    w = np.nan_to_num(_float_work(a).real, nan=0.0, posinf=0.0, neginf=0.0)
    # the recipe's values give the shares (softmax), apportioned by largest remainder: every row
    # sums to n exactly and small counts spread over several categories
    with np.errstate(all="ignore"):
        e = np.exp(w - np.max(w, axis=-1, keepdims=True))
        quota = e / np.sum(e, axis=-1, keepdims=True) * n
    counts = np.floor(quota)
    rest = n - np.sum(counts, axis=-1, keepdims=True)
    order = np.argsort(np.argsort(-(quota - counts), axis=-1, kind="stable"), axis=-1)
    counts = counts + (order < rest)
    return counts.astype(_int_dtype(a))


def _rows(ctx: dict[int, Any], arg: str | None, name: str) -> int:
    target = np.asarray(_target(ctx, arg, name))
    return int(target.shape[0]) if target.ndim else 1


def _segments_of(a: np.ndarray, ctx: dict[int, Any], arg: str | None) -> np.ndarray:
    return (np.arange(_rows(ctx, arg, "segments_of")) // 2).astype(_int_dtype(a))


def _segment_count_of(ctx: dict[int, Any], arg: str | None) -> Any:
    return (_rows(ctx, arg, "segment_count_of") + 1) // 2


def _reshape_of(ctx: dict[int, Any], arg: str | None) -> Any:
    return tuple(reversed(np.shape(_target(ctx, arg, "reshape_of"))))


def _shape_of(ctx: dict[int, Any], arg: str | None) -> Any:
    return tuple(np.shape(_target(ctx, arg, "shape_of")))


def _broadcast_of(ctx: dict[int, Any], arg: str | None) -> Any:
    return (2,) + tuple(np.shape(_target(ctx, arg, "broadcast_of")))


def _size_of(ctx: dict[int, Any], arg: str | None) -> Any:
    return int(np.size(_target(ctx, arg, "size_of")))


def _permutation_of(ctx: dict[int, Any], arg: str | None) -> Any:
    return tuple(reversed(range(np.ndim(_target(ctx, arg, "permutation_of")))))


ArrayStructure = Callable[[np.ndarray, dict[int, Any], "str | None"], np.ndarray]
DerivedStructure = Callable[[dict[int, Any], "str | None"], Any]

#: array structures by name (post-processing of a recipe's array)
ARRAY_STRUCTURES: dict[str, ArrayStructure] = {
    "spd": _spd,
    "well_conditioned": _well_conditioned,
    "lower_triangular": _lower,
    "upper_triangular": _upper,
    "probabilities": _probabilities,
    "one_hot": _one_hot,
    "binary": _binary,
    "signs": _signs,
    "sorted": _sorted,
    "index_into": _index_into,
    "index_out_of": _index_out_of,
    "class_of": _class_of,
    "degree": _degree,
    "counts_of": _counts_of,
    "segments_of": _segments_of,
}
#: derived-literal structures by name (computed from another slot)
DERIVED_STRUCTURES: dict[str, DerivedStructure] = {
    "reshape_of": _reshape_of,
    "shape_of": _shape_of,
    "broadcast_of": _broadcast_of,
    "size_of": _size_of,
    "permutation_of": _permutation_of,
    "segment_count_of": _segment_count_of,
}
#: structures whose values must keep an integer dtype (dtype mutations leave them alone)
INTEGER_STRUCTURES = frozenset({"index_into", "index_out_of", "class_of", "counts_of",
                                "segments_of", "degree"})
#: structures that read another slot
REFERENCING = frozenset({"index_into", "index_out_of", "class_of", "counts_of", "segments_of",
                         *DERIVED_STRUCTURES})


def check(structure: str, *, derived: bool) -> None:
    """Raise :class:`ConfigError` unless ``structure`` names a known structure of that kind."""
    name, arg = split(structure)
    table = DERIVED_STRUCTURES if derived else ARRAY_STRUCTURES
    if name not in table:
        raise ConfigError(f"unknown {'derived' if derived else 'array'} structure {structure!r}; "
                          f"known: {', '.join(sorted(table))}")
    if name in REFERENCING and arg is None:
        raise ConfigError(f"structure {name!r} needs a slot reference ({name}:<slot>)")


def apply_array(structure: str, base: np.ndarray, ctx: dict[int, Any]) -> np.ndarray:
    """The array structure ``structure`` applied to ``base`` (``ctx``: other slots' values)."""
    name, arg = split(structure)
    try:
        fn = ARRAY_STRUCTURES[name]
    except KeyError:
        raise ConfigError(f"unknown array structure {structure!r}") from None
    return fn(base, ctx, arg)


def apply_derived(structure: str, ctx: dict[int, Any]) -> Any:
    """The literal the derived structure computes from ``ctx``."""
    name, arg = split(structure)
    try:
        fn = DERIVED_STRUCTURES[name]
    except KeyError:
        raise ConfigError(f"unknown derived structure {structure!r}") from None
    return fn(ctx, arg)
