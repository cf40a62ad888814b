"""Documented numerical policies: findings that are filed and shown, never counted as bugs.

A :class:`Policy` comes from ``xamt/data/policies.toml`` and matches on evidence only: the class
the evidence gave, the outlier's library, the dtype the computation ran in, the trigger (the kind
of input value behind the finding) and the group's category and canonical name. Triage asks
:meth:`Policies.match` once a finding's class is known; a match turns the class into
:attr:`~xamt.findings.FindingClass.POLICY` and records the policy's name, reason and the class the
evidence gave.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import numpy as np

from xamt.errors import DataFileError
from xamt.exec.normalise import leaves
from xamt.findings import FindingClass
from xamt.inputs import materialise
from xamt.triage.dedup import TRIGGERS

__all__ = ["Policy", "Policies", "load_policies", "computation_dtype", "narrowed", "requested_dtypes", "at_edge",
           "EDGE_FACTOR", "undefined_everywhere", "widths_elsewhere", "beyond_seed", "near_subnormal",
           "overflows_toward", "own_check_of", "ill_conditioned", "unseen_shapes", "rounded_to_integers"]

#: float dtypes from the lowest precision up: the computation ran in the first one present
_PRECISION_ORDER = ("float8", "bfloat16", "float16", "complex32", "float32", "complex64",
                    "float64", "complex128", "longdouble", "clongdouble")
#: the policy fields whose value the evidence's must be among, and the true/false ones
_LISTS = ("libraries", "computation", "triggers", "categories", "canonical", "relations")
_FLAGS = ("narrowed", "edge", "precondition", "shared", "undefined", "scalar", "beyond_seed", "tiny",
          "own_float64", "own_check", "ill_conditioned", "unseen_shapes", "rounded_to_integers",
          "documented_domain", "singular")
#: a list field's evidence key: the policy names the set, the evidence one value
_EVIDENCE = {"libraries": "library", "triggers": "trigger", "categories": "category", "relations": "relation"}
_KEYS = {"name", "classes", "reason", "rule", *_LISTS, *_FLAGS}
#: "at the edge of the float range": within this factor of the dtype's largest finite value,
#: where a sum of a few hundred elements, or one step of a recurrence, overflows
EDGE_FACTOR = 2.0 ** 10
_BFLOAT16_MAX = 3.3895313892515355e38
#: the largest input :func:`ill_conditioned` takes singular values of
_SVD_LIMIT = 1 << 16


def computation_dtype(dtypes: Iterable[np.dtype | str]) -> str | None:
    """The lowest-precision float dtype among ``dtypes`` (by name), None when none is a float."""
    names = [np.dtype(d).name if not isinstance(d, str) else d for d in dtypes]
    best: tuple[int, str] | None = None
    for n in names:
        rank = next((i for i, p in enumerate(_PRECISION_ORDER) if n.startswith(p)), None)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, n)
    return best[1] if best else None


@dataclass(frozen=True)
class Policy:
    """One documented policy (see ``xamt/data/policies.toml``)."""

    name: str
    classes: frozenset[str]
    reason: str
    libraries: frozenset[str] | None = None
    computation: frozenset[str] | None = None
    triggers: frozenset[str] | None = None
    categories: frozenset[str] | None = None
    canonical: frozenset[str] | None = None
    #: the group's relation must be one of these (``inferred``, ``cross_library`` ...)
    relations: frozenset[str] | None = None
    #: True: only where the outlier returned a narrower dtype than the widest input of its kind
    narrowed: bool | None = None
    #: True: only where an input float is at the edge of its dtype's range (:func:`at_edge`)
    edge: bool | None = None
    #: True: only where the outlier refused the input with a message stating the precondition
    #: it breaks (``error_kinds.toml``'s ``[[precondition]]``)
    precondition: bool | None = None
    #: True: only where a member of another implementation, in a float dtype, is off the float64
    #: reference too (the loss is the computation's precision, shared)
    shared: bool | None = None
    #: True: only where every member that returns gives nothing but NaN (the others refusing):
    #: no member has a value there (:func:`undefined_everywhere`)
    undefined: bool | None = None
    #: a regular expression the refusal rule the finding is keyed by must match (a validation
    #: finding's "returns where others raise | <their error>")
    rule: str | None = None
    #: True: only where a numeric input array is 0-d
    scalar: bool | None = None
    #: True: only where an input array has a higher rank than the same slot of the group's seed,
    #: the input its relation was validated on (:func:`beyond_seed`)
    beyond_seed: bool | None = None
    #: True: only where an input float is nonzero and near the subnormal range
    #: (:func:`near_subnormal`)
    tiny: bool | None = None
    #: True: only where the outlier's own float64 evaluation gives the reference's result (the
    #: reference is that evaluation, or triage ran it): its lower precision lost the result
    own_float64: bool | None = None
    #: True: only where the outlier's refusal came from a ``raise`` statement in the body of the
    #: API's own function (:func:`xamt.exec.member.raised_at`): a check it makes on purpose
    own_check: bool | None = None
    #: True: only where the first matrix input is numerically rank-deficient or has a condition
    #: number of at least 1/sqrt(eps) of the computation dtype (:func:`ill_conditioned`)
    ill_conditioned: bool | None = None
    #: True: only where two input arrays that have one shape in every seed of the group (the
    #: inputs it was validated on) have two here (:func:`unseen_shapes`)
    unseen_shapes: bool | None = None
    #: True: only where the outlier's integer result is the reference's float result rounded to
    #: the integer input's dtype (:func:`rounded_to_integers`)
    rounded_to_integers: bool | None = None
    #: True: only where the input breaks an argument domain the documentation states
    #: (``triage.toml``'s ``[[domain]]``: q in [0, 1], a scale > 0); False: only where none
    #: does, and the domain is the reference's NaN alone
    documented_domain: bool | None = None
    #: True: only where the first matrix input is singular in the computation dtype, its
    #: smallest singular value at most eps times its largest (:func:`singular`)
    singular: bool | None = None

    def matches(self, finding_class: FindingClass, evidence: Mapping[str, Any]) -> bool:
        """Whether a finding of ``finding_class`` with this ``evidence`` falls under the policy:
        each of :data:`_LISTS` the policy sets holds the evidence's value, each of
        :data:`_FLAGS` it sets equals the evidence's (absent: False), and :attr:`rule` matches
        the evidence's ``rule``."""
        if finding_class.value not in self.classes:
            return False
        if any(getattr(self, k) is not None and evidence.get(k) not in getattr(self, k) for k in _LISTS):
            return False
        if any(getattr(self, k) is not None and getattr(self, k) != bool(evidence.get(k)) for k in _FLAGS):
            return False
        return self.rule is None or re.search(self.rule, evidence.get("rule") or "") is not None


