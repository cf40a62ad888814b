"""De-duplication of divergences, before and after triage.

:class:`Candidate` is what the fuzz loop hands to triage; its :attr:`~Candidate.prekey` (group,
signal kind, suspected API, input signature) lets the loop skip a divergence it has seen
before triaging it. After triage a finding is keyed by its **root cause**: the outlier API, the
class and the :func:`trigger`, the kind of input value that sets it off (+inf, a subnormal, an
integer extreme...), or for a status or validation finding the refusal rule
(:func:`finding_signature`). Dtypes, groups and members are occurrences of that one finding
(:meth:`xamt.findings.FindingsStore.file`).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from xamt.findings import FindingClass
from xamt.exec.group import MemberResult
from xamt.oracle import SignalKind

__all__ = ["Candidate", "OUT_OF_DOMAIN", "input_signature", "dominant_dtype", "finding_signature", "trigger",
           "TRIGGERS", "RULE_CLASSES", "load_triage_per_cause", "api_family", "validation_family", "crash_family",
           "cause_cluster", "numeric_arrays", "rule_signature", "Lineage", "load_lineage", "siblings",
           "qualified", "same_cause", "akin", "one_failure", "lineage_names"]

#: classes keyed by the refusal rule their candidate carries, not by the input's values
RULE_CLASSES = (FindingClass.STATUS, FindingClass.VALIDATION)
#: the signature of a validation finding without a refusal rule (a number where the reference
#: returns NaN): one per namespace, whichever out-of-domain value showed it
OUT_OF_DOMAIN = "accepts out-of-domain input"

#: the kinds of input value a finding is keyed by, most telling first: the first that the
#: (minimised) input holds is its trigger. An all-zero array (a zero divisor, log of 0) tells
#: more than a negative number beside it
TRIGGERS = ("nan", "+inf", "-inf", "subnormal", "int-extreme", "large", "empty", "-0", "zero",
            "negative", "ordinary")


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


def numeric_arrays(values: Mapping[int, Any]) -> list[np.ndarray]:
    """The numeric input arrays of ``values`` (a slot's list of arrays flattened)."""
    out: list[np.ndarray] = []
    for v in values.values():
        items = v if isinstance(v, list) else [v]
        out += [a for a in items if isinstance(a, np.ndarray)
                and (a.dtype.kind in "fciu" or a.dtype.name == "bfloat16")]
    return out


def _kinds(a: np.ndarray) -> set[str]:
    """The :data:`TRIGGERS` that array ``a`` holds."""
    if a.size == 0:
        return {"empty"}
    found: set[str] = set()
    if a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)
        if ((a == info.max) | ((a == info.min) & (info.min < 0))).any():
            found.add("int-extreme")
        if (a < 0).any():
            found.add("negative")
        if (a == 0).all():
            found.add("zero")
        return found or {"ordinary"}
    parts = (a.real, a.imag) if a.dtype.kind == "c" else (a,)
    # "large": near the top of the dtype (float16 overflows past 65504) or beyond 1e8
    big = min(1e8, float(np.sqrt(np.finfo(a.dtype).max))) if a.dtype.kind in "fc" else 1e8
    with np.errstate(all="ignore"):
        for p in (np.asarray(p, dtype=np.float64) for p in parts):
            if np.isnan(p).any():
                found.add("nan")
            if (p == np.inf).any():
                found.add("+inf")
            if (p == -np.inf).any():
                found.add("-inf")
            fin = p[np.isfinite(p)]
            if (np.abs(fin) >= big).any():
                found.add("large")
            if ((fin == 0) & np.signbit(fin)).any():
                found.add("-0")
            if (fin < 0).any():
                found.add("negative")
    from xamt.triage.classify import subnormal_mask

    if subnormal_mask(a).any():
        found.add("subnormal")
    if not found and not np.any(a):
        found.add("zero")
    return found or {"ordinary"}


def trigger(values: Mapping[int, Any]) -> str:
    """The kind of input value behind a finding: the first of :data:`TRIGGERS` that any array
    of ``values`` holds (``"ordinary"`` when none is special). Python numbers count as arrays
    of their own type. A finding is one per outlier API, class and trigger: the same cause
    seen in float32 and float64, or in two groups, is one finding."""
    found: set[str] = set()
    arrays = numeric_arrays(values)
    for v in values.values():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            arrays.append(np.asarray(v))
    for a in arrays:
        found |= _kinds(a)
    return next((t for t in TRIGGERS if t in found), "ordinary")


