"""``xamt groups build``: validate every candidate group in the sandbox and store the registry.

Candidates come from the store (``xamt match``). Each is validated by
:func:`~xamt.groups.validate.validate_candidate`; many run concurrently on one sandbox pool
(:class:`~xamt.exec.schedule.Scheduler`). Results are committed per candidate, keyed by the
libraries' versions and a fingerprint of the candidate and of every data file the build reads,
so an interrupted build resumes where it stopped and a rebuild only redoes what changed.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from queue import Empty
from typing import Any, Callable, Iterable, Sequence

from xamt.errors import MatchingError, XamtError
from xamt.groups.annotations import load_annotations, load_settings
from xamt.exec.group import GroupExecutor
from xamt.exec.pools import MAIN_RUNTIME, RUNTIME_WORKERS, open_pool, pool_settings, runtime_of
from xamt.groups.model import REGISTRY_SCHEMA, load_registry
from xamt.exec.normalise import load_normalisation_rules
from xamt.exec.schedule import Scheduler
from xamt.exec.window import RuntimeWindow, pool_workers, runtime_caps
from xamt.groups.validate import CandidateResult, Context, validate_candidate
from xamt.inputs.rules import load_input_rules
from xamt.libraries.registry import Registry
from xamt.log import get_logger
from xamt.store import Store

__all__ = ["BUILD_VERSION", "BuildResult", "build_registry", "registry_stats", "select_candidates",
           "versions_key"]

_log = get_logger("groups.build")

#: bump when validation rules change in code: every candidate is validated again
BUILD_VERSION = 10
#: seconds (at most a tenth of the budget) that candidates in flight when a build's budget is
#: spent may take to finish; the rest are left, unvalidated, for the next build
BUDGET_GRACE_S = 60.0


@dataclass
class BuildResult:
    """Figures of one build (``stats``) and how long it took."""

    versions: str
    candidates: int
    built: int
    resumed: int
    seconds: float
    stats: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False
    #: candidates not validated because the budget was spent (the next build resumes with them)
    left: int = 0


def versions_key(versions: dict[str, str]) -> str:
    """The registry's key for a set of library versions (sorted JSON)."""
    return json.dumps(dict(sorted(versions.items())), separators=(",", ":"))


def select_candidates(groups: Iterable[Any], libraries: Sequence[str], *,
                      relations: str = "all", keys: Sequence[str] | None = None) -> list[Any]:
    """Candidate groups restricted to ``libraries``' members; groups left with fewer than two
    libraries (cross-library) or two members (intra) are dropped. ``relations``: ``all``,
    ``cross`` or ``intra``; ``keys``: only these candidate keys (substring match)."""
    libs = set(libraries)
    out = []
    for g in groups:
        cross = g.relation == "cross_library"
        if relations == "cross" and not cross or relations == "intra" and cross:
            continue
        if keys and not any(k in g.key for k in keys):
            continue
        members = [m for m in g.members if m.library in libs]
        if len(members) != len(g.members):
            g = dataclasses.replace(g, members=members)
        if cross and len({m.library for m in members}) < 2 or len(members) < 2:
            continue
        out.append(g)
    out.sort(key=_build_order)
    return out


def _build_order(g: Any) -> tuple:
    """The order candidates start in (each as soon as its runtimes' pools have room:
    :mod:`xamt.exec.window`), which is what a build cut short by its budget keeps:
    cross-library groups first (the headline); then the intra relations that name one
    API's forms (aliases, methods, in-place and ``out=`` variants, namespace twins); those
    with a compiled member (a compilation per API); inferred pairs last, the best scored first
    (DeepREL's inference proposes ten peers per API, most of them status-equivalent only);
    stable by key."""
    cross = g.relation == "cross_library"
    inferred = g.relation == "inferred"
    compiled = any(m.call == "compiled" for m in g.members)
    score = -float(getattr(g, "confidence", 0.0) or 0.0) if inferred else 0.0
    return (not cross, inferred, compiled, score, g.relation, g.key)


