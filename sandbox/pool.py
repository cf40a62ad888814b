"""The pool: parent side of the sandbox (workers, sockets, sentinels, attribution).

Topology: the pool starts one zygote (:mod:`sandbox.zygote`) for its preload set; the zygote
forks workers on request (or spawns them, where forking is unsafe) and reports their exits.
Each worker has its own socket to the pool. A manager thread waits, with one ``epoll``
selector and no polling, on: the worker sockets (results), the workers' pidfds (process
sentinels), the zygote's control socket (spawn and exit reports) and a wake-up pipe (new
submissions). Its only timers are task deadlines.

Attribution: the pool sends a worker batches of tasks and remembers their order. Before each
task the worker writes "tasks started so far" and the start time into a small page it shares
with the pool (:data:`sandbox.protocol.PROGRESS_FILE`); results travel back in batches. When a
worker dies, "started" minus "results received" says exactly which task it was running (the
*culprit*); tasks it had finished but whose results were still unsent, and tasks it had not
started, are re-queued. A timeout is judged from the same page: the running task's start time
plus its limit. When the pool kills a worker for a timeout it names the task; every other task
of that worker is re-queued.

The pool's zygote client (:mod:`sandbox.zygote_client`) and its deadline and kill machinery
(:mod:`sandbox.deadlines`) are mixins of :class:`SandboxPool`; its records of tasks and workers
are in :mod:`sandbox.records`.
"""
from __future__ import annotations

import atexit
import collections
import functools
import itertools
import logging
import math
import os
import re
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref
from concurrent.futures import Future, InvalidStateError
from typing import Any, Deque, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from . import channel, classify, codec, confine as _confine
from .deadlines import EXIT_WAIT, Deadlines
from .errors import (
    ConfigError, ConfinementWarning, DecodeError, EncodeError, PoolClosedError, ProtocolError, TaskError,
    WorkerStartError,
)
from .outcome import CONFIRMABLE, Outcome, Status, Task, TensorInfo, returned_outcome
from .protocol import PROGRESS_FILE, PROGRESS_SIZE, STDERR_FILE, STDOUT_FILE, ProgressPage, read_tail
from .procfs import cpu_seconds, kib_field
from .records import BUSY, DYING, IDLE, RETIRING, STARTING, Group, Pending, WorkerRecord
from .zygote_client import ZygoteClient

log = logging.getLogger("sandbox.pool")

_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*$")
_WARMUP_REF = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*:[A-Za-z_][A-Za-z_0-9]*$")
_STATUSES = {s.value: s for s in Status}
_STATUS_NAMES = {s: s.value for s in Status}
_OOM = Status.OOM

_SOLO_BYTES = 1 << 20         # a task this large travels alone (its frame may not fit in memory)
_BATCH_BYTES = 4 << 20        # a batch stops growing at this many bytes
_PIPELINE_BYTES = 64 << 10    # most unanswered bytes queued to a busy worker (< socket buffer)
_PIPELINE_FRAMES = 4          # most frames queued to a busy worker
_AFFINITY_WINDOW = 512        # most queued tasks of other workers' keys a batch looks past
_ENCODED_IN_CALLER = 64       # run() encodes this many tasks itself; the manager thread the rest
_ENCODE_AHEAD = 64            # tasks the manager encodes per turn ahead of need
_START_FAILURES = 3           # consecutive worker start failures that break the pool
_MEMORY_CHECK_S = 1.0         # a worker's memory is read at most this often (recycle_memory)


_TENSOR_INFOS: Dict[Tuple[Any, ...], Tuple[TensorInfo, ...]] = {}


def _tensor_infos(tensors: List[List[Any]]) -> Tuple[TensorInfo, ...]:
    """``Outcome.tensors`` from a result's list; the common one-tensor tuples are shared
    (immutable), not made anew for every result."""
    if len(tensors) != 1:
        return tuple(map(TensorInfo._make, tensors))
    key = tuple(tensors[0])
    infos = _TENSOR_INFOS.get(key)
    if infos is None:
        infos = (TensorInfo._make(key),)
        if len(_TENSOR_INFOS) < 4096:
            _TENSOR_INFOS[key] = infos
    return infos


def _anon_resident(pid: int) -> Optional[int]:
    """Anonymous resident bytes of process ``pid`` (``RssAnon``; None when it cannot be read):
    what a worker allocated itself, plus the pages it shares copy-on-write with its zygote."""
    return kib_field(f"/proc/{pid}/status", "RssAnon")


def _task_cpu(w: WorkerRecord, total: Optional[float]) -> Optional[float]:
    """The running task's share of worker ``w``'s ``total`` CPU seconds (None: unknown): the
    total less what the worker had used when the task started (its progress page)."""
    return None if total is None else max(0.0, total - w.progress.read_cpu())


def _check_positive(name: str, value: Any, *, allow_none: bool, integer: bool, minimum: float = 0) -> None:
    if value is None:
        if allow_none:
            return
        raise ConfigError(f"{name} must not be None")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        raise ConfigError(f"{name} must be a{'n integer' if integer else ' number'}, got {value!r}")
    if not (value > minimum and value < math.inf):
        raise ConfigError(f"{name} must be finite and greater than {minimum}, got {value!r}")


