"""A finding's evidence made readable: decoded inputs and outputs, differing elements, tables.

Evidence blobs are written by the fuzzer (:func:`xamt.findings.encode_evidence`, the sandbox codec):

* ``inputs``: a dict ``{argument name: numpy array or scalar}``;
* ``outputs``: a list, one per group member in :attr:`Finding.members` order, of dicts
  ``{"status", "value", "error_type", "error_message"}`` (``value`` a numpy array or None).

The element-wise "differs" marks computed here are for display only (the verdict is the
comparator's, recorded in :attr:`Finding.summary`): an element of a member is marked when it
differs from most of the other members' elements at the same index, beyond a tolerance.
A blob that cannot be decoded is reported on the page, never raised: one broken finding must not
take the whole report down.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from xamt.findings import EvidenceDecodeError, Finding, FindingsStore, decode_evidence_blob
from xamt.log import get_logger

__all__ = [
    "MemberOutput",
    "Evidence",
    "Tolerance",
    "ArrayTable",
    "decode_evidence",
    "load_evidence",
    "mismatch_masks",
    "tolerance_for",
    "array_table",
    "union_mask",
    "DiffRow",
    "differences",
    "agreeing_members",
    "to_jsonable",
    "describe_value",
]

_log = get_logger("report.evidence")

#: table sizes on a page: bigger arrays are cut (and the page says so)
MAX_ROWS = 16
MAX_COLS = 12
#: 1-d arrays are wrapped into rows of this many elements
WRAP_1D = 10
#: at most this many differing indices are listed per output
MAX_DIFFERENCES = 20


@dataclass
class MemberOutput:
    """One member's outcome on the finding's input."""

    library: str
    api: str
    status: str
    value: Any = None
    error_type: str | None = None
    error_message: str | None = None
    outlier: bool = False
    #: triage found this member's result to be the outlier's too (tf.math.log1p beside the
    #: blamed tnp.log1p): it is on the outlier's side, not the reference's
    same_as_outlier: bool = False


@dataclass
class Evidence:
    """Decoded evidence; ``problem`` says why part of it could not be read (else None)."""

    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: list[MemberOutput] = field(default_factory=list)
    problem: str | None = None


def _member_outputs(finding: Finding, raw: Any) -> tuple[list[MemberOutput], str | None]:
    members = finding.members
    problem = None
    if not isinstance(raw, (list, tuple)):
        return _members_only(finding), f"outputs blob holds a {type(raw).__name__}, not a list"
    if len(raw) != len(members):
        problem = f"outputs blob has {len(raw)} entries for {len(members)} group members"
    outs = []
    for i, m in enumerate(members):
        r = raw[i] if i < len(raw) and isinstance(raw[i], dict) else {}
        outs.append(MemberOutput(
            library=str(m.get("library", "?")), api=str(m.get("api", "?")),
            status=str(r.get("status", m.get("status", "unknown"))), value=r.get("value"),
            error_type=r.get("error_type"), error_message=r.get("error_message"),
            outlier=_is_outlier(m, finding), same_as_outlier=bool(m.get("same_as_outlier")),
        ))
    return outs, problem


def _members_only(finding: Finding) -> list[MemberOutput]:
    return [MemberOutput(str(m.get("library", "?")), str(m.get("api", "?")),
                         str(m.get("status", "unknown")),
                         outlier=_is_outlier(m, finding), same_as_outlier=bool(m.get("same_as_outlier")))
            for m in finding.members]


def _is_outlier(member: dict, finding: Finding) -> bool:
    """The member's own ``outlier`` flag, which triage records; by name only for findings filed
    without it (an eager/compiled pair shares one name, so the name alone would mark both)."""
    if "outlier" in member:
        return bool(member["outlier"])
    return bool(finding.outlier_api) and member.get("api") == finding.outlier_api


def decode_evidence(finding: Finding, inputs_blob: bytes | None,
                    outputs_blob: bytes | None) -> Evidence:
    """Decode a finding's evidence blobs (missing or broken blobs are described, not raised)."""
    if inputs_blob is None or outputs_blob is None:
        return Evidence(outputs=_members_only(finding), problem="no evidence stored for this finding")
    problems = []
    try:
        inputs = decode_evidence_blob(inputs_blob)
        if not isinstance(inputs, dict):
            problems.append(f"inputs blob holds a {type(inputs).__name__}, not a dict")
            inputs = {"input": inputs}
    except EvidenceDecodeError as exc:
        problems.append(f"inputs cannot be decoded: {exc}")
        inputs = {}
    try:
        outputs, problem = _member_outputs(finding, decode_evidence_blob(outputs_blob))
        if problem:
            problems.append(problem)
    except EvidenceDecodeError as exc:
        problems.append(f"outputs cannot be decoded: {exc}")
        outputs = _members_only(finding)
    if problems:
        _log.warning("finding %s: %s", finding.id, "; ".join(problems))
    return Evidence({str(k): v for k, v in inputs.items()}, outputs,
                    "; ".join(problems) if problems else None)


