"""Deadlines of the pool: task time limits, the kill that follows one, and the wait for a killed
worker's exit report.

The pool's manager thread has no other timers: :meth:`Deadlines._next_timer` says how long its
``select`` may sleep, :meth:`Deadlines._check_timers` acts on what has come due. A worker's
deadline is judged from its progress page (the running task's start time plus its limit); a
timeout first samples where the worker's native code runs (:mod:`sandbox.native`), asks it
for a stack dump (SIGUSR1, faulthandler) and kills it ``kill_grace`` seconds later.
"""
from __future__ import annotations

import itertools
import logging
import math
import os
import signal
import time
from typing import Dict, Optional

from . import native
from .records import BUSY, Pending, WorkerRecord

__all__ = ["Deadlines", "EXIT_WAIT"]

log = logging.getLogger("sandbox.pool")

EXIT_WAIT = 10.0             # seconds to wait for the zygote's exit report after a kill


class Deadlines:
    """Timer and kill machinery of :class:`~sandbox.pool.SandboxPool` (a mixin).

    Uses the pool's ``_workers``, ``_cancel_deadline`` and ``kill_grace``, and its
    ``_read_worker`` and ``_finalize``.
    """

    _workers: Dict[int, WorkerRecord]
    _cancel_deadline: Optional[float]
    _help_at: Optional[float]
    kill_grace: float
    locate_hangs: bool

    def _next_timer(self, now: float) -> Optional[float]:
        nearest = math.inf
        for w in self._workers.values():
            if w.kill_at is not None:
                nearest = min(nearest, w.kill_at)
            elif w.next_check is not None and w.state == BUSY and w.kill_reason is None:
                nearest = min(nearest, w.next_check)
            if w.exit_deadline is not None:
                nearest = min(nearest, w.exit_deadline)
        if self._cancel_deadline is not None:
            nearest = min(nearest, self._cancel_deadline)
        if self._help_at is not None:
            # an idle worker may help a busy owner from then on: the dispatch looks again
            nearest = min(nearest, self._help_at)
            self._help_at = None
        return None if nearest == math.inf else max(0.0, nearest - now)

    def _check_timers(self, now: float) -> None:
        for w in list(self._workers.values()):
            if w.kill_at is not None and now >= w.kill_at:
                w.kill_at = None
                self._hard_kill(w)
            elif (w.state == BUSY and w.kill_reason is None and w.next_check is not None
                  and now >= w.next_check):
                self._read_worker(w)  # results first (this also re-arms)
                if w.state == BUSY and w.kill_reason is None:
                    self._arm(w, now)
            if w.exit_deadline is not None and now >= w.exit_deadline and w.wid in self._workers:
                # no exit report came (it should within milliseconds): finish without a status
                log.warning("no exit report for worker %s (pid %s); finalizing without one", w.wid, w.pid)
                self._hard_kill(w)
                self._finalize(w, None, None)

    def _arm(self, w: WorkerRecord, now: float) -> None:
        """Set the worker's next deadline check from its progress page; kill it if the running
        task is past its limit. A timer, not polling: it fires once per deadline."""
        index, started_at = w.running()
        if index >= 0:
            p = w.inflight[index]
            step = p.task.step_timeout
            if p.timeout is not None or step is not None:
                deadline = started_at + p.timeout if p.timeout is not None else math.inf
                check = deadline
                note = None
                if step is not None:
                    mark, marked_at = w.progress.read_mark()
                    if mark is not None and marked_at >= started_at:  # a mark of this task
                        if marked_at + step < deadline:
                            deadline = check = marked_at + step
                            note = f"killed: its step {mark} ran past the {step:g} s step limit"
                    else:  # no mark yet: look again in a step's time
                        check = min(deadline, now + step)
                if now >= deadline:
                    self._begin_kill(w, "timeout", p, started_at, note)
                else:
                    w.next_check = check
                return
        # between tasks, or running one without a limit: the next task to start may have one
        rest = [p.timeout for p in itertools.islice(w.inflight, index + 1, None) if p.timeout is not None]
        w.next_check = now + min(rest) if rest else None

    def _begin_kill(self, w: WorkerRecord, reason: str, p: Optional[Pending] = None, started_at: float = 0.0,
                    note: Optional[str] = None) -> None:
        w.kill_reason = reason
        w.kill_note = note
        w.kill_tid = p.tid if p is not None else None
        w.kill_started_at = started_at
        w.next_check = None
        if reason == "timeout" and self.locate_hangs and w.pid is not None:
            # before the dump: its signal handler would be what the samples find
            w.native = native.sample(w.pid)
        if reason == "timeout" and self.kill_grace > 0 and w.pid is not None:
            self._signal(w, signal.SIGUSR1)  # faulthandler dumps the stuck stack to stderr
            w.kill_at = time.monotonic() + self.kill_grace
        else:
            self._hard_kill(w)

    def _hard_kill(self, w: WorkerRecord) -> None:
        if w.pid is None:
            return
        try:
            os.killpg(w.pid, signal.SIGKILL)  # the worker leads its own group: its children too
        except OSError:
            pass
        self._signal(w, signal.SIGKILL)
        if w.exit_deadline is None:
            w.exit_deadline = time.monotonic() + EXIT_WAIT

    def _signal(self, w: WorkerRecord, sig: int) -> None:
        try:
            if w.pidfd is not None:
                signal.pidfd_send_signal(w.pidfd, sig)  # no pid-reuse race
            elif w.pid is not None:
                os.kill(w.pid, sig)
        except OSError:
            pass
