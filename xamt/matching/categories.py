"""Category inference (Xamt++'s ``infer_category``, driven by ``categories.toml``)."""
from __future__ import annotations

import re

from xamt.matching.data import MatchingData

__all__ = ["infer_category", "compatible", "partition"]


def infer_category(canonical: str, namespace: str, data: MatchingData,
                   member: str | None = None) -> str:
    """Category of an API from its canonical name and the namespace it was mined from;
    ``member`` (the API's own name in that namespace, ``rvs``) selects ``[[member]]`` rules."""
    ns_tokens = set(re.split(r"[._]", namespace.lower()))
    if member is not None:
        # a method that says what it does whatever its object is called (a distribution's
        # sampler: scipy.stats.vonmises.rvs), before the namespace decides
        for names, tokens, category in data.category_members:
            if member in names and tokens <= ns_tokens:
                return category
    for tokens, category in data.category_namespaces_first:
        if tokens <= ns_tokens:
            return category
    for pattern, category in data.category_overrides:
        if pattern.search(canonical):
            return category
    for tokens, category in data.category_namespaces:
        if tokens <= ns_tokens:
            return category
    name_tokens = set(canonical.split("_")) | {canonical}
    for category, terms in data.category_terms:
        if name_tokens & terms:
            return category
    return "generic"


def partition(category: str, data: MatchingData) -> str:
    """Grouping partition: a hard category is its own partition, soft ones share ``core``."""
    return category if category in data.hard_categories else "core"


def compatible(a: str, b: str, data: MatchingData) -> bool:
    return partition(a, data) == partition(b, data)