def load_evidence(fs: FindingsStore, finding: Finding) -> Evidence:
    """Read and decode ``finding``'s evidence from the store."""
    blobs = fs.evidence(finding.id) if finding.id is not None else None
    return decode_evidence(finding, *(blobs or (None, None)))


# -- numbers ----------------------------------------------------------------------------------
def _as_array(value: Any) -> np.ndarray | None:
    """A numeric array for ``value`` (array, numpy or Python scalar), or None."""
    if value is None or isinstance(value, (str, bytes, dict)):
        return None
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (np.generic, bool, int, float, complex)):
        return np.asarray(value)
    return None


def _float_kind(dt: np.dtype) -> bool:
    if dt.kind in "fc":
        return True
    if dt.kind == "V":  # ml_dtypes (bfloat16, float8 ..., int4): ask ml_dtypes which it is
        import ml_dtypes

        try:
            ml_dtypes.finfo(dt)
            return True
        except ValueError:
            return False
    return False


def _eps(dt: np.dtype) -> float | None:
    if not _float_kind(dt):
        return None
    import ml_dtypes

    return float(ml_dtypes.finfo(np.empty(0, dt).real.dtype).eps)


@dataclass(frozen=True)
class Tolerance:
    """``rtol``/``atol`` used to mark elements, and where they come from."""

    rtol: float
    atol: float
    source: str

    def describe(self) -> str:
        if self.rtol == 0 and self.atol == 0:
            return f"exact comparison ({self.source})"
        return f"rtol={self.rtol:g}, atol={self.atol:g} ({self.source})"


def tolerance_for(finding: Finding, values: Sequence[Any]) -> Tolerance:
    """The comparator's tolerance when the finding recorded one, else a display default.

    The default is the square root of the machine epsilon of the coarsest floating dtype among
    the outputs (half the significant digits must agree), and exact for integer outputs.
    """
    s = finding.summary or {}
    if isinstance(s.get("rtol"), (int, float)) and isinstance(s.get("atol"), (int, float)):
        return Tolerance(float(s["rtol"]), float(s["atol"]), "the comparator's")
    eps = [e for e in (_eps(a.dtype) for a in map(_as_array, values) if a is not None)
           if e is not None]
    if not eps:
        return Tolerance(0.0, 0.0, "integer or boolean outputs")
    t = math.sqrt(max(eps))
    return Tolerance(t, t, "display default: √eps of the coarsest dtype")


#: dtype kinds compared element-wise ("V": ml_dtypes' bfloat16, float8, int4 ...)
_NUMERIC_KINDS = frozenset("biufcV")


