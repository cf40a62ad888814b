"""Reports people read: the static HTML campaign report, issue-ready exports and JSON.

* :func:`build_report` writes ``<out>/report/`` (``index.html``, one page per finding, plots as
  inline SVG, a small script and style sheet next to them; nothing is fetched from the network);
* :func:`export_issue` / :func:`export_json` turn one finding into a Markdown bug report or a
  JSON document; :func:`findings_json` lists every finding for machines;
* :func:`add_commands` registers ``xamt report`` and ``xamt findings`` on an argparse
  subparsers object (``xamt.cli`` registers them through its providers
  :func:`xamt.report.cli.report_command` and :func:`xamt.report.cli.findings_command`).

Everything is read from the store (:mod:`xamt.findings`, and the catalog where it was mined);
nothing here runs a library.
"""
from __future__ import annotations

from xamt.report.cli import add_commands
from xamt.report.export import export_issue, export_json, findings_json
from xamt.report.html import build_report
from xamt.report.model import (
    EmptyStoreError,
    ReportData,
    ReportError,
    UnknownFindingError,
    load_report_data,
    open_findings,
)

__all__ = [
    "ReportError",
    "EmptyStoreError",
    "UnknownFindingError",
    "ReportData",
    "load_report_data",
    "open_findings",
    "build_report",
    "export_issue",
    "export_json",
    "findings_json",
    "add_commands",
]
