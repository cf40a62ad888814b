"""A fuzzing campaign: the driver that wires the search, the budget, the engine, triage and the
store together (``xamt fuzz``).

One iteration of a group ("group-iteration") runs every member of the group on one input in the
sandbox and compares the outputs. The streaming engine (:mod:`xamt.fuzz.engine`) keeps a window
of them in flight and hands each back as it completes; the cost-aware schedule
(:mod:`xamt.fuzz.schedule`) says what runs next. Each run is judged by the oracles
(status/crash/internal signals from :mod:`xamt.oracle`, value agreement from the comparator), its
dispersion feeds the search (:mod:`xamt.fuzz.search`), and new divergences go to triage, which
works on a thread of its own beside fuzzing (:mod:`xamt.triage.runner`); this thread files what
it verified.

Nothing is lost to a crash of the fuzzer itself: at least every ``checkpoint_seconds`` and every
window of completed iterations, the campaign's counters, a time-series sample and the search
state of the groups touched are committed to the store; ``--resume`` continues the latest
unfinished campaign from there (at most one window of iterations runs again). Findings are
committed as they are filed.
"""
from __future__ import annotations

import collections
import functools
import hashlib
import json
import logging
import platform
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from xamt.command import parse_duration
from xamt.errors import ConfigError, XamtError
from xamt.findings import Campaign, FindingsStore, histogram_of
from xamt.fuzz.devices import DevicePlan, discover, resolve, with_device_twins
from xamt.fuzz.engine import Engine, LocalExecutor
from xamt.fuzz.memory import MemoryGovernor, machine_memory
from xamt.fuzz.schedule import SLOW, Proposal, Schedule, ScheduleSettings, load_settings
from xamt.fuzz.search import Search
from xamt.groups.agree import Agreement, input_dtypes
from xamt.exec.group import ExecItem
from xamt.log import get_logger
from xamt.oracle import DEATH_STATUSES, ErrorKinds, SignalKind, error_key, judge_statuses
from xamt.progress import Progress
from xamt.store import Schema, Store, default_db_path
from xamt.triage.dedup import Candidate, akin, input_signature, load_triage_per_cause, one_failure, same_cause
from xamt.triage.pipeline import Triage
from xamt.triage.reference import call_rank, implementation, referee_index
from xamt.triage.runner import TriageRunner

__all__ = ["FuzzConfig", "FuzzResult", "run_campaign", "FUZZ_STATE_SCHEMA", "parse_budget",
           "comparable_members", "status_suspects", "isolated_cost"]

_log = get_logger("fuzz")
#: niceness of the isolation pool's workers (see _LocalBackend)
_ISOLATION_NICE = 10

FUZZ_STATE_SCHEMA = Schema(
    component="fuzz_state",
    version=1,
    tables=("fuzz_group_state", "fuzz_seen"),
    statements=(
        # the search state of one group in one campaign (corpus, counters), rewritten at every checkpoint
        "CREATE TABLE IF NOT EXISTS fuzz_group_state ("
        " campaign_id INTEGER NOT NULL, group_key TEXT NOT NULL, state TEXT NOT NULL,"
        " PRIMARY KEY (campaign_id, group_key))",
        # divergences already triaged (pre-triage key) and what came of them
        "CREATE TABLE IF NOT EXISTS fuzz_seen ("
        " campaign_id INTEGER NOT NULL, prekey TEXT NOT NULL, finding_id INTEGER,"
        " outcome TEXT NOT NULL, hits INTEGER NOT NULL, PRIMARY KEY (campaign_id, prekey))",
    ),
)


def parse_budget(text: str | float | int) -> float:
    """Seconds from ``"90"``, ``"90s"``, ``"10m"``, ``"1.5h"`` (:func:`xamt.command.parse_duration`)."""
    return parse_duration(text, "budget")


@dataclass
class FuzzConfig:
    """Settings of one campaign (``xamt fuzz`` options)."""

    out: Path
    libraries: Sequence[str] | None = None
    budget_s: float = 300.0
    workers: int = 2
    seed: int = 0
    resume: bool = False
    guided: bool = True
    #: group-iterations in flight (None: ``window_per_worker`` of ``fuzzing.toml`` per worker)
    window: int | None = None
    timeout: float = 10.0
    memory_limit: int | None = 4 << 30
    #: bytes the campaign's process tree should stay within (None: ``memory_share`` of
    #: ``fuzzing.toml`` times this machine's memory); see :mod:`xamt.fuzz.memory`
    memory_budget: int | None = None
    relations: Sequence[str] | None = None
    triage: bool = True
    minimise_budget: int = 24
    verify_timeout: float = 120.0
    progress: bool = True
    max_groups: int | None = None
    #: another ``fuzzing.toml`` (None: the packaged one)
    settings_path: Path | None = None
    #: ``"auto"`` (every device the libraries report), ``"cpu"`` (no device oracle) or a tuple
    #: of device names (:func:`xamt.fuzz.devices.parse_devices`)
    devices: str | tuple[str, ...] = "auto"
    #: adapters of libraries outside :mod:`xamt.libraries` (plugins; the tests' fake library)
    extra_adapters: Sequence[Any] = ()
    #: run on Ray (``--ray``): ``local``, ``auto`` or a cluster address; None: one local pool
    ray: str | None = None


@dataclass
class FuzzResult:
    """What a campaign did (also in the store)."""

    campaign_id: int
    groups: int
    iterations: int
    executions: int
    seconds: float
    findings: int
    candidates: int
    dropped: dict[str, int] = field(default_factory=dict)
    triaged: int = 0
    by_class: dict[str, int] = field(default_factory=dict)
    #: the device oracle's line (on, with which devices, or why it was skipped)
    devices: str = ""
    #: findings whose outlier is a member placed on a device other than the CPU
    device_findings: int = 0
    #: distinct divergences seen (triaged or not), by signal (value, status, crash, internal)
    divergences_by_signal: dict[str, int] = field(default_factory=dict)
    #: groups that showed at least one divergence
    groups_diverging: int = 0
    #: distinct divergences never triaged (the budget ended first)
    not_triaged: int = 0
    #: seconds triage worked (beside fuzzing); seconds the libraries spent compiling, by their
    #: own clocks (``compile_clock_ref``); seconds of iterations in the slow lane
    triage_s: float = 0.0
    compile_s: float = 0.0
    slow_lane_s: float = 0.0
    #: groups that ran at least once
    groups_visited: int = 0
    #: with --ray: the nodes, iterations by node, nodes lost and jobs run again (one line)
    ray: str = ""

    @property
    def iterations_per_s(self) -> float:
        return self.iterations / self.seconds if self.seconds > 0 else 0.0


def comparable_members(run: Any) -> set[int]:
    """Positions (in ``run.members``) of the members whose results can be compared on this
    input: those that take every optional argument the input gives. numpy's ``trace(...,
    dtype=uint8)`` and torch's ``trace`` (no such parameter) compute different things."""
    group = run.group
    values = run.values or {}
    given = {s.index for s in getattr(group, "slots", [])
             if not getattr(s, "shared", True) and values.get(s.index) is not None}
    if not given:
        return set(range(len(run.members)))
    return {i for i, mi in enumerate(run.members) if given <= group.members[mi].plan.slots()}


