"""Campaigns and findings: what a fuzzing campaign records in the store, and how it is read back.

This module is the contract between the fuzzer (which writes) and the reports (which read):

* ``campaigns`` — one row per ``xamt fuzz`` run: libraries and versions, budget, seed, status,
  executions, group-iterations, timings;
* ``campaign_samples`` — a time series per campaign (executions, group-iterations and findings
  so far), for the "over time" plots and for resuming;
* ``group_stats`` — per campaign and group: iterations, executions, the best dispersion seen and
  a histogram of log10(dispersion), for the dispersion-distribution plot;
* ``findings`` — one row per root cause, deduplicated on ``(finding_class, outlier_api,
  signature)`` (the signature is the trigger or the refusal rule, :mod:`xamt.triage.dedup`); a
  repeat increments ``hits``; ``group_key`` and ``dtype`` are those of the first occurrence;
* ``finding_occurrences`` — per finding, every group and dtype it was seen in, with its hits;
* ``finding_evidence`` — the minimised input and every member's outcome (msgpack blobs written
  with the sandbox codec, :func:`encode_evidence`; read back with :func:`decode_evidence_blob`),
  kept apart so listing findings stays cheap.

Findings survive a crash of the fuzzer: each is written in its own transaction when filed.
"""
from __future__ import annotations

import enum
import json
import math
import operator
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from sandbox import codec
from sandbox.errors import DecodeError as EvidenceDecodeError
from xamt.errors import StoreError
from xamt.store import Schema, Store

__all__ = [
    "FindingClass",
    "Finding",
    "Campaign",
    "FINDINGS_SCHEMA",
    "OCCURRENCES_SCHEMA",
    "NOT_BUGS",
    "FindingsStore",
    "DISPERSION_BINS",
    "histogram_of",
    "encode_evidence",
    "decode_evidence_blob",
    "EvidenceDecodeError",
]


class FindingClass(str, enum.Enum):
    """What kind of divergence a finding is, decided from its evidence (see :mod:`xamt.triage`)."""

    CRASH = "crash"
    INTERNAL = "internal"
    STATUS = "status"
    SUBNORMAL = "subnormal"          # flush-to-zero / subnormal handling
    NAN = "nan"                      # NaN propagation or ordering
    PROMOTION = "promotion"          # dtype promotion or integer overflow
    DEFAULT = "default"              # differing defaults
    PRECISION = "precision"          # agrees under a looser tolerance
    VALUE = "value"                  # anything else that differs
    VALIDATION = "validation"        # accepts an input that the others reject (or return NaN for)
    POLICY = "policy"                # a documented numerical policy: filed, never a bug


#: classes that are not bugs: shown and exported apart, never counted as bugs
NOT_BUGS = frozenset({FindingClass.POLICY})


#: upper edges of the log10(dispersion) histogram bins kept per group (the last bin is open).
DISPERSION_BINS: tuple[float, ...] = (-6, -4, -2, -1, 0, 1, 2, 4, 6, 9)


