"""The report's plots, drawn with matplotlib and returned as inline SVG text.

Figures are built with the object-oriented API (:class:`matplotlib.figure.Figure`, no pyplot), so
nothing touches matplotlib's global figure manager or backend choice. Text stays text in the SVG
(``svg.fonttype = none``): it is searchable and small, and the browser draws it. Each function
returns None when there is nothing to plot; the page then says so instead of showing an empty
frame.
"""
from __future__ import annotations

import io
import re
from collections import Counter
from typing import Sequence

import numpy as np

from xamt.findings import Finding
from xamt.report.model import CampaignView, GroupView, dispersion_bin_labels

__all__ = ["findings_by_class_library", "dispersion_per_group", "progress_over_time",
           "MAX_GROUP_ROWS"]

#: the dispersion plot shows at most this many groups (the most dispersed first)
MAX_GROUP_ROWS = 30

_XML_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.S)


def _svg(fig, name: str) -> str:
    import matplotlib

    buf = io.StringIO()
    # a per-plot salt keeps element ids distinct between the SVGs inlined in one page
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"xamt-{name}"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return _XML_PROLOGUE.sub("", buf.getvalue(), count=1)


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _annotate(ax, counts: np.ndarray, norm_max: float) -> None:
    for (r, c), n in np.ndenumerate(counts):
        if n:
            ax.text(c, r, str(int(n)), ha="center", va="center", fontsize=8,
                    color="white" if n > 0.6 * norm_max else "black")


def findings_by_class_library(findings: Sequence[Finding]) -> str | None:
    """Heat map of finding counts: class (rows) × outlier library (columns)."""
    if not findings:
        return None
    pairs = Counter((f.finding_class.value, f.outlier_library or "(none)") for f in findings)
    classes = sorted({c for c, _ in pairs}, key=lambda c: -sum(n for (k, _), n in pairs.items() if k == c))
    libs = sorted({lib for _, lib in pairs})
    counts = np.array([[pairs.get((c, lib), 0) for lib in libs] for c in classes])
    fig = _figure(1.6 + 0.9 * len(libs), 1.0 + 0.42 * len(classes))
    ax = fig.add_subplot()
    ax.imshow(np.ma.masked_equal(counts, 0), cmap="Reds", vmin=0, vmax=max(1, counts.max()),
              aspect="auto")
    _annotate(ax, counts, counts.max())
    ax.set_xticks(range(len(libs)), libs, rotation=30, ha="right")
    ax.set_yticks(range(len(classes)), classes)
    ax.set_xlabel("outlier library")
    ax.set_ylabel("finding class")
    ax.set_title("Findings by class and outlier library", fontsize=10)
    ax.set_xticks(np.arange(len(libs) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(classes) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="#ddd", linewidth=0.6)
    ax.tick_params(which="minor", length=0)
    return _svg(fig, "classes")


def dispersion_per_group(groups: Sequence[GroupView]) -> tuple[str | None, str | None]:
    """Heat map of each group's log10(dispersion) histogram; returns ``(svg, note)``.

    Rows are groups, most dispersed first, at most :data:`MAX_GROUP_ROWS` (the note says how
    many were left out).
    """
    from matplotlib.colors import LogNorm

    rows = [g for g in groups if sum(g.histogram)]
    if not rows:
        return None, None
    note = None
    if len(rows) > MAX_GROUP_ROWS:
        note = f"the {MAX_GROUP_ROWS} most dispersed of {len(rows)} groups"
        rows = rows[:MAX_GROUP_ROWS]
    counts = np.array([g.histogram for g in rows], dtype=float)
    labels = dispersion_bin_labels()
    fig = _figure(2.6 + 0.62 * len(labels), 1.1 + 0.3 * len(rows))
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_equal(counts, 0), cmap="viridis", aspect="auto",
                      norm=LogNorm(vmin=1, vmax=max(2.0, counts.max())))
    if len(rows) <= 15:
        for (r, c), n in np.ndenumerate(counts):
            if n:
                ax.text(c, r, f"{int(n)}", ha="center", va="center", fontsize=7,
                        color="black" if n > counts.max() ** 0.75 else "white")
    ax.set_xticks(range(len(labels)), labels, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), [_short(g.group_key) for g in rows], fontsize=8)
    ax.set_xlabel("log10(dispersion) of an execution")
    ax.set_title("Dispersion distribution per group (executions per bin)", fontsize=10)
    fig.colorbar(image, ax=ax, label="executions", shrink=0.8)
    return _svg(fig, "dispersion"), note


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def progress_over_time(campaigns: Sequence[CampaignView]) -> str | None:
    """Executions and findings against time since the campaign's start, one line per campaign."""
    series = [cv for cv in campaigns if cv.samples]
    if not series:
        return None
    fig = _figure(7.0, 4.2)
    top, bottom = fig.subplots(2, 1, sharex=True)
    for cv in series:
        t = [s["t"] - cv.campaign.started for s in cv.samples]
        label = f"campaign {cv.campaign.id}"
        top.plot(t, [s["executions"] for s in cv.samples], label=label)
        bottom.step(t, [s["findings"] for s in cv.samples], where="post", label=label)
    top.set_ylabel("executions")
    bottom.set_ylabel("findings")
    bottom.set_xlabel("seconds since the campaign started")
    top.set_title("Executions and findings over time", fontsize=10)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    bottom.yaxis.get_major_locator().set_params(integer=True)
    if len(series) > 1:
        top.legend(fontsize=8)
    return _svg(fig, "progress")