def _numeric_for_compare(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "biu":
        return a
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "f" or (a.dtype.kind == "V" and _float_kind(a.dtype)):
        return a.astype(np.float64)
    if a.dtype.kind == "V":
        return a.astype(np.int64)  # ml_dtypes integer types
    raise TypeError(f"dtype {a.dtype} is not numeric")


def _close(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> np.ndarray:
    """Element-wise "same value" of two equally shaped arrays (NaN equals NaN)."""
    x, y = _numeric_for_compare(a), _numeric_for_compare(b)
    if x.dtype.kind in "biu" and y.dtype.kind in "biu":
        return np.asarray(x == y)
    if x.dtype.kind == "c" or y.dtype.kind == "c":
        x, y = x.astype(np.complex128), y.astype(np.complex128)
    else:
        x, y = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        return np.isclose(x, y, rtol=tol.rtol, atol=tol.atol, equal_nan=True)


def mismatch_masks(values: Sequence[Any], tol: Tolerance) -> list[np.ndarray | None]:
    """Per value, a boolean mask of the elements that differ from most other values.

    An element is marked when more of the other comparable values (numeric, same shape) differ
    from it at that index than agree with it. Values that are not numeric arrays, or have no
    comparable partner, get None.
    """
    arrays = [_as_array(v) for v in values]
    usable = [a is not None and a.dtype.kind in _NUMERIC_KINDS for a in arrays]
    masks: list[np.ndarray | None] = []
    for i, a in enumerate(arrays):
        if not usable[i]:
            masks.append(None)
            continue
        agree = np.zeros(a.shape, dtype=np.int64)
        disagree = np.zeros(a.shape, dtype=np.int64)
        partners = 0
        for j, b in enumerate(arrays):
            if j == i or not usable[j] or b.shape != a.shape:
                continue
            partners += 1
            close = _close(a, b, tol)
            agree += close
            disagree += ~close
        masks.append(disagree > agree if partners else None)
    return masks


def agreeing_members(outputs: Sequence[MemberOutput], tol: Tolerance) -> list[MemberOutput]:
    """Non-outlier members that ran and whose values agree with each other everywhere.

    These are the members a bug report cites as "the libraries that agree": the largest set of
    successful non-outlier members whose outputs match element-wise within ``tol`` (a member
    with no value agrees only with others without one, e.g. when the outlier crashed).
    """
    candidates = [o for o in outputs if not o.outlier and o.status == "ok"]
    best: list[MemberOutput] = []
    for ref in candidates:
        ra = _as_array(ref.value)
        club = []
        for o in candidates:
            oa = _as_array(o.value)
            if ra is None or oa is None:
                same = ra is None and oa is None
            elif (ra.shape != oa.shape or ra.dtype.kind not in _NUMERIC_KINDS
                  or oa.dtype.kind not in _NUMERIC_KINDS):
                same = False
            else:
                same = bool(np.all(_close(ra, oa, tol)))
            if same:
                club.append(o)
        if len(club) > len(best):
            best = club
    return best


# -- display ----------------------------------------------------------------------------------
@dataclass
class Cell:
    """One element as shown: short text, the full text when it was shortened, and marks."""

    text: str
    differs: bool = False
    focus: bool = False  # at an index where some member differs
    full: str | None = None


@dataclass
class ArrayTable:
    """An array laid out for an HTML table: labelled rows of cells, and what was left out."""

    dtype: str
    shape: tuple[int, ...]
    columns: list[str]
    rows: list[tuple[str, list[Cell]]]
    note: str | None = None
    differing: int = 0

    @property
    def scalar(self) -> bool:
        return self.shape == ()


#: element texts longer than this are shortened in tables (the full text is the cell's title)
_SHORT = 11


def _text(x: Any) -> tuple[str, str | None]:
    """``(shown, full or None)``; numpy's str() of a scalar is its shortest round-trip form."""
    full = str(x)
    if len(full) <= _SHORT:
        return full, None
    kind = np.asarray(x).dtype.kind
    if kind in "fV":
        try:
            return f"{float(x):.6g}", full
        except (TypeError, ValueError):
            return full, None
    if kind == "c":
        return f"{complex(x):.4g}", full
    return full, None


def _grid(shape: tuple[int, ...]) -> tuple[int, int]:
    """Rows and columns of the 2-d layout: 1-d arrays wrap, others flatten their leading axes."""
    if len(shape) == 1:
        width = max(1, min(WRAP_1D, shape[0]))
        return -(-shape[0] // width), width
    return int(np.prod(shape[:-1])), shape[-1]


def _window_start(first: int, total: int, size: int) -> int:
    if total <= size or first < size:
        return 0
    return max(0, min(first - size // 2, total - size))


def array_table(a: np.ndarray, mask: np.ndarray | None = None,
                focus: np.ndarray | None = None, max_cols: int = MAX_COLS) -> ArrayTable:
    """Lay ``a`` out as rows of cells, cut to a page's size.

    ``mask`` marks this array's differing elements; ``focus`` (same shape) marks the indices where
    any member differs: the cut window is placed on the first of them, so a difference deep in a
    big array is on screen.
    """
    dtype, shape = str(a.dtype), tuple(a.shape)
    differing = int(mask.sum()) if mask is not None else 0
    if focus is not None and focus.shape != a.shape:
        focus = None
    if a.ndim == 0:
        text, full = _text(a[()])
        return ArrayTable(dtype, shape, [""], [("", [Cell(text, bool(mask), bool(focus), full)])],
                          differing=differing)
    if a.size == 0:
        return ArrayTable(dtype, shape, [], [], note="empty array", differing=0)
    nrows, ncols = _grid(shape)
    flat = a.reshape(-1)
    fmask = mask.reshape(-1) if mask is not None else None
    ffocus = focus.reshape(-1) if focus is not None else None
    r0 = c0 = 0
    if ffocus is not None and ffocus.any():
        first = int(np.flatnonzero(ffocus)[0])
        r0 = _window_start(first // ncols, nrows, MAX_ROWS)
        c0 = _window_start(first % ncols, ncols, max_cols) if a.ndim > 1 else 0
    row_ids = range(r0, min(nrows, r0 + MAX_ROWS))
    col_ids = range(c0, min(ncols, c0 + (ncols if a.ndim == 1 else max_cols)))
    rows = []
    for r in row_ids:
        cells = []
        for c in col_ids:
            k = r * ncols + c
            if k >= flat.size:  # the last wrapped row of a 1-d array
                break
            text, full = _text(flat[k])
            cells.append(Cell(text, bool(fmask[k]) if fmask is not None else False,
                              bool(ffocus[k]) if ffocus is not None else False, full))
        if a.ndim == 1:
            label = f"[{r * ncols}]"
        else:
            index = np.unravel_index(r, shape[:-1])
            label = "[" + ", ".join(str(int(i)) for i in index) + ", :]"
        rows.append((label, cells))
    columns = ([f"+{c}" for c in col_ids] if a.ndim == 1 else [str(c) for c in col_ids])
    cut = []
    if len(row_ids) < nrows:
        what = "elements" if a.ndim == 1 else "rows"
        lo, hi = (r0 * ncols, min(flat.size, row_ids.stop * ncols)) if a.ndim == 1 else (r0, row_ids.stop)
        total = flat.size if a.ndim == 1 else nrows
        cut.append(f"{what} {lo}–{hi - 1} of {total}")
    if len(col_ids) < ncols:
        cut.append(f"columns {c0}–{col_ids.stop - 1} of {ncols}")
    note = ("showing " + " and ".join(cut)) if cut else None
    return ArrayTable(dtype, shape, columns, rows, note, differing)


def union_mask(masks: Sequence[np.ndarray | None]) -> np.ndarray | None:
    """Indices where any member's mask is set (masks of another shape than the first are skipped)."""
    union = None
    for m in masks:
        if m is None:
            continue
        if union is None:
            union = m.copy()
        elif m.shape == union.shape:
            union |= m
    return union


@dataclass
class DiffRow:
    """One differing index: its label, every member's value there, every input's value there
    (inputs shaped like the outputs, e.g. of element-wise operators; "—" for the others)."""

    index: tuple[int, ...]
    label: str
    values: list[str]
    inputs: list[str]


def differences(outputs: Sequence[MemberOutput], masks: Sequence[np.ndarray | None],
                limit: int = MAX_DIFFERENCES,
                inputs: dict[str, Any] | None = None) -> tuple[list[DiffRow], int]:
    """The first ``limit`` indices where any member is marked, with every member's value there.

    Returns ``(rows, total)``: one :class:`DiffRow` per index and how many indices differ in all.
    Members (and inputs) whose value has another shape show "—".
    """
    shaped = [_as_array(o.value) for o in outputs]
    union = union_mask(masks)
    if union is None or not union.any():
        return [], 0
    args = [_as_array(v) for v in (inputs or {}).values()]
    rows = []
    for index in np.argwhere(union)[:limit]:  # a 0-d union gives one empty index
        t = tuple(int(i) for i in index)
        texts = [str(a[t]) if a is not None and a.shape == union.shape else "—" for a in shaped]
        given = [str(a[t]) if a is not None and a.shape == union.shape and a.ndim else "—"
                 for a in args]
        rows.append(DiffRow(t, "[" + ", ".join(map(str, t)) + "]" if t else "(scalar)",
                            texts, given))
    return rows, int(union.sum())


def describe_value(value: Any) -> str:
    """A short description: ``float32[2, 3]`` for arrays, the repr for anything else."""
    a = value if isinstance(value, np.ndarray) else None
    if a is not None:
        return f"{a.dtype}[{', '.join(map(str, a.shape))}]" if a.ndim else f"{a.dtype} 0-d array"
    if isinstance(value, np.generic):
        return f"{value.dtype} scalar"
    return type(value).__name__


def _json_scalar(x: Any) -> Any:
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, complex):
        return {"real": _json_scalar(x.real), "imag": _json_scalar(x.imag)}
    if isinstance(x, float):
        return x if math.isfinite(x) else str(x)  # strict JSON has no NaN or Infinity
    return str(x)


def to_jsonable(value: Any) -> Any:
    """``value`` in strict JSON terms: arrays as ``{"dtype", "shape", "values"}``, non-finite
    floats as the strings ``"nan"``, ``"inf"``, ``"-inf"``, complex as ``{"real", "imag"}``."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        a = np.asarray(value)
        plain = a.astype(np.float64) if a.dtype.kind == "V" and _float_kind(a.dtype) else a
        if plain.dtype.kind == "V":
            plain = plain.astype(np.int64)  # ml_dtypes integer types (int4 ...)

        def walk(x: Any) -> Any:
            return [walk(y) for y in x] if isinstance(x, list) else _json_scalar(x)

        return {"dtype": str(a.dtype), "shape": list(a.shape), "values": walk(plain.tolist())}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bool, int, float, complex, str)) or value is None:
        return _json_scalar(value)
    if isinstance(value, np.dtype):
        return str(value)
    return repr(value)
