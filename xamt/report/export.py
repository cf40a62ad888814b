"""One finding as a Markdown bug report or a JSON document; every finding as JSON.

The Markdown is written for the tracker of the outlier's library: a title, the versions, the
reproducer script, expected (what the agreeing libraries return) versus actual (what the outlier
returns or raises), the comparator's numbers and the input.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from xamt.findings import Campaign, Finding, FindingClass, FindingsStore
from xamt.log import get_logger
from xamt.report.evidence import (
    Evidence,
    MemberOutput,
    agreeing_members,
    describe_value,
    differences,
    load_evidence,
    mismatch_masks,
    to_jsonable,
    tolerance_for,
)
from xamt.report.model import PolicyNotABugError, get_finding, open_findings
from xamt.report.shared import ReproducerText, environment, read_reproducer

__all__ = [
    "ReproducerText",
    "read_reproducer",
    "finding_record",
    "findings_json",
    "export_json",
    "issue_markdown",
    "export_issue",
    "issue_title",
    "array_text",
]

_log = get_logger("report.export")

#: how a title describes what the outlier does, per finding class
_CLASS_PHRASES: dict[FindingClass, str] = {
    FindingClass.CRASH: "crashes the process",
    FindingClass.INTERNAL: "raises an internal error",
    FindingClass.STATUS: "fails where equivalent APIs succeed",
    FindingClass.SUBNORMAL: "handles subnormal numbers differently",
    FindingClass.NAN: "propagates NaN differently",
    FindingClass.PROMOTION: "promotes dtypes or overflows differently",
    FindingClass.DEFAULT: "uses a different default",
    FindingClass.PRECISION: "is less precise",
    FindingClass.VALUE: "returns different values",
    FindingClass.VALIDATION: "accepts an input that equivalent APIs reject",
    FindingClass.POLICY: "follows a documented policy",
}

#: arrays in Markdown text are summarised beyond this many elements (numpy's threshold)
_TEXT_THRESHOLD = 64


def _member_json(o: MemberOutput, with_value: bool) -> dict[str, Any]:
    d: dict[str, Any] = {"library": o.library, "api": o.api, "status": o.status,
                         "outlier": o.outlier}
    if o.same_as_outlier:  # on the outlier's side: its result is the outlier's
        d["same_as_outlier"] = True
    if with_value:
        d.update(value=to_jsonable(o.value), error_type=o.error_type,
                 error_message=o.error_message)
    return d


def finding_record(finding: Finding, evidence: Evidence, campaign: Campaign | None,
                   *, outputs: bool = True) -> dict[str, Any]:
    """``finding`` as a JSON-able dict (strict JSON: no NaN; arrays as dtype/shape/values)."""
    return {
        "id": finding.id,
        "campaign_id": finding.campaign_id,
        "group_key": finding.group_key,
        "relation": finding.relation,
        "member_apis": [m.get("api") for m in finding.members],
        "class": finding.finding_class.value,
        "outlier_library": finding.outlier_library,
        "outlier_api": finding.outlier_api,
        # the device the outlier ran on when it is not the CPU (the device oracle), else None
        "device": finding.summary.get("device"),
        "dtype": finding.dtype,
        "signature": finding.signature,
        # findings of other APIs that may share this one's cause show under the same cluster
        "cluster": finding.cause,
        "input": to_jsonable(evidence.inputs),
        "input_recipe": to_jsonable(finding.input_recipe),
        "members": [_member_json(o, outputs) for o in evidence.outputs],
        "summary": to_jsonable(finding.summary),
        "reproducer": finding.reproducer,
        "verified": finding.verified,
        # a documented policy is shown, never counted or exported as a bug
        "is_bug": finding.is_bug,
        "policy": finding.summary.get("policy"),
        "hits": finding.hits,
        "first_seen": finding.first_seen,
        "last_seen": finding.last_seen,
        "versions": dict(campaign.libraries) if campaign else {},
        "evidence_problem": evidence.problem,
    }


def findings_json(out_dir: str | Path, campaign_id: int | None = None) -> list[dict[str, Any]]:
    """Every finding of the store (or of one campaign) as JSON-able dicts, oldest first.

    The outputs' values are left out (see :func:`export_json` for one finding in full).
    """
    with open_findings(out_dir) as (_, fs):
        campaigns = {c.id: c for c in fs.campaigns()}
        return [{**finding_record(f, load_evidence(fs, f), campaigns.get(f.campaign_id),
                                  outputs=False), "occurrences": fs.occurrences(f.id)}
                for f in fs.findings(campaign_id)]


def export_json(out_dir: str | Path, finding_id: int) -> dict[str, Any]:
    """One finding in full (outputs included) as a JSON-able dict, plus the reproducer's text."""
    with open_findings(out_dir) as (_, fs):
        f = get_finding(fs, finding_id)
        record = finding_record(f, load_evidence(fs, f), fs.campaign(f.campaign_id))
        record["occurrences"] = fs.occurrences(f.id)
    record["reproducer_text"] = read_reproducer(out_dir, f).text
    return record


# -- Markdown ---------------------------------------------------------------------------------
def array_text(value: Any) -> str:
    """A value as text for a bug report: arrays with dtype and shape, summarised when large."""
    if isinstance(value, (np.ndarray, np.generic)):
        a = np.asarray(value)
        shown = a.astype(np.float64) if a.dtype.kind == "V" else a
        try:
            body = np.array2string(shown, threshold=_TEXT_THRESHOLD, edgeitems=2,
                                   floatmode="unique", max_line_width=100, separator=", ")
        except (TypeError, ValueError):
            body = repr(a.tolist())
        return f"{describe_value(a) if a.ndim else str(a.dtype)}: {body}"
    return repr(value)


