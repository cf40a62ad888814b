"""What a report shows, read from the store: campaigns, findings, per-group statistics, coverage.

:func:`open_findings` is the one way the report commands open a store: it refuses a missing or
empty store and one whose findings tables were written by another schema version, with a message
that says what to do, before anything is read.
"""
from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from xamt.errors import StoreVersionError, XamtError
from xamt.findings import DISPERSION_BINS, FINDINGS_SCHEMA, Campaign, Finding, FindingsStore
from xamt.log import get_logger
from xamt.store import Store, default_db_path

__all__ = [
    "ReportError",
    "PolicyNotABugError",
    "EmptyStoreError",
    "UnknownFindingError",
    "CampaignView",
    "CoverageRow",
    "Coverage",
    "GroupView",
    "ReportData",
    "open_findings",
    "get_finding",
    "load_report_data",
    "read_report_data",
]

_log = get_logger("report")


class ReportError(XamtError):
    """A report cannot be made from what the store holds."""


class EmptyStoreError(ReportError):
    """There is no store, or it holds no fuzzing campaign yet."""


class PolicyNotABugError(ReportError):
    """A bug report was asked for a finding that follows a documented policy."""


class UnknownFindingError(ReportError):
    """No finding has the id that was asked for."""


@contextmanager
def open_findings(out_dir: str | Path) -> Iterator[tuple[Store, FindingsStore]]:
    """Open ``<out_dir>/xamt.db`` for reading campaigns and findings.

    Raises :class:`EmptyStoreError` when there is no store or no campaign tables in it, and
    :class:`~xamt.errors.StoreVersionError` when those tables come from another schema version.
    """
    path = default_db_path(out_dir)
    if not path.is_file():
        raise EmptyStoreError(
            f"no Xamt store at {path}: run `xamt fuzz --out {out_dir}` first, "
            "or point --out at the folder of an earlier run")
    with Store(path, create=False) as store:
        version = store.schema_version(FINDINGS_SCHEMA.component)
        if version is None:
            raise EmptyStoreError(
                f"store {path} holds no fuzzing campaign yet: run `xamt fuzz --out {out_dir}`")
        if version != FINDINGS_SCHEMA.version:
            raise StoreVersionError(
                f"store {path}: its campaigns and findings were written by another Xamt "
                f"(findings tables version {version}, this Xamt reads version "
                f"{FINDINGS_SCHEMA.version}); use the Xamt that wrote it, or another --out folder")
        yield store, FindingsStore(store)


def get_finding(fs: FindingsStore, finding_id: int) -> Finding:
    """The finding with this id, or :class:`UnknownFindingError` naming the ids there are."""
    f = fs.finding(finding_id)
    if f is None:
        ids = [r[0] for r in fs.store.query("SELECT id FROM findings ORDER BY id")]
        known = (f"ids {ids[0]}–{ids[-1]}" if len(ids) > 1 else f"id {ids[0]}") if ids else "none"
        raise UnknownFindingError(
            f"no finding with id {finding_id} in {fs.store.path} (findings there: {known}; "
            "list them with `xamt findings`)")
    return f


@dataclass
class CampaignView:
    """A campaign with the figures the summary shows."""

    campaign: Campaign
    samples: list[dict[str, float]]

    @property
    def duration_s(self) -> float:
        """Wall time so far (to the end for a finished campaign, to now for a running one)."""
        end = self.campaign.finished
        if end is None:
            # a campaign that crashed never wrote its end: its last sample is the best evidence
            end = self.samples[-1]["t"] if self.samples else time.time()
        return max(0.0, end - self.campaign.started)

    @property
    def throughput(self) -> float | None:
        """Executions per second, or None before any time passed."""
        d = self.duration_s
        return self.campaign.executions / d if d > 0 else None


@dataclass
class CoverageRow:
    """APIs per library at each stage; None where the stage has no data in the store."""

    library: str
    version: str | None
    mined: int | None
    validated: int | None
    fuzzed: int | None


