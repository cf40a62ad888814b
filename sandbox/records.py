"""The pool's records (parent side): a :meth:`SandboxPool.run` call's tasks, a task on its way,
and the pool's view of one worker process with its states.
"""
from __future__ import annotations

import collections
import socket
import threading
import time
from concurrent.futures import Future
from typing import Deque, List, Optional, Tuple

from . import channel, classify, codec
from .outcome import Outcome, Task
from .protocol import ProgressPage

__all__ = ["Group", "Pending", "WorkerRecord", "STARTING", "IDLE", "BUSY", "RETIRING", "DYING"]


class Group:
    """Tasks of one :meth:`SandboxPool.run` call: the caller sleeps until all are resolved
    (waiting future by future would wake it, and take the GIL from the manager, per result)."""

    __slots__ = ("remaining", "done", "outcomes", "abandoned", "error")

    def __init__(self, count: int) -> None:
        self.remaining = count  # decremented by the manager thread only
        self.done = threading.Event()
        self.outcomes: List[Optional[Outcome]] = [None] * count
        self.abandoned = False  # run() failed: drop what is still queued
        self.error: Optional[BaseException] = None  # a task the manager could not encode


class Pending:
    """A task on its way: encoded once, possibly run twice (confirmation). ``packet`` is None
    until encoded (tasks of :meth:`SandboxPool.run` past the first few are encoded by the
    manager thread)."""

    __slots__ = ("tid", "task", "packet", "nbytes", "future", "timeout", "started", "confirm_of", "group", "slot")

    def __init__(self, tid: int, task: Task, packet: Optional[codec.Packet], future: Optional[Future],
                 timeout: Optional[float]) -> None:
        self.tid = tid
        self.task = task
        self.packet = packet
        self.nbytes = packet.nbytes if packet is not None else 0
        self.future = future
        self.timeout = timeout
        self.started = False  # its future is marked running
        self.confirm_of: Optional[Tuple["Pending", Outcome]] = None
        self.group: Optional[Group] = None
        self.slot = 0  # index in the group


#: worker states
STARTING, IDLE, BUSY, RETIRING, DYING = "starting", "idle", "busy", "retiring", "dying"


class WorkerRecord:
    """The pool's view of one worker process."""

    __slots__ = (
        "wid", "sock", "reader", "workdir", "progress", "pid", "pidfd", "state", "inflight", "frames",
        "reported", "dispatched", "next_check", "data_limit", "mode", "kill_reason", "kill_tid",
        "kill_started_at", "kill_at", "dead_at", "retire_after", "registered", "exit_deadline", "oom_kills",
        "greeted", "requested_at", "anon_base", "memory_check_at", "native", "kill_note",
    )

    def __init__(self, wid: int, sock: socket.socket, workdir: str, progress: ProgressPage) -> None:
        self.wid = wid
        self.sock = sock
        self.reader = channel.FrameReader(sock)
        self.workdir = workdir
        self.progress = progress
        self.pid: Optional[int] = None
        self.pidfd: Optional[int] = None
        self.state = STARTING
        self.inflight: Deque[Pending] = collections.deque()  # sent, unanswered, in order
        self.frames: Deque[int] = collections.deque()          # tasks per sent frame, unanswered
        self.reported = 0        # results received (the worker counts tasks started)
        self.dispatched = 0
        self.next_check: Optional[float] = None  # when the running task may have timed out
        self.data_limit: Optional[int] = None
        self.mode = ""
        self.kill_reason: Optional[str] = None
        self.kill_tid: Optional[int] = None
        self.kill_started_at = 0.0
        self.kill_note: Optional[str] = None  # a timeout's message other than the task's limit
        self.kill_at: Optional[float] = None
        self.dead_at: Optional[float] = None
        self.retire_after = False
        self.registered = True
        self.exit_deadline: Optional[float] = None
        self.oom_kills = classify.oom_kill_count()  # the kernel's count when this worker started
        self.greeted = False  # its hello arrived: it started
        self.requested_at = time.monotonic()  # asked of the zygote (fork-to-ready is measured from here)
        self.anon_base: Optional[int] = None  # its anonymous resident bytes when it said hello
        self.memory_check_at = 0.0  # when its memory may be read again (recycle_memory)
        self.native: tuple = ()  # where its code ran when a timeout's kill began (sandbox.native)

    def running(self) -> Tuple[int, float]:
        """(index in ``inflight`` of the task running now, or -1; its start time)."""
        count, started_at = self.progress.read()
        index = count - self.reported - 1
        return (index if index < len(self.inflight) else len(self.inflight) - 1), started_at