def finding_signature(finding_class: FindingClass, values: Mapping[int, Any],
                      rule: str = "", status: str | None = None, member: Any = None) -> str:
    """The root-cause part of a finding's key, on the (minimised) input ``values``: the
    status candidate's refusal ``rule`` for :data:`RULE_CLASSES` (one rule, one finding,
    whatever the input); :data:`OUT_OF_DOMAIN` for a validation finding without one; for a
    crash, how the call died (``timeout``: an API that crashes does so whatever special values
    the minimiser left in); else the :func:`trigger`. ``member``: the outlier, whose own name and
    argument names leave the rule (:func:`rule_signature`)."""
    if finding_class in RULE_CLASSES and rule:
        return rule_signature(rule, member) if member is not None else rule
    if finding_class == FindingClass.VALIDATION:
        # a number where the reference says NaN (outside the domain): whether the namespace
        # checks its arguments is one cause (:func:`validation_family`), whatever value kind
        # (a negative scale, a huge shape, -inf) showed it; the others are its occurrences
        return OUT_OF_DOMAIN
    if finding_class == FindingClass.CRASH and status:
        return status
    return trigger(values)


def load_triage_per_cause(path: Any = None) -> int:
    """``[dedup] triage_per_cause`` of ``triage.toml``: how many candidates of one suspected
    API, signal and trigger go to triage.

    Raises:
        DataFileError: the file is unreadable or the value is not a positive integer.
    """
    from xamt.datafiles import read_toml
    from xamt.errors import DataFileError

    data, where, _ = read_toml("triage.toml", path)
    n = data.get("dedup", {}).get("triage_per_cause")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise DataFileError(f"{where}: [dedup] triage_per_cause must be a positive integer, got {n!r}")
    return n


@dataclass(frozen=True)
class Lineage:
    """How findings of different APIs are told to share one root cause (``triage.toml``
    [lineage]): the word pairs that make two API names siblings (:func:`siblings`), and per
    library the evaluator that runs a call's Python without executing it
    (:meth:`GroupExecutor.footprint <xamt.exec.group.GroupExecutor.footprint>`)."""

    sibling_words: tuple[tuple[str, str], ...] = ()
    trace: Mapping[str, str] = field(default_factory=dict)
    #: sets of triggers one cause shows through alike (NaN and the infinities): a related
    #: finding folds across them (:func:`akin`)
    trigger_kin: tuple[frozenset[str], ...] = ()
    #: pairs of ``"class:signature"`` (or ``"class"``) that one API's findings show for one
    #: failure (a hang and a refusal): :func:`one_failure`
    one_failure: tuple[tuple[str, str], ...] = ()
    #: regular expressions of native functions that run any program or operation (XLA's thunks,
    #: a thread pool, numpy's ufunc dispatch): a hang sampled there names no routine of its own
    dispatch_symbols: tuple[str, ...] = ()

    def routine(self, native: Mapping[str, Any] | None) -> str | None:
        """The native routine a hang spins in (``summary["native"]``, :mod:`sandbox.native`),
        as a family shared by the hangs of every API that reaches it (scipy's obl_ang1 and
        pro_rad1 in one spheroidal solver): ``native:<package>:<symbol>``. None for a loop of
        Python code, code compiled at run time, a system library, a stripped object or a
        :attr:`dispatch_symbols` function."""
        if not native or native.get("python") or not native.get("package") or not native.get("symbol"):
            return None
        symbol = str(native["symbol"])
        if any(re.search(p, symbol) for p in self.dispatch_symbols):
            return None
        return f"native:{native['package']}:{symbol}"


