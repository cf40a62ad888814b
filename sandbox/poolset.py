"""Several sandbox pools behind one pool's interface, each in an interpreter or environment of
its own.

A library whose pins conflict with the rest (numpy < 2), or that must be imported with other
settings (``KERAS_BACKEND=jax`` beside ``KERAS_BACKEND=tensorflow``), cannot share a zygote with
the others. :class:`PoolSet` holds one :class:`~sandbox.SandboxPool` per *runtime* (a name the
caller chooses) and sends each task to the pool its ``Task.runtime`` names, the default pool
when it names none. Callers submit, run and close as on one pool::

    from sandbox import PoolSet, SandboxPool, Task
    pools = PoolSet({
        "main": SandboxPool(preload=("numpy",), workers=2),
        "legacy": SandboxPool(preload=("numpy",), workers=1, python=".venv-legacy/bin/python"),
    }, default="main")
    with pools:
        a, b = pools.run([Task("numpy:sum", args=([1, 2],)),
                          Task("numpy:sum", args=([1, 2],), runtime="legacy")])

Tasks and outcomes cross between interpreters as msgpack, as in one pool.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Dict, Iterable, List, Mapping, Optional

from .errors import ConfigError, TaskError
from .outcome import Outcome, Task
from .pool import SandboxPool

__all__ = ["PoolSet"]


class PoolSet:
    """Pools by runtime name (see the module docstring). ``default`` names the pool of tasks
    whose ``runtime`` is None. The set owns its pools: :meth:`close` closes them all."""

    def __init__(self, pools: Mapping[str, SandboxPool], default: str) -> None:
        if not pools:
            raise ConfigError("a PoolSet needs at least one pool")
        if default not in pools:
            raise ConfigError(f"default runtime {default!r} is not one of {sorted(pools)}")
        for name, pool in pools.items():
            if not isinstance(name, str) or not name:
                raise ConfigError(f"runtime names must be non-empty strings, got {name!r}")
            if not hasattr(pool, "submit_many"):
                raise ConfigError(f"runtime {name!r}: not a pool ({type(pool).__name__})")
        self.pools: Dict[str, SandboxPool] = dict(pools)
        self.default = default

    # -- routing ---------------------------------------------------------------------------------
    def pool_for(self, task: Task) -> SandboxPool:
        """The pool that runs ``task``; :class:`TaskError` for a runtime this set lacks."""
        name = task.runtime or self.default
        try:
            return self.pools[name]
        except KeyError:
            raise TaskError(f"no pool for runtime {name!r} (have {sorted(self.pools)})") from None

    def submit(self, task: Task) -> "Future[Outcome]":
        """Queue ``task`` on its runtime's pool (see :meth:`SandboxPool.submit`)."""
        return self.pool_for(task).submit(task)

    def submit_many(self, tasks: Iterable[Task]) -> List["Future[Outcome]"]:
        """Queue several tasks, each on its runtime's pool; futures in the tasks' order. Every
        task is routed first, so one naming an unknown runtime queues none."""
        tasks = list(tasks)
        routed = [self.pool_for(t) for t in tasks]
        by_pool: Dict[int, List[int]] = {}
        for i, pool in enumerate(routed):
            by_pool.setdefault(id(pool), []).append(i)
        futures: List[Optional[Future]] = [None] * len(tasks)
        for indices in by_pool.values():
            pool = routed[indices[0]]
            for i, fut in zip(indices, pool.submit_many([tasks[i] for i in indices])):
                futures[i] = fut
        return futures  # type: ignore[return-value]

    def run(self, tasks: Iterable[Task], timeout: Optional[float] = None) -> List[Outcome]:
        """Run ``tasks`` on their pools at once; outcomes in submission order."""
        tasks = list(tasks)
        if not tasks:
            return []
        futures = self.submit_many(tasks)
        done = threading.Event()
        remaining = [len(futures)]
        lock = threading.Lock()

        def finished(_: Future) -> None:
            with lock:
                remaining[0] -= 1
                if remaining[0] == 0:
                    done.set()

        for fut in futures:
            fut.add_done_callback(finished)
        if not done.wait(timeout):
            raise TimeoutError(f"{remaining[0]} of {len(tasks)} tasks unfinished after {timeout} s")
        return [f.result() for f in futures]

    def close(self, wait: bool = True) -> None:
        """Close every pool (see :meth:`SandboxPool.close`)."""
        for pool in self.pools.values():
            pool.close(wait=wait)

    def __enter__(self) -> "PoolSet":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(wait=exc_type is None)

    # -- what a single pool also tells -----------------------------------------------------------
    @property
    def workers(self) -> int:
        """Workers of every pool together."""
        return sum(p.workers for p in self.pools.values())

    @property
    def mode(self) -> str:
        return self.pools[self.default].mode

    @property
    def stats(self) -> Dict[str, int]:
        """Every pool's counters, summed."""
        total: Dict[str, int] = {}
        for pool in self.pools.values():
            for key, value in pool.stats.items():
                total[key] = total.get(key, 0) + value
        return total

    @property
    def info(self) -> Dict[str, Any]:
        """The default pool's ``info`` (its confinement), with every pool's under ``runtimes``."""
        return {**self.pools[self.default].info,
                "runtimes": {name: p.info for name, p in self.pools.items()}}

    def describe(self) -> str:
        """The default pool's line, then one per other runtime."""
        lines = [self.pools[self.default].describe()]
        for name, pool in self.pools.items():
            if name != self.default:
                lines.append(f"  runtime {name}: {pool.describe()} [{pool.python}]")
        return "\n".join(lines)

    def worker_pids(self) -> List[int]:
        return [pid for pool in self.pools.values() for pid in pool.worker_pids()]

    def __repr__(self) -> str:
        return f"PoolSet({sorted(self.pools)}, default={self.default!r})"