@dataclass
class Coverage:
    """Per-library coverage and, per column, a note saying why it is n/a or partial."""

    rows: list[CoverageRow]
    notes: dict[str, str] = field(default_factory=dict)


@dataclass
class GroupView:
    """One group's statistics summed over the selected campaigns."""

    group_key: str
    iterations: int
    executions: int
    best_dispersion: float
    histogram: list[int]
    members: list[dict[str, Any]] | None
    findings: int = 0


@dataclass
class ReportData:
    """Everything one report shows."""

    out_dir: Path
    store_path: Path
    campaigns: list[CampaignView]
    findings: list[Finding]
    groups: list[GroupView]
    coverage: Coverage
    generated: float = field(default_factory=time.time)

    @property
    def campaign_by_id(self) -> dict[int, CampaignView]:
        return {cv.campaign.id: cv for cv in self.campaigns if cv.campaign.id is not None}

    def versions_for(self, f: Finding) -> dict[str, str]:
        """Library versions of the campaign that filed ``f`` (empty when it is not loaded)."""
        cv = self.campaign_by_id.get(f.campaign_id)
        return dict(cv.campaign.libraries) if cv else {}


def load_report_data(out_dir: str | Path, campaign_id: int | None = None) -> ReportData:
    """Read a report's data from ``<out_dir>/xamt.db``.

    With ``campaign_id`` the report covers that campaign (and the findings it filed first:
    findings are deduplicated across campaigns); without, every campaign in the store.
    """
    with open_findings(out_dir) as (store, fs):
        return read_report_data(store, fs, out_dir, campaign_id)


def read_report_data(store: Store, fs: FindingsStore, out_dir: str | Path,
                     campaign_id: int | None = None) -> ReportData:
    """:func:`load_report_data` on a store opened with :func:`open_findings`."""
    all_campaigns = fs.campaigns()
    if not all_campaigns:
        raise EmptyStoreError(
            f"store {store.path} holds no fuzzing campaign yet: run `xamt fuzz --out {out_dir}`")
    if campaign_id is None:
        campaigns = all_campaigns
    else:
        campaigns = [c for c in all_campaigns if c.id == campaign_id]
        if not campaigns:
            raise ReportError(
                f"no campaign {campaign_id} in {store.path} (campaigns there: "
                f"{', '.join(str(c.id) for c in all_campaigns)})")
    views = [CampaignView(c, fs.samples(c.id)) for c in campaigns]  # type: ignore[arg-type]
    findings = fs.findings(campaign_id)
    groups = _groups(fs, campaigns, findings)
    coverage = _coverage(store, fs, campaigns)
    return ReportData(Path(out_dir), store.path, views, findings, groups, coverage)


def _groups(fs: FindingsStore, campaigns: list[Campaign], findings: list[Finding]) -> list[GroupView]:
    by_key: dict[str, GroupView] = {}
    for c in campaigns:
        for row in fs.group_stats(c.id):  # type: ignore[arg-type]
            g = by_key.get(row["group_key"])
            if g is None:
                by_key[row["group_key"]] = GroupView(
                    row["group_key"], row["iterations"], row["executions"],
                    row["best_dispersion"], list(row["histogram"]), row["members"])
                continue
            g.iterations += row["iterations"]
            g.executions += row["executions"]
            g.best_dispersion = max(g.best_dispersion, row["best_dispersion"])
            g.histogram = [a + b for a, b in zip(g.histogram, row["histogram"])]
            g.members = g.members or row["members"]
    counts: dict[str, int] = defaultdict(int)
    for f in findings:
        counts[f.group_key] += 1
    for key, n in counts.items():
        if key in by_key:
            by_key[key].findings = n
    return sorted(by_key.values(), key=lambda g: (-g.best_dispersion, g.group_key))


