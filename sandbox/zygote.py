"""The zygote: imports a preload set once, runs no op, and starts workers on request.

The pool starts one zygote per preload set (a fresh interpreter running :func:`main`, possibly
another interpreter) with the compute thread pools held to one thread through the environment
(:data:`sandbox.preload.THREAD_ENV`). The zygote imports the modules, applies the few single-thread settings
that exist only as API calls (TensorFlow's), and then only waits on its control socket.
Forking a process that imported these libraries but ran nothing is safe; forking one with more
than one thread is not (a lock held by another thread stays locked forever in the child), so
the zygote counts its threads before every fork and, if there is more than one, switches to
*spawn* mode: it starts a fresh interpreter running :func:`sandbox.worker.main`, which imports the set itself (seconds
instead of milliseconds), and tells the pool.

With confinement on, the zygote first moves itself into a network namespace of its own where the
kernel allows it (:func:`sandbox.confine.enter_network_namespace`): its workers inherit it.

The zygote reaps its workers and reports each exit (wait status, peak RSS) to the pool, which
uses it to classify deaths. It never initialises CUDA: importing torch, TensorFlow or JAX
does not, and nothing else runs here.

Runs under other interpreters too: Python 3.9 syntax.
"""
from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import sys
import time
import traceback
from typing import Any, Dict, List, Optional

from . import channel, confine
from .preload import preload_modules, run_warmups
from .protocol import ENTRY


def thread_count() -> int:
    """Threads of this process (Linux)."""
    return len(os.listdir("/proc/self/task"))


_MADV_COLLAPSE = 25  # Linux 6.1+
_HUGE_PAGE = 2 << 20


