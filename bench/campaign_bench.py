"""Campaign figures from real ``xamt fuzz`` runs (what users run, not a loop written for this).

Each run copies a built store (``--store``, a folder holding ``xamt.db`` from ``xamt groups
build``) into a fresh output folder and runs ``python -m xamt.cli fuzz`` on it as a subprocess,
sampling the machine's CPU use from ``/proc/stat`` every second. ``--runs cold,warm`` runs the
same campaign twice: first with empty compile caches, then with the caches the first run left
(its ``cache/`` folder copied in). Printed as a table and written as JSON
(``bench/results/campaign.json`` by default):

- group-iterations, executions, iterations/s; the CPU busy share (median of the samples, and
  overall); groups visited; per cross-library group the iterations (min, median, how many
  reached 100);
- compile seconds as the libraries count them (``compile_s``, by library: JAX's compile events,
  Dynamo's compile times, tf.function calls that traced), and the warm run's against the cold
  run's; the seconds of iterations in the slow lane (first calls at a new compile signature,
  whatever they spent their time on), and for the warm run those of the first calls it shared
  with the cold run (same group and compile signature) against the cold run's;
- triage seconds, findings by class and by outlier library, time to the first and the tenth
  finding;
- the campaign's process tree at its largest: the sum of its processes' PSS (shared pages
  counted once) and of their RSS, sampled every two seconds; at the PSS peak, its split by role
  and the largest processes' PSS; and the PSS total every 30 s.

Example: ``python bench/campaign_bench.py --store xamt-out --budget 20m --runs cold,warm``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields), idle


class _CpuSampler(threading.Thread):
    """Busy share of all CPUs, one sample a second."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[float] = []
        self.stop = threading.Event()
        self.first = _cpu_times()

    def run(self) -> None:
        prev = self.first
        while not self.stop.wait(1.0):
            now = _cpu_times()
            total, idle = now[0] - prev[0], now[1] - prev[1]
            if total > 0:
                self.samples.append(1.0 - idle / total)
            prev = now

    def overall(self) -> float:
        now = _cpu_times()
        total, idle = now[0] - self.first[0], now[1] - self.first[1]
        return 1.0 - idle / total if total else 0.0


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _role(pid: int, parent_role: str | None) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    if "sandbox.zygote" in cmd:  # a zygote's forks keep its command line: its workers
        return "sandbox workers" if parent_role in ("sandbox zygote", "sandbox workers") else "sandbox zygote"
    if "replay_server" in cmd:
        return "replays" if parent_role in ("replay server", "replays") else "replay server"
    return parent_role if parent_role in ("sandbox workers", "replays") else "other"


def _memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process in bytes (0, 0 when it is gone). PSS shares each page among the
    processes that map it, so the PSS of a zygote and its forked workers adds up to what they
    really hold, where their RSS counts the pages they share once per process."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, pss