def _fingerprint(group: Any, data: str) -> str:
    text = json.dumps(group.to_json(), sort_keys=True, default=str) + data + str(BUILD_VERSION)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def _persist(store: Store, versions: str, result: CandidateResult, fingerprint: str) -> None:
    with store.transaction():
        store.execute("DELETE FROM registry WHERE candidate=? AND versions=?", (result.candidate, versions))
        store.executemany(
            "INSERT OR REPLACE INTO registry(key, versions, candidate, relation, state, equivalence,"
            " libraries, n_members, confidence, data) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [(g.key, versions, g.candidate, g.relation, g.state, g.equivalence, ",".join(g.libraries),
              len(g.members), g.confidence, json.dumps(g.to_json(), default=_json_default))
             for g in result.groups])
        store.execute(
            "INSERT INTO registry_builds(candidate, versions, fingerprint, seconds, summary)"
            " VALUES (?,?,?,?,?) ON CONFLICT(candidate, versions) DO UPDATE SET"
            " fingerprint=excluded.fingerprint, seconds=excluded.seconds, summary=excluded.summary",
            (result.candidate, versions, fingerprint, result.seconds, json.dumps(result.summary())))


def _prune(store: Store, versions: str, current: set[str]) -> None:
    """Forget the registered groups of candidates that matching no longer proposes (a data
    change, a relation kind replaced): the fuzzer must not run them."""
    built = {r["candidate"] for r in store.query(
        "SELECT DISTINCT candidate FROM registry_builds WHERE versions=?", (versions,))}
    built |= {r["candidate"] for r in store.query(
        "SELECT DISTINCT candidate FROM registry WHERE versions=?", (versions,))}
    stale = sorted(built - current)
    if not stale:
        return
    with store.transaction():
        for table in ("registry", "registry_builds"):
            store.executemany(f"DELETE FROM {table} WHERE versions=? AND candidate=?",
                              [(versions, key) for key in stale])
    _log.info("registry: forgot %d candidates matching no longer proposes", len(stale))


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, float) and obj != obj:
        return None
    return str(obj)


class _BuildProgress:
    """Groups done / total, ETA and the group being validated (:class:`xamt.progress.Progress`)."""

    def __init__(self, total: int, enabled: bool):
        from xamt.progress import Progress

        self.done = 0
        self._bar = Progress(enabled and total > 0, total=total, unit=" groups", log_every=10.0)

    def started(self, key: str) -> None:
        self._bar.update(self.done, f"current {key[:60]}")

    def finished(self, key: str) -> None:
        self.done += 1
        self._bar.update(self.done, f"current {key[:60]}", force=self.done == self._bar.total)

    def close(self) -> None:
        self._bar.close()


