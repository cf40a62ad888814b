"""What the HTML report and the Markdown export share: a finding's reproducer text and the Jinja
environment of the report's templates (with its filters).
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from xamt.findings import Finding

__all__ = ["ReproducerText", "read_reproducer", "environment"]


@dataclass
class ReproducerText:
    """The reproducer script's text, or why there is none."""

    path: str | None
    text: str | None
    problem: str | None = None


def read_reproducer(out_dir: str | Path, finding: Finding) -> ReproducerText:
    """Read ``finding``'s reproducer (its path is relative to the output folder)."""
    if not finding.reproducer:
        return ReproducerText(None, None, "no reproducer was written for this finding")
    root = Path(out_dir).resolve()
    path = (root / finding.reproducer).resolve()
    if not path.is_relative_to(root):
        return ReproducerText(finding.reproducer, None,
                              f"reproducer path {finding.reproducer!r} leaves the output folder")
    try:
        return ReproducerText(finding.reproducer, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return ReproducerText(finding.reproducer, None, f"cannot read the reproducer: {exc}")



def environment(*, autoescape: bool = True) -> Environment:
    """The Jinja environment of the report's templates (HTML escaped, undefined names fail)."""
    env = Environment(
        loader=PackageLoader("xamt.report", "templates"),
        autoescape=select_autoescape(["html"]) if autoescape else False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["when"] = _when
    env.filters["duration"] = _duration
    env.filters["num"] = _num
    return env


def _when(t: float | None) -> str:
    return "—" if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def _duration(s: float | None) -> str:
    if s is None:
        return "—"
    if s < 120:
        return f"{s:.1f} s"
    m = int(s // 60)
    return f"{m // 60} h {m % 60:02d} min" if m >= 60 else f"{m} min {int(s % 60):02d} s"


def _num(x: Any) -> str:
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:.4g}" if math.isfinite(x) else str(x)
    if isinstance(x, (dict, list)):
        return json.dumps(x, default=str)
    return str(x)
