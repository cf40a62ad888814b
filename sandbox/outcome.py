"""Tasks in, outcomes out: the data types of the sandbox.

A :class:`Task` names what to run by reference (``"module:qualname"`` strings resolved inside the
worker), so nothing executable crosses the process boundary; its arguments travel through
:mod:`sandbox.codec` (msgpack, never pickle). A task is a small program of :class:`Step` calls;
a later step can use an earlier step's result through :class:`Ref`. Every task yields exactly one
:class:`Outcome`.

This module is also imported by workers that may run under another interpreter, so it keeps to
Python 3.9 syntax.
"""
from __future__ import annotations

import enum
import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Optional, Sequence, Tuple

from .errors import TaskError
from .native import NativeSpot

_IDENT = r"[A-Za-z_][A-Za-z_0-9]*"
_CALLABLE_REF = re.compile(rf"^{_IDENT}(\.{_IDENT})*:{_IDENT}(\.{_IDENT})*$")
_METHOD_REF = re.compile(rf"^\.{_IDENT}$")
_VALID_FNS: set = set()  # function references already checked (a cache, not configuration)


class Status(str, enum.Enum):
    """What happened to a task. A ``str`` subclass: ``outcome.status == "ok"`` works."""

    OK = "ok"                          #: the call returned; ``value`` holds the result
    RAISED = "raised"                  #: the call raised; ``error_*`` and ``traceback`` tell what
    CRASHED = "crashed"                #: the worker died (signal or exit) while running the task
    TIMEOUT = "timeout"                #: the task exceeded its wall-clock limit and was killed
    OOM = "oom"                        #: the task exceeded the memory limit (error or kill)
    UNSERIALIZABLE = "unserializable"  #: the result (or a received argument) cannot be encoded
    CANCELLED = "cancelled"            #: the pool closed (or broke) before the task finished

    def __str__(self) -> str:  # so f-strings print "ok", not "Status.OK"
        return self.value

    # equal to its string, so hash like it (Enum's own hash is a Python-level call, per lookup)
    __hash__ = str.__hash__


#: statuses that kill the worker or that are re-run once in a fresh worker when confirming
CONFIRMABLE = frozenset({Status.CRASHED, Status.TIMEOUT, Status.OOM})


@dataclass(frozen=True)
class Ref:
    """Placeholder for the result of an earlier step of the same task (0-based step index)."""

    step: int

    def __post_init__(self) -> None:
        if not isinstance(self.step, int) or isinstance(self.step, bool) or self.step < 0:
            raise TaskError(f"Ref step must be a non-negative int, got {self.step!r}")


def check_callable_ref(ref: object, what: str) -> str:
    """Validate a ``"module:qualname"`` reference and return it."""
    if ref in _VALID_REFS:
        return ref  # type: ignore[return-value]
    if not isinstance(ref, str) or not _CALLABLE_REF.match(ref):
        raise TaskError(
            f"{what} must be a 'module:qualname' string such as 'numpy:sum' or "
            f"'torch:Tensor.abs', got {ref!r}"
        )
    if len(_VALID_REFS) < 100_000:
        _VALID_REFS.add(ref)
    return ref


_VALID_REFS: set = set()  # references already checked (a cache, not configuration)


@dataclass(frozen=True)
class Step:
    """One call of a task: ``fn(*args, **kwargs)``.

    ``fn`` is ``"module:qualname"`` (``"numpy.linalg:inv"``, ``"torch:Tensor.abs"``) or
    ``".name"``, which calls method ``name`` of the first argument with the remaining ones.
    ``args`` and ``kwargs`` may contain :class:`Ref` placeholders for earlier steps' results,
    at any depth inside lists, tuples and dicts.
    """

    fn: str
    args: Tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.fn not in _VALID_FNS:
            if not (isinstance(self.fn, str) and (_CALLABLE_REF.match(self.fn) or _METHOD_REF.match(self.fn))):
                raise TaskError(
                    f"step function must be 'module:qualname' (e.g. 'numpy:sum') or '.method', got {self.fn!r}"
                )
            if len(_VALID_FNS) < 100_000:  # the same functions come back in fuzzing loops
                _VALID_FNS.add(self.fn)
        if type(self.args) is list:
            object.__setattr__(self, "args", tuple(self.args))
        if not isinstance(self.args, tuple):
            raise TaskError(f"args of {self.fn} must be a tuple or list, got {type(self.args).__name__}")
        kwargs = {} if self.kwargs is None else self.kwargs
        if type(kwargs) is not dict or kwargs:
            if not isinstance(kwargs, Mapping) or not all(isinstance(k, str) for k in kwargs):
                raise TaskError(f"kwargs of {self.fn} must be a mapping with str keys")
            kwargs = dict(kwargs)
        object.__setattr__(self, "kwargs", kwargs)
        if self.fn[0] == "." and not self.args:
            raise TaskError(f"method step {self.fn!r} needs the object as its first argument")