def lacked_dtype(values: Mapping[int, Any] | None, adapter: Any) -> str | None:
    """The first dtype that the input ``values`` name (a dtype argument, an array's dtype) and
    ``adapter``'s library lacks (not among its ``dtypes``), or None. Such a library refusing the
    input shows the range of its dtypes, no divergence: mxnet has no uint64 at all."""
    known = getattr(adapter, "dtypes", None)
    if not known:
        return None
    for v in (values or {}).values():
        name = v.name if isinstance(v, np.dtype) else v.dtype.name if isinstance(v, np.ndarray) else None
        if name is not None and name not in known:
            return name
    return None


def status_suspects(run: Any, signals: Sequence[Any], call_order: Sequence[str],
                    comparable: set[int] | None = None,
                    adapters: Mapping[str, Any] | None = None) -> list[tuple[int, str, str]]:
    """One status suspect per (library, refusal rule): the members of one library that
    refuse an input the same way are one divergence, named by the plainest call (the
    function before its method, out= and compiled forms; ``triage.toml``).

    In a cross-library group where a single library returns and two or more refuse, that
    library is the odd one out (scipy's ``hfft(n=0)`` returns where numpy, jax and torch
    refuse): it is the one suspect, a *validation* finding ("accepts an input that others
    reject"). The libraries that refuse are never blamed for it, not even when they declare
    they reimplement the one that returns (``numpy.tri(N=-1)``). With ``adapters``, libraries
    that compute with one implementation count as one (:func:`~xamt.triage.reference.
    implementation`: numpy returning with dask, which computes with it, is still alone)."""
    group = run.group

    def plainness(pos: int) -> tuple[int, int]:
        return (call_rank(group.members[run.members[pos]].call, call_order), pos)

    refusing = sorted(s.member for s in signals if s.kind == SignalKind.STATUS)
    if getattr(group, "relation", "") == "cross_library" and refusing:
        positions = comparable if comparable is not None else set(range(len(run.members)))
        returning = [i for i in sorted(positions) if run.results[i].ok]
        lib = lambda pos: implementation(group.members[run.members[pos]], adapters or {})  # noqa: E731
        refusing_libs = {lib(i) for i in refusing}
        if len({lib(i) for i in returning}) == 1 and len(refusing_libs) >= 2:
            first = run.results[refusing[0]]
            rule = error_key(first.error_type, first.error_message)
            why = f"returns where {len(refusing_libs)} other implementations raise ({rule})"
            return [(min(returning, key=plainness), why, f"returns where others raise | {rule}")]
    buckets: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for s in signals:
        if s.kind != SignalKind.STATUS:
            continue
        r = run.results[s.member]
        m = group.members[run.members[s.member]]
        buckets.setdefault((m.library, error_key(r.error_type, r.error_message)), []).append((s.member, s.why))
    out = []
    for (_, ekey), entries in buckets.items():
        pos, why = min(entries, key=lambda e: plainness(e[0]))
        out.append((pos, why, ekey))
    return out


def _select(groups: list[Any], libraries: Sequence[str] | None, relations: Sequence[str] | None,
            max_groups: int | None) -> list[Any]:
    """Groups restricted to the chosen libraries (members of others dropped; a group needs two
    members left) and relation kinds."""
    import dataclasses

    out = []
    for g in groups:
        if relations is not None and g.relation not in relations:
            continue
        if libraries is not None:
            keep = [i for i, m in enumerate(g.members) if m.library in libraries]
            if len(keep) < 2:
                continue
            if len(keep) < len(g.members):
                g = dataclasses.replace(g, members=[g.members[i] for i in keep],
                                        member_info=[g.member_info[i] for i in keep])
        if len(g.members) < 2 or not g.seeds:
            continue
        out.append(g)
    if max_groups is not None:
        rng = np.random.default_rng(0)
        idx = sorted(rng.choice(len(out), size=min(max_groups, len(out)), replace=False)) if out else []
        out = [out[i] for i in idx]
    return out


def isolated_cost(run: Any) -> float:
    """What an iteration on the isolation worker cost the campaign, for the schedule and the
    search: the CPU seconds its calls used, a death's included where the sandbox could tell
    (``Outcome.cpu_s``; else its wall seconds, bounded by its allowance). That worker is niced
    and runs on the CPU the others leave, so its wall time is mostly waiting: charged by it, a
    group holding an API that had killed a worker elsewhere (x:lcm) met its 30-s cap in two
    iterations, and x:hyp2f1, whose JAX member hangs in every value regime, stayed at 88 of its
    100 floor iterations with 33 s charged.

    A call's compiling is not charged (as in the slow lane): the share of its CPU seconds that
    its compile clock (wall seconds) takes of its wall seconds is left out. The isolation worker
    dies every few seconds for one group or another, and every group it held compiles again
    there: x:svd/linalg, ten members, met its floor cap at 16 iterations recompiling."""
    cost = 0.0
    for r in run.results:
        if r.status in DEATH_STATUSES:
            cpu = getattr(r.outcome, "cpu_s", None)
            cost += r.duration_s if cpu is None else min(cpu, r.duration_s)
        elif r.cpu_s:
            compiling = min(1.0, (r.compile_s or 0.0) / r.duration_s) if r.duration_s else 0.0
            cost += r.cpu_s * (1.0 - compiling)
    return cost


