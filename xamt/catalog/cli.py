"""``xamt catalog``: mine (or load) the catalogs and print counts per library."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from xamt.catalog.build import build_catalog
from xamt.catalog.records import CatalogResult
from xamt.libraries.registry import Registry, parse_library_list
from xamt.store import Store

__all__ = ["configure_parser", "run_command", "catalog_summary", "cli_command"]


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Options of ``xamt catalog``."""
    parser.add_argument("--libs", default=None,
                        help="comma-separated libraries (default: all that have an adapter)")
    parser.add_argument("--refresh", action="store_true",
                        help="mine again even when the store has this library version")
    parser.add_argument("--jobs", type=int, default=2, help="libraries mined in parallel")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def run_command(args: argparse.Namespace) -> int:
    """``xamt catalog``: mine (or load) the catalogs and print counts per library."""
    from rich.console import Console
    from rich.table import Table

    from xamt.store import default_db_path

    registry = Registry()
    libs = parse_library_list(args.libs, registry)
    err = Console(stderr=True)
    status = err.status("mining…") if err.is_terminal else None

    def on_event(kind: str, lib: str, payload: Any) -> None:
        if kind == "start":
            if status is not None:
                status.update(f"mining {lib}…")
            else:
                err.print(f"mining {lib}…")
        elif kind == "done":
            err.print(f"  {lib} {payload.version}: {len(payload.records)} APIs "
                      f"in {payload.seconds:.1f} s")
        elif kind == "cached":
            err.print(f"  {lib} {payload.version}: {len(payload.records)} APIs (cached)")
        elif kind == "skip":
            err.print(f"  [yellow]{lib}: {payload}[/yellow]")

    with Store(default_db_path(args.out)) as store:
        if status is not None:
            with status:
                result = build_catalog(store, libs, registry=registry, refresh=args.refresh,
                                       jobs=args.jobs, on_event=on_event)
        else:
            result = build_catalog(store, libs, registry=registry, refresh=args.refresh,
                                   jobs=args.jobs, on_event=on_event)
    if args.json:
        print(json.dumps(catalog_summary(result), indent=2))
    else:
        table = Table(title=f"Xamt catalog ({default_db_path(args.out)})")
        for col in ("library", "version", "functions", "methods", "classes", "constructed",
                    "total", "alias names", "with signature", "seconds"):
            table.add_column(col, justify="left" if col in ("library", "version") else "right")
        totals = {"function": 0, "method": 0, "class": 0, "constructed": 0, "total": 0}
        for lib, cat in result.catalogs.items():
            c = cat.counts()
            for k in totals:
                totals[k] += c[k]
            table.add_row(lib, cat.version, str(c["function"]), str(c["method"]),
                          str(c["class"]), str(c["constructed"]), str(c["total"]),
                          str(c["alias_names"]), str(c["with_signature"]),
                          "cached" if cat.cached else f"{cat.seconds:.1f}")
        table.add_row("all", "", str(totals["function"]), str(totals["method"]),
                      str(totals["class"]), str(totals["constructed"]), str(totals["total"]),
                      "", "", f"{result.seconds:.1f}")
        _console().print(table)
        for lib, why in result.skipped.items():
            print(f"skipped {lib}: {why}")
    return 0 if result.catalogs else 1


def _console():
    from rich.console import Console

    # a wide table even when stdout is a pipe (rich would use 80 columns)
    return Console(width=None if sys.stdout.isatty() else 120)


def catalog_summary(result: CatalogResult) -> dict[str, Any]:
    """The JSON form of ``xamt catalog --json``: counts, compile status, devices, notes."""
    return {
        "libraries": {
            lib: {"version": cat.version, "cached": cat.cached, "seconds": round(cat.seconds, 2),
                  "counts": cat.counts(), "compile": cat.info.get("compile"),
                  "devices": cat.info.get("devices"), "notes": cat.info.get("notes", [])}
            for lib, cat in result.catalogs.items()
        },
        "skipped": result.skipped,
        "seconds": round(result.seconds, 2),
    }


def cli_command():
    """The ``catalog`` subcommand for :mod:`xamt.cli`."""
    from xamt.command import Command

    return Command("catalog", "mine the public APIs of each library into the store",
                   configure_parser, run_command)
