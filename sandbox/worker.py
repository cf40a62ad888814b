"""The worker: limits, a private directory, captured output, and the task loop.

A worker is forked by the zygote (or, in spawn mode, started by it as a fresh interpreter
running :func:`main`). It talks to the pool over one stream socket: it sends a ``hello``, then
receives frames of tasks and sends their results back in groups (:data:`RESULT_BATCH`,
:data:`RESULT_DELAY`). Before each task it publishes "tasks started" and the start time on a
page it shares with the pool (:class:`~sandbox.protocol.ProgressPage`), so the pool knows which task a dying
worker was running even when results of finished tasks were still unsent.

Per worker: a data-size limit (``RLIMIT_DATA``: the worker's data size at start plus the pool's
``memory_limit``), no core files, a file-size limit, stdin from ``/dev/null``, a private working
directory (also ``TMPDIR``) emptied after every task, and faulthandler writing native-crash
tracebacks to the captured stderr (also on SIGUSR1, which the pool sends before a timeout kill).
Confinement (:mod:`sandbox.confine`, unless the pool has ``confine=False``): writes only
beneath the worker's directory and the pool's writable paths, no TCP, no signals outside.
Per task: stdout and stderr go to two files in that directory, emptied after each task once
their bounded tails are taken into the result (the pool reads them itself after a death).

Runs under other interpreters too: Python 3.9 syntax.
"""
from __future__ import annotations

import ctypes
import faulthandler
import importlib
import io
import json
import os
import resource
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from . import channel, classify, codec, confine
from .classify import safe_str as _safe_str, type_name as _type_name
from .errors import DecodeError, EncodeError, ResolveError
from .outcome import Ref, Status
from .preload import preload_modules, run_warmups
from .protocol import PROGRESS_FILE, STDERR_FILE, STDOUT_FILE, ProgressPage

_KEEP_FILES = frozenset({STDOUT_FILE, STDERR_FILE, PROGRESS_FILE})
#: results are sent in batches: at the end of each received frame, or when this many are waiting,
#: or when the oldest has waited this long (so the pool sees progress during long batches)
RESULT_BATCH = 64
RESULT_DELAY = 0.005
_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
_MESSAGE_LIMIT = 16 * 1024
_OK, _UNSERIALIZABLE = Status.OK.value, Status.UNSERIALIZABLE.value
_perf_counter, _monotonic = time.perf_counter, time.monotonic
#: the peak RSS is the process's (the mm's high-water mark) either way; RUSAGE_THREAD spares the
#: kernel summing the CPU times of all threads, which nobody reads here
_getrusage, _RUSAGE_SELF = resource.getrusage, getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)
_TRACEBACK_LINE_LIMIT = 4096


#: this worker's progress page (None outside a worker)
_PAGE: Optional[ProgressPage] = None


def mark(step: int) -> None:
    """Say that the running task has reached ``step`` (a non-negative integer, such as the index
    of the item it starts now). A task that dies carries its latest mark in
    :attr:`Outcome.mark <sandbox.Outcome.mark>`, so a task of many items can tell which one
    killed it. One aligned store to a shared page (well under a microsecond); a no-op outside a
    sandbox worker."""
    page = _PAGE
    if page is not None:
        page.mark(step, _monotonic())