def build_registry(
    store: Store,
    *,
    libraries: Sequence[str] | None = None,
    workers: int = 2,
    resume: bool = True,
    relations: str = "all",
    keys: Sequence[str] | None = None,
    limit: int | None = None,
    budget_s: float | None = None,
    probe: bool = True,
    progress: bool = False,
    registry: Registry | None = None,
    pool: Any = None,
    candidates: Sequence[Any] | None = None,
    data_paths: dict[str, str] | None = None,
    on_result: Callable[[CandidateResult], None] | None = None,
    ray: str | None = None,
) -> BuildResult:
    """Validate the stored candidate groups and store the registry (see the module docstring).

    ``pool``: an open :class:`sandbox.SandboxPool` to use (default: one is started with every
    selected library preloaded and ``workers`` workers); ``candidates``: candidate groups to use
    instead of the stored ones (tests); ``data_paths``: alternative data files (keys
    ``inputs``, ``normalisations``, ``annotations``, ``settings``); ``ray``: validate on a Ray
    cluster (``local``, ``auto`` or an address; :mod:`xamt.exec.cluster`), one actor per node
    with a pool sized to its CPUs, while this process keeps the store. ``budget_s``: start no
    candidate after this many seconds (those in flight get :data:`BUDGET_GRACE_S` more, at most a
    tenth of the budget, to finish and be stored; the rest are left); the next build
    resumes with the rest, in the same order (cross-library groups first).
    """
    t0 = time.monotonic()
    registry = registry or Registry()
    libs = list(libraries) if libraries else [a.name for a in registry if a.is_installed()]
    adapters = {name: registry.get(name) for name in libs}
    for name, adapter in adapters.items():
        if not adapter.is_installed():
            raise XamtError(f"library {name} is not installed here; leave it out of --libs")
    store.ensure(REGISTRY_SCHEMA)
    stored_from_match = None
    if candidates is None:
        from xamt.matching.engine import load_groups

        stored = load_groups(store).groups
        if not stored:
            raise MatchingError("the store holds no candidate groups: run `xamt match` first")
        candidates = stored_from_match = stored
    selected = select_candidates(candidates, libs, relations=relations, keys=keys)
    if limit is not None:
        selected = selected[:limit]
    paths = data_paths or {}
    rules = load_input_rules(paths.get("inputs"))
    norms = load_normalisation_rules(paths.get("normalisations"))
    annotations = load_annotations(paths.get("annotations"))
    settings = load_settings(paths.get("settings"))
    versions = {name: adapter.version() for name, adapter in adapters.items()}
    vkey = versions_key(versions)
    data_fp = "|".join((rules.fingerprint, norms.fingerprint, annotations.fingerprint,
                        settings.fingerprint, str(probe)))
    if candidates is stored_from_match:
        _prune(store, vkey, {g.key for g in candidates})
    done: dict[str, str] = {}
    if resume:
        done = {r["candidate"]: r["fingerprint"] for r in
                store.query("SELECT candidate, fingerprint FROM registry_builds WHERE versions=?", (vkey,))}
    todo, resumed = [], 0
    for g in selected:
        fp = _fingerprint(g, data_fp)
        if done.get(g.key) == fp:
            resumed += 1
        else:
            todo.append((g, fp))
    with store.transaction():
        store.execute("INSERT OR REPLACE INTO registry_info(key, value) VALUES ('versions', ?)", (vkey,))
    _log.info("registry build: %d candidates, %d already built, %d to validate", len(selected), resumed, len(todo))

    own_pool = pool is None and not ray
    conf: dict[str, Any] = {}
    if pool is None and todo:
        # the compile caches in the output folder, where later builds and the campaign find them
        conf = pool_settings(adapters.values(), out_dir=str(store.path.parent.resolve()),
                             environment={**settings.environment, **settings.build_environment})
        # workers are recycled now and then: compiled-program caches grow with every new API
        conf.update(timeout=settings.timeout, confirm=False, max_tasks_per_worker=4000,
                    memory_limit=4 << 30, batch_size=16)
    if own_pool and todo:
        pool = open_pool(workers=workers, **conf)
    bar = _BuildProgress(len(todo), progress)
    interrupted = False
    abandoned = 0
    built = left = 0
    runner: Any = None
    try:
        if todo:
            if ray:
                runner = _RayBuild(ray, conf, BuildJobs(adapters, rules, norms, annotations, settings,
                                                        versions, probe), workers, str(store.path.parent))
            else:
                runner = _LocalBuild(pool, BuildJobs(adapters, rules, norms, annotations, settings,
                                                     versions, probe))
            in_flight = settings.window * runner.pools
            window: RuntimeWindow[Any] = RuntimeWindow(in_flight, runtime_caps(in_flight, runner.workers))
            for g, _ in todo:
                window.push(g.key, g, {runtime_of(adapters[m.library]) or MAIN_RUNTIME for m in g.members})
            fingerprints = {g.key: fp for g, fp in todo}
            while len(window) or len(runner):
                if budget_s is not None and len(window) and time.monotonic() - t0 >= budget_s:
                    left = window.clear()
                    _log.warning("registry build: budget of %.0f s spent; %d candidate(s) left for the next "
                                 "`xamt groups build`, which resumes from here", budget_s, left)
                if (budget_s is not None and len(runner)
                        and time.monotonic() - t0 >= budget_s + min(BUDGET_GRACE_S, budget_s / 10)):
                    # what is still in flight is left for the next build: a library whose probes
                    # compile for a minute each (PyTensor's C backend) kept a 20-minute build
                    # running for 10 more
                    left += len(runner)
                    abandoned = len(runner)
                    _log.warning("registry build: %d candidate(s) still in flight after the budget's grace "
                                 "are left for the next build", abandoned)
                    break
                for g in window.take():
                    bar.started(g.key)
                    runner.start(g)
                # with a budget, the wait wakes each second to look at the clock
                for key, result in runner.wait(1.0 if budget_s is not None else None):
                    window.finished(key)
                    _persist(store, vkey, result, fingerprints[key])
                    built += 1
                    bar.finished(key)
                    if on_result is not None:
                        on_result(result)
    except KeyboardInterrupt:
        interrupted = True
        _log.warning("build interrupted after %d candidates; `xamt groups build` resumes from there", built)
    finally:
        bar.close()
        execution = runner.close() if runner is not None else {}
        if own_pool and pool is not None:
            pool.close(wait=not (interrupted or abandoned))
    seconds = time.monotonic() - t0
    stats = registry_stats(store, vkey)
    stats["build"] = {"candidates": len(selected), "validated_now": built, "resumed": resumed,
                      "left": left, "abandoned_in_flight": abandoned, "seconds": round(seconds, 1),
                      "workers": workers, "libraries": libs, "execution": execution}
    if pool is not None and not ray:  # worker starts, deaths and outcomes by status
        stats["build"]["pool"] = {k: v for k, v in pool.stats.items() if v}
    if ray and runner is not None:
        stats["build"].update(ray=runner.summary)
    with store.transaction():
        store.execute("INSERT OR REPLACE INTO registry_info(key, value) VALUES ('stats', ?)",
                      (json.dumps(stats),))
    if interrupted:
        raise KeyboardInterrupt
    return BuildResult(vkey, len(selected), built, resumed, seconds, stats, interrupted, left)


