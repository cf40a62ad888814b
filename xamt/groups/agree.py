"""Value agreement of normalised outputs, for validation (built on :mod:`xamt.compare`).

Outputs are :func:`~xamt.exec.normalise.to_numpy_tree` results: arrays, strings, ``None`` or
tuples of those. Two outputs agree when they have the same structure and every pair of array
leaves agrees in value under the validation tolerance (:func:`xamt.compare.compare_group`'s
``values_agree``: shape and values, not the dtype's kind, so ``int32`` indices match ``int64``
ones and a ``float64`` result of a float32 input matches a ``float32`` one within tolerance);
other leaves must be equal.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from xamt.compare import compare_group, computation_tolerance
from xamt.exec.normalise import leaves

__all__ = ["Agreement", "structure", "input_dtypes"]


def input_dtypes(values: Mapping[Any, Any]) -> tuple[np.dtype, ...]:
    """The dtypes of the arrays among slot ``values`` (lists of arrays included): what the
    computation ran in, for :meth:`Agreement.tolerance_for`."""
    out: list[np.dtype] = []
    for v in values.values():
        for a in (v if isinstance(v, list) else [v]):
            if isinstance(a, np.ndarray) and a.dtype not in out:
                out.append(a.dtype)
    return tuple(out)


def structure(value: Any) -> Any:
    """The shape of a tree: ``("t", n)`` for tuples (recursively), ``"a"`` for arrays, else the type."""
    if isinstance(value, tuple):
        return ("t", tuple(structure(v) for v in value))
    if isinstance(value, np.ndarray):
        return "a"
    return type(value).__name__


class Agreement:
    """Pairwise and group agreement under one tolerance table (dtype name → (rtol, atol))."""

    def __init__(self, tolerances: Mapping[str, Sequence[float]] | None = None):
        self.tol = {k: (float(v[0]), float(v[1])) for k, v in (tolerances or {}).items()} or None
        self._by_dtypes: dict[tuple, Any] = {}

    def tolerance_for(self, column: Sequence[Any], inputs: Sequence[np.dtype] = ()) -> Any:
        """The tolerance for one leaf ``column`` of outputs computed from arrays of dtypes
        ``inputs``: for float leaves, that of the lowest-precision float among the inputs and
        the leaves (a float16 input compared at float16's tolerance even where a library
        returns float64); else the table's (exact for integers)."""
        if inputs and all(isinstance(a, np.ndarray) and (a.dtype.kind in "fc" or a.dtype.name == "bfloat16")
                          for a in column):
            # memoised: the fuzz loop asks once per iteration, for a handful of dtype sets
            key = (tuple(inputs), tuple(a.dtype for a in column))
            tol = self._by_dtypes.get(key)
            if tol is None:
                tol = self._by_dtypes[key] = computation_tolerance(self.tol, [*key[0], *key[1]]) or self.tol
            return tol
        return self.tol

    def _leaf_reports(self, values: Sequence[Any], reference: int | None,
                      inputs: Sequence[np.dtype] = ()) -> list[bool] | None:
        """Per member: do its leaves agree with the reference's? None if structures differ."""
        if len({repr(structure(v)) for v in values}) != 1:
            return None
        flags = [True] * len(values)
        columns = list(zip(*[leaves(v) for v in values]))
        for column in columns:
            if isinstance(column[0], np.ndarray):
                try:
                    rep = compare_group(list(column), reference=reference,
                                        tol=self.tolerance_for(column, inputs))
                except Exception:  # bad arguments for the comparator (e.g. an exotic dtype)
                    return [False] * len(values)
                for i, m in enumerate(rep.members):
                    if not (m.shape_ok and not m.mismatches):
                        flags[i] = False
            else:
                ref = column[reference or 0]
                for i, leaf in enumerate(column):
                    if leaf != ref:
                        flags[i] = False
        return flags

    def pair(self, a: Any, b: Any, inputs: Sequence[np.dtype] = ()) -> bool:
        """True when ``b`` agrees with ``a`` (``a`` is the reference); ``inputs``: the dtypes
        the computation ran in (:meth:`tolerance_for`)."""
        flags = self._leaf_reports([a, b], 0, inputs)
        return bool(flags and flags[1])

    def group(self, values: Sequence[Any], inputs: Sequence[np.dtype] = ()) -> list[bool]:
        """Per member: agrees with the element-wise median of all (False for all if the
        structures differ)."""
        if len(values) < 2:
            return [True] * len(values)
        flags = self._leaf_reports(values, None, inputs)
        return flags if flags is not None else [False] * len(values)

    def assess(self, values: Sequence[Any], inputs: Sequence[np.dtype] = ()) -> tuple[list[bool], float]:
        """``(group(values), dispersion(values))`` from one comparison per leaf (the fuzz loop's
        per-iteration verdict; calling both costs every comparison twice)."""
        n = len(values)
        if n < 2:
            return [True] * n, 0.0
        if len({repr(structure(v)) for v in values}) != 1:
            return [False] * n, float("inf")
        flags, total = [True] * n, 0.0
        for column in zip(*[leaves(v) for v in values]):
            if isinstance(column[0], np.ndarray):
                try:
                    rep = compare_group(list(column), tol=self.tolerance_for(column, inputs))
                except Exception:  # bad arguments for the comparator (e.g. an exotic dtype)
                    return [False] * n, float("inf")
                total += rep.dispersion
                for i, m in enumerate(rep.members):
                    if not (m.shape_ok and not m.mismatches):
                        flags[i] = False
            else:
                for i, leaf in enumerate(column):
                    if leaf != column[0]:
                        flags[i] = False
        return flags, total

    def dispersion(self, values: Sequence[Any]) -> float:
        """Sum of the comparator's dispersion over the leaves (inf if structures differ)."""
        if len({repr(structure(v)) for v in values}) != 1:
            return float("inf")
        total = 0.0
        for column in zip(*[leaves(v) for v in values]):
            if isinstance(column[0], np.ndarray):
                try:
                    total += compare_group(list(column), tol=self.tol).dispersion
                except Exception:
                    return float("inf")
        return total
