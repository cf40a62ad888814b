"""The pool's side of the zygote: start it and wait until it has imported the preload set, read
its reports (workers spawned, exited or failed to start; a switch to spawn mode), restart it
when it dies, and stop it.
"""
from __future__ import annotations

import json
import logging
import os
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional

from . import channel
from .errors import ZygoteError
from .preload import THREAD_ENV
from .protocol import ENTRY, read_tail

__all__ = ["ZygoteClient"]

log = logging.getLogger("sandbox.pool")

#: directory that holds the ``sandbox`` package (put on the zygote's PYTHONPATH)
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
_ZYGOTE_RESTARTS = 2


class ZygoteClient:
    """Zygote management of :class:`~sandbox.pool.SandboxPool` (a mixin).

    Uses the pool's settings (``python``, ``preload``, ``start_method``, ``memory_limit``,
    ``_env``, ``_startup_timeout``, ``confine``), its ``_root`` folder, ``_selector``, ``_workers``
    and failure state, and its ``_finalize``, ``_requeue``, ``_hard_kill``, ``_start_failed``
    and ``_confinement_ready``.
    Sets ``info``, ``_zygote_proc`` and ``_ctrl``.
    """

    info: Dict[str, Any]
    _zygote_proc: Optional[subprocess.Popen]
    _ctrl: Optional[socket.socket]
    _selector: selectors.BaseSelector

    def _start_zygote(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ)
        env.update(THREAD_ENV)
        env.update(self._env)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
        # not realpath: a venv's python is a symlink to its base interpreter, yet another environment
        same_python = os.path.abspath(self.python) == os.path.abspath(sys.executable)
        # The same interpreter gets our sys.path, so what imports here imports in workers.
        sys_path = [os.path.abspath(p or os.curdir) for p in sys.path] if same_python else []
        config = {"preload": list(self.preload), "warmup": list(self.warmup), "nice": self.nice,
                  "start_method": self.start_method, "sys_path": sys_path, "netns": self.confine}
        log_path = os.path.join(self._root, "zygote.log")
        with open(log_path, "ab") as log_file:
            try:
                self._zygote_proc = subprocess.Popen(
                    [self.python, "-c", ENTRY.format(module="sandbox.zygote"), str(child.fileno()),
                     json.dumps(config)],
                    pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file,
                    cwd=self._root, env=env, start_new_session=True,
                )
            except OSError as exc:
                parent.close()
                child.close()
                raise ZygoteError(f"cannot start {self.python}: {exc}") from None
        child.close()
        self._ctrl = parent
        ready = None
        deadline = time.monotonic() + self._startup_timeout
        try:
            while ready is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ZygoteError(f"the zygote did not import {list(self.preload)} within "
                                      f"{self._startup_timeout:.0f} s{self._zygote_log_tail()}")
                parent.settimeout(remaining)
                try:
                    received = channel.recv_control(parent)
                except socket.timeout:
                    continue
                except EOFError:
                    code = self._zygote_proc.wait(timeout=5)
                    raise ZygoteError(f"the zygote exited with status {code} before it was ready"
                                      f"{self._zygote_log_tail()}") from None
                message, fds = received  # type: ignore[misc]
                for fd in fds:
                    os.close(fd)
                if message["t"] == "error":
                    raise ZygoteError(f"the zygote failed to preload {list(self.preload)}: {message['error']}\n"
                                      f"{message['traceback']}")
                if message["t"] == "ready":
                    ready = message
        except BaseException:
            self._stop_zygote()
            raise
        parent.settimeout(None)
        self._selector.register(parent, selectors.EVENT_READ, ("zygote", None))
        ready.pop("t")
        ready["memory_mechanism"] = (
            "RLIMIT_DATA = worker data size at start + memory_limit" if self.memory_limit is not None else None
        )
        self._confinement_ready(ready)
        self.info = ready
        log.info("zygote %d ready: mode %s, %d thread(s), preload %s in %.2f s", ready["pid"], ready["mode"],
                 ready["threads"], list(self.preload), ready["import_s"])
        if ready["mode"] == "spawn":
            log.warning("workers of preload set %s will be spawned (slow): %s", list(self.preload), ready["reason"])

    def _zygote_log_tail(self) -> str:
        tail = read_tail(os.path.join(self._root, "zygote.log"), 4096).strip()
        return f"; its output ends with:\n{tail}" if tail else ""

    def _stop_zygote(self) -> None:
        if self._ctrl is not None:
            try:
                self._selector.unregister(self._ctrl)
            except (KeyError, ValueError):
                pass
            try:
                channel.send_control(self._ctrl, {"t": "quit"})
            except OSError:
                pass
            self._ctrl.close()
            self._ctrl = None
        proc = self._zygote_proc
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self._zygote_proc = None

    def _read_zygote(self) -> None:
        while self._ctrl is not None:
            try:
                received = channel.recv_control(self._ctrl, block=False)
            except EOFError:
                self._zygote_died()
                return
            if received is None:
                return
            message, fds = received
            for fd in fds:
                os.close(fd)
            kind = message["t"]
            w = self._workers.get(message.get("wid", -1))
            if kind == "spawned" and w is not None:
                w.pid = message["pid"]
                w.mode = message["mode"]
                try:
                    w.pidfd = os.pidfd_open(w.pid)
                    self._selector.register(w.pidfd, selectors.EVENT_READ, ("pidfd", w))
                except (OSError, AttributeError):
                    w.pidfd = None  # already gone (the exit report follows) or no pidfd support
            elif kind == "exited" and w is not None:
                self._finalize(w, message["status"], message["maxrss"], message.get("cpu_s"))
            elif kind == "spawn_failed" and w is not None:
                log.error("the zygote could not start a worker: %s", message["error"])
                self._last_start_error = message["error"]
                self._start_failed()
                self._finalize(w, None, None)
            elif kind == "mode":
                log.warning("preload set %s switches to %s mode: %s", list(self.preload), message["mode"],
                            message["reason"])
                self.info = dict(self.info, mode=message["mode"], reason=message["reason"])

    def _zygote_died(self) -> None:
        proc = self._zygote_proc
        code = proc.wait() if proc is not None else None
        log.error("the zygote of %s died (status %s)%s", list(self.preload), code, self._zygote_log_tail())
        if self._ctrl is not None:
            self._selector.unregister(self._ctrl)
            self._ctrl.close()
            self._ctrl = None
        self._zygote_proc = None
        # its workers die with it (PDEATHSIG); their tasks did nothing wrong
        for w in list(self._workers.values()):
            self._hard_kill(w)
            innocent = list(w.inflight)
            w.inflight.clear()
            self._requeue(innocent)
            self._finalize(w, None, None)
        if self._cancel or (self._stopping and not self._queue):
            return
        if self._zygote_restarts >= _ZYGOTE_RESTARTS:
            self._broken = f"the zygote died {self._zygote_restarts + 1} times (status {code})"
            return
        self._zygote_restarts += 1
        try:
            self._start_zygote()
        except ZygoteError as exc:
            self._broken = str(exc)