class _Fuzzer:
    """One campaign's state: the search, the schedule, triage and the store's side of both."""

    def __init__(self, cfg: FuzzConfig, store: Store, groups: list[Any], adapters: dict[str, Any],
                 pool: Any, campaign: Campaign, fstore: FindingsStore, settings: ScheduleSettings):
        from xamt.exec.group import GroupExecutor
        from xamt.inputs.mutate import mutate, revalue

        self.cfg = cfg
        self.settings = settings
        self.stopped = False
        self.store = store
        self.fs = fstore
        self.campaign = campaign
        self.groups = {g.key: g for g in groups}
        self.adapters = adapters
        self.kinds = ErrorKinds.load()
        # a death in fuzzing is not confirmed in the pool: triage runs it again anyway
        self.executor = GroupExecutor(pool, adapters, timeout=cfg.timeout, confirm_deaths=False)
        # triage runs on a thread of its own with its own executor over the same pool
        self.triage = Triage(GroupExecutor(pool, adapters, timeout=cfg.timeout), adapters, self.kinds,
                             Path(cfg.out), minimise_budget=cfg.minimise_budget,
                             verify_timeout=cfg.verify_timeout, referees=referee_index(groups))
        self._mutate_fn, self._revalue_fn = mutate, revalue
        self._dtypes = {g.key: (g.common_dtypes() or None, g.any_dtypes() or None) for g in groups}
        # one comparator setting per group, built once: judge() runs for every group-iteration
        self._agreement = {g.key: Agreement(g.tolerance or None) for g in groups}
        seeds = {g.key: g.seed_inputs() for g in groups}
        # the registry build already ran the seeds: the campaign starts from their mutations
        self.search: Search[Any] = Search(seeds, self._mutate, guided=cfg.guided, seed=cfg.seed,
                                          run_seeds=False)
        self.schedule: Schedule | None = None
        self.dispersions: dict[str, list[float]] = {k: [] for k in self.groups}
        self.executions: dict[str, int] = {k: 0 for k in self.groups}
        self.seen: dict[str, dict[str, Any]] = {}
        #: candidates sent to triage per root cause as seen before triage (Candidate.cause)
        self.cause_tries: collections.Counter = collections.Counter()
        self.triage_per_cause = load_triage_per_cause()
        #: whether two findings' lineages share a root cause (the store folds the later one)
        self._related = functools.partial(same_cause, words=self.triage.lineage.sibling_words)
        #: whether two findings' signatures may be one cause (NaN and +inf, ``trigger_kin``)
        self._akin = functools.partial(akin, kin=self.triage.lineage.trigger_kin)
        #: whether two findings of one API in two classes are one failure (a hang, a refusal)
        self._crossed = functools.partial(one_failure, pairs=self.triage.lineage.one_failure)
        self.runner: TriageRunner | None = None
        self.not_triaged: list[Candidate] = []
        self.dropped: dict[str, int] = {}
        self.candidates = 0
        self.findings = 0
        self.by_class: dict[str, int] = {}
        self.finding_times: list[float] = []
        #: seconds of every iteration that ran in the slow lane: (group, compile signature, s)
        self.compiles: list[tuple[str, str, float]] = []
        # seconds the members' libraries spent compiling, by their own clocks
        self.compile_by_library: collections.Counter[str] = collections.Counter()
        #: worker seconds by where they went (see _account), carried over by a resumed campaign
        self.worker_time: collections.Counter = collections.Counter(campaign.settings.get("worker_s", {}))
        self.worker_iterations: collections.Counter = collections.Counter(campaign.settings.get("worker_iterations", {}))
        self.compile_by_role: collections.Counter = collections.Counter(campaign.settings.get("compile_by_role", {}))
        self.worker_time_by_group: collections.Counter = collections.Counter()
        #: APIs (library, name) whose call killed a worker in this run, and the groups holding
        #: one: their iterations go to the backend's isolation pool, if it has one
        self.killers: set[tuple[str, str]] = set()
        self._isolated: set[str] = set()
        #: (library, qualname) -> keys of the groups holding that API (a new killer isolates them
        #: without a pass over every group)
        self._holders: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
        for g in groups:
            for m in g.members:
                self._holders[(m.library, m.qualname)].append(g.key)
        #: deaths (crash, hang, out of memory) per (group, member), and the members left out of
        #: their group's iterations after ``quarantine_after`` of them (:meth:`_quarantine`)
        self.strikes: collections.Counter = collections.Counter()
        self.quarantined: dict[str, set[int]] = {}
        self._dirty: set[str] = set()
        self._since_checkpoint = 0
        self._last_checkpoint = 0.0
        self._last_sample = 0.0
        self._last_figures = 0.0
        self._last_progress = 0.0
        self._rates: collections.deque = collections.deque(maxlen=64)
        self._t0 = time.monotonic()
        self.start_elapsed = 0.0   # of a resumed campaign: the seconds it had run before
        self.iterations_run = 0    # by this run (a resumed campaign counts on from its store)
        self._iterations_before = 0
        self.window = cfg.window or settings.window_per_worker * cfg.workers
        self.progress = Progress(False, total=None)
        #: sizes the workers' memory growth to the budget (a local campaign; None on Ray)
        self.memory: MemoryGovernor | None = None

    # -- search hooks -----------------------------------------------------------------------
    def _mutate(self, key: str, parent: Any, rng: np.random.Generator) -> Any:
        common, anyd = self._dtypes[key]
        # mostly dtypes every member accepts; now and then one only some accept (status oracle)
        dtypes = anyd if (anyd and rng.random() < 0.1) else common
        child, _op = self._mutate_fn(self.groups[key], parent, rng, dtypes=dtypes)
        return child

    def _revalue(self, key: str, parent: Any, rng: np.random.Generator, regime: str) -> Any:
        child, _op = self._revalue_fn(self.groups[key], parent, rng, regime, self.settings.regimes,
                                      max_log10_scale=self.settings.max_log10_scale)
        return child

    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    # -- persistence -----------------------------------------------------------------------
    def restore(self) -> None:
        from xamt.inputs.model import GroupInput

        cid = self.campaign.id
        for row in self.store.query("SELECT group_key, state FROM fuzz_group_state WHERE campaign_id=?", (cid,)):
            st = self.search.groups.get(row["group_key"])
            if st is None:
                continue
            data = json.loads(row["state"])
            st.iterations = data["iterations"]
            st.best_dispersion = data["best"]
            st.gain = data["gain"]
            st.retired = data["retired"]
            st.cost = data.get("cost", st.cost)
            st.corpus.entries = [(f, GroupInput.from_json(i)) for f, i in data["corpus"]]
            self.executions[row["group_key"]] = data.get("executions", 0)
            self.dispersions[row["group_key"]] = data.get("dispersions", [])
        for row in self.store.query("SELECT prekey, finding_id, outcome, hits FROM fuzz_seen WHERE campaign_id=?", (cid,)):
            self.seen[row["prekey"]] = {"finding": row["finding_id"], "outcome": row["outcome"], "hits": row["hits"]}
        self.findings = sum(1 for v in self.seen.values() if v["finding"] is not None)
        for row in self.fs.counts_by(cid, "finding_class"):
            self.by_class[row["finding_class"]] = row["n"]
        self.finding_times = list(self.campaign.settings.get("finding_times_s", []))
        for key, members in self.campaign.settings.get("quarantined", {}).items():
            if key in self.groups:
                self.quarantined[key] = {int(m) for m in members}

    def checkpoint(self, touched: Iterable[str], elapsed: float, *, figures: bool = False) -> None:
        """Commit the search state of ``touched`` groups and the campaign's counters (one
        transaction: a campaign killed outright resumes from here). The campaign's statistics
        (:meth:`_record_figures`) are recomputed at most every ``checkpoint_seconds``, or when
        ``figures`` says so: they read every group, and a checkpoint comes every window."""
        cid = self.campaign.id
        rows = []
        for key in touched:
            st = self.search.groups[key]
            head = json.dumps({
                "iterations": st.iterations, "best": st.best_dispersion if np.isfinite(st.best_dispersion) else 1e308,
                "gain": st.gain, "retired": st.retired, "cost": st.cost,
                "executions": self.executions[key],
                "dispersions": self.dispersions[key][-200:],
            })
            # the corpus entries' texts are kept on the inputs (most are unchanged since the last
            # checkpoint): the state is that JSON with the corpus spliced in
            corpus = ", ".join(f"[{json.dumps(f)}, {item.json_text()}]" for f, item in st.corpus.entries)
            rows.append((cid, key, f'{head[:-1]}, "corpus": [{corpus}]}}'))
        self.campaign.executions = sum(self.executions.values())
        with self.store.transaction():
            self.store.executemany("INSERT OR REPLACE INTO fuzz_group_state VALUES (?, ?, ?)", rows)
            self.campaign.settings["elapsed_s"] = elapsed
            self._record_state()
            now = time.monotonic()
            if figures or now - self._last_figures >= self.settings.checkpoint_seconds:
                self._last_figures = now
                self._record_figures()
            self.fs.update_campaign(self.campaign)
            if now - self._last_sample >= 1.0:
                self._last_sample = now
                self.fs.add_sample(cid, self.campaign.executions, self.campaign.iterations, self.findings)
        self._dirty.clear()
        self._since_checkpoint = 0
        self._last_checkpoint = time.monotonic()

    def _record_state(self) -> None:
        """The settings a resumed campaign starts from (every checkpoint: each is small)."""
        s = self.campaign.settings
        s["triage_s"] = round(self.runner.seconds if self.runner else 0.0, 3)
        s["finding_times_s"] = [round(t, 2) for t in self.finding_times[:10]]
        s["worker_s"] = {k: round(v, 3) for k, v in sorted(self.worker_time.items())}
        s["worker_iterations"] = dict(sorted(self.worker_iterations.items()))
        s["compile_by_role"] = {k: round(v, 3) for k, v in sorted(self.compile_by_role.items())}
        # APIs whose calls killed a worker, and how many groups that isolated
        s["isolated"] = {"apis": sorted(f"{lib}:{name}" for lib, name in self.killers),
                         "groups": len(self._isolated)}
        # members left out of their groups (a resumed campaign starts with them left out)
        s["quarantined"] = {k: sorted(v) for k, v in sorted(self.quarantined.items())}
        s["compile_s"] = round(sum(self.compile_by_library.values()), 3)
        s["compile_by_library"] = {k: round(v, 3) for k, v in sorted(self.compile_by_library.items())}

    def _record_figures(self) -> None:
        """The campaign's statistics: the schedule's summary, the costliest groups, deaths and
        compilations (what the report and the benchmarks read; no resume needs them)."""
        s = self.campaign.settings
        if self.schedule is not None:
            s["schedule"] = self.schedule.summary()
        s["costliest_groups"] = [[k, round(v, 3)] for k, v in self.worker_time_by_group.most_common(20)]
        # every group whose members died (a crash, a hang, out of memory), most deaths first: a
        # group short of its floor is read against them (the top 20 alone left x:svd/linalg's and
        # x:lcm's out)
        deaths: collections.Counter = collections.Counter()
        for (k, _), n in self.strikes.items():
            deaths[k] += n
        s["deaths_by_group"] = deaths.most_common()
        s["slow_lane_s"] = round(sum(c[2] for c in self.compiles), 3)
        s["compiles"] = [[k, hashlib.blake2b(sig.encode(), digest_size=6).hexdigest(), round(t, 4)]
                         for k, sig, t in self.compiles[:5000]]

    def write_group_stats(self) -> None:
        cid = self.campaign.id
        for key, g in self.groups.items():
            st = self.search.groups[key]
            if not st.iterations:
                continue
            d = self.dispersions[key]
            self.fs.put_group_stats(cid, key, st.iterations, self.executions[key],
                                    max(d) if d else 0.0, histogram_of(d),
                                    members=[{"library": m.library, "api": m.qualname,
                                              **({"device": m.device} if m.device else {})}
                                             for m in g.members])

    # -- judging ---------------------------------------------------------------------------
    def judge(self, run: Any) -> tuple[float, bool | None]:
        """Signals and dispersion of one group run; queues new divergences for triage.

        Returns the dispersion and whether the run showed a divergence not seen before
        (None: no divergence; False: only known ones)."""
        group = run.group
        results = run.results
        key = group.key
        self.executions[key] += sum(1 for r in results if r.status != "skipped")
        signals = judge_statuses(results, self.kinds)
        comparable = comparable_members(run)
        nondet = {i for i, mi in enumerate(run.members) if group.member_info[mi].nondeterministic}
        ok = [i for i, r in enumerate(results) if r.ok and i not in nondet and i in comparable]
        dispersion = 0.0
        news: list[bool] = []
        if group.equivalence == "value" and len(ok) >= 2:
            agree = self._agreement[key]
            outs = [results[i].value for i in ok]
            # compared at the tolerance of the dtype the computation ran in (its inputs' too)
            flags, dispersion = agree.assess(outs, input_dtypes(run.values or {}))
            if not all(flags):
                bad = [ok[j] for j, f in enumerate(flags) if not f]
                news.append(self._candidate(run, "value", bad[0], "outputs differ beyond the tolerance",
                                            keep=comparable - nondet))
        # a member refusing an argument that the returning members do not take is no status
        # divergence: only members that take every argument given count on both sides
        returned = any(results[i].ok for i in comparable)
        statuses = [s for s in signals if s.kind != SignalKind.STATUS
                    or (s.member in comparable and returned and not self._lacks_dtype(run, s.member))]
        for s in statuses:
            if s.kind in (SignalKind.CRASH, SignalKind.INTERNAL):
                news.append(self._candidate(run, s.kind, s.member, s.why))
        for member, why, ekey in status_suspects(run, statuses, self.triage.call_order, comparable, self.adapters):
            news.append(self._candidate(run, SignalKind.STATUS, member, why, error=ekey))
        signals = statuses
        # a status divergence is as far apart as members can be
        if any(s.kind in (SignalKind.STATUS, SignalKind.CRASH, SignalKind.INTERNAL) for s in signals):
            dispersion = max(dispersion, 1e6)
        self.dispersions[key].append(float(dispersion) if np.isfinite(dispersion) else 1e12)
        if len(self.dispersions[key]) > 400:
            del self.dispersions[key][:200]
        return float(dispersion), (any(news) if news else None)

    def _lacks_dtype(self, run: Any, pos: int) -> bool:
        """Whether member ``pos``'s library lacks a dtype of the input (:func:`lacked_dtype`)."""
        adapter = self.adapters.get(run.group.members[run.members[pos]].library)
        return lacked_dtype(run.values, adapter) is not None

    def _candidate(self, run: Any, kind: Any, member: int, why: str, *,
                   keep: set[int] | None = None, error: str = "") -> bool:
        """Queue a divergence for triage; False when the same one was seen before.

        ``keep``: positions of the members triage may compare (the others are left out of the
        candidate); ``error``: a status divergence's refusal rule (:func:`error_key`), which
        replaces the input signature in its de-duplication key."""
        values = run.values or {}
        members, results = list(run.members), list(run.results)
        if keep is not None and len(keep) < len(members):
            kept = sorted(keep)
            member = kept.index(member)
            members = [members[i] for i in kept]
            results = [results[i] for i in kept]
        cand = Candidate(group=run.group, input=run.item.input, values=values,
                         members=members, results=results, kind=kind,
                         member=member, why=why, signature=error or input_signature(values))
        pk = json.dumps(cand.prekey)
        seen = self.seen.get(pk)
        if seen is not None:
            seen["hits"] += 1
            if seen["finding"] is not None:
                self.fs.add_hit(seen["finding"], time.time())
            return False
        cause = cand.cause(self.adapters)
        if self.cause_tries[cause] >= self.triage_per_cause:
            # the same API family, signal and trigger went to triage enough times already: one root
            # cause, one finding; triage's time goes to causes not seen yet
            self.seen[pk] = {"finding": None, "outcome": "skipped: root cause already triaged", "hits": 1}
            self.dropped["root cause already triaged"] = self.dropped.get("root cause already triaged", 0) + 1
            return False
        self.cause_tries[cause] += 1
        self.seen[pk] = {"finding": None, "outcome": "pending", "hits": 1}
        self.candidates += 1
        if self.runner is not None:
            self.runner.put(cand)
        else:
            self.not_triaged.append(cand)
        return True

    def file_results(self) -> None:
        """File what triage finished (this thread owns the store)."""
        if self.runner is None:
            return
        for cand, out in self.runner.results():
            pk = json.dumps(cand.prekey)
            fid = None
            if out.finding is not None:
                fid, new = self.fs.file(out.finding, out.inputs_blob, out.outputs_blob, related=self._related,
                                        akin=self._akin, crossed=self._crossed)
                if new:
                    self.findings += 1
                    cls = out.finding.finding_class.value
                    self.by_class[cls] = self.by_class.get(cls, 0) + 1
                    self.finding_times.append(self.elapsed())
                outcome = "filed" if new else "duplicate"
                if not new and out.finding.reproducer:
                    # the filed finding keeps its own reproducer; this attempt's copy goes
                    shutil.rmtree((Path(self.triage.out_dir) / out.finding.reproducer).parent, ignore_errors=True)
                self._absorbed(out.finding.finding_class.value)
            else:
                outcome = f"dropped: {out.dropped}"
                self.dropped[out.dropped or "?"] = self.dropped.get(out.dropped or "?", 0) + 1
            self.seen[pk].update(finding=fid, outcome=outcome)
            self.store.execute("INSERT OR REPLACE INTO fuzz_seen VALUES (?, ?, ?, ?, ?)",
                               (self.campaign.id, pk, fid, outcome, self.seen[pk]["hits"]))

    def _absorbed(self, cls: str) -> None:
        """Findings of class ``cls`` that the latest filing absorbed into an earlier one
        (:attr:`FindingsStore.absorbed`): what pointed at them points at that one, their
        reproducers go, and they no longer count."""
        for old, into, reproducer in self.fs.absorbed:
            for seen in self.seen.values():
                if seen["finding"] == old:
                    seen["finding"] = into
            self.store.execute("UPDATE fuzz_seen SET finding_id=? WHERE campaign_id=? AND finding_id=?",
                               (into, self.campaign.id, old))
            if reproducer:
                shutil.rmtree((Path(self.triage.out_dir) / reproducer).parent, ignore_errors=True)
            self.findings -= 1
            self.by_class[cls] = max(0, self.by_class.get(cls, 0) - 1)
        self.fs.absorbed.clear()

    # -- the engine's callbacks --------------------------------------------------------------
    def on_result(self, prop: Proposal, run: Any) -> None:
        key = prop.key
        # worker seconds: a task that died and the member-by-member runs after it count in full
        seconds = max(run.task_s, sum(r.duration_s for r in run.results))
        ran = any(r.status not in ("skipped", "cancelled") for r in run.results)
        d, novel = self.judge(run)
        assert self.schedule is not None
        if prop.lane == SLOW:
            self.compiles.append((key, prop.input.compile_signature(), seconds))
        for mi, r in zip(run.members, run.results):
            if r.compile_s:
                self.compile_by_library[run.group.members[mi].library] += r.compile_s
        deaths = len(run.killed)  # workers it killed (a raised MemoryError kills none)
        if deaths:
            self._note_killers(run)
        compile_s = self._account(prop, run, seconds, deaths)
        if prop.isolated:
            seconds = isolated_cost(run)
            if _log.isEnabledFor(logging.DEBUG):  # where the isolation worker's time goes
                _log.debug("isolated %s (%s): charged %.2f s; %s", key, prop.op, seconds,
                           [(r.status, round(r.duration_s, 2), r.cpu_s and round(r.cpu_s, 2),
                             r.compile_s and round(r.compile_s, 2)) for r in run.results])
        # the hang allowance's basis: a call's own time, not what it spent compiling (a JAX call
        # that compiled for 0.2 s set a 10-s allowance, and each hang of its group cost that)
        returned = [max(0.0, r.duration_s - (r.compile_s or 0.0)) for r in run.results
                    if r.status not in DEATH_STATUSES and r.status not in ("skipped", "cancelled", "unserializable")]
        self.schedule.done(prop, seconds, ran, rate=self._rate_now(), deaths=deaths,
                           slowest_call=max(returned) if returned else None,
                           workers=run.workers, killed=run.killed,
                           compile_s=compile_s)
        # after the charge: the charges it clears include this iteration's deaths (cleared
        # before them, x:lcm's four deaths at integer extremes, 30 s, met its floor cap at once)
        self._quarantine(run, prop.op)
        self.search.report(key, prop.input, d, cost=seconds, novel=novel, parent=not deaths)
        if all(r.status == "skipped" for r in run.results):
            self.search.retire(key)
        self.campaign.iterations += 1
        self._dirty.add(key)
        self._since_checkpoint += 1
        if self._since_checkpoint >= self.window:  # a kill loses at most one window of results
            self.checkpoint(list(self._dirty), self.start_elapsed + self.elapsed())

    def _quarantine(self, run: Any, op: str) -> None:
        """Count each member's deaths in ``run``; one that reached ``quarantine_after`` is left
        out of its group's later iterations while at least two members remain. Its deaths are
        triaged already (two per cause), and a member that hangs or crashes on many inputs would
        otherwise hold back the rest of its group (the cap) or fill the isolation worker. One
        that cannot be left out (its group would keep one member) makes its group avoid the
        value regime of ``op``, the iteration it died in (:meth:`Schedule.avoid`), and clears
        the group's charges once per regime newly avoided; so does any death in a
        cross-library group short of its floor (:meth:`Schedule.below_floor`)."""
        limit = self.settings.quarantine_after
        if not limit:
            return
        key = run.group.key
        for mi, r in zip(run.members, run.results):
            if r.status not in DEATH_STATUSES:
                continue
            self.strikes[(key, mi)] += 1
            out = self.quarantined.get(key, set())
            if mi in out:
                continue
            if self.strikes[(key, mi)] < limit:
                # a cross-library group short of its floor stops drawing the values a member
                # died on at once: deaths of two members, one each (torch's SIGFPE and JAX's hang
                # at integer extremes), charged x:lcm its whole floor cap in two iterations
                if self.schedule is not None and self.schedule.below_floor(key) and self.schedule.avoid(key, op):
                    self.schedule.forgive(key)
                continue
            if len(run.group.members) - len(out) <= 2:
                # it cannot be left out (two members are the least to compare): the group stops
                # drawing the kind of values it died on, and what it paid to learn them (hangs of
                # seconds each, a JAX special function's series) no longer holds it at its cap
                if self.schedule is not None and self.schedule.avoid(key, op):
                    self.schedule.forgive(key)
                continue
            self.quarantined[key] = out | {mi}
            member = run.group.members[mi]
            _log.info("quarantined %s:%s in %s after %d deaths", member.library, member.qualname, key,
                      self.strikes[(key, mi)])
            if self.schedule is not None:
                self.schedule.forgive(key)
            self._isolate_group(key)

    def _isolate_group(self, key: str) -> None:
        """Whether ``key`` runs apart: it does while a member it still calls is a killer."""
        left_out = self.quarantined.get(key, ())
        members = self.groups[key].members
        if any((m.library, m.qualname) in self.killers for i, m in enumerate(members) if i not in left_out):
            self._isolated.add(key)
        else:
            self._isolated.discard(key)

    def _note_killers(self, run: Any) -> None:
        """Remember the APIs whose calls died in ``run`` (the executor pins a death on the
        member that caused it), and isolate every group that holds one of them."""
        group = run.group
        self.isolate_apis((group.members[mi].library, group.members[mi].qualname)
                          for mi, r in zip(run.members, run.results) if r.status in DEATH_STATUSES)

    def isolate_apis(self, apis: Iterable[tuple[str, str]]) -> None:
        """Isolate every group holding one of ``apis`` (``(library, qualname)``): their calls
        killed workers (:class:`_LocalBackend`)."""
        new = set(apis) - self.killers
        if not new:
            return
        self.killers |= new
        for key in {k for api in new for k in self._holders.get(api, ())}:
            self._isolate_group(key)

    def _account(self, prop: Proposal, run: Any, seconds: float, deaths: int) -> float:
        """Where the workers' time went (the campaign's settings keep it): by lane, by whether
        the group had run the input's compile signature before, and on calls that died; and
        where the libraries' compile clocks ran, by the same roles. Returns the iteration's
        compile seconds."""
        assert self.schedule is not None
        t = self.worker_time
        if prop.lane == SLOW:
            where = "slow_lane"
        elif prop.input.compile_signature() in self.schedule.warm.get(prop.key, ()):
            where = "known_signature"
        else:
            where = "new_signature"
        kinds = [where, "structural" if prop.op == "structural" else "new_values"]
        if prop.isolated:
            kinds.append("isolated")
        if any(r.status == "timeout" for r in run.results):
            kinds.append("with_timeout")
        if deaths:
            kinds.append("with_death")
        compile_s = sum(r.compile_s for r in run.results if r.compile_s)
        for kind in kinds:
            t[kind] += seconds
            self.worker_iterations[kind] += 1
            if compile_s:
                self.compile_by_role[kind] += compile_s
        self.worker_time_by_group[prop.key] += seconds
        return compile_s

    def _rate_now(self) -> float:
        if len(self._rates) < 2:
            return 0.0
        (t0, i0), (t1, i1) = self._rates[0], self._rates[-1]
        return (i1 - i0) / (t1 - t0) if t1 > t0 else 0.0

    def on_tick(self, now: float) -> None:
        self.file_results()
        if self._since_checkpoint and now - self._last_checkpoint >= self.settings.checkpoint_seconds:
            self.checkpoint(list(self._dirty), self.start_elapsed + self.elapsed())
        if now - self._last_progress >= 0.5:
            self._last_progress = now
            self._rates.append((now, self.campaign.iterations))
            while len(self._rates) > 2 and now - self._rates[0][0] > 10.0:
                self._rates.popleft()
            self.progress.update(self.start_elapsed + self.elapsed(), self.status_line())
        if self.memory is not None:
            self.memory.tick(now)

    def status_line(self) -> str:
        """The live line: rates, coverage, the triage queue and findings by class."""
        elapsed = self.elapsed()
        visited = sum(1 for st in self.search.groups.values() if st.iterations)
        queue = self.runner.queued + (1 if self.runner.busy is not None else 0) if self.runner else 0
        classes = ", ".join(f"{k} {v}" for k, v in sorted(self.by_class.items()))
        sched = self.schedule.summary(detail=False) if self.schedule else {}
        return (f"{self.campaign.iterations:,} it · {self._rate_now():,.0f}/s now · "
                f"{(self.campaign.iterations - self._iterations_before) / max(elapsed, 1e-9):,.0f}/s overall · groups {visited:,}/{len(self.groups):,}"
                f" (floor left {sched.get('floor_left', 0):,}) · compile {sched.get('compiled_s', 0):,.0f}s · "
                f"triage queue {queue:,} · findings {self.findings}" + (f" ({classes})" if classes else ""))

    # -- the loop --------------------------------------------------------------------------
    def run(self, executor: Any, start_elapsed: float = 0.0) -> float:
        """Fuzz on ``executor`` (:class:`~xamt.fuzz.engine.LocalExecutor` over the pool, or the
        Ray one) until the budget is spent; returns the seconds it ran."""
        from xamt.replay import ReplayServer

        self.start_elapsed = start_elapsed
        self._t0 = time.monotonic()
        deadline = self._t0 + max(0.0, self.cfg.budget_s - start_elapsed)
        self.search.rng = np.random.Generator(np.random.PCG64([self.cfg.seed, self.campaign.iterations]))
        self.schedule = Schedule(self.groups, self.search, mutate=self._mutate, revalue=self._revalue,
                                 settings=self.settings, budget_s=self.cfg.budget_s,
                                 seed=self.cfg.seed + self.campaign.iterations, timeout=self.cfg.timeout)
        self.schedule.isolated = self._isolated  # one set: _note_killers adds to it as it learns
        iterations_before = self._iterations_before = self.campaign.iterations
        replayer = None
        if self.cfg.triage:
            # imports the libraries now, while fuzzing starts: the first replay finds it ready
            replayer = ReplayServer([a.import_name for a in self.adapters.values()],
                                    memory_limit=self.cfg.memory_limit)
            self.triage.replayer = replayer
            self.triage.deadline = deadline + self._grace()
            self.runner = TriageRunner(self.triage, self.campaign.id)
        self.progress = Progress(self.cfg.progress, total=self.cfg.budget_s, unit="s", log_every=15.0)
        stop = {"flag": False}
        prev = signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("flag", True))
        engine = Engine(self.groups, self.schedule, executor, window=self.window,
                        make_item=self._item,
                        on_result=self.on_result, on_tick=self.on_tick)
        try:
            engine.run(deadline, lambda: self.start_elapsed + self.elapsed(), lambda: stop["flag"])
            self.iterations_run = self.campaign.iterations - iterations_before
            self.stopped = stop["flag"]
            if self.runner is not None:
                # the divergence in triage gets a short grace to be filed; the queue's rest stays
                # untriaged (counted), the budget being wall time for fuzzing and triage alike
                self.not_triaged += self.runner.stop(0.0 if self.stopped else self._grace())
                self.file_results()
            return time.monotonic() - self._t0
        finally:
            signal.signal(signal.SIGTERM, prev)
            self.progress.update(self.start_elapsed + self.elapsed(), self.status_line(), force=True)
            self.progress.close()
            if replayer is not None:
                replayer.close()

    def _item(self, group: Any, prop: Proposal) -> ExecItem:
        """The executor's item for ``prop``. A call in the slow lane may take five times what its
        first call took in the registry build, if that is more than the hang allowance (compiled
        members get the compiled allowance anyway): a worker killed for a slow first call loses
        every program it compiled, and what it compiles next is slower. A call in the fast lane
        gets the schedule's limit (:meth:`~xamt.fuzz.schedule.Schedule.call_limit`), at most
        ``--timeout``, compiled members included."""
        allowance = limit = None
        if self.schedule is not None:
            if prop.lane == SLOW:
                allowance = max(self.cfg.timeout, 5.0 * self.schedule.first_call_s(prop.key))
            limit = self.schedule.call_limit(prop, self.cfg.timeout)
        left_out = self.quarantined.get(prop.key)
        members = [i for i in range(len(group.members)) if i not in left_out] if left_out else None
        return ExecItem(group, prop.input, members=members, tag=prop.key, timeout=allowance, limit=limit,
                        isolate=prop.isolated, sticky=prop.sticky)

    def _grace(self) -> float:
        return min(30.0, 0.05 * self.cfg.budget_s)