@dataclass(frozen=True)
class Policies:
    """The policies of one data file, in order."""

    items: tuple[Policy, ...]

    def match(self, finding_class: FindingClass, *, group: Any, **evidence: Any) -> Policy | None:
        """The first policy the evidence matches, or None. ``evidence``: ``library``,
        ``computation``, ``trigger``, ``rule`` and the flags of :data:`_FLAGS` (absent: False);
        the group gives its category, canonical name and relation."""
        given = {**evidence, "category": getattr(group, "category", None),
                 "canonical": getattr(group, "canonical", None), "relation": getattr(group, "relation", None)}
        keyed = {k: given.get(_EVIDENCE.get(k, k)) for k in _LISTS}
        return next((p for p in self.items if p.matches(finding_class, {**given, **keyed})), None)


def narrowed(inputs: Iterable[np.dtype], outputs: Iterable[np.dtype], values: Iterable[Any] = ()) -> bool:
    """Whether a 32-bit computation could not hold what it was given: some output is a narrower
    integer or float than the widest input of its kind (int64 in, int32 out), or an integer
    array of ``values`` (the input arrays) holds a value beyond 32 bits (an int64 ``-2**63``
    that a 32-bit computation wraps, whatever dtype it returns: ``ldexp``'s exponent), or holds
    an integer that a float output narrower than float64 cannot hold exactly where the inputs are
    integers only (JAX's cholesky of a uint32 matrix of 4e9 entries computes in float32, where
    numpy's promotion gives float64)."""
    inputs, outputs = list(inputs), list(outputs)
    # integers only in, a narrow float out: the computation converted the integers to that
    # float, which holds integers exactly up to 2 ** (its mantissa bits + 1)
    narrow = [np.empty(0, dt).real.dtype for dt in outputs if dt.kind in "fc" or dt.name == "bfloat16"]
    narrow = [dt for dt in narrow if dt.itemsize < 8]
    exact = None
    if narrow and not any(dt.kind in "fc" or dt.name == "bfloat16" for dt in inputs):
        import ml_dtypes  # its finfo knows bfloat16 as well as numpy's floats

        exact = min(2 ** (ml_dtypes.finfo(dt).nmant + 1) for dt in narrow)
    for v in values:
        if isinstance(v, np.ndarray) and v.dtype.kind in "iu" and v.size:
            if v.dtype.itemsize > 4 and (int(v.min()) < -2**31 or int(v.max()) >= 2**32
                                         or (v.dtype.kind == "i" and int(v.max()) >= 2**31)):
                return True
            if exact is not None and max(abs(int(v.min())), abs(int(v.max()))) > exact:
                return True
    widest: dict[str, int] = {}
    for dt in inputs:
        kind = "i" if dt.kind in "iu" else "f" if dt.kind in "fc" else None
        if kind:
            size = dt.itemsize // (2 if dt.kind == "c" else 1)
            widest[kind] = max(widest.get(kind, 0), size)
    for dt in outputs:
        kind = "i" if dt.kind in "iu" else "f" if dt.kind in "fc" else None
        if kind and kind in widest and dt.itemsize // (2 if dt.kind == "c" else 1) < widest[kind]:
            return True
    return False


