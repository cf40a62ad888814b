"""The cost-aware budget: which group-iteration runs next, and in which lane.

The search (:mod:`xamt.fuzz.search`) ranks groups by what they showed; this module spends the
campaign's time with that ranking under these rules, all the same for every group:

- **Time shares by class.** Relations with a compiled member (``jax.jit``, ``tf.function``,
  ``torch.compile``) pay seconds for each shape they meet first and microseconds after. They may
  take ``compiled_share`` of the workers' time (measured, and in flight estimated), not a share
  of the draws; eager groups take the rest.
- **Lanes.** An iteration expected to compile is *slow*: a group with a compiled member, or one
  whose first call the registry build timed above ``slow_first_call_s`` (JAX compiles every
  operation for each new shape and dtype, eager or not), at a compile signature it has not run
  yet (:meth:`~xamt.inputs.model.GroupInput.compile_signature`). At most ``slow_lanes`` of them
  are in flight, so the other workers keep serving cheap groups.
- **A floor.** Every cross-library group gets ``floor`` iterations, drawn round-robin in bursts
  of ``floor_burst`` (while its compiled programs are still cached) beside the guided draws, at
  a rate that reaches the floor before ``floor_by`` of the budget has passed.
- **A cap per group.** A group that has taken more than ``group_cap_factor`` times the average
  group's time (and at least ``group_cap_s``; ``floor_cap_share`` of the budget, and at least
  ``floor_cap_s``, while a cross-library group is below the floor) waits until the others catch
  up: one that hangs or crashes on every input costs seconds per iteration, and must not eat
  the budget of thousands of cheap ones (nor the floor's). Calls in the slow lane are not
  charged to it: a compilation is paid once and its group should then be fuzzed. A call that
  kills its worker is charged ``death_cost_s`` more: the worker's compiled programs die with it.
- **Few in flight per group.** At most ``group_inflight`` iterations of a group are in flight
  (they queue on one worker), one while its latest iteration killed a worker.
- **APIs that kill workers run apart.** Once a call of an API has killed its worker (a crash,
  a hang, out of memory), every group holding that API is *isolated*: the campaign runs its
  iterations on a worker of their own at lower priority (``ExecItem.isolate``), at most
  ``isolated_inflight`` at a time (half of them for groups not short of their floor while an
  isolated cross-library group is), so the workers that hold everyone's compiled programs stop
  dying for the same API again and again.
- **Members that keep dying are left out.** A member whose calls crashed, hung or ran out of
  memory ``quarantine_after`` times in a group is left out of that group's later iterations
  while at least two others remain (the campaign does it; its deaths are triaged already), and
  what the group was charged is cleared (:meth:`Schedule.forgive`): the rest of the group is
  fuzzed at the rate of its own calls. Where only two members would remain, the group stops
  drawing the value regime its member died in (:meth:`Schedule.avoid`) and its charges are
  cleared the same way, once per regime (the deaths spent learning which values kill would
  otherwise hold it below the floor). A cross-library group short of its floor does
  so at any member's first death; an input that killed a worker is never a parent.
- **Groups that compile stay on their worker.** A group's iterations run on the worker that
  ran its last ones (sandbox affinity), where its compiled programs are, while its calls
  compile anything (a compiled member; JAX's eager operations); one whose last run at a new
  signature compiled nothing (numpy, scipy, torch eager) runs on whichever worker is free
  (:meth:`Schedule.sticky`). A worker that would idle then takes those, not another worker's
  compiling groups, each of which would compile again there.
- **Hangs end early.** A call in the fast lane may take a multiple of what its group's calls
  took (:meth:`Schedule.call_limit`); triage tells a hang from a slow call afterwards.

A group's draws (its parent, structural or not, the child's values) come from a generator seeded
by the campaign's seed, the group's key and the group's iteration index, not from one stream
shared by every group: the same campaign run again proposes the same inputs for each group
whatever order results came back in, so its compiled programs are in the caches the first run
left (a warm run recompiles what the cold one compiled only where the groups' histories part).

Most iterations keep the parent's shapes, dtypes and arguments and draw new values
(:func:`xamt.inputs.mutate.revalue`), walking a cycle of value regimes (ordinary, boundary,
non-finite, edge values) from an offset of the group's own, so every group meets each kind of
value within its first few iterations; a planned minority (``structural``) changes shapes,
dtypes or arguments (:func:`xamt.inputs.mutate.mutate`). A group's expected cost is known before
its first visit: the registry build timed every member.
"""
from __future__ import annotations

import collections
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from xamt.datafiles import read_toml
from xamt.errors import DataFileError

