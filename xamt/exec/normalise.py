"""Output normalisation: reduce each member's result to the part the group compares.

Two stages, both pure numpy (they run in sandbox workers and in the parent alike):

* :func:`to_numpy_tree` — always: library tensors become numpy arrays (through the member's
  adapter), Python and numpy scalars become 0-d arrays, named tuples and lists become tuples,
  dtype objects become their names (``torch.float32`` → ``"float32"``);
* a named normaliser chosen per group (``xamt/data/normalisations.toml``, overridable in
  ``registry_annotations.toml``); names compose with ``|`` (``min_ndim|sort``).

========================  =================================================================
``none``                  as is
``first``                 a tuple's first element (values of sort / topk / mode / max(dim))
``second``                a tuple's second element (the cosine integral C of fresnel's (S, C)
                          next to a function returning C alone)
``min_ndim``              the tuple element of least rank (singular values of svd,
                          eigenvalues of eig/eigh)
``sort``                  sorted along the last axis (complex: by real, then imaginary part)
``sort_flat``             flattened and sorted (unique, roots)
``stack``                 a tuple of equal-shape arrays stacked on a new first axis
``nonzero``               index tuples stacked as columns: ``(N, ndim)``, like ``argwhere``
``complex_pair``          ``(re, im)`` → ``re + 1j*im``
``mean``                  the mean over all elements (losses with different reductions)
``abs``                   absolute values (sign conventions of eigen/singular vectors)
``squeeze``               singleton axes dropped (layout-only differences)
``ravel``                 flattened
``int64``                 integer and boolean arrays as int64 (index dtypes)
``real_if_close``         complex with negligible imaginary part → real
========================  =================================================================

A normaliser never raises on data: when it does not apply (``first`` of a plain array) it
returns its input unchanged.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from xamt.datafiles import read_toml
from xamt.errors import DataFileError

__all__ = ["NORMALISERS", "NotComparable", "to_numpy_tree", "normalise", "check_name",
           "NormalisationRules", "load_normalisation_rules", "leaves", "LITERAL_FORMS"]


class NotComparable(Exception):
    """An output that has no numeric form (an arbitrary object)."""


def _dtype_name(obj: Any) -> str | None:
    """The name of a numpy dtype or scalar type, else None (a library's own dtype objects are
    named by its adapter's ``to_numpy``)."""
    if isinstance(obj, np.dtype):
        return obj.name
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return np.dtype(obj).name
    return None


def to_numpy_tree(value: Any, to_numpy: Callable[[Any], Any] | None = None, depth: int = 0) -> Any:
    """``value`` with every leaf a numpy array, a str or None (see the module docstring).

    ``to_numpy`` is the member library's converter (its adapter's ``to_numpy``). Raises
    :class:`NotComparable` for leaves that have no numeric form.
    """
    if depth > 20:
        raise NotComparable("output nested too deeply")
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "OUSV":
            if value.dtype.kind == "U":
                return value
            raise NotComparable(f"array of dtype {value.dtype}")
        return value
    if isinstance(value, (bool, int, float, complex, np.generic)):
        try:
            return np.asarray(value)
        except OverflowError:
            raise NotComparable(f"integer {value!r} does not fit a numpy integer") from None
    if isinstance(value, (tuple, list)):
        return tuple(to_numpy_tree(v, to_numpy, depth + 1) for v in value)
    if isinstance(value, dict):
        return tuple(to_numpy_tree(value[k], to_numpy, depth + 1) for k in sorted(value, key=str))
    name = _dtype_name(value)
    if name is not None:
        return name
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    converted = to_numpy(value) if to_numpy is not None else np.asarray(value)
    if isinstance(converted, str):  # the adapter named a dtype object of its library
        return converted
    if isinstance(converted, (tuple, list)):
        return tuple(to_numpy_tree(v, to_numpy, depth + 1) for v in converted)
    arr = np.asarray(converted)
    if arr.dtype.kind in "OV":
        raise NotComparable(f"an object of type {type(value).__module__}.{type(value).__qualname__}")
    return arr


def leaves(value: Any) -> list[Any]:
    """The leaves of a normalised output, depth first."""
    if isinstance(value, tuple):
        out: list[Any] = []
        for v in value:
            out.extend(leaves(v))
        return out
    return [value]


# ---------------------------------------------------------------------------------- normalisers

def _first(v: Any) -> Any:
    return v[0] if isinstance(v, tuple) and v else v


def _second(v: Any) -> Any:
    return v[1] if isinstance(v, tuple) and len(v) > 1 else v


def _min_ndim(v: Any) -> Any:
    if not isinstance(v, tuple) or not v:
        return v
    arrays = [x for x in v if isinstance(x, np.ndarray)]
    if not arrays:
        return v
    return min(arrays, key=lambda a: a.ndim)


def _sort_array(a: Any, flat: bool) -> Any:
    if not isinstance(a, np.ndarray) or a.ndim == 0:
        return a
    if flat:
        a = a.reshape(-1)
    if a.dtype.kind == "c":
        order = np.lexsort((a.imag.round(4), a.real.round(4)), axis=-1)
        return np.take_along_axis(a, order, axis=-1)
    return np.sort(a, axis=-1)


def _map(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def apply(v: Any) -> Any:
        if isinstance(v, tuple):
            return tuple(apply(x) for x in v)
        return fn(v)
    return apply


def _stack(v: Any) -> Any:
    if isinstance(v, tuple) and v and all(isinstance(x, np.ndarray) for x in v):
        if len({x.shape for x in v}) == 1:
            return np.stack(v, axis=0)
    return v


def _nonzero(v: Any) -> Any:
    if isinstance(v, tuple) and v and all(isinstance(x, np.ndarray) for x in v):
        if len({x.shape for x in v}) == 1:
            return np.stack(v, axis=-1)
    return v


def _complex_pair(v: Any) -> Any:
    if isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, np.ndarray) for x in v):
        re_, im = v
        if re_.shape == im.shape and re_.dtype.kind in "fiu" and im.dtype.kind in "fiu":
            return re_ + 1j * im
    return v


