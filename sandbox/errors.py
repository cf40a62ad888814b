"""The sandbox's error taxonomy.

Errors raised to the *caller* (bad configuration, bad tasks, a pool that cannot start) are
exceptions from this module. What a *task* does (raise, crash, hang, exhaust memory) is never an
exception in the caller: it is reported in the task's :class:`~sandbox.outcome.Outcome`.
"""
from __future__ import annotations


class SandboxError(Exception):
    """Base class of every error the sandbox raises to its caller."""


class ConfigError(SandboxError, ValueError):
    """Invalid pool configuration: limits, worker counts, preload names, interpreter path."""


class TaskError(SandboxError, ValueError):
    """A malformed task: bad function reference, bad step references, bad per-task limits."""


class EncodeError(SandboxError, TypeError):
    """A value cannot cross the process boundary (no pickle: only the types of sandbox.codec)."""


class DecodeError(SandboxError, ValueError):
    """Bytes that do not decode to a value (corrupt frame, unknown dtype, missing ml_dtypes)."""


class ResolveError(SandboxError, LookupError):
    """A ``module:qualname`` reference that does not name an importable object (raised in workers)."""


class ZygoteError(SandboxError, RuntimeError):
    """The zygote (the preloaded process that forks workers) failed to start or died."""


class WorkerStartError(SandboxError, RuntimeError):
    """Workers die before they can accept work, repeatedly (reported in the tasks' outcomes)."""


class PoolClosedError(SandboxError, RuntimeError):
    """Work submitted to a pool that is closing or closed."""


class ProtocolError(SandboxError, RuntimeError):
    """A message between the processes of a pool was malformed (a bug, not a task's fault)."""


class ConfinementWarning(RuntimeWarning):
    """Worker confinement is partial or off although asked for (an older kernel, a container
    that blocks Landlock): the warning names the protections that are off."""
