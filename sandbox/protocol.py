"""What the pool, the zygote and the workers agree on: how a process of theirs starts, the files
of a worker's directory, the page a worker shares with the pool and the layout of a result.

Imported on both sides of the sandbox (the pool's process and the zygote's and workers', which
may run another interpreter), so it imports nothing of the package and keeps to Python 3.9
syntax.
"""
from __future__ import annotations

import mmap
import os

__all__ = [
    "ENTRY", "RESULT_FIELDS", "STDOUT_FILE", "STDERR_FILE", "PROGRESS_FILE", "PROGRESS_SIZE",
    "ProgressPage", "read_tail",
]

#: how the zygote (and a spawned worker) starts: not ``-m``, which would run a second copy of a
#: module the package has already imported; and without the current directory on sys.path, so
#: a file a task writes cannot shadow a module
ENTRY = "import sys; sys.path[:] = [p for p in sys.path if p]; from {module} import main; main(sys.argv[1:])"

#: a result message: ["r", *RESULT_FIELDS]; results travel as packets holding lists of them
RESULT_FIELDS = ("id", "status", "value", "error_type", "error_message", "traceback", "failed_step",
                 "stdout", "stderr", "duration", "rss", "tensors")
STDOUT_FILE = "stdout.txt"
STDERR_FILE = "stderr.txt"
#: the page the worker shares with the pool: f64 start time of the latest task (monotonic clock),
#: then u64 tasks started, then u64 the running task's latest mark plus one (0: none; see
#: :func:`sandbox.mark`) and f64 when it was set, then f64 the worker's CPU seconds (user and
#: system, all threads) when the latest task started. The worker writes the times first, the
#: pool reads the count first.
PROGRESS_FILE = "progress"
PROGRESS_SIZE = 40


class ProgressPage:
    """The page a worker shares with the pool (:data:`PROGRESS_FILE`).

    Each field is read and written as one aligned 8-byte access through a typed memoryview
    (``struct.pack_into`` would not do: it zero-fills before writing, so a concurrent reader
    could see 0). The worker stores the time before the count and the pool loads the count
    before the time, so a pool that sees a new count also sees its time.
    """

    def __init__(self, path: str) -> None:
        with open(path, "r+b") as handle:
            self._map = mmap.mmap(handle.fileno(), PROGRESS_SIZE)
        self._time = memoryview(self._map).cast("d")
        self._count = memoryview(self._map).cast("Q")

    def publish(self, count: int, started_at: float, cpu_at: float = 0.0) -> None:
        self._count[2] = 0
        self._time[0] = started_at
        self._time[4] = cpu_at
        self._count[1] = count

    def mark(self, step: int, at: float) -> None:
        """The running task says it has reached ``step`` (a non-negative integer) at ``at``."""
        self._time[3] = at
        self._count[2] = step + 1

    def read_mark(self) -> "tuple[int | None, float]":
        """The running task's latest mark (None: it set none) and when it was set."""
        value = self._count[2]
        return (value - 1 if value else None), self._time[3]

    def read_cpu(self) -> float:
        """The worker's CPU seconds when the latest task started: what a task that killed the
        worker used is the dead worker's total less this."""
        return self._time[4]

    def read(self) -> "tuple[int, float]":
        """(tasks started, start time of the latest)."""
        count = self._count[1]
        return count, self._time[0]

    def close(self) -> None:
        self._time.release()
        self._count.release()
        self._map.close()


def read_tail(path: str, limit: int) -> str:
    """The last ``limit`` bytes of a capture file, decoded leniently ('' if missing)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""