def iter_refs(value: Any) -> Iterator[Ref]:
    """Yield the :class:`Ref` placeholders inside ``value`` (lists, tuples, dicts)."""
    t = type(value)
    if t is Ref:
        yield value
    elif t is list or t is tuple or isinstance(value, (list, tuple)):
        for item in value:
            if type(item) not in _LEAF_TYPES and _may_hold_refs((item,)):
                yield from iter_refs(item)
    elif isinstance(value, dict):
        for item in value.values():
            if type(item) not in _LEAF_TYPES and _may_hold_refs((item,)):
                yield from iter_refs(item)


_CONTAINERS = frozenset({list, tuple, dict, Ref})
_LEAF_TYPES: set = set()  # types seen that are neither Ref nor list/tuple/dict (a cache)


def _may_hold_refs(items: Iterable[Any]) -> bool:
    """Whether any of ``items`` is a Ref or a container that may hold one (cheap: one set
    lookup per item; most arguments are arrays and numbers)."""
    for item in items:
        t = type(item)
        if t not in _LEAF_TYPES:
            if t is Ref or issubclass(t, (list, tuple, dict)):
                return True
            if len(_LEAF_TYPES) < 1000:
                _LEAF_TYPES.add(t)
    return False


def _task_from_state(steps, convert, convert_kwargs, device, timeout, affinity, confirm,
                     runtime=None, step_timeout=None) -> "Task":
    return Task.chain(steps, convert=convert, convert_kwargs=convert_kwargs, device=device,
                      timeout=timeout, affinity=affinity, confirm=confirm, runtime=runtime,
                      step_timeout=step_timeout)