def _validated_counts(store: Store, notes: dict[str, str]) -> dict[str, int] | None:
    """Distinct APIs per library in the validated groups of the latest registry build."""
    from xamt.groups.model import load_registry

    try:
        groups = load_registry(store)
    except XamtError as exc:
        notes["validated"] = f"the group registry cannot be read: {exc}"
        return None
    if not groups:
        notes["validated"] = "no validated groups in this store (`xamt groups build` has not run)"
        return None
    apis: dict[str, set[str]] = defaultdict(set)
    for g in groups:
        for m in g.members:
            apis[m.library].add(m.qualname)
    return {lib: len(v) for lib, v in apis.items()}


def _coverage(store: Store, fs: FindingsStore, campaigns: list[Campaign]) -> Coverage:
    notes: dict[str, str] = {}
    versions: dict[str, str] = {}
    for c in campaigns:
        versions.update(c.libraries)

    mined = _mined_counts(store, versions, notes)
    validated = _validated_counts(store, notes)

    fuzzed_apis: dict[str, set[str]] = defaultdict(set)
    groups_without_members, groups_total = 0, 0
    for c in campaigns:
        for row in fs.group_stats(c.id):  # type: ignore[arg-type]
            groups_total += 1
            if row["members"] is None:
                groups_without_members += 1
                continue
            for m in row["members"]:
                fuzzed_apis[m["library"]].add(m["api"])
    fuzzed: dict[str, int] | None = {lib: len(apis) for lib, apis in fuzzed_apis.items()}
    if groups_total == 0:
        notes["fuzzed"] = "the campaign recorded no per-group statistics"
        fuzzed = None
    elif groups_without_members == groups_total:
        notes["fuzzed"] = "the campaign did not record the members of its groups"
        fuzzed = None
    elif groups_without_members:
        notes["fuzzed"] = (f"{groups_without_members} of {groups_total} fuzzed groups have no "
                           "recorded members: counts are lower bounds")

    libraries = sorted(set(versions) | set(mined or {}) | set(fuzzed or {}) | set(validated or {}))
    rows = [
        CoverageRow(
            lib, versions.get(lib),
            None if mined is None else mined.get(lib, 0),
            None if validated is None else validated.get(lib, 0),
            None if fuzzed is None else fuzzed.get(lib, 0),
        )
        for lib in libraries
    ]
    return Coverage(rows, notes)


def _mined_counts(store: Store, versions: dict[str, str], notes: dict[str, str]) -> dict[str, int] | None:
    # Imported here: the catalog module is only needed when a report reads coverage.
    from xamt.catalog import CATALOG_SCHEMA

    version = store.schema_version(CATALOG_SCHEMA.component)
    if version is None:
        notes["mined"] = "no catalog in this store (run xamt catalog with the same --out)"
        return None
    if version != CATALOG_SCHEMA.version:
        notes["mined"] = (f"the catalog in this store is version {version}, this Xamt reads "
                          f"{CATALOG_SCHEMA.version}: run xamt catalog again")
        return None
    rows = store.query("SELECT library, count(*) AS n FROM catalog_apis GROUP BY library")
    counts = {r["library"]: int(r["n"]) for r in rows}
    mined_versions = {r["library"]: r["version"]
                      for r in store.query("SELECT library, version FROM catalog_libraries")}
    stale = sorted(lib for lib, v in versions.items()
                   if lib in mined_versions and mined_versions[lib] != v)
    if stale:
        notes["mined"] = ("catalog mined from other versions than the campaign ran for: "
                          + ", ".join(f"{lib} {mined_versions[lib]}" for lib in stale))
    return counts


def dispersion_bin_labels() -> list[str]:
    """Human labels for :data:`~xamt.findings.DISPERSION_BINS` (the last bin is open)."""
    labels, lower = [], None
    for edge in DISPERSION_BINS:
        labels.append(f"≤{edge:g}" if lower is None else f"({lower:g}, {edge:g}]")
        lower = edge
    labels.append(f">{DISPERSION_BINS[-1]:g}")
    return labels
