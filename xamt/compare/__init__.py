"""Tolerance-aware, NaN-aware comparison of a group of outputs.

    from xamt.compare import compare_group, Tolerance, GroupReport
    rep = compare_group(outputs, reference=None, tol=None, signed_zero=False, backend="auto")

Definitions (all three backends, "c", "numba" and "numpy", implement exactly these, with the same
float64 operations in the same order, so their reports are bit-identical):

Members and reference
    ``outputs`` are k >= 2 arrays. The *reference shape* is the shape of the reference member
    (``reference=i``) or the most common shape (ties: the first). Members of another shape get
    ``shape_ok=False`` and no element comparison. The *kind* of a dtype is bool, int (signed and
    unsigned), float, complex or other (strings, objects, datetimes, records). ``kind_ok`` says
    whether a member's kind is the reference member's kind, or with ``reference=None`` the most
    common kind (ties: the first). A kind mismatch is reported on its own; values are still
    compared (int 3 and float 3.0 agree in value). bool is its own kind; its values are 0 and 1.

Arithmetic (the group's *domain*, from the kinds of the members that are compared)
    complex if any member is complex, else float if any is float: values are converted exactly
    to float64 / complex128 (float16, bfloat16 and the ml_dtypes float8/6/4 formats exactly;
    integers above 2**53 round to nearest; longdouble rounds to float64). Otherwise int:
    exact integers (any mix of int64 and uint64, no wrap-around). Kind "other": element
    equality (byte-wise for equal fixed-size dtypes, so NaT equals NaT; ``==`` otherwise),
    counted as value mismatches, with no diffs; the reference is member 0 when none is given.

Tolerance
    ``tol=None``: per dtype, torch.testing's table (``tolerances.json``: float16 (1e-3, 1e-5),
    bfloat16 (1.6e-2, 1e-5), float32 (1.3e-6, 1e-5), float64 (1e-7, 1e-7), complex alike, ints and
    bool exact). A :class:`Tolerance` (or an (rtol, atol) pair) applies to all dtypes; a mapping
    dtype -> Tolerance overrides the dtypes it names. A group uses the largest rtol and the
    largest atol over the dtypes of its compared members.

Element semantics: member value a against reference value r, in this order
    * NaN (complex: either part NaN): both NaN agree; exactly one NaN is a ``nan_mismatch``.
    * infinite (complex: a part infinite): equal values agree (+inf == +inf), else ``inf_mismatch``;
      a complex value compares part by part there: infinite parts equal, finite parts within
      ``atol + rtol*|r part|`` (inf-403.65152j against inf-403.6515197j agrees).
    * both finite: ``d = |a - r|`` (complex: ``hypot`` of the difference); ``d > atol + rtol*|r|``
      is a ``value_mismatch``. Otherwise, with ``signed_zero=True``, -0.0 against +0.0 (complex:
      in either part) is a ``signed_zero_mismatch``. Everything else agrees.
    Integers: ``value_mismatch`` when ``d`` (the exact difference rounded to float64) exceeds
    ``atol + rtol*|r|``; with the default exact tolerance, whenever a != r.

Reference values
    ``reference=i``: member i's values; member i itself reports no mismatch. ``reference=None``
    (the report's ``reference`` is None and ``reference_rule`` "median"): per element, over the
    compared members, the *class* that occurs most often among finite, NaN and infinite wins,
    ties in that order. If it is finite, the reference is the median of the finite values: the
    middle value in the IEEE total order (-0.0 before +0.0), or for an even count the midpoint
    ``(x + y) / 2`` of the two middle values (computed as ``(x + y) * 0.5``, or
    ``x*0.5 + y*0.5`` when ``x + y`` overflows). Complex: real and imaginary parts take their
    medians separately over the finite members. If NaN wins, the reference is NaN (so an
    all-NaN element agrees); if infinite wins, it is the infinite value that occurs most often
    (ties: the first one met). Integers: the lower median (the ``(m-1)//2``-th of the m sorted
    values), which is always one of the members' values.

Per-member statistics, over the elements where member and reference are both finite
    ``max_abs_diff``  max d.
    ``max_rel_diff``  max d / |r| (0 where d == 0, inf where d > 0 and r == 0).
    ``max_ulp_diff``  max d / ulp(r), ulp measured in the *member's own* dtype at |r|:
                      ``ulp = max(2**(e - p + 1), 2**(emin - p + 1))`` with ``e = floor(log2|r|)``
                      and the member dtype's precision p and minimum exponent emin (float16:
                      p=11, emin=-14; bfloat16: 8, -126; float32: 24, -126; float64: 53, -1022;
                      complex uses its component type; integer and bool members: ulp = 1).
                      The reference need not be representable in that dtype (a median is not),
                      so the value is fractional in general: 0.5 means half an ulp away.
    ``max_tol_units`` max d / tau with tau = atol + rtol*|r| (tau = 1 when rtol = atol = 0:
                      plain differences), 0 where d == 0; with a non-zero tolerance it is > 1
                      exactly when some element is a value mismatch.
    ``first_mismatch``  smallest flat (C-order) index of an element in any mismatch category.
    These maxima are 0.0 when there is no finite pair, NaN for a member of the wrong shape.

Dispersion (the fuzzer's fitness) and outlier
    Member distance ``D_i = v(max_tol_units_i) + P*(nan_mismatch_i + inf_mismatch_i)
    + 1*signed_zero_mismatch_i`` with P = 1e6 (``PATTERN_PENALTY``) and the value distance
    ``v(u) = u`` for u <= 1, ``1 + log2(u)`` above (monotone; at most 4096, for u = inf), so
    that in-tolerance noise counts linearly and wild values cannot outweigh a NaN/inf pattern
    change. A member of the wrong shape has ``D_i = P * max(size, 1)``; kind mismatches add
    nothing; for "other" dtypes ``D_i = P * value_mismatch_i``. ``dispersion = sum_i D_i``
    (in member order): 0 when all members agree exactly, growing with the spread measured in
    units of the tolerance, plus P per element whose NaN/inf pattern differs. ``outlier`` is
    the member with the largest D_i (ties: the first), None when the group agrees (a kind-only
    disagreement names the first member of another kind).

``agree`` is True when every member has the reference shape and kind and no mismatch at all;
``values_agree`` ignores kinds. The comparator never raises on data: every difference is a
counted, named field; it raises :class:`CompareUsageError` only for bad arguments.
"""
from xamt.compare.errors import (
    BackendUnavailableError,
    CompareError,
    CompareUsageError,
    ToleranceError,
)
from xamt.compare.group import BACKENDS, available_backends, compare_group, get_backend
from xamt.compare.report import (
    PATTERN_PENALTY,
    VALUE_DISTANCE_CAP,
    GroupReport,
    MemberReport,
    value_distance,
)
from xamt.compare.dtypes import computation_tolerance
from xamt.compare.tolerance import Tolerance

__all__ = [
    "compare_group",
    "computation_tolerance",
    "Tolerance",
    "GroupReport",
    "MemberReport",
    "PATTERN_PENALTY",
    "VALUE_DISTANCE_CAP",
    "value_distance",
    "BACKENDS",
    "available_backends",
    "get_backend",
    "CompareError",
    "CompareUsageError",
    "ToleranceError",
    "BackendUnavailableError",
]
