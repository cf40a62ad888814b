import json

import pytest

from tests.report.conftest import REPRO
from xamt.report.export import export_issue, export_json, findings_json, read_reproducer
from xamt.report.model import UnknownFindingError


def test_findings_json_holds_what_machines_need(campaign_out):
    out, ids = campaign_out
    records = findings_json(out)
    json.dumps(records, allow_nan=False)  # strict JSON, NaN inputs included
    by_id = {r["id"]: r for r in records}
    value = by_id[ids["value"]]
    assert value["group_key"] == "sum/reduction" and value["class"] == "value"
    assert value["member_apis"] == ["numpy.sum", "torch.sum", "tensorflow.math.reduce_sum",
                                    "jax.numpy.sum"]
    assert (value["outlier_library"], value["outlier_api"]) == (
        "tensorflow", "tensorflow.math.reduce_sum")
    assert value["dtype"] == "float32" and value["reproducer"] == "findings/1/repro.py"
    assert value["input"]["x"] == {"dtype": "float32", "shape": [2, 3],
                                   "values": [[1.0, 2.0, 3.0], [pytest.approx(1.4e-45), 5.0, 6.0]]}
    assert value["input"]["axis"] == 1
    assert by_id[ids["nan"]]["input"]["x1"]["values"][3][4] == "nan"
    assert "value" not in value["members"][0]  # the list stays light; export has outputs
    assert [r["id"] for r in findings_json(out, campaign_id=1)] == [r["id"] for r in records]


def test_export_json_has_outputs_and_the_reproducer(campaign_out):
    out, ids = campaign_out
    doc = export_json(out, ids["crash"])
    json.dumps(doc, allow_nan=False)
    crashed = [m for m in doc["members"] if m["outlier"]]
    assert crashed == [{"library": "jax", "api": "jax.nn.gelu", "status": "crash",
                        "outlier": True, "value": None, "error_type": "signal",
                        "error_message": "worker died with SIGSEGV"}]
    assert doc["versions"]["jax"] == "0.10.2" and doc["reproducer_text"] is None
    assert export_json(out, ids["value"])["reproducer_text"] == REPRO


def test_issue_for_a_value_finding(campaign_out):
    out, ids = campaign_out
    md = export_issue(out, ids["value"])
    title = md.splitlines()[0]
    assert title.startswith("# `tensorflow.math.reduce_sum` returns different values")
    assert "float32" in title and "`numpy.sum`" in title
    assert "| tensorflow | 2.21.0 |" in md and "Python 3.11.9" in md
    assert "```python\n" + REPRO.rstrip() + "\n```" in md
    assert "`numpy.sum`, `torch.sum`, `jax.numpy.sum`, which agree with each other" in md
    # expected vs actual, and the one differing element with both values
    assert "**Expected**" in md and "**Actual** (`tensorflow.math.reduce_sum`)" in md
    assert "| [1] | 11.0 | 12.5 |" in md
    assert "| max_abs_diff | 1.5 |" in md


def test_issue_for_a_crash_and_for_a_nan_finding(campaign_out):
    out, ids = campaign_out
    crash = export_issue(out, ids["crash"])
    assert crash.startswith("# `jax.nn.gelu` crashes the process on float32 input")
    assert "status crash — signal: worker died with SIGSEGV" in crash
    assert "No reproducer script" in crash
    nan = export_issue(out, ids["nan"])
    # the differing elements show the input there too (an element-wise operator)
    assert "| index | input `x1` | expected | `torch.maximum` |" in nan
    assert "| [3, 4] | nan | nan | 0.0 |" in nan and "| [19, 14] | 1.0 | 1.0 | -7.0 |" in nan


def test_unknown_finding(campaign_out):
    out, _ = campaign_out
    with pytest.raises(UnknownFindingError, match="no finding with id 42"):
        export_issue(out, 42)
    with pytest.raises(UnknownFindingError):
        export_json(out, 42)


def test_reproducer_paths_stay_inside_the_output_folder(campaign_out):
    out, _ = campaign_out
    from xamt.report.model import get_finding, open_findings

    with open_findings(out) as (_, fs):
        f = get_finding(fs, 1)
    f.reproducer = "../../etc/passwd"
    assert "leaves the output folder" in read_reproducer(out, f).problem
    f.reproducer = "findings/1/missing.py"
    assert "cannot read" in read_reproducer(out, f).problem


