"""Triage beside fuzzing: candidates are triaged on a thread of their own while the campaign
loop goes on.

Triage's sandbox calls (minimisation, the float64 reference, the double run before filing) go to
the campaign's pool like the fuzzer's own; its replays run in a fork of an import-only
interpreter (:class:`xamt.replay.ReplayServer`). The thread only computes: the campaign's thread
takes the outcomes (:meth:`TriageRunner.results`) and files them, so the store has one writer.
The queue serves the group triaged least so far first (then the oldest candidate): one group's
hundred variants of a divergence must not hold it while other groups' first divergences wait.
"""
from __future__ import annotations

import threading
import time
from typing import Any

from xamt.log import get_logger

__all__ = ["TriageRunner"]

_log = get_logger("triage.runner")


class TriageRunner:
    """Runs ``triage.process(candidate, campaign_id)`` for queued candidates on a thread.

    Args:
        triage: a :class:`~xamt.triage.pipeline.Triage` (its executor shares the campaign's pool).
        campaign_id: the campaign the findings belong to.
        limit: candidates kept waiting at most; past it, the candidate of the group with the
            most waiting is dropped (and counted in :attr:`overflow`).
    """

    def __init__(self, triage: Any, campaign_id: int, *, limit: int = 5000):
        self.triage = triage
        self.campaign_id = campaign_id
        self.limit = int(limit)
        self._cond = threading.Condition()
        self._pending: list[Any] = []
        self._served: dict[str, int] = {}
        self._done: list[tuple[Any, Any]] = []
        self._stop = False
        self._accepting = True
        self.busy: Any = None
        self.seconds = 0.0
        self.processed = 0
        self.overflow: list[Any] = []
        self._thread = threading.Thread(target=self._loop, name="xamt-triage", daemon=True)
        self._thread.start()

    # -- the campaign's side -------------------------------------------------------------------
    def put(self, candidate: Any) -> None:
        """Queue ``candidate`` for triage."""
        with self._cond:
            if not self._accepting:
                self.overflow.append(candidate)
                return
            self._pending.append(candidate)
            if len(self._pending) > self.limit:
                self.overflow.append(self._pending.pop(self._most_waiting()))
            self._cond.notify()

    def results(self) -> list[tuple[Any, Any]]:
        """``(candidate, TriageOutcome)`` pairs finished since the last call."""
        with self._cond:
            done, self._done = self._done, []
        return done

    @property
    def queued(self) -> int:
        """Candidates waiting (the one in progress not counted)."""
        return len(self._pending)

    def stop(self, grace: float) -> list[Any]:
        """Start nothing new; give the candidate in progress up to ``grace`` seconds (its
        minimisation stops at once), then return the candidates never triaged."""
        with self._cond:
            self._accepting = False
            self._stop = True
            left, self._pending = self._pending, []
            self._cond.notify_all()
        self.triage.deadline = time.monotonic()
        self._thread.join(timeout=max(0.0, grace))
        if self._thread.is_alive():
            _log.warning("triage of %s still running after %.0f s; left behind",
                         getattr(self.busy, "prekey", "?"), grace)
        return left + self.overflow

    # -- the thread ----------------------------------------------------------------------------
    def _most_waiting(self) -> int:
        counts: dict[str, int] = {}
        for c in self._pending:
            counts[c.group.key] = counts.get(c.group.key, 0) + 1
        worst = max(counts, key=lambda k: (counts[k], self._served.get(k, 0)))
        return max(i for i, c in enumerate(self._pending) if c.group.key == worst)

    def _next(self) -> int:
        return min(range(len(self._pending)),
                   key=lambda i: (self._served.get(self._pending[i].group.key, 0), i))

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                cand = self._pending.pop(self._next())
                self._served[cand.group.key] = self._served.get(cand.group.key, 0) + 1
                self.busy = cand
            out = self.triage.process(cand, self.campaign_id)  # never raises (it says why)
            with self._cond:
                self.busy = None
                self.seconds += out.seconds
                self.processed += 1
                self._done.append((cand, out))