class SandboxPool(ZygoteClient, Deadlines):
    """A pool of crash-safe workers forked from a preloaded zygote.

    Parameters:
        preload: modules the zygote imports once (``("numpy", "torch")``); workers inherit them.
        workers: number of worker processes.
        timeout: default wall-clock limit per task, seconds (None: none).
        memory_limit: bytes a worker may allocate beyond its size at start (``RLIMIT_DATA``);
            None: no limit.
        max_tasks_per_worker: a worker is replaced after this many tasks (None: never).
        python: interpreter for the zygote and workers (another venv; it needs numpy and msgpack).
        confirm: re-run crashed/timeout/oom tasks once in a fresh worker and set ``confirmed``.
        start_method: ``"auto"`` (fork when the zygote has one thread, else spawn), ``"fork"``
            (fail when unsafe) or ``"spawn"``.
        spares: extra idle workers kept forked, so a worker that dies or retires is replaced at
            once and confirmation runs find a fresh worker; at most ``workers`` run tasks at a time.
        batch_size: most tasks sent to a worker in one message (larger batches cost less per
            task; when a worker dies, the tasks of its batch it had finished but not yet
            reported run again).
        file_size_limit: ``RLIMIT_FSIZE`` of workers, bytes.
        capture_limit: bytes kept of each of a task's stdout and stderr (the tails).
        env: extra environment variables for the zygote and workers (e.g. ``KERAS_BACKEND``).
        startup_timeout: seconds the zygote may take to import the preload set.
        kill_grace: seconds between the faulthandler dump (SIGUSR1) and SIGKILL on a timeout.
        locate_hangs: on a timeout, sample the worker's program counter first (ptrace, a few
            milliseconds) and report the shared objects it ran in (``Outcome.native``).
        confine: workers confine themselves before their first task (Linux Landlock; see
            :mod:`sandbox.confine`): they read anywhere but write, create, remove or rename only
            beneath their own folder (also their ``TMPDIR``), ``writable``, ``/dev/shm`` and
            device files, make no TCP bind or connect and signal no process outside; the
            zygote and its workers get a network namespace of their own where the kernel allows
            it. What the kernel lacks is warned about once (:class:`ConfinementWarning`) and
            named by :meth:`describe` and ``info["confinement"]``. ``False``: none of it.
        writable: more folders (or files) the workers may change, e.g. a compile cache. The
            folders named by the variables of ``env`` whose names end in ``_CACHE_DIR`` are
            added (created if missing): a caller that points workers at a cache lets them write it.
        warmup: ``"module:function"`` s the zygote calls after its imports, before it forks a
            worker, so that every worker inherits their work instead of redoing it in its first
            task (:func:`sandbox.preload.run_warmups`: they must start no thread).
        nice: niceness the zygote adds to its own (0-19), inherited by its workers: a pool for
            work that must only use what other pools leave of the CPU.
        help_after: an idle worker with nothing of its own queued takes tasks whose affinity
            key belongs to a busy worker once that worker's running task has run this many
            seconds (None: never). Sooner, the owner takes them itself, where their caches are.
        recycle_memory: a worker whose anonymous resident memory (``RssAnon``: heap, arenas,
            caches of compiled programs) has grown by more than this many bytes since it
            started is replaced after the tasks it holds (None: never). A soft limit that keeps
            the pool's memory in bounds over hours; ``memory_limit`` is the hard one, per task.
            Read at most once a second per worker; settable at any time.
    """

    def __init__(
        self,
        preload: Sequence[str] = (),
        workers: int = 2,
        timeout: Optional[float] = 10.0,
        memory_limit: Optional[int] = 2 << 30,
        max_tasks_per_worker: Optional[int] = 1000,
        *,
        python: Optional[str] = None,
        confirm: bool = True,
        start_method: str = "auto",
        spares: int = 1,
        batch_size: int = 64,
        file_size_limit: Optional[int] = 64 << 20,
        capture_limit: int = 16 << 10,
        env: Optional[Mapping[str, str]] = None,
        startup_timeout: float = 300.0,
        kill_grace: float = 0.1,
        locate_hangs: bool = True,
        confine: bool = True,
        writable: Iterable[Any] = (),
        warmup: Sequence[str] = (),
        nice: int = 0,
        help_after: Optional[float] = 0.25,
        recycle_memory: Optional[int] = None,
    ) -> None:
        if isinstance(preload, str) or not all(isinstance(m, str) and _MODULE_NAME.match(m) for m in preload):
            raise ConfigError(f"preload must be a sequence of module names, got {preload!r}")
        if isinstance(warmup, str) or not all(isinstance(r, str) and _WARMUP_REF.match(r) for r in warmup):
            raise ConfigError(f"warmup must be a sequence of 'module:function' strings, got {warmup!r}")
        if isinstance(nice, bool) or not isinstance(nice, int) or not 0 <= nice <= 19:
            raise ConfigError(f"nice must be an integer from 0 to 19, got {nice!r}")
        if help_after is not None and (isinstance(help_after, bool) or not isinstance(help_after, (int, float))
                                       or not 0 <= help_after < math.inf):
            raise ConfigError(f"help_after must be None or a finite number of seconds >= 0, got {help_after!r}")
        _check_positive("workers", workers, allow_none=False, integer=True)
        _check_positive("timeout", timeout, allow_none=True, integer=False)
        _check_positive("memory_limit", memory_limit, allow_none=True, integer=True, minimum=(16 << 20) - 1)
        _check_positive("max_tasks_per_worker", max_tasks_per_worker, allow_none=True, integer=True)
        _check_positive("recycle_memory", recycle_memory, allow_none=True, integer=True)
        _check_positive("batch_size", batch_size, allow_none=False, integer=True)
        if isinstance(spares, bool) or not isinstance(spares, int) or not 0 <= spares <= 64:
            raise ConfigError(f"spares must be an integer from 0 to 64, got {spares!r}")
        _check_positive("file_size_limit", file_size_limit, allow_none=True, integer=True, minimum=(1 << 20) - 1)
        _check_positive("capture_limit", capture_limit, allow_none=False, integer=True, minimum=255)
        _check_positive("startup_timeout", startup_timeout, allow_none=False, integer=False)
        if isinstance(kill_grace, bool) or not isinstance(kill_grace, (int, float)) or not 0 <= kill_grace < 60:
            raise ConfigError(f"kill_grace must be between 0 and 60 seconds, got {kill_grace!r}")
        if start_method not in ("auto", "fork", "spawn"):
            raise ConfigError(f"start_method must be 'auto', 'fork' or 'spawn', got {start_method!r}")
        if not isinstance(confirm, bool):
            raise ConfigError(f"confirm must be a bool, got {confirm!r}")
        if python is not None:
            python = os.fspath(python)
            if not (os.path.isfile(python) and os.access(python, os.X_OK)):
                raise ConfigError(f"python {python!r} is not an executable file")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ConfigError("env must map str to str")
        if not isinstance(confine, bool):
            raise ConfigError(f"confine must be a bool, got {confine!r}")
        if isinstance(writable, (str, bytes, os.PathLike)):
            raise ConfigError(f"writable must be a sequence of paths, got {writable!r}")
        extra_writable: List[str] = []
        for path in writable:
            try:
                path = os.path.abspath(os.fspath(path))
            except TypeError:
                raise ConfigError(f"writable must hold paths, got {path!r}") from None
            if not isinstance(path, str) or not os.path.exists(path):
                raise ConfigError(f"writable path {path!r} does not exist")
            extra_writable.append(path)

        self.preload: Tuple[str, ...] = tuple(preload)
        self.warmup: Tuple[str, ...] = tuple(warmup)
        self.nice = nice
        self.help_after = float(help_after) if help_after is not None else None
        self._help_at: Optional[float] = None  # when an idle worker should look again (help_after)
        self.workers = workers
        self.timeout = float(timeout) if timeout is not None else None
        self.memory_limit = memory_limit
        self.max_tasks_per_worker = max_tasks_per_worker
        self.recycle_memory = recycle_memory
        self.python = python or sys.executable
        self.confirm = confirm
        self.start_method = start_method
        self.batch_size = batch_size
        self.spares = spares
        self.file_size_limit = file_size_limit
        self.capture_limit = capture_limit
        self.kill_grace = float(kill_grace)
        self.locate_hangs = bool(locate_hangs)
        self._env = dict(env or {})
        self._startup_timeout = float(startup_timeout)
        self.confine = confine
        self._confinement = self._plan_confinement(extra_writable) if confine else None
        self._worker_confinement = None if self._confinement is None else {
            k: self._confinement[k] for k in ("abi", "reason", "rules")}
        self._confine_warned = self._worker_confine_warned = False
        #: recent fork-to-ready times of workers (spawn request to hello), and the time each
        #: spent confining itself, seconds (for measurements)
        self.ready_times: Deque[float] = collections.deque(maxlen=1024)
        self.confine_times: Deque[float] = collections.deque(maxlen=1024)

        self._lock = threading.Lock()
        self._incoming: List[Pending] = []
        self._tids = itertools.count(1)
        self._wids = itertools.count(1)
        self._queue: Deque[Pending] = collections.deque()
        # affinity key -> wid of the worker that serves it (see Task.affinity)
        self._affinity: Dict[str, int] = {}
        self._affinity_load: Dict[int, int] = {}  # wid -> keys it was given
        self._unencoded: Deque[Pending] = collections.deque()  # queued without a packet, in order
        self._confirm_q: Deque[Pending] = collections.deque()
        self._workers: Dict[int, WorkerRecord] = {}
        self._free_dirs: List[str] = []  # emptied directories of dead workers, for new ones
        self._stopping = False     # close() called: accept nothing more
        self._cancel = False       # close(wait=False): cancel what is left
        self._broken: Optional[str] = None
        self._start_failures = 0
        self._last_start_error = ""
        self._zygote_restarts = 0
        self._cancel_deadline: Optional[float] = None
        #: counters: tasks submitted, worker starts and deaths, confirmation runs, tasks an idle
        #: worker took from a stuck owner of their affinity key, taking the key over
        #: (``helped``), workers replaced for their memory's growth (``recycled_memory``),
        #: outcomes by status
        self.stats: Dict[str, int] = dict.fromkeys(
            ["submitted", "abandoned", "worker_starts", "deaths", "confirm_runs", "helped", "recycled_memory"]
            + [s.value for s in Status], 0)

        self._root = tempfile.mkdtemp(prefix="sandbox-")
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = os.pipe()
        self._woken = False
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, ("wake", None))
        self._zygote_proc: Optional[subprocess.Popen] = None
        self._ctrl: Optional[socket.socket] = None
        self.info: Dict[str, Any] = {}
        try:
            self._start_zygote()
        except BaseException:
            self._cleanup()
            raise
        self._thread = threading.Thread(target=self._manage, name="sandbox-pool", daemon=True)
        self._thread.start()
        # a pool left open is cancelled at interpreter exit (its processes would die anyway)
        self._exit_hook = functools.partial(_close_at_exit, weakref.ref(self))
        atexit.register(self._exit_hook)

    # ------------------------------------------------------------------------------------------
    # public API

    @property
    def mode(self) -> str:
        """``"fork"`` or ``"spawn"``: how this pool's workers start now."""
        return self.info.get("mode", "")

    def describe(self) -> str:
        """One line: workers, start mode, and what confinement the workers enforce (and what
        is off), e.g. for a log's start line."""
        spare = f" (+{self.spares} spare)" if self.spares else ""
        nice = f", niceness +{self.nice}" if self.nice else ""
        return (f"sandbox: {self.workers} worker(s){spare}, {self.mode or '?'} mode{nice}; "
                f"{_confine.describe(self.info.get('confinement'))}")

    def worker_pids(self) -> List[int]:
        """Process ids of the live workers (spares included), e.g. for monitoring."""
        return [w.pid for w in list(self._workers.values()) if w.pid is not None and w.state != DYING]

    def submit(self, task: Task) -> "Future[Outcome]":
        """Queue ``task``; the future resolves to its :class:`Outcome` (never to an exception).

        Raises :class:`TaskError`/:class:`EncodeError` at once for a malformed task or an
        argument that cannot be encoded, and :class:`PoolClosedError` after :meth:`close`.
        """
        pending = self._make_pending(task)
        self._enqueue([pending])
        return pending.future  # type: ignore[return-value]

    def submit_many(self, tasks: Iterable[Task]) -> List["Future[Outcome]"]:
        """Queue several tasks at once (all are encoded first: a bad one queues none)."""
        pendings = [self._make_pending(task) for task in tasks]
        self._enqueue(pendings)
        return [p.future for p in pendings]  # type: ignore[misc]

    def run(self, tasks: Iterable[Task], timeout: Optional[float] = None) -> List[Outcome]:
        """Run ``tasks`` and return their outcomes in submission order.

        ``timeout`` bounds the wait for all of them (``TimeoutError``); the tasks themselves keep
        their own limits. A malformed or unencodable task raises (TaskError, EncodeError) and
        none of this call's tasks that have not started yet will run.

        The first tasks are encoded here, the rest by the pool's manager thread as it feeds the
        workers (two threads encoding and dispatching at once would fight over the GIL, and the
        workers would wait for it): arguments must not be changed until ``run`` returns, also
        when it raised ``TimeoutError`` while tasks were still queued.
        """
        tasks = list(tasks)
        if not tasks:
            return []
        group = Group(len(tasks))
        pendings: List[Pending] = []
        for slot, task in enumerate(tasks):
            # a bad task among the first raises before anything is queued; past them, the
            # manager finds it within a few turns (it encodes ahead) and this call raises then
            p = self._make_pending(task, with_future=False, encode=slot < _ENCODED_IN_CALLER)
            p.group, p.slot = group, slot
            pendings.append(p)
        self._enqueue(pendings)
        if not group.done.wait(timeout):
            raise TimeoutError(f"{group.remaining} of {len(tasks)} tasks unfinished after {timeout} s")
        if group.error is not None:
            raise group.error
        return group.outcomes  # type: ignore[return-value]

    def close(self, wait: bool = True) -> None:
        """Stop the pool. ``wait=True`` finishes every submitted task first; ``wait=False``
        cancels what has not finished (those outcomes have status ``cancelled``)."""
        with self._lock:
            self._stopping = True
            if not wait:
                self._cancel = True
            self._wake()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join()
        atexit.unregister(self._exit_hook)

    def __enter__(self) -> "SandboxPool":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(wait=exc_type is None)

    def __repr__(self) -> str:
        return (f"SandboxPool(preload={self.preload!r}, workers={self.workers}, mode={self.mode!r}, "
                f"python={self.python!r})")

    # ------------------------------------------------------------------------------------------
    # submission (caller threads)

    def _make_pending(self, task: Task, with_future: bool = True, encode: bool = True) -> Pending:
        if not isinstance(task, Task):
            raise TaskError(f"expected a sandbox.Task, got {type(task).__name__}")
        tid = next(self._tids)
        packet = self._encode_task(tid, task) if encode else None
        timeout = task.timeout if task.timeout is not None else self.timeout
        return Pending(tid, task, packet, Future() if with_future else None, timeout)

    def _encode_task(self, tid: int, task: Task) -> codec.Packet:
        steps, convert, convert_kwargs = task.wire()
        try:
            return codec.encode_packet([tid, steps, convert, convert_kwargs], where="task")
        except EncodeError as exc:
            raise EncodeError(self._locate(task) or str(exc)) from None

    @staticmethod
    def _locate(task: Task) -> Optional[str]:
        for index, step in enumerate(task.steps):
            where = f"step {index} ({step.fn})"
            found = codec.locate_unencodable(list(step.args), f"{where} args") or codec.locate_unencodable(
                step.kwargs, f"{where} kwargs")
            if found:
                return found
        return codec.locate_unencodable(task.convert_kwargs, "convert_kwargs")

    def _enqueue(self, pendings: List[Pending]) -> None:
        with self._lock:
            if self._stopping:
                raise PoolClosedError("the pool is closed")
            if self._broken:
                raise PoolClosedError(f"the pool is broken: {self._broken}")
            self._incoming.extend(pendings)
            self._wake()

    def _wake(self) -> None:
        """Wake the manager thread (call with the lock held: the pipe closes under it). One
        byte per wake-up, not per call: a campaign submits hundreds of tasks a second, and a
        write for each was most of what submitting cost. A set ``_woken`` means the manager has
        a wake-up coming: a byte in the pipe, or a drain that has not yet cleared the flag, and
        after which it takes what was queued (:meth:`_drain_wake`)."""
        if self._wake_w < 0 or self._woken:
            return
        self._woken = True
        try:
            os.write(self._wake_w, b"\0")
        except BlockingIOError:
            pass  # the pipe is full: a wake-up is pending anyway

    # ------------------------------------------------------------------------------------------
    # the manager thread

    def _manage(self) -> None:
        try:
            while self._step():
                pass
        except BaseException as exc:  # a sandbox bug: never leave a caller waiting forever
            log.exception("sandbox pool manager failed")
            self._broken = f"{type(exc).__name__}: {exc}"
            self._fail_all(f"the sandbox pool failed: {self._broken}", type(exc))
        finally:
            self._cleanup()

    def _step(self) -> bool:
        """One turn of the loop; False when the pool is done."""
        with self._lock:
            incoming, self._incoming = self._incoming, []
            stopping, cancel = self._stopping, self._cancel
        if incoming:
            self.stats["submitted"] += len(incoming)
            if cancel:
                for p in incoming:
                    self._resolve(p, self._cancelled(p))
            else:
                self._queue.extend(incoming)
                self._unencoded.extend(p for p in incoming if p.packet is None)
        if cancel:
            if self._cancel_deadline is None:
                self._begin_cancel()
            if not self._workers_busy() or time.monotonic() > self._cancel_deadline:  # type: ignore[operator]
                self._abandon_inflight()
                return False
        elif self._broken:
            self._fail_all(self._broken, WorkerStartError)
            if stopping:
                return False
        elif stopping and not self._queue and not self._confirm_q and not self._workers_busy():
            return False
        wait = None
        if not cancel and not self._broken:
            self._dispatch()
            if self._unencoded and not self._encode_ahead():
                wait = 0.0  # more to encode: look at the sockets, then come back to it
        if wait is None:
            wait = self._next_timer(time.monotonic())
        for key, _ in self._selector.select(wait):
            kind, worker = key.data
            if kind == "wake":
                self._drain_wake()
            elif kind == "sock":
                self._read_worker(worker)
            elif kind == "pidfd":
                self._on_pidfd(worker)
            elif kind == "zygote":
                self._read_zygote()
        self._check_timers(time.monotonic())
        return True

    def _encode_ahead(self) -> bool:
        """Encode a few queued tasks ahead of need (so that an unencodable one fails its run()
        early); True when none is left to encode."""
        done = 0
        while self._unencoded and done < _ENCODE_AHEAD:
            p = self._unencoded.popleft()
            if p.packet is None and not (p.group is not None and p.group.abandoned):
                self._encode_pending(p)
                done += 1
        return not self._unencoded

    def _encode_pending(self, p: Pending) -> bool:
        """Encode a task that run() left to this thread; on failure, fail its run() call (its
        tasks still queued are dropped unrun, this one included) and return False."""
        try:
            p.packet = self._encode_task(p.tid, p.task)
        except Exception as exc:  # EncodeError, or a failing __len__/__iter__ of an argument
            group = p.group
            if group is not None and not group.abandoned:
                group.error = exc
                group.abandoned = True
                group.done.set()
            return False
        p.nbytes = p.packet.nbytes
        return True

    def _drain_wake(self) -> None:
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass
        # after the read, under the lock: a wake before this line found the flag set and wrote
        # nothing, and the next turn takes its task anyway; a wake after it writes a byte
        with self._lock:
            self._woken = False

    def _workers_busy(self) -> bool:
        return any(w.inflight for w in self._workers.values())

    # --- workers: start, dispatch, retire ------------------------------------------------------

    def _live(self) -> List[WorkerRecord]:
        return [w for w in self._workers.values() if w.state in (STARTING, IDLE, BUSY)]

    def _surplus(self) -> bool:
        """More live workers than wanted (after a confirmation's extra worker)."""
        return len(self._live()) > self.workers + self.spares + (1 if self._confirm_q else 0)

    def _exhausted(self, w: WorkerRecord) -> bool:
        """The worker takes no more tasks (it retires after those it has)."""
        return w.retire_after or (self.max_tasks_per_worker is not None
                                  and w.dispatched >= self.max_tasks_per_worker)

    def _ensure_workers(self) -> None:
        # a worker that has been given its last task no longer counts: its successor forks now,
        # so no worker slot sits empty while the successor starts
        live = [w for w in self._live() if not self._exhausted(w)]
        target = self.workers + self.spares
        if self._stopping and not self._queue and not self._confirm_q:
            target = 0
        if self._confirm_q and not any(w.dispatched == 0 and w.state in (STARTING, IDLE) for w in live):
            target = max(target, len(live) + 1)  # a fresh worker for the confirmation run
        for _ in range(target - len(live)):
            self._spawn_worker()

    def _spawn_worker(self) -> None:
        if self._ctrl is None:
            return
        wid = next(self._wids)
        if self._free_dirs:
            workdir = self._free_dirs.pop()
        else:
            workdir = os.path.join(self._root, f"w{wid}")
            os.mkdir(workdir, 0o700)
        page_path = os.path.join(workdir, PROGRESS_FILE)
        fd = os.open(page_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, PROGRESS_SIZE)
        finally:
            os.close(fd)
        progress = ProgressPage(page_path)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        worker = WorkerRecord(wid, ours, workdir, progress)
        config = {
            "workdir": workdir, "capture_limit": self.capture_limit, "memory_limit": self.memory_limit,
            "file_size_limit": self.file_size_limit, "confine": self._worker_confinement,
        }
        try:
            channel.send_control(self._ctrl, {"t": "spawn", "wid": wid, "config": config}, [theirs.fileno()])
        except OSError as exc:
            log.error("cannot reach the zygote: %s", exc)
            ours.close()
            theirs.close()
            progress.close()
            self._release_dir(workdir)
            return
        theirs.close()
        self._workers[wid] = worker
        self._selector.register(ours, selectors.EVENT_READ, ("sock", worker))
        self.stats["worker_starts"] += 1

    def _long_running(self, w: WorkerRecord) -> bool:
        """Whether ``w``'s running task has run ``help_after`` seconds: nothing more is queued
        behind it, so what would wait there goes to a worker that is free."""
        if self.help_after is None:
            return False
        index, started_at = w.running()
        return index >= 0 and time.monotonic() - started_at >= self.help_after

    def _stuck_owners(self, deferred: List[Pending]) -> Set[int]:
        """The owners of ``deferred`` tasks' keys whose running task started ``help_after``
        seconds ago or more; for the others, the time they get there is set as a timer
        (``_help_at``), so the idle worker looks again then."""
        if self.help_after is None:
            return set()
        now = time.monotonic()
        stuck: Set[int] = set()
        for wid in {self._affinity.get(p.task.affinity) for p in deferred}:
            owner = self._workers.get(wid) if wid is not None else None
            if owner is None or owner.state != BUSY:
                continue
            index, started_at = owner.running()
            if index < 0:
                continue
            if now - started_at >= self.help_after:
                stuck.add(wid)
            else:
                at = started_at + self.help_after
                self._help_at = at if self._help_at is None else min(self._help_at, at)
        return stuck

    def _dispatch(self) -> None:
        self._ensure_workers()
        # a worker that was given its last task frees its slot now: its successor starts
        # while it finishes, instead of after
        busy = sum(1 for w in self._workers.values() if w.state == BUSY and not self._exhausted(w))
        live = min(self.workers, len(self._live()))
        # affinity: keys of workers that live on stay theirs; new keys go to serving workers
        # (not to spares, which take work only when a slot frees up)
        live_wids = {x.wid for x in self._workers.values()
                     if x.kill_reason is None and not x.retire_after and x.state in (STARTING, IDLE, BUSY)}
        # workers that ran tasks first, then idle fresh ones before those still starting
        ranked = [x.wid for x in sorted((x for x in self._workers.values() if x.wid in live_wids),
                                        key=lambda x: (x.dispatched == 0, x.state == STARTING, x.wid))]
        # workers that ran tasks before are fed first: fresh ones (spares) stay fresh for
        # confirmation runs and step in when a slot frees up
        for w in sorted(self._workers.values(), key=lambda w: w.dispatched == 0):
            if w.kill_reason is not None or w.retire_after:
                continue
            if w.state == IDLE:
                if self._confirm_q and w.dispatched == 0:
                    self._send(w, [self._confirm_q.popleft()])
                    continue
                if busy >= self.workers:
                    continue
                busy += 1
                budget = _BATCH_BYTES
            elif (w.state == BUSY and self._queue and len(w.frames) < _PIPELINE_FRAMES
                  and not self._long_running(w)):
                # Keep frames queued behind the running one, so the worker never waits for this
                # thread (which a busy machine may not schedule for a while); only what fits in
                # the socket buffer, so this send cannot block.
                budget = _PIPELINE_BYTES - sum(p.nbytes for p in w.inflight)
                if budget <= 0:
                    continue
            else:
                continue
            if not self._queue:
                continue
            limit = min(self.batch_size, max(1, math.ceil(len(self._queue) / max(1, live))))
            if self.max_tasks_per_worker is not None:
                limit = min(limit, self.max_tasks_per_worker - w.dispatched)
            # new keys go to at most `workers` workers, this one (it takes a slot) among them;
            # otherwise a spare that took the first slot at start-up made a third home
            serving = {w.wid, *[i for i in ranked if i != w.wid][:self.workers - 1]}
            batch: List[Pending] = []
            deferred: List[Pending] = []  # other live workers' affinity keys, put back after
            size = 0
            while self._queue and len(batch) < limit:
                p = self._queue[0]
                if p.group is not None and p.group.abandoned:
                    self._queue.popleft()  # its run() call failed before it was fully queued
                    self.stats["abandoned"] += 1
                    continue
                key = p.task.affinity
                if key is not None:
                    owner = self._affinity.get(key)
                    if owner is None or owner not in live_wids:
                        # a new key goes to the serving worker that holds the fewest
                        owner = min(serving, key=lambda i: (self._affinity_load.get(i, 0), i != w.wid))
                        self._assign_key(key, owner)
                    if owner != w.wid:
                        if len(deferred) < _AFFINITY_WINDOW:
                            deferred.append(self._queue.popleft())
                            continue
                        if batch or w.state == BUSY:
                            break  # enough looking; the owner will take the rest
                        # nothing of its own in the window: an idle worker helps out, as below,
                        # if the owner is stuck in one task, and keeps the key
                        if owner not in self._stuck_owners([p]):
                            break
                        self._assign_key(key, w.wid)
                        self.stats["helped"] += 1
                if p.future is not None and not p.started:
                    if not p.future.set_running_or_notify_cancel():
                        self._queue.popleft()  # cancelled by its submitter
                        continue
                    p.started = True
                if p.packet is None and not self._encode_pending(p):
                    continue  # its run() call failed: dropped as abandoned on the next turn
                if (size + p.nbytes > budget or p.nbytes > _SOLO_BYTES) and (batch or w.state == BUSY):
                    break
                batch.append(self._queue.popleft())
                size += p.nbytes
                if p.nbytes > _SOLO_BYTES:
                    break  # a large task travels alone
            if deferred and not batch and w.state == IDLE and not self._queue:
                # nothing of its own queued at all: an idle worker helps out with half of what
                # waits for owners busy with one task for `help_after` seconds, and takes their
                # keys over; otherwise it idles while a worker busy with one slow task holds the
                # whole queue. An owner busy for less will soon take its own, whose caches
                # (compiled programs) are there, not here
                stuck = self._stuck_owners(deferred)
                take = min(limit, max(1, sum(1 for p in deferred if self._affinity.get(p.task.affinity) in stuck) // 2))
                keep: List[Pending] = []
                for p in deferred:
                    if len(batch) >= take or self._affinity.get(p.task.affinity) not in stuck:
                        keep.append(p)
                    elif p.group is not None and p.group.abandoned:
                        self.stats["abandoned"] += 1
                    elif p.future is not None and not p.started and not p.future.set_running_or_notify_cancel():
                        pass  # cancelled by its submitter
                    elif p.packet is not None or self._encode_pending(p):
                        p.started = p.future is not None or p.started
                        # the helper keeps the key: what the task leaves in a cache (compiled
                        # programs) is here now, and the key's next tasks should find it
                        self._assign_key(p.task.affinity, w.wid)
                        batch.append(p)
                        self.stats["helped"] += 1
                deferred = keep
            if deferred:
                self._queue.extendleft(reversed(deferred))
            if batch:
                self._send(w, batch)
            elif w.state == IDLE:
                # it took nothing (what is queued belongs to other workers' keys): the slot stays
                # free for them; otherwise an owner that is idle too waits for it forever
                busy -= 1

    def _assign_key(self, key: str, wid: int) -> None:
        old = self._affinity.get(key)
        if old is not None and self._affinity_load.get(old, 0) > 0:
            self._affinity_load[old] -= 1
        self._affinity[key] = wid
        self._affinity_load[wid] = self._affinity_load.get(wid, 0) + 1

    def _send(self, w: WorkerRecord, batch: List[Pending]) -> None:
        was_idle = not w.inflight
        w.inflight.extend(batch)
        w.frames.append(len(batch))
        w.dispatched += len(batch)
        w.state = BUSY
        if was_idle:
            timeouts = [t for p in batch for t in (p.timeout, p.task.step_timeout) if t is not None]
            w.next_check = time.monotonic() + min(timeouts) if timeouts else None
        try:
            channel.send_packets(w.sock, [p.packet for p in batch])
        except OSError:
            # the worker died before it read the whole frame, so it ran none of these
            for p in batch:
                w.inflight.remove(p)
            w.frames.pop()
            self._requeue(batch)
            w.state = DYING
            w.exit_deadline = time.monotonic() + EXIT_WAIT

    def _requeue(self, pendings: Sequence[Pending]) -> None:
        for p in reversed(pendings):
            (self._confirm_q if p.confirm_of is not None else self._queue).appendleft(p)

    def _retire(self, w: WorkerRecord) -> None:
        """Tell the worker to exit (an empty frame: EOF alone is not enough when a fork of this
        process holds a copy of the socket); the zygote reports its exit."""
        w.state = RETIRING
        w.exit_deadline = time.monotonic() + EXIT_WAIT
        try:
            channel.send_packets(w.sock, [])
        except OSError:
            pass
        self._unregister_sock(w)
        w.sock.close()

    def _unregister_sock(self, w: WorkerRecord) -> None:
        if w.registered:
            w.registered = False
            try:
                self._selector.unregister(w.sock)
            except (KeyError, ValueError):
                pass

    # --- confinement ---------------------------------------------------------------------------

    def _plan_confinement(self, writable: List[str]) -> Dict[str, Any]:
        paths = list(writable)
        for name, value in sorted(self._env.items()):
            if name.endswith("_CACHE_DIR") and value:
                folder = os.path.abspath(value)
                try:
                    os.makedirs(folder, exist_ok=True)
                except OSError as exc:
                    log.warning("cannot create %s=%s, which workers could write: %s", name, value, exc)
                    continue
                if folder not in paths:
                    paths.append(folder)
        plan = _confine.plan(paths)
        plan["writable"] = paths
        return plan

    def _confinement_ready(self, ready: Dict[str, Any]) -> None:
        """Put what the workers will enforce into ``info`` (the zygote's ``ready`` report says
        whether it got a network namespace); warn once if some of it is off."""
        netns = ready.pop("netns", None) or {}
        if self._confinement is None:
            ready["confinement"] = {"enabled": False}
            return
        info = {k: v for k, v in self._confinement.items() if k != "rules"}
        info.update(enabled=True, netns=bool(netns.get("done")))
        info["netns_how" if netns.get("done") else "netns_error"] = netns.get("how") or "not attempted"
        ready["confinement"] = info
        if (info["off"] or not info["netns"]) and not self._confine_warned:
            self._confine_warned = True
            self._warn_confinement("sandbox workers are not fully confined: " + _confine.describe(info))

    def _check_confined(self, confined: Dict[str, Any]) -> None:
        """A worker's hello said how it confined itself."""
        self.confine_times.append(float(confined.get("seconds") or 0.0))
        expected = self._confinement["abi"] if self._confinement is not None else 0
        if expected and (confined.get("error") or confined.get("abi") != expected):
            info = self.info.get("confinement")
            if isinstance(info, dict):
                info["worker_error"] = confined.get("error")
            if not self._worker_confine_warned:
                self._worker_confine_warned = True
                self._warn_confinement(f"a sandbox worker could not confine itself ({confined.get('error')}); "
                                       f"its tasks run unconfined")

    @staticmethod
    def _warn_confinement(text: str) -> None:
        log.warning("%s", text)
        warnings.warn(text, ConfinementWarning, stacklevel=3)

    # --- events --------------------------------------------------------------------------------

    def _read_worker(self, w: WorkerRecord) -> None:
        try:
            frames = w.reader.read()
        except EOFError:
            self._unregister_sock(w)
            if w.state not in (DYING, RETIRING):
                w.state = DYING
                w.exit_deadline = time.monotonic() + EXIT_WAIT
            return
        for frame in frames:
            for header, buffers in channel.parse_frame(frame):
                self._on_message(w, self._decode(w, header, buffers))
        if frames and w.state == BUSY and w.kill_reason is None:
            self._arm(w, time.monotonic())

    @staticmethod
    def _decode(w: WorkerRecord, header: memoryview, buffers: List[memoryview]) -> List[Any]:
        try:
            return codec.decode_packet(header, buffers)
        except DecodeError:
            pass
        # some value fails to decode here (e.g. an ml_dtypes array without ml_dtypes installed):
        # decode the group item by item and mark just the results whose value failed
        group = codec.decode_packet(header, buffers, ext_fallback=True)
        if not (isinstance(group, list) and group and all(isinstance(r, list) and r[:1] == ["r"] for r in group)):
            raise ProtocolError(f"undecodable message from worker {w.wid}")
        for result in group:
            if codec.contains_undecodable(result[3]):
                result[2:6] = [Status.UNSERIALIZABLE.value, None, "sandbox.errors.DecodeError",
                               "the pool cannot decode the value (a dtype it lacks?)"]
        return group

    def _on_message(self, w: WorkerRecord, message: List[Any]) -> None:
        kind = message[0]
        if type(kind) is list:  # a group of results
            for result in message:
                self._on_result(w, result)
        elif kind == "hello":
            _, w.pid, w.data_limit, w.mode, confined = message
            w.greeted = True
            w.anon_base = _anon_resident(w.pid)
            self.ready_times.append(time.monotonic() - w.requested_at)
            if confined is not None:
                self._check_confined(confined)
            if w.state == STARTING:
                w.state = IDLE
            self._start_failures = 0
        elif kind == "frame_oom":
            # the worker could not hold the next frame (it ran none of it)
            batch = [w.inflight.popleft() for _ in range(w.frames.popleft())]
            if not w.inflight:
                w.state = IDLE
            if len(batch) == 1:
                p = batch[0]
                self._complete(p, Outcome(
                    Status.OOM, error_type="MemoryError",
                    error_message=f"the task's arguments ({message[1]} bytes) do not fit under the "
                                  f"worker's memory limit", worker_pid=w.pid, task=p.task))
            else:
                for p in batch:
                    p.nbytes = max(p.nbytes, _SOLO_BYTES + 1)  # retry each alone
                self._requeue(batch)
        else:
            raise ProtocolError(f"unexpected message from worker {w.wid}: {kind!r}")

    def _on_result(self, w: WorkerRecord, message: List[Any]) -> None:
        if not w.inflight:
            raise ProtocolError(f"worker {w.wid} sent a result with no task in flight")
        (_, tid, status, value, error_type, error_message, trace, failed_step, stdout, stderr, duration,
         rss, tensors) = message
        p = w.inflight.popleft()
        if tid is not None and tid != p.tid:
            raise ProtocolError(f"worker {w.wid} answered task {tid}, expected {p.tid}")
        w.reported += 1
        w.frames[0] -= 1
        if not w.frames[0]:
            w.frames.popleft()
        if w.kill_reason == "timeout" and w.kill_tid == p.tid:
            # past its deadline already (the SIGUSR1 dump may have cut a sleep short): a timeout,
            # with the stack dump in its stderr
            w.kill_tid = None
            outcome = Outcome(
                status=Status.TIMEOUT, error_message=w.kill_note or f"killed after {p.timeout:g} s",
                stdout_tail=stdout, stderr_tail=stderr, duration_s=time.monotonic() - w.kill_started_at,
                max_rss_bytes=rss, worker_pid=w.pid, task=p.task, native=w.native,
            )
            mark, marked_at = w.progress.read_mark()
            if mark is not None and marked_at >= w.kill_started_at:
                outcome.mark, outcome.mark_s = mark, max(0.0, time.monotonic() - marked_at)
            # the worker lives on until the kill: its CPU from /proc
            outcome.cpu_s = _task_cpu(w, cpu_seconds(w.pid) if w.pid is not None else None)
        else:
            outcome = returned_outcome(_STATUSES[status], value, error_type, error_message, trace, failed_step,
                                       stdout, stderr, duration, rss, w.pid,
                                       _tensor_infos(tensors) if tensors else (), p.task)
            if outcome.status is _OOM:
                w.retire_after = True  # a worker that hit its limit may be fragmented: replace it
        if self.recycle_memory is not None and not w.retire_after:
            self._check_growth(w)
        if not w.inflight and w.state == BUSY:
            w.state = IDLE
            w.next_check = None
            if w.kill_reason is None and (self._exhausted(w) or self._surplus()):
                self._retire(w)
        self._complete(p, outcome)

    def _check_growth(self, w: WorkerRecord) -> None:
        """Retire ``w`` after the tasks it holds once its anonymous memory grew past
        ``recycle_memory`` (read at most once a second: a read costs a few tens of microseconds)."""
        now = time.monotonic()
        if now < w.memory_check_at or w.pid is None:
            return
        w.memory_check_at = now + _MEMORY_CHECK_S
        anon = _anon_resident(w.pid)
        if anon is None or w.anon_base is None:
            w.anon_base = w.anon_base if anon is None else anon
            return
        if anon - w.anon_base > self.recycle_memory:
            w.retire_after = True
            self.stats["recycled_memory"] += 1

    def _on_pidfd(self, w: WorkerRecord) -> None:
        if w.dead_at is None:
            w.dead_at = time.monotonic()
        self._close_pidfd(w)
        if w.state not in (DYING, RETIRING):
            w.state = DYING
        if w.exit_deadline is None:
            w.exit_deadline = time.monotonic() + EXIT_WAIT

    def _close_pidfd(self, w: WorkerRecord) -> None:
        if w.pidfd is not None:
            try:
                self._selector.unregister(w.pidfd)
            except (KeyError, ValueError):
                pass
            os.close(w.pidfd)
            w.pidfd = None

    def _start_failed(self) -> None:
        self._start_failures += 1
        if self._start_failures >= _START_FAILURES and not self._broken:
            self._broken = (f"{self._start_failures} workers in a row died before accepting work; "
                            f"last error: {self._last_start_error or 'unknown'}")
            log.error("%s", self._broken)

    # --- deaths --------------------------------------------------------------------------------

    def _finalize(self, w: WorkerRecord, wait_status: Optional[int], max_rss: Optional[int],
                  cpu_s: Optional[float] = None) -> None:
        """The worker is gone: attribute its death, re-queue the other tasks, clean up.
        ``cpu_s``: the dead worker's CPU seconds (user and system), where its reaper knew them."""
        if w.registered:
            try:
                for frame in w.reader.read():  # results it sent before dying
                    for header, buffers in channel.parse_frame(frame):
                        self._on_message(w, self._decode(w, header, buffers))
            except EOFError:
                pass
            self._unregister_sock(w)
        if not w.greeted and wait_status is not None:
            # a worker that died in its set-up wrote to its own stderr; a spawned one that died
            # while importing wrote to the zygote's
            self._last_start_error = (f"worker exited with status {wait_status} before its hello"
                                      + (self._worker_stderr(w) or self._zygote_log_tail()))
            self._start_failed()
        w.sock.close()
        self._close_pidfd(w)
        dead_at = w.dead_at or time.monotonic()
        index, started_at = w.running()
        pendings = list(w.inflight)
        w.inflight.clear()
        w.frames.clear()
        culprit: Optional[Pending] = None
        if w.kill_reason == "timeout":
            culprit = next((p for p in pendings if p.tid == w.kill_tid), None)
            started_at = w.kill_started_at
        elif index >= 0:
            culprit = pendings[index]
        others = [p for p in pendings if p is not culprit]
        if self._cancel:
            for p in others:
                self._resolve(p, self._cancelled(p))
        else:
            self._requeue(others)  # finished-but-unreported, and never started: run them again
        if culprit is not None:
            stdout = read_tail(os.path.join(w.workdir, STDOUT_FILE), self.capture_limit)
            stderr = read_tail(os.path.join(w.workdir, STDERR_FILE), self.capture_limit)
            kills = classify.oom_kill_count()
            status, sig, name, code = classify.death_status(
                wait_status, kill_reason=w.kill_reason, max_rss=max_rss, memory_ceiling=w.data_limit,
                stderr_tail=stderr, oom_killer_fired=None not in (kills, w.oom_kills) and kills > w.oom_kills)
            outcome = Outcome(
                status=status, signal=sig, signal_name=name, exit_code=code, stdout_tail=stdout,
                stderr_tail=stderr, duration_s=max(0.0, dead_at - started_at), max_rss_bytes=max_rss,
                worker_pid=w.pid, task=culprit.task,
            )
            mark, marked_at = w.progress.read_mark()
            if mark is not None:
                outcome.mark, outcome.mark_s = mark, max(0.0, dead_at - marked_at)
            if w.greeted:
                outcome.cpu_s = _task_cpu(w, cpu_s)
            if status == Status.TIMEOUT:
                outcome.error_message = w.kill_note or f"killed after {culprit.timeout:g} s"
                outcome.native = w.native
            elif wait_status is None and status == Status.CRASHED:
                outcome.error_message = "the worker vanished (its exit status is unknown)"
            self.stats["deaths"] += 1
            if status == Status.CANCELLED:
                self._resolve(culprit, outcome)
            else:
                self._complete(culprit, outcome)
        elif w.greeted and w.state != RETIRING and wait_status is not None and w.kill_reason is None:
            log.warning("worker %s (pid %s) exited while idle with status %s", w.wid, w.pid, wait_status)
        w.progress.close()
        self._release_dir(w.workdir)
        self._workers.pop(w.wid, None)

    def _release_dir(self, workdir: str) -> None:
        """Empty a dead worker's directory and keep it for the next worker: removing a
        directory can be slow (on ext4 mounted with ``discard``, milliseconds), emptying it is
        not. All directories go when the pool closes."""
        try:
            with os.scandir(workdir) as entries:
                for entry in list(entries):
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path)
                    else:
                        os.unlink(entry.path)
        except OSError:
            shutil.rmtree(workdir, ignore_errors=True)  # not reusable: a fresh one next time
            return
        self._free_dirs.append(workdir)

    def _worker_stderr(self, w: WorkerRecord) -> str:
        tail = read_tail(os.path.join(w.workdir, STDERR_FILE), 2048).strip()
        return f"; stderr: {tail}" if tail else ""

    # --- resolution ----------------------------------------------------------------------------

    def _complete(self, p: Pending, outcome: Outcome) -> None:
        """A run of ``p`` ended: confirm it, finish a confirmation, or resolve it."""
        if p.confirm_of is not None:
            original, first = p.confirm_of
            first.confirmed = outcome.status == first.status
            first.confirm_status = outcome.status
            self.stats["confirm_runs"] += 1
            self._resolve(original, first)
        elif ((self.confirm if p.task.confirm is None else p.task.confirm)
              and outcome.status in CONFIRMABLE and not self._cancel):
            # same id: the packet carries it, and the first run is no longer in flight
            rerun = Pending(p.tid, p.task, p.packet, None, p.timeout)
            rerun.started = True
            rerun.confirm_of = (p, outcome)
            self._confirm_q.append(rerun)
        else:
            self._resolve(p, outcome)

    def _resolve(self, p: Pending, outcome: Outcome) -> None:
        if p.confirm_of is not None:  # a confirmation that will not run: report the first run
            original, first = p.confirm_of
            self._resolve(original, first)
            return
        self.stats[_STATUS_NAMES[outcome.status]] += 1
        if p.future is not None:
            try:
                p.future.set_result(outcome)
            except InvalidStateError:
                pass  # cancelled by its submitter
        group = p.group
        if group is not None:
            group.outcomes[p.slot] = outcome
            group.remaining -= 1
            if not group.remaining:
                group.done.set()

    def _cancelled(self, p: Pending, reason: str = "the pool was closed before the task finished",
                   error_type: Optional[str] = None) -> Outcome:
        return Outcome(Status.CANCELLED, error_type=error_type, error_message=reason, task=p.task)

    def _begin_cancel(self) -> None:
        self._cancel_deadline = time.monotonic() + EXIT_WAIT
        for p in list(self._queue) + list(self._confirm_q):
            self._resolve(p, self._cancelled(p))
        self._queue.clear()
        self._confirm_q.clear()
        self._unencoded.clear()
        for w in list(self._workers.values()):
            if w.inflight:
                self._begin_kill(w, "cancel")
                if w.pid is None:  # not started yet: nothing ran
                    for p in w.inflight:
                        self._resolve(p, self._cancelled(p))
                    w.inflight.clear()

    def _abandon_inflight(self) -> None:
        for w in list(self._workers.values()):
            for p in w.inflight:
                self._resolve(p, self._cancelled(p))
            w.inflight.clear()

    def _fail_all(self, reason: str, error: type) -> None:
        error_type = f"{error.__module__}.{error.__qualname__}"
        pendings = list(self._queue) + list(self._confirm_q)
        with self._lock:
            pendings += self._incoming
            self._incoming = []
        for w in self._workers.values():
            pendings += list(w.inflight)
            w.inflight.clear()
        self._queue.clear()
        self._confirm_q.clear()
        self._unencoded.clear()
        for p in pendings:
            self._resolve(p, self._cancelled(p, reason, error_type))

    # --- teardown ------------------------------------------------------------------------------

    def _cleanup(self) -> None:
        for w in list(self._workers.values()):
            if w.inflight:
                self._hard_kill(w)
            elif w.registered:
                try:
                    channel.send_packets(w.sock, [])  # idle: exit now
                except OSError:
                    pass
            w.sock.close()
            self._close_pidfd(w)
            w.progress.close()
        self._workers.clear()
        self._stop_zygote()
        with self._lock:
            self._stopping = True
        try:
            self._selector.close()
        except (OSError, ValueError):
            pass
        with self._lock:
            for fd in (self._wake_r, self._wake_w):
                os.close(fd)
            self._wake_r = self._wake_w = -1
        shutil.rmtree(self._root, ignore_errors=True)


def _close_at_exit(ref: "weakref.ref[SandboxPool]") -> None:
    pool = ref()
    if pool is not None:
        pool.close(wait=False)