class _LocalBackend:
    """Where a local campaign runs: one sandbox pool shared by fuzzing and triage, and once a
    call has killed a worker, an *isolation pool* of one worker at lower priority for the groups
    holding an API that did (``ExecItem.isolate``). A worker that dies loses every program it
    compiled, and the groups it held compile again: APIs that crash or hang again and again
    kill the isolation worker instead, and only get the CPU the others leave. The isolation pool
    has a zygote of the main runtime only; the calls of other runtimes (a library in a venv of
    its own) go to their pools of the main pool set.

    The isolation pool starts on a thread of its own when first asked for (its zygote imports
    every library); until it is ready, isolated items run on the main pool."""

    def __init__(self, pool: Any, pool_kwargs: dict[str, Any] | None = None):
        self.pool = pool
        self._kwargs = pool_kwargs
        self._isolation: Any = None
        self._isolation_own: Any = None  # its own pool (the others' runtimes are the main pool's)
        self._starting: threading.Thread | None = None
        self._closed = False
        self._lock = threading.Lock()

    def isolation(self) -> Any:
        """The isolation pool, or None while it starts (or when there is none)."""
        if self._isolation is not None or self._kwargs is None:
            return self._isolation
        with self._lock:
            if self._starting is None and not self._closed:
                self._starting = threading.Thread(target=self._start_isolation, name="xamt-isolation-pool",
                                                  daemon=True)
                self._starting.start()
        return None

    def _start_isolation(self) -> None:
        from sandbox import PoolSet
        from xamt.exec.pools import MAIN_RUNTIME, open_pool

        # a zygote and worker of the main runtime only: the other runtimes' calls of isolated
        # groups go to their own pools (a second zygote for every runtime held some GiB in a
        # campaign over eighteen libraries, most of them for runtimes no killer lives in)
        kwargs = {k: v for k, v in (self._kwargs or {}).items() if k != "runtimes"}
        try:
            own = open_pool(workers=1, spares=1, nice=_ISOLATION_NICE, **kwargs)
        except Exception as exc:  # the main pool still runs everything: said, not fatal
            _log.warning("isolation pool not started (%s: %s); isolated groups run on the main pool",
                         type(exc).__name__, exc)
            self._kwargs = None
            return
        others = {n: p for n, p in getattr(self.pool, "pools", {}).items() if n != MAIN_RUNTIME}
        pool = PoolSet({MAIN_RUNTIME: own, **others}, default=MAIN_RUNTIME) if others else own
        with self._lock:
            if self._closed:
                own.close(wait=False)
                return
            self._isolation, self._isolation_own = pool, own
        _log.info("isolation pool ready: %s", own.describe())

    def executor(self, group_executor: Any) -> LocalExecutor:
        return LocalExecutor(self.pool, group_executor, isolation=self.isolation)

    def sandbox_pools(self) -> list[Any]:
        """Every :class:`sandbox.SandboxPool` now running: one per runtime, of the main pool
        and of the isolation pool once it started."""
        out: list[Any] = []
        for pool in (self.pool, self._isolation_own):
            if pool is not None:
                out.extend(getattr(pool, "pools", {None: pool}).values())
        return out

    def describe(self) -> str:
        return self.pool.describe()

    def close(self) -> dict[str, Any]:
        """Close both pools; the main pool's counters, with the isolation pool's under
        ``isolation`` when it ran."""
        with self._lock:
            self._closed = True
            iso = self._isolation_own
        self.pool.close(wait=False)
        stats = dict(self.pool.stats)
        if iso is not None:
            iso.close(wait=False)
            stats["isolation"] = dict(iso.stats)
        return stats