def _mean(a: Any) -> Any:
    if isinstance(a, np.ndarray) and a.dtype.kind in "biufc" and a.size:
        with np.errstate(all="ignore"):
            return np.asarray(np.mean(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)))
    return a


def _abs(a: Any) -> Any:
    if isinstance(a, np.ndarray) and a.dtype.kind in "iufc":
        return np.abs(a)
    return a


def _int64(a: Any) -> Any:
    if isinstance(a, np.ndarray) and a.dtype.kind in "biu":
        return a.astype(np.int64)
    return a


def _real_if_close(a: Any) -> Any:
    if isinstance(a, np.ndarray) and a.dtype.kind == "c":
        return np.real_if_close(a, tol=1000)
    return a


def _squeeze(a: Any) -> Any:
    return np.squeeze(a) if isinstance(a, np.ndarray) else a


def _ravel(a: Any) -> Any:
    return a.reshape(-1) if isinstance(a, np.ndarray) else a


#: normaliser name → function on a :func:`to_numpy_tree` result
NORMALISERS: dict[str, Callable[[Any], Any]] = {
    "none": lambda v: v,
    "first": _first,
    "second": _second,
    "min_ndim": _min_ndim,
    "sort": _map(lambda a: _sort_array(a, False)),
    "sort_flat": _map(lambda a: _sort_array(a, True)),
    "stack": _stack,
    "nonzero": _nonzero,
    "complex_pair": _complex_pair,
    "mean": _map(_mean),
    "abs": _map(_abs),
    "squeeze": _map(_squeeze),
    "ravel": _map(_ravel),
    "int64": _map(_int64),
    "real_if_close": _map(_real_if_close),
}