def widths_elsewhere(inputs: Iterable[np.dtype], others: Iterable[Any]) -> list[np.dtype]:
    """The float dtypes the other members' outputs ``others`` hold, where no input dtype is a
    float: with only integers or numbers in, what another library computed in says how wide the
    result could be (scipy's ``invhilbert(n)`` in float64 beside JAX's float32). For
    :func:`narrowed`, they count as inputs of their kind; with a float input, none."""
    if any(np.dtype(dt).kind in "fc" for dt in inputs):
        return []
    return [a.dtype for out in others for a in leaves(out)
            if isinstance(a, np.ndarray) and a.dtype.kind in "fc"]


def _seed_shapes(group: Any) -> list[dict[int, tuple[int, ...]]]:
    """The shape of each array slot in each seed of ``group`` (the inputs it was validated on);
    empty where the group has no seed, or one no longer materialises (it says nothing then)."""
    shapes = []
    for raw in group.seed_inputs() if hasattr(group, "seed_inputs") else []:
        try:
            seed = materialise(raw)
        except Exception:
            return []
        shapes.append({slot: v.shape for slot, v in seed.items() if isinstance(v, np.ndarray)})
    return shapes


def beyond_seed(group: Any, values: Mapping[int, Any]) -> bool:
    """Whether an array of slot ``values`` has a higher rank than the same slot of ``group``'s
    first seed, the input the group was validated on (``scipy.ndimage.convolve1d`` given 4-D
    weights where the seed's were 1-D). False where the group has no seed."""
    seeds = _seed_shapes(group)
    return bool(seeds) and any(isinstance(v, np.ndarray) and slot in seeds[0] and v.ndim > len(seeds[0][slot])
                               for slot, v in values.items())


def unseen_shapes(group: Any, values: Mapping[int, Any]) -> bool:
    """Whether two input arrays of slot ``values`` differ in shape where they have one shape in
    every seed of ``group`` (the inputs its members were validated to agree on): a condition of
    shape (3,) beside an array of shape (3, 4), where ``numpy.extract`` flattens both and
    ``tf.boolean_mask`` masks the first axis, is a call the group never saw. False where the
    group has no seed."""
    seeds = _seed_shapes(group)
    if not seeds:
        return False
    equal = set.intersection(*({(a, b) for a in seed for b in seed if a < b and seed[a] == seed[b]}
                               for seed in seeds))
    return any(isinstance(values.get(a), np.ndarray) and isinstance(values.get(b), np.ndarray)
               and values[a].shape != values[b].shape for a, b in equal)


