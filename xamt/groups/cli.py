"""``xamt groups build`` and ``xamt groups list``.

``build`` validates the candidate groups of ``xamt match`` in the sandbox and stores the
registry (resuming an interrupted build); ``list`` shows the registry: key, relation, members
(library, qualified name, argument plan, accepted dtypes), state, normalisation, tolerance
overrides, confidence and annotations; ``--json`` prints it as one JSON document.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["cli_command", "configure_parser", "run_command"]


def configure_parser(parser: argparse.ArgumentParser) -> None:
    from xamt.exec.cluster import add_ray_option

    sub = parser.add_subparsers(dest="groups_command", metavar="ACTION")
    sub.required = True
    build = sub.add_parser("build", help="validate candidate groups by execution and store the registry")
    build.add_argument("--libs", default=None, help="comma-separated libraries (default: all installed)")
    build.add_argument("--workers", type=int, default=2, help="sandbox worker processes (default: 2)")
    build.add_argument("--relations", choices=("all", "cross", "intra"), default="all",
                       help="which candidate groups to validate (default: all)")
    build.add_argument("--key", action="append", default=None, metavar="TEXT",
                       help="only candidates whose key contains TEXT (repeatable)")
    build.add_argument("--limit", type=int, default=None, help="validate at most N candidates")
    build.add_argument("--budget", default=None, metavar="DURATION",
                       help="start no candidate after this long (90s, 15m, 1h); the next build resumes "
                            "with the rest, cross-library groups first (default: no limit)")
    build.add_argument("--fresh", action="store_true",
                       help="validate everything again instead of resuming the stored build")
    build.add_argument("--no-probe", action="store_true", help="skip dtype probing")
    build.add_argument("--no-progress", action="store_true", help="no progress bar")
    build.add_argument("--json", action="store_true", help="print the build's figures as JSON")
    add_ray_option(build)
    lst = sub.add_parser("list", help="show the registry")
    lst.add_argument("--json", action="store_true", help="print the registry as JSON")
    lst.add_argument("--state", action="append", default=None,
                     help="group states to show (repeatable; default: validated; 'all' for every state)")
    lst.add_argument("--relation", action="append", default=None,
                     help="relation kinds to show (cross_library, alias, ...; repeatable)")
    lst.add_argument("--key", default=None, metavar="TEXT", help="only groups whose key contains TEXT")
    lst.add_argument("--members", action="store_true", help="print every member's plan and dtypes")
    lst.add_argument("--rejected", action="store_true", help="also print rejected members with reasons")
    lst.add_argument("--stats", action="store_true", help="print the registry's figures only")
    for p in (build, lst):
        p.add_argument("--out", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def _plan_text(member: Any) -> str:
    parts = []
    for a in member.plan.args:
        where = f"#{a.position}" if a.position is not None else (a.keyword or a.param)
        src = f"slot{a.slot}" if a.slot is not None else repr(a.value)
        if a.slot is not None and a.has_default:
            src += f" (default {a.default!r})"
        parts.append(f"{where}={src}")
    return ", ".join(parts)


def _group_doc(g: Any, *, rejected: bool = True) -> dict[str, Any]:
    doc = {
        "key": g.key, "candidate": g.candidate, "relation": g.relation, "equivalence": g.equivalence,
        "state": g.state, "category": g.category, "canonical": g.canonical,
        "confidence": round(g.confidence, 4), "band": g.band, "libraries": g.libraries,
        "normalisation": g.normalisation, "normalisation_why": g.normalisation_why,
        "tolerance": g.tolerance, "variant": g.variant, "pinned": g.pinned, "excluded": g.excluded,
        "annotations": g.annotations,
        "slots": [{"index": s.index, "name": s.name, "role": s.role} for s in g.slots],
        "members": [{
            "library": m.library, "qualname": m.qualname, "target": m.target, "call": m.call,
            "plan": m.plan.to_json(), "accepted_dtypes": i.accepted, "dtypes": i.dtypes,
            "nondeterministic": i.nondeterministic, "notes": i.notes,
        } for m, i in zip(g.members, g.member_info)],
        "seeds": g.seeds, "evidence": g.evidence, "versions": g.versions,
    }
    if rejected:
        doc["rejected"] = [{"library": m.library, "qualname": m.qualname, "state": i.state,
                            "reason": i.reason, "detail": i.detail, "notes": i.notes}
                           for m, i in g.rejected]
    return doc


def _print_stats(stats: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 120)
    t = Table(title="Xamt group registry")
    t.add_column("figure")
    t.add_column("value", justify="right")
    for name in ("cross_library_groups", "cross_library_groups_value", "cross_library_groups_status",
                 "cross_library_apis", "intra_relations_total", "validated_groups_total",
                 "distinct_apis_all_validated"):
        t.add_row(name.replace("_", " "), str(stats.get(name, 0)))
    console.print(t)
    console.print(f"cross-library APIs per library: {stats.get('cross_library_apis_per_library', {})}")
    console.print(f"libraries per cross-library group: {stats.get('cross_library_libraries_per_group', {})}")
    console.print(f"intra-library relations: {stats.get('intra_by_equivalence', {})}")
    console.print(f"group states: {stats.get('group_states', {})}")
    console.print(f"member rejection reasons: {stats.get('rejection_reasons', {})}")
    if "build" in stats:
        b = stats["build"]
        console.print(f"build: {b['candidates']} candidates, {b['validated_now']} validated now, "
                      f"{b['resumed']} resumed, {b['seconds']} s on {b['workers']} workers")
        if b.get("left"):
            console.print(f"budget spent: {b['left']} candidate(s) left; `xamt groups build` again resumes "
                          f"with them (the registry holds what was validated so far)")


def _run_build(args: argparse.Namespace) -> int:
    from xamt.command import parse_duration
    from xamt.groups.build import build_registry
    from xamt.libraries.registry import Registry, parse_library_list
    from xamt.store import Store, default_db_path

    registry = Registry()
    libs = parse_library_list(args.libs, registry) if args.libs else None
    budget = parse_duration(args.budget, "--budget") if args.budget else None
    with Store(default_db_path(args.out), create=False) as store:
        result = build_registry(store, libraries=libs, workers=args.workers, resume=not args.fresh,
                                relations=args.relations, keys=args.key, limit=args.limit, budget_s=budget,
                                probe=not args.no_probe, progress=not args.no_progress,
                                registry=registry, ray=args.ray)
    if args.json:
        json.dump(result.stats, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        _print_stats(result.stats)
    return 0


def _run_list(args: argparse.Namespace) -> int:
    from xamt.groups.build import registry_stats
    from xamt.groups.model import REGISTRY_SCHEMA, load_registry, registry_versions
    from xamt.store import Store, default_db_path

    with Store(default_db_path(args.out), create=False) as store:
        store.ensure(REGISTRY_SCHEMA)
        if registry_versions(store) is None:
            print("the registry is empty: run `xamt groups build` first", file=sys.stderr)
            return 1
        if args.stats:
            rows = store.query("SELECT value FROM registry_info WHERE key='stats'")
            stats = json.loads(rows[0]["value"]) if rows else registry_stats(store)
            if args.json:
                json.dump(stats, sys.stdout, indent=1)
                sys.stdout.write("\n")
            else:
                _print_stats(stats)
            return 0
        states = None if args.state and "all" in args.state else tuple(args.state or ("validated",))
        groups = load_registry(store, states=states, relations=args.relation)
    if args.key:
        groups = [g for g in groups if args.key in g.key]
    if args.json:
        json.dump({"groups": [_group_doc(g) for g in groups]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    for g in groups:
        members = ", ".join(m.qualname for m in g.members) or "-"
        extra = []
        if g.normalisation not in ("none", ""):
            extra.append(f"normalise={g.normalisation}")
        if g.tolerance:
            extra.append(f"tolerance={g.tolerance}")
        if g.pinned:
            extra.append("pinned")
        print(f"{g.key}  [{g.relation}, {g.equivalence}, {g.state}, conf {g.confidence:.2f}"
              + (", " + ", ".join(extra) if extra else "") + f"]  {members}")
        if args.members:
            for m, i in zip(g.members, g.member_info):
                print(f"    {m.library:<10} {m.qualname}({_plan_text(m)})  dtypes: {','.join(i.accepted) or '-'}")
        for note in g.annotations:
            print(f"    note: {note}")
        if args.rejected:
            for m, i in g.rejected:
                print(f"    x {m.qualname}: {i.state} ({i.reason}) {i.detail}")
    return 0


def run_command(args: argparse.Namespace) -> int:
    if args.groups_command == "build":
        return _run_build(args)
    return _run_list(args)


def cli_command():
    """The ``groups`` subcommand for :mod:`xamt.cli`."""
    from xamt.cli import Command

    return Command("groups", "execution-validated group registry: build it, list it",
                   configure_parser, run_command)