class _RayBackend:
    """Where a campaign on Ray runs: one actor per node (:mod:`xamt.fuzz.cluster`). Triage and
    device discovery send their few tasks to the actor that holds the group."""

    def __init__(self, cfg: FuzzConfig, adapters: dict[str, Any], pool_kwargs: dict[str, Any]):
        from xamt.exec.cluster import RaySession, RemotePool
        from xamt.fuzz.cluster import CampaignJobs

        self.session = RaySession(cfg.ray, CampaignJobs(adapters, cfg.timeout), pool_kwargs,
                                  local_cpus=cfg.workers, out_dir=str(cfg.out))
        self.shards = self.session.shards
        cfg.workers = self.shards.workers  # the window and the record count the cluster's workers
        self.pool = RemotePool(self.shards)
        self._executor: Any = None
        self.final: dict[str, Any] = {}

    def executor(self, group_executor: Any) -> Any:
        from xamt.fuzz.cluster import RayExecutor

        self._executor = RayExecutor(self.shards)
        return self._executor

    def describe(self) -> str:
        return self.shards.describe()

    def close(self) -> dict[str, Any]:
        """The pools' counters; :attr:`final` then holds this run's nodes, iterations by node,
        nodes lost, iterations run again, groups moved and Ray calls."""
        try:
            return self.session.close()["pool"]
        finally:
            by_node = dict(self._executor.by_node) if self._executor is not None else {}
            self.final = {**self.session.final, "iterations_by_node": by_node}