def load_lineage(path: Any = None) -> Lineage:
    """``[lineage]`` of ``triage.toml``.

    Raises:
        DataFileError: ``sibling_words`` is not a list of pairs of distinct non-empty words,
            ``trace`` not a table of ``"module:qualname"`` strings, ``trigger_kin`` not a list
            of lists of two or more :data:`TRIGGERS`, or ``one_failure`` not a list of pairs of
            ``"class"`` or ``"class:signature"`` of two different finding classes, or
            ``dispatch_symbols`` not a list of regular expressions.
    """
    from xamt.datafiles import read_toml
    from xamt.errors import DataFileError

    data, where, _ = read_toml("triage.toml", path)
    table = data.get("lineage", {})
    pairs = table.get("sibling_words", [])
    if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(w, str) and w for w in p) and p[0] != p[1]
            for p in pairs):
        raise DataFileError(f"{where}: [lineage] sibling_words must be a list of pairs of distinct words, "
                            f"got {pairs!r}")
    trace = table.get("trace", {})
    if not isinstance(trace, dict) or not all(isinstance(v, str) and ":" in v for v in trace.values()):
        raise DataFileError(f"{where}: [lineage.trace] maps a library to a 'module:qualname' evaluator, "
                            f"got {trace!r}")
    kin = table.get("trigger_kin", [])
    if not isinstance(kin, list) or not all(
            isinstance(k, list) and len(set(k)) >= 2 and all(t in TRIGGERS for t in k) for k in kin):
        raise DataFileError(f"{where}: [lineage] trigger_kin must be a list of lists of two or more of "
                            f"{', '.join(TRIGGERS)}, got {kin!r}")
    classes = {c.value for c in FindingClass}
    failure = table.get("one_failure", [])
    if not isinstance(failure, list) or not all(
            isinstance(p, list) and len(p) == 2
            and all(isinstance(x, str) and x.partition(":")[0] in classes for x in p)
            and p[0].partition(":")[0] != p[1].partition(":")[0] for p in failure):
        raise DataFileError(f"{where}: [lineage] one_failure must be a list of pairs of 'class' or 'class:signature' "
                            f"of two different classes ({', '.join(sorted(classes))}), got {failure!r}")
    dispatch = table.get("dispatch_symbols", [])
    if not isinstance(dispatch, list) or not all(isinstance(x, str) and x for x in dispatch):
        raise DataFileError(f"{where}: [lineage] dispatch_symbols must be a list of regular expressions, "
                            f"got {dispatch!r}")
    for pattern in dispatch:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise DataFileError(f"{where}: [lineage] dispatch_symbols: bad regular expression "
                                f"{pattern!r}: {exc}") from None
    return Lineage(tuple((a, b) for a, b in pairs), dict(trace), tuple(frozenset(k) for k in kin),
                   tuple((a, b) for a, b in failure), tuple(dispatch))


def akin(a: str, b: str, kin: Sequence[frozenset[str]] = ()) -> bool:
    """Whether two findings' signatures can be one root cause: the same, or triggers of one set
    of ``kin`` (NaN and +inf spread through one convolution)."""
    return a == b or any(a in k and b in k for k in kin)


@functools.lru_cache(maxsize=8)
def _word_classes(words: tuple[tuple[str, str], ...]) -> tuple[frozenset[str], ...]:
    """The words of ``words``' pairs joined where pairs share a word (min/max, max/maximum and
    min/minimum make one class of four)."""
    classes: list[frozenset[str]] = []
    for pair in words:
        joined = frozenset(pair).union(*(c for c in classes if c & set(pair)))
        classes = [c for c in classes if not c & joined] + [joined]
    return tuple(classes)


def siblings(a: str, b: str, words: Sequence[tuple[str, str]]) -> bool:
    """Whether API names ``a`` and ``b`` differ only in words of one class of ``words``' pairs
    (pairs that share a word join), at one place (``argmin``/``argmax``,
    ``left_shift``/``right_shift``, ``nancumsum``/``nancumprod``, and through max/maximum
    ``max``/``minimum``): a library implements such twins from one template."""
    for words_ in _word_classes(tuple((x, y) for x, y in words)):
        for one in words_:
            start = a.find(one)
            while start >= 0:
                if any(a[:start] + other + a[start + len(one):] == b for other in words_ if other != one):
                    return True
                start = a.find(one, start + 1)
    return False


def one_failure(old: tuple[str, str], new: tuple[str, str], pairs: Sequence[tuple[str, str]] = ()) -> bool:
    """Whether two findings of one API (or of two related ones, :func:`same_cause`), of these
    ``(class, signature)``, are one failure seen in two classes: one of ``pairs``
    (``"crash:timeout"`` and ``"status"``: a hang and a refusal) matches them, either way round."""
    def matches(pattern: str, finding: tuple[str, str]) -> bool:
        cls, _, sig = pattern.partition(":")
        return cls == finding[0] and (not sig or sig == finding[1])

    return any((matches(a, old) and matches(b, new)) or (matches(b, old) and matches(a, new)) for a, b in pairs)


def qualified(a: str, b: str) -> bool:
    """Whether one API name is the other with qualifying words in front, at a word boundary
    (``unsorted_segment_min`` and ``min``, ``approx_top_k`` and ``top_k``): the qualified
    operation is the plain one over segments, approximated, and so on, and runs its kernel.
    The plain name needs three letters or more (``k`` says nothing)."""
    short, long = sorted((a, b), key=len)
    return len(short) >= 3 and long.endswith("_" + short)


