"""Benchmark of the sandbox: tiny-call throughput, crash recovery, and a 10,000-task mixed run.

    python bench/sandbox_bench.py [--quick]

Prints a table and writes bench/results/sandbox.json. Measured in one run, interleaved in rounds
so that load from other processes hits every method alike; figures are medians over rounds.

1. Round trips per second, and CPU time per call, for tiny calls (numpy add of 16 float32; torch add of the same arrays,
   converted with torch.from_numpy and back), 2 workers each: a direct in-process call,
   SandboxPool.run (batched; workers replaced every 1000 tasks as in the issue's example, and
   never), SandboxPool.submit with one task in flight, multiprocessing.Pool and
   ProcessPoolExecutor (map with chunksize=1: one round trip per call, the baseline of the
   target). Also ProcessPoolExecutor.map with chunksize=64, the usual way to feed it tiny calls,
   and the same batch size as SandboxPool's default: reported, with its ratio, for honesty.
2. Time from a worker's segfault to the next task's result, torch preloaded: SandboxPool forking
   from its zygote (with its default warm spare, and with none) vs. the same pool in spawn mode,
   where each replacement worker is a fresh interpreter importing numpy and torch.
3. A 10,000-task mixed run (good calls, crashes, exceptions, unserializable results, timeouts):
   every task must come back with its expected status.
4. Confinement (Landlock; every pool above has it on, the default), in the same run: tiny-call
   throughput (section 1's "SandboxPool.run" with confine=False) and crash-to-next-result
   (section 2's default pool with confine=False) on and off, interleaved; a worker's
   fork-to-ready time (spawn request to hello; a numpy pool with no spare replacing a crashed
   worker) on and off, and the time a worker spends confining itself; and the side-effect
   corpus (tests/badtasks.py SIDE_EFFECTS) under a default pool: how much of it is confined.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox import SandboxPool, Status, Task  # noqa: E402

BAD = "tests.badtasks:"
RESULTS = ROOT / "bench" / "results" / "sandbox.json"
CHUNKSIZE = 64  # SandboxPool's default batch size
PPE_CHUNKED = f"ProcessPoolExecutor, map chunksize={CHUNKSIZE}"
UNCONFINED_RUN = "SandboxPool.run, confine=False"
DEFAULT_CRASH = "fork, 1 warm spare (default)"
UNCONFINED_CRASH = "fork, 1 warm spare, confine=False"
A = np.ones(16, dtype=np.float32)
B = np.arange(16, dtype=np.float32)


# --- baselines: functions for multiprocessing workers (forked from this process) -----------------

def numpy_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.add(a, b)


def torch_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import torch  # imported once per worker (see _import_torch)

    return torch.add(torch.from_numpy(a), torch.from_numpy(b)).numpy()


def _import_torch() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)


# --- 1. throughput --------------------------------------------------------------------------------

def sandbox_task(kind: str) -> Task:
    if kind == "numpy":
        return Task("numpy:add", (A, B))
    return Task("torch:add", (A, B), convert="torch:from_numpy")


class CpuMeter:
    """CPU time used by this process and by a pool's worker processes during one measurement.

    The machine this runs on is shared, so next to calls per second (wall clock, which other
    processes' load moves) the benchmark reports CPU time per call, which they barely move.
    Workers are read from /proc/<pid>/schedstat (ns); workers that exit during the measurement
    (retired or crashed) are counted through their parent's (the zygote's) reaped-children
    time, less what they had used before the measurement began.
    """

    def __init__(self, workers: Callable[[], List[int]] = lambda: [], reaper: Optional[int] = None) -> None:
        self.workers = workers
        self.reaper = reaper

    def start(self) -> None:
        self.parent0 = _self_cpu()
        self.workers0 = {pid: t for pid in self.workers() if (t := _sched_s(pid)) is not None}
        self.reaper0 = _reaper_s(self.reaper)

    def stop(self) -> float:
        parent = _self_cpu() - self.parent0
        now = {pid: t for pid in self.workers() if (t := _sched_s(pid)) is not None}
        workers = sum(t - self.workers0.get(pid, 0.0) for pid, t in now.items())
        gone = sum(t for pid, t in self.workers0.items() if pid not in now)
        reaped = _reaper_s(self.reaper) - self.reaper0 - gone
        return parent + workers + reaped


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _sched_s(pid: int) -> Optional[float]:
    try:
        with open(f"/proc/{pid}/schedstat") as handle:
            return int(handle.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _reaper_s(pid: Optional[int]) -> float:
    """A process's own CPU time plus its reaped children's (clock ticks)."""
    if pid is None:
        return 0.0
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


Sample = Tuple[float, float]  # (calls per second, CPU seconds per call)


def measure_throughput(rounds: int, calls: int, seq_calls: int) -> Dict[str, Dict[str, List[Sample]]]:
    """(calls/s, CPU s per call) per kind and method, one sample per round."""
    samples: Dict[str, Dict[str, List[Sample]]] = {}
    for kind in ("numpy", "torch"):
        preload = ("numpy",) if kind == "numpy" else ("numpy", "torch")
        fn: Callable = numpy_add if kind == "numpy" else torch_add
        init = None if kind == "numpy" else _import_torch
        ctx = multiprocessing.get_context("fork")  # this process has imported numpy only
        with SandboxPool(preload=preload, workers=2, timeout=10.0, memory_limit=2 << 30,
                         max_tasks_per_worker=1000) as pool, \
                SandboxPool(preload=preload, workers=2, timeout=10.0, memory_limit=2 << 30,
                            max_tasks_per_worker=None) as forever, \
                SandboxPool(preload=preload, workers=2, timeout=10.0, memory_limit=2 << 30,
                            max_tasks_per_worker=1000, confine=False) as unconfined, \
                ctx.Pool(2, initializer=init) as mp_pool, \
                concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx, initializer=init) as executor:
            # warm-up: workers started, libraries' first calls done
            assert all(o.ok for o in pool.run([sandbox_task(kind) for _ in range(500)]))
            assert all(o.ok for o in forever.run([sandbox_task(kind) for _ in range(500)]))
            assert all(o.ok for o in unconfined.run([sandbox_task(kind) for _ in range(500)]))
            mp_pool.starmap(fn, [(A, B)] * 200, chunksize=1)
            list(executor.map(fn, [A] * 200, [B] * 200, chunksize=1))
            sandbox = CpuMeter(pool.worker_pids, pool.info["pid"])
            sandbox_forever = CpuMeter(forever.worker_pids, forever.info["pid"])
            sandbox_unconfined = CpuMeter(unconfined.worker_pids, unconfined.info["pid"])
            # (private attributes: the standard pools offer no public list of their processes)
            mp_meter = CpuMeter(lambda: [p.pid for p in mp_pool._pool])  # type: ignore[attr-defined]
            ppe_meter = CpuMeter(lambda: list(executor._processes))      # type: ignore[attr-defined]
            methods: Dict[str, Tuple[int, CpuMeter, Callable[[], object]]] = {
                "SandboxPool.run": (calls, sandbox, lambda: _check(pool.run([sandbox_task(kind) for _ in range(calls)]))),
                "SandboxPool.run, workers never replaced": (calls, sandbox_forever, lambda: _check(
                    forever.run([sandbox_task(kind) for _ in range(calls)]))),
                UNCONFINED_RUN: (calls, sandbox_unconfined, lambda: _check(
                    unconfined.run([sandbox_task(kind) for _ in range(calls)]))),
                "SandboxPool.submit (1 in flight)": (seq_calls, sandbox, lambda: [
                    pool.submit(sandbox_task(kind)).result() for _ in range(seq_calls)]),
                "multiprocessing.Pool": (calls, mp_meter, lambda: mp_pool.starmap(fn, [(A, B)] * calls, chunksize=1)),
                "ProcessPoolExecutor": (calls, ppe_meter, lambda: list(executor.map(fn, [A] * calls, [B] * calls,
                                                                                     chunksize=1))),
                PPE_CHUNKED: (calls, ppe_meter, lambda: list(executor.map(fn, [A] * calls, [B] * calls,
                                                                          chunksize=CHUNKSIZE))),
            }
            per_kind = samples.setdefault(kind, {name: [] for name in methods})
            for r in range(rounds):
                order = list(methods)
                random.Random(r).shuffle(order)  # no method always runs right after another
                for name in order:
                    count, meter, run = methods[name]
                    per_kind[name].append(_measure(count, meter, run))
    return samples


def measure_direct(rounds: int, calls: int) -> Dict[str, List[Sample]]:
    """In-process calls, measured last: importing torch here must not precede the forks above."""
    import torch

    torch.set_num_threads(1)
    out: Dict[str, List[Sample]] = {"numpy": [], "torch": []}
    meter = CpuMeter()
    for _ in range(rounds):
        out["numpy"].append(_measure(calls, meter, lambda: [np.add(A, B) for _ in range(calls)]))
        out["torch"].append(_measure(calls, meter, lambda: [torch_add(A, B) for _ in range(calls)]))
    return out


def _measure(count: int, meter: CpuMeter, run: Callable[[], object]) -> Sample:
    meter.start()
    start = time.perf_counter()
    run()
    elapsed = time.perf_counter() - start
    return count / elapsed, meter.stop() / count


def _check(outcomes: list) -> None:
    bad = [o for o in outcomes if not o.ok]
    if bad:
        raise RuntimeError(f"{len(bad)} tiny calls failed, e.g. {bad[0]}")


# --- 2. crash to next result ----------------------------------------------------------------------

def crash_to_next(pool: SandboxPool, repeats: int) -> List[float]:
    """Seconds from a worker's segfault (its own clock reading, printed just before) to the
    result of the next task (run in the same batch, so it must go to another worker)."""
    gaps = []
    for _ in range(repeats):
        outcomes = pool.run([Task(BAD + "crash_marked"), sandbox_task("torch")])
        done = time.monotonic()
        crash, nxt = outcomes
        assert crash.status == Status.CRASHED and nxt.ok, outcomes
        crashed_at = float(crash.stderr_tail.split("CRASH_AT ")[1].split()[0])
        gaps.append(done - crashed_at)
        pool.run([sandbox_task("torch") for _ in range(2)])  # settle: replacements started
    return gaps


def measure_crash_recovery(fork_repeats: int, spawn_repeats: int) -> Dict[str, List[float]]:
    common = dict(preload=("numpy", "torch"), workers=1, timeout=60.0, confirm=False)
    out: Dict[str, List[float]] = {DEFAULT_CRASH: [], UNCONFINED_CRASH: []}
    with SandboxPool(**common) as pool, SandboxPool(confine=False, **common) as unconfined:
        for _ in range(fork_repeats):  # interleaved: confinement on, then off
            out[DEFAULT_CRASH] += crash_to_next(pool, 1)
            out[UNCONFINED_CRASH] += crash_to_next(unconfined, 1)
    with SandboxPool(spares=0, **common) as pool:
        out["fork, no spare"] = crash_to_next(pool, fork_repeats)
    with SandboxPool(spares=0, start_method="spawn", **common) as pool:
        out["spawn (fresh interpreter imports numpy, torch)"] = crash_to_next(pool, spawn_repeats)
    return out


# --- 4. confinement: fork-to-ready, and the side-effect corpus -----------------------------------

def measure_fork_to_ready(repeats: int) -> Dict[str, List[float]]:
    """Fork-to-ready times (spawn request to the worker's hello) of workers that replace a crashed
    one, numpy preloaded, no spare, confinement on and off interleaved; and the time each
    confined worker spent in confine_self."""
    common = dict(preload=("numpy",), workers=1, spares=0, timeout=30.0, confirm=False)
    out: Dict[str, List[float]] = {"on": [], "off": [], "confine_self": []}
    with SandboxPool(**common) as on, SandboxPool(confine=False, **common) as off:
        for pool in (on, off):
            assert pool.run([Task(BAD + "echo", (0,))])[0].ok
        for _ in range(repeats):
            for key, pool in (("on", on), ("off", off)):
                pool.ready_times.clear()
                pool.confine_times.clear()
                crashed, nxt = pool.run([Task(BAD + "segfault"), Task(BAD + "echo", (1,))])
                assert crashed.status == Status.CRASHED and nxt.ok, (crashed, nxt)
                out[key] += list(pool.ready_times)
                if key == "on":
                    out["confine_self"] += list(pool.confine_times)
    return out


def measure_corpus() -> Dict[str, object]:
    """The side-effect corpus under a default pool: cases raised and leaving the sentinels alone."""
    import socket

    sys.path.insert(0, str(ROOT))
    from tests.badtasks import SIDE_EFFECTS, side_effect_args, tree_digest

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.setblocking(False)
    confined, escaped = [], []
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-corpus-") as root, SandboxPool(workers=2) as pool:
        cases = [(name, Task(ref, side_effect_args(kind, os.path.join(root, name), server.getsockname()[1]),
                             timeout=60)) for name, ref, kind in SIDE_EFFECTS]
        before = tree_digest(root)
        outcomes = pool.run([task for _, task in cases])
        digest_same = tree_digest(root) == before
        described = pool.describe()
    try:
        server.accept()
        connected = True
    except BlockingIOError:
        connected = False
    server.close()
    for (name, _), outcome in zip(cases, outcomes):
        (confined if outcome.status == Status.RAISED else escaped).append(name)
    return {"cases": len(cases), "confined": len(confined) if digest_same and not connected else 0,
            "escaped": escaped, "sentinels_unchanged": digest_same, "listener_connected": connected,
            "pool": described}


# --- 3. mixed run ---------------------------------------------------------------------------------

MIX = [  # (function, expected status, weight)
    ("numpy:add", Status.OK, 880), ("torch:add", Status.OK, 50), ("segfault", Status.CRASHED, 12),
    ("abort", Status.CRASHED, 6), ("exit3", Status.CRASHED, 6), ("sigfpe", Status.CRASHED, 4),
    ("unserializable", Status.UNSERIALIZABLE, 20), ("recursion", Status.RAISED, 10),
    ("huge_message", Status.RAISED, 10), ("endless_loop", Status.TIMEOUT, 2),
]


def mixed_run(count: int) -> Dict[str, object]:
    rng = random.Random(2024)
    plan = rng.choices([m[0] for m in MIX], weights=[m[2] for m in MIX], k=count)
    expected = {name: status for name, status, _ in MIX}
    tasks = []
    for i, name in enumerate(plan):
        x = np.full(16, i, np.float32)
        if name == "numpy:add":
            tasks.append(Task(name, (x, np.float32(1))))
        elif name == "torch:add":
            tasks.append(Task(name, (x, np.ones(16, np.float32)), convert="torch:from_numpy"))
        else:
            tasks.append(Task(BAD + name, timeout=0.5 if name == "endless_loop" else None))
    with SandboxPool(preload=("numpy", "torch"), workers=2, timeout=10.0, confirm=False, capture_limit=4096) as pool:
        start = time.perf_counter()
        outcomes = pool.run(tasks)
        elapsed = time.perf_counter() - start
        stats = dict(pool.stats)
    wrong = [i for i, (name, o) in enumerate(zip(plan, outcomes))
             if o is None or o.task is not tasks[i] or o.status != expected[name]
             or (o.ok and not np.array_equal(o.value, np.full(16, i + 1, np.float32)))]
    return {
        "tasks": count, "outcomes": sum(o is not None for o in outcomes), "wrong": len(wrong),
        "seconds": elapsed, "tasks_per_s": count / elapsed,
        "planned": dict(Counter(expected[n].value for n in plan)),
        "observed": dict(Counter(o.status.value for o in outcomes if o is not None)),
        "pool_stats": stats,
    }


# --- report ---------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run, not for the record)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    rounds, calls, seq = (2, 2000, 300) if args.quick else (7, 10_000, 1000)
    fork_n, spawn_n = (5, 2) if args.quick else (21, 5)
    ready_n = 5 if args.quick else 21
    mixed_n = 2000 if args.quick else 10_000

    load_before = os.getloadavg()
    started = time.perf_counter()
    throughput = measure_throughput(rounds, calls, seq)
    direct = measure_direct(rounds, calls)
    for kind in throughput:
        throughput[kind] = {"direct in-process call": direct[kind], **throughput[kind]}
    crash = measure_crash_recovery(fork_n, spawn_n)
    ready = measure_fork_to_ready(ready_n)
    corpus = measure_corpus()
    mixed = mixed_run(mixed_n)
    load_after = os.getloadavg()

    med = {k: {m: statistics.median(x[0] for x in v) for m, v in per.items()} for k, per in throughput.items()}
    cpu = {k: {m: statistics.median(x[1] for x in v) for m, v in per.items()} for k, per in throughput.items()}
    ratios = {k: med[k]["SandboxPool.run"] / med[k]["ProcessPoolExecutor"] for k in med}
    ratios_forever = {k: med[k]["SandboxPool.run, workers never replaced"] / med[k]["ProcessPoolExecutor"] for k in med}
    cpu_ratios = {k: cpu[k]["ProcessPoolExecutor"] / cpu[k]["SandboxPool.run"] for k in cpu}
    ratios_chunked = {k: med[k]["SandboxPool.run"] / med[k][PPE_CHUNKED] for k in med}
    crash_med = {k: statistics.median(v) for k, v in crash.items()}
    spawn_key = next(k for k in crash_med if k.startswith("spawn"))
    default_key = "fork, 1 warm spare (default)"
    crash_ratio = crash_med[spawn_key] / crash_med[default_key]
    ready_med = {k: statistics.median(v) if v else float("nan") for k, v in ready.items()}
    confine_ratios = {k: med[k]["SandboxPool.run"] / med[k][UNCONFINED_RUN] for k in med}
    confine_cpu_ratios = {k: cpu[k]["SandboxPool.run"] / cpu[k][UNCONFINED_RUN] for k in cpu}
    crash_confine_ratio = crash_med[DEFAULT_CRASH] / crash_med[UNCONFINED_CRASH]
    ready_added = ready_med["on"] - ready_med["off"]
    targets = {
        "throughput >= 3x ProcessPoolExecutor (numpy)": ratios["numpy"] >= 3,
        "throughput >= 3x ProcessPoolExecutor (torch)": ratios["torch"] >= 3,
        "crash-to-next-result < 100 ms, torch preloaded": crash_med[default_key] < 0.1,
        "crash-to-next-result >= 20x faster than spawn": crash_ratio >= 20,
        f"no task lost in the {mixed_n}-task mixed run": mixed["outcomes"] == mixed_n and mixed["wrong"] == 0,
        "side-effect corpus 100% confined by a default pool": corpus["confined"] == corpus["cases"],
        "confinement adds <= 1 ms to fork-to-ready (time in confine_self)": ready_med["confine_self"] <= 1e-3,
        "confinement adds <= 1 ms to fork-to-ready (median on - off)": ready_added <= 1e-3,
    }

    print(f"\nTiny calls, 2 workers: median of {rounds} interleaved rounds; calls per second (wall clock)"
          f" and CPU microseconds per call (this process and its pool's processes)")
    print(f"  {'method':<42}{'numpy calls/s':>14}{'CPU us':>8}{'torch calls/s':>15}{'CPU us':>8}")
    for method in med["numpy"]:
        print(f"  {method:<42}{med['numpy'][method]:>14,.0f}{cpu['numpy'][method] * 1e6:>8.1f}"
              f"{med['torch'][method]:>15,.0f}{cpu['torch'][method] * 1e6:>8.1f}")
    print(f"  {'SandboxPool.run / ProcessPoolExecutor':<42}{ratios['numpy']:>13.2f}x{'':>8}{ratios['torch']:>14.2f}x")
    print(f"  {'  same, workers never replaced':<42}{ratios_forever['numpy']:>13.2f}x{'':>8}"
          f"{ratios_forever['torch']:>14.2f}x")
    print(f"  {'CPU per call, ProcessPoolExecutor / Sandbox':<42}{cpu_ratios['numpy']:>13.2f}x{'':>8}"
          f"{cpu_ratios['torch']:>14.2f}x")
    print(f"  {f'SandboxPool.run / PPE chunksize={CHUNKSIZE}':<42}{ratios_chunked['numpy']:>13.2f}x{'':>8}"
          f"{ratios_chunked['torch']:>14.2f}x")
    print("\nCrash to next result, torch preloaded (median)")
    for name, value in crash_med.items():
        print(f"  {name:<48}{value * 1e3:>9.1f} ms  (n={len(crash[name])})")
    print(f"  {'spawn / fork with spare':<48}{crash_ratio:>9.1f}x")
    print(f"\nConfinement, same run; a default pool: {corpus['pool']}")
    print(f"  {'tiny calls, SandboxPool.run on / off':<48}{confine_ratios['numpy']:>9.3f}x numpy"
          f" ({med['numpy']['SandboxPool.run']:,.0f} / {med['numpy'][UNCONFINED_RUN]:,.0f} calls/s),"
          f" {confine_ratios['torch']:.3f}x torch ({med['torch']['SandboxPool.run']:,.0f} /"
          f" {med['torch'][UNCONFINED_RUN]:,.0f})")
    print(f"  {'  CPU per call on / off':<48}{confine_cpu_ratios['numpy']:>9.3f}x numpy,"
          f" {confine_cpu_ratios['torch']:.3f}x torch")
    print(f"  {'crash to next result on / off':<48}{crash_confine_ratio:>9.3f}x"
          f" ({crash_med[DEFAULT_CRASH] * 1e3:.1f} / {crash_med[UNCONFINED_CRASH] * 1e3:.1f} ms)")
    print(f"  {'fork-to-ready, numpy, on / off (median)':<48}{ready_med['on'] * 1e3:>9.2f} / "
          f"{ready_med['off'] * 1e3:.2f} ms, added {ready_added * 1e3:+.2f} ms (n={len(ready['on'])})")
    print(f"  {'time a worker spends in confine_self (median)':<48}{ready_med['confine_self'] * 1e3:>9.3f} ms"
          f" (max {max(ready['confine_self'] or [float('nan')]) * 1e3:.3f})")
    print(f"  {'side-effect corpus, default pool':<48}{corpus['confined']:>6}/{corpus['cases']} confined"
          f"{'' if not corpus['escaped'] else ', escaped: ' + ', '.join(corpus['escaped'])}")
    print(f"\nMixed run: {mixed['outcomes']}/{mixed['tasks']} outcomes, {mixed['wrong']} wrong, "
          f"{mixed['seconds']:.1f} s ({mixed['tasks_per_s']:,.0f} tasks/s); statuses {mixed['observed']}")
    print("\nTargets:")
    for name, ok in targets.items():
        print(f"  [{'met' if ok else 'MISSED'}] {name}")
    print(f"\nload average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} on {os.cpu_count()} CPUs; "
          f"{time.perf_counter() - started:.0f} s in all")

    report = {
        "benchmark": "sandbox", "quick": args.quick,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_average_before": load_before, "load_average_after": load_after},
        "throughput_calls_per_s": {"rounds": rounds, "calls_per_round": calls, "submit_calls_per_round": seq,
                                   "median": med, "cpu_seconds_per_call_median": cpu,
                                   "samples_calls_per_s_and_cpu_s_per_call": throughput,
                                   "ratio_sandbox_run_over_process_pool_executor": ratios,
                                   "ratio_without_worker_replacement": ratios_forever,
                                   f"ratio_sandbox_run_over_process_pool_executor_chunksize_{CHUNKSIZE}": ratios_chunked,
                                   "cpu_per_call_ratio_process_pool_executor_over_sandbox_run": cpu_ratios},
        "crash_to_next_result_s": {"median": crash_med, "samples": crash, "spawn_over_fork_ratio": crash_ratio},
        "mixed_run": mixed,
        "confinement": {
            "throughput_on_over_off": confine_ratios, "cpu_per_call_on_over_off": confine_cpu_ratios,
            "crash_to_next_on_over_off": crash_confine_ratio,
            "fork_to_ready_s": {"median": ready_med, "added_median_s": ready_added, "samples": ready},
            "corpus": corpus,
        },
        "targets": targets,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"wrote {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
