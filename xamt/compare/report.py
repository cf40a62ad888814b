"""Comparison reports: one :class:`MemberReport` per output, one :class:`GroupReport` per group."""
from __future__ import annotations

import math
from dataclasses import dataclass

from xamt.compare.tolerance import Tolerance

__all__ = ["MemberReport", "GroupReport", "PATTERN_PENALTY", "SIGNED_ZERO_UNITS", "value_distance"]

#: Dispersion added per element whose NaN / infinity pattern differs from the reference, and
#: (times the element count) the cost of a wrong shape.
PATTERN_PENALTY = 1.0e6
#: Dispersion added per signed-zero mismatch (only counted with ``signed_zero=True``).
SIGNED_ZERO_UNITS = 1.0
#: Largest value distance: ``1 + log2`` of the largest finite ratio of two doubles is below 2100.
VALUE_DISTANCE_CAP = 4096.0


def value_distance(units: float) -> float:
    """A member's value distance from its largest difference in tolerance units ``u``.

    ``u`` itself up to 1 (within tolerance), ``1 + log2(u)`` beyond, ``VALUE_DISTANCE_CAP`` for
    an infinite ``u``: monotone, so the farthest member stays the farthest, and bounded far
    below ``PATTERN_PENALTY``, so one wild value never outweighs a NaN/inf pattern change.
    """
    if units <= 1.0:
        return units
    if units < math.inf:
        return 1.0 + math.log2(units)
    return VALUE_DISTANCE_CAP


@dataclass(slots=True)
class MemberReport:
    """How one output differs from the reference.

    Counts are numbers of elements; each mismatching element is counted once, in the first
    matching category of nan, inf, value, signed zero. The ``max_*`` fields are taken over the
    elements where both the member and the reference are finite (0.0 when there are none; NaN
    when the member was not compared because of its shape).
    """

    index: int
    dtype: str
    shape: tuple[int, ...]
    shape_ok: bool
    kind_ok: bool
    nan_mismatch: int = 0
    inf_mismatch: int = 0
    signed_zero_mismatch: int = 0
    value_mismatch: int = 0
    max_abs_diff: float = 0.0
    max_rel_diff: float = 0.0
    max_ulp_diff: float = 0.0
    max_tol_units: float = 0.0
    first_mismatch: int | None = None
    distance: float = 0.0  # this member's share of the group dispersion

    @property
    def mismatches(self) -> int:
        """Elements that differ from the reference, all categories together."""
        return self.nan_mismatch + self.inf_mismatch + self.signed_zero_mismatch + self.value_mismatch

    @property
    def agree(self) -> bool:
        """Same shape, same kind, and no element differs from the reference."""
        return (self.shape_ok and self.kind_ok and not self.nan_mismatch and not self.inf_mismatch
                and not self.signed_zero_mismatch and not self.value_mismatch)

    def key(self) -> tuple:
        """A hashable, NaN-safe identity of the report's content (floats by their bits)."""
        return (self.index, self.dtype, self.shape, self.shape_ok, self.kind_ok, self.nan_mismatch,
                self.inf_mismatch, self.signed_zero_mismatch, self.value_mismatch,
                _fkey(self.max_abs_diff), _fkey(self.max_rel_diff), _fkey(self.max_ulp_diff),
                _fkey(self.max_tol_units), self.first_mismatch, _fkey(self.distance))

    def to_dict(self) -> dict:
        """A JSON-ready dict (non-finite floats as the strings "nan", "inf")."""
        return {
            "index": self.index, "dtype": self.dtype, "shape": list(self.shape),
            "shape_ok": self.shape_ok, "kind_ok": self.kind_ok,
            "nan_mismatch": self.nan_mismatch, "inf_mismatch": self.inf_mismatch,
            "signed_zero_mismatch": self.signed_zero_mismatch,
            "value_mismatch": self.value_mismatch, "max_abs_diff": _jf(self.max_abs_diff),
            "max_rel_diff": _jf(self.max_rel_diff), "max_ulp_diff": _jf(self.max_ulp_diff),
            "max_tol_units": _jf(self.max_tol_units), "first_mismatch": self.first_mismatch,
            "distance": _jf(self.distance),
        }