__all__ = ["ScheduleSettings", "Proposal", "Schedule", "load_settings", "SLOW", "FAST"]

SLOW, FAST = "slow", "fast"
_COMPILED, _EAGER = "compiled", "eager"
_REGIME_KEYS = {"rescale", "edges", "boundary_rate", "nonfinite_rate"}
#: groups a proposal looks at before it gives up for this turn
_TRIES = 16
#: groups drawn by the search's weights at once; proposals take the next ones in turn. The
#: weights change little between two draws, and a draw over thousands of groups costs about a
#: millisecond of the driver's time: one per proposal was a third of it
_DRAW = 64
#: while floor groups wait for their first (slow) call, the share of slow-lane turns others get
_SLOW_OTHERS = 0.25


@dataclass(frozen=True)
class ScheduleSettings:
    """The knobs of ``xamt/data/fuzzing.toml`` (see its comments)."""

    cycle: tuple[str, ...]
    regimes: Mapping[str, Mapping[str, Any]]
    max_log10_scale: float = 30.0
    structural: float = 0.15
    structural_compiled: float = 0.05
    compiled_share: float = 0.2
    floor: int = 100
    floor_by: float = 0.6
    floor_burst: int = 100
    floor_cap_s: float = 30.0
    floor_cap_share: float = 0.04
    window_per_worker: int = 32
    help_after_s: float = 0.25
    slow_lanes: int = 1
    checkpoint_seconds: float = 2.0
    group_cap_s: float = 5.0
    group_cap_factor: float = 20.0
    slow_first_call_s: float = 0.05
    death_cost_s: float = 5.0
    hang_floor_s: float = 2.0
    hang_factor: float = 50.0
    first_call_factor: float = 3.0
    group_inflight: int = 2
    isolated_inflight: int = 4
    quarantine_after: int = 2
    memory_share: float = 0.45
    worker_growth_min_mib: int = 256


def load_settings(path: str | Path | None = None) -> ScheduleSettings:
    """Read and check ``fuzzing.toml`` (the packaged one by default)."""
    data, where, _ = read_toml("fuzzing.toml", path)
    unknown = set(data) - {"values", "schedule"}
    if unknown:
        raise DataFileError(f"{where}: unknown section(s) {sorted(unknown)}")
    values, sched = data.get("values", {}), data.get("schedule", {})
    regimes = values.get("regimes", {})
    cycle = tuple(values.get("cycle", ()))
    if not cycle or any(r not in regimes for r in cycle):
        raise DataFileError(f"{where} [values]: cycle {list(cycle)} must name regimes of [values.regimes] "
                            f"({sorted(regimes)})")
    for name, spec in regimes.items():
        bad = set(spec) - _REGIME_KEYS
        if bad:
            raise DataFileError(f"{where} [values.regimes] {name}: unknown key(s) {sorted(bad)}; "
                                f"expected {sorted(_REGIME_KEYS)}")
    known = set(ScheduleSettings.__dataclass_fields__) - {"cycle", "regimes", "max_log10_scale"}
    bad = set(sched) - known
    if bad:
        raise DataFileError(f"{where} [schedule]: unknown key(s) {sorted(bad)}")
    try:
        s = ScheduleSettings(cycle=cycle, regimes=regimes,
                             max_log10_scale=float(values.get("max_log10_scale", 30.0)),
                             **{k: type(getattr(ScheduleSettings, k))(v) for k, v in sched.items()})
    except (TypeError, ValueError) as exc:
        raise DataFileError(f"{where} [schedule]: {exc}") from exc
    if not 0.0 < s.memory_share <= 1.0:
        raise DataFileError(f"{where} [schedule]: memory_share must be within (0, 1]")
    for name in ("structural", "structural_compiled", "compiled_share", "floor_by", "floor_cap_share"):
        if not 0.0 <= getattr(s, name) <= 1.0:
            raise DataFileError(f"{where} [schedule]: {name} must be within [0, 1]")
    at_least_one = ("window_per_worker", "slow_lanes", "group_inflight", "floor_burst",
                    "isolated_inflight", "worker_growth_min_mib")
    positive = ("checkpoint_seconds", "help_after_s", "group_cap_s", "floor_cap_s", "group_cap_factor", "hang_floor_s",
                "hang_factor", "first_call_factor")
    if (any(getattr(s, n) < 1 for n in at_least_one) or any(getattr(s, n) <= 0 for n in positive)
            or s.floor < 0 or s.quarantine_after < 0):
        raise DataFileError(f"{where} [schedule]: {', '.join(at_least_one)} must be at least 1, "
                            f"{', '.join(positive)} positive, floor and quarantine_after non-negative")
    return s