class BuildJobs:
    """The validation of one candidate as a job (:class:`~xamt.exec.cluster.JobKind`): built
    once per pool, locally or on each Ray actor."""

    def __init__(self, adapters: dict[str, Any], rules: Any, norms: Any, annotations: Any,
                 settings: Any, versions: dict[str, str], probe: bool):
        self.parts = (adapters, rules, norms, annotations, settings, versions, probe)
        self.ctx: Context | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"parts": self.parts}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.parts, self.ctx = state["parts"], None

    def setup(self, pool: Any, where: str = "") -> None:
        adapters, rules, norms, annotations, settings, versions, probe = self.parts
        # the memo: the same call on the same values runs once per pool
        executor = GroupExecutor(pool, adapters, timeout=settings.timeout, memo=True,
                                 compiled_timeout=settings.compiled_timeout)
        self.ctx = Context(rules=rules, norms=norms, annotations=annotations, settings=settings,
                           executor=executor, versions=versions, probe=probe)

    def steps(self, group: Any) -> Any:
        assert self.ctx is not None, "setup() first"
        return validate_candidate(group, self.ctx)

    def trim(self, result: CandidateResult) -> CandidateResult:
        return result

    def summary(self) -> dict[str, int]:
        return dict(self.ctx.executor.stats) if self.ctx is not None else {}


class _LocalBuild:
    """Candidates validated concurrently on one pool."""

    pools = 1

    def __init__(self, pool: Any, jobs: BuildJobs):
        jobs.setup(pool)
        self.jobs = jobs
        self.scheduler = Scheduler(pool)
        #: workers per runtime pool, which size each runtime's share of the window
        self.workers = pool_workers(pool, MAIN_RUNTIME)

    def __len__(self) -> int:
        return len(self.scheduler)

    def start(self, group: Any) -> None:
        self.scheduler.start(group.key, self.jobs.steps(group))

    def wait(self, timeout: float | None = None) -> list[tuple[str, CandidateResult]]:
        try:
            return self.scheduler.wait(timeout)
        except Empty:  # nothing finished within ``timeout``
            return []

    def close(self) -> dict[str, int]:
        return self.jobs.summary()


