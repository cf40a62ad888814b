"""The static HTML report: ``<out>/report/index.html`` and one page per finding.

The folder is self-contained: the style sheet and the table script are copied next to the pages,
the plots are inline SVG and each reproducer is copied beside its finding's page, so the folder
can be zipped, mailed or served as it is and viewed without network access. The report is built
in a fresh folder and swapped in at the end, so a failed build leaves the previous report intact
and no page of a finding that no longer exists survives.
"""
from __future__ import annotations

import shutil
import time
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment

from xamt.findings import Finding, FindingsStore
from xamt.log import get_logger
from xamt.report import plots
from xamt.report.evidence import (
    MAX_COLS,
    Evidence,
    MemberOutput,
    array_table,
    describe_value,
    differences,
    load_evidence,
    mismatch_masks,
    tolerance_for,
    union_mask,
)
from xamt.report.export import issue_markdown
from xamt.report.model import ReportData, ReportError, open_findings, read_report_data
from xamt.report.shared import ReproducerText, environment, read_reproducer

__all__ = ["REPORT_DIR", "environment", "build_report"]

_log = get_logger("report.html")

#: the report's folder inside the output folder
REPORT_DIR = "report"
_ASSETS = ("report.css", "report.js")
#: a file marking a folder as a report this module wrote (and may replace)
_MARKER = ".xamt-report"


@dataclass
class MemberColumn:
    """One member's output as shown side by side."""

    output: MemberOutput
    description: str
    table: Any  # ArrayTable | None
    text: str | None  # for values that are not arrays


@dataclass
class FindingPage:
    finding: Finding
    evidence: Evidence
    columns: list[MemberColumn]
    inputs: list[tuple[str, str, Any, str | None]]  # name, description, table, text
    differences: list[Any]  # DiffRow
    differing: int
    tolerance: Any
    reproducer: ReproducerText
    reproducer_file: str | None
    issue: str


def _value_view(value: Any, mask: Any = None, focus: Any = None,
                max_cols: int = MAX_COLS) -> tuple[Any, str | None]:
    import numpy as np

    if isinstance(value, (np.ndarray, np.generic)):
        return array_table(np.asarray(value), mask, focus, max_cols), None
    return None, repr(value)


def _finding_page(data: ReportData, fs: FindingsStore, f: Finding, dest: Path,
                  markdown: Environment) -> FindingPage:
    ev = load_evidence(fs, f)
    values = [o.value for o in ev.outputs]
    tol = tolerance_for(f, values)
    masks = mismatch_masks(values, tol)
    focus = union_mask(masks)
    # side by side, each member gets a share of the page's width
    member_cols = max(4, (2 * MAX_COLS) // max(1, len(ev.outputs)))
    columns = []
    for o, mask in zip(ev.outputs, masks):
        if o.value is None:
            columns.append(MemberColumn(o, "no value", None, None))
            continue
        table, text = _value_view(o.value, mask, focus, member_cols)
        columns.append(MemberColumn(o, describe_value(o.value), table, text))
    inputs = []
    for name, value in ev.inputs.items():
        # an input shaped like the outputs (element-wise operators) is cut to the same window
        table, text = _value_view(value, None, focus)
        inputs.append((name, describe_value(value), table, text))
    diffs, total = differences(ev.outputs, masks, inputs=ev.inputs)
    repro = read_reproducer(data.out_dir, f)
    repro_file = None
    if repro.text is not None:
        repro_file = f"{f.id}.repro.py"
        (dest / "findings" / repro_file).write_text(repro.text, encoding="utf-8")
    campaign = data.campaign_by_id.get(f.campaign_id)
    issue = issue_markdown(f, ev, campaign.campaign if campaign else None, repro, env=markdown)
    return FindingPage(f, ev, columns, inputs, diffs, total, tol, repro, repro_file, issue)


def _options(findings: list[Finding]) -> dict[str, list[tuple[str, int]]]:
    def counted(values):
        return sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0]))

    return {
        "class": counted(f.finding_class.value for f in findings),
        "library": counted(f.outlier_library or "(none)" for f in findings),
        "group": counted(f.group_key for f in findings),
        "status": counted("verified" if f.verified else "unverified" for f in findings),
    }


