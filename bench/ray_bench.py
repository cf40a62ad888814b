"""Campaigns on Ray against the local loop, from real ``xamt fuzz`` runs (what users run).

Every run copies a built store (``--store``: a folder holding ``xamt.db`` from ``xamt groups
build``) into a fresh output folder (so every run starts with empty compile caches) and runs
``python -m xamt.cli fuzz`` as a subprocess. Three parts (``--parts``), each measured in one run
of this script, so the ratios compare runs on the same machine minutes apart:

- ``local``: the local loop (``--workers 2``) against ``--ray local`` (Ray on this machine, one
  actor with a 2-worker pool): group-iterations of each and their ratio. Every second the CPU
  seconds of every process are read (``psutil``) and put in a bucket: the driver (``xamt fuzz``
  and its replay interpreter), Ray (its daemons and the actor), the sandbox (zygotes and
  workers). **Ray's overhead per group-iteration** is the driver's and Ray's CPU time per
  group-iteration on Ray less the driver's per group-iteration in the local loop, in µs.
- ``nodes``: a loopback cluster of one 1-CPU node against one of two 1-CPU nodes
  (:class:`xamt.exec.loopback.LoopbackCluster`), ``--ray ADDRESS``; the ratio of their
  group-iterations. The driver shares the machine's two cores with the nodes.
- ``kill``: two 1-CPU nodes; a third into the budget the second node's raylet gets SIGKILL.
  Recorded: the campaign's exit status and state, ``PRAGMA integrity_check``, the nodes lost,
  the iterations run again, and whether every verified finding filed before the kill is still
  in the store at the end.

Printed as a table and written as JSON (``bench/results/ray.json`` by default). Example:
``python bench/ray_bench.py --store xamt-out --budget 5m``.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from campaign_bench import _CpuSampler, _figures  # noqa: E402

from xamt.exec.loopback import LoopbackCluster  # noqa: E402
from xamt.fuzz.campaign import parse_budget  # noqa: E402


class _ProcessCpu(threading.Thread):
    """CPU seconds of every process on the machine, by bucket, read once a second (a process's
    last reading counts: one that exited keeps what it had used)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.seen: dict[tuple[int, float], list] = {}
        self.start_s: dict[tuple[int, float], float] = {}

    @staticmethod
    def bucket(cmdline: str, name: str) -> str:
        if "sandbox.zygote" in cmdline:
            return "sandbox"
        if "xamt.cli" in cmdline or "replay_server" in cmdline:
            return "driver"
        if name.startswith("ray::") or name in ("raylet", "gcs_server") or "/ray/" in cmdline:
            return "ray"
        return "other"

    def sample(self) -> None:
        import psutil

        for p in psutil.process_iter(["pid", "name", "cmdline", "create_time"]):
            try:
                key = (p.pid, p.info["create_time"])
                times = p.cpu_times()
                used = times.user + times.system
                if key not in self.seen:
                    cmd = " ".join(p.info["cmdline"] or ())
                    # a process older than the run counts only what it used during it
                    self.start_s[key] = used if p.info["create_time"] < self.t0 else 0.0
                    self.seen[key] = [self.bucket(cmd, p.info["name"] or ""), used]
                self.seen[key][1] = used
            except Exception:  # gone meanwhile
                continue

    def run(self) -> None:
        self.t0 = time.time()
        self.sample()
        while not self.stop.wait(1.0):
            self.sample()

    def totals(self) -> dict[str, float]:
        out: collections.Counter = collections.Counter()
        for key, (bucket, used) in self.seen.items():
            out[bucket] += used - self.start_s.get(key, 0.0)
        return {k: round(v, 1) for k, v in sorted(out.items())}