def test_issue_for_an_eager_compiled_pair_marks_the_flagged_member(tmp_path):
    # both members share one name; the outlier is told apart by its call style and by the
    # member's own flag (by name alone both or neither would be the outlier)
    import numpy as np

    from sandbox import codec
    from tests.report.conftest import VERSIONS, ok
    from xamt.findings import Campaign, Finding, FindingClass, FindingsStore
    from xamt.report.evidence import load_evidence
    from xamt.report.export import export_issue
    from xamt.report.model import get_finding, open_findings
    from xamt.store import Store, default_db_path

    members = [{"library": "torch", "api": "torch.nn.functional.gelu", "call": "function",
                "status": "ok", "outlier": True},
               {"library": "torch", "api": "torch.nn.functional.gelu", "call": "compiled",
                "status": "ok", "outlier": False}]
    out = tmp_path / "xamt-out"
    with Store(default_db_path(out)) as st:
        fs = FindingsStore(st)
        cid = fs.start_campaign(Campaign(libraries=dict(VERSIONS), budget_s=60, seed=1, workers=2,
                                         started=1_700_000_000.0))
        f = Finding(cid, "eager_compiled:torch.nn.functional.gelu", "eager_compiled",
                    FindingClass.VALUE, "torch", "torch.nn.functional.gelu [function]", "float32",
                    "float32/n", members, first_seen=1_700_000_001.0)
        inputs = codec.dumps({"input": np.array([-3.0, 0.0, 3.0], np.float32)})
        outputs = codec.dumps([ok(np.array([-0.004, 0.0, 2.9], np.float32)),
                               ok(np.array([-0.005, 0.0, 2.99], np.float32))])
        fid, _ = fs.file(f, inputs, outputs)
    md = export_issue(out, fid)
    assert md.splitlines()[0].startswith("# `torch.nn.functional.gelu [function]`")
    with open_findings(out) as (_, fs):
        ev = load_evidence(fs, get_finding(fs, fid))
    assert [o.outlier for o in ev.outputs] == [True, False]


def test_members_on_the_outlier_s_side_say_so_in_the_json(tmp_path):
    """tf.math.log1p gave the blamed tnp.log1p's NaN too: the record triage keeps marks it
    (``same_as_outlier``), and a reader of findings.json must see it on the outlier's side."""
    import numpy as np

    from sandbox import codec
    from tests.report.conftest import VERSIONS, ok
    from xamt.findings import Campaign, Finding, FindingClass, FindingsStore
    from xamt.report.export import findings_json
    from xamt.store import Store, default_db_path

    members = [{"library": "numpy", "api": "numpy.log1p", "status": "ok", "outlier": False},
               {"library": "tensorflow", "api": "tensorflow.experimental.numpy.log1p", "status": "ok",
                "outlier": True},
               {"library": "tensorflow", "api": "tensorflow.math.log1p", "status": "ok", "outlier": False,
                "same_as_outlier": True}]
    out = tmp_path / "xamt-out"
    with Store(default_db_path(out)) as st:
        fs = FindingsStore(st)
        cid = fs.start_campaign(Campaign(libraries=dict(VERSIONS), budget_s=60, seed=1, workers=2,
                                         started=1_700_000_000.0))
        f = Finding(cid, "x:log1p/elementwise", "cross_library", FindingClass.NAN, "tensorflow",
                    "tensorflow.experimental.numpy.log1p", "complex64", "nan", members,
                    first_seen=1_700_000_001.0)
        inputs = codec.dumps({"x": np.array([-1.0 + 0j], np.complex64)})
        outputs = codec.dumps([ok(np.array([-np.inf + 0j], np.complex64)),
                               ok(np.array([np.nan + 0j], np.complex64)),
                               ok(np.array([np.nan + 0j], np.complex64))])
        fs.file(f, inputs, outputs)
    record = findings_json(out)[0]
    assert [m.get("same_as_outlier", False) for m in record["members"]] == [False, False, True]
    assert [m["outlier"] for m in record["members"]] == [False, True, False]