def rounded_to_integers(out: Any, ref: Any, inputs: Iterable[Any]) -> bool:
    """Whether the outlier's result ``out`` is the float reference ``ref`` rounded to an integer
    dtype of the ``inputs``: in each leaf where ``out`` is an integer array of an input's dtype
    and ``ref`` a float array of its shape (at least one), ``ref`` is finite and ``out`` equals
    it rounded to nearest (either tie rule), truncated or floored, clipped to the dtype's range.
    Keras' image resize of an int16 image rounds its interpolation to int16 where
    ``tf.image.resize`` returns float32: which dtype the result takes, not its value, differs."""
    in_ints = {v.dtype for v in inputs if isinstance(v, np.ndarray) and v.dtype.kind in "iu"}
    out_leaves, ref_leaves = leaves(out), leaves(ref)
    if not in_ints or len(out_leaves) != len(ref_leaves):
        return False
    seen = False
    for a, r in zip(out_leaves, ref_leaves):
        if not (isinstance(a, np.ndarray) and isinstance(r, np.ndarray) and a.dtype in in_ints
                and r.dtype.kind == "f" and a.shape == r.shape):
            continue
        x = r.astype(np.float64)
        if not np.isfinite(x).all():
            return False
        info = np.iinfo(a.dtype)
        got = a.astype(np.float64)
        with np.errstate(all="ignore"):
            ways = (np.rint(x), np.sign(x) * np.floor(np.abs(x) + 0.5), np.trunc(x), np.floor(x))
        if not any(np.array_equal(np.clip(w, info.min, info.max), got) for w in ways):
            return False
        seen = True
    return seen


def requested_dtypes(values: Mapping[Any, Any]) -> list[np.dtype]:
    """The dtype arguments among slot ``values`` (``astype(x, int64)``): for :func:`narrowed` they
    count as inputs of their kind, since asking for int64 and getting int32 is a narrowing too."""
    return [v for v in values.values() if isinstance(v, np.dtype)]


def at_edge(values: Iterable[Any], dtype: Any = None) -> bool:
    """Whether a float array of ``values`` holds a finite value within :data:`EDGE_FACTOR` of
    the largest finite value of ``dtype`` (default: the array's own), or beyond it: a float64
    reference result of 2e38 is at the edge of float32 (3.4e38), one of 1e232 past it."""
    for v, x in _magnitudes(values):
        name = np.dtype(dtype).name if dtype is not None else v.dtype.name
        base = {"complex64": "float32", "complex128": "float64"}.get(name, name)
        top = _BFLOAT16_MAX if base == "bfloat16" else float(np.finfo(base).max)
        if (np.isfinite(x) & (x >= top / EDGE_FACTOR)).any():
            return True
    return False


