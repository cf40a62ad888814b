"""Catalog and matching figures for the six libraries: counts, quality, timings.

Prints a table and writes ``bench/results/matching_quality.json``:

* mined APIs per library (functions / methods / classes), next to the Xamt++ counts;
* cross-library candidate groups and the APIs they cover; intra-library relations by kind;
* recall against PyTorch's OpInfo refs and the array API names, closed-world precision, and the
  hand-labelled sample's precision (see :mod:`xamt.matching.quality`), with the misses;
* timings, medians of ``--repeat`` runs: a cold catalog (mined in worker processes into a fresh
  store), a warm one (read from the store's cache: the baseline ratio), and matching.

Usage: ``python bench/matching_quality_bench.py [--repeat 3]``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from xamt.catalog import build_catalog
from xamt.matching.data import load_matching_data
from xamt.matching.engine import match
from xamt.matching.quality import load_groundtruth, measure
from xamt.store import Store

LIBS = ["numpy", "scipy", "torch", "tensorflow", "jax", "keras"]
#: Xamt++ run on the same six libraries (the issue's targets)
XAMT_PP = {"numpy": 385, "scipy": 611, "torch": 1010, "tensorflow": 710, "jax": 753, "keras": 453,
           "groups": 624, "apis": 2340}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"
                                             / "matching_quality.json"))
    args = parser.parse_args(argv)
    data = load_matching_data()
    cold, warm, matching = [], [], []
    result = catalogs = None
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            with Store(Path(tmp) / "xamt.db") as store:
                t0 = time.perf_counter()
                built = build_catalog(store, LIBS)
                cold.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                built = build_catalog(store, LIBS)
                warm.append(time.perf_counter() - t0)
        catalogs = built.catalogs
        t0 = time.perf_counter()
        result = match(catalogs, data)
        matching.append(time.perf_counter() - t0)
    assert result is not None and catalogs is not None
    quality = measure(result.groups, catalogs, load_groundtruth(), data,
                      {tuple(x) for x in result.stats["homonyms"]})
    stats = result.stats
    counts = {lib: cat.counts() for lib, cat in catalogs.items()}

    print(f"{'library':<11} {'Xamt++':>7} {'mined':>6} {'funcs':>6} {'methods':>8} {'classes':>8}"
          f" {'in groups':>10}")
    for lib in LIBS:
        c = counts[lib]
        print(f"{lib:<11} {XAMT_PP[lib]:>7} {c['total']:>6} {c['function']:>6} {c['method']:>8}"
              f" {c['class']:>8} {stats['cross_library_apis_per_library'].get(lib, 0):>10}")
    print(f"cross-library groups: {stats['cross_library_groups']} (Xamt++ {XAMT_PP['groups']}),"
          f" covering {stats['cross_library_apis']} APIs (Xamt++ {XAMT_PP['apis']})")
    print(f"intra-library relations: {stats['intra_relations']}")
    print(f"same-object relations: {stats['same_object_relations']}")
    for name in ("opinfo", "array_api"):
        q = quality[name]
        print(f"recall vs {name}: {q['hits']}/{q['pairs']} = {q['recall']:.3f}; "
              f"misses {q['miss_reasons']}")
    for name in ("precision_opinfo_closed_world", "precision_array_api_closed_world"):
        q = quality[name]
        print(f"{name}: {q['correct']}/{q['judged_pairs']} = {q['precision']:.3f}")
    sib = quality.get("siblings")
    if sib:
        print(f"recall of the hand-listed siblings by inferred relations: {sib['hits']}/{sib['pairs']}"
              f" = {sib['recall']:.3f}; inferred candidates {stats['inferred']['candidates']}")
    lab = quality.get("precision_labelled_sample")
    if lab:
        print(f"labelled sample: as drawn {lab['precision_as_drawn']:.3f} of {lab['labelled']};"
              f" on pairs still proposed {lab['correct']}/{lab['still_candidates']}")
    timing = {
        "catalog_cold_s": statistics.median(cold),
        "catalog_warm_s": statistics.median(warm),
        "warm_over_cold": statistics.median(warm) / statistics.median(cold),
        "match_s": statistics.median(matching),
        "runs": args.repeat,
    }
    print(f"catalog cold {timing['catalog_cold_s']:.2f} s, warm {timing['catalog_warm_s']:.2f} s "
          f"(ratio {timing['warm_over_cold']:.3f}), match {timing['match_s']:.2f} s "
          f"(medians of {args.repeat})")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"xamt_plus_plus": XAMT_PP, "counts": counts, "stats": stats, "quality": quality,
           "timing": timing}
    doc["stats"] = {k: v for k, v in stats.items() if k != "homonyms"}
    out.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
