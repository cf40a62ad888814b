"""What a docstring says about other APIs: the names it mentions (``jnp.cumsum``), the ones it
declares itself equivalent to (``JAX implementation of numpy.sum``, ``See torch.sum``), the
target of ``Alias for X``, and whether it is deprecated.

The library prefixes these patterns know come from the adapters (``doc_prefixes``,
``doc_possessives``) through :class:`DocPatterns`: no library is named here.
"""
from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from xamt.libraries.registry import Registry

__all__ = ["DocPatterns", "default_doc_patterns", "getdoc", "doc_body", "doc_references",
           "is_deprecated"]


def _alternatives(names: Iterable[str]) -> str:
    """``names`` as a regex alternation, longest first; one that never matches when empty."""
    ordered = sorted(names, key=lambda n: (-len(n), n))
    return "|".join(re.escape(n) for n in ordered) if ordered else "(?!)"


@dataclass(frozen=True)
class DocPatterns:
    """The patterns that find API names in docstrings, built from the adapters of a registry
    (:meth:`of`): the prefixes are the libraries' ``doc_prefixes`` (``jnp.cumsum``), the
    possessives their ``doc_possessives`` (``NumPy's `sum```). No library is named here, so a
    new adapter's prefixes are read in every library's documentation."""

    #: prefix -> namespace (``jnp`` -> ``jax.numpy``)
    prefixes: Mapping[str, str]
    #: library name in prose -> namespace (``NumPy`` -> ``numpy``)
    possessives: Mapping[str, str]
    #: any prefixed name (``jnp.cumsum``, not ``x.jnp.cumsum``)
    ref: re.Pattern[str]
    #: a docstring that is only a pointer: "See :func:`torch.sum`" (torch's tensor methods)
    see: re.Pattern[str]
    #: "Alias for :func:`torch.abs`"
    alias: re.Pattern[str]
    #: a declared equivalence: "JAX implementation of numpy.sum", "same as tf.math.add"
    equiv: re.Pattern[str]
    #: "TensorFlow variant of NumPy's `sum`"
    possessive: re.Pattern[str]

    @classmethod
    def of(cls, registry: Registry) -> "DocPatterns":
        """The patterns for the libraries of ``registry``."""
        prefixes, possessives = registry.doc_prefixes(), registry.doc_possessives()
        p = _alternatives(prefixes)
        return cls(
            prefixes=prefixes, possessives=possessives,
            ref=re.compile(r"(?<![\w.])(" + p + r")\.([A-Za-z_][\w.]*[A-Za-z0-9_])"),
            see=re.compile(r"^\s*See\s+(?::\w+:)?`*~?((?:" + p + r")\.[\w.]*\w)"),
            alias=re.compile(
                r"\b(?:an\s+)?alias\s+(?:for|of)\s+(?::\w+:)?`*~?((?:" + p + r")\.[\w.]*\w)",
                re.IGNORECASE),
            equiv=re.compile(
                r"(?:implementation of|variant of|equivalent (?:to|of)|same as|alias (?:for|of)|"
                r"wrapper (?:for|around)|counterpart (?:of|to))\s+(?::\w+:)?`*~?"
                r"((?:" + p + r")\.[\w.]*\w)",
                re.IGNORECASE),
            possessive=re.compile(r"(" + _alternatives(possessives) + r")'s\s+`+(\w+)`+"),
        )

    def qualify(self, dotted: str) -> str:
        """``jnp.cumsum`` -> ``jax.numpy.cumsum``. The alias and equivalence patterns ignore
        case ("Alias for NP.sum"), so a prefix is also looked up case-folded."""
        prefix, _, rest = dotted.partition(".")
        namespace = self.prefixes.get(prefix)
        if namespace is None:
            namespace = next(v for k, v in self.prefixes.items() if k.lower() == prefix.lower())
        return f"{namespace}.{rest}"


@functools.lru_cache(maxsize=1)
def default_doc_patterns() -> DocPatterns:
    """The patterns of the installed adapters (:class:`Registry` discovers them once)."""
    return DocPatterns.of(Registry())


def getdoc(obj: Any) -> str:
    """``inspect.getdoc(obj)``, or ``""`` when there is none or reading it fails."""
    try:
        doc = inspect.getdoc(obj)
    except Exception:  # objects with exotic __doc__ descriptors
        doc = None
    return doc or ""


def doc_body(doc: str) -> str:
    """The docstring up to its examples (examples mention many unrelated APIs)."""
    cut = len(doc)
    for marker in ("\nExamples", "\nExample:", "\n>>>", "\nExample usage"):
        at = doc.find(marker)
        if at != -1:
            cut = min(cut, at)
    return doc[:cut]


def doc_references(doc: str, own: str,
                   patterns: DocPatterns | None = None) -> tuple[list[str], list[str], str | None]:
    """Names of other APIs a docstring mentions before its examples, the names it declares
    itself equivalent to (``JAX implementation of numpy.sum``, ``TensorFlow variant of NumPy's
    `sum```, ``See torch.sum``), and the target of ``Alias for X``. ``patterns`` default to
    those of the installed adapters."""
    pat = patterns or default_doc_patterns()
    body = doc_body(doc)
    refs: list[str] = []
    for m in pat.ref.finditer(body):
        ref = pat.qualify(m.group(0))
        if ref != own and ref not in refs:
            refs.append(ref)
    equiv: list[str] = []
    head = body[:700]
    for m in pat.equiv.finditer(head):
        ref = pat.qualify(m.group(1))
        if ref != own and ref not in equiv:
            equiv.append(ref)
    # a signature line may come first; look for the pointer in each of the first lines
    for line in head.splitlines()[:6]:
        m = pat.see.match(line)
        if m:
            ref = pat.qualify(m.group(1))
            if ref != own and ref not in equiv:
                equiv.append(ref)
    for m in pat.possessive.finditer(head):
        ref = f"{pat.possessives[m.group(1)]}.{m.group(2)}"
        if ref not in equiv:
            equiv.append(ref)
    alias_of = None
    m = pat.alias.search(head[:400])
    if m:
        alias_of = pat.qualify(m.group(1))
    return refs[:24], equiv[:6], alias_of


def is_deprecated(doc: str) -> bool:
    """True when the docstring's head says the API is deprecated."""
    head = doc[:400].lower()
    return ".. deprecated::" in head or "deprecated" in head.split("\n\n")[0]
