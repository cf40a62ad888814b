"""Inferred relations (DeepREL), measured on the real commands.

Copies a store that holds the catalogs (``--store``: a folder with ``xamt.db`` after ``xamt
catalog``), then runs as subprocesses, each timed:

1. ``xamt match --quality --json``: the candidates (how many, the seconds inference took inside
   matching, pairs rejected because their required inputs do not map) and the recall of the
   hand-listed siblings (``xamt/data/groundtruth/siblings.json``);
2. ``xamt groups build --key inferred: --fresh``: validating every inferred candidate from cold
   (a fresh output folder: no compile cache, no earlier results). That is what inference adds to
   a cold registry build; it is compared with the target of 600 s;
3. the same build again, resuming: the baseline that shows the result is cached.

Then counts the validated inferred relations by equivalence and by library (``xamt groups list
--relation inferred --json``). Prints a table and writes JSON (``bench/results/inferred.json``).

    python bench/inferred_bench.py --store xamt-out
"""
from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the issue's budgets, seconds
GENERATE_TARGET_S = 120.0
VALIDATE_TARGET_S = 600.0


def _xamt(out: Path, *args: str) -> tuple[float, str]:
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "xamt.cli", *args, "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if done.returncode != 0:
        raise SystemExit(f"xamt {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, done.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, help="folder holding xamt.db with the catalogs")
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "inferred.json"))
    ap.add_argument("--keep", default=None, metavar="DIR",
                    help="copy the built store to DIR at the end (for a campaign on it)")
    args = ap.parse_args()
    src = Path(args.store) / "xamt.db"
    if not src.exists():
        raise SystemExit(f"{src} not found: run `xamt catalog --out {args.store}` first")
    with tempfile.TemporaryDirectory(prefix="xamt-inferred-") as tmp:
        out = Path(tmp)
        shutil.copy(src, out / "xamt.db")
        match_s, text = _xamt(out, "match", "--quality", "--json")
        doc = json.loads(text)
        inferred = doc["stats"]["inferred"]
        siblings = doc["quality"].get("siblings", {})
        cold_s, text = _xamt(out, "groups", "build", "--key", "inferred:", "--fresh", "--json",
                             "--no-progress")
        cold = json.loads(text)
        cached_s, text = _xamt(out, "groups", "build", "--key", "inferred:", "--json", "--no-progress")
        cached = json.loads(text)
        _, text = _xamt(out, "groups", "list", "--relation", "inferred", "--json")
        listed = json.loads(text)
        if args.keep:
            Path(args.keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(out / "xamt.db", Path(args.keep) / "xamt.db")
    groups = listed["groups"] if isinstance(listed, dict) else listed
    by_eq: collections.Counter = collections.Counter()
    by_lib: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for g in groups:
        if g.get("state") != "validated":
            continue
        by_eq[g["equivalence"]] += 1
        by_lib[g["libraries"][0]][g["equivalence"]] += 1
    result = {
        "generate": {"seconds_in_match": inferred["seconds"], "match_command_s": round(match_s, 1),
                     "target_s": GENERATE_TARGET_S, "apis": inferred["apis"],
                     "candidates": inferred["candidates"],
                     "unmapped_rejected": inferred["unmapped_rejected"],
                     "related_skipped": inferred["related_skipped"]},
        "sibling_recall": {k: siblings.get(k) for k in ("pairs", "hits", "recall", "misses")},
        "validate_cold": {"command_s": round(cold_s, 1), "build_s": cold["build"]["seconds"],
                          "target_s": VALIDATE_TARGET_S,
                          "ratio_to_target": round(cold["build"]["seconds"] / VALIDATE_TARGET_S, 3),
                          "pool": cold["build"].get("pool"),
                          "rejection_reasons": cold.get("rejection_reasons")},
        "validate_cached": {"command_s": round(cached_s, 1), "build_s": cached["build"]["seconds"],
                            "resumed": cached["build"]["resumed"],
                            "ratio_to_cold": round(cached["build"]["seconds"] / max(cold["build"]["seconds"], 1e-9), 4)},
        "validated": {"value": by_eq["value"], "status": by_eq["status"],
                      "by_library": {lib: dict(c) for lib, c in sorted(by_lib.items())}},
    }
    print(f"{'figure':44} {'value':>12}")
    rows = [("candidates", inferred["candidates"]),
            ("inference seconds (target 120)", inferred["seconds"]),
            ("rejected: required inputs do not map", inferred["unmapped_rejected"]),
            ("sibling recall", f"{siblings.get('hits')}/{siblings.get('pairs')}"),
            ("cold validation seconds (target 600)", cold["build"]["seconds"]),
            ("cached rebuild seconds", cached["build"]["seconds"]),
            ("validated value", by_eq["value"]), ("validated status", by_eq["status"])]
    for lib, c in sorted(by_lib.items()):
        rows.append((f"  {lib}: value / status", f"{c['value']} / {c['status']}"))
    for name, value in rows:
        print(f"{name:44} {value!s:>12}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(f"written {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
