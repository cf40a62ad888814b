"""Running groups' members in the sandbox: the parent side of the execution layer.

:class:`GroupExecutor` turns ``(group, input)`` pairs into sandbox tasks (one per input: every
member of the group in one round trip, :func:`xamt.exec.member.run_members`), runs many in one
``pool.run`` and maps the outcomes back to :class:`MemberResult` s. When a group task dies
(crash, timeout, out of memory) its members are re-run one task each, so the death is pinned to
the member that caused it. :meth:`GroupExecutor.probe` asks which dtypes members accept
(:func:`xamt.exec.probe.probe_dtypes`). :func:`member_spec` is the compact member form the
worker parses once, :func:`call_key` the digest of one call (a registry build's memo). A member whose library runs
in a runtime of its own (:mod:`xamt.exec.pools`) is sent there: a group task is split into one
task per runtime.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Generator, Iterable, Mapping, Sequence

import msgpack
import numpy as np

from sandbox.outcome import CONFIRMABLE

from xamt.exec.member import RUN_MEMBERS, hook_refs
from xamt.exec.pools import runtime_of
from xamt.exec.probe import PROBE_DTYPES

__all__ = ["MemberResult", "GroupRun", "ExecItem", "GroupExecutor", "member_spec", "call_key"]


def member_spec(member: Any, libraries: Mapping[str, Any]) -> tuple[str, bytes]:
    """``(member_id, spec_bytes)`` of a :class:`~xamt.matching.model.Member`: the compact form
    the worker parses once. ``libraries`` maps a library name to its adapter."""
    adapter = libraries[member.library]
    data = member.to_json()
    for key in ("aliases", "category", "canonical"):
        data.pop(key, None)
    plan = data["plan"]
    for key in ("notes", "dropped", "score", "source", "overload"):
        plan.pop(key, None)
    for spec in plan["args"] + plan["init_args"]:
        spec.pop("similarity", None)
    spec = {"member": data, **hook_refs(member, adapter)}
    text = json.dumps(spec, sort_keys=True, default=str)
    mid = hashlib.blake2b(text.encode(), digest_size=10).hexdigest()
    return mid, msgpack.packb(spec, use_bin_type=True, default=str)


def call_key(member: Any, values: Mapping[int, Any], extra: Any = ()) -> str | None:
    """A digest of the call ``member`` makes on ``values`` (numpy / literal values): its target,
    how its plan places arguments, and the argument values themselves. Equal keys mean the same
    library call on the same bits. None when the plan cannot bind the values."""
    try:
        target, args, kwargs = member.task(dict(values))
    except (ValueError, KeyError, TypeError):
        return None
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{member.library}|{target}|{member.call}|{member.via}|{member.device}|".encode())
    shape = [(a.param, a.position, a.keyword, a.transform, a.star) for a in member.plan.args + member.plan.init_args]
    h.update(repr(shape).encode())
    h.update(repr(extra).encode())

    def feed(obj: Any) -> None:
        if isinstance(obj, np.ndarray):
            h.update(f"a{obj.dtype.str}{obj.shape}".encode())
            h.update(np.ascontiguousarray(obj).tobytes())
        elif isinstance(obj, (list, tuple)):
            h.update(b"(" if isinstance(obj, tuple) else b"[")
            for v in obj:
                feed(v)
            h.update(b")")
        elif isinstance(obj, dict):
            for k in sorted(obj, key=str):
                h.update(f"{k}=".encode())
                feed(obj[k])
        elif isinstance(obj, np.dtype):
            h.update(f"d{obj.name}".encode())
        else:
            h.update(f"{type(obj).__name__}:{obj!r};".encode())

    feed(args)
    feed(kwargs)
    return h.hexdigest()


@dataclass
class MemberResult:
    """One member's result on one input (reads like :class:`sandbox.Outcome` for the oracle).

    ``status``: ``ok``, ``raised``, ``crashed``, ``timeout``, ``oom``, ``unserializable`` (the
    output has no numeric form), ``skipped`` (not called: its plan or the input cannot call it)
    or ``cancelled``. ``outcome`` is the sandbox outcome of the member's own task when it was run
    alone (after its group task died); it holds the crash evidence.
    """

    status: str
    value: Any = None
    error_type: str | None = None
    error_message: str | None = None
    nondeterministic: bool = False
    duration_s: float = 0.0
    outcome: Any = None
    #: seconds the libraries spent compiling during the call (their own clocks; 0 when unknown)
    compile_s: float = 0.0
    #: CPU seconds the worker process used during the call (0 when it did not return a result)
    cpu_s: float = 0.0
    #: where a call that raised raised (:func:`xamt.exec.member.raised_at`: ``"split:raise"``)
    raised_at: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class ExecItem:
    """One input for one group: which members (indices into ``group.members``; None: all),
    how often to call each (``repeat``), and the normaliser (None: the group's own)."""

    group: Any
    input: Any
    members: Sequence[int] | None = None
    repeat: int = 1
    normalise: str | None = None
    tag: Any = None
    #: seconds each member's call may take at least (None: the executor's allowance); a call
    #: expected to compile (the campaign's slow lane) gets the compiled allowance
    timeout: float | None = None
    #: seconds each member's call may take at most, below the allowance (None: no cap): a
    #: campaign ends a call that runs far beyond what its group's calls take early, and triage
    #: then tells a hang from a slow call under the full allowance
    limit: float | None = None
    #: the caller expects it to kill its worker (a member did before): an executor that keeps
    #: a pool apart for such items runs it there, so the compiled programs of the other
    #: workers live on
    isolate: bool = False
    #: its tasks go to the worker that ran the group's last ones (sandbox affinity), where
    #: its compiled programs are; False: to any free worker (a group whose calls compile
    #: nothing loses nothing elsewhere, and a worker that would idle takes it)
    sticky: bool = True
    #: each call runs with the CPU flushing subnormals to zero (:mod:`xamt.exec.fpmode`)
    flush_subnormals: bool = False
    #: each call runs under its adapter's ``wide_ref`` (JAX computes float64 inputs in float64
    #: only there): triage's float64 experiments on the outlier
    wide: bool = False


@dataclass
class GroupRun:
    """The results of one :class:`ExecItem`: ``results[i]`` belongs to member ``members[i]``."""

    item: ExecItem
    members: list[int]
    results: list[MemberResult]
    values: dict[int, Any] | None = field(default=None, repr=False)
    #: worker seconds of every sandbox task this item took (a task that died counts in full,
    #: and so do the member-by-member runs after it); the members' ``duration_s`` count calls only
    task_s: float = 0.0
    #: process ids of the workers that ran its tasks, in order, and of those its tasks killed
    workers: tuple[int, ...] = ()
    killed: tuple[int, ...] = ()

    @property
    def group(self) -> Any:
        return self.item.group

    def outputs(self) -> list[Any]:
        """Normalised outputs of the members that returned (in member order)."""
        return [r.value for r in self.results if r.ok]

    def ok_members(self) -> list[int]:
        return [m for m, r in zip(self.members, self.results) if r.ok]


def _affinity(group: Any) -> str | None:
    """The sandbox affinity key of a group's tasks (its key)."""
    key = getattr(group, "key", None)
    return None if key is None else str(key)


class GroupExecutor:
    """Runs ``(group, input)`` items in a sandbox pool (see the module docstring).

    ``libraries`` maps library names to adapters (default: every installed adapter);
    ``timeout`` is the limit of one member's call, seconds (a group task gets it per member,
    up to ``max_task_timeout``).
    """

    def __init__(self, pool: Any, libraries: Mapping[str, Any] | None = None, *,
                 timeout: float = 10.0, max_task_timeout: float = 300.0, memo: bool = False,
                 compiled_timeout: float | None = None, confirm_deaths: bool = True):
        if libraries is None:
            from xamt.libraries.registry import Registry

            libraries = {a.name: a for a in Registry()}
        self.pool = pool
        self.libraries = dict(libraries)
        self.timeout = float(timeout)
        # a compiled call pays its compilation (torch.compile's first call in a worker: ~15 s)
        self.compiled_timeout = float(compiled_timeout) if compiled_timeout else max(60.0, self.timeout)
        self.max_task_timeout = float(max_task_timeout)
        # a member that kills its worker alone is run again on a fresh one (sandbox
        # confirmation) unless the caller verifies deaths itself: a campaign's triage does
        self.confirm_deaths = bool(confirm_deaths)
        self._specs: dict[int, tuple[Any, str, bytes]] = {}
        # call key -> result: the same call on the same values is run once (a registry build
        # meets one API in many groups); off for fuzzing, where a repeat is evidence
        self.memo: dict[str, MemberResult] | None = {} if memo else None
        self.probe_memo: dict[str, dict[str, tuple[str, str | None]]] | None = {} if memo else None
        # the adapters' compile clocks, read around every call (MemberResult.compile_s)
        self.clocks = sorted({a.compile_clock_ref for a in self.libraries.values()
                              if getattr(a, "compile_clock_ref", None)})
        self.stats: dict[str, int] = {"group_tasks": 0, "solo_tasks": 0, "members_run": 0,
                                      "memo_hits": 0, "probe_tasks": 0, "probe_memo_hits": 0}

    # -- building blocks ---------------------------------------------------------------------
    def _wide_refs(self, members: Iterable[Any]) -> dict[str, str]:
        """``{library: wide_ref}`` of the adapters of ``members`` that have one."""
        refs = {}
        for m in members:
            adapter = self.libraries.get(m.library)
            if adapter is not None and getattr(adapter, "wide_ref", None):
                refs[m.library] = adapter.wide_ref
        return refs

    def spec(self, member: Any) -> tuple[str, bytes]:
        """The cached ``(member_id, spec_bytes)`` of ``member``."""
        cached = self._specs.get(id(member))
        if cached is None or cached[0] is not member:
            mid, blob = member_spec(member, self.libraries)
            cached = self._specs[id(member)] = (member, mid, blob)
        return cached[1], cached[2]

    @staticmethod
    def runnable(member: Any, values: Mapping[int, Any]) -> str | None:
        """Why ``member`` cannot be called with these slot values (None: it can)."""
        from xamt.inputs.seed import needed_slots

        if not member.plan.complete:
            return "incomplete argument plan: " + ", ".join(member.plan.unmatched_required)
        missing = needed_slots(member) - set(values)
        if missing:
            return f"input lacks slot(s) {sorted(missing)} this member needs"
        return None

    def _normaliser(self, item: ExecItem) -> str | None:
        if item.normalise is not None:
            return item.normalise or None
        return getattr(item.group, "normalisation", None) or None

    def runtime(self, member: Any) -> str | None:
        """The runtime (sandbox pool) of ``member``'s library; None: the main zygote."""
        adapter = self.libraries.get(member.library)
        return None if adapter is None else runtime_of(adapter)

    def _task(self, specs: list, values: dict[int, Any], options: dict[str, Any], limit: float,
              group: Any = None, runtime: str | None = None, sticky: bool = True) -> Any:
        from sandbox import Task

        # one group's tasks go to one worker: its JIT caches (JAX, XLA, tf.function) then serve
        # every later input of the group, instead of each worker compiling every shape again.
        # A task of several members that dies is isolated member by member (each of those is
        # confirmed): a confirmation of the whole would only repeat the death.
        return Task(RUN_MEMBERS, args=(specs, values, options), timeout=min(self.max_task_timeout, limit),
                    affinity=_affinity(group) if sticky else None, runtime=runtime,
                    confirm=None if len(specs) == 1 and self.confirm_deaths else False)

    def _limit(self, item: ExecItem, member: Any) -> float:
        """Seconds one call of ``member`` may take in ``item`` (times its repeat count)."""
        limit = max(self.member_timeout(member), item.timeout or 0.0)
        if item.limit is not None:
            limit = min(limit, item.limit)
        return limit * max(1, item.repeat)

    def member_timeout(self, member: Any) -> float:
        """Wall-clock allowance of one call of ``member`` (times the repeat count)."""
        return self.compiled_timeout if member.call == "compiled" else self.timeout

    # -- the batch -------------------------------------------------------------------------------
    def run(self, items: Sequence[ExecItem | tuple]) -> list[GroupRun]:
        """Run every item; one :class:`GroupRun` per item, in order."""
        from xamt.exec.schedule import drive

        return drive(self.pool, self.run_steps(items))

    def run_steps(self, items: Sequence[ExecItem | tuple]) -> Generator[list, list, list[GroupRun]]:
        """:meth:`run` as a step generator (see :mod:`xamt.exec.schedule`): yields task lists,
        receives their outcomes, returns the runs. Lets a scheduler overlap many batches."""
        from xamt.inputs.materialise import materialise
        from xamt.inputs.model import GroupInput

        prepared: list[tuple[ExecItem, list[int], list[MemberResult | None], dict | None]] = []
        tasks, owners = [], []
        for raw in items:
            item = raw if isinstance(raw, ExecItem) else ExecItem(*raw)
            members = list(range(len(item.group.members))) if item.members is None else list(item.members)
            results: list[MemberResult | None] = [None] * len(members)
            try:
                values = item.input if not isinstance(item.input, GroupInput) else materialise(item.input)
            except Exception as exc:  # an input that cannot be built: nothing runs
                why = f"input cannot be materialised: {type(exc).__name__}: {exc}"
                prepared.append((item, members, [MemberResult("skipped", error_message=why)
                                                 for _ in members], None))
                continue
            run_idx = []
            norm = self._normaliser(item)
            keys: dict[int, str] = {}
            for k, mi in enumerate(members):
                member = item.group.members[mi]
                why = self.runnable(member, values)
                if why is not None:
                    results[k] = MemberResult("skipped", error_message=why)
                    continue
                if self.memo is not None:
                    # flushed calls apart (the plain calls' keys as they were)
                    key = call_key(member, values, extra=(item.repeat, norm) + (("ftz",) if item.flush_subnormals else ())
                                   + (("wide",) if item.wide else ()))
                    if key is not None:
                        hit = self.memo.get(key)
                        if hit is not None:
                            results[k] = dataclasses.replace(hit)
                            self.stats["memo_hits"] += 1
                            continue
                        keys[k] = key
                run_idx.append(k)
            prepared.append((item, members, results, values))
            # one task per runtime the members run in (most groups: one)
            parts: dict[str | None, list[int]] = {}
            for k in run_idx:
                parts.setdefault(self.runtime(item.group.members[members[k]]), []).append(k)
            for runtime, part in parts.items():
                specs = [list(self.spec(item.group.members[members[k]])) for k in part]
                options = {"repeat": item.repeat, "normalise": norm}
                if item.flush_subnormals:
                    options["flush_subnormals"] = True
                if item.wide:
                    wide = self._wide_refs(item.group.members[members[k]] for k in part)
                    if wide:
                        options["wide"] = wide
                if self.clocks:
                    options["clocks"] = self.clocks
                limits = [self._limit(item, item.group.members[members[k]]) for k in part]
                # the slowest member's allowance and a second for the others: members take
                # milliseconds, and a task that runs out is re-run member by member, each with
                # its full allowance (a hang then costs one allowance, not the sum of all)
                tasks.append(self._task(specs, values, options, max(limits) + min(1.0, len(limits) - 1.0),
                                        item.group, runtime, item.sticky))
                owners.append((len(prepared) - 1, part, specs, options, keys, limits, runtime))
        outcomes = (yield tasks) if tasks else []
        self.stats["group_tasks"] += len(tasks)
        task_s = [0.0] * len(prepared)
        pids: list[list[int]] = [[] for _ in prepared]
        killed: list[list[int]] = [[] for _ in prepared]

        def count(p: int, outcome: Any) -> None:
            task_s[p] += float(getattr(outcome, "duration_s", 0.0) or 0.0)
            pid = getattr(outcome, "worker_pid", None)
            if pid is not None:
                pids[p].append(pid)
                if outcome.status in CONFIRMABLE and outcome.error_type is None:
                    killed[p].append(pid)

        solo_tasks, solo_owners = [], []
        for (p, run_idx, specs, options, keys, limits, runtime), outcome in zip(owners, outcomes):
            item, members, results, values = prepared[p]
            count(p, outcome)
            decoded = self._decode(outcome, len(run_idx))
            if decoded is None:  # the group task died or its result is unusable: isolate
                culprit = self._culprit(outcome, limits)
                for j, (k, spec, limit) in enumerate(zip(run_idx, specs, limits)):
                    if j == culprit:  # it died in this member: that is its result
                        results[k] = MemberResult(str(outcome.status), error_type=outcome.error_type,
                                                  error_message=outcome.error_message or outcome.summary(),
                                                  duration_s=outcome.duration_s, outcome=outcome)
                        # remembered like any result: a build asks one API the same call in
                        # many candidates, and a hang would otherwise cost its allowance each time
                        if k in keys and self.memo is not None and outcome.status != "cancelled":
                            self.memo[keys[k]] = results[k]
                        continue
                    solo_tasks.append(self._task([spec], values, options, limit, item.group,  # type: ignore[arg-type]
                                                 runtime, item.sticky))
                    solo_owners.append((p, k, keys.get(k)))
                continue
            for k, res in zip(run_idx, decoded):
                results[k] = res
                if k in keys and self.memo is not None:
                    self.memo[keys[k]] = res
        if solo_tasks:
            self.stats["solo_tasks"] += len(solo_tasks)
            solo_outcomes = yield solo_tasks
            for (p, k, key), outcome in zip(solo_owners, solo_outcomes):
                count(p, outcome)
                decoded = self._decode(outcome, 1)
                if decoded is None:
                    res = MemberResult(str(outcome.status), error_type=outcome.error_type,
                                       error_message=outcome.error_message or outcome.summary(),
                                       duration_s=outcome.duration_s, outcome=outcome)
                else:
                    res = decoded[0]
                    res.outcome = outcome
                prepared[p][2][k] = res
                if key is not None and self.memo is not None and res.status != "cancelled":
                    self.memo[key] = res
        runs = []
        for p, (item, members, results, values) in enumerate(prepared):
            self.stats["members_run"] += sum(1 for r in results if r is not None and r.status != "skipped")
            runs.append(GroupRun(item, members, [r if r is not None else MemberResult("cancelled")
                                                 for r in results], values, task_s=task_s[p],
                                 workers=tuple(pids[p]), killed=tuple(killed[p])))
        return runs

    def _culprit(self, outcome: Any, limits: Sequence[float]) -> int | None:
        """The member (index into the task's) a group task died in, when its death may stand
        without a run of its own: this executor does not confirm deaths, the task marked the
        member (:func:`sandbox.mark`), and a timeout came after that member's own allowance
        (one that came sooner, the members before it having used up the task's, is no verdict).
        A task that returned, or raised, names none."""
        n = len(limits)
        if self.confirm_deaths or n < 2 or outcome.status not in CONFIRMABLE:
            return None
        mark = getattr(outcome, "mark", None)
        if not isinstance(mark, int) or not 0 <= mark < n:
            return None
        if outcome.status == "timeout" and (outcome.mark_s or 0.0) < limits[mark]:
            return None
        return mark

    @staticmethod
    def _decode(outcome: Any, n: int) -> list[MemberResult] | None:
        if outcome.status != "ok" or not isinstance(outcome.value, list) or len(outcome.value) != n:
            return None
        out = []
        for entry in outcome.value:
            status = entry[0]
            if status == "ok":
                res = MemberResult("ok", value=entry[1], nondeterministic=bool(entry[2]),
                                   duration_s=float(entry[3]))
                clock = 4
            elif status == "raised":
                res = MemberResult(entry[3], error_type=entry[1], error_message=entry[2],
                                   duration_s=float(entry[4]), raised_at=entry[5])
                clock = 6
            elif status == "unserializable":
                res = MemberResult("unserializable", error_message=entry[1],
                                   duration_s=float(entry[2]) if len(entry) > 2 else 0.0)
                clock = 3
            else:
                res = MemberResult(status, error_message=entry[1] if len(entry) > 1 else None)
                clock = len(entry)
            if len(entry) > clock:  # the CPU seconds
                res.cpu_s = float(entry[clock])
                if len(entry) > clock + 1:  # the compile clocks' reading (``options["clocks"]``)
                    res.compile_s = float(entry[clock + 1])
            out.append(res)
        return out

    # -- footprints -------------------------------------------------------------------------------
    def footprint(self, member: Any, values: Mapping[int, Any], trace: str | None = None,
                  timeout: float | None = None) -> dict[str, Any] | None:
        """The Python functions ``member``'s call on ``values`` runs (:mod:`xamt.exec.footprint`):
        ``{"entry": key or None, "calls": [key, ...]}``, or None when the call died or ran out
        of time (``timeout``, default the member's). ``trace``: an evaluator that runs the
        call's Python without executing it."""
        from sandbox import Task
        from xamt.exec.footprint import FOOTPRINT

        outcome = self.pool.run([Task(FOOTPRINT, args=(list(self.spec(member)), dict(values), trace),
                                      timeout=timeout or self.member_timeout(member),
                                      runtime=self.runtime(member), confirm=False)])[0]
        return outcome.value if outcome.status == "ok" and isinstance(outcome.value, dict) else None

    # -- dtype probing ---------------------------------------------------------------------------
    def probe(self, jobs: Sequence[tuple[Any, int, Mapping[int, Any], Sequence[int]]],
              dtypes: Sequence[str], abstract: Mapping[str, str] | None = None,
              limits: Sequence[float | None] | None = None
              ) -> list[dict[str, tuple[str, str | None]]]:
        """Which of ``dtypes`` each member accepts.

        ``jobs``: ``(group, member index, materialised values, data slots)``. Returns per job a
        mapping dtype → ``(status, error_type)``. ``limits``: per job, seconds one dtype's call
        may take (None: the executor's timeout); a probe task is killed in the dtype that runs
        past it, which is recorded as ``timeout``. A probe task that dies is re-run one dtype per
        task (but for the dtype that timed out), so a dtype that crashes the library is recorded
        as ``crashed``.
        """
        from xamt.exec.schedule import drive

        return drive(self.pool, self.probe_steps(jobs, dtypes, abstract, limits))

    def probe_steps(self, jobs: Sequence[tuple[Any, int, Mapping[int, Any], Sequence[int]]],
                    dtypes: Sequence[str], abstract: Mapping[str, str] | None = None,
                    limits: Sequence[float | None] | None = None
                    ) -> Generator[list, list, list[dict[str, tuple[str, str | None]]]]:
        """:meth:`probe` as a step generator. ``abstract``: library → evaluator reference for
        libraries probed without compiling (see :func:`probe_dtypes`)."""
        from sandbox import Task

        abstract = abstract or {}

        def limit(j: int) -> float:
            given = limits[j] if limits is not None else None
            return self.timeout if given is None else min(self.timeout, given)

        tasks, owner = [], []
        results: list[dict[str, tuple[str, str | None]]] = [{} for _ in jobs]
        keys: dict[int, str] = {}
        for j, (group, mi, values, data_slots) in enumerate(jobs):
            if self.probe_memo is not None:
                key = call_key(group.members[mi], values,
                               extra=(tuple(dtypes), tuple(data_slots), abstract.get(group.members[mi].library)))
                if key is not None:
                    if key in self.probe_memo:
                        results[j] = dict(self.probe_memo[key])
                        self.stats["probe_memo_hits"] += 1
                        continue
                    keys[j] = key
            spec = list(self.spec(group.members[mi]))
            evaluator = abstract.get(group.members[mi].library)
            # each dtype marks its start: one that hangs costs its own limit, not the task's
            tasks.append(Task(PROBE_DTYPES, args=(spec, dict(values), list(data_slots), list(dtypes), evaluator),
                              timeout=min(self.max_task_timeout, limit(j) * max(1, len(dtypes))),
                              step_timeout=limit(j), affinity=_affinity(group),
                              runtime=self.runtime(group.members[mi])))
            owner.append(j)
        outcomes = (yield tasks) if tasks else []
        self.stats["probe_tasks"] += len(tasks)
        retry, retry_owner = [], []
        for j, outcome in zip(owner, outcomes):
            if outcome.status == "ok" and isinstance(outcome.value, list):
                results[j] = {d: (s, et) for d, s, et, _ in outcome.value}
                if j in keys and self.probe_memo is not None:
                    self.probe_memo[keys[j]] = dict(results[j])
                continue
            group, mi, values, data_slots = jobs[j]
            spec = list(self.spec(group.members[mi]))
            evaluator = abstract.get(group.members[mi].library)
            hung = None
            if (outcome.status == "timeout" and outcome.mark is not None and 0 <= outcome.mark < len(dtypes)
                    and (outcome.mark_s or 0.0) >= limit(j)):
                # killed a step limit into this dtype: its verdict is known, the others re-run
                hung = dtypes[outcome.mark]
                results[j][hung] = (str(outcome.status), outcome.error_type)
            for d in dtypes:
                if d == hung:
                    continue
                retry.append(Task(PROBE_DTYPES, args=(spec, dict(values), list(data_slots), [d], evaluator),
                                  timeout=limit(j), runtime=self.runtime(group.members[mi])))
                retry_owner.append((j, d))
        if retry:
            retry_outcomes = yield retry
            for (j, d), outcome in zip(retry_owner, retry_outcomes):
                if outcome.status == "ok" and isinstance(outcome.value, list) and outcome.value:
                    _, s, et, _ = outcome.value[0]
                    results[j][d] = (s, et)
                else:
                    results[j][d] = (str(outcome.status), outcome.error_type)
            for j in {j for j, _ in retry_owner}:
                if j in keys and self.probe_memo is not None:
                    self.probe_memo[keys[j]] = dict(results[j])
        return results