def bounded(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, saying how much was dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


class CaptureStream(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` replacement writing straight to a capture file descriptor.

    Unbuffered (nothing is lost when the worker crashes). When Python-level output grows the
    file past ``cap`` bytes the file is cut back to its last ``keep`` bytes, so a flood of
    ``print`` stays bounded; output from C code is bounded by the file-size limit instead.
    """

    def __init__(self, fd: int, cap: int, keep: int) -> None:
        super().__init__()
        self._fd = fd
        self._cap = cap
        self._keep = keep
        self._written = 0
        self.buffer = _BinaryCapture(self)

    # TextIOBase API
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "backslashreplace"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd

    def flush(self) -> None:
        pass

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.write_bytes(text.encode("utf-8", "backslashreplace"))
        return len(text)

    def write_bytes(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view.nbytes:
                view = view[os.write(self._fd, view):]
        except OSError:
            return  # e.g. EFBIG past the file-size limit: output is dropped, the task goes on
        self._written += len(data)
        if self._written > self._cap:
            self._written = 0
            self.compact()

    def compact(self) -> None:
        size = os.fstat(self._fd).st_size
        if size > self._cap:
            tail = os.pread(self._fd, self._keep, size - self._keep)
            os.ftruncate(self._fd, 0)  # the fd is O_APPEND: the next write lands at 0
            os.write(self._fd, tail)

    def take_tail(self) -> str:
        """The task's output tail; empties the file for the next task (one lseek when silent:
        the file is opened O_APPEND, so its offset does not matter, and lseek is the cheapest
        way to learn its size)."""
        self._written = 0
        size = os.lseek(self._fd, 0, os.SEEK_END)
        if not size:
            return ""
        start = max(0, size - self._keep)
        tail = os.pread(self._fd, size - start, start).decode("utf-8", "replace")
        os.ftruncate(self._fd, 0)
        return tail


class _BinaryCapture(io.RawIOBase):
    """``sys.stdout.buffer`` for code that writes bytes."""

    def __init__(self, text: CaptureStream) -> None:
        super().__init__()
        self._text = text

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._text.fileno()

    def write(self, data: Any) -> int:
        data = bytes(data)
        self._text.write_bytes(data)
        return len(data)


def _vm_data_bytes() -> int:
    with open("/proc/self/status", "rb") as handle:
        for line in handle:
            if line.startswith(b"VmData:"):
                return int(line.split()[1]) * 1024
    raise OSError("VmData missing from /proc/self/status")


class Worker:
    """State of one worker process (created after fork or spawn, in that process)."""

    def __init__(self, sock: socket.socket, config: Dict[str, Any]) -> None:
        self.sock = sock
        self.workdir: str = config["workdir"]
        self.capture_limit: int = config["capture_limit"]
        self.memory_limit: Optional[int] = config["memory_limit"]
        self.file_size_limit: Optional[int] = config["file_size_limit"]
        self.parent_pid: int = config["parent_pid"]
        self.mode: str = config["mode"]
        self.functions: Dict[str, Callable[..., Any]] = {}
        self.started = 0
        self._progress: Optional[ProgressPage] = None
        self.data_limit: Optional[int] = None
        self._clear_refs: Optional[int] = None
        self._workdir_ino = self._workdir_dev = -1
        self._fflush: Optional[Callable[[Any], int]] = None
        #: what :func:`sandbox.confine.confine_self` did (None: confinement not asked for)
        self.confined: Optional[Dict[str, Any]] = config.get("confined")

    # --- set-up -----------------------------------------------------------------------------

    def setup(self) -> None:
        os.setpgid(0, 0)  # own process group: the pool can kill whatever the task spawned
        self._die_with_parent()
        for sig in (signal.SIGINT, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_IGN)  # Ctrl-C is the pool's business; EFBIG, not death
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)

        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        sys.stdin = open(0, "r", closefd=False)
        flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
        for fd, name in ((1, STDOUT_FILE), (2, STDERR_FILE)):
            handle = os.open(os.path.join(self.workdir, name), flags, 0o600)
            os.dup2(handle, fd)
            os.close(handle)
        cap = max(1 << 20, 4 * self.capture_limit)
        self.stdout = CaptureStream(1, cap, self.capture_limit)
        self.stderr = CaptureStream(2, cap, self.capture_limit)
        sys.stdout, sys.stderr = self.stdout, self.stderr
        faulthandler.enable(file=self.stderr, all_threads=True)
        faulthandler.register(signal.SIGUSR1, file=self.stderr, all_threads=True)

        self._progress = ProgressPage(os.path.join(self.workdir, PROGRESS_FILE))
        global _PAGE
        _PAGE = self._progress
        os.chdir(self.workdir)
        os.utime(self.workdir, ns=(0, 0))  # see _clean_workdir
        info = os.stat(self.workdir)
        self._workdir_ino, self._workdir_dev = info.st_ino, info.st_dev
        os.environ["TMPDIR"] = self.workdir
        tempfile.tempdir = self.workdir
        if self.confined is not None and self.confined["abi"]:
            sys.dont_write_bytecode = True  # __pycache__ folders outside are not writable now
        try:
            self._clear_refs = os.open("/proc/self/clear_refs", os.O_WRONLY)
        except OSError:
            self._clear_refs = None  # then max_rss is the worker's peak, not the task's
        try:
            self._fflush = ctypes.CDLL(None).fflush
        except (OSError, AttributeError):
            self._fflush = None

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_size_limit, self.file_size_limit))
        if self.memory_limit is not None:
            # RLIMIT_DATA counts private writable memory (heap and anonymous mmap), not address
            # space reservations: RLIMIT_AS breaks JAX/XLA, which reserve large ranges at start.
            self.data_limit = _vm_data_bytes() + self.memory_limit
            resource.setrlimit(resource.RLIMIT_DATA, (self.data_limit, self.data_limit))

    def _die_with_parent(self) -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            libc.prctl(_PR_SET_NAME, b"sbx-worker", 0, 0, 0)  # for ps/top: forks keep the zygote's command line
        except (OSError, AttributeError):
            return
        if os.getppid() != self.parent_pid:  # the zygote died before prctl took effect
            os._exit(70)

    # --- the loop ---------------------------------------------------------------------------

    def serve(self) -> None:
        channel.send_packets(self.sock, [codec.encode_packet(
            ["hello", os.getpid(), self.data_limit, self.mode, self.confined])])
        while True:
            length = channel.recv_length(self.sock)
            if length is None:
                return  # the pool closed our socket: retire
            try:
                body = channel.recv_body(self.sock, length)
            except MemoryError:
                channel.discard(self.sock, length)
                channel.send_packets(self.sock, [codec.encode_packet(["frame_oom", length])])
                continue
            packets = channel.parse_frame(body)
            if not packets:
                return  # an empty frame: the pool retires this worker
            results = codec.PacketGroup()
            flushed = _monotonic()
            run_packet, progress = self.run_packet, self._progress
            for header, buffers in packets:
                # publish "one more task started, at now" on the progress page (time first)
                now = _monotonic()
                self.started += 1
                if progress is not None:
                    progress.publish(self.started, now, time.process_time())
                run_packet(header, buffers, results)
                if len(results) >= RESULT_BATCH or _monotonic() - flushed >= RESULT_DELAY:
                    channel.send_packets(self.sock, [results.packet()])
                    results = codec.PacketGroup()
                    flushed = _monotonic()
            if len(results):
                channel.send_packets(self.sock, [results.packet()])
            del body, packets, results

    # --- one task ---------------------------------------------------------------------------

    def run_packet(self, header: memoryview, buffers: List[memoryview], results: codec.PacketGroup) -> None:
        """Decode, run and encode one task; adds its result message (:data:`~sandbox.protocol.RESULT_FIELDS`) to ``results``."""
        if self._clear_refs is not None:
            os.write(self._clear_refs, b"5")  # reset the peak-RSS counter for this task
        value: Any = None
        error_type = error_message = trace = failed_step = None
        start = _perf_counter()
        try:
            tid, steps, convert, convert_kwargs = codec.decode_packet(header, buffers)
        except DecodeError as exc:
            tid = None
            status = _UNSERIALIZABLE
            error_type = "sandbox.errors.DecodeError"
            error_message = f"the worker cannot decode the task's arguments: {exc}"
        else:
            start = _perf_counter()
            try:
                value = self.execute(steps, convert, convert_kwargs or {})
                status = _OK
            except _StepError as failure:
                exc = failure.exc
                error_type = _type_name(type(exc))
                text = _safe_str(exc)
                _clear_frames(exc)  # drop the task's locals first: after a MemoryError they hold the memory
                status = classify.exception_status(exc, error_type, text).value
                error_message = bounded(text, _MESSAGE_LIMIT)
                trace = _format_traceback(exc, 4 * self.capture_limit)
                failed_step = failure.step
                del failure, exc
        duration = _perf_counter() - start
        if self._fflush is not None:
            self._fflush(None)  # C stdio buffers, so C-level output lands in this task's capture
        rss = _getrusage(_RUSAGE_SELF).ru_maxrss * 1024
        stdout, stderr = self.stdout.take_tail(), self.stderr.take_tail()
        self._clean_workdir()
        # TENSORS_SEEN comes last: it encodes as the tensors the value held, converted just before
        message = ["r", tid, status, value, error_type, error_message, trace, failed_step, stdout, stderr,
                   duration, rss, codec.TENSORS_SEEN]
        try:
            results.add(message, tensors=True, where="result")
        except Exception as exc:  # EncodeError, or a tensor conversion failing in library code
            message[2] = _UNSERIALIZABLE
            message[3] = None
            message[4] = _type_name(type(exc))
            located = codec.locate_unencodable(value, "value", tensors=True) if isinstance(exc, EncodeError) else None
            message[5] = bounded(located or _safe_str(exc), _MESSAGE_LIMIT)
            results.add(message, tensors=True, where="result")

    def execute(self, steps: List[list], convert: Optional[str], convert_kwargs: Dict[str, Any]) -> Any:
        """Run the steps; raises :class:`_StepError` carrying the failing step's index."""
        results: List[Any] = []
        converter = None
        step = 0
        try:
            if convert is not None:
                converter = self.resolve(convert)
            for step, (fn, args, kwargs) in enumerate(steps):
                if converter is not None or step:
                    args = _prepare(args, results, converter, convert_kwargs)
                    if kwargs:
                        kwargs = _prepare(kwargs, results, converter, convert_kwargs)
                if fn[0] == ".":
                    target = getattr(args[0], fn[1:])
                    args = args[1:]
                else:
                    target = self.resolve(fn)
                results.append(target(*args, **kwargs))
        except BaseException as exc:  # the task's own SystemExit/KeyboardInterrupt included
            raise _StepError(step, exc) from None
        return results[-1]

    def resolve(self, ref: str) -> Callable[..., Any]:
        """``"module:qualname"`` -> the object (cached per worker)."""
        found = self.functions.get(ref)
        if found is None:
            module_name, _, qualname = ref.partition(":")
            try:
                found = importlib.import_module(module_name)
            except ImportError as exc:
                raise ResolveError(f"cannot resolve {ref!r}: {exc}") from None
            for part in qualname.split("."):
                try:
                    found = getattr(found, part)
                except AttributeError as exc:
                    raise ResolveError(f"cannot resolve {ref!r}: {exc}") from None
            if not callable(found):
                raise ResolveError(f"cannot resolve {ref!r}: {type(found).__name__} object is not callable")
            self.functions[ref] = found
        return found

    def _clean_workdir(self) -> None:
        """Remove what the task left in the directory (a task may also have moved elsewhere).

        The directory's mtime is pinned to 0 after each clean-up, so any entry created or
        removed since shows as a non-zero mtime: one stat per task instead of a listing.
        """
        here = os.stat(".")  # one call tells both: still in the directory, and nothing new in it
        if here.st_ino == self._workdir_ino and here.st_dev == self._workdir_dev and here.st_mtime_ns == 0:
            return
        os.chdir(self.workdir)
        with os.scandir(self.workdir) as entries:
            leftovers = [e for e in entries if e.name not in _KEEP_FILES]
        for entry in leftovers:
            try:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass
        os.utime(self.workdir, ns=(0, 0))


class _StepError(Exception):
    def __init__(self, step: int, exc: BaseException) -> None:
        super().__init__(step)
        self.step = step
        self.exc = exc


def _prepare(value: Any, results: List[Any], converter: Optional[Callable[..., Any]], kwargs: Dict[str, Any]) -> Any:
    """Replace Refs by earlier results and convert received numpy arrays."""
    t = type(value)
    if t is Ref:
        return results[value.step]
    if t is list:
        return [_prepare(v, results, converter, kwargs) for v in value]
    if t is tuple:
        return tuple(_prepare(v, results, converter, kwargs) for v in value)
    if t is dict:
        return {k: _prepare(v, results, converter, kwargs) for k, v in value.items()}
    if converter is not None and t is np.ndarray:
        return converter(value, **kwargs) if kwargs else converter(value)
    return value


def _clear_frames(exc: Optional[BaseException]) -> None:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        try:
            traceback.clear_frames(exc.__traceback__)
        except RuntimeError:
            pass  # a frame still executing (cannot happen for a finished task; harmless)
        exc = exc.__cause__ or exc.__context__


def _format_traceback(exc: BaseException, limit: int) -> str:
    try:
        lines = traceback.TracebackException(type(exc), exc, exc.__traceback__).format()
        text = "".join(bounded(line, _TRACEBACK_LINE_LIMIT) for line in lines)
    except BaseException:
        return f"<traceback unavailable for {type(exc).__name__}>"
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


def confine_worker(config: Dict[str, Any]) -> None:
    """Confine this process as the pool asked (``config["confine"]``), before its first task
    and, when spawned, before its imports; the result goes into ``config["confined"]`` and the
    hello tells the pool."""
    if config.get("confine") is not None and "confined" not in config:
        config["confined"] = confine.confine_self(config["confine"], config["workdir"])


def run_worker(sock_fd: int, config: Dict[str, Any]) -> None:
    """Entry of a worker process (after fork or spawn); never returns."""
    code = 0
    try:
        confine_worker(config)
        sock = socket.socket(fileno=sock_fd)
        sock.setblocking(True)
        worker = Worker(sock, config)
        worker.setup()
        worker.serve()
    except (EOFError, BrokenPipeError, ConnectionResetError):
        code = 0  # the pool went away
    except BaseException:  # anything else is a sandbox bug: leave a trace in stderr
        try:
            traceback.print_exc()
        finally:
            code = 71
    finally:
        os._exit(code)


def main(argv: Optional[List[str]] = None) -> None:
    """Entry of a spawned worker: ``main([fd, config-json])`` (started by the zygote in spawn mode)."""
    args = sys.argv[1:] if argv is None else argv
    sock_fd, config = int(args[0]), json.loads(args[1])
    sys.path[:0] = [p for p in config.get("sys_path", []) if p not in sys.path]
    confine_worker(config)  # before the imports: Landlock leaves threads that exist already alone
    preload_modules(config.get("preload", []))
    run_warmups(config.get("warmup", []))
    run_worker(sock_fd, config)