def same_cause(old: Mapping[str, Any], new: Mapping[str, Any], words: Sequence[tuple[str, str]] = ()) -> bool:
    """Whether two findings of one class and signature, with these lineages (``summary["lineage"]``:
    ``library``, ``kernels``, ``entry``, ``calls`` and :func:`lineage_names`), share one root
    cause: both run on the same kernels (a library's own, XLA for its compiled calls,
    TensorFlow's under Keras) and one's API is the other's or calls it (its function is among the
    other's footprint, :mod:`xamt.exec.footprint`), or, in one library or a library and the one
    whose kernels it runs, is its namesake or sibling (:func:`siblings`) by canonical name, or,
    neither a distribution's method, its qualified form (:func:`qualified`) by canonical name or
    its own (``alias``: ``approx_top_k`` and ``top_k``, canonically ``approx_max_k`` and
    ``topk``). JAX and TensorFlow's compiled calls share XLA but not their front ends: a name
    alone does not relate them. A lineage's ``either`` (the side of a reference no majority
    chose) stands for it too: TensorFlow's compiled approx_max_k, blamed against its eager form,
    and its eager approx_top_k, blamed against JAX's, are one eager top-k's NaN handling."""
    mine, theirs = old.get("either"), new.get("either")
    return (_related(old, new, words) or bool(mine and _related(mine, new, words))
            or bool(theirs and _related(old, theirs, words)))


def _related(old: Mapping[str, Any], new: Mapping[str, Any], words: Sequence[tuple[str, str]]) -> bool:
    """:func:`same_cause` of two lineages, each by its own side alone."""
    kernels = old.get("kernels")
    if not kernels or kernels != new.get("kernels"):
        return False
    for a, b in ((old, new), (new, old)):
        entry = a.get("entry")
        if entry and (entry == b.get("entry") or entry in (b.get("calls") or ())):
            return True
    if old.get("library") != new.get("library") and kernels not in (old.get("library"), new.get("library")):
        return False
    a, b = old.get("name") or "", new.get("name") or ""
    if a and (a == b or siblings(a, b, words)):
        return True
    if old.get("held") or new.get("held"):
        return False
    mine = {n for n in (a, old.get("alias")) if n}
    theirs = {n for n in (b, new.get("alias")) if n}
    return any(qualified(x, y) for x in mine for y in theirs)


def lineage_names(member: Any, adapter: Any = None) -> dict[str, Any]:
    """The names a finding's lineage is compared by (:func:`same_cause`): ``name``, the
    operation's canonical name, and ``alias``, the API's own where it differs (``top_k``,
    canonically ``topk``). A distribution's method (``jax.scipy.stats.t.pdf``, canonically
    ``t_pdf``) is ``held`` and has no alias: its own name is every distribution's (``pdf``), and
    the words in front of its canonical name name the distribution, not a qualified operation
    (``poisson_entropy`` is no form of ``scipy.special.entropy``)."""
    own = getattr(member, "qualname", "").rpartition(".")[2]
    name = getattr(member, "canonical", "") or own
    if _holder(member, adapter):
        return {"name": name, "held": True}
    return {"name": name, **({"alias": own} if own != name else {})}


def _holder(member: Any, adapter: Any) -> str | None:
    """The distribution an API computes for (a qualified parent such as ``scipy.stats.gamma``, or
    a constructed class outside the adapter's modules), or None for a plain function."""
    parent = getattr(member, "qualname", "").rpartition(".")[0]
    qualified = getattr(adapter, "qualified_parents", ()) or ()
    modules = set(getattr(adapter, "namespaces", ()) or ())
    if parent and (parent.rpartition(".")[0] in qualified
                   or (getattr(member, "call", "") == "constructed" and parent not in modules)):
        return parent
    return None


def _family(member: Any, base: str) -> str:
    """``library:base``, apart when the call is compiled (an XLA bug is not the kernel's)."""
    compiled = " [compiled]" if getattr(member, "call", "") == "compiled" else ""
    return f"{getattr(member, 'library', '')}:{base}{compiled}"


def api_family(member: Any, adapter: Any = None) -> str:
    """What findings of one root cause fold under across APIs of one library: the distribution
    an API computes for (``scipy.stats.gamma`` for its ``pdf`` and ``logpdf``, a constructed
    ``torch.distributions.Exponential`` for its ``cdf`` and ``icdf``), else the operation's
    canonical name (``torch.lcm``, ``torch.Tensor.lcm`` and ``torch.Tensor.lcm_`` are ``lcm``);
    with the library, and apart when the call is compiled (an XLA bug is not the kernel's)."""
    base = _holder(member, adapter) or getattr(member, "canonical", None) or getattr(member, "qualname", "")
    return _family(member, base)


