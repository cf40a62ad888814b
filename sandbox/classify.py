"""How raw evidence (an exception, a wait status, memory figures) becomes a status.

Kept in one place so the rules can be reviewed together:

* an exception is ``oom`` when it is a ``MemoryError`` or its type and message match
  :data:`OOM_TEXT` (torch's ``DefaultCPUAllocator: can't allocate memory``, TensorFlow's
  ``ResourceExhaustedError: OOM when allocating``, XLA's ``RESOURCE_EXHAUSTED: Out of memory``);
* a dead worker is ``timeout`` or ``cancelled`` when the pool killed it for that reason;
* otherwise it is ``oom`` when its stderr tail shows an allocation failure (:data:`OOM_STDERR`,
  e.g. an uncaught ``std::bad_alloc``), or when it was SIGKILLed by someone other than the pool
  and either the kernel's OOM killer acted meanwhile (the ``oom_kill`` counter of
  ``/proc/vmstat`` grew since the worker started: :func:`oom_kill_count`) or its peak RSS reached
  :data:`OOM_RSS_FRACTION` of its memory ceiling (RSS stays below the data size, which also
  counts reserved but untouched heap);
* every other death (a signal, or an exit without a result) is ``crashed``.

Runs under other interpreters too: Python 3.9 syntax.
"""
from __future__ import annotations

import os
import re
import signal
from typing import Optional, Tuple

from .outcome import Status

OOM_TEXT = re.compile(
    r"MemoryError|out of memory|\bOOM\b|can'?t allocate memory|cannot allocate memory|bad_alloc"
    r"|RESOURCE_EXHAUSTED|ResourceExhausted|Unable to allocate|failed to allocate",
    re.IGNORECASE,
)
#: narrower, for the stderr of a dead worker (which also holds file and function names)
OOM_STDERR = re.compile(r"std::bad_alloc|can'?t allocate memory|cannot allocate memory|out of memory", re.IGNORECASE)
#: a SIGKILL from outside counts as oom when the peak RSS reached this fraction of the ceiling
OOM_RSS_FRACTION = 0.8


def oom_kill_count() -> Optional[int]:
    """How many processes the kernel's OOM killer has killed since boot (None if unknown)."""
    try:
        with open("/proc/vmstat", "rb") as handle:
            for line in handle:
                if line.startswith(b"oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def type_name(cls: type) -> str:
    """``module.Qualname`` of a class; builtins bare (``ValueError``)."""
    module = getattr(cls, "__module__", "builtins")
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def safe_str(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder when the exception's ``__str__`` itself fails."""
    try:
        return str(exc)
    except BaseException:  # a broken __str__ must not break the caller
        return f"<unprintable {type(exc).__name__}>"


def exception_status(exc: BaseException, type_name: str, message: str) -> Status:
    """``oom`` for memory exhaustion, else ``raised``."""
    if isinstance(exc, MemoryError) or OOM_TEXT.search(type_name) or OOM_TEXT.search(message[:4096]):
        return Status.OOM
    return Status.RAISED


def signal_name(number: int) -> str:
    """``11 -> "SIGSEGV"``; unknown numbers as ``"SIG<n>"``."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


def death_status(
    wait_status: Optional[int],
    *,
    kill_reason: Optional[str],
    max_rss: Optional[int],
    memory_ceiling: Optional[int],
    stderr_tail: str,
    oom_killer_fired: bool = False,
) -> Tuple[Status, Optional[int], Optional[str], Optional[int]]:
    """Classify a worker that died holding a task: (status, signal, signal name, exit code).

    ``wait_status`` is the raw status from ``wait4`` (None if unknown); ``kill_reason`` is
    ``"timeout"`` or ``"cancel"`` when the pool killed the worker; ``memory_ceiling`` is the
    worker's data-size limit in bytes (None without a limit); ``oom_killer_fired`` says whether
    the kernel's OOM-kill counter grew during the worker's life.
    """
    sig = code = None
    if wait_status is not None:
        if os.WIFSIGNALED(wait_status):
            sig = os.WTERMSIG(wait_status)
        elif os.WIFEXITED(wait_status):
            code = os.WEXITSTATUS(wait_status)
    name = signal_name(sig) if sig is not None else None
    if kill_reason == "timeout":
        return Status.TIMEOUT, sig, name, code
    if kill_reason == "cancel":
        return Status.CANCELLED, sig, name, code
    if OOM_STDERR.search(stderr_tail[-8192:]):
        return Status.OOM, sig, name, code
    if sig == signal.SIGKILL and (
        oom_killer_fired
        or (memory_ceiling is not None and max_rss is not None and max_rss >= OOM_RSS_FRACTION * memory_ceiling)
    ):
        return Status.OOM, sig, name, code
    return Status.CRASHED, sig, name, code
