"""``xamt report`` and ``xamt findings``.

* ``xamt report [--out DIR] [--campaign ID] [--dest DIR]`` writes the HTML report and prints the
  path of its ``index.html``;
* ``xamt findings [--out DIR] [--json] [--campaign ID]`` lists the findings;
* ``xamt findings export ID [--format issue|json]`` prints one finding as a Markdown bug report
  or as JSON.

:func:`report_command` and :func:`findings_command` are providers for :mod:`xamt.cli`;
:func:`add_commands` registers both on any argparse subparsers object.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["report_command", "findings_command", "add_commands", "run_report", "run_findings"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finding id (a whole number)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finding id (ids start at 1)")
    return value


def configure_report(parser: argparse.ArgumentParser) -> None:
    """Options of ``xamt report``."""
    parser.add_argument("--campaign", type=_positive_int, default=None, metavar="ID",
                        help="report one campaign (default: every campaign in the store)")
    parser.add_argument("--dest", default=None, metavar="DIR",
                        help="folder to write the report to (default: OUT/report)")


def run_report(args: argparse.Namespace) -> int:
    """``xamt report``: write the HTML report and print the path of its index page."""
    from xamt.report.html import build_report

    index = build_report(args.out, campaign_id=args.campaign, dest=args.dest)
    print(index)
    return 0


def configure_findings(parser: argparse.ArgumentParser) -> None:
    """Options of ``xamt findings`` and of ``xamt findings export``."""
    parser.add_argument("--json", action="store_true",
                        help="print the findings as a JSON array (id, group, member APIs, class, "
                             "outlier, dtype, minimised input, reproducer path, ...)")
    parser.add_argument("--campaign", type=_positive_int, default=None, metavar="ID",
                        help="only the findings first filed by this campaign")
    actions = parser.add_subparsers(dest="findings_action", metavar="ACTION")
    export = actions.add_parser(
        "export", help="print one finding as a Markdown bug report or as JSON",
        description="Print one finding as a Markdown bug report for the outlier library's "
                    "tracker (--format issue) or as a JSON document (--format json).")
    export.add_argument("id", type=_positive_int, metavar="ID", help="the finding's id")
    export.add_argument("--format", choices=("issue", "json"), default="issue",
                        help="issue: Markdown bug report (default); json: for machines")
    # `xamt findings export 3 --out DIR` must work too; SUPPRESS keeps the parent's value when the
    # option is not repeated after `export`.
    export.add_argument("--out", default=argparse.SUPPRESS, metavar="DIR",
                        help="output folder; the store is DIR/xamt.db")


def run_findings(args: argparse.Namespace) -> int:
    """``xamt findings``: list findings, or export one."""
    from xamt.report import export

    if getattr(args, "findings_action", None) == "export":
        if args.format == "json":
            print(json.dumps(export.export_json(args.out, args.id), indent=2, allow_nan=False))
        else:
            sys.stdout.write(export.export_issue(args.out, args.id))
        return 0
    if args.json:
        records = export.findings_json(args.out, campaign_id=args.campaign)
        print(json.dumps(records, indent=2, allow_nan=False))
        return 0
    from xamt.report.model import open_findings

    with open_findings(args.out) as (_, fs):  # the table needs no evidence: not decoded
        _print_table(fs.findings(args.campaign), args.out)
    return 0


def _print_table(findings: list[Any], out: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:  # piped: nothing to fit, and cut names would be useless
        console = Console(width=max(console.width, 200))
    if not findings:
        console.print(f"no findings in {out}")
        return
    table = Table(title=f"Xamt findings ({out})")
    for col in ("id", "class", "outlier", "group", "dtype", "status", "hits", "reproducer"):
        table.add_column(col, justify="right" if col in ("id", "hits") else "left",
                         overflow="fold")
    for f in findings:
        outlier = f"{f.outlier_library}: {f.outlier_api}" if f.outlier_api else "—"
        table.add_row(str(f.id), f.finding_class.value, outlier, f.group_key, f.dtype or "—",
                      "verified" if f.verified else "unverified", str(f.hits),
                      f.reproducer or "—")
    console.print(table)
    console.print("details: xamt findings export ID  ·  HTML: xamt report")


def report_command():
    """The ``report`` subcommand for :mod:`xamt.cli`."""
    from xamt.cli import Command

    return Command("report", "write the HTML report of the campaigns in the store",
                   configure_report, run_report)


def findings_command():
    """The ``findings`` subcommand for :mod:`xamt.cli`."""
    from xamt.cli import Command

    return Command("findings", "list findings, or export one as a bug report or JSON",
                   configure_findings, run_findings)


def add_commands(subparsers: Any) -> None:
    """Register ``report`` and ``findings`` (each with ``--out`` and its handler as ``_run``)."""
    from xamt.cli import DEFAULT_OUT

    for command in (report_command(), findings_command()):
        parser = subparsers.add_parser(command.name, help=command.help,
                                       description=command.help)
        parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                            help=f"output folder; the store is DIR/xamt.db (default: {DEFAULT_OUT}/)")
        command.configure(parser)
        parser.set_defaults(_run=command.run)