def issue_title(finding: Finding, agreeing: list[MemberOutput]) -> str:
    """One line: which API does what, on which dtype, compared with which."""
    what = _CLASS_PHRASES.get(finding.finding_class, "behaves differently")
    dtype = f" on {finding.dtype} input" if finding.dtype else ""
    if finding.outlier_api:
        others = ", ".join(f"`{o.api}`" for o in agreeing[:3])
        extra = f" (unlike {others})" if others and finding.finding_class not in (
            FindingClass.CRASH, FindingClass.INTERNAL) else ""
        return f"`{finding.outlier_api}` {what}{dtype}{extra}"
    apis = " and ".join(f"`{m.get('api')}`" for m in finding.members[:3])
    return f"{apis} disagree{dtype} ({finding.finding_class.value})"


def _outcome_text(o: MemberOutput) -> str:
    if o.status == "ok":
        return array_text(o.value)
    error = ": ".join(x for x in (o.error_type, o.error_message) if x)
    return f"status {o.status}" + (f" — {error}" if error else "")


#: issue reports list at most this many differing elements
_ISSUE_DIFFERENCES = 10


#: the comparator's measures an issue shows (the rest stays in the JSON)
_SUMMARY_KEYS = ("why", "reference", "policy", "max_abs_diff", "max_rel_diff", "mismatches", "rtol", "atol",
                 "error_type", "error_message", "status", "signal", "relation_score", "device", "cpu_api")


def summary_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The measures an issue's table shows, each value on one line of at most 200 characters."""
    rows = []
    for key in _SUMMARY_KEYS:
        value = summary.get(key)
        if value is None or value == "":
            continue
        if isinstance(value, dict):
            value = "; ".join(f"{k}: {v}" for k, v in value.items() if k != "reason") or value
        text = " ".join(str(value).split()).replace("|", "\\|")
        rows.append((key, text if len(text) <= 200 else text[:197] + "..."))
    return rows


def issue_markdown(finding: Finding, evidence: Evidence, campaign: Campaign | None,
                   reproducer: ReproducerText, *, env: Any = None) -> str:
    """The Markdown bug report of one finding (``env``: a Jinja environment without HTML
    escaping, from :func:`xamt.report.shared.environment`, to reuse across many findings)."""
    outputs = evidence.outputs
    tol = tolerance_for(finding, [o.value for o in outputs])
    agreeing = agreeing_members(outputs, tol)
    outliers = [o for o in outputs if o.outlier]
    masks = mismatch_masks([o.value for o in outputs], tol)
    rows, total = differences(outputs, masks, _ISSUE_DIFFERENCES, evidence.inputs)
    # the table's columns: inputs shaped like the outputs, the expected value, each outlier
    names = list(evidence.inputs)
    input_cols = [i for i in range(len(names)) if rows and rows[0].inputs[i] != "—"]
    # by identity: outputs hold arrays, so == would compare them element-wise
    position = {id(o): i for i, o in enumerate(outputs)}
    expected_col = position[id(agreeing[0])] if agreeing else None
    outlier_cols = [position[id(o)] for o in outliers]
    versions = dict(campaign.libraries) if campaign else {}
    template = (env or environment(autoescape=False)).get_template("issue.md.j2")
    return template.render(
        f=finding,
        title=issue_title(finding, agreeing),
        versions=versions,
        python=(campaign.settings.get("python") if campaign else None),
        platform=(campaign.settings.get("platform") if campaign else None),
        reproducer=reproducer,
        agreeing=agreeing,
        outliers=outliers,
        others=[o for o in outputs if not o.outlier and id(o) not in {id(a) for a in agreeing}],
        expected=_outcome_text(agreeing[0]) if agreeing else None,
        inputs={k: array_text(v) for k, v in evidence.inputs.items()},
        outcome_text=_outcome_text,
        diff_rows=rows,
        diff_total=total,
        input_names=[names[i] for i in input_cols],
        input_cols=input_cols,
        expected_col=expected_col,
        outlier_cols=outlier_cols,
        outputs=outputs,
        summary=finding.summary,
        summary_rows=summary_rows(finding.summary),
        # a literal reproducer holds the input written out: no input section after it
        literal=finding.summary.get("reproducer_form") == "literal" and reproducer.text is not None,
        tolerance=tol,
        evidence=evidence,
    ).strip() + "\n"


def export_issue(out_dir: str | Path, finding_id: int) -> str:
    """The Markdown bug report of finding ``finding_id`` in ``<out_dir>/xamt.db``.

    Raises:
        PolicyNotABugError: the finding follows a documented policy: it is no bug to report
            (its JSON, ``--format json``, still shows it in full).
    """
    with open_findings(out_dir) as (_, fs):
        f = get_finding(fs, finding_id)
        if not f.is_bug:
            policy = f.summary.get("policy") or {}
            raise PolicyNotABugError(
                f"finding {finding_id} follows the documented policy {policy.get('name')!r}, "
                f"not a bug to report: {policy.get('reason', '')} "
                f"(`xamt findings export {finding_id} --format json` shows it)")
        evidence = load_evidence(fs, f)
        campaign = fs.campaign(f.campaign_id)
    return issue_markdown(f, evidence, campaign, read_reproducer(out_dir, f))
