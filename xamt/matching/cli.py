"""``xamt match``: build candidate groups from the catalogs in the store.

Libraries missing from the store are mined first (as ``xamt catalog`` would). ``--json`` prints
the groups (key, relation, equivalence, confidence, members with their argument plans) as one
JSON document; otherwise a summary table. ``--quality`` adds recall/precision against the shipped
ground truth (``xamt/data/groundtruth``).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["cli_command", "configure_parser", "run_command"]

_RELATION_CHOICES = ("all", "cross", "intra")


def configure_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--libs", default=None,
                        help="comma-separated libraries to match (default: all with an adapter)")
    parser.add_argument("--relations", choices=_RELATION_CHOICES, default="all",
                        help="which groups to build and print (default: all)")
    parser.add_argument("--min-confidence", type=float, default=0.0,
                        help="print only groups at or above this confidence")
    parser.add_argument("--json", action="store_true", help="print the groups as JSON")
    parser.add_argument("--quality", action="store_true",
                        help="measure recall/precision against the shipped ground truth")
    parser.add_argument("--data", default=None, metavar="DIR",
                        help="folder with the matching data files (default: xamt/data)")


def _summary_table(stats: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Xamt candidate groups")
    table.add_column("library")
    table.add_column("mined APIs", justify="right")
    table.add_column("in cross-library groups", justify="right")
    for lib, n in stats["mined"].items():
        table.add_row(lib, str(n), str(stats["cross_library_apis_per_library"].get(lib, 0)))
    table.add_row("all", str(sum(stats["mined"].values())), str(stats["cross_library_apis"]))
    console = Console(width=None if sys.stdout.isatty() else 110)
    console.print(table)
    console.print(f"cross-library groups: {stats['cross_library_groups']} "
                  f"(bands {stats['cross_library_bands']}) covering "
                  f"{stats['cross_library_apis']} APIs")
    rel = Table(title="intra-library relations")
    rel.add_column("relation")
    rel.add_column("groups", justify="right")
    rel.add_column("status-only", justify="right")
    rel.add_column("same object", justify="right")
    kinds = sorted(set(stats["intra_relations"]) | set(stats["same_object_relations"]))
    for kind in kinds:
        rel.add_row(kind, str(stats["intra_relations"].get(kind, 0)),
                    str(stats["intra_status_only"].get(kind, 0)),
                    str(stats["same_object_relations"].get(kind, 0)))
    console.print(rel)
    inferred = stats.get("inferred")
    if inferred:
        console.print(f"inferred relations: {inferred['candidates']} candidate pairs over "
                      f"{sum(inferred['apis'].values())} APIs ({inferred['unmapped_rejected']} more "
                      f"rejected: required inputs do not map; {inferred['related_skipped']} already "
                      f"related by name) in {inferred['seconds']:.1f} s")
    console.print(f"matched in {stats['seconds']['total']:.2f} s")


def run_command(args: argparse.Namespace) -> int:
    from xamt.catalog import build_catalog
    from xamt.libraries.registry import Registry, parse_library_list
    from xamt.matching.data import load_matching_data
    from xamt.matching.engine import match, save_groups
    from xamt.store import Store, default_db_path

    registry = Registry()
    libs = parse_library_list(args.libs, registry)
    data = load_matching_data(args.data)
    with Store(default_db_path(args.out)) as store:
        catalog = build_catalog(
            store, libs, registry=registry,
            on_event=lambda kind, lib, payload: print(
                f"{'mining' if kind == 'start' else kind} {lib}"
                + (f": {payload}" if kind == "skip" else ""), file=sys.stderr)
            if kind in ("start", "skip") else None,
        )
        result = match(catalog.catalogs, data, registry=registry,
                       intra=args.relations != "cross")
        save_groups(store, result)
    groups = result.groups
    if args.relations == "cross":
        groups = result.cross
    elif args.relations == "intra":
        groups = result.intra
    groups = [g for g in groups if g.confidence >= args.min_confidence]
    quality = None
    if args.quality:
        from xamt.matching.quality import load_groundtruth, measure

        quality = measure(result.groups, catalog.catalogs, load_groundtruth(), data,
                          {tuple(x) for x in result.stats.get("homonyms", [])})
    if args.json:
        doc: dict[str, Any] = {"groups": [g.to_json() for g in groups],
                               "stats": result.stats, "skipped": catalog.skipped}
        if quality is not None:
            doc["quality"] = quality
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    _summary_table(result.stats)
    for lib, why in catalog.skipped.items():
        print(f"skipped {lib}: {why}")
    if quality is not None:
        for name in ("opinfo", "array_api"):
            if name in quality:
                q = quality[name]
                print(f"recall vs {name}: {q['hits']}/{q['pairs']} = {q['recall']:.3f} "
                      f"(misses: {q['miss_reasons']})")
        if "siblings" in quality:
            q = quality["siblings"]
            print(f"recall of hand-listed siblings by inferred relations: {q['hits']}/{q['pairs']}"
                  f" = {q['recall']:.3f} (misses: {', '.join(q['misses']) or 'none'})")
        for name in ("precision_opinfo_closed_world", "precision_array_api_closed_world",
                     "precision_labelled_sample"):
            if name in quality:
                q = quality[name]
                print(f"{name}: {q['precision']:.3f}")
    return 0


def cli_command():
    """The ``match`` subcommand for :mod:`xamt.cli`."""
    from xamt.cli import Command

    return Command("match", "build cross-library candidate groups and intra-library relations",
                   configure_parser, run_command)
