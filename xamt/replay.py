"""Replaying reproducers without paying the libraries' import each time.

Every finding is filed only after its script ran standalone, in a process that ran nothing
before (:func:`xamt.repro.verify` starts a fresh interpreter, which imports numpy, torch,
TensorFlow and JAX again: about 7 s here). :class:`ReplayServer` starts one interpreter ahead of
need that imports the campaign's libraries and runs nothing (``xamt/replay_server.py``); each
replay is a fork of it that runs the script as ``python script`` would. The verdict is the same
function's (:func:`xamt.repro.judge_replay`). Where forking is not safe (the server has more than
one thread) or the server is gone, a replay falls back to a fresh interpreter, and says so in
:attr:`ReplayServer.stats`.
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from xamt import repro
from xamt.log import get_logger

__all__ = ["ReplayServer"]

_log = get_logger("replay")
_SERVER = Path(__file__).with_name("replay_server.py")


class ReplayServer:
    """Forks of an import-only interpreter as fresh processes for reproducers.

    Args:
        preload: modules the server imports before it serves (the libraries of the campaign).
        env: extra environment (on top of :func:`xamt.repro.replay_env`).
        startup_timeout: seconds the imports may take before replays fall back.
        memory_limit: bytes a replay may allocate beyond the interpreter's size (None: no limit).
            A reproducer runs outside the sandbox; without a limit, one that allocates without
            bound takes the machine's memory.
    """

    def __init__(self, preload: Sequence[str], env: Mapping[str, str] | None = None, *,
                 startup_timeout: float = 300.0, memory_limit: int | None = 8 << 30):
        self.preload = tuple(dict.fromkeys(preload))
        self.env = repro.replay_env(env)
        self.startup_timeout = float(startup_timeout)
        self.memory_limit = memory_limit
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._ready = False
        self._dir = tempfile.mkdtemp(prefix="xamt-replay-")
        self.stats = {"forked": 0, "fresh": 0, "starts": 0}
        self._start()

    def _start(self) -> None:
        self.stats["starts"] += 1
        self._ready = False
        self._proc = subprocess.Popen(
            [sys.executable, str(_SERVER), ",".join(self.preload)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env, cwd=self._dir,
            text=True, bufsize=1)

    def _readline(self, timeout: float) -> dict[str, Any] | None:
        proc = self._proc
        if proc is None or proc.stdout is None:
            return None
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, timeout))
        if not ready:
            return None
        line = proc.stdout.readline()
        return json.loads(line) if line else None

    def _alive(self) -> bool:
        """Whether a ready server is there (started again when it died)."""
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        if not self._ready:
            hello = self._readline(self.startup_timeout)
            if not hello or not hello.get("ready"):
                _log.warning("the replay interpreter did not start; replays use fresh interpreters")
                self._kill()
                return False
            self._ready = True
        return True

    def verify(self, script: str | Path, *, expect: str, timeout: float = 120.0,
               env: Mapping[str, str] | None = None, crash_signal: int | None = None,
               python: str | None = None) -> repro.VerifyResult:
        """:func:`xamt.repro.verify`, run in a fork of the import-only interpreter."""
        script = Path(script).resolve()
        if env or python:  # an environment or interpreter of its own needs a process of its own
            self.stats["fresh"] += 1
            return repro.verify(script, expect=expect, timeout=timeout, env=env, crash_signal=crash_signal,
                                python=python, memory_limit=self.memory_limit)
        with self._lock:
            start = time.monotonic()
            reply = None
            out_path, err_path = os.path.join(self._dir, "stdout"), os.path.join(self._dir, "stderr")
            if self._alive():
                try:
                    assert self._proc is not None and self._proc.stdin is not None
                    self._proc.stdin.write(json.dumps({"script": str(script), "stdout": out_path,
                                                       "stderr": err_path, "timeout": timeout,
                                                       "memory_limit": self.memory_limit}) + "\n")
                    self._proc.stdin.flush()
                    reply = self._readline(timeout + 30.0)
                except (OSError, ValueError):
                    reply = None
                if reply is None:
                    self._kill()  # hung or dead: the next replay starts a new one
            if reply is None or not reply.get("fork"):
                if reply is not None:
                    _log.info("replay falls back to a fresh interpreter: %s", reply.get("why"))
                self.stats["fresh"] += 1
                return repro.verify(script, expect=expect, timeout=timeout, crash_signal=crash_signal,
                                    memory_limit=self.memory_limit)
            self.stats["forked"] += 1
            stdout, stderr = _read(out_path), _read(err_path)
            return repro.judge_replay(expect, reply["rc"], bool(reply["timed_out"]), stdout, stderr,
                                      time.monotonic() - start, crash_signal)

    def _kill(self) -> None:
        proc, self._proc, self._ready = self._proc, None, False
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def close(self) -> None:
        """Stop the server and remove its folder."""
        import shutil

        with self._lock:
            proc = self._proc
            if proc is not None and proc.stdin is not None:
                try:
                    proc.stdin.close()
                    proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._kill()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> "ReplayServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""
