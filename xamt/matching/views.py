"""The matcher's view of catalog records: canonical names, category, inputs, doc terms.

:func:`build_views` turns every :class:`~xamt.catalog.ApiRecord` of the given catalogs into an
:class:`ApiView` and indexes them by qualified name (aliases included), so documentation
references (``JAX implementation of numpy.sum``) can be resolved to records.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from xamt.catalog import ApiRecord, LibraryCatalog
from xamt.libraries.registry import Registry
from xamt.matching.categories import infer_category, partition
from xamt.matching.data import MatchingData
from xamt.matching.names import Canonical, canonical_name, snake
from xamt.matching.roles import Input, inputs_of

__all__ = ["ApiView", "ViewIndex", "build_views", "doc_terms", "constructor_inputs"]

_TOKEN = re.compile(r"[a-z][a-z0-9_]{2,}")


def doc_terms(doc: str, data: MatchingData, memo: dict[str, str] | None = None) -> frozenset[str]:
    """Canonicalised content words of the first part of a docstring (Xamt++'s doc terms).

    ``memo`` caches token → canonical name across calls (thousands of docstrings share words).
    """
    memo = {} if memo is None else memo
    text = doc[:1200].lower()
    terms = set()
    for tok in _TOKEN.findall(text):
        if len(tok) < data.min_token or tok in data.stopwords:
            continue
        canon = memo.get(tok)
        if canon is None:
            canon = memo[tok] = canonical_name(tok, data).name
        terms.add(canon)
    return frozenset(terms)


def constructor_inputs(record: ApiRecord, data: MatchingData) -> list[Input]:
    """A constructed API's constructor parameters as inputs after the method's own: keyword-only
    (the constructor is called with keywords), so one flat signature is matched."""
    return [dataclasses.replace(i, kind="keyword_only", position=None)
            for i in inputs_of(record.init_params, data)]


@dataclass
class ApiView:
    """One record as the matcher sees it."""

    record: ApiRecord
    canonical: Canonical
    category: str
    inputs: list[Input]
    overload_inputs: list[list[Input]]
    roles: frozenset[str]
    arity: int | None
    terms: frozenset[str]
    core_roles: frozenset[str] = frozenset()
    core_arity: int | None = None
    inplace_of: str | None = None
    extra_canonicals: list[Canonical] = field(default_factory=list)
    pivot_rank: int = 50
    #: a poorer reference than its library's plain functions (a sub-API such as
    #: ``numpy.add.reduce``, a keyword-only raw op): never the pivot when one of those is there
    secondary: bool = False
    #: the helper a ``filling`` API is called through (its adapter's ``fill_call_ref``)
    via: str | None = None

    @property
    def library(self) -> str:
        return self.record.library

    @property
    def qualname(self) -> str:
        return self.record.qualname

    @property
    def kind(self) -> str:
        return self.record.kind

    def canonicals(self) -> list[Canonical]:
        seen, out = set(), []
        for c in [self.canonical, *self.extra_canonicals]:
            if c.name not in seen:
                seen.add(c.name)
                out.append(c)
        return out

    def candidate_inputs(self) -> list[list[Input]]:
        """Main signature first, then the other overloads."""
        return [self.inputs, *self.overload_inputs]


@dataclass
class ViewIndex:
    """All views, a name index, and documented equivalences that contradict the names
    (``(api, referenced name)``: candidates for documentation bugs)."""

    views: list[ApiView]
    by_name: dict[str, ApiView]
    doc_conflicts: list[tuple[str, str]] = field(default_factory=list)
    #: (library, name) -> view: libraries that share names (keras on each backend) apart
    by_library: dict[tuple[str, str], ApiView] = field(default_factory=dict)

    def resolve(self, name: str, library: str | None = None) -> ApiView | None:
        """The API ``name`` names (in ``library`` when given: the first library's otherwise)."""
        if library is not None:
            return self.by_library.get((library, name))
        return self.by_name.get(name)


def _view(record: ApiRecord, data: MatchingData,
          adapter_info: dict[str, tuple[int, str | None, tuple[str, ...], str | None]],
          memo: dict[str, str]) -> ApiView:
    rank, inplace_suffix, keyword_only, fill_ref = adapter_info.get(record.library,
                                                                     (50, None, (), None))
    raw_name = record.name
    inplace_of = None
    if inplace_suffix and raw_name.endswith(inplace_suffix) and not raw_name.endswith("__"):
        if record.kind == "filling":
            # it fills a tensor its call makes: an API of its own, named without the suffix
            raw_name = raw_name[: -len(inplace_suffix)]
        else:
            inplace_of = raw_name[: -len(inplace_suffix)]
            raw_name = inplace_of
    if record.qualifier:
        raw_name = f"{record.qualifier}_{raw_name}"
    if record.kind == "constructed" and record.owner:
        # a constructed API (Normal(...).log_prob) matches only under the name a data file gives
        # it (distributions.toml: norm_logpdf); otherwise a dotted name no other API can have
        given = data.constructed_names.get(record.qualname)
        canonical = Canonical(given or f"{snake(record.owner or '')}.{snake(raw_name)}")
    else:
        # functions, methods, and constructed APIs named after their class or factory
        # (keras.initializers.HeNormal, jax.nn.initializers.he_normal): their own name
        canonical = canonical_name(raw_name, data, record.library, record.namespace)
    extra: list[Canonical] = []
    for alias in record.aliases:
        if record.qualifier:
            continue  # qualified names stand for their namespace; aliases would lose it
        c = canonical_name(alias, data, record.library)
        if c.name != canonical.name:
            extra.append(c)
    for name in data.also.get(record.qualname, ()):
        extra.append(Canonical(name))
    category = infer_category(canonical.name, record.namespace, data, record.name)
    inputs = inputs_of(record.params, data, receiver=record.receiver, category=category)
    if record.kind == "constructed":
        inputs += constructor_inputs(record, data)
    overloads = [inputs_of(ov, data, receiver=record.receiver, category=category)
                 for ov in record.overloads]
    roles = frozenset(i.role for i in inputs)
    arity = None if record.signature_source == "none" else len(inputs)
    # a required input the plan gives a fixed value (a PRNG key) is not a core input: numpy's
    # stateful beta(a, b) and jax's beta(key, a, b) take the same core inputs
    required = [i for i in inputs if i.required and i.role not in data.role_fixed]
    core_roles = frozenset(i.role for i in required)
    core_arity = None if arity is None else len(required)
    return ApiView(record=record, canonical=canonical, category=category, inputs=inputs,
                   overload_inputs=overloads, roles=roles, arity=arity,
                   terms=doc_terms(record.doc, data, memo), inplace_of=inplace_of,
                   extra_canonicals=extra, pivot_rank=rank, core_roles=core_roles,
                   core_arity=core_arity,
                   secondary=record.sub_api_of is not None or record.namespace in keyword_only,
                   via=fill_ref if record.kind == "filling" else None)


def build_views(catalogs: dict[str, LibraryCatalog], data: MatchingData,
                registry: Registry | None = None) -> ViewIndex:
    """Views of all records, plus doc-declared equivalences as extra canonical names."""
    registry = registry or Registry()
    info = {}
    for lib in catalogs:
        try:
            adapter = registry.get(lib)
            info[lib] = (adapter.pivot_rank, adapter.inplace_suffix,
                         adapter.keyword_only_namespaces, adapter.fill_call_ref)
        except Exception:  # a catalog of a library without adapter: defaults
            info[lib] = (50, None, (), None)
    memo: dict[str, str] = {}
    index_conflicts: list[tuple[str, str]] = []
    views = [_view(rec, data, info, memo) for cat in catalogs.values() for rec in cat.records]
    by_name: dict[str, ApiView] = {}
    by_library: dict[tuple[str, str], ApiView] = {}
    for v in views:
        for n in v.record.names:
            by_name.setdefault(n, v)
            by_library.setdefault((v.library, n), v)
    # "JAX implementation of numpy.sum", "TensorFlow variant of NumPy's `sum`": the API also
    # answers to the referenced API's canonical name (when the categories can meet) -- unless the
    # target library has an API of the referencing API's own name, in which case the docstring
    # is more likely wrong than the name (jax.numpy.fft.rfftfreq's says "numpy.fft.fftfreq").
    names_by_lib: dict[str, set[str]] = {}
    for v in views:
        names_by_lib.setdefault(v.library, set()).add(v.canonical.name)
    for v in views:
        for ref in v.record.doc_equiv:
            target = by_name.get(ref)
            if target is None or target.library == v.library:
                continue
            if partition(target.category, data) != partition(v.category, data):
                continue
            if target.canonical.name == v.canonical.name:
                continue
            if v.canonical.name in names_by_lib.get(target.library, set()):
                index_conflicts.append((v.qualname, ref))
                continue
            v.extra_canonicals.append(target.canonical)
    return ViewIndex(views, by_name, index_conflicts, by_library)