@dataclass
class Proposal:
    """One group-iteration to run: the group, its input, the lane and how it was made."""

    key: Hashable
    input: Any
    lane: str
    op: str
    #: the seconds it is expected to take (charged to its class while in flight)
    expected: float
    #: its group holds an API that killed a worker: it runs apart (``ExecItem.isolate``)
    isolated: bool = False
    #: it runs on its group's worker (``ExecItem.sticky``): the group's calls compile
    sticky: bool = True


def is_compiled(group: Any) -> bool:
    """Whether a member of ``group`` runs through a compiler (its first calls are slow)."""
    return any(getattr(m, "call", "") == "compiled" for m in group.members)


def expected_cost(group: Any) -> float:
    """Seconds of one iteration as the registry build timed it (the first call of each member
    on its seed: for a compiled member, its compilation)."""
    return float(sum(getattr(mi, "seconds", 0.0) or 0.0 for mi in getattr(group, "member_info", ())))


class Schedule:
    """Proposes group-iterations under the budget rules of the module docstring.

    Args:
        groups: key → registered group (with device twins).
        search: the :class:`~xamt.fuzz.search.Search` over the same keys.
        mutate: ``mutate(key, parent, rng) -> child`` (a structural change).
        revalue: ``revalue(key, parent, rng, regime) -> child`` (new values, same signature).
        settings: :class:`ScheduleSettings`.
        budget_s: the campaign's budget (the floor is paced against it).
        seed: random seed of the schedule's own choices.
        timeout: the campaign's ``--timeout``: the most a first call that died is charged.
    """

    def __init__(self, groups: Mapping[Hashable, Any], search: Any, *,
                 mutate: Callable[[Hashable, Any, np.random.Generator], Any],
                 revalue: Callable[[Hashable, Any, np.random.Generator, str], Any],
                 settings: ScheduleSettings, budget_s: float, seed: int = 0,
                 timeout: float | None = None):
        self.search = search
        self.settings = settings
        self.budget_s = float(budget_s)
        self.rng = np.random.Generator(np.random.PCG64([seed, 0x5C4ED]))
        self._seed = int(seed)
        #: per group, a stable number from its key: with the seed and the group's iteration
        #: index it seeds the draws of that iteration (:meth:`_draws_for`)
        self._key_ids = {k: int.from_bytes(hashlib.blake2b(str(k).encode(), digest_size=8).digest(), "little")
                         for k in groups}
        self._mutate, self._revalue = mutate, revalue
        self.classes: dict[Hashable, str] = {k: _COMPILED if is_compiled(g) else _EAGER for k, g in groups.items()}
        self.keys = {c: [k for k, kc in self.classes.items() if kc == c] for c in (_COMPILED, _EAGER)}
        #: worker-seconds spent per class (completed iterations)
        self.spent = {_COMPILED: 0.0, _EAGER: 0.0}
        self._inflight_cost = {_COMPILED: 0.0, _EAGER: 0.0}
        self.inflight: collections.Counter = collections.Counter()
        self.slow_inflight = 0
        #: compile signatures each group has run on the worker that holds it now (its calls
        #: there are cheap), that worker's process id, and the groups each worker holds
        self.warm: dict[Hashable, set[str]] = {k: set() for k in groups}
        self._home: dict[Hashable, int] = {}
        self._held: dict[int, set[Hashable]] = {}
        self._first_cost = {k: expected_cost(g) for k, g in groups.items()}
        # the slowest single call of each group: the registry build's first calls until the
        # campaign has seen the group's own in the fast lane (see call_limit)
        self._slowest_first = {k: max((float(getattr(mi, "seconds", 0.0) or 0.0)
                                       for mi in getattr(g, "member_info", ())), default=0.0)
                               for k, g in groups.items()}
        self._slowest_call = dict(self._slowest_first)
        self._seen_fast: set[Hashable] = set()
        self._timeout = timeout
        #: groups whose latest iteration killed its worker: one iteration in flight at a time
        self._suspect: set[Hashable] = set()
        #: groups holding an API that killed a worker (the campaign adds to it): they run apart,
        #: at most ``isolated_inflight`` iterations of them at a time
        self.isolated: set[Hashable] = set()
        self.isolated_inflight = 0
        #: iterations that ran on another worker than their group's last one (cold there)
        self.moves = 0
        #: per group, whether its calls compiled the last time it ran at a signature new to
        #: its worker (absent: not seen yet, assumed so); see :meth:`sticky`
        self._compiles: dict[Hashable, bool] = {}
        #: per group, value regimes it no longer draws (see :meth:`avoid`)
        self._avoided: dict[Hashable, set[str]] = {}
        #: per group, the deaths :meth:`avoid` heard of in each value regime, and the draws
        self._regime_deaths: dict[Hashable, dict[str, int]] = {}
        self._regime_draws: dict[Hashable, dict[str, int]] = {}
        #: times a group's charges were cleared (:meth:`forgive`)
        self.forgiven = 0
        # every group walks the value cycle from an offset of its own
        self._phase = {k: int(self.rng.integers(len(settings.cycle))) for k in groups}
        for k, g in groups.items():
            st = search.groups[k]
            if st.iterations == 0:
                st.cost = max(st.cost, self._first_cost[k])
        cross = [k for k, g in groups.items() if getattr(g, "relation", "") == "cross_library"]
        self.rng.shuffle(cross)
        self._cross = tuple(cross)
        self._floor = collections.deque(k for k in cross if search.groups[k].iterations < settings.floor)
        self._floor_set = set(self._floor)
        self._burst: dict[Hashable, int] = {}  # iterations of the current burst, per floor group
        #: floor groups whose first call is slow and has not run: they come first in the slow lane
        self._cold_floor = {k for k in self._floor_set if self._needs_warmth(k) and not search.groups[k].iterations}
        self.floor_deficit = sum(max(0, settings.floor - search.groups[k].iterations) for k in self._floor)
        self._rate = 0.0  # completed iterations per second, smoothed (paces the floor)
        #: worker-seconds per group outside the slow lane, and the groups over their cap
        self.charged: collections.Counter = collections.Counter()
        self._charged_total = 0.0  # sum(charged.values()), kept as it changes (asked per result)
        self.capped: set[Hashable] = set()
        self._open_keys: dict[str, list[Hashable]] | None = None
        self._warm_keys: tuple[list[Hashable], list[Hashable]] | None = None
        #: per class: the key list drawn from and the keys drawn and not yet taken
        self._draws: dict[str, tuple[list[Hashable], collections.deque]] = {}
        self._next_release = 0.0
        self._n_groups = max(1, len(groups))

    # -- proposing ---------------------------------------------------------------------------
    def propose(self, n: int, elapsed: float) -> list[Proposal]:
        """Up to ``n`` group-iterations to start now (fewer when every group is retired)."""
        out: list[Proposal] = []
        p_floor = self._floor_share(elapsed)
        for _ in range(n):
            prop = None
            if self.keys[_COMPILED] and self._compiled_turn():
                prop = self._compiled_proposal()
            if prop is None and self._floor and self.rng.random() < p_floor:
                prop = self._floor_proposal()
            if prop is None:
                prop = self._guided_proposal(self._open(_EAGER), _EAGER)
            if prop is None and self.keys[_COMPILED]:
                prop = self._compiled_proposal()  # nothing eager to run: compiled groups take the time
            if prop is None:
                break
            self._start(prop)
            out.append(prop)
        return out

    def _compiled_turn(self) -> bool:
        used = self.spent[_COMPILED] + self._inflight_cost[_COMPILED]
        total = self.spent[_COMPILED] + self.spent[_EAGER] + sum(self._inflight_cost.values())
        return used <= self.settings.compiled_share * max(total, 1e-9)

    def _floor_share(self, elapsed: float) -> float:
        """Share of eager draws that go round-robin to groups below the floor: enough to reach
        it by ``floor_by`` of the budget at the current rate, and at least a quarter."""
        if not self._floor:
            return 0.0
        left = max(1.0, self.settings.floor_by * self.budget_s - elapsed)
        if self._rate <= 0:
            return 0.5
        return float(min(1.0, max(0.25, self.floor_deficit / (self._rate * left))))

    def _floor_proposal(self) -> Proposal | None:
        """The next floor iteration. The round goes in bursts: the group at the head of the
        round gets ``floor_burst`` iterations before it moves to the back, so its compiled
        programs (JAX's and XLA's caches are LRU caches of a few thousand entries per worker)
        are still there for the next one; a round of single iterations over hundreds of
        groups would compile most of them again at every visit."""
        floor = self.settings.floor
        looked = 0
        i = 0
        while i < len(self._floor) and looked < _TRIES:
            key = self._floor[i]
            st = self.search.groups[key]
            if st.retired or st.iterations + self.inflight[key] >= floor:
                del self._floor[i]  # done (or in flight up to the floor): leaves the round
                self._cold_floor.discard(key)
                self._burst.pop(key, None)
                continue
            looked += 1
            if key in self.capped:
                self._cold_floor.discard(key)
                self._rotate(i)  # over its cap: its turn comes again when the others caught up
                continue
            prop = self._derive(key)
            if prop is not None:
                self._burst[key] = self._burst.get(key, 0) + 1
                if self._burst[key] >= self.settings.floor_burst:
                    self._rotate(i)
                return prop
            i += 1  # its own iterations are in flight, or its first call waits for the slow lane
        return None

    def _rotate(self, i: int) -> None:
        """Move the ``i``-th group of the floor round to its back, its burst over."""
        key = self._floor[i]
        del self._floor[i]
        self._floor.append(key)
        self._burst.pop(key, None)

    def _guided_proposal(self, keys: Sequence[Hashable], cls: str | None = None) -> Proposal | None:
        """The first of up to ``_TRIES`` groups drawn from ``keys`` that can run now. With
        ``cls``, ``keys`` is that class's open list and the draws come from its queue."""
        if not keys:
            return None
        for key in self._drawn(keys, cls) if cls is not None else self.search.pick(keys, _TRIES):
            prop = self._derive(key)
            if prop is not None:
                return prop
        return None

    def _drawn(self, keys: Sequence[Hashable], cls: str) -> list[Hashable]:
        """The next ``_TRIES`` keys of ``cls``'s queue of draws (drawn anew when ``keys``, the
        open list, changed)."""
        entry = self._draws.get(cls)
        if entry is None or entry[0] is not keys:
            entry = self._draws[cls] = (keys, collections.deque())
        queue = entry[1]
        out: list[Hashable] = []
        while len(out) < _TRIES:
            if not queue:
                queue.extend(self.search.pick(keys, _DRAW))
                if not queue:
                    break
            key = queue.popleft()
            if not self.search.groups[key].retired:
                out.append(key)
        return out

    def _open(self, cls: str) -> list[Hashable]:
        """The groups of ``cls`` not over their cap (cached until the capped set changes)."""
        if self._open_keys is None:
            self._open_keys = {c: [k for k in ks if k not in self.capped] for c, ks in self.keys.items()}
        return self._open_keys[cls]

    def _cap(self) -> float:
        total = self._charged_total
        return max(self.settings.group_cap_s, self.settings.group_cap_factor * total / self._n_groups)

    def _cap_of(self, key: Hashable, cap: float) -> float:
        """``key``'s cap: ``cap``, or more while it is a cross-library group below the floor.

        The common cap is a few seconds: a group whose calls take 50 ms (an SVD, a special
        function's series) would never reach the floor under it. Below the floor the cap is
        ``floor_cap_share`` of the budget, and at least ``floor_cap_s``."""
        if self.below_floor(key):
            return max(cap, self.settings.floor_cap_s, self.settings.floor_cap_share * self.budget_s)
        return cap

    def below_floor(self, key: Hashable) -> bool:
        """Whether ``key`` is a cross-library group that has not reached its floor yet."""
        return key in self._floor_set and self.search.groups[key].iterations < self.settings.floor

    def _compiled_proposal(self) -> Proposal | None:
        keys = self._open(_COMPILED)
        if self.slow_inflight >= self.settings.slow_lanes:
            return self._guided_proposal(self._warm_open(keys))  # only what runs without compiling
        return self._guided_proposal(keys, _COMPILED)

    def _warm_open(self, keys: list[Hashable]) -> list[Hashable]:
        """The groups of ``keys`` (the compiled class's open list) that have compiled something,
        listed anew only when ``keys`` changed or a group turned warm or cold (asked for at
        every proposal while the slow lane is busy)."""
        cached = self._warm_keys
        if cached is None or cached[0] is not keys:
            cached = self._warm_keys = (keys, [k for k in keys if self.warm[k]])
        return cached[1]

    def call_limit(self, prop: Proposal, timeout: float) -> float | None:
        """Seconds each member's call of ``prop`` may take before it is ended as a timeout:
        ``hang_factor`` times the slowest call its group made in the fast lane (the registry
        build's timing before the first), and at least ``first_call_factor`` times its slowest
        first call in the registry build (a compiler that compiles again after all, a worker
        that has just started) and ``hang_floor_s``; at most ``timeout``. None in the slow
        lane, where a call may compile for as long as its allowance says, unless the group's
        latest iteration killed its worker: then ``timeout`` (a compiled call that hangs would
        otherwise hold a worker for the whole compile allowance, a minute, every time).

        An isolated group (it holds an API that killed a worker) that has run in the fast lane
        drops the first-call term: its calls there are timed already, on the isolation worker
        that runs them, and a compile again after all kills only that worker. With the term,
        each hang of a JAX special function (a first call of 3 s: compilation) cost 10 s, and
        groups whose member hangs on many inputs got a few iterations in a campaign."""
        if prop.lane == SLOW:
            return float(timeout) if prop.key in self._suspect else None
        s = self.settings
        first = 0.0 if prop.isolated and prop.key in self._seen_fast else s.first_call_factor * self._slowest_first[prop.key]
        return min(float(timeout), max(s.hang_floor_s, s.hang_factor * self._slowest_call[prop.key], first))

    def sticky(self, key: Hashable) -> bool:
        """Whether ``key``'s iterations should run on the worker that holds its compiled
        programs: until it has run, and while its calls compile (a compiled member, JAX's eager
        operations). A group whose calls compiled nothing (numpy, scipy, torch eager) loses
        nothing on another worker: its iterations go to whichever is free, and a worker that
        would idle while its peer holds the queue takes them instead of another group's
        compiled programs (moving those costs a compilation each)."""
        return self._compiles.get(key, True)

    def first_call_s(self, key: Hashable) -> float:
        """Seconds the registry build timed for ``key``'s first call (all members)."""
        return self._first_cost[key]

    def _needs_warmth(self, key: Hashable) -> bool:
        """Whether ``key``'s calls at a signature it has not run are slow: a compiled member, or
        a first call the registry build timed above ``slow_first_call_s`` (JAX compiles each
        operation for each new shape and dtype, eager or not)."""
        return self.classes[key] == _COMPILED or self._first_cost[key] > self.settings.slow_first_call_s

    def _derive(self, key: Hashable) -> Proposal | None:
        """The next input of ``key``: mostly new values at its parent's signature, sometimes a
        structural change. A call expected to be slow (:meth:`_needs_warmth`, at a signature
        the group has not run) goes to the slow lane; when that is full, only signatures the
        group has run are drawn (None when it has none)."""
        if self.inflight[key] >= (1 if key in self._suspect else self.settings.group_inflight):
            return None  # its own iterations are queued on one worker (affinity) already
        isolated = key in self.isolated
        if isolated and self.isolated_inflight >= self._isolated_room(key):
            return None  # the isolation worker has enough queued: the window stays with the others
        slow_free = self.slow_inflight < self.settings.slow_lanes
        careful = self._needs_warmth(key)
        warm = self.warm[key]
        accept = None
        if careful and not slow_free:
            if not warm:
                return None  # it has compiled nothing yet and the slow lane is busy
            accept = lambda inp: inp.compile_signature() in warm  # noqa: E731
        st = self.search.groups[key]
        index = st.iterations + self.inflight[key]
        rng = self._draws_for(key, index)
        parent = self.search.parent(key, accept, rng)
        if parent is None:
            return None
        # a new signature costs a compilation wherever calls are slow to warm up
        share = self.settings.structural_compiled if careful else self.settings.structural
        if rng.random() < share and (slow_free or not careful):
            child, op = self._mutate(key, parent, rng), "structural"
        else:
            cycle = self.settings.cycle
            start = self._phase[key] + index
            regime = cycle[start % len(cycle)]
            avoided = self._avoided.get(key)
            if avoided and regime in avoided:
                # the next regime of the cycle it does not avoid; where it avoids them all, the
                # one it died in least often per draw (JAX's hyp2f1 hangs on every edge,
                # non-finite and mixed input, on some boundary ones and on few ordinary ones:
                # drawing all of them again held its group at a few dozen iterations)
                later = [cycle[(start + j) % len(cycle)] for j in range(len(cycle))]
                regime = next((r for r in later[1:] if r not in avoided), None) or min(
                    later, key=lambda r: self._death_rate(key, r))
            draws = self._regime_draws.setdefault(key, {})
            draws[regime] = draws.get(regime, 0) + 1
            child, op = self._revalue(key, parent, rng, regime), f"values:{regime}"
        lane = FAST
        if careful and child.compile_signature() not in warm:
            if not slow_free:
                return None
            if self._cold_floor and key not in self._cold_floor and self.rng.random() >= _SLOW_OTHERS:
                return None  # the slow lane goes to the floor's groups first, mostly
            lane = SLOW
        return Proposal(key, child, lane, op, st.cost, isolated, self.sticky(key))

    def _isolated_room(self, key: Hashable) -> int:
        """How many isolated iterations may be in flight when ``key`` (isolated) would add one:
        ``isolated_inflight``, or half of it for a group that is not short of its floor while
        an isolated cross-library group is. The isolation worker runs one call at a time on the
        CPU the others leave; filled by the guided draws of the other isolated groups (about a
        hundred, some hanging a minute per call), it left floor groups a slot now and then:
        x:lcm ended a campaign at 2 iterations, x:svd/linalg at 18. The look over the isolated
        groups (about a hundred, on the fuzz loop's path) is made only where the answer matters:
        with fewer than half in flight, either room admits ``key``."""
        room = self.settings.isolated_inflight
        half = room // 2
        if (room > 1 and self.isolated_inflight >= half and not self.below_floor(key)
                and any(self.below_floor(k) for k in self.isolated)):
            return half
        return room

    def _draws_for(self, key: Hashable, index: int) -> np.random.Generator:
        """The generator of ``key``'s ``index``-th iteration (see the module docstring)."""
        return np.random.Generator(np.random.PCG64([self._seed, self._key_ids[key], index]))

    def _start(self, prop: Proposal) -> None:
        self.inflight[prop.key] += 1
        self.isolated_inflight += prop.isolated
        self._inflight_cost[self.classes[prop.key]] += prop.expected
        if prop.lane == SLOW:
            self.slow_inflight += 1

    # -- feedback ----------------------------------------------------------------------------
    def done(self, prop: Proposal, seconds: float, ran: bool, rate: float | None = None,
             deaths: int = 0, slowest_call: float | None = None,
             workers: Sequence[int] = (), killed: Sequence[int] = (),
             compile_s: float | None = None) -> None:
        """``prop`` finished after ``seconds`` of worker time (call it before the search hears of
        the iteration). ``ran``: some member returned or raised, so its signature is compiled
        now; ``rate``: the campaign's current iterations per second (paces the floor);
        ``deaths``: workers it killed (each costs its compiled programs: ``death_cost_s`` more
        against the group's cap); ``slowest_call``: the longest single call that returned or
        raised (it sets the group's :meth:`call_limit`); ``workers``: the process ids of the
        workers that ran it, the last one now holding the group's compiled programs, and
        ``killed`` those it killed, whose compiled programs are gone (every group they held
        is cold again); ``compile_s``: seconds its calls spent compiling, as the libraries count
        them (None: not counted), which says whether the group is :meth:`sticky`."""
        cls = self.classes[prop.key]
        if compile_s is not None and ran:
            if compile_s > 0:
                self._compiles[prop.key] = True
            elif prop.key not in self._compiles or (prop.sticky and prop.lane == SLOW):
                # its first run, or a new signature on its own worker, compiled nothing
                self._compiles[prop.key] = False
        if slowest_call is not None and prop.lane == FAST:
            key = prop.key
            if key in self._seen_fast:
                self._slowest_call[key] = max(self._slowest_call[key], slowest_call)
            else:  # the first fast-lane figure replaces the registry's first-call timing
                self._seen_fast.add(key)
                self._slowest_call[key] = slowest_call
        self.inflight[prop.key] -= 1
        self.isolated_inflight -= prop.isolated
        if not self.inflight[prop.key]:
            del self.inflight[prop.key]
        self._inflight_cost[cls] = max(0.0, self._inflight_cost[cls] - prop.expected)
        self.spent[cls] += max(0.0, seconds)
        if prop.lane == SLOW:
            self.slow_inflight -= 1
        if prop.lane == FAST or deaths:
            # a compilation is not charged; a call that died in the slow lane is (a group that
            # hangs at every new signature would hold the slow lane otherwise). A death on the
            # isolation worker costs no one else's compiled programs: only its seconds count
            death_cost = 0.0 if prop.isolated else self.settings.death_cost_s
            spent = max(0.0, seconds)
            if prop.lane == SLOW and self._timeout is not None:
                # a first call that died is charged what a fast-lane hang may take at most: its
                # compile allowance (up to five times the registry's first call, slower still
                # on the niced isolation worker) once spent would hold the group back all campaign
                spent = min(spent, self._timeout)
            charge = spent + deaths * death_cost
            self.charged[prop.key] += charge
            self._charged_total += charge
            if prop.key not in self.capped and self.charged[prop.key] > self._cap_of(prop.key, self._cap()):
                self.capped.add(prop.key)
                self._open_keys = None
        if self.capped and time.monotonic() >= self._next_release:
            # now and then, groups that fell under the (growing) cap again are let back in
            self._next_release = time.monotonic() + 2.0
            cap = self._cap()
            back = {k for k in self.capped if self.charged[k] <= self._cap_of(k, cap)}
            if back:
                self.capped -= back
                self._open_keys = None
        if deaths:
            self._suspect.add(prop.key)
        else:
            self._suspect.discard(prop.key)
        for pid in killed:
            for k in self._held.pop(pid, ()):
                self.warm[k].clear()
                self._warm_keys = None
                self._home.pop(k, None)
        home = workers[-1] if workers and workers[-1] not in killed else None
        if not prop.sticky:
            home = None  # it ran where there was room: no worker holds what it needs
        if home is not None and self._home.get(prop.key) != home:
            # another worker runs the group now: what the old one compiled is not there
            old = self._home.get(prop.key)
            if old is not None:
                self._held.get(old, set()).discard(prop.key)
                self.moves += 1
            self.warm[prop.key].clear()
            self._warm_keys = None
            self._home[prop.key] = home
            self._held.setdefault(home, set()).add(prop.key)
        if ran:
            if home is not None or not workers or not prop.sticky:
                if not self.warm[prop.key]:
                    self._warm_keys = None  # warm now: among those drawn while the slow lane is busy
                self.warm[prop.key].add(prop.input.compile_signature())
            self._cold_floor.discard(prop.key)
        if self.below_floor(prop.key):
            self.floor_deficit = max(0, self.floor_deficit - 1)
        if rate is not None:
            self._rate = rate

    def avoid(self, key: Hashable, op: str) -> bool:
        """``key`` stops drawing the value regime of ``op`` (``values:<regime>``; structural
        changes have none): a member it cannot leave out keeps dying on such values (JAX's
        hyp1f1 series looping on huge arguments against scipy's), each death costs seconds and
        the worker's compiled programs, and its deaths are triaged already. The group is
        fuzzed on the other regimes, and once it avoids them all, on the one it died in least
        often per draw.

        Returns whether a regime was newly avoided: what the group runs from now on no longer
        holds the values it died on (or, once every regime is avoided, only those it died on
        least often), so the caller may clear its charges (:meth:`forgive`), at most once per
        regime. Without the last clearing, x:hyp2f1, whose JAX member hangs in every regime,
        ended campaigns at 88 and 96 of its 100 floor iterations, held at its floor cap."""
        if not op.startswith("values:"):
            return False
        regime = op.split(":", 1)[1]
        counts = self._regime_deaths.setdefault(key, {})
        counts[regime] = counts.get(regime, 0) + 1
        avoided = self._avoided.setdefault(key, set())
        if regime in avoided:
            return False
        avoided.add(regime)
        return True

    def _death_rate(self, key: Hashable, regime: str) -> float:
        """``key``'s deaths per draw in ``regime``, smoothed (one death in one draw is no surer
        than none in none)."""
        deaths = self._regime_deaths.get(key, {}).get(regime, 0)
        draws = self._regime_draws.get(key, {}).get(regime, 0)
        return (deaths + 1) / (draws + 2)

    def forgive(self, key: Hashable) -> None:
        """Clear what ``key`` was charged against its cap (and let it back in): the member that
        cost it was left out (quarantined), so what runs from now on is another, cheaper group."""
        self._charged_total -= self.charged[key]
        self.charged[key] = 0.0
        self.forgiven += 1
        if key in self.capped:
            self.capped.discard(key)
            self._open_keys = None
        self._suspect.discard(key)

    def summary(self, detail: bool = True) -> dict[str, Any]:
        """Figures for the progress line and, with ``detail`` (the groups short of the floor,
        the regimes groups avoid), the campaign's settings."""
        out: dict[str, Any] = {
            "compiled_s": round(self.spent[_COMPILED], 3), "eager_s": round(self.spent[_EAGER], 3),
            "fast_lane_s": round(self._charged_total, 3),
            "slow_in_flight": self.slow_inflight, "floor_deficit": self.floor_deficit, "moves": self.moves,
            "floor_left": len(self._floor), "capped": len(self.capped), "cold_floor": len(self._cold_floor),
            "forgiven": self.forgiven}
        if detail:
            out["floor_short"] = self.floor_short()
            out["avoided"] = {str(k): sorted(v) for k, v in sorted(self._avoided.items(), key=lambda kv: str(kv[0]))}
        return out

    def floor_short(self, limit: int = 50) -> list[list[Any]]:
        """The cross-library groups still below the floor, fewest iterations first (at most
        ``limit``): ``[key, iterations, seconds charged, capped, isolated]``, to say why."""
        floor = self.settings.floor
        short = [(self.search.groups[k].iterations, str(k), k) for k in self._cross
                 if self.search.groups[k].iterations < floor]
        return [[name, its, round(self.charged[k], 3), k in self.capped, k in self.isolated]
                for its, name, k in sorted(short)[:limit]]
