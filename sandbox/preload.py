"""Loading a preload set: the single-thread environment and settings, and the imports.

Used by the zygote (which imports the set once and forks workers from it) and by a worker that
the zygote spawns as a fresh interpreter (which imports the set itself); the pool puts
:data:`THREAD_ENV` into the zygote's environment. Runs under other interpreters too: Python 3.9
syntax.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Dict, List, Optional

__all__ = ["THREAD_ENV", "SINGLE_THREAD_HOOKS", "preload_modules", "run_warmups"]

#: set in the zygote's environment before any import (inherited by workers)
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "NUMBA_THREADING_LAYER": "workqueue",
    "TF_NUM_INTRAOP_THREADS": "1",
    "TF_NUM_INTEROP_THREADS": "1",
    "TF_CPP_MIN_LOG_LEVEL": "2",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}


def _tensorflow_single_thread(module: Any) -> None:
    # configuration only: sets the sizes of pools that are created later; runs no op
    module.config.threading.set_intra_op_parallelism_threads(1)
    module.config.threading.set_inter_op_parallelism_threads(1)


#: settings that exist only as calls, applied when the module is loaded after the preload
SINGLE_THREAD_HOOKS: Dict[str, Callable[[Any], None]] = {
    "tensorflow": _tensorflow_single_thread,
}


def preload_modules(names: List[str]) -> Dict[str, Optional[str]]:
    """Import ``names`` and apply the single-thread hooks; returns each module's version."""
    versions: Dict[str, Optional[str]] = {}
    for name in names:
        module = importlib.import_module(name)
        versions[name] = getattr(module, "__version__", None)
    for name, hook in SINGLE_THREAD_HOOKS.items():
        if name in sys.modules:
            hook(sys.modules[name])
    return versions


def run_warmups(refs: List[str]) -> None:
    """Call each ``"module:function"`` of ``refs`` (no arguments), after the preload.

    A warm-up prepares what every worker would otherwise redo in its first task (a compiler
    subsystem's own imports, a probe of the CPU it caches in memory); workers forked afterwards
    inherit the result. It must start no thread and run no library operation that does: a
    process that has done so cannot be forked safely.
    """
    for ref in refs:
        module_name, _, attr = ref.partition(":")
        if not attr:
            raise ValueError(f"warm-up {ref!r} is not 'module:function'")
        getattr(importlib.import_module(module_name), attr)()
