"""Does variance guidance pay? The same campaign budget with guidance on and off.

Runs two campaigns on copies of the same store (same registry, libraries, seed, budget and
workers): one with the variance-guided search (dispersion-weighted parents and group budget),
one with pure random search (uniform groups, every input a fresh mutation of a seed). Reports
for each:

* distinct divergences — what the search itself found: divergences de-duplicated by (group,
  signal, suspected API, input signature), the pre-triage key of a finding, triaged or not; by
  signal; per 1,000 group-iterations; and the groups they are in. This is the measure of the
  search: triage has a fixed share of the time, and both searches find far more than it can
  verify, so verified findings measure triage more than search;
* distinct verified findings (after triage and replay within the budget), by class;
* group-iterations run (how many inputs the budget bought: mutated inputs of new shapes and
  dtypes cost compilations).

``--from-json FILE`` re-prints the table of an earlier results file without running anything.
Use a budget that lets every group be visited many times (``--max-groups`` to fuzz a subset),
and several seeds. Writes ``bench/results/search_ablation.json``.

    python bench/search_ablation.py --out xamt-out --budget 5m [--libs ...] [--seeds 0,1]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "search_ablation.json"


def one(store_dir: Path, work: Path, guided: bool, seed: int, budget: float, libs, workers, relations,
        max_groups):
    from xamt.findings import FindingsStore
    from xamt.fuzz.campaign import FuzzConfig, run_campaign
    from xamt.store import Store

    out = work / f"{'guided' if guided else 'random'}-{seed}"
    out.mkdir(parents=True)
    shutil.copy(store_dir / "xamt.db", out / "xamt.db")
    res = run_campaign(FuzzConfig(out=out, libraries=libs, budget_s=budget, workers=workers, seed=seed,
                                  guided=guided, relations=relations, max_groups=max_groups,
                                  progress=False), log=lambda s: None)
    with Store(out / "xamt.db") as st:
        findings = FindingsStore(st).findings(res.campaign_id, verified_only=True)
    keys = {f.dedup_key() for f in findings}
    by_class: dict[str, int] = {}
    for f in findings:
        by_class[f.finding_class.value] = by_class.get(f.finding_class.value, 0) + 1
    return {"guided": guided, "seed": seed, "distinct_findings": len(keys), "by_class": by_class,
            "divergences": res.candidates, "divergences_by_signal": res.divergences_by_signal,
            "groups_with_divergences": res.groups_diverging, "iterations": res.iterations,
            "divergences_per_1000_iterations": 1000.0 * res.candidates / max(1, res.iterations),
            "it_per_s": res.iterations_per_s, "groups_with_findings": len({f.group_key for f in findings})}


COLUMNS = [("distinct divergences", "divergences"), ("per 1k iterations", "divergences_per_1000_iterations"),
           ("groups diverging", "groups_with_divergences"), ("verified findings", "distinct_findings"),
           ("group-iterations", "iterations")]


def summarise(rows: list[dict]) -> dict:
    """Medians per mode over the seeds, printed as a table."""
    for r in rows:  # derivable; older results files lack it
        r.setdefault("divergences_per_1000_iterations", 1000.0 * r["divergences"] / max(1, r["iterations"]))

    def med(guided: bool, key: str) -> float | None:
        values = [r.get(key) for r in rows if r["guided"] == guided]
        return statistics.median(values) if None not in values else None  # not recorded

    def cell(value: float | None) -> str:
        return f"{value:22.1f}" if value is not None else f"{'n/a':>22s}"

    seeds = sorted({r["seed"] for r in rows})
    print(f"\n{'search (median of ' + str(len(seeds)) + ' seeds)':28s}" + "".join(f"{c:>22s}" for c, _ in COLUMNS))
    for guided in (True, False):
        print(f"{'guided' if guided else 'random':28s}" + "".join(cell(med(guided, k)) for _, k in COLUMNS))
    pairs = {s: {r["guided"]: r["divergences"] for r in rows if r["seed"] == s} for s in seeds}
    wins = sum(1 for p in pairs.values() if p.get(True, 0) > p.get(False, 0))
    print(f"guided found more distinct divergences than random with {wins} of {len(seeds)} seeds")
    return {"medians": {k: {"guided": med(True, k), "random": med(False, k)} for _, k in COLUMNS},
            "guided_wins": wins, "seeds": seeds}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="xamt-out", help="folder with the store holding the registry")
    ap.add_argument("--budget", default="3m")
    ap.add_argument("--seeds", default="0", help="comma-separated seeds; each runs both modes")
    ap.add_argument("--libs", default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--relations", default=None)
    ap.add_argument("--max-groups", type=int, default=None)
    ap.add_argument("--from-json", default=None, help="re-print the table of this results file; run nothing")
    args = ap.parse_args(argv)
    if args.from_json:
        summarise(json.loads(Path(args.from_json).read_text())["runs"])
        return 0

    from xamt.fuzz.campaign import parse_budget

    budget = parse_budget(args.budget)
    libs = args.libs.split(",") if args.libs else None
    relations = args.relations.split(",") if args.relations else None
    seeds = [int(s) for s in args.seeds.split(",")]
    store_dir = Path(args.out)
    rows = []
    with tempfile.TemporaryDirectory(prefix="xamt-ablation-") as tmp:
        for seed in seeds:
            for guided in (True, False):
                r = one(store_dir, Path(tmp), guided, seed, budget, libs, args.workers, relations,
                        args.max_groups)
                rows.append(r)
                print(f"{'guided' if guided else 'random':7s} seed {seed}: {r['divergences']} distinct "
                      f"divergences {r['divergences_by_signal']} in {r['groups_with_divergences']} groups; "
                      f"{r['distinct_findings']} verified findings {r['by_class']}; "
                      f"{r['iterations']} group-iterations", flush=True)
    summary = summarise(rows)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"budget_s": budget, "libs": libs, "relations": relations,
                                   "max_groups": args.max_groups, "workers": args.workers,
                                   "load_average_after": list(os.getloadavg()), "runs": rows,
                                   **summary}, indent=2))
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
