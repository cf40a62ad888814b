"""Which queued piece of work to start next when its tasks run on pools of unequal size.

A registry build keeps a window of candidates in flight, and a candidate's tasks go to the pools
of its members' runtimes (:mod:`xamt.exec.pools`: the main zygote's pool, and one pool per
library in an interpreter or environment of its own, most with one worker). With one window for
all, the candidates of a one-worker runtime can fill it: late in an eighteen-library build, 96
PyTensor candidates (graph rewriting and C compiles, seconds a call) waited on PyTensor's one
worker while the main pool, with 1,380 candidates of its own still queued, sat idle.

:class:`RuntimeWindow` gives each runtime a share of the window in proportion to its workers
(:func:`runtime_caps`), and starts the first queued item, in the order it was queued, whose
runtimes all have room. The order still says what comes first; an item waits only behind work
of the runtimes it needs.
"""
from __future__ import annotations

import itertools
from collections import Counter, deque
from typing import Any, Generic, Hashable, Iterable, Mapping, TypeVar

__all__ = ["RuntimeWindow", "runtime_caps", "pool_workers"]

T = TypeVar("T")


def pool_workers(pool: Any, default: str) -> dict[str, int]:
    """Workers per runtime of an open pool: a :class:`sandbox.PoolSet`'s pools by name, or one
    pool's workers under ``default``."""
    pools = getattr(pool, "pools", None)
    if isinstance(pools, Mapping):
        return {name: int(p.workers) for name, p in pools.items()}
    return {default: int(getattr(pool, "workers", 1))}


def runtime_caps(total: int, workers: Mapping[str, int]) -> dict[str, int]:
    """Each runtime's share of a window of ``total`` items: ``total`` times its workers over the
    widest pool's, at least one (with the main pool's two workers, a one-worker runtime may hold
    half the window)."""
    widest = max(workers.values(), default=1) or 1
    return {name: max(1, total * max(1, n) // widest) for name, n in workers.items()}


class RuntimeWindow(Generic[T]):
    """Queued items, each needing a set of runtimes, started at most ``total`` at a time and at
    most ``caps[runtime]`` per runtime (a runtime ``caps`` does not name is held by ``total``
    alone). Not thread-safe: one driving thread."""

    def __init__(self, total: int, caps: Mapping[str, int] | None = None):
        if total < 1:
            raise ValueError(f"a window holds at least one item, not {total}")
        self.total = total
        self.caps = dict(caps or {})
        # queued items by the set of runtimes they need, each queue in push order: the next
        # item to start is the earliest head among the queues that have room
        self._queues: dict[frozenset[str], deque[tuple[int, Hashable, T]]] = {}
        self._seq = itertools.count()
        self._queued = 0
        self._inflight: Counter[str] = Counter()
        self._running: dict[Hashable, frozenset[str]] = {}

    def __len__(self) -> int:
        """Items queued and not yet started."""
        return self._queued

    @property
    def running(self) -> int:
        """Items started and not yet finished."""
        return len(self._running)

    def push(self, key: Hashable, item: T, runtimes: Iterable[str]) -> None:
        """Queue ``item`` (``key`` names it to :meth:`finished`) after those pushed before."""
        needs = frozenset(runtimes)
        self._queues.setdefault(needs, deque()).append((next(self._seq), key, item))
        self._queued += 1

    def take(self) -> list[T]:
        """The items to start now, in push order among those whose runtimes have room; they count
        as running until :meth:`finished`."""
        started: list[T] = []
        while len(self._running) < self.total and self._queued:
            best: deque | None = None
            needs_best: frozenset[str] = frozenset()
            for needs, queue in self._queues.items():
                if (best is None or queue[0][0] < best[0][0]) and self._room(needs):
                    best, needs_best = queue, needs
            if best is None:
                break
            _, key, item = best.popleft()
            if not best:
                del self._queues[needs_best]
            self._queued -= 1
            self._running[key] = needs_best
            self._inflight.update(needs_best)
            started.append(item)
        return started

    def finished(self, key: Hashable) -> None:
        """``key``'s item is done: its runtimes have room for another."""
        needs = self._running.pop(key)
        self._inflight.subtract(needs)

    def clear(self) -> int:
        """Drop every queued item (a spent budget); returns how many were dropped."""
        dropped, self._queued = self._queued, 0
        self._queues.clear()
        return dropped

    def _room(self, needs: frozenset[str]) -> bool:
        return all(self._inflight[r] < self.caps.get(r, self.total) for r in needs)
