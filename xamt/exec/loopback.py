"""A Ray cluster of several nodes on this machine, joined at 127.0.0.1 (``ray start --head``, then
``ray start --address``): what the tests and ``bench/ray_bench.py`` run ``--ray`` against, and a way
to try a cluster without a second machine.

Every process of the cluster lives below one temporary folder, so :meth:`LoopbackCluster.stop`
ends exactly those (``ray stop`` would end every Ray process of the machine). Nodes authenticate
with a token of this cluster's own (``RAY_AUTH_MODE=token``); :attr:`LoopbackCluster.env` is the
environment a driver needs to join it.
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from xamt.errors import XamtError

__all__ = ["LoopbackCluster"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackCluster:
    """``with LoopbackCluster(nodes=2, cpus=1) as c: ... c.address ...``"""

    def __init__(self, nodes: int = 2, cpus: int = 1, *, timeout: float = 120.0):
        if nodes < 1 or cpus < 1:
            raise XamtError("a loopback cluster needs at least one node with one CPU")
        self.nodes, self.cpus, self.timeout = nodes, cpus, timeout
        # short: Ray's unix socket paths live below it (at most 107 characters)
        self.root = tempfile.mkdtemp(prefix="xr", dir="/tmp" if os.path.isdir("/tmp") else None)
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32),
                        RAY_USAGE_STATS_ENABLED="0", RAY_ADDRESS=self.address,
                        RAY_worker_niceness="0")
        self.raylets: list[int] = []  # process ids, node by node (the head's first)

    def _ray(self, *args: str) -> None:
        ray_cli = str(Path(sys.executable).with_name("ray"))
        cmd = [ray_cli if os.path.exists(ray_cli) else "ray", "start", *args,
               "--node-ip-address", "127.0.0.1", "--num-cpus", str(self.cpus), "--disable-usage-stats"]
        before = set(self._raylet_pids())
        proc = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=self.timeout)
        if proc.returncode != 0:
            raise XamtError(f"`{' '.join(cmd)}` failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        new = sorted(set(self._raylet_pids()) - before)
        if len(new) != 1:
            raise XamtError(f"`ray start` left {len(new)} new raylet(s), expected one")
        self.raylets.append(new[0])

    def start(self) -> "LoopbackCluster":
        """Start the head node, then join the others to it."""
        try:
            self._ray("--head", "--port", str(self.port), "--temp-dir", self.root,
                      "--include-dashboard", "false", "--ray-client-server-port", str(_free_port()))
            for _ in range(self.nodes - 1):
                self._ray("--address", self.address)
        except BaseException:
            self.stop()
            raise
        return self

    def _processes(self) -> list[Any]:
        import psutil

        # a process of this cluster names its folder or carries its token (Ray's client server
        # does only the latter)
        token = self.env["RAY_AUTH_TOKEN"]
        out = []
        for p in psutil.process_iter(["pid", "cmdline"]):
            try:
                if p.pid == os.getpid():
                    continue
                if any(self.root in part for part in (p.info["cmdline"] or ())) or \
                        p.environ().get("RAY_AUTH_TOKEN") == token:
                    out.append(p)
            except (psutil.Error, TypeError):
                continue
        return out

    def _raylet_pids(self) -> list[int]:
        return [p.pid for p in self._processes() if any(a.endswith("/raylet") for a in (p.info["cmdline"] or ())[:1])]

    def kill_node(self, index: int) -> int:
        """SIGKILL node ``index``'s raylet (its workers and actors then die); its process id."""
        pid = self.raylets[index]
        os.kill(pid, signal.SIGKILL)
        return pid

    def stop(self) -> None:
        """End every process of this cluster (and their children), then remove its folder."""
        import psutil

        procs = self._processes()
        family = list(procs)
        for p in procs:
            try:
                family += p.children(recursive=True)
            except psutil.Error:
                pass
        for p in family:
            try:
                p.send_signal(signal.SIGTERM)
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(family, timeout=5)
        for p in alive:
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=5)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "LoopbackCluster":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def wait_until(predicate: Any, timeout: float, step: float = 0.5) -> bool:
    """Poll ``predicate()`` until it holds or ``timeout`` seconds pass."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())