def _magnitudes(values: Iterable[Any]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(array, |part| in float64)`` for each non-empty float array of ``values`` (bfloat16
    included), a complex one's real and imaginary parts apart."""
    for v in values:
        if not (isinstance(v, np.ndarray) and v.size and (v.dtype.kind in "fc" or v.dtype.name == "bfloat16")):
            continue
        with np.errstate(all="ignore"):
            for p in ((v.real, v.imag) if v.dtype.kind == "c" else (v,)):
                yield v, np.abs(p.astype(np.float64))


def overflows_toward(out: Any, ref: Any) -> bool:
    """Whether the float array ``out`` is infinite where the float64 ``ref`` is finite, and at
    each such element with ``ref``'s own nonzero sign, and equal to ``ref`` (within a
    thousandth) wherever both are finite: an intermediate overflowed on the way to a result of
    that sign, the way IEEE arithmetic in ``out``'s dtype does, and nothing else differs. Not
    where the true result is 0 or of the other sign (JAX's pareto.pdf(2, 1e38) is inf where
    the result is 0: a bug)."""
    if not (isinstance(out, np.ndarray) and isinstance(ref, np.ndarray) and out.shape == ref.shape
            and out.dtype.kind == "f" and ref.dtype.kind == "f"):
        return False
    o, r = out.astype(np.float64), ref.astype(np.float64)
    with np.errstate(all="ignore"):
        over = np.isinf(o) & np.isfinite(r)
        if not over.any() or not (np.sign(o[over]) == np.sign(r[over])).all() or (r[over] == 0).any():
            return False
        rest = ~over
        return bool(np.allclose(o[rest], r[rest], rtol=1e-3, atol=0.0, equal_nan=True))


def near_subnormal(values: Iterable[Any]) -> bool:
    """Whether a float array of ``values`` holds a nonzero finite element smaller in magnitude
    than its dtype's smallest normal times ``2**(mantissa bits + 1)`` (about 2e-31 in float32):
    its product with any number below one ulp of 1 is subnormal, and so are quotients and
    halvings of it near the smallest normal (JAX's chi2.logcdf at x = 1.2e-38 halves x first)."""
    for v, x in _magnitudes(values):
        if v.dtype.kind not in "fc":
            continue  # bfloat16: numpy has no finfo for it
        info = np.finfo(v.dtype)
        if ((x > 0) & (x < float(info.tiny) * 2.0 ** (info.nmant + 1))).any():
            return True
    return False


def _first_matrix(values: Mapping[int, Any]) -> np.ndarray | None:
    """The first finite input array of ``values`` (by slot) with two or more dimensions, a matrix
    or a stack of them, as float64 (complex128), or None: none, or past :data:`_SVD_LIMIT`
    elements (every candidate asks; a minimised input is small), or holding NaN or inf (the
    non-finite policies speak for those)."""
    first = next((a for k in sorted(values) for a in (values[k] if isinstance(values[k], list) else [values[k]])
                  if isinstance(a, np.ndarray) and a.ndim >= 2 and a.dtype.kind in "fciu"), None)
    if first is None or first.size == 0 or first.size > _SVD_LIMIT:
        return None
    m = first.astype(np.complex128 if first.dtype.kind == "c" else np.float64)
    return m if np.isfinite(m).all() else None


def matrix_flags(values: Mapping[int, Any], computation: str | None) -> tuple[bool, bool]:
    """``(singular, ill_conditioned)`` of the first matrix input (:func:`_first_matrix`), from
    one SVD, against the ``computation`` dtype's eps (float64 where none): singular where its
    smallest singular value is at most eps times its largest (a linear system on it has no
    unique solution: a triangular factor with a zero on its diagonal), ill-conditioned where it
    is at most sqrt(eps) times it (a 2-norm condition number of at least ``1/sqrt(eps)``, where
    solvers that form the normal equations, ``A^T A``, document that they lose the solution).
    Both False for a matrix holding NaN or inf (the non-finite policies speak for those), where
    there is no such array, and past :data:`_SVD_LIMIT` elements."""
    m = _first_matrix(values)
    if m is None:
        return False, False
    try:
        s = np.linalg.svd(m, compute_uv=False)
    except np.linalg.LinAlgError:  # no convergence: nothing to say
        return False, False
    largest, smallest = s.max(axis=-1), s.min(axis=-1)
    try:
        eps = float(np.finfo(computation or np.float64).eps)
    except (TypeError, ValueError):
        eps = float(np.finfo(np.float64).eps)
    return (bool(((largest == 0) | (smallest <= largest * eps)).any()),
            bool(((largest == 0) | (smallest <= largest * np.sqrt(eps))).any()))


def singular(values: Mapping[int, Any], computation: str | None) -> bool:
    """Whether the first matrix input is singular in the ``computation`` dtype (:func:`matrix_flags`)."""
    return matrix_flags(values, computation)[0]


def ill_conditioned(values: Mapping[int, Any], computation: str | None) -> bool:
    """Whether the first matrix input is numerically rank-deficient or ill-conditioned in the
    ``computation`` dtype (:func:`matrix_flags`)."""
    return matrix_flags(values, computation)[1]


def own_check_of(member: Any, raised_at: str | None) -> bool:
    """Whether a refusal of ``member`` (its :func:`~xamt.exec.member.raised_at`) came from a
    ``raise`` statement in the body of the API's own function, the last part of its qualified
    name: ``numpy.split`` raising "array split does not result in an equal division" in ``split``,
    ``scipy.linalg.ordqz`` "Reordering of (A, B) failed" in ``ordqz``. Not an error from what the
    function called (``np.arange`` in scipy's entropy sum, a root finder that cannot continue, a
    division by zero)."""
    if not raised_at:
        return False
    name = str(getattr(member, "qualname", "")).rsplit(".", 1)[-1]
    return bool(name) and raised_at == f"{name}:raise"


def undefined_everywhere(outputs: Iterable[Any]) -> bool:
    """Whether each of ``outputs`` (the returning members' results, at least one) holds float
    arrays only, none empty, every element NaN: where the others refuse the input, no member
    gives it a value (``numpy.fft.rfftfreq(0)`` divides by zero where JAX's and torch's return
    ``[nan]``)."""
    outputs = list(outputs)
    if not outputs:
        return False
    for out in outputs:
        arrays = leaves(out)
        if not arrays or not all(isinstance(a, np.ndarray) and a.size and a.dtype.kind in "fc" for a in arrays):
            return False
        with np.errstate(invalid="ignore"):
            if not all(np.isnan(a).all() for a in arrays):
                return False
    return True


def load_policies(path: str | Path | None = None) -> Policies:
    """The policies of ``policies.toml`` (the packaged one, or ``path``).

    Raises:
        DataFileError: the file is unreadable, a policy lacks a name, classes or reason, names
            an unknown class or key, or gives a list field as something else than strings.
    """
    from xamt.datafiles import read_toml

    data, where, _ = read_toml("policies.toml", path)
    known = {c.value for c in FindingClass} - {FindingClass.POLICY.value}
    items = []
    for i, raw in enumerate(data.get("policy", [])):
        at = f"{where}: policy #{i + 1}"
        if not isinstance(raw, dict):
            raise DataFileError(f"{at} must be a table")
        unknown = set(raw) - _KEYS
        if unknown:
            raise DataFileError(f"{at}: unknown key(s) {sorted(unknown)}; known: {sorted(_KEYS)}")
        for key in ("name", "reason"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise DataFileError(f"{at}: {key!r} must be a non-empty string")
        lists = {}
        for key in ("classes", *_LISTS):
            value = raw.get(key)
            if value is None:
                continue
            if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
                raise DataFileError(f"{at} ({raw['name']}): {key!r} must be a non-empty list of strings")
            lists[key] = frozenset(value)
        for flag in _FLAGS:
            if flag in raw and not isinstance(raw[flag], bool):
                raise DataFileError(f"{at} ({raw['name']}): {flag!r} must be true or false")
        rule = raw.get("rule")
        if rule is not None:
            try:
                re.compile(rule)
            except (re.error, TypeError) as exc:
                raise DataFileError(f"{at} ({raw['name']}): 'rule' must be a regular expression: {exc}") from None
        if "classes" not in lists:
            raise DataFileError(f"{at} ({raw['name']}): 'classes' is required")
        bad = sorted(lists["classes"] - known)
        if bad:
            raise DataFileError(f"{at} ({raw['name']}): unknown class(es) {bad}; known: {sorted(known)}")
        bad = sorted(lists.get("triggers", frozenset()) - set(TRIGGERS))
        if bad:
            raise DataFileError(f"{at} ({raw['name']}): unknown trigger(s) {bad}; known: {list(TRIGGERS)}")
        items.append(Policy(name=raw["name"], reason=" ".join(raw["reason"].split()), rule=rule,
                            **{flag: raw.get(flag) for flag in _FLAGS}, **lists))
    return Policies(tuple(items))