def crash_family(member: Any, adapter: Any = None) -> str:
    """The family of a *crash* finding (a segfault, an abort, a hang): :func:`api_family`, but a
    plain function's name only up to its first underscore, so siblings fold into one root cause
    (``scipy.special.mathieu_cem``, ``mathieu_modcem1`` and ``mathieu_modsem2`` crash in one
    Fortran routine; the stop-29 audit read five findings of it). The APIs stay its occurrences."""
    holder = _holder(member, adapter)
    if holder:
        return _family(member, holder)
    base = getattr(member, "canonical", None) or getattr(member, "qualname", "").rpartition(".")[2]
    name = base.strip("_") or base
    stem = name.split("_")[0]
    return _family(member, f"{stem}_*" if stem != name else name)


def validation_family(member: Any, adapter: Any = None) -> str:
    """The family of a *validation* finding (the API accepts an input that others refuse): the
    namespace the API lives in (``jax.scipy.stats`` for every jax distribution, ``torch.special``,
    ``torch.distributions`` for a constructed distribution). Whether a namespace checks its
    arguments is that namespace's policy, one cause, whichever of its APIs showed it."""
    qualname = getattr(member, "qualname", "")
    holder = _holder(member, adapter)
    return _family(member, (holder or qualname).rpartition(".")[0] or qualname)


def cause_cluster(finding_class: FindingClass, member: Any, adapter: Any = None, signature: str = "",
                  policy: str | None = None) -> str:
    """The cluster a finding is shown in: findings of different APIs that may share one cause,
    shown together so that a cause seen in several APIs is read once. A documented policy is one
    cluster (every flush-to-zero finding); a crash stays with its family (:func:`crash_family`:
    two routines of a namespace crash for reasons of their own); any other finding folds across
    the APIs of its namespace, compiled calls apart (:func:`validation_family`), by class and
    signature: keras' shrink activations taking NaN to a constant, or XLA's comparisons dropping
    NaN in ``tf.math`` under ``jit_compile``, are one cause seen in several APIs. The key is
    coarse: a cluster can also hold unrelated causes. The findings stay apart, each with its own
    reproducer."""
    if policy:
        return f"policy: {policy}"
    if finding_class == FindingClass.CRASH:
        return f"{finding_class.value}: {crash_family(member, adapter)}: {signature}"
    return f"{finding_class.value}: {validation_family(member, adapter)}: {rule_signature(signature, member)}"


#: an argument's name before the comparison a refusal states (``dfnum <= 0``, ``df <= 0``)
_COMPARED = re.compile(r"\b[A-Za-z_]\w*(\s*(?:<=|>=|==|!=|<|>))")


def rule_signature(signature: str, member: Any) -> str:
    """``signature`` without what names the one API: its own name in a refusal's message
    (``scipy.special/pbvv: (memory allocation failed)``, the same for ``pbdv``) and the argument
    a stated condition is about (jax.random's ``f`` and ``chisquare`` returning where others
    refuse ``dfnum <= 0`` and ``df <= 0``): one namespace's behaviour, seen through two APIs.
    A refusal finding's key holds this form, so the two are one finding with two occurrences
    (two blind reads counted the second as a duplicate of the first)."""
    name = re.sub(r"\d+", "#", getattr(member, "qualname", "").rpartition(".")[2])
    if len(name) >= 3:
        signature = re.sub(rf"(?<![\w#]){re.escape(name)}(?![\w#])", "", signature)
    return _COMPARED.sub(r"<arg>\1", signature)


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

    def cause(self, adapters: Mapping[str, Any] | None = None) -> tuple[str, str, str]:
        """The root cause as the fuzz loop can tell it before triage: the suspected API's
        family (:func:`api_family`, with ``adapters``), signal and the refusal rule (status:
        the family is the namespace, :func:`validation_family`, as for the finding), nothing
        more (a crash) or the :func:`trigger` of the input."""
        m = self.group.members[self.members[self.member]]
        adapter = (adapters or {}).get(m.library)
        kind = str(getattr(self.kind, "value", self.kind))
        if kind == "status":
            return (validation_family(m, adapter), kind, self.signature)
        api = api_family(m, adapter)
        return (api, kind, "" if kind == "crash" else trigger(self.values))

    @property
    def prekey(self) -> tuple[str, str, str, str]:
        """De-duplication key before triage: group, signal kind, suspected API, input signature."""
        api = self.group.members[self.members[self.member]].qualname
        return (self.group.key, str(getattr(self.kind, "value", self.kind)), api, self.signature)