class _RayBuild:
    """Candidates validated on a Ray cluster, one actor per node (:mod:`xamt.exec.cluster`)."""

    def __init__(self, address: str, conf: dict[str, Any], jobs: BuildJobs, workers: int, out_dir: str):
        from xamt.exec.cluster import RaySession

        self.session = RaySession(address, jobs, conf, local_cpus=workers, out_dir=out_dir)
        self.shards = self.session.shards
        self.pools = len(self.shards.actors)
        # each actor's pool set is opened as a local one is (open_pool's default for other runtimes)
        self.workers = {MAIN_RUNTIME: max(1, workers),
                        **{name: RUNTIME_WORKERS for name in conf.get("runtimes") or {}}}
        self._keys: dict[int, str] = {}
        self._tokens = 0
        self.summary: dict[str, Any] = {}
        _log.info("registry build on Ray:\n%s", self.shards.describe())

    def __len__(self) -> int:
        return len(self.shards)

    def start(self, group: Any) -> None:
        self._tokens += 1
        self._keys[self._tokens] = group.key
        self.shards.start(self._tokens, group.key, group)

    def wait(self, timeout: float | None = None) -> list[tuple[str, CandidateResult]]:
        # the shards answer every half second whatever the timeout
        return [(self._keys.pop(token), result) for token, result, _ in self.shards.wait(0.5)]

    def close(self) -> dict[str, float]:
        try:
            return self.session.close()["job"]
        finally:
            self.summary = self.session.final


def registry_stats(store: Store, versions: str | None = None) -> dict[str, Any]:
    """The registry's figures: validated cross-library groups, distinct APIs, intra relations by
    kind and equivalence, member rejection reasons, states."""
    groups = load_registry(store, states=None, versions=versions)
    validated = [g for g in groups if g.state == "validated"]
    cross = [g for g in validated if g.relation == "cross_library" and len(g.libraries) >= 2]
    cross_value = [g for g in cross if g.equivalence == "value"]
    intra = [g for g in validated if g.relation != "cross_library"]
    apis_cross = {(m.library, m.qualname) for g in cross for m in g.members}
    apis_all = {(m.library, m.qualname) for g in validated for m in g.members}
    reasons: Counter[str] = Counter()
    reasons_by_relation: dict[str, Counter[str]] = {}
    for g in groups:
        for _, info in g.rejected:
            if info.state == "validated":
                continue
            key = info.reason or info.state
            reasons[key] += 1
            reasons_by_relation.setdefault("cross" if g.relation == "cross_library" else "intra",
                                           Counter())[key] += 1
    return {
        "cross_library_groups": len(cross),
        "cross_library_groups_value": len(cross_value),
        "cross_library_groups_status": len(cross) - len(cross_value),
        "cross_library_apis": len(apis_cross),
        "cross_library_apis_per_library": dict(sorted(Counter(lib for lib, _ in apis_cross).items())),
        "cross_library_libraries_per_group": dict(sorted(Counter(len(g.libraries) for g in cross).items())),
        "intra_relations": dict(sorted(Counter(g.relation for g in intra).items())),
        "intra_by_equivalence": {f"{r}/{e}": n for (r, e), n in
                                 sorted(Counter((g.relation, g.equivalence) for g in intra).items())},
        "intra_relations_total": len(intra),
        "validated_groups_total": len(validated),
        "distinct_apis_all_validated": len(apis_all),
        "group_states": dict(Counter(g.state for g in groups)),
        "rejection_reasons": dict(reasons.most_common()),
        "rejection_reasons_by_relation": {k: dict(v.most_common()) for k, v in reasons_by_relation.items()},
    }