class _ProcessSampler(threading.Thread):
    """CPU seconds of the campaign's processes by role (the driver, its sandbox zygotes and their
    workers, the replay server and its replays), read from ``/proc`` twice a second, and the
    memory of the whole process tree every two seconds (peak RSS and PSS sums). A process that
    lives less than half a second may be missed: the figures are a lower bound."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.stop = threading.Event()
        self.cpu: dict[int, tuple[str, float]] = {}
        self.peak_rss = self.peak_pss = 0
        self.peak_processes = 0
        self.peak_pss_by_role: dict[str, float] = {}
        self.peak_largest_gib: list[float] = []  # the largest processes' PSS at the peak
        self.pss_series: list[tuple[int, float]] = []  # (seconds, GiB) every 30 s
        self.t0 = time.monotonic()

    def run(self) -> None:
        turn = 0
        while not self.stop.wait(0.5):
            turn += 1
            parents: dict[int, int] = {}
            times: dict[int, float] = {}
            for name in os.listdir("/proc"):
                if name.isdigit():
                    st = _stat(int(name))
                    if st is not None:
                        parents[int(name)], times[int(name)] = st
            roles = {self.root: "driver"}
            pending = [self.root]
            children: dict[int, list[int]] = {}
            for pid, ppid in parents.items():
                children.setdefault(ppid, []).append(pid)
            while pending:
                pid = pending.pop()
                for child in children.get(pid, []):
                    roles[child] = _role(child, roles[pid])
                    pending.append(child)
            if turn % 4 == 0:
                sizes = {pid: _memory(pid) for pid in roles}
                pss = sum(p for _, p in sizes.values())
                self.peak_rss = max(self.peak_rss, sum(r for r, _ in sizes.values()))
                if pss > self.peak_pss:  # where the memory was at the peak, by role
                    self.peak_pss = pss
                    split: dict[str, float] = {}
                    for pid, (_, p) in sizes.items():
                        split[roles[pid]] = split.get(roles[pid], 0.0) + p
                    self.peak_pss_by_role = {r: round(b / 2**30, 2) for r, b in sorted(split.items())}
                    self.peak_largest_gib = sorted((round(p / 2**30, 2) for _, p in sizes.values()), reverse=True)[:8]
                if turn % 60 == 0:  # every 30 s: how the total grows over the campaign
                    self.pss_series.append((round(time.monotonic() - self.t0), round(pss / 2**30, 2)))
                self.peak_processes = max(self.peak_processes, len(roles))
            for pid, role in roles.items():
                if pid in times:
                    # a process keeps the role it was first seen in: an exiting one (a zombie)
                    # has no command line left to tell
                    self.cpu[pid] = (self.cpu[pid][0] if pid in self.cpu else role, times[pid])

    def by_role(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for role, seconds in self.cpu.values():
            out[role] = out.get(role, 0.0) + seconds
        return {k: round(v, 1) for k, v in sorted(out.items())}


def _figures(out: Path) -> dict:
    con = sqlite3.connect(out / "xamt.db")
    con.row_factory = sqlite3.Row
    c = con.execute("SELECT * FROM campaigns ORDER BY id DESC LIMIT 1").fetchone()
    settings = json.loads(c["settings"])
    by_class = {r["finding_class"]: r["n"] for r in con.execute(
        "SELECT finding_class, COUNT(*) AS n FROM findings WHERE campaign_id=? GROUP BY finding_class", (c["id"],))}
    by_library: dict[str, dict[str, int]] = {}
    for r in con.execute("SELECT outlier_library, finding_class, COUNT(*) AS n FROM findings "
                         "WHERE campaign_id=? GROUP BY outlier_library, finding_class", (c["id"],)):
        by_library.setdefault(r["outlier_library"], {})[r["finding_class"]] = r["n"]
    its = {r["group_key"]: r["iterations"] for r in con.execute(
        "SELECT group_key, iterations FROM group_stats WHERE campaign_id=?", (c["id"],))}
    cross = [r["key"] for r in con.execute(
        "SELECT key FROM registry WHERE state='validated' AND relation='cross_library'")]
    cross_its = sorted(its.get(k, 0) for k in cross)
    times = settings.get("finding_times_s", [])
    return {
        "campaign": c["id"], "iterations": c["iterations"], "executions": c["executions"],
        "elapsed_s": round(settings.get("elapsed_s", 0.0), 1),
        "groups": c["groups_n"], "groups_visited": len([k for k, n in its.items() if n]),
        "cross_groups": len(cross),
        "cross_iterations_min": cross_its[0] if cross_its else 0,
        "cross_iterations_median": statistics.median(cross_its) if cross_its else 0,
        "cross_groups_at_100": sum(1 for n in cross_its if n >= 100),
        "compile_s": settings.get("compile_s", 0.0),
        "compile_by_library": settings.get("compile_by_library", {}),
        "slow_lane_s": settings.get("slow_lane_s", 0.0), "triage_s": settings.get("triage_s", 0.0),
        "compiles": settings.get("compiles", []),
        "findings": sum(by_class.values()), "findings_by_class": by_class,
        "findings_by_library": dict(sorted(by_library.items())),
        "first_finding_s": times[0] if times else None,
        "tenth_finding_s": times[9] if len(times) >= 10 else None,
        "schedule": settings.get("schedule", {}),
        # where the workers' time went, as the campaign counted it, and the pool's counters
        "worker_s": settings.get("worker_s", {}), "worker_iterations": settings.get("worker_iterations", {}),
        "compile_by_role": settings.get("compile_by_role", {}),
        "costliest_groups": settings.get("costliest_groups", [])[:10], "pool": settings.get("pool", {}),
        # the APIs whose calls killed a worker (their groups ran on the isolation pool)
        "isolated": settings.get("isolated", {}),
    }


def run_one(store: Path, out: Path, budget: str, libs: str | None, workers: int, seed: int,
            cache_from: Path | None, extra: list[str]) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy2(store / "xamt.db", out / "xamt.db")
    if cache_from is not None and (cache_from / "cache").exists():
        shutil.copytree(cache_from / "cache", out / "cache", dirs_exist_ok=True)
    cmd = [sys.executable, "-m", "xamt.cli", "fuzz", "--out", str(out), "--budget", budget,
           "--workers", str(workers), "--seed", str(seed), "--no-progress", *extra]
    if libs:
        cmd += ["--libs", libs]
    sampler = _CpuSampler()
    sampler.start()
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se:
        child = subprocess.Popen(cmd, cwd=ROOT, stdout=so, stderr=se, text=True)
        roles = _ProcessSampler(child.pid)
        roles.start()
        returncode = child.wait()
        wall = time.monotonic() - start
        so.seek(0)
        se.seek(0)
        proc = subprocess.CompletedProcess(cmd, returncode, so.read(), se.read())
    roles.stop.set()
    sampler.stop.set()
    sampler.join()
    roles.join()
    if proc.returncode != 0:
        raise SystemExit(f"xamt fuzz failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    fig = _figures(out)
    fig.update(wall_s=round(wall, 1), iterations_per_s=round(fig["iterations"] / max(fig["elapsed_s"], 1e-9), 1),
               cpu_busy_median=round(statistics.median(sampler.samples), 3) if sampler.samples else None,
               cpu_busy_overall=round(sampler.overall(), 3),
               cpu_s_by_role=roles.by_role(),
               # the whole process tree at its largest (PSS: shared pages counted once)
               peak_pss_gib=round(roles.peak_pss / 2**30, 2), peak_rss_sum_gib=round(roles.peak_rss / 2**30, 2),
               peak_processes=roles.peak_processes, peak_pss_by_role_gib=roles.peak_pss_by_role,
               peak_largest_pss_gib=roles.peak_largest_gib, pss_series_gib=roles.pss_series,
               # the run's folder is a temporary one: named, not given as this machine's path
               command=_scrub(" ".join(cmd[1:]), out),
               stdout_tail=_scrub(proc.stdout[-1500:], out))
    return fig


def _scrub(text: str, out: Path) -> str:
    """``text`` without this machine's paths: the run's folder, the checkout and the interpreter's
    environment (the pool's description names its interpreters) become placeholders."""
    venv = str(Path(sys.prefix).resolve())
    for path, name in ((str(out), f"<work>/{out.name}"), (str(ROOT), "<repo>"), (venv, "<venv>")):
        text = text.replace(path, name)
    return text


def _shared_compiles(cold: dict, warm: dict) -> dict:
    first = {(k, sig): t for k, sig, t in cold["compiles"]}
    shared = [(first[(k, sig)], t) for k, sig, t in warm["compiles"] if (k, sig) in first]
    cold_s = sum(a for a, _ in shared)
    warm_s = sum(b for _, b in shared)
    return {"shared_first_calls": len(shared), "cold_s": round(cold_s, 2), "warm_s": round(warm_s, 2),
            "warm_over_cold": round(warm_s / cold_s, 3) if cold_s else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True, type=Path, help="folder with a built xamt.db")
    ap.add_argument("--budget", default="20m")
    ap.add_argument("--libs", default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", default="cold,warm", help="cold, or cold,warm")
    ap.add_argument("--work", type=Path, default=None, help="where the runs' output folders go (default: a temp folder)")
    ap.add_argument("--cache-from", type=Path, default=None,
                    help="an earlier run's output folder whose compile caches a warm run starts from "
                         "(default: the cold run of this invocation)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "campaign.json")
    ap.add_argument("extra", nargs="*", help="more `xamt fuzz` options, after --")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="xamt-campaign-bench-"))
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    results: dict = {"budget": args.budget, "libs": args.libs, "workers": args.workers, "seed": args.seed,
                     "cpus": os.cpu_count(), "runs": {}}
    prev = args.cache_from
    if prev is not None and (prev / "xamt.db").exists():
        results["runs"]["cold"] = _figures(prev)  # the earlier cold run, as its store has it
    for name in runs:
        if name not in ("cold", "warm"):
            raise SystemExit(f"unknown run {name!r}: expected cold or warm")
        print(f"running {name} campaign ({args.budget}) in {work / name} ...", flush=True)
        fig = run_one(args.store, work / name, args.budget, args.libs, args.workers, args.seed,
                      prev if name == "warm" else None, args.extra)
        results["runs"][name] = fig
        prev = work / name
    if "cold" in results["runs"] and "warm" in results["runs"]:
        cold, warm = results["runs"]["cold"], results["runs"]["warm"]
        results["warm_vs_cold_compiles"] = _shared_compiles(cold, warm)
        results["warm_over_cold_compile_s"] = {
            lib: round(warm["compile_by_library"].get(lib, 0.0) / t, 3)
            for lib, t in sorted(cold["compile_by_library"].items()) if t} | {
            "all": round(warm["compile_s"] / cold["compile_s"], 3) if cold["compile_s"] else None}
    rows = ["iterations", "iterations_per_s", "executions", "cpu_busy_median", "cpu_busy_overall",
            "groups_visited", "cross_iterations_min", "cross_iterations_median", "cross_groups_at_100",
            "compile_s", "slow_lane_s", "triage_s", "findings", "first_finding_s", "tenth_finding_s",
            "peak_pss_gib", "peak_rss_sum_gib"]
    print(f"{'figure':28}" + "".join(f"{n:>14}" for n in results["runs"]))
    for row in rows:
        print(f"{row:28}" + "".join(f"{str(r.get(row)):>14}" for r in results["runs"].values()))
    for name, r in results["runs"].items():
        print(f"{name}: findings by class {r['findings_by_class']}")
        print(f"{name}: findings by outlier library {r.get('findings_by_library')}")
    for name, r in results["runs"].items():
        print(f"{name}: compile seconds by library {r['compile_by_library']}")
        if "cpu_s_by_role" in r:  # not for a run read back from its store (--cache-from)
            print(f"{name}: CPU seconds by process role {r['cpu_s_by_role']}")
    if "warm_vs_cold_compiles" in results:
        print("compile seconds, warm over cold:", results["warm_over_cold_compile_s"])
        print("slow-lane first calls shared by both runs:", results["warm_vs_cold_compiles"])
    for r in results["runs"].values():
        r["compiles"] = len(r["compiles"])  # the list itself stays in the runs' stores
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
