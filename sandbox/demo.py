"""``python -m sandbox.demo``: run good and misbehaving calls in a SandboxPool and print outcomes.

Every misbehaviour is a plain standard-library call, so the demo needs nothing but the sandbox:
a null-pointer read (``ctypes.string_at(0)``), ``os.abort``, ``os._exit(3)``, a sleep past the
timeout, an allocation past the memory limit, an unknown function and an exception. Good numpy
calls run between them in the same pool, which keeps serving.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import List, Optional, Tuple

import numpy as np

from . import SandboxPool, Step, Ref, Task


def demo_tasks(memory_limit: int) -> List[Tuple[str, Task]]:
    """(description, task) pairs: good calls interleaved with bad ones."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    return [
        ("numpy.sum(x, axis=1)", Task("numpy:sum", (x,), {"axis": 1})),
        ("null-pointer read", Task("ctypes:string_at", (0,))),
        ("numpy.linalg.inv(2*I)", Task("numpy.linalg:inv", (2 * np.eye(3),))),
        ("os.abort()", Task("os:abort")),
        ("x.T @ x via a chain", Task.chain([Step(".transpose", (x,)), Step("numpy:matmul", (Ref(0), x))])),
        ("os._exit(3)", Task("os:_exit", (3,))),
        ("time.sleep(60), timeout 1 s", Task("time:sleep", (60,), timeout=1.0)),
        (f"bytearray({2 * memory_limit}) over the limit", Task("builtins:bytearray", (2 * memory_limit,))),
        ("unknown function", Task("numpy:no_such_function")),
        ("int('x') raises", Task("builtins:int", ("x",))),
        ("numpy.add(x, 1)", Task("numpy:add", (x, 1))),
    ]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--preload", default="numpy", help="comma-separated modules for the zygote")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit-mb", type=int, default=512)
    parser.add_argument("--no-confirm", action="store_true", help="do not re-run crashes in a fresh worker")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    preload = tuple(m for m in args.preload.split(",") if m)
    memory_limit = args.memory_limit_mb << 20
    start = time.perf_counter()
    with SandboxPool(preload=preload, workers=args.workers, timeout=10.0, memory_limit=memory_limit,
                     confirm=not args.no_confirm) as pool:
        print(f"pool ready in {time.perf_counter() - start:.2f} s: preload {list(preload)}, mode {pool.mode}, "
              f"zygote threads {pool.info['threads']}, python {pool.info['python_version']}")
        described = demo_tasks(memory_limit)
        started = time.perf_counter()
        outcomes = pool.run([task for _, task in described])
        elapsed = time.perf_counter() - started
        width = max(len(d) for d, _ in described)
        for (description, _), outcome in zip(described, outcomes):
            value = "" if outcome.value is None else f" -> {np.asarray(outcome.value).tolist()}"
            print(f"  {description:<{width}}  {outcome.summary()}{value}")
        print(f"{len(outcomes)} tasks in {elapsed:.2f} s; pool stats: "
              + ", ".join(f"{k} {v}" for k, v in pool.stats.items() if v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