def _fuzz(store: Path, out: Path, budget: str, seed: int, extra: list[str], env: dict | None = None,
          during: "callable | None" = None) -> dict:
    """One ``xamt fuzz`` run; its figures (see campaign_bench) with CPU by bucket."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy2(store / "xamt.db", out / "xamt.db")
    cmd = [sys.executable, "-m", "xamt.cli", "fuzz", "--out", str(out), "--budget", budget,
           "--seed", str(seed), "--no-progress", *extra]
    cpu, busy = _ProcessCpu(), _CpuSampler()
    cpu.start()
    busy.start()
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    side = during(proc, out) if during is not None else None
    text, _ = proc.communicate()
    wall = time.monotonic() - t0
    cpu.stop.set()
    busy.stop.set()
    cpu.join()
    busy.join()
    fig = {"returncode": proc.returncode, "wall_s": round(wall, 1),
           "command": " ".join(cmd[1:]).replace(str(out), f"<work>/{out.name}"),
           "stdout_tail": text[-1500:].replace(str(out), f"<work>/{out.name}")}
    if proc.returncode != 0:
        print(text[-3000:], file=sys.stderr)
    try:
        f = _figures(out)
        for k in ("compiles", "schedule", "costliest_groups", "worker_s", "worker_iterations"):
            f.pop(k, None)
        fig.update(f)
        settings = json.loads(sqlite3.connect(out / "xamt.db").execute(
            "SELECT settings FROM campaigns ORDER BY id DESC LIMIT 1").fetchone()[0])
        fig["ray_run"] = settings.get("ray_run")
        fig["iterations_per_s"] = round(fig["iterations"] / max(fig["elapsed_s"], 1e-9), 1)
    except Exception as exc:  # no campaign in the store: the run failed before it started
        fig["error"] = f"{type(exc).__name__}: {exc}"
    fig["cpu_s"] = cpu.totals()
    fig["cpu_busy_overall"] = round(busy.overall(), 3)
    if side is not None:
        fig["during"] = side
    return fig


def part_local(store: Path, work: Path, budget: str, seed: int) -> dict:
    local = _fuzz(store, work / "local", budget, seed, ["--workers", "2"])
    ray = _fuzz(store, work / "ray-local", budget, seed, ["--workers", "2", "--ray", "local"])
    per = lambda f, keys: sum(f["cpu_s"].get(k, 0.0) for k in keys) / max(f.get("iterations", 0), 1)  # noqa: E731
    overhead_us = (per(ray, ("driver", "ray")) - per(local, ("driver",))) * 1e6
    return {"local": local, "ray_local": ray,
            "ratio": round(ray.get("iterations", 0) / max(local.get("iterations", 1), 1), 3),
            "driver_cpu_us_per_iteration_local": round(per(local, ("driver",)) * 1e6),
            "driver_and_ray_cpu_us_per_iteration_ray": round(per(ray, ("driver", "ray")) * 1e6),
            "ray_overhead_us_per_iteration": round(overhead_us)}


def part_nodes(store: Path, work: Path, budget: str, seed: int) -> dict:
    out = {}
    for nodes in (1, 2):
        with LoopbackCluster(nodes=nodes, cpus=1) as cluster:
            out[f"{nodes}_node"] = _fuzz(store, work / f"nodes-{nodes}", budget, seed,
                                         ["--ray", cluster.address], env=dict(cluster.env))
    out["ratio"] = round(out["2_node"].get("iterations", 0) / max(out["1_node"].get("iterations", 1), 1), 3)
    return out


def part_kill(store: Path, work: Path, budget: str, seed: int) -> dict:
    at = parse_budget(budget) / 3

    with LoopbackCluster(nodes=2, cpus=1) as cluster:
        def during(proc: subprocess.Popen, out: Path) -> dict:
            time.sleep(at + 30)  # the campaign's clock starts once the pools are up
            db = sqlite3.connect(out / "xamt.db")
            before = sorted(r[0] for r in db.execute("SELECT id FROM findings WHERE verified=1"))
            db.close()
            pid = cluster.kill_node(1)
            return {"killed_raylet_pid_of_node": 1, "killed_after_s": round(at + 30, 1),
                    "verified_findings_before_kill": before, "_pid": pid}

        fig = _fuzz(store, work / "kill", budget, seed, ["--ray", cluster.address], env=dict(cluster.env),
                    during=during)
    db = sqlite3.connect(work / "kill" / "xamt.db")
    after = {r[0] for r in db.execute("SELECT id FROM findings WHERE verified=1")}
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    status = db.execute("SELECT status FROM campaigns ORDER BY id DESC LIMIT 1").fetchone()[0]
    before = fig["during"].pop("verified_findings_before_kill")
    fig["during"].pop("_pid", None)
    return {"run": fig, "exit_status": fig["returncode"], "campaign_status": status,
            "integrity_check": integrity, "verified_before_kill": len(before),
            "verified_at_end": len(after), "lost_verified_findings": sorted(set(before) - after),
            "nodes_lost": (fig.get("ray_run") or {}).get("lost"),
            "iterations_run_again": (fig.get("ray_run") or {}).get("resubmitted")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True, type=Path, help="folder with a built xamt.db")
    ap.add_argument("--budget", default="5m")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", default="local,nodes,kill")
    ap.add_argument("--work", type=Path, default=None, help="where the runs' folders go (default: a temp folder)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ray.json")
    args = ap.parse_args(argv)
    if not (args.store / "xamt.db").exists():
        raise SystemExit(f"no xamt.db in {args.store}: run `xamt groups build --out {args.store}` first")
    work = args.work or Path(tempfile.mkdtemp(prefix="xamt-ray-bench-"))
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    result: dict = {"budget": args.budget, "seed": args.seed, "cpus": os.cpu_count(), "parts": {}}
    runners = {"local": part_local, "nodes": part_nodes, "kill": part_kill}
    for part in parts:
        print(f"part {part} ...", flush=True)
        result["parts"][part] = runners[part](args.store, work, args.budget, args.seed)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")  # a part at a time: a crash keeps the rest
    _print(result)
    print(f"written: {args.out}")
    return 0


def _print(result: dict) -> None:
    p = result["parts"]
    rows = []
    if "local" in p:
        x = p["local"]
        rows += [("local loop, 2 workers", x["local"]), ("--ray local, 2 workers", x["ray_local"])]
    if "nodes" in p:
        rows += [("loopback, one 1-CPU node", p["nodes"]["1_node"]), ("loopback, two 1-CPU nodes", p["nodes"]["2_node"])]
    if "kill" in p:
        rows += [("two nodes, second killed", p["kill"]["run"])]
    print(f"{'run':32} {'group-its':>10} {'/s':>8} {'findings':>9} {'busy':>6}  cpu s (driver / ray / sandbox)")
    for name, f in rows:
        c = f.get("cpu_s", {})
        print(f"{name:32} {f.get('iterations', 0):>10,} {f.get('iterations_per_s', 0):>8.1f} "
              f"{f.get('findings', 0):>9} {f.get('cpu_busy_overall', 0):>6.1%}  "
              f"{c.get('driver', 0):.0f} / {c.get('ray', 0):.0f} / {c.get('sandbox', 0):.0f}")
    if "local" in p:
        print(f"--ray local / local: {p['local']['ratio']:.3f}; Ray's overhead per group-iteration: "
              f"{p['local']['ray_overhead_us_per_iteration']} µs of CPU")
    if "nodes" in p:
        print(f"two 1-CPU nodes / one: {p['nodes']['ratio']:.3f}")
    if "kill" in p:
        k = p["kill"]
        print(f"node killed: exit {k['exit_status']}, campaign {k['campaign_status']}, integrity {k['integrity_check']}, "
              f"lost {k['nodes_lost']}, {k['iterations_run_again']} iteration(s) run again, "
              f"verified findings {k['verified_before_kill']} before / {k['verified_at_end']} at end, "
              f"lost {len(k['lost_verified_findings'])}")


if __name__ == "__main__":
    sys.exit(main())
