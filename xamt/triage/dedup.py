"""De-duplication of divergences, before and after triage.

:class:`Candidate` is what the fuzz loop hands to triage; its :attr:`~Candidate.prekey` (group,
signal kind, suspected API, input signature) lets the loop skip a divergence it has seen
before triaging it. After triage, :func:`finding_signature` is the signature of the filed
:class:`~xamt.findings.Finding` (its de-duplication key in the store is group, class, outlier and
that signature).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from xamt.findings import FindingClass
from xamt.exec.group import MemberResult
from xamt.oracle import SignalKind

__all__ = ["Candidate", "input_signature", "dominant_dtype", "finding_signature", "COARSE_CLASSES"]

#: classes decided by one kind of special value: their signature is the dtype alone
COARSE_CLASSES = (FindingClass.NAN, FindingClass.SUBNORMAL, FindingClass.PROMOTION,
                  FindingClass.DEFAULT, FindingClass.CRASH, FindingClass.INTERNAL)


def _array_flags(a: np.ndarray) -> str:
    flags = ""
    if a.size == 0:
        return "e"
    if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
        x = a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64)
        parts = (x.real, x.imag) if a.dtype.kind == "c" else (x,)
        if any(np.isnan(p).any() for p in parts):
            flags += "n"
        if any(np.isinf(p).any() for p in parts):
            flags += "i"
        from xamt.triage.classify import subnormal_mask

        if subnormal_mask(a).any():
            flags += "s"
        if any(((p == 0) & np.signbit(p)).any() for p in parts):
            flags += "z"
    return flags


def input_signature(values: Mapping[int, Any]) -> str:
    """A coarse description of an input for de-duplication: per array slot its dtype, rank
    class and special values (n NaN, i inf, s subnormal, z -0.0, e empty); per other slot its
    type. Two inputs with the same signature that trip the same member the same way are one
    finding."""
    parts = []
    for slot in sorted(values):
        v = values[slot]
        if isinstance(v, np.ndarray):
            rank = "0" if v.ndim == 0 else "1" if v.ndim == 1 else "n"
            parts.append(f"{v.dtype.name}/{rank}{_array_flags(v)}")
        elif isinstance(v, list) and v and all(isinstance(a, np.ndarray) for a in v):
            parts.append("[" + ",".join(f"{a.dtype.name}{_array_flags(a)}" for a in v) + "]")
        elif isinstance(v, np.dtype):
            parts.append(f"dtype:{v.name}")
        else:
            parts.append(type(v).__name__)
    return "|".join(parts)


def dominant_dtype(values: Mapping[int, Any]) -> str | None:
    """The dtype of the first array slot (or of the first array of a list slot); None if none."""
    for slot in sorted(values):
        v = values[slot]
        if isinstance(v, np.ndarray):
            return v.dtype.name
        if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
            return v[0].dtype.name
    return None


def finding_signature(finding_class: FindingClass, values: Mapping[int, Any],
                      candidate_signature: str = "") -> str:
    """The signature of a finding of ``finding_class`` on the (minimised) input ``values``:
    the dominant dtype for the :data:`COARSE_CLASSES`, the candidate's refusal rule for a
    status divergence that has one, else :func:`input_signature`."""
    if finding_class in COARSE_CLASSES:
        return dominant_dtype(values) or "-"
    if finding_class == FindingClass.STATUS and candidate_signature:
        return candidate_signature  # the refusal rule: one rule, one finding, whatever the input
    return input_signature(values)


@dataclass
class Candidate:
    """A raw divergence seen by the fuzz loop."""

    group: Any
    input: Any
    values: dict[int, Any]
    members: list[int]
    results: list[MemberResult]
    kind: SignalKind | str
    member: int  # index into ``members`` / ``results`` of the suspected member
    why: str = ""
    #: de-duplication signature: the input's (:func:`input_signature`), or for a status
    #: divergence the refusal rule (:func:`xamt.oracle.error_key`)
    signature: str = ""

    @property
    def prekey(self) -> tuple[str, str, str, str]:
        """De-duplication key before triage: group, signal kind, suspected API, input signature."""
        api = self.group.members[self.members[self.member]].qualname
        return (self.group.key, str(getattr(self.kind, "value", self.kind)), api, self.signature)