class GroupReport:
    """The comparison of a group of outputs (see :func:`xamt.compare.compare_group`).

    ``members`` (one :class:`MemberReport` per output) is built on first access: the fuzzer's
    hot loop mostly reads ``agree``, ``dispersion`` and ``outlier`` only.
    """

    __slots__ = ("agree", "reference", "reference_rule", "shape", "kind", "domain", "tolerance",
                 "signed_zero", "dispersion", "outlier", "backend", "_members")

    def __init__(self, agree: bool, members, reference: int | None, reference_rule: str,
                 shape: tuple[int, ...], kind: str, domain: str, tolerance: Tolerance,
                 signed_zero: bool, dispersion: float, outlier: int | None, backend: str = ""):
        self.agree = agree
        self._members = members  # a tuple, or a callable returning it
        self.reference = reference  # index of the reference member; None: element-wise median
        self.reference_rule = reference_rule  # "index", "median", "first" (opaque dtypes)
        self.shape = shape  # the reference shape
        self.kind = kind  # the reference kind
        self.domain = domain  # arithmetic used: "int", "float", "complex" or "opaque"
        self.tolerance = tolerance
        self.signed_zero = signed_zero
        self.dispersion = dispersion
        self.outlier = outlier
        self.backend = backend  # which kernel produced it; not part of the content

    @property
    def members(self) -> tuple[MemberReport, ...]:
        """Per-output reports, in input order."""
        m = self._members
        if not isinstance(m, tuple):
            m = self._members = m()
        return m

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupReport):
            return NotImplemented
        return self.key() == other.key()

    __hash__ = None  # mutable-looking value object: compare with key() for hashing

    def __repr__(self) -> str:
        return (f"GroupReport(agree={self.agree}, reference={self.reference}, "
                f"shape={self.shape}, domain={self.domain!r}, dispersion={self.dispersion!r}, "
                f"outlier={self.outlier}, members={len(self.members)}, backend={self.backend!r})")

    @property
    def size(self) -> int:
        """Elements per member (of the reference shape)."""
        return math.prod(self.shape)

    @property
    def values_agree(self) -> bool:
        """Like ``agree`` but ignores kind mismatches (e.g. int64 vs float64 holding equal values)."""
        return all(m.shape_ok and not m.mismatches for m in self.members)

    def key(self) -> tuple:
        """A hashable, NaN-safe identity of the report's content (everything but ``backend``)."""
        return (self.agree, tuple(m.key() for m in self.members), self.reference,
                self.reference_rule, self.shape, self.kind, self.domain,
                (self.tolerance.rtol, self.tolerance.atol), self.signed_zero,
                _fkey(self.dispersion), self.outlier)

    def summary(self) -> str:
        """A few lines saying what differs, for logs and finding reports."""
        ref = "element-wise median" if self.reference is None else f"member {self.reference}"
        head = (f"{len(self.members)} outputs, shape {self.shape}, {self.domain} arithmetic, "
                f"reference {ref}, rtol={self.tolerance.rtol:g} atol={self.tolerance.atol:g}: ")
        if self.agree:
            return head + "all agree"
        lines = [head + f"disagree (dispersion {self.dispersion:.6g}, outlier {self.outlier})"]
        for m in self.members:
            if m.agree:
                continue
            what = []
            if not m.shape_ok:
                what.append(f"shape {m.shape} != {self.shape}")
            if not m.kind_ok:
                what.append(f"kind of {m.dtype} is not {self.kind}")
            for label, n in (("NaN", m.nan_mismatch), ("inf", m.inf_mismatch),
                             ("signed-zero", m.signed_zero_mismatch), ("value", m.value_mismatch)):
                if n:
                    what.append(f"{n} {label} mismatch{'es' if n != 1 else ''}")
            if m.mismatches:
                what.append(f"first at flat index {m.first_mismatch}; max abs {m.max_abs_diff:.6g}, "
                            f"rel {m.max_rel_diff:.6g}, ulp {m.max_ulp_diff:.6g}")
            lines.append(f"  member {m.index} ({m.dtype}): " + "; ".join(what))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """A JSON-ready dict of the whole report."""
        return {
            "agree": self.agree, "members": [m.to_dict() for m in self.members],
            "reference": self.reference, "reference_rule": self.reference_rule,
            "shape": list(self.shape), "kind": self.kind, "domain": self.domain,
            "rtol": self.tolerance.rtol, "atol": self.tolerance.atol,
            "signed_zero": self.signed_zero, "dispersion": _jf(self.dispersion),
            "outlier": self.outlier, "backend": self.backend,
        }


def _fkey(x: float) -> str:
    return float(x).hex() if x == x else "nan"


def _jf(x: float) -> float | str:
    return x if math.isfinite(x) else ("nan" if x != x else ("inf" if x > 0 else "-inf"))