#: each normaliser as a numpy expression over ``{v}``, the list of a call's output arrays (a
#: tuple's elements, or the one array: a 1-tuple reads as an array), for literal reproducers
#: (:mod:`xamt.literal`); a normaliser missing here gives its findings the msgpack form
LITERAL_FORMS: dict[str, str] = {
    "none": "{v}",
    "first": "{v}[:1]",
    "second": "({v}[1:2] or {v})",
    "min_ndim": "[min({v}, key=np.ndim)]",
    "sort": "[np.sort(a, axis=-1) if a.ndim and a.dtype.kind != 'c' else a for a in {v}]",
    "sort_flat": "[np.sort(a.ravel()) if a.ndim and a.dtype.kind != 'c' else a for a in {v}]",
    "stack": "([np.stack({v})] if len({v}) > 1 and len({{a.shape for a in {v}}}) == 1 else {v})",
    "nonzero": "([np.stack({v}, axis=-1)] if len({v}) > 1 and len({{a.shape for a in {v}}}) == 1 else {v})",
    "complex_pair": "([{v}[0] + 1j * {v}[1]] if len({v}) == 2 and {v}[0].shape == {v}[1].shape and {v}[0].dtype.kind in 'fiu' and {v}[1].dtype.kind in 'fiu' else {v})",
    "mean": "[np.asarray(np.mean(a.astype(np.complex128 if a.dtype.kind == 'c' else np.float64))) if a.size else a for a in {v}]",
    "abs": "[np.abs(a) if a.dtype.kind in 'iufc' else a for a in {v}]",
    "squeeze": "[np.squeeze(a) for a in {v}]",
    "ravel": "[a.reshape(-1) for a in {v}]",
    "int64": "[a.astype(np.int64) if a.dtype.kind in 'biu' else a for a in {v}]",
    "real_if_close": "[np.real_if_close(a, tol=1000) if a.dtype.kind == 'c' else a for a in {v}]",
}


def check_name(name: str) -> str:
    """Validate a (possibly ``|``-composed) normaliser name; returns it."""
    for part in name.split("|"):
        if part.strip() not in NORMALISERS:
            raise DataFileError(f"unknown normaliser {part.strip()!r} in {name!r}; known: "
                                f"{', '.join(sorted(NORMALISERS))}")
    return name


def normalise(value: Any, name: str | None) -> Any:
    """Apply the (composed) normaliser ``name`` to a :func:`to_numpy_tree` result."""
    if not name or name == "none":
        return value
    for part in name.split("|"):
        value = NORMALISERS[part.strip()](value)
    return value


# ---------------------------------------------------------------------------------- data file

@dataclass
class _Rule:
    canonical: re.Pattern[str] | None
    category: str | None
    qualname: re.Pattern[str] | None
    normalise: str
    fallbacks: tuple[str, ...]
    why: str


class NormalisationRules:
    """``normalisations.toml``: the first matching rule names a group's normaliser."""

    def __init__(self, rules: Sequence[_Rule], default: str, fallbacks: tuple[str, ...], fingerprint: str):
        self.rules = list(rules)
        self.default = default
        self.fallbacks = fallbacks
        self.fingerprint = fingerprint

    def for_group(self, canonical: str, category: str, qualnames: Sequence[str]) -> tuple[str, tuple[str, ...], str]:
        """``(normaliser, fallbacks, why)`` for a group; fallbacks are tried by validation when
        the declared normaliser leaves members with differently structured outputs."""
        for rule in self.rules:
            if rule.canonical is not None and not rule.canonical.search(canonical):
                continue
            if rule.category is not None and rule.category != category:
                continue
            if rule.qualname is not None and not any(rule.qualname.search(q) for q in qualnames):
                continue
            return rule.normalise, rule.fallbacks or self.fallbacks, rule.why
        return self.default, self.fallbacks, "default"


def load_normalisation_rules(path: str | Path | None = None) -> NormalisationRules:
    """Read ``normalisations.toml`` (the packaged one by default).

    Raises:
        DataFileError: missing, not TOML, or a malformed rule.
    """
    data, where, text = read_toml("normalisations.toml", path)
    default = check_name(data.get("default", "none"))
    fallbacks = tuple(check_name(f) for f in data.get("fallbacks", []))
    rules = []
    for i, raw in enumerate(data.get("rule", [])):
        label = f"{where} [[rule]] #{i + 1}"
        extra = set(raw) - {"canonical", "category", "qualname", "normalise", "fallbacks", "why"}
        if extra or "normalise" not in raw or "why" not in raw:
            raise DataFileError(f"{label}: needs 'normalise' and 'why'"
                                + (f"; unknown keys {sorted(extra)}" if extra else ""))
        try:
            rules.append(_Rule(
                canonical=re.compile(raw["canonical"]) if "canonical" in raw else None,
                category=raw.get("category"),
                qualname=re.compile(raw["qualname"]) if "qualname" in raw else None,
                normalise=check_name(raw["normalise"]),
                fallbacks=tuple(check_name(f) for f in raw.get("fallbacks", [])),
                why=raw["why"],
            ))
        except re.error as exc:
            raise DataFileError(f"{label}: bad regular expression: {exc}") from exc
    fingerprint = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
    return NormalisationRules(rules, default, fallbacks, fingerprint)