class Task:
    """A unit of work for :class:`~sandbox.SandboxPool`: one call, or a short chain of calls.

    ``Task("numpy:sum", args=(x,), kwargs={"axis": 1})`` runs ``numpy.sum(x, axis=1)`` in a
    worker. Options:

    * ``convert``: a ``"module:qualname"`` callable applied in the worker to every numpy array
      that arrived with the task (at any depth of any step's arguments) before the first step, e.g.
      ``"torch:from_numpy"``, ``"tensorflow:constant"``, ``"jax.numpy:asarray"``.
      ``convert_kwargs`` are passed to it as keywords.
    * ``device``: passed to ``convert`` as the keyword ``device=`` (so ``convert`` must accept it,
      e.g. ``"torch:as_tensor"``); requires ``convert``.
    * ``timeout``: this task's wall-clock limit in seconds (default: the pool's).
    * ``step_timeout``: seconds each part the task marks with :func:`sandbox.mark` may run. From
      a mark on, the task must mark again or finish within this, or it is killed as a timeout
      whose :attr:`Outcome.mark` names the part that ran over. Before its first mark only
      ``timeout`` applies. A task of many items (one call per dtype) that hangs in one then
      loses that item's limit, not the whole task's.
    * ``affinity``: a key (a string); tasks with the same key go to the same worker while it
      lives, so what a worker caches per process (JIT-compiled kernels, resolved functions)
      serves them all. A hint, never a wait: a worker with nothing of its own takes others'.
    * ``confirm``: whether a crashed/timeout/oom run is re-run in a fresh worker (default: the
      pool's ``confirm``). A caller that isolates a dying task itself (re-running its parts one
      by one) has no use for the pool's confirmation of the whole.
    * ``runtime``: the name of the pool of a :class:`~sandbox.PoolSet` that runs it (an
      interpreter or environment of its own); a single :class:`~sandbox.SandboxPool` ignores it.

    :meth:`chain` builds a multi-step task whose result is the last step's result.
    """

    __slots__ = ("steps", "convert", "convert_kwargs", "device", "timeout", "affinity", "confirm",
                 "runtime", "step_timeout")

    def __init__(
        self,
        fn: str,
        args: Sequence[Any] = (),
        kwargs: Optional[Mapping[str, Any]] = None,
        *,
        convert: Optional[str] = None,
        convert_kwargs: Optional[Mapping[str, Any]] = None,
        device: Optional[str] = None,
        timeout: Optional[float] = None,
        affinity: Optional[str] = None,
        confirm: Optional[bool] = None,
        runtime: Optional[str] = None,
        step_timeout: Optional[float] = None,
    ) -> None:
        self._init((Step(fn, args, kwargs),), convert, convert_kwargs, device, timeout, affinity, confirm,
                   runtime, step_timeout)

    @classmethod
    def chain(
        cls,
        steps: Iterable[Step],
        *,
        convert: Optional[str] = None,
        convert_kwargs: Optional[Mapping[str, Any]] = None,
        device: Optional[str] = None,
        timeout: Optional[float] = None,
        affinity: Optional[str] = None,
        confirm: Optional[bool] = None,
        runtime: Optional[str] = None,
        step_timeout: Optional[float] = None,
    ) -> "Task":
        """A task running ``steps`` in order; ``Ref(i)`` in a step's arguments is step i's result."""
        task = cls.__new__(cls)
        task._init(tuple(steps), convert, convert_kwargs, device, timeout, affinity, confirm, runtime,
                   step_timeout)
        return task

    def _init(self, steps, convert, convert_kwargs, device, timeout, affinity=None, confirm=None,
              runtime=None, step_timeout=None) -> None:
        if not steps:
            raise TaskError("a task needs at least one step")
        for index, step in enumerate(steps):
            if not isinstance(step, Step):
                raise TaskError(f"step {index} must be a sandbox.Step, got {type(step).__name__}")
            if not (_may_hold_refs(step.args) or (step.kwargs and _may_hold_refs(step.kwargs.values()))):
                continue
            for ref in itertools.chain(iter_refs(step.args), iter_refs(step.kwargs)):
                if ref.step >= index:
                    raise TaskError(f"step {index} ({step.fn}) refers to Ref({ref.step}), which is not an earlier step")
        if convert is not None:
            check_callable_ref(convert, "convert")
        if convert_kwargs is not None and (
            not isinstance(convert_kwargs, Mapping) or not all(isinstance(k, str) for k in convert_kwargs)
        ):
            raise TaskError("convert_kwargs must be a mapping with str keys")
        if device is not None:
            if not isinstance(device, str) or not device:
                raise TaskError(f"device must be a non-empty string such as 'cuda', got {device!r}")
            if convert is None:
                raise TaskError("device needs a convert callable that accepts device=, e.g. 'torch:as_tensor'")
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (0 < timeout < math.inf):
                raise TaskError(f"timeout must be a positive finite number of seconds, got {timeout!r}")
            timeout = float(timeout)
        if step_timeout is not None:
            if (isinstance(step_timeout, bool) or not isinstance(step_timeout, (int, float))
                    or not (0 < step_timeout < math.inf)):
                raise TaskError(f"step_timeout must be a positive finite number of seconds, got {step_timeout!r}")
            step_timeout = float(step_timeout)
        if affinity is not None and not isinstance(affinity, str):
            raise TaskError(f"affinity must be a string key, got {type(affinity).__name__}")
        if confirm is not None and not isinstance(confirm, bool):
            raise TaskError(f"confirm must be a bool or None, got {confirm!r}")
        if runtime is not None and (not isinstance(runtime, str) or not runtime):
            raise TaskError(f"runtime must be a non-empty string naming a pool, got {runtime!r}")
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "convert", convert)
        object.__setattr__(self, "convert_kwargs", dict(convert_kwargs) if convert_kwargs else None)
        object.__setattr__(self, "device", device)
        object.__setattr__(self, "timeout", timeout)
        object.__setattr__(self, "affinity", affinity)
        object.__setattr__(self, "confirm", confirm)
        object.__setattr__(self, "runtime", runtime)
        object.__setattr__(self, "step_timeout", step_timeout)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Task is immutable")

    def __reduce__(self) -> Tuple[Any, ...]:
        # pickles through chain(): a task can travel to another process (a Ray actor's pool)
        return (_task_from_state, (self.steps, self.convert, self.convert_kwargs, self.device,
                                   self.timeout, self.affinity, self.confirm, self.runtime, self.step_timeout))

    @property
    def fn(self) -> str:
        """The function of the last step (the one whose result is the task's value)."""
        return self.steps[-1].fn

    @property
    def args(self) -> Tuple[Any, ...]:
        return self.steps[-1].args

    @property
    def kwargs(self) -> Mapping[str, Any]:
        return self.steps[-1].kwargs

    def wire(self) -> list:
        """The task as plain data for the codec (what the worker receives)."""
        kwargs = None
        if self.convert_kwargs is not None or self.device is not None:
            kwargs = dict(self.convert_kwargs or {})
            if self.device is not None:
                kwargs["device"] = self.device
        return [[[s.fn, list(s.args), s.kwargs] for s in self.steps], self.convert, kwargs or None]

    def __repr__(self) -> str:
        if len(self.steps) == 1:
            body = f"{self.fn!r}, args=<{len(self.args)}>"
        else:
            body = "steps=[" + ", ".join(s.fn for s in self.steps) + "]"
        extra = "".join(
            f", {name}={getattr(self, name)!r}"
            for name in ("convert", "device", "timeout", "affinity", "confirm", "runtime")
            if getattr(self, name) is not None
        )
        return f"Task({body}{extra})"


