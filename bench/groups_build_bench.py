"""Throughput of group execution (the fuzzer's hot path) and, optionally, of a registry build.

Part 1 (always): group-iterations per second for cheap groups on a 2-worker sandbox pool with
every library preloaded, through :class:`xamt.exec.group.GroupExecutor` (one task per group
input, all members inside it), against a baseline measured in the same run: the same calls as one
sandbox task per member. Median of ``--repeats`` batches of ``--batch`` group-iterations.

Part 2 (``--store DB``): ``build_registry`` over the first ``--limit`` candidate groups of an
existing store (a copy is used), fresh, timed.

Writes ``bench/results/groups_build.json``.

    python bench/groups_build_bench.py [--batch 600] [--repeats 3] [--store xamt-out/xamt.db --limit 300]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _groups():
    """Cheap cross-library groups built by hand (no store needed)."""
    from xamt.matching.model import ArgSpec, ArgumentPlan, CandidateGroup, GroupSlot, Member

    def m(lib, q, target, n=1):
        args = [ArgSpec(slot=i, param=f"x{i}", position=i, transform="tensor", required=True) for i in range(n)]
        return Member(library=lib, qualname=q, target=target, kind="function", call="function",
                      plan=ArgumentPlan(args=args))

    def g(key, members, n=1):
        return CandidateGroup(key=key, relation="cross_library", category="generic", canonical=key,
                              equivalence="value", confidence=1.0,
                              slots=[GroupSlot(index=i, name=f"x{i}", role="tensor", shared=True, required=True)
                                     for i in range(n)], members=members)

    return [
        g("abs", [m("numpy", "numpy.abs", "numpy:abs"), m("torch", "torch.abs", "torch:abs"),
                  m("tensorflow", "tensorflow.abs", "tensorflow:abs"), m("jax", "jax.numpy.abs", "jax.numpy:abs")]),
        g("add", [m("numpy", "numpy.add", "numpy:add", 2), m("torch", "torch.add", "torch:add", 2),
                  m("jax", "jax.numpy.add", "jax.numpy:add", 2)], 2),
        g("sin", [m("numpy", "numpy.sin", "numpy:sin"), m("torch", "torch.sin", "torch:sin"),
                  m("scipy", "numpy.sin", "numpy:sin")]),
    ]


def _inputs(group, n, seed0):
    from xamt.inputs.arrays import ArrayRecipe
    from xamt.inputs import GroupInput, SlotValue

    return [GroupInput({s.index: SlotValue.array(ArrayRecipe(seed=seed0 + i * 7 + s.index, shape=(3, 4)))
                        for s in group.slots}) for i in range(n)]


def _throughput(pool, adapters, batch, repeats):
    from sandbox import Task
    from xamt.exec.group import ExecItem, GroupExecutor
    from xamt.exec.member import RUN_MEMBERS
    from xamt.inputs import materialise

    groups = _groups()
    ex = GroupExecutor(pool, adapters)
    items_per_group = batch // len(groups)
    # warm-up: every member compiled / imported once in both workers
    ex.run([ExecItem(g, inp) for g in groups for inp in _inputs(g, 8, 0)])
    grouped, per_member = [], []
    for r in range(repeats):
        items = [ExecItem(g, inp) for g in groups for inp in _inputs(g, items_per_group, 1000 * (r + 1))]
        t0 = time.perf_counter()
        runs = ex.run(items)
        grouped.append(len(items) / (time.perf_counter() - t0))
        assert all(len(run.outputs()) == len(run.members) for run in runs)
        # baseline: the same members as one sandbox task each
        tasks = []
        for it in items:
            values = materialise(it.input)
            for member in it.group.members:
                tasks.append(Task(RUN_MEMBERS, args=([list(ex.spec(member))], values, {})))
        t0 = time.perf_counter()
        pool.run(tasks)
        per_member.append(len(items) / (time.perf_counter() - t0))
    return statistics.median(grouped), statistics.median(per_member), len(items)


def _build(store_path, limit, workers):
    from xamt.groups.build import build_registry
    from xamt.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "xamt.db"
        shutil.copy(store_path, copy)
        with Store(copy) as store:
            t0 = time.perf_counter()
            result = build_registry(store, limit=limit, workers=workers, resume=False)
            seconds = time.perf_counter() - t0
    return seconds, result.stats


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--store", default=None, help="a store with candidate groups (xamt match)")
    parser.add_argument("--limit", type=int, default=300)
    args = parser.parse_args(argv)

    from xamt.exec.pools import open_pool, pool_settings
    from xamt.libraries.registry import Registry

    reg = Registry()
    adapters = {a.name: a for a in reg if a.is_installed()}
    out = {"batch": args.batch, "repeats": args.repeats, "workers": args.workers}
    with open_pool(workers=args.workers, timeout=30, confirm=False, max_tasks_per_worker=None,
                   **pool_settings(adapters.values())) as pool:
        grouped, per_member, n = _throughput(pool, adapters, args.batch, args.repeats)
    out.update(group_iterations_per_s=round(grouped, 1), baseline_one_task_per_member_per_s=round(per_member, 1),
               ratio=round(grouped / per_member, 2), items_per_batch=n)
    rows = [("group-iterations/s, one task per group input", f"{grouped:.0f}"),
            ("group-iterations/s, one task per member (baseline)", f"{per_member:.0f}"),
            ("ratio", f"{grouped / per_member:.2f}x")]
    if args.store:
        seconds, stats = _build(args.store, args.limit, args.workers)
        out["build"] = {"limit": args.limit, "seconds": round(seconds, 1),
                        "cross_library_groups": stats["cross_library_groups"],
                        "validated_groups_total": stats["validated_groups_total"]}
        rows.append((f"build of {args.limit} candidates, s", f"{seconds:.1f}"))
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>10}")
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "groups_build.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