def causes(findings: list[Finding]) -> list[tuple[str, list[Finding]]]:
    """Findings folded by shared cause across APIs (:attr:`Finding.cause`: every flush-to-zero
    finding in one), the causes held by most findings first."""
    by: dict[str, list[Finding]] = {}
    for f in findings:
        by.setdefault(f.cause, []).append(f)
    return sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def build_report(out_dir: str | Path, campaign_id: int | None = None,
                 dest: str | Path | None = None) -> Path:
    """Write the report of ``<out_dir>/xamt.db`` to ``dest`` (default ``<out_dir>/report``).

    Returns the path of ``index.html``. Raises the errors of
    :func:`~xamt.report.model.open_findings` for a missing, empty or incompatible store.
    """
    out_dir = Path(out_dir)
    dest = (Path(dest) if dest is not None else out_dir / REPORT_DIR).resolve()
    _check_dest(dest)
    t0 = time.perf_counter()
    env = environment()
    work = dest.with_name(f".{dest.name}.building")
    if work.exists():
        shutil.rmtree(work)
    (work / "findings").mkdir(parents=True)
    (work / "assets").mkdir()
    try:
        with open_findings(out_dir) as (store, fs):
            data = read_report_data(store, fs, out_dir, campaign_id)
            markdown = environment(autoescape=False)
            pages = [_finding_page(data, fs, f, work, markdown) for f in data.findings]
        _write_pages(env, data, pages, work)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    _swap(work, dest)
    _log.info("report of %d findings written to %s in %.1f s", len(data.findings), dest,
              time.perf_counter() - t0)
    return dest / "index.html"


def _write_pages(env: Environment, data: ReportData, pages: list[FindingPage], work: Path) -> None:
    assets = resources.files("xamt.report") / "templates" / "assets"
    for name in _ASSETS:
        (work / "assets" / name).write_text((assets / name).read_text(encoding="utf-8"),
                                            encoding="utf-8")
    dispersion_svg, dispersion_note = plots.dispersion_per_group(data.groups)
    totals = {
        "executions": sum(cv.campaign.executions for cv in data.campaigns),
        "iterations": sum(cv.campaign.iterations for cv in data.campaigns),
        "duration": sum(cv.duration_s for cv in data.campaigns),
        "findings": len(data.findings),
        "verified": sum(1 for f in data.findings if f.verified),
        "bugs": sum(1 for f in data.findings if f.is_bug),
        "policies": sum(1 for f in data.findings if not f.is_bug),
    }
    index = env.get_template("index.html").render(
        data=data,
        totals=totals,
        options=_options(data.findings),
        causes=causes(data.findings),
        plot_classes=plots.findings_by_class_library(data.findings),
        plot_dispersion=dispersion_svg,
        dispersion_note=dispersion_note,
        plot_progress=plots.progress_over_time(data.campaigns),
        root="",
    )
    (work / "index.html").write_text(index, encoding="utf-8")
    (work / _MARKER).write_text("written by `xamt report`; the folder is replaced on the next run\n",
                                encoding="utf-8")
    template = env.get_template("finding.html")
    for i, page in enumerate(pages):
        html = template.render(
            data=data, page=page, f=page.finding, root="../",
            prev_id=pages[i - 1].finding.id if i > 0 else None,
            next_id=pages[i + 1].finding.id if i + 1 < len(pages) else None,
            versions=data.versions_for(page.finding),
        )
        (work / "findings" / f"{page.finding.id}.html").write_text(html, encoding="utf-8")


def _check_dest(dest: Path) -> None:
    # the folder is replaced as a whole: never take over one that holds something else
    if dest.exists() and (not dest.is_dir() or (any(dest.iterdir())
                                                and not (dest / _MARKER).is_file())):
        raise ReportError(
            f"{dest} exists and is not an Xamt report folder: it would be replaced; "
            "choose another --dest (or remove it)")


def _swap(work: Path, dest: Path) -> None:
    old = dest.with_name(f".{dest.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if dest.exists():
        dest.rename(old)
    work.rename(dest)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)