class TensorInfo(NamedTuple):
    """A library tensor found in a result and converted to numpy in the worker.

    ``index`` counts tensors in the order the encoder met them (depth first); ``kind`` is the
    tensor's type (``"torch.Tensor"``); ``device`` is as the library names it; ``dtype`` is the
    library's own dtype name (numpy may lack it, e.g. ``torch.complex32``).
    """

    index: int
    kind: str
    device: str
    dtype: str


@dataclass
class Outcome:
    """Everything known about one task's run.

    ``signal``/``signal_name``/``exit_code`` are set when the worker died; ``stdout_tail`` and
    ``stderr_tail`` are the bounded ends of what the task wrote (a native crash leaves the
    faulthandler traceback in ``stderr_tail``); ``max_rss_bytes`` is the peak resident size
    while the task ran (of the worker process); ``confirmed`` is set for crashed/timeout/oom
    when the pool confirms: whether a re-run in a fresh worker gave the same status
    (``confirm_status``). ``failed_step`` is the index of the step that raised; ``mark`` the
    latest step a task that died had marked with :func:`sandbox.mark` (None: none, or it did not
    die), and ``mark_s`` how long before its death it was set. ``cpu_s``: the CPU seconds (user
    and system) a task that killed its worker used before it died, where the pool could tell
    (a niced worker's hang takes wall seconds it mostly spends waiting for the CPU).
    ``native``: for a timeout, the mapped files the program counter of its busiest thread was in
    just before the kill, the most sampled first (:mod:`sandbox.native`; empty where it could
    not be read, or the pool was made with ``locate_hangs=False``).
    """

    status: Status
    value: Any = None
    error_type: Optional[str] = None
    error_message: Optional[str] = None
    traceback: Optional[str] = None
    failed_step: Optional[int] = None
    signal: Optional[int] = None
    signal_name: Optional[str] = None
    exit_code: Optional[int] = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    duration_s: float = 0.0
    max_rss_bytes: Optional[int] = None
    worker_pid: Optional[int] = None
    confirmed: Optional[bool] = None
    confirm_status: Optional[Status] = None
    tensors: Tuple[TensorInfo, ...] = ()
    task: Optional[Task] = field(default=None, repr=False, compare=False)
    mark: Optional[int] = None
    mark_s: Optional[float] = None
    cpu_s: Optional[float] = None
    native: Tuple[NativeSpot, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == Status.OK

    def summary(self) -> str:
        """A one-line description, for logs and the demo."""
        parts = [str(self.status)]
        if self.signal_name:
            parts.append(self.signal_name)
        elif self.exit_code is not None:
            parts.append(f"exit {self.exit_code}")
        if self.error_type:
            message = (self.error_message or "").splitlines()[0] if self.error_message else ""
            parts.append(f"{self.error_type}: {message[:80]}")
        if self.confirmed is not None:
            parts.append("confirmed" if self.confirmed else f"not confirmed (re-run: {self.confirm_status})")
        parts.append(f"{self.duration_s * 1e3:.1f} ms")
        return " | ".join(parts)


def returned_outcome(status: Status, value: Any, error_type: Optional[str], error_message: Optional[str],
                     traceback: Optional[str], failed_step: Optional[int], stdout_tail: str, stderr_tail: str,
                     duration_s: float, max_rss_bytes: Optional[int], worker_pid: Optional[int],
                     tensors: Tuple[TensorInfo, ...], task: Optional[Task]) -> Outcome:
    """The :class:`Outcome` of a task whose worker sent a result (no signal, exit code or
    confirmation). The pool makes one per task: positional arguments take half the time of
    keywords (the field order is checked by the tests)."""
    return Outcome(status, value, error_type, error_message, traceback, failed_step, None, None, None,
                   stdout_tail, stderr_tail, duration_s, max_rss_bytes, worker_pid, None, None, tensors, task)
