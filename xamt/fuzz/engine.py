"""The streaming campaign loop: a bounded window of group-iterations in flight, consumed as they
complete.

No iteration waits for another: when one finishes, its result is judged at once and its slot in
the window is refilled from the schedule (:mod:`xamt.fuzz.schedule`), so a worker busy with a
slow call (a first compilation) holds back only that call, while the window keeps the other
workers fed. The schedule keeps calls that are expected to compile to a lane of their own.

The engine talks to an *executor* with two calls, ``submit_many(pairs)`` and ``wait(timeout)``;
:class:`LocalExecutor` runs items on one sandbox pool. Search, budget and store stay above that
line, in the campaign (:mod:`xamt.fuzz.campaign`), which gives the engine three callbacks: one
per finished iteration, one per turn of the loop (checkpoints, triage results, progress) and one
that says whether to stop.
"""
from __future__ import annotations

import itertools
import queue
import time
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Mapping, Protocol

from xamt.fuzz.schedule import SLOW, Proposal, Schedule

__all__ = ["Executor", "LocalExecutor", "Engine", "EngineStats"]


class Executor(Protocol):
    """Where group-iterations run (one local pool; Ray actors)."""

    def submit_many(self, pairs: list[tuple[int, Any]]) -> None:
        """Start each ``(token, item)`` (``item`` an :class:`~xamt.exec.group.ExecItem`): the
        engine hands over each refill of its window in one call."""

    def wait(self, timeout: float) -> list[tuple[int, Any]]:
        """``(token, GroupRun)`` of every item finished by now, waiting up to ``timeout`` s for
        the first one."""


class LocalExecutor:
    """Group-iterations on one sandbox pool, each a step generator of the group executor (a
    dying group task is re-run member by member without holding up the others).

    ``isolation() -> pool | None``: the pool for items marked ``isolate`` (None while there is
    none yet: they run on the main pool meanwhile)."""

    def __init__(self, pool: Any, group_executor: Any, isolation: Callable[[], Any] | None = None):
        from xamt.exec.schedule import Scheduler

        self._scheduler = Scheduler(pool)
        self._gx = group_executor
        self._isolation = isolation

    def submit_many(self, pairs: list[tuple[int, Any]]) -> None:
        """Start each ``(token, item)``, their tasks handed to the pool in one batch (an isolated
        item's to the isolation pool)."""
        self._scheduler.start_many([(token, self._gx.run_steps([item]), self._pool_for(item))
                                    for token, item in pairs])

    def _pool_for(self, item: Any) -> Any:
        return self._isolation() if self._isolation is not None and getattr(item, "isolate", False) else None

    def wait(self, timeout: float) -> list[tuple[int, Any]]:
        out: list[tuple[int, Any]] = []
        wait = timeout
        while True:
            try:
                done = self._scheduler.wait(timeout=wait)
            except queue.Empty:
                break
            if not done:
                break
            out.extend((token, runs[0]) for token, runs in done)
            wait = 0.0  # take what else is ready, without waiting again
        return out

    def __len__(self) -> int:
        return len(self._scheduler)


@dataclass
class EngineStats:
    """Counters of one engine run."""

    started: int = 0
    finished: int = 0
    slow_started: int = 0


class Engine:
    """Keeps ``window`` group-iterations in flight on ``executor`` (see the module docstring).

    Args:
        groups: key → group, to build the items.
        schedule: proposes what runs next.
        executor: where it runs.
        window: group-iterations in flight at most.
        make_item: ``make_item(group, proposal) -> item`` for the executor.
        on_result: ``on_result(proposal, run)`` for every finished iteration.
        on_tick: ``on_tick(now)`` once per turn of the loop (at least every ``poll`` seconds).
        poll: the longest the loop waits for a result before it ticks.
    """

    def __init__(self, groups: Mapping[Hashable, Any], schedule: Schedule, executor: Executor, *,
                 window: int, make_item: Callable[[Any, Proposal], Any],
                 on_result: Callable[[Proposal, Any], None], on_tick: Callable[[float], None],
                 poll: float = 0.25):
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        self.groups = groups
        self.schedule = schedule
        self.executor = executor
        self.window = int(window)
        self._make_item = make_item
        self._on_result = on_result
        self._on_tick = on_tick
        self.poll = float(poll)
        self.inflight: dict[int, Proposal] = {}
        self.stats = EngineStats()
        self._tokens = itertools.count(1)
        # refill in chunks of a quarter window: one proposal round per chunk, not per result
        self._chunk = max(1, self.window // 4)

    def run(self, deadline: float, elapsed: Callable[[], float], stop: Callable[[], bool]) -> bool:
        """Run until ``time.monotonic()`` reaches ``deadline``, ``stop()`` says so, or nothing is
        left to run. Returns True when it ran out of work (every group retired). Iterations still
        in flight at the end are left to the caller (closing the pool cancels them)."""
        exhausted = False
        while True:
            now = time.monotonic()
            if now >= deadline or stop():
                break
            free = self.window - len(self.inflight)
            if free >= self._chunk or (free > 0 and not self.inflight):
                batch = []
                for prop in self.schedule.propose(free, elapsed()):
                    token = next(self._tokens)
                    self.inflight[token] = prop
                    self.stats.started += 1
                    self.stats.slow_started += prop.lane == SLOW
                    batch.append((token, self._make_item(self.groups[prop.key], prop)))
                if batch:
                    self.executor.submit_many(batch)
                if not self.inflight:
                    exhausted = True
                    break
            for token, run in self.executor.wait(min(self.poll, max(0.0, deadline - now))):
                prop = self.inflight.pop(token)
                self.stats.finished += 1
                self._on_result(prop, run)
            self._on_tick(time.monotonic())
        return exhausted
