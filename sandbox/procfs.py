"""Sizes read from ``/proc`` (Linux), for the pool and for programs that size pools."""
from __future__ import annotations

import os
from typing import Optional, Tuple

__all__ = ["kib_field", "cpu_seconds", "state_and_ticks"]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def kib_field(path: str, field: str) -> Optional[int]:
    """Bytes of the ``field: N kB`` line of ``path`` (``/proc/<pid>/status`` with ``RssAnon``,
    ``/proc/<pid>/smaps_rollup`` with ``Pss``); None when the file or the line cannot be read
    (the process is gone)."""
    prefix = field.encode() + b":"
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line.startswith(prefix):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def state_and_ticks(path: str) -> Optional[Tuple[bytes, int]]:
    """``(state, user + system clock ticks)`` of a ``/proc/<pid>/stat`` or
    ``/proc/<pid>/task/<tid>/stat`` file (state ``b"R"``: running); None when it cannot be read
    (the process is gone)."""
    try:
        with open(path, "rb") as fh:
            stat = fh.read()
        # the command name may hold spaces and parentheses: the fields follow its last ')'
        fields = stat[stat.rindex(b")") + 2:].split()
        return fields[0], int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds(pid: int) -> Optional[float]:
    """User and system CPU seconds process ``pid`` has used (``/proc/<pid>/stat``, its threads
    included); None when it cannot be read (the process is gone)."""
    got = state_and_ticks(f"/proc/{pid}/stat")
    return None if got is None else got[1] / _TICKS
