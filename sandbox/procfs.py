"""Sizes read from ``/proc`` (Linux), for the pool and for programs that size pools."""
from __future__ import annotations

from typing import Optional

__all__ = ["kib_field"]


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
