"""Keep the sandbox pool busy with many small, dependent pieces of work at once.

A *step generator* yields lists of :class:`sandbox.Task` and receives their outcomes (in order),
until it returns a value: :meth:`GroupExecutor.run_steps` and ``probe_steps`` are such
generators. :func:`drive` runs one to completion synchronously. :class:`Scheduler` runs many
concurrently: it submits each generator's current tasks without waiting, and a generator moves
on as soon as its own tasks are done (the pool's futures signal a queue), so one slow task holds
back only its own generator.
"""
from __future__ import annotations

import queue
from typing import Any, Generator, Hashable, Iterable

__all__ = ["StepGen", "drive", "Scheduler"]

StepGen = Generator[list, list, Any]

#: the token :meth:`Scheduler.wake` puts in the queue of finished tasks
_WAKE = object()


def drive(pool: Any, gen: StepGen) -> Any:
    """Run a step generator to completion with ``pool.run``; returns its value."""
    try:
        tasks = next(gen)
        while True:
            tasks = gen.send(pool.run(tasks) if tasks else [])
    except StopIteration as stop:
        return stop.value


class _Active:
    __slots__ = ("gen", "pool", "futures", "remaining", "step")

    def __init__(self, gen: StepGen, pool: Any) -> None:
        self.gen = gen
        self.pool = pool
        self.futures: list = []
        self.remaining = 0
        self.step = 0


class Scheduler:
    """Many step generators in flight on one pool, or on another one named per generator (not
    thread-safe: one driving thread)."""

    def __init__(self, pool: Any):
        self.pool = pool
        self._done: "queue.Queue[tuple[Hashable, int]]" = queue.Queue()
        self._active: dict[Hashable, _Active] = {}
        self._finished: list[tuple[Hashable, Any]] = []

    def __len__(self) -> int:
        return len(self._active)

    def start(self, token: Hashable, gen: StepGen, pool: Any = None) -> None:
        """Begin running ``gen`` (its first tasks are submitted now), on ``pool`` if given, else
        on the scheduler's own."""
        self.start_many([(token, gen, pool)])

    def start_many(self, starts: Iterable[tuple[Hashable, StepGen, Any]]) -> None:
        """:meth:`start` for several ``(token, gen, pool)`` at once (``pool`` None: the
        scheduler's own): their first tasks go to each pool in one ``submit_many``, one hand-over
        to its manager thread rather than one per generator."""
        batches: dict[int, tuple[Any, list[tuple[Hashable, _Active, list]]]] = {}
        for token, gen, pool in starts:
            if token in self._active:
                raise ValueError(f"token {token!r} is already running")
            active = _Active(gen, self.pool if pool is None else pool)
            self._active[token] = active
            try:
                tasks = self._runnable(token, active, next(gen))
            except StopIteration as stop:
                del self._active[token]
                self._finished.append((token, stop.value))
                continue
            if tasks is not None:
                batches.setdefault(id(active.pool), (active.pool, []))[1].append((token, active, tasks))
        for pool, entries in batches.values():
            futures = pool.submit_many([task for _, _, tasks in entries for task in tasks])
            at = 0
            for token, active, tasks in entries:
                self._attach(token, active, futures[at:at + len(tasks)])
                at += len(tasks)

    def _runnable(self, token: Hashable, active: _Active, tasks: list) -> list | None:
        """The generator's next non-empty step (steps with nothing to run are answered at once);
        None when it finished instead."""
        while not tasks:
            try:
                tasks = active.gen.send([])
            except StopIteration as stop:
                del self._active[token]
                self._finished.append((token, stop.value))
                return None
        return tasks

    def _attach(self, token: Hashable, active: _Active, futures: list) -> None:
        active.step += 1
        step = active.step
        active.futures = futures
        active.remaining = len(futures)
        for future in futures:
            future.add_done_callback(lambda _f, t=token, s=step: self._done.put((t, s)))

    def _submit(self, token: Hashable, active: _Active, tasks: list) -> None:
        tasks = self._runnable(token, active, tasks)
        if tasks is not None:
            self._attach(token, active, active.pool.submit_many(tasks))

    def wake(self) -> None:
        """Make a :meth:`wait` in progress return now (from another thread: new work arrived)."""
        self._done.put((_WAKE, 0))

    def wait(self, timeout: float | None = None) -> list[tuple[Hashable, Any]]:
        """Block until at least one generator finished, or :meth:`wake` was called; return
        ``(token, value)`` pairs (none after a wake)."""
        while not self._finished:
            if not self._active:
                return []
            token, step = self._done.get(timeout=timeout)
            if token is _WAKE:
                break
            active = self._active.get(token)
            if active is None or active.step != step:
                continue
            active.remaining -= 1
            if active.remaining:
                continue
            outcomes = [f.result() for f in active.futures]
            try:
                tasks = active.gen.send(outcomes)
            except StopIteration as stop:
                del self._active[token]
                self._finished.append((token, stop.value))
                continue
            self._submit(token, active, tasks)
        done, self._finished = self._finished, []
        return done
