"""Does variance guidance pay? The same campaign budget with guidance on and off.

Runs two campaigns on copies of the same store (same registry, libraries, seed, budget and
workers): one with the variance-guided search (dispersion-weighted parents and group budget),
one with pure random search (uniform groups, every input a fresh mutation of a seed). Reports
for each:

* distinct divergences — what the search itself found: divergences de-duplicated by (group,
  signal, suspected API, input signature), the pre-triage key of a finding; by signal and by
  group. This is the measure of the search: triage has a fixed share of the time, so when both
  searches find more than triage can verify, verified findings measure triage, not search;
* distinct verified findings (after triage and replay within the budget), by class;
* group-iterations run.

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
    with Store(out / "xamt.db") as st:
        prekeys = [json.loads(r["prekey"]) for r in
                   st.query("SELECT prekey FROM fuzz_seen WHERE campaign_id=?", (res.campaign_id,))]
    by_signal: dict[str, int] = {}
    for pk in prekeys:
        by_signal[pk[1]] = by_signal.get(pk[1], 0) + 1
    by_class: dict[str, int] = {}
    for f in findings:
        by_class[f.finding_class.value] = by_class.get(f.finding_class.value, 0) + 1
    return {"guided": guided, "seed": seed, "distinct_findings": len(keys), "by_class": by_class,
            "divergences": res.candidates, "distinct_divergences": len(prekeys),
            "divergences_by_signal": by_signal,
            "groups_with_divergences": len({pk[0] for pk in prekeys}), "iterations": res.iterations,
            "it_per_s": res.iterations_per_s, "groups_with_findings": len({f.group_key for f in findings})}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="xamt-out", help="folder with the store holding the registry")
    ap.add_argument("--budget", default="3m")
    ap.add_argument("--seeds", default="0", help="comma-separated seeds; each runs both modes")
    ap.add_argument("--libs", default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--relations", default=None)
    ap.add_argument("--max-groups", type=int, default=None)
    args = ap.parse_args(argv)

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
                print(f"{'guided' if guided else 'random':7s} seed {seed}: {r['distinct_divergences']} distinct "
                      f"divergences {r['divergences_by_signal']} in {r['groups_with_divergences']} groups; "
                      f"{r['distinct_findings']} verified findings {r['by_class']}; "
                      f"{r['iterations']} group-iterations", flush=True)

    def med(guided: bool, key: str) -> float:
        return statistics.median(r[key] for r in rows if r["guided"] == guided)

    cols = [("distinct divergences", "distinct_divergences"), ("groups diverging", "groups_with_divergences"),
            ("verified findings", "distinct_findings"), ("group-iterations", "iterations")]
    print(f"\n{'search (median of ' + str(len(seeds)) + ' seeds)':28s}" + "".join(f"{c:>22s}" for c, _ in cols))
    for guided in (True, False):
        print(f"{'guided' if guided else 'random':28s}" + "".join(f"{med(guided, k):22.1f}" for _, k in cols))
    summary = {k: {"guided": med(True, k), "random": med(False, k)} for _, k in cols}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"budget_s": budget, "libs": libs, "relations": relations,
                                   "max_groups": args.max_groups, "seeds": seeds, "workers": args.workers,
                                   "load_average_after": list(os.getloadavg()), "runs": rows,
                                   "medians": summary,
                                   "median_guided": summary["distinct_divergences"]["guided"],
                                   "median_random": summary["distinct_divergences"]["random"]}, indent=2))
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
