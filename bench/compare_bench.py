"""Comparator benchmark: throughput of compare_group against memory bandwidth and baselines.

One run measures, on this machine:
  * the memory read bandwidth of one core (a vectorised C sum over a large float64 buffer, best
    of several runs; the comparator kernel is single-threaded too);
  * compare_group (backend "auto", i.e. the C kernel, default median reference) for k = 2, 4, 8
    members of float32 and float64 arrays from 16 to 16M elements, in GB/s of input read;
  * (b) an equivalent numpy implementation (np.isclose and masks, float64, nanmedian reference);
  * (c) torch.testing.assert_close, pairwise against member 0 (k - 1 calls, equal_nan=True,
    torch held to one thread like the comparator);
  * the per-call time for small groups (4 x 16 elements), and numba's first-call latency.
It prints a table and writes bench/results/compare.json. Times are medians of repeated calls in
process CPU time (everything timed is single-threaded, so this is the call's own time on a
machine shared with other work; wall-clock medians are in the JSON too); ratios compare figures
taken in this same run. The bandwidth baseline is the highest of three measurements.

Data: the members are one random array (normal, float32/float64) in which each member
independently moves 25 % of its elements by one ulp, so every member differs from the others
and from the median (no bitwise-equal shortcut), as outputs of different libraries do.

Usage: python bench/compare_bench.py [--quick]   (--quick: sizes up to 1M, fewer repeats)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from xamt.compare import compare_group, get_backend  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "compare.json"
TARGETS = {"bandwidth_fraction_4x4M_f32": 0.60, "speedup_vs_numpy_4x4M_f32": 5.0,
           "speedup_vs_torch_4x4M_f32": 10.0, "small_group_us": 10.0}


LAST = {"min": 0.0, "wall": 0.0}  # of the latest timed(): fastest call, wall-clock median


def timed(fn, min_time: float = 0.3, min_reps: int = 3, max_reps: int = 200) -> float:
    """Median process-CPU seconds per call, repeating until ``min_time`` of wall time has passed
    (at least ``min_reps`` calls). Everything timed here runs on one thread, so CPU time is the
    call's own time; wall time would add whatever the OS gave to other processes on this shared
    machine. The wall-clock median and the fastest call are kept in ``LAST``."""
    cpu, wall = [], []
    start = time.perf_counter()
    while len(cpu) < max_reps and (len(cpu) < min_reps or time.perf_counter() - start < min_time):
        t, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    LAST["min"] = min(cpu)
    LAST["wall"] = statistics.median(wall)
    return statistics.median(cpu)


def memory_bandwidth(c_backend, nbytes: int = 512 << 20, runs: int = 9) -> dict:
    buf = np.random.default_rng(0).random(nbytes // 8)
    c_backend.read_sum(buf)  # fault the pages in
    best_c = min(timed(lambda: c_backend.read_sum(buf), 0.0, 1, 1) for _ in range(runs))
    best_np = min(timed(lambda: buf.sum(), 0.0, 1, 1) for _ in range(max(3, runs // 3)))
    return {"buffer_bytes": buf.nbytes, "c_sum_GBps": buf.nbytes / best_c / 1e9,
            "numpy_sum_GBps": buf.nbytes / best_np / 1e9, "runs": runs}


def make_group(k: int, n: int, dtype, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(n).astype(dtype)
    up = np.nextafter(base, dtype(np.inf))
    down = np.nextafter(base, dtype(-np.inf))
    out = []
    for _ in range(k):
        x = base.copy()
        hit = rng.random(n) < 0.25
        side = rng.random(n) < 0.5
        x[hit & side] = up[hit & side]
        x[hit & ~side] = down[hit & ~side]
        out.append(x)
    return out


def numpy_equivalent(outputs, rtol: float, atol: float) -> list[tuple]:
    """What the comparator reports, the plain numpy way: isclose against a nanmedian, masks."""
    X = np.stack([o.astype(np.float64) for o in outputs])
    with np.errstate(all="ignore"):
        ref = np.nanmedian(X, axis=0)
        result = []
        for x in X:
            close = np.isclose(x, ref, rtol=rtol, atol=atol, equal_nan=True)
            nan_mm = np.isnan(x) != np.isnan(ref)
            inf_mm = (np.isinf(x) | np.isinf(ref)) & ~close & ~nan_mm
            fin = np.isfinite(x) & np.isfinite(ref)
            d = np.abs(x - ref)[fin]
            rel = d / np.abs(ref[fin])
            bad = np.flatnonzero(~close)
            result.append((int(nan_mm.sum()), int(inf_mm.sum()), int(bad.size),
                           float(d.max(initial=0.0)), float(rel.max(initial=0.0)),
                           int(bad[0]) if bad.size else None))
    return result


def torch_pairwise(tensors, rtol: float, atol: float) -> int:
    import torch.testing
    failures = 0
    for t in tensors[1:]:
        try:
            torch.testing.assert_close(t, tensors[0], rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError:
            failures += 1
    return failures


def numba_first_call() -> dict:
    """Seconds to the first numba comparison in a fresh process: cold (empty cache), warm."""
    code = ("import time; t0 = time.perf_counter(); import numpy as np; "
            "from xamt.compare import compare_group; "
            "compare_group([np.float32([1, 2]), np.float32([1, 3])], backend='numba'); "
            "t1 = time.perf_counter(); "
            "compare_group([np.complex64([1, 2]), np.complex64([1, 3])], backend='numba'); "
            "compare_group([np.int64([1, 2]), np.int64([1, 3])], backend='numba'); "
            "t2 = time.perf_counter(); print(t1 - t0, t2 - t0)")
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        for label in ("cold", "warm"):
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True)
            first, all_three = (float(v) for v in res.stdout.split())
            out[f"{label}_first_real_s"] = first
            out[f"{label}_all_domains_s"] = all_three
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 1M, fewer repeats")
    args = parser.parse_args()
    load_start = os.getloadavg()  # the machine is shared: say how busy it was, start and end

    import torch
    # one thread, like the comparator's kernel: torch's thread pool would otherwise turn any
    # contention on this shared machine into wild timings (spinning workers)
    torch.set_num_threads(1)
    c = get_backend("c")
    numba_be = get_backend("numba")
    sizes = [16, 256, 4096, 65536, 1 << 20] + ([] if args.quick else [4 << 20, 16 << 20])
    min_time = 0.1 if args.quick else 0.3

    # The machine is shared: bandwidth is measured three times (start, middle, end) and the
    # highest figure is the baseline, so a busy moment cannot flatter the fractions.
    print("measuring memory read bandwidth ...", flush=True)
    runs = 5 if args.quick else 9
    bws = [memory_bandwidth(c, runs=runs)]
    print(f"  C sum over {bws[0]['buffer_bytes'] >> 20} MiB float64: {bws[0]['c_sum_GBps']:.1f} "
          f"GB/s (numpy sum {bws[0]['numpy_sum_GBps']:.1f} GB/s)")

    rows = []
    measured = []
    # %bw in this table is against the first bandwidth figure; the JSON uses the final baseline
    header = (f"{'k':>2} {'dtype':>7} {'n':>9} | {'c GB/s':>7} {'%bw':>5} {'c ref0':>7} "
              f"{'numba':>7} | {'numpy-eq':>9} {'x':>6} | {'torch':>8} {'x':>6}")
    print(header)
    print("-" * len(header))
    for dtype in (np.float32, np.float64):
        for k in (2, 4, 8):
            for n in sizes:
                outs = make_group(k, n, dtype)
                nbytes = k * n * np.dtype(dtype).itemsize
                rep = compare_group(outs)
                assert rep.backend == "c", rep.backend
                tol = rep.tolerance
                t_c = timed(lambda: compare_group(outs), min_time)
                t_c_min, t_c_wall = LAST["min"], LAST["wall"]
                t_c0 = timed(lambda: compare_group(outs, reference=0), min_time)
                compare_group(outs, backend="numba")  # compile outside the timing
                t_nb = timed(lambda: compare_group(outs, backend="numba"), min_time)
                t_np = timed(lambda: numpy_equivalent(outs, tol.rtol, tol.atol), min_time)
                tensors = [torch.from_numpy(o) for o in outs]
                t_th = timed(lambda: torch_pairwise(tensors, tol.rtol, tol.atol), min_time)
                row = {
                    "k": k, "dtype": np.dtype(dtype).name, "n": n, "input_bytes": nbytes,
                    "c_s": t_c, "c_GBps": nbytes / t_c / 1e9,
                    "c_min_s": t_c_min, "c_min_GBps": nbytes / t_c_min / 1e9,
                    "c_wall_s": t_c_wall, "c_wall_GBps": nbytes / t_c_wall / 1e9,
                    "c_ref0_s": t_c0, "c_ref0_GBps": nbytes / t_c0 / 1e9,
                    "numba_s": t_nb, "numba_GBps": nbytes / t_nb / 1e9,
                    "numpy_equiv_s": t_np, "speedup_vs_numpy": t_np / t_c,
                    "torch_pairwise_s": t_th, "speedup_vs_torch": t_th / t_c,
                }
                rows.append(row)
                if k == 4 and dtype is np.float32 and n == sizes[-1]:
                    bws.append(memory_bandwidth(c, runs=runs))
                print(f"{k:>2} {row['dtype']:>7} {n:>9} | {row['c_GBps']:7.2f} "
                      f"{100 * row['c_GBps'] / bws[0]['c_sum_GBps']:5.1f} {row['c_ref0_GBps']:7.2f} "
                      f"{row['numba_GBps']:7.2f} | {t_np * 1e3:7.2f}ms {row['speedup_vs_numpy']:6.1f} | "
                      f"{t_th * 1e3:6.2f}ms {row['speedup_vs_torch']:6.1f}", flush=True)
                del outs, tensors

    bws.append(memory_bandwidth(c, runs=runs))
    bw_GBps = max(b["c_sum_GBps"] for b in bws)
    figures = ", ".join(f"{b['c_sum_GBps']:.1f}" for b in bws)
    print(f"read bandwidth (start, middle, end): {figures} GB/s; baseline {bw_GBps:.1f} GB/s")
    for row in rows:
        row["c_fraction_of_bw"] = row["c_GBps"] / bw_GBps

    # other data at 4 x 4M float32 (1M with --quick): where the fast path does less well
    n = (1 << 20) if args.quick else (4 << 20)
    base_group = make_group(4, n, np.float32)
    rng = np.random.default_rng(7)
    hetero = [base_group[0]] + [np.nextafter(base_group[0], np.float32(np.inf)) if i % 2 else
                                base_group[0] + np.float32(i) * np.spacing(base_group[0])
                                for i in range(1, 4)]
    sprinkled = [x.copy() for x in base_group]
    holes = rng.random(n) < 0.01
    for i, x in enumerate(sprinkled):
        x[holes] = np.nan if i % 2 else np.inf
    scenarios = {
        "median, 1-ulp noise (main table)": (base_group, None),
        "reference=0, 1-ulp noise": (base_group, 0),
        "reference=0, members 1..3 differ by 1, 2, 3 ulps": (hetero, 0),
        "median, 1% of elements NaN/inf": (sprinkled, None),
        "median, bitwise-identical members": ([base_group[0].copy() for _ in range(4)], None),
    }
    scen = {}
    print(f"scenarios at 4 x {n} float32 (C backend):")
    for label, (group, ref) in scenarios.items():
        t = timed(lambda: compare_group(group, reference=ref), min_time)
        scen[label] = {"s": t, "GBps": 4 * n * 4 / t / 1e9}
        print(f"  {label:52s} {scen[label]['GBps']:7.2f} GB/s")
    del base_group, hetero, sprinkled

    # small groups: the fuzzer's hot path
    small = {}
    for label, dtype in (("f32", np.float32), ("f64", np.float64)):
        outs = make_group(4, 16, dtype)
        same = [outs[0].copy() for _ in range(4)]
        for name, group in (("differ", outs), ("identical", same)):
            for be in ("auto", "numba", "numpy"):
                compare_group(group, backend=be)
                import timeit
                fn = lambda: compare_group(group, backend=be)  # noqa: E731
                per = statistics.median(timeit.repeat(fn, number=2000, repeat=15,
                                                      timer=time.process_time)) / 2000
                wall = statistics.median(timeit.repeat(fn, number=2000, repeat=15)) / 2000
                small[f"4x16_{label}_{name}_{be}_us"] = per * 1e6
                small[f"4x16_{label}_{name}_{be}_wall_us"] = wall * 1e6
    print("small groups (4 x 16), microseconds per call (median; CPU time, wall-clock in JSON):")
    for key, value in small.items():
        if not key.endswith("_wall_us"):
            print(f"  {key:34s} {value:8.2f}   (wall {small[key[:-3] + '_wall_us']:.2f})")

    print("numba first-call latency (fresh processes) ...", flush=True)
    nb = numba_first_call()
    print("  " + ", ".join(f"{k} {v:.2f} s" for k, v in nb.items()))

    key_row = next(r for r in rows if r["k"] == 4 and r["dtype"] == "float32" and r["n"] == 4 << 20) \
        if not args.quick else None
    verdict = {}
    if key_row:
        verdict = {
            "bandwidth_fraction_4x4M_f32": key_row["c_fraction_of_bw"],
            "speedup_vs_numpy_4x4M_f32": key_row["speedup_vs_numpy"],
            "speedup_vs_torch_4x4M_f32": key_row["speedup_vs_torch"],
            "small_group_us": small["4x16_f32_differ_auto_us"],
        }
        print("targets (4 x 4M float32, median reference):")
        for name, target in TARGETS.items():
            value = verdict[name]
            ok = value <= target if name == "small_group_us" else value >= target
            print(f"  {name:32s} {value:8.3f}  target {'<=' if name == 'small_group_us' else '>='} "
                  f"{target:g}: {'met' if ok else 'NOT met'}")
            verdict[name + "_met"] = ok

    result = {
        "machine": {"platform": platform.platform(), "processor": platform.processor(),
                    "cpus": os.cpu_count(), "python": platform.python_version(),
                    "numpy": np.__version__, "torch": torch.__version__,
                    "torch_threads": torch.get_num_threads(),
                    "load_average_start": load_start, "load_average": os.getloadavg()},
        "bandwidth": {"baseline_GBps": bw_GBps, "measurements": bws}, "rows": rows, "scenarios_4x4M_f32": scen, "small_groups_us": small,
        "numba_first_call": nb,
        "targets": TARGETS, "verdict": verdict, "quick": args.quick,
        "timing": ("median process-CPU seconds per call (single-threaded; wall-clock medians in "
                   "c_wall_s and *_wall_us); GB/s = k * n * itemsize / median"),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    tmp = RESULTS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    tmp.replace(RESULTS)
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
