"""A campaign's memory budget: how far each sandbox worker's memory may grow before it is replaced.

A campaign's workers live for its whole budget, so that the programs they compiled stay warm;
their caches only grow (JAX keeps thousands of executables per process), and with a zygote and
workers per runtime a campaign over every library reached 23 GiB of PSS in 20 minutes on a
24 GiB machine. :class:`MemoryGovernor` reads the campaign's process tree (PSS: shared pages
counted once) every ``every_s`` seconds and sets each pool's ``recycle_memory``
(:class:`sandbox.SandboxPool`), the growth a worker may reach before it is replaced after its
task: first what the budget leaves over the tree's size shared among the workers, then halved
while the tree is over the budget and raised again while it is well under it.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Iterable

from sandbox.procfs import kib_field
from xamt.log import get_logger

__all__ = ["MemoryGovernor", "tree_pss", "machine_memory"]

_log = get_logger("fuzz.memory")
_GIB = 1 << 30
#: under this share of the budget the allowance grows again
_LOW_WATER = 0.75


def machine_memory() -> int:
    """Bytes of RAM of this machine (``MemTotal``)."""
    total = kib_field("/proc/meminfo", "MemTotal")
    if total is None:
        raise OSError("MemTotal missing from /proc/meminfo")
    return total


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.setdefault(ppid, []).append(int(name))
    return out


def _pss(pid: int) -> int:
    return kib_field(f"/proc/{pid}/smaps_rollup", "Pss") or 0


def tree_pss(root: int | None = None) -> tuple[int, int]:
    """(PSS in bytes, number of processes) of ``root`` (default: this process) and all its
    descendants."""
    root = os.getpid() if root is None else root
    children = _children()
    pids, pending = [root], [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            pids.append(child)
            pending.append(child)
    return sum(_pss(p) for p in pids), len(pids)


class MemoryGovernor:
    """Keeps the campaign's process tree within ``budget`` bytes (see the module docstring).

    Args:
        pools: returns the :class:`sandbox.SandboxPool` objects to govern (asked at every
            reading: a pool started later, the isolation pool, joins).
        budget: bytes the whole tree should stay within.
        floor: the least growth a worker is allowed (a worker replaced after every task would
            compile everything again).
        ceiling: the most (None: no bound but the budget).
        every_s: seconds between readings.
        measure: ``measure() -> (bytes, processes)`` (default: :func:`tree_pss` of this process).
    """

    def __init__(self, pools: Callable[[], Iterable[Any]], budget: int, *, floor: int,
                 ceiling: int | None = None, every_s: float = 30.0,
                 measure: Callable[[], tuple[int, int]] | None = None):
        if budget <= 0 or floor <= 0:
            raise ValueError(f"budget and floor must be positive, got {budget} and {floor}")
        self._pools = pools
        self.budget = int(budget)
        self.floor = int(floor)
        self.ceiling = ceiling
        self.every_s = float(every_s)
        self._measure = measure or tree_pss
        self.allowance: int | None = None
        self.peak = 0
        self.readings = 0
        # the first reading comes sooner: an allowance read while zygotes still import is too
        # generous, and the next readings halve it
        self._next = time.monotonic() + min(10.0, self.every_s)

    def tick(self, now: float | None = None) -> None:
        """Read the tree and set the pools' allowance when ``every_s`` has passed."""
        now = time.monotonic() if now is None else now
        if now < self._next:
            return
        self._next = now + self.every_s
        pools = [p for p in self._pools() if p is not None]
        workers = sum(int(getattr(p, "workers", 1)) for p in pools)
        if not pools or not workers:
            return
        total, processes = self._measure()
        self.readings += 1
        self.peak = max(self.peak, total)
        before = self.allowance
        if self.allowance is None:
            allowance = (self.budget - total) // workers
        elif total > self.budget:
            allowance = self.allowance // 2
        elif total < _LOW_WATER * self.budget:
            allowance = self.allowance * 3 // 2
        else:
            allowance = self.allowance
        allowance = max(self.floor, allowance)
        if self.ceiling is not None:
            allowance = min(self.ceiling, allowance)
        self.allowance = allowance
        for pool in pools:
            pool.recycle_memory = allowance
        if allowance != before:
            _log.info("memory: %.2f GiB in %d processes (budget %.2f GiB); a worker may grow by %d MiB",
                      total / _GIB, processes, self.budget / _GIB, allowance >> 20)

    def summary(self) -> dict[str, Any]:
        """Budget, allowance and the largest reading, for the campaign's record."""
        return {"budget_gib": round(self.budget / _GIB, 2), "peak_pss_gib": round(self.peak / _GIB, 2),
                "worker_growth_mib": None if self.allowance is None else self.allowance >> 20,
                "readings": self.readings}
