"""Name canonicalisation (Xamt++'s ``normalize_name``, driven by ``aliases.toml``).

Steps: an API's own name listed for its namespace (``[namespace_aliases]``: ``tf.raw_ops.Mod``
is a truncated remainder, not ``mod``) gives the canonical name directly; otherwise
camelCase → snake_case and lower case; ``conv2_d`` → ``conv2d``; version suffixes
(``_v2``) and listed suffixes dropped; library/namespace prefixes stripped repeatedly; then the
library's own aliases and the shared alias table followed up to ``max_hops`` times.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from xamt.matching.data import MatchingData

__all__ = ["Canonical", "snake", "canonical_name"]

_CAMEL1 = re.compile(r"(.)([A-Z][a-z]+)")
_CAMEL2 = re.compile(r"([a-z0-9])([A-Z])")


def snake(name: str) -> str:
    """``LeakyReLU`` → ``leaky_re_lu``; ``Conv2D`` → ``conv2d``; ``reduce-sum`` → ``reduce_sum``."""
    s = _CAMEL1.sub(r"\1_\2", name)
    s = _CAMEL2.sub(r"\1_\2", s).lower()
    s = re.sub(r"[^a-z0-9]+", "_", s).strip("_")
    s = re.sub(r"(\d)_d\b", r"\1d", s)  # conv2_d -> conv2d
    return s


@dataclass(frozen=True)
class Canonical:
    """A canonical name and whether a lossy alias was followed to reach it."""

    name: str
    lossy: bool = False


def canonical_name(raw: str, data: MatchingData, library: str | None = None,
                   namespace: str | None = None) -> Canonical:
    """Canonical form of one raw API name (the last dotted component is used); ``namespace``
    (the namespace the API was mined from) selects its ``[namespace_aliases]`` table."""
    own = raw.rsplit(".", 1)[-1]
    ns_table = data.namespace_aliases.get(namespace or "", {})
    if own in ns_table:
        return Canonical(ns_table[own])
    name = snake(own)
    name = re.sub(r"_v\d+$", "", name)
    for suffix in data.strip_suffixes:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    changed = True
    while changed:
        changed = False
        for prefix in data.strip_prefixes:
            if name.startswith(prefix) and len(name) > len(prefix):
                rest = name[len(prefix):]
                # keep names that are only meaningful with the prefix (nn_ in "nn_interpolate"?)
                if prefix in data.keep_prefixes and rest in data.aliases.values():
                    continue
                name = rest
                changed = True
    lossy = False
    lib_table = data.library_aliases.get(library or "", {})
    if name in lib_table:
        name = lib_table[name]
    for _ in range(data.max_hops):
        nxt = data.aliases.get(name)
        if nxt is None or nxt == name:
            break
        if name in data.lossy:
            lossy = True
        name = nxt
    return Canonical(name, lossy)