def _ray_line(run: dict[str, Any] | None) -> str:
    if not run:
        return ""
    nodes = ", ".join(f"{n} ({run['workers'].get(n, 0)} workers, {run['iterations_by_node'].get(n, 0):,} it)"
                      for n in run["nodes"])
    lost = f"; lost {', '.join(run['lost'])}, {run['resubmitted']} iteration(s) run again" if run["lost"] else ""
    moved = f"; {run['moved']:,} group(s) moved to a less loaded node" if run.get("moved") else ""
    return (f"ray at {run['address']}: {len(run['nodes'])} node(s): {nodes}{lost}{moved}; "
            f"{run['ray_calls']:,} Ray calls")


def _device_plan(cfg: FuzzConfig, campaign: Campaign | None, adapters: dict[str, Any], pool: Any) -> DevicePlan:
    """The devices of this campaign: a resumed one keeps its own; ``cpu`` asks nothing; else the
    libraries' devices hooks run in a sandbox worker (the parent never initialises a GPU)."""
    if campaign is not None and "devices" in campaign.settings:
        return DevicePlan.from_json(campaign.settings["devices"])
    if cfg.devices == "cpu" or cfg.devices == ("cpu",):
        return resolve("cpu", {}, adapters)
    found, problems = discover(pool, adapters)
    return resolve(cfg.devices, found, adapters, problems)