@dataclass
class Finding:
    """One distinct finding.

    ``members`` lists every member of the group as dicts with at least ``library``, ``api``
    (qualified name) and ``status`` (sandbox status of its call on the minimised input).
    ``summary`` holds the comparator's numbers or the error text, ready to show.
    """

    campaign_id: int
    group_key: str
    relation: str
    finding_class: FindingClass
    outlier_library: str | None
    outlier_api: str | None
    dtype: str | None
    signature: str
    members: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)
    input_recipe: dict[str, Any] = field(default_factory=dict)
    reproducer: str | None = None
    verified: bool = False
    hits: int = 1
    first_seen: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.time)
    id: int | None = None

    def dedup_key(self) -> tuple[str, str, str]:
        """The identity of a finding, its root cause: class, the outlier's family (the
        distribution it belongs to, or its operation in one library: ``summary["family"]``,
        :func:`xamt.triage.dedup.api_family`; the outlier API where none is recorded) and
        signature (the trigger or refusal rule). The group, the dtype and the API of one family
        are occurrences, not identity."""
        return (self.finding_class.value, self.summary.get("family") or self.outlier_api or "", self.signature)

    @property
    def cause(self) -> str:
        """The cluster of findings of other APIs this one may share a cause with
        (``summary["cluster"]``, :func:`xamt.triage.dedup.cause_cluster`); for a finding filed
        before clusters were recorded, its policy's name, else its class and signature."""
        if self.summary.get("cluster"):
            return str(self.summary["cluster"])
        policy = self.summary.get("policy") or {}
        if policy.get("name"):
            return f"policy: {policy['name']}"
        return f"{self.finding_class.value}: {self.signature}"

    @property
    def is_bug(self) -> bool:
        """Whether the finding counts as a bug (a documented policy does not)."""
        return self.finding_class not in NOT_BUGS

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (the class as its string value)."""
        d = asdict(self)
        d["finding_class"] = self.finding_class.value
        return d


@dataclass
class Campaign:
    """One fuzzing run. ``libraries`` maps library name to version."""

    libraries: dict[str, str]
    budget_s: float
    seed: int
    workers: int
    settings: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    finished: float | None = None
    status: str = "running"
    executions: int = 0
    iterations: int = 0
    groups: int = 0
    id: int | None = None


FINDINGS_SCHEMA = Schema(
    component="findings",
    version=1,
    tables=("campaigns", "campaign_samples", "group_stats", "findings", "finding_evidence"),
    statements=(
        "CREATE TABLE IF NOT EXISTS campaigns ("
        " id INTEGER PRIMARY KEY, libraries TEXT NOT NULL, budget_s REAL NOT NULL,"
        " seed INTEGER NOT NULL, workers INTEGER NOT NULL, settings TEXT NOT NULL,"
        " started REAL NOT NULL, finished REAL, status TEXT NOT NULL,"
        " executions INTEGER NOT NULL DEFAULT 0, iterations INTEGER NOT NULL DEFAULT 0,"
        " groups_n INTEGER NOT NULL DEFAULT 0)",
        "CREATE TABLE IF NOT EXISTS campaign_samples ("
        " campaign_id INTEGER NOT NULL REFERENCES campaigns(id), t REAL NOT NULL,"
        " executions INTEGER NOT NULL, iterations INTEGER NOT NULL, findings INTEGER NOT NULL)",
        "CREATE INDEX IF NOT EXISTS campaign_samples_c ON campaign_samples(campaign_id, t)",
        "CREATE TABLE IF NOT EXISTS group_stats ("
        " campaign_id INTEGER NOT NULL REFERENCES campaigns(id), group_key TEXT NOT NULL,"
        " iterations INTEGER NOT NULL, executions INTEGER NOT NULL, best_dispersion REAL NOT NULL,"
        " histogram TEXT NOT NULL, members TEXT, PRIMARY KEY (campaign_id, group_key))",
        "CREATE TABLE IF NOT EXISTS findings ("
        " id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
        " group_key TEXT NOT NULL, relation TEXT NOT NULL, finding_class TEXT NOT NULL,"
        " outlier_library TEXT, outlier_api TEXT NOT NULL, dtype TEXT, signature TEXT NOT NULL,"
        " members TEXT NOT NULL, summary TEXT NOT NULL, input_recipe TEXT NOT NULL,"
        " reproducer TEXT, verified INTEGER NOT NULL, hits INTEGER NOT NULL,"
        " first_seen REAL NOT NULL, last_seen REAL NOT NULL,"
        " UNIQUE (group_key, finding_class, outlier_api, signature))",
        "CREATE TABLE IF NOT EXISTS finding_evidence ("
        " finding_id INTEGER PRIMARY KEY REFERENCES findings(id), inputs BLOB NOT NULL,"
        " outputs BLOB NOT NULL)",
    ),
)


#: the groups and dtypes each finding was seen in (added beside the findings tables, so a store
#: written before it gains the table instead of being refused)
OCCURRENCES_SCHEMA = Schema(
    component="finding_occurrences",
    version=1,
    tables=("finding_occurrences",),
    statements=(
        "CREATE TABLE IF NOT EXISTS finding_occurrences ("
        " finding_id INTEGER NOT NULL REFERENCES findings(id), group_key TEXT NOT NULL,"
        " dtype TEXT NOT NULL, members TEXT NOT NULL, hits INTEGER NOT NULL,"
        " first_seen REAL NOT NULL, PRIMARY KEY (finding_id, group_key, dtype))",
    ),
)


def encode_evidence(inputs: Mapping[str, Any],
                    outputs: Iterable[Mapping[str, Any]]) -> tuple[bytes, bytes]:
    """The ``(inputs, outputs)`` evidence blobs of a finding, for :meth:`FindingsStore.file`.

    ``inputs``: ``{argument name: numpy array or scalar}``; ``outputs``: one dict per group
    member in :attr:`Finding.members` order, ``{"status", "value", "error_type",
    "error_message"}`` (``value`` a numpy array or None). Raises the sandbox codec's
    ``EncodeError`` for a value it cannot encode.
    """
    return codec.dumps(inputs), codec.dumps(outputs)


def decode_evidence_blob(blob: bytes) -> Any:
    """One evidence blob decoded (see :func:`encode_evidence`); raises
    :class:`EvidenceDecodeError` when it cannot be."""
    return codec.loads(blob)


def _relates(row: Any, signature: str, lineage: Mapping[str, Any],
             related: Callable[[Mapping[str, Any], Mapping[str, Any]], bool],
             akin: Callable[[str, str], bool]) -> bool:
    """Whether a stored finding (``row``: its ``signature``, ``lineage`` and ``also`` as JSON)
    shares a cause with a finding of ``signature`` and ``lineage``: by its own lineage or that
    of one folded into it, with an ``akin`` signature each (the relation composes: tnp.sort
    calls top_k, approx_top_k qualifies top_k). Lineages are parsed only where the signatures
    are akin."""
    if akin(row["signature"], signature) and related(json.loads(row["lineage"]), lineage):
        return True
    return bool(row["also"]) and any(akin(a["signature"], signature) and related(a["lineage"], lineage)
                                     for a in json.loads(row["also"]) if a.get("lineage"))


def _any_signature(a: str, b: str) -> bool:
    """Every pair of signatures: across classes, ``crossed`` has judged the pair already
    (:meth:`FindingsStore._crossed_finding`)."""
    return True


class FindingsStore:
    """Read and write campaigns and findings in a :class:`~xamt.store.Store`."""

    def __init__(self, store: Store):
        self.store = store
        #: findings absorbed by a later fold that bridged them to an earlier one (:meth:`file`),
        #: as ``(absorbed id, the id it went into, its reproducer path)``; whoever refers to
        #: finding ids (the campaign's seen table, reproducer folders) drains it
        self.absorbed: list[tuple[int, int, str | None]] = []
        store.ensure(FINDINGS_SCHEMA, on_mismatch="error")
        store.ensure(OCCURRENCES_SCHEMA, on_mismatch="error")

    # -- campaigns ----------------------------------------------------------------------------
    def start_campaign(self, c: Campaign) -> int:
        """Insert ``c`` and return its id (also set on ``c``)."""
        cur = self.store.execute(
            "INSERT INTO campaigns(libraries, budget_s, seed, workers, settings, started, status)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (json.dumps(c.libraries, sort_keys=True), c.budget_s, c.seed, c.workers,
             json.dumps(c.settings, sort_keys=True), c.started, c.status),
        )
        c.id = int(cur.lastrowid)
        return c.id

    def update_campaign(self, c: Campaign) -> None:
        """Write ``c``'s counters, status and end time."""
        if c.id is None:
            raise StoreError("campaign has no id: start_campaign() it first")
        self.store.execute(
            "UPDATE campaigns SET executions=?, iterations=?, groups_n=?, status=?, finished=?,"
            " settings=? WHERE id=?",
            (c.executions, c.iterations, c.groups, c.status, c.finished,
             json.dumps(c.settings, sort_keys=True), c.id),
        )

    def campaign(self, campaign_id: int | None = None) -> Campaign | None:
        """The campaign with this id, or the latest one when ``campaign_id`` is None."""
        if campaign_id is None:
            rows = self.store.query("SELECT * FROM campaigns ORDER BY id DESC LIMIT 1")
        else:
            rows = self.store.query("SELECT * FROM campaigns WHERE id=?", (campaign_id,))
        if not rows:
            return None
        r = rows[0]
        return Campaign(
            libraries=json.loads(r["libraries"]), budget_s=r["budget_s"], seed=r["seed"],
            workers=r["workers"], settings=json.loads(r["settings"]), started=r["started"],
            finished=r["finished"], status=r["status"], executions=r["executions"],
            iterations=r["iterations"], groups=r["groups_n"], id=r["id"],
        )

    def campaigns(self) -> list[Campaign]:
        """All campaigns, oldest first."""
        ids = [r[0] for r in self.store.query("SELECT id FROM campaigns ORDER BY id")]
        return [c for c in (self.campaign(i) for i in ids) if c is not None]

    def add_sample(self, campaign_id: int, executions: int, iterations: int, findings: int,
                   t: float | None = None) -> None:
        """Append one point of the campaign's time series."""
        self.store.execute(
            "INSERT INTO campaign_samples(campaign_id, t, executions, iterations, findings)"
            " VALUES (?, ?, ?, ?, ?)",
            (campaign_id, time.time() if t is None else t, executions, iterations, findings),
        )

    def samples(self, campaign_id: int) -> list[dict[str, float]]:
        """The campaign's time series, oldest first."""
        rows = self.store.query(
            "SELECT t, executions, iterations, findings FROM campaign_samples"
            " WHERE campaign_id=? ORDER BY t", (campaign_id,))
        return [dict(r) for r in rows]

    def put_group_stats(self, campaign_id: int, group_key: str, iterations: int,
                        executions: int, best_dispersion: float, histogram: list[int],
                        members: list[dict[str, Any]] | None = None) -> None:
        """Replace one group's statistics for a campaign.

        ``members`` (optional) lists the group's members as dicts with at least ``library`` and
        ``api``, like :attr:`Finding.members`; the report counts the APIs fuzzed per library
        from it.
        """
        if len(histogram) != len(DISPERSION_BINS) + 1:
            raise ValueError(f"histogram needs {len(DISPERSION_BINS) + 1} bins")
        if members is not None and not all(
                isinstance(m, dict) and m.get("library") and m.get("api") for m in members):
            raise ValueError("group members must be dicts with 'library' and 'api'")
        self.store.execute(
            "INSERT OR REPLACE INTO group_stats(campaign_id, group_key, iterations, executions,"
            " best_dispersion, histogram, members) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (campaign_id, group_key, iterations, executions, float(best_dispersion),
             json.dumps(histogram), None if members is None else json.dumps(members)),
        )

    def group_stats(self, campaign_id: int) -> list[dict[str, Any]]:
        """Per-group statistics of a campaign (histogram and members decoded; members may be
        None when the fuzzer did not record them)."""
        rows = self.store.query(
            "SELECT * FROM group_stats WHERE campaign_id=? ORDER BY group_key", (campaign_id,))
        out = []
        for r in rows:
            d = dict(r)
            d["histogram"] = json.loads(d["histogram"])
            d["members"] = None if d["members"] is None else json.loads(d["members"])
            out.append(d)
        return out

    # -- findings -----------------------------------------------------------------------------
    def file(self, f: Finding, inputs: bytes, outputs: bytes,
             related: Callable[[Mapping[str, Any], Mapping[str, Any]], bool] | None = None,
             akin: Callable[[str, str], bool] | None = None,
             crossed: Callable[[tuple[str, str], tuple[str, str]], bool] | None = None) -> tuple[int, bool]:
        """Record ``f``; returns ``(id, new)``. A finding of the same root cause
        (:meth:`Finding.dedup_key`) only bumps ``hits`` and ``last_seen``, and records ``f``'s
        group and dtype as an occurrence. So does the first finding of the same class, a
        signature ``akin`` to ``f``'s (the same where not given; NaN and +inf with
        :func:`xamt.triage.dedup.akin`) and a ``summary["lineage"]`` that ``related(theirs,
        f's)`` says shares the cause (:func:`xamt.triage.dedup.same_cause`: one API calls the
        other, or is its namesake, sibling or qualified form on the same kernels), with the
        finding's own lineage or that of one folded into it. So does the first finding of the same
        outlier API, or of one whose lineage is ``related``, in another class where
        ``crossed((class, signature) of theirs, of f)`` says the two are one failure
        (:func:`xamt.triage.dedup.one_failure`: a hang and a refusal; a wrong integer and the
        crash of the sibling that divides by it). A fold from another API, signature or class is
        listed, with its lineage, in the first finding's ``summary["also"]``. Where ``f`` folds
        into a finding and also relates to a *later* one of the same class (filed before ``f``
        bridged the two: TensorFlow's compiled approx_top_k, filed apart from tnp.sort until the
        eager approx_top_k folded into that), the later one is absorbed into it too
        (:attr:`absorbed`)."""
        with self.store.transaction():
            cls, family, signature = f.dedup_key()
            row = self.store.query(
                "SELECT id FROM findings WHERE finding_class=? AND signature=?"
                " AND coalesce(json_extract(summary, '$.family'), outlier_api)=? ORDER BY id LIMIT 1",
                (cls, signature, family))
            fid = int(row[0]["id"]) if row else None
            lineage = f.summary.get("lineage")
            if fid is None and related is not None and lineage:
                fid = self._related_finding(cls, signature, lineage, related, akin or operator.eq)
            if fid is None and crossed is not None and f.outlier_api:
                fid = self._crossed_finding(cls, signature, f.outlier_api, lineage, crossed, related)
            if fid is not None:
                self.store.execute(
                    "UPDATE findings SET hits = hits + ?, last_seen=? WHERE id=?",
                    (f.hits, f.last_seen, fid))
                self._occurrence(fid, f)
                self._also(fid, f)
                if related is not None and lineage:
                    self._absorb_bridged(fid, cls, signature, lineage, related, akin or operator.eq)
                f.id = fid
                return fid, False
            cur = self.store.execute(
                "INSERT INTO findings(campaign_id, group_key, relation, finding_class,"
                " outlier_library, outlier_api, dtype, signature, members, summary, input_recipe,"
                " reproducer, verified, hits, first_seen, last_seen)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (f.campaign_id, f.group_key, f.relation, f.finding_class.value,
                 f.outlier_library, f.outlier_api or "", f.dtype, f.signature,
                 json.dumps(f.members), json.dumps(f.summary, default=str),
                 json.dumps(f.input_recipe), f.reproducer, int(f.verified), f.hits,
                 f.first_seen, f.last_seen))
            fid = int(cur.lastrowid)
            self.store.execute(
                "INSERT INTO finding_evidence(finding_id, inputs, outputs) VALUES (?, ?, ?)",
                (fid, inputs, outputs))
            self._occurrence(fid, f)
        f.id = fid
        return fid, True

    def _related_finding(self, cls: str, signature: str, lineage: Mapping[str, Any],
                         related: Callable[[Mapping[str, Any], Mapping[str, Any]], bool],
                         akin: Callable[[str, str], bool]) -> int | None:
        """The first finding of class ``cls`` that shares a cause with one of ``signature`` and
        ``lineage`` (:func:`_relates`)."""
        return next((int(r["id"]) for r in self.store.query(
            "SELECT id, signature, json_extract(summary, '$.lineage') AS lineage,"
            " json_extract(summary, '$.also') AS also FROM findings"
            " WHERE finding_class=? AND json_extract(summary, '$.lineage') IS NOT NULL"
            " ORDER BY id", (cls,)) if _relates(r, signature, lineage, related, akin)), None)

    def _crossed_finding(self, cls: str, signature: str, api: str, lineage: Mapping[str, Any] | None,
                         crossed: Callable[[tuple[str, str], tuple[str, str]], bool],
                         related: Callable[[Mapping[str, Any], Mapping[str, Any]], bool] | None) -> int | None:
        """The first finding of another class than ``cls`` that ``crossed`` says is one failure
        with a finding of ``signature``: of the same outlier ``api``, or of one whose lineage (or
        that of one folded into it) is ``related`` to ``lineage``. torch's gcd returns -1 where
        abs(INT_MIN) overflows, and its lcm, computed through gcd, then divides INT_MIN by -1 and
        traps: readers of five campaigns counted the value and the crash as one cause."""
        for r in self.store.query(
                "SELECT id, finding_class, signature, outlier_api, json_extract(summary, '$.lineage') AS lineage,"
                " json_extract(summary, '$.also') AS also FROM findings WHERE finding_class!=? ORDER BY id", (cls,)):
            if not crossed((r["finding_class"], r["signature"]), (cls, signature)):
                continue
            if r["outlier_api"] == api or (related is not None and lineage and r["lineage"]
                                           and _relates(r, signature, lineage, related, _any_signature)):
                return int(r["id"])
        return None

    def _absorb_bridged(self, fid: int, cls: str, signature: str, lineage: Mapping[str, Any],
                        related: Callable[[Mapping[str, Any], Mapping[str, Any]], bool],
                        akin: Callable[[str, str], bool]) -> None:
        """Absorb into ``fid`` every later finding of class ``cls`` whose lineage, or one folded
        into it, is ``related`` to ``lineage`` (that of the finding just folded into ``fid``)
        with an ``akin`` signature: its occurrences, hits and folded APIs move to ``fid``, it
        is listed in ``fid``'s ``summary["also"]``, and its row and evidence go."""
        for r in self.store.query(
                "SELECT id, outlier_api, signature, finding_class, hits, last_seen, reproducer,"
                " json_extract(summary, '$.lineage') AS lineage, json_extract(summary, '$.also') AS also"
                " FROM findings WHERE finding_class=? AND id>? AND json_extract(summary, '$.lineage') IS NOT NULL"
                " ORDER BY id", (cls, fid)):
            if not _relates(r, signature, lineage, related, akin):
                continue
            own, also = json.loads(r["lineage"]), json.loads(r["also"] or "[]")
            self.store.execute(
                "INSERT INTO finding_occurrences(finding_id, group_key, dtype, members, hits, first_seen)"
                " SELECT ?, group_key, dtype, members, hits, first_seen FROM finding_occurrences WHERE finding_id=?"
                " ON CONFLICT(finding_id, group_key, dtype) DO UPDATE SET hits = hits + excluded.hits",
                (fid, r["id"]))
            self.store.execute("DELETE FROM finding_occurrences WHERE finding_id=?", (r["id"],))
            self.store.execute("UPDATE findings SET hits = hits + ?, last_seen = max(last_seen, ?) WHERE id=?",
                               (r["hits"], r["last_seen"], fid))
            self._list_also(fid, [{"api": r["outlier_api"], "signature": r["signature"], "lineage": own}, *also])
            self.store.execute("DELETE FROM finding_evidence WHERE finding_id=?", (r["id"],))
            self.store.execute("DELETE FROM findings WHERE id=?", (r["id"],))
            self.absorbed.append((int(r["id"]), fid, r["reproducer"]))

    #: how many other APIs or signatures a finding's ``summary["also"]`` lists at most
    ALSO_LIMIT = 20

    def _also(self, fid: int, f: Finding) -> None:
        """List ``f``'s outlier API and signature (and class) in finding ``fid``'s
        ``summary["also"]`` where they differ from its own: a fold across APIs, triggers or
        classes stays visible."""
        r = self.store.query("SELECT outlier_api, signature, finding_class, summary FROM findings WHERE id=?",
                             (fid,))[0]
        seen: dict[str, Any] = {"api": f.outlier_api or "", "signature": f.signature}
        if f.finding_class.value != r["finding_class"]:
            seen["class"] = f.finding_class.value
        if f.summary.get("lineage"):
            seen["lineage"] = f.summary["lineage"]
        self._list_also(fid, [seen], r)

    def _list_also(self, fid: int, entries: Sequence[Mapping[str, Any]], row: Any = None) -> None:
        """Add ``entries`` (``api``, ``signature``, optional ``class`` and ``lineage``) to finding
        ``fid``'s ``summary["also"]``, but not its own API and signature, nor one listed already,
        nor more than :attr:`ALSO_LIMIT`."""
        r = row if row is not None else self.store.query(
            "SELECT outlier_api, signature, summary FROM findings WHERE id=?", (fid,))[0]
        summary = json.loads(r["summary"] or "{}")
        also = summary.setdefault("also", [])
        listed = {(a["api"], a["signature"], a.get("class")) for a in also}
        changed = False
        for e in entries:
            key = (e["api"], e["signature"], e.get("class"))
            if key == (r["outlier_api"], r["signature"], None) or key in listed or len(also) >= self.ALSO_LIMIT:
                continue
            also.append(dict(e))
            listed.add(key)
            changed = True
        if changed:
            self.store.execute("UPDATE findings SET summary=? WHERE id=?", (json.dumps(summary, default=str), fid))

    def _occurrence(self, fid: int, f: Finding) -> None:
        self.store.execute(
            "INSERT INTO finding_occurrences(finding_id, group_key, dtype, members, hits, first_seen)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(finding_id, group_key, dtype)"
            " DO UPDATE SET hits = hits + excluded.hits",
            (fid, f.group_key, f.dtype or "-",
             json.dumps([m.get("api") for m in f.members]), f.hits, f.first_seen))

    def occurrences(self, finding_id: int) -> list[dict[str, Any]]:
        """Where a finding was seen: ``{"group_key", "dtype", "members", "hits"}`` per group
        and dtype, first seen first."""
        rows = self.store.query(
            "SELECT group_key, dtype, members, hits FROM finding_occurrences WHERE finding_id=?"
            " ORDER BY first_seen, group_key, dtype", (finding_id,))
        return [{**dict(r), "members": json.loads(r["members"])} for r in rows]

    def add_hit(self, finding_id: int, when: float) -> None:
        """Count one more hit of a filed finding, seen at ``when`` (``time.time()``)."""
        self.store.execute("UPDATE findings SET hits = hits + 1, last_seen=? WHERE id=?",
                           (when, finding_id))

    def set_reproducer(self, finding_id: int, path: str, verified: bool) -> None:
        """Record the reproducer's path and whether replaying it showed the divergence."""
        self.store.execute("UPDATE findings SET reproducer=?, verified=? WHERE id=?",
                           (path, int(verified), finding_id))

    def findings(self, campaign_id: int | None = None, *,
                 verified_only: bool = False) -> list[Finding]:
        """Findings (of one campaign, or all), oldest first."""
        sql, params = "SELECT * FROM findings", []
        where = []
        if campaign_id is not None:
            where.append("campaign_id=?")
            params.append(campaign_id)
        if verified_only:
            where.append("verified=1")
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [self._row(r) for r in self.store.query(sql + " ORDER BY id", params)]

    def finding(self, finding_id: int) -> Finding | None:
        """One finding by id, or None."""
        rows = self.store.query("SELECT * FROM findings WHERE id=?", (finding_id,))
        return self._row(rows[0]) if rows else None

    def evidence(self, finding_id: int) -> tuple[bytes, bytes] | None:
        """``(inputs, outputs)`` msgpack blobs of a finding, or None."""
        rows = self.store.query(
            "SELECT inputs, outputs FROM finding_evidence WHERE finding_id=?", (finding_id,))
        return (bytes(rows[0]["inputs"]), bytes(rows[0]["outputs"])) if rows else None

    @staticmethod
    def _row(r: Any) -> Finding:
        return Finding(
            id=r["id"], campaign_id=r["campaign_id"], group_key=r["group_key"],
            relation=r["relation"], finding_class=FindingClass(r["finding_class"]),
            outlier_library=r["outlier_library"], outlier_api=r["outlier_api"] or None,
            dtype=r["dtype"], signature=r["signature"], members=json.loads(r["members"]),
            summary=json.loads(r["summary"]), input_recipe=json.loads(r["input_recipe"]),
            reproducer=r["reproducer"], verified=bool(r["verified"]), hits=r["hits"],
            first_seen=r["first_seen"], last_seen=r["last_seen"],
        )

    def counts_by(self, campaign_id: int | None, *columns: str) -> list[dict[str, Any]]:
        """Finding counts grouped by some of: finding_class, outlier_library, group_key, dtype."""
        allowed = {"finding_class", "outlier_library", "group_key", "dtype", "verified"}
        bad = set(columns) - allowed
        if bad or not columns:
            raise ValueError(f"counts_by columns must be among {sorted(allowed)}")
        cols = ", ".join(columns)
        where, params = ("WHERE campaign_id=?", [campaign_id]) if campaign_id is not None else ("", [])
        rows = self.store.query(
            f"SELECT {cols}, count(*) AS n FROM findings {where} GROUP BY {cols} ORDER BY n DESC",
            params)
        return [dict(r) for r in rows]


def histogram_of(dispersions: Iterable[float]) -> list[int]:
    """Counts of log10(dispersion) per :data:`DISPERSION_BINS` bin (zeros in the first bin)."""
    counts = [0] * (len(DISPERSION_BINS) + 1)
    for d in dispersions:
        x = -math.inf if d <= 0 else math.log10(d)
        for i, edge in enumerate(DISPERSION_BINS):
            if x <= edge:
                counts[i] += 1
                break
        else:
            counts[-1] += 1
    return counts
