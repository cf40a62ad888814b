"""sandbox: a crash-safe executor for calls into native libraries.

Tasks in, outcomes out::

    from sandbox import SandboxPool, Task
    with SandboxPool(preload=("numpy",), workers=2, timeout=10.0) as pool:
        outcome = pool.run([Task("numpy:sum", args=(x,), kwargs={"axis": 1})])[0]

See :class:`SandboxPool`, :class:`Task` and :class:`Outcome` (:class:`PoolSet`: pools in
interpreters or environments of their own behind one interface); a long task calls :func:`mark` to
say which of its items runs, so an outcome of death names it. The package knows nothing of the
code that uses it.
"""
from .errors import (
    ConfigError, ConfinementWarning, DecodeError, EncodeError, PoolClosedError, ProtocolError, ResolveError,
    SandboxError, TaskError, WorkerStartError, ZygoteError,
)
from .outcome import Outcome, Ref, Status, Step, Task, TensorInfo
from .pool import SandboxPool
from .poolset import PoolSet
from .worker import mark

__all__ = [
    "SandboxPool", "PoolSet", "Task", "Step", "mark", "Ref", "Outcome", "Status", "TensorInfo",
    "SandboxError", "ConfigError", "TaskError", "EncodeError", "DecodeError", "ResolveError",
    "ZygoteError", "WorkerStartError", "PoolClosedError", "ProtocolError", "ConfinementWarning",
]
