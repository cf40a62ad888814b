"""Matching orchestration: catalogs in, candidate groups out (and into the store).

:func:`match` builds the views, the cross-library groups and the intra-library relations and
returns a :class:`MatchResult` with statistics. :func:`save_groups` / :func:`load_groups` keep the
latest result in the store (``matching`` tables, rebuilt on a schema change).
"""
from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from xamt.catalog import LibraryCatalog
from xamt.errors import MatchingError
from xamt.libraries.registry import Registry
from xamt.log import get_logger
from xamt.matching.cross import cross_library_groups
from xamt.matching.data import MatchingData, load_matching_data
from xamt.matching.inferred import inferred_groups
from xamt.matching.model import CandidateGroup
from xamt.matching.relations import intra_library_groups, qualify_keys
from xamt.matching.views import build_views
from xamt.store import Schema, Store

__all__ = ["MatchResult", "match", "save_groups", "load_groups", "MATCHING_SCHEMA", "summary"]

_log = get_logger("matching")

MATCHING_SCHEMA = Schema(
    component="matching",
    version=1,
    tables=("match_info", "candidate_groups"),
    statements=(
        "CREATE TABLE IF NOT EXISTS match_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS candidate_groups ("
        " key TEXT PRIMARY KEY, relation TEXT NOT NULL, category TEXT NOT NULL,"
        " equivalence TEXT NOT NULL, confidence REAL NOT NULL, libraries TEXT NOT NULL,"
        " data TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS candidate_groups_relation ON candidate_groups(relation)",
    ),
)


@dataclass
class MatchResult:
    """Groups plus how they came about."""

    groups: list[CandidateGroup]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def cross(self) -> list[CandidateGroup]:
        return [g for g in self.groups if g.relation == "cross_library"]

    @property
    def intra(self) -> list[CandidateGroup]:
        return [g for g in self.groups if g.relation != "cross_library"]


def match(
    catalogs: dict[str, LibraryCatalog],
    data: MatchingData | None = None,
    *,
    registry: Registry | None = None,
    intra: bool = True,
) -> MatchResult:
    """Build the candidate groups of the given catalogs."""
    if not catalogs:
        raise MatchingError("no catalog to match: run `xamt catalog` first (or pass --libs)")
    t0 = time.perf_counter()
    data = data or load_matching_data()
    registry = registry or Registry()
    index = build_views(catalogs, data, registry)
    t_views = time.perf_counter()
    cross, cross_stats = cross_library_groups(index, data)
    t_cross = time.perf_counter()
    groups = list(cross)
    inferred_stats = None
    t_intra = t_cross
    if intra:
        members = {m.qualname for g in cross for m in g.members}
        groups += intra_library_groups(index, data, catalogs, members, registry)
        t_intra = time.perf_counter()
        inferred, inferred_stats = inferred_groups(index, data, groups)
        groups += inferred
        qualify_keys(groups)
    t_end = time.perf_counter()
    stats = summary(groups, catalogs)
    stats["seconds"] = {"views": round(t_views - t0, 2), "cross": round(t_cross - t_views, 2),
                        "intra": round(t_intra - t_cross, 2), "inferred": round(t_end - t_intra, 2),
                        "total": round(t_end - t0, 2)}
    if inferred_stats is not None:
        stats["inferred"] = inferred_stats.to_json()
    stats["loose_groups_multi_library"] = cross_stats["loose_groups_multi_library"]
    stats["homonym_removals"] = cross_stats["homonym_removals"]
    stats["homonyms"] = [[q, c] for q, c, _ in cross_stats["homonyms"]]
    stats["data_fingerprint"] = data.fingerprint
    return MatchResult(groups, stats)


def summary(groups: Iterable[CandidateGroup], catalogs: dict[str, LibraryCatalog]) -> dict[str, Any]:
    """Counts: cross-library groups, APIs they cover (per library), intra relations by kind."""
    groups = list(groups)
    cross = [g for g in groups if g.relation == "cross_library"]
    covered = {(m.library, m.qualname) for g in cross for m in g.members}
    per_lib = Counter(lib for lib, _ in covered)
    intra = Counter(g.relation for g in groups if g.relation != "cross_library" and not g.same_object)
    same_object = Counter(g.relation for g in groups if g.same_object)
    equivalence = Counter((g.relation, g.equivalence) for g in groups
                          if g.relation != "cross_library" and not g.same_object)
    return {
        "mined": {lib: len(cat.records) for lib, cat in catalogs.items()},
        "cross_library_groups": len(cross),
        "cross_library_apis": len(covered),
        "cross_library_apis_per_library": dict(sorted(per_lib.items())),
        "cross_library_bands": dict(Counter(g.band for g in cross)),
        "cross_library_libraries_per_group": dict(sorted(Counter(len(g.libraries) for g in cross).items())),
        "intra_relations": dict(sorted(intra.items())),
        "intra_status_only": {k[0]: v for k, v in equivalence.items() if k[1] == "status"},
        "same_object_relations": dict(sorted(same_object.items())),
        "incomplete_plans": sum(1 for g in groups for m in g.members if not m.plan.complete),
        "members": sum(len(g.members) for g in groups),
    }


def save_groups(store: Store, result: MatchResult) -> None:
    """Replace the stored candidate groups with ``result``."""
    store.ensure(MATCHING_SCHEMA, on_mismatch="recreate")
    with store.transaction():
        store.execute("DELETE FROM candidate_groups")
        store.execute("DELETE FROM match_info")
        store.executemany(
            "INSERT INTO candidate_groups(key, relation, category, equivalence, confidence,"
            " libraries, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(g.key, g.relation, g.category, g.equivalence, g.confidence,
              ",".join(g.libraries), json.dumps(g.to_json())) for g in result.groups],
        )
        store.execute("INSERT INTO match_info(key, value) VALUES ('stats', ?)",
                      (json.dumps(result.stats),))
        store.execute("INSERT INTO match_info(key, value) VALUES ('created', ?)",
                      (str(time.time()),))


def load_groups(store: Store, relation: str | None = None) -> MatchResult:
    """The stored candidate groups (optionally of one relation kind)."""
    store.ensure(MATCHING_SCHEMA, on_mismatch="recreate")
    if relation is None:
        rows = store.query("SELECT data FROM candidate_groups ORDER BY key")
    else:
        rows = store.query("SELECT data FROM candidate_groups WHERE relation=? ORDER BY key",
                           (relation,))
    stats_row = store.query("SELECT value FROM match_info WHERE key='stats'")
    stats = json.loads(stats_row[0]["value"]) if stats_row else {}
    return MatchResult([CandidateGroup.from_json(json.loads(r["data"])) for r in rows], stats)