def collapse_to_huge_pages() -> int:
    """Back the zygote's private anonymous memory with transparent huge pages where the kernel
    agrees (``madvise(MADV_COLLAPSE)``); returns the bytes collapsed (0 where unsupported).

    Why: importing torch leaves ~150 MB of anonymous memory (mostly heap). Every fork copies
    one page-table entry per 4 KiB page of it, and every worker exit tears those down again:
    measured here, 3.3 ms per fork and 4.5 ms per exit with torch preloaded, against 0.9 ms and
    2.0 ms once the memory sits in 2 MiB pages. A worker's writes still copy only 4 KiB pages
    (the kernel splits a shared huge page's mapping on the first write), and the collapse runs
    no library code: it is memory advice, safe before forking. Best effort: any failure leaves
    the memory as it was.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        madvise.restype = ctypes.c_int
        with open("/proc/self/maps") as handle:
            regions = handle.read().splitlines()
    except (OSError, AttributeError):
        return 0
    collapsed = 0
    for line in regions:
        fields = line.split()
        if len(fields) < 5 or not fields[1].startswith("rw") or fields[1][3] != "p":
            continue
        if len(fields) > 5 and fields[5] != "[heap]":
            continue  # file mappings, the stack, vdso and the like
        low, high = (int(x, 16) for x in fields[0].split("-"))
        low = (low + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1)
        high &= ~(_HUGE_PAGE - 1)
        if high > low and madvise(low, high - low, _MADV_COLLAPSE) == 0:
            collapsed += high - low
    return collapsed


class Zygote:
    """The zygote's control loop (in the zygote process)."""

    def __init__(self, ctrl: socket.socket, config: Dict[str, Any]) -> None:
        self.ctrl = ctrl
        self.config = config
        self.mode = "fork"
        self.reason = ""
        self.children: Dict[int, int] = {}  # pid -> worker id
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        os.set_blocking(self._wake_r, False)

    def start(self) -> None:
        start = time.perf_counter()
        try:
            if self.config.get("nice"):
                os.nice(int(self.config["nice"]))  # inherited by every worker it starts
            versions = preload_modules(self.config["preload"])
            run_warmups(self.config.get("warmup", []))
        except BaseException as exc:
            channel.send_control(self.ctrl, {
                "t": "error", "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc()[-8192:],
            })
            os._exit(1)
        import_s = time.perf_counter() - start
        # Move everything imported so far out of the collector's reach: a collection in a
        # worker would otherwise write to every object header and un-share those pages.
        gc.collect()
        gc.freeze()
        huge_pages_bytes = collapse_to_huge_pages()
        threads = thread_count()
        method = self.config["start_method"]
        if method == "spawn":
            self.mode, self.reason = "spawn", "start_method='spawn'"
        elif threads > 1:
            if method == "fork":
                channel.send_control(self.ctrl, {
                    "t": "error", "error": f"cannot fork safely: the zygote has {threads} threads after its imports",
                    "traceback": "",
                })
                os._exit(1)
            self.mode, self.reason = "spawn", f"{threads} threads after the imports"
        channel.send_control(self.ctrl, {
            "t": "ready", "pid": os.getpid(), "mode": self.mode, "reason": self.reason,
            "threads": threads, "import_s": import_s, "versions": versions, "huge_pages_bytes": huge_pages_bytes,
            "python": sys.executable, "python_version": sys.version.split()[0],
            "netns": self.config.get("netns_result"),
        })

    def loop(self) -> None:
        signal.signal(signal.SIGCHLD, lambda *_: None)  # the wakeup fd does the work
        signal.set_wakeup_fd(self._wake_w)
        while True:
            readable, _, _ = select.select([self.ctrl, self._wake_r], [], [])
            if self._wake_r in readable:
                try:
                    os.read(self._wake_r, 4096)
                except BlockingIOError:
                    pass
                self.reap()
            if self.ctrl in readable:
                while True:
                    try:
                        received = channel.recv_control(self.ctrl, block=False)
                    except EOFError:
                        self.shutdown()
                        return
                    if received is None:
                        break
                    message, fds = received
                    if message["t"] == "spawn":
                        self.spawn(message["wid"], fds[0], message["config"])
                    elif message["t"] == "quit":
                        self.shutdown()
                        return

    def spawn(self, wid: int, sock_fd: int, config: Dict[str, Any]) -> None:
        if self.mode == "fork":
            threads = thread_count()
            if threads > 1:
                self.mode, self.reason = "spawn", f"{threads} threads before a fork"
                channel.send_control(self.ctrl, {"t": "mode", "mode": self.mode, "reason": self.reason})
        config = dict(config, parent_pid=os.getpid(), mode=self.mode)
        try:
            if self.mode == "fork":
                pid = os.fork()
                if pid == 0:
                    self._become_worker(sock_fd, config)
            else:
                pid = self._spawn_worker(sock_fd, config)
        except OSError as exc:
            os.close(sock_fd)
            channel.send_control(self.ctrl, {"t": "spawn_failed", "wid": wid, "error": str(exc)})
            return
        os.close(sock_fd)
        self.children[pid] = wid
        channel.send_control(self.ctrl, {"t": "spawned", "wid": wid, "pid": pid, "mode": self.mode})

    def _become_worker(self, sock_fd: int, config: Dict[str, Any]) -> None:
        """In the forked child: drop the zygote's state and run the worker (never returns)."""
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            self.ctrl.close()
            os.close(self._wake_r)
            os.close(self._wake_w)
            from .worker import run_worker

            run_worker(sock_fd, config)
        finally:
            os._exit(72)

    def _spawn_worker(self, sock_fd: int, config: Dict[str, Any]) -> int:
        config = dict(config, preload=self.config["preload"], warmup=self.config.get("warmup", []),
                      sys_path=self.config.get("sys_path") or [])
        os.set_inheritable(sock_fd, True)
        argv = [sys.executable, "-c", ENTRY.format(module="sandbox.worker"), str(sock_fd), json.dumps(config)]
        return os.posix_spawn(sys.executable, argv, os.environ)

    def reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            wid = self.children.pop(pid, None)
            if wid is not None:
                channel.send_control(self.ctrl, {
                    "t": "exited", "wid": wid, "pid": pid, "status": status,
                    "maxrss": usage.ru_maxrss * 1024, "cpu_s": usage.ru_utime + usage.ru_stime,
                })

    def shutdown(self) -> None:
        """Stop: idle workers exit on their own when the pool closes their sockets; kill the rest."""
        deadline = time.monotonic() + 1.0
        while self.children and time.monotonic() < deadline:
            self.reap()
            if self.children:
                time.sleep(0.01)  # only while shutting down: at most a second
        for pid in list(self.children):
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        deadline = time.monotonic() + 5.0
        while self.children and time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            self.children.pop(pid, None)


def main(argv: Optional[List[str]] = None) -> None:
    """Entry of the zygote: ``main([control-fd, config-json])`` (started by the pool)."""
    args = sys.argv[1:] if argv is None else argv
    ctrl = socket.socket(fileno=int(args[0]))
    config = json.loads(args[1])
    sys.path[:0] = [p for p in config.get("sys_path") or [] if p not in sys.path]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        ctypes.CDLL(None).prctl(15, b"sbx-zygote", 0, 0, 0)  # PR_SET_NAME, for ps/top
    except (OSError, AttributeError):
        pass
    if config.get("netns"):
        # before any import (one thread); the workers forked or spawned from here inherit it
        done, how = confine.enter_network_namespace()
        config["netns_result"] = {"done": done, "how": how}
    confine._syscall()  # load libc's binding once, before the forks
    zygote = Zygote(ctrl, config)
    zygote.start()
    try:
        zygote.loop()
    except (BrokenPipeError, ConnectionResetError):
        zygote.shutdown()
    os._exit(0)