def run_campaign(cfg: FuzzConfig, *, log: Callable[[str], None] = print) -> FuzzResult:
    """Run (or resume) a campaign as configured; see the module docstring."""
    from xamt.exec.pools import open_pool, pool_settings
    from xamt.groups.model import load_registry
    from xamt.libraries.registry import Registry

    if cfg.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {cfg.workers}")
    if cfg.window is not None and cfg.window < 1:
        raise ConfigError(f"--window must be at least 1, got {cfg.window}")
    if cfg.memory_budget is not None and cfg.memory_budget <= 0:
        raise ConfigError(f"--memory-budget must be positive, got {cfg.memory_budget} bytes")
    schedule_settings = load_settings(cfg.settings_path)  # a broken fuzzing.toml fails before anything runs
    out = Path(cfg.out)
    db = default_db_path(out)
    if not db.exists():
        raise XamtError(f"no store at {db}: run `xamt catalog`, `xamt match` and `xamt groups build` first "
                        f"(or `make fuzz`, which runs them)")
    registry = Registry([*Registry(), *cfg.extra_adapters]) if cfg.extra_adapters else Registry()
    adapters = {}
    wanted = list(cfg.libraries) if cfg.libraries else None
    for name in wanted or [a.name for a in registry]:
        adapter = registry.get(name)  # raises UnknownLibraryError for a name with no adapter
        if adapter.is_installed():
            adapters[adapter.name] = adapter
        else:
            log(f"note: {name} is not installed here; skipped")
    with Store(db) as store:
        fs = FindingsStore(store)
        store.ensure(FUZZ_STATE_SCHEMA)
        groups = _select(load_registry(store), list(adapters), cfg.relations, cfg.max_groups)
        if not groups:
            raise XamtError(f"no validated groups for {', '.join(adapters) or 'these libraries'} in {db}: "
                            f"run `xamt groups build` first")
        # a library no group holds gets no zygote (a runtime of its own costs a pool)
        used = {m.library for g in groups for m in g.members}
        adapters = {n: a for n, a in adapters.items() if n in used}
        campaign = None
        start_elapsed = 0.0
        if cfg.resume:
            last = fs.campaign()
            if last is None or last.status == "done":
                raise XamtError("nothing to resume: the latest campaign finished (or there is none)")
            campaign = last
            start_elapsed = float(campaign.settings.get("elapsed_s", 0.0))
            cfg.budget_s = campaign.budget_s
            cfg.seed = campaign.seed
            log(f"resuming campaign {campaign.id} at {start_elapsed:.0f}/{campaign.budget_s:.0f}s")
        # out_dir: on-disk compile caches (JAX, TorchInductor) under <out>/cache, and a file-size
        # limit with room for Inductor's precompiled header
        settings = pool_settings(adapters.values(), out_dir=str(out))
        pool_kwargs = dict(preload=settings["preload"], warmup=settings["warmup"], env=settings["env"],
                           timeout=cfg.timeout, memory_limit=cfg.memory_limit, confirm=True, batch_size=8,
                           max_tasks_per_worker=None, file_size_limit=settings["file_size_limit"],
                           help_after=schedule_settings.help_after_s, runtimes=settings["runtimes"])
        backend = _RayBackend(cfg, adapters, pool_kwargs) if cfg.ray else \
            _LocalBackend(open_pool(workers=cfg.workers, **pool_kwargs), pool_kwargs)
        pool = backend.pool
        try:
            # before the campaign is recorded: a --devices naming no device here is a plain error
            devices = _device_plan(cfg, campaign, adapters, pool)
        except BaseException:
            backend.close()
            raise
        # APIs that killed workers in the latest campaign on the same library versions (or in
        # the one resumed) start out isolated: the workers need not die for them once more
        versions = {n: a.version() for n, a in adapters.items()}
        previous = campaign or fs.campaign()
        killers = (previous.settings.get("isolated", {}).get("apis", [])
                   if previous is not None and previous.libraries == versions else [])
        if campaign is None:
            campaign = Campaign(
                libraries=versions, budget_s=cfg.budget_s,
                seed=cfg.seed, workers=cfg.workers,
                settings={"guided": cfg.guided, "window": cfg.window, "timeout": cfg.timeout,
                          "relations": list(cfg.relations) if cfg.relations else None,
                          "python": platform.python_version(), "platform": platform.platform(),
                          "out": ".", "ray": cfg.ray})
            fs.start_campaign(campaign)
        campaign.settings["devices"] = devices.to_json()
        groups = [with_device_twins(g, devices) for g in groups]
        campaign.groups = len(groups)
        campaign.status = "running"
        fs.update_campaign(campaign)
        log(f"campaign {campaign.id}: {len(groups)} groups over {', '.join(sorted(adapters))}, "
            f"budget {cfg.budget_s:.0f}s, {cfg.workers} workers; store {db}")
        log(devices.describe())
        log(backend.describe())  # what the workers are confined to (or which protections are off)
        fuzzer = _Fuzzer(cfg, store, groups, adapters, pool, campaign, fs, schedule_settings)
        if cfg.resume:
            fuzzer.restore()
        fuzzer.isolate_apis(tuple(a.split(":", 1)) for a in killers if ":" in a)
        if not cfg.ray:
            budget = cfg.memory_budget if cfg.memory_budget is not None else int(schedule_settings.memory_share * machine_memory())
            fuzzer.memory = MemoryGovernor(backend.sandbox_pools, budget,
                                           floor=schedule_settings.worker_growth_min_mib << 20,
                                           ceiling=cfg.memory_limit)
        seconds = 0.0
        try:
            seconds = fuzzer.run(backend.executor(fuzzer.executor), start_elapsed)
            campaign.status = "interrupted" if fuzzer.stopped else "done"
            campaign.settings["elapsed_s"] = start_elapsed + seconds
        except BaseException:
            campaign.status = "interrupted"  # resumable with --resume
            raise
        finally:
            campaign.finished = time.time()
            stats = backend.close()  # iterations still in flight are cancelled
            campaign.settings["pool"] = {k: v for k, v in stats.items() if v}  # deaths, confirmations
            if fuzzer.memory is not None:
                campaign.settings["memory"] = fuzzer.memory.summary()
            if cfg.ray:
                campaign.settings["ray_run"] = backend.final
            fuzzer.checkpoint(list(fuzzer.groups), float(campaign.settings.get("elapsed_s", 0.0)), figures=True)
            fuzzer.write_group_stats()
            fs.update_campaign(campaign)
        by_class: dict[str, int] = {}
        for row in fs.counts_by(campaign.id, "finding_class"):
            by_class[row["finding_class"]] = row["n"]
        triaged = sum(1 for v in fuzzer.seen.values() if v["outcome"] != "pending")
        on_device = sum(1 for f in fs.findings(campaign.id) if f.summary.get("device") not in (None, "cpu"))
        prekeys = [json.loads(pk) for pk in fuzzer.seen]  # (group, signal, API, input signature)
        by_signal: dict[str, int] = {}
        for pk in prekeys:
            by_signal[pk[1]] = by_signal.get(pk[1], 0) + 1
        return FuzzResult(campaign.id, len(groups), campaign.iterations, campaign.executions,
                          seconds, fuzzer.findings, fuzzer.candidates, dropped=fuzzer.dropped,
                          by_class=by_class, triaged=triaged, devices=devices.describe(),
                          device_findings=on_device, divergences_by_signal=by_signal,
                          groups_diverging=len({pk[0] for pk in prekeys}),
                          not_triaged=len(fuzzer.not_triaged),
                          triage_s=float(campaign.settings.get("triage_s", 0.0)),
                          compile_s=float(campaign.settings.get("compile_s", 0.0)),
                          slow_lane_s=float(campaign.settings.get("slow_lane_s", 0.0)),
                          groups_visited=sum(1 for st in fuzzer.search.groups.values() if st.iterations),
                          ray=_ray_line(campaign.settings.get("ray_run")))
