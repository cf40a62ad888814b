"""What a campaign filed, as a maintainer would count it: findings by class, bugs apart from
documented policies, reproducer forms and their length, and a fixed-seed sample for reading.

Reads a campaign's output folder (``xamt fuzz --out DIR``, or a run that
``bench/campaign_bench.py --work`` kept) through the real command, ``xamt findings --json``, and
prints a table; writes JSON (``bench/results/findings.json`` by default) with:

- findings by class, bugs (every class but ``policy``) and policies by name;
- reproducers: how many are literal (:mod:`xamt.literal`) and at most 30 lines, the median line
  count of those, and how many of all were verified by a fresh-process replay;
- occurrences: groups and dtypes folded into one root cause;
- clusters: the bugs by ``cluster`` (findings of several APIs that may share a cause, shown as
  one in the report's causes table), how many clusters hold more than one;
- ``sample``: ``--sample`` findings that are not policies, drawn with ``random.Random(seed)``
  from the ids in order, for a blind read (their verdicts go in by hand, see ``--verdicts``).

``--verdicts FILE`` (JSON: a list of ``{"id", "verdict", "blame_right", "duplicate_of"}`` with
verdicts ``real``, ``undocumented``, ``intended``, ``ours``) adds the read's shares; a duplicate
of a finding in the same cluster is counted apart (the report shows the two as one cause).

    python bench/findings_bench.py --out-dir xamt-out --sample 20 --seed 20261202
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LITERAL_MAX_LINES = 30


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", required=True, type=Path, help="the campaign's output folder")
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--verdicts", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "findings.json")
    args = ap.parse_args()
    done = subprocess.run([sys.executable, "-m", "xamt.cli", "findings", "--json", "--out", str(args.out_dir)],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"xamt findings failed ({done.returncode}):\n{done.stderr[-2000:]}")
    records = json.loads(done.stdout)
    bugs = [r for r in records if r.get("is_bug", True)]
    policies = Counter((r.get("policy") or {}).get("name") for r in records if not r.get("is_bug", True))
    forms = Counter(r["summary"].get("reproducer_form", "msgpack") for r in records)
    lines = [r["summary"].get("reproducer_lines") for r in records
             if r["summary"].get("reproducer_form") == "literal"]
    short = [n for n in lines if n is not None and n <= LITERAL_MAX_LINES]
    occurrences = [len(r.get("occurrences") or []) for r in records]
    clusters = Counter(r.get("cluster") for r in bugs)
    cluster_of = {r["id"]: r.get("cluster") for r in records}
    ids = sorted(r["id"] for r in bugs)
    sample = sorted(random.Random(args.seed).sample(ids, min(args.sample, len(ids))))
    out = {
        # the folder's own name only: a machine's paths stay out of the results
        "out_dir": args.out_dir.name,
        "findings": len(records),
        "by_class": dict(Counter(r["class"] for r in records).most_common()),
        "bugs": len(bugs),
        "policies": dict(policies.most_common()),
        "verified": sum(1 for r in records if r.get("verified")),
        "reproducer_forms": dict(forms),
        "literal_at_most_30_lines": len(short),
        "literal_share": round(len(short) / len(records), 3) if records else None,
        "literal_median_lines": statistics.median(short) if short else None,
        "occurrences_per_finding_median": statistics.median(occurrences) if occurrences else None,
        "occurrences_folded": sum(max(0, n - 1) for n in occurrences),
        "bug_clusters": len(clusters),
        "bug_clusters_of_several": sum(1 for n in clusters.values() if n > 1),
        "bugs_in_clusters_of_several": sum(n for n in clusters.values() if n > 1),
        "sample_seed": args.seed,
        "sample": sample,
    }
    if args.verdicts:
        read = json.loads(args.verdicts.read_text())
        n = len(read)
        verdicts = Counter(v["verdict"] for v in read)
        out["read"] = {
            "n": n, "verdicts": dict(verdicts),
            "real_or_undocumented": round((verdicts["real"] + verdicts["undocumented"]) / n, 3) if n else None,
            "blame_right": round(sum(1 for v in read if v.get("blame_right")) / n, 3) if n else None,
            "duplicates": sum(1 for v in read if v.get("duplicate_of")),
            "duplicates_in_another_cluster": sum(
                1 for v in read if v.get("duplicate_of")
                and cluster_of.get(v["id"]) != cluster_of.get(v["duplicate_of"])),
        }
    rows = [("findings", out["findings"]), ("bugs", out["bugs"]),
            ("policies", sum(policies.values())), ("verified", out["verified"]),
            ("literal <= 30 lines", f"{len(short)} ({out['literal_share']})"),
            ("literal median lines", out["literal_median_lines"]),
            ("occurrences folded", out["occurrences_folded"]),
            ("bug clusters (of several)", f"{out['bug_clusters']} ({out['bug_clusters_of_several']})")]
    rows += [(f"  class {k}", v) for k, v in out["by_class"].items()]
    if "read" in out:
        rows += [(f"read: {k}", v) for k, v in out["read"].items()]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print("sample for reading:", sample)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1) + "\n")
    print(f"written {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
