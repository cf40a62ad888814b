import json

import numpy as np
import pytest

from sandbox import codec
from xamt.findings import Finding, FindingClass
from xamt.report.evidence import (
    MAX_COLS,
    MAX_ROWS,
    MemberOutput,
    Tolerance,
    agreeing_members,
    array_table,
    decode_evidence,
    differences,
    mismatch_masks,
    to_jsonable,
    tolerance_for,
)

EXACT = Tolerance(0.0, 0.0, "test")
LOOSE = Tolerance(1e-3, 1e-3, "test")
MEMBERS = [{"library": "a", "api": "a.f", "status": "ok"},
           {"library": "b", "api": "b.f", "status": "ok"},
           {"library": "c", "api": "c.f", "status": "ok"}]


def finding(**kw):
    base = dict(campaign_id=1, group_key="f", relation="cross_library",
                finding_class=FindingClass.VALUE, outlier_library="b", outlier_api="b.f",
                dtype="float32", signature="s", members=MEMBERS)
    base.update(kw)
    return Finding(**base)


def test_the_outlier_is_marked_where_it_leaves_the_majority():
    good = np.array([1.0, 2.0, np.nan, 4.0])
    bad = np.array([1.0, 2.5, np.nan, 4.0000001])
    masks = mismatch_masks([good, bad, good.copy()], LOOSE)
    assert masks[1].tolist() == [False, True, False, False]  # NaN == NaN; 1e-7 within tol
    assert not masks[0].any() and not masks[2].any()


def test_two_members_that_disagree_are_both_marked():
    masks = mismatch_masks([np.array([1, 2, 3]), np.array([1, 2, 4])], EXACT)
    assert masks[0].tolist() == masks[1].tolist() == [False, False, True]


def test_values_without_a_comparable_partner_get_no_mask():
    masks = mismatch_masks([np.zeros(3), np.zeros(4), None, "text"], EXACT)
    assert masks == [None, None, None, None]


def test_integers_compare_exactly_and_bfloat16_as_floats():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    big = np.array([2**62, 5], dtype=np.int64)
    masks = mismatch_masks([big, big + np.array([1, 0]), big.copy()], LOOSE)
    assert masks[1].tolist() == [True, False]  # a float64 cast would lose the +1
    b = np.array([1.5, 2.0], dtype=ml_dtypes.bfloat16)
    masks = mismatch_masks([b, np.array([1.5, 3.0], dtype=np.float32), b.copy()], LOOSE)
    assert masks[1].tolist() == [False, True]


def test_tolerance_comes_from_the_comparator_or_the_dtype():
    f = finding(summary={"rtol": 1e-5, "atol": 1e-8})
    assert tolerance_for(f, [np.zeros(2, np.float16)]) == Tolerance(1e-5, 1e-8, "the comparator's")
    t32 = tolerance_for(finding(), [np.zeros(2, np.float32), np.zeros(2, np.float64)])
    assert t32.rtol == pytest.approx(np.finfo(np.float32).eps ** 0.5)
    assert tolerance_for(finding(), [np.zeros(2, np.int32)]).rtol == 0.0


def test_agreeing_members_exclude_the_outlier_and_failures():
    outs = [MemberOutput("a", "a.f", "ok", np.array([1.0, 2.0])),
            MemberOutput("b", "b.f", "ok", np.array([1.0, 9.0]), outlier=True),
            MemberOutput("c", "c.f", "ok", np.array([1.0, 2.0])),
            MemberOutput("d", "d.f", "error", None, "TypeError", "no")]
    assert [o.api for o in agreeing_members(outs, EXACT)] == ["a.f", "c.f"]


def test_big_arrays_are_cut_around_the_first_difference():
    a = np.arange(40 * 30, dtype=np.float64).reshape(40, 30)
    mask = np.zeros(a.shape, bool)
    mask[35, 25] = True
    t = array_table(a, mask, focus=mask)
    assert len(t.rows) == MAX_ROWS and len(t.columns) == MAX_COLS
    cells = {(label, t.columns[i]): c for label, row in t.rows for i, c in enumerate(row)}
    hit = cells[("[35, :]", "25")]
    assert hit.differs and hit.focus and hit.text == str(a[35, 25])
    assert t.differing == 1 and "rows 24–39 of 40" in t.note and "columns" in t.note
    # without a difference the window starts at the top left
    plain = array_table(a)
    assert plain.rows[0][0] == "[0, :]" and plain.columns[0] == "0"


def test_1d_arrays_wrap_and_long_numbers_are_shortened():
    a = np.linspace(0, 1, 25) / 3
    t = array_table(a)
    assert [label for label, _ in t.rows] == ["[0]", "[10]", "[20]"]
    assert len(t.rows[-1][1]) == 5 and t.note is None
    third = t.rows[0][1][3]
    assert third.full == str(a[3]) and len(third.text) < len(third.full)
    scalar = array_table(np.array(2.5, dtype=np.float32), np.array(True))
    assert scalar.scalar and scalar.rows[0][1][0].differs


def test_differences_list_every_members_value_and_the_inputs():
    x = np.array([[0.0, np.nan], [1.0, 2.0]])
    good, bad = np.maximum(x, 0), np.nan_to_num(np.maximum(x, 0))
    outs = [MemberOutput("a", "a.f", "ok", good), MemberOutput("b", "b.f", "ok", bad, outlier=True)]
    rows, total = differences(outs, mismatch_masks([good, bad], EXACT), inputs={"x": x, "k": 3})
    assert total == 1 and rows[0].label == "[0, 1]"
    assert rows[0].values == ["nan", "0.0"] and rows[0].inputs == ["nan", "—"]


def test_decode_evidence_round_trip_and_broken_blobs():
    f = finding()
    outputs = [{"status": "ok", "value": np.ones(2, np.float32), "error_type": None,
                "error_message": None}] * 2 + [
        {"status": "timeout", "value": None, "error_type": None, "error_message": None}]
    ev = decode_evidence(f, codec.dumps({"x": np.zeros(2)}), codec.dumps(outputs))
    assert ev.problem is None and ev.outputs[1].outlier and ev.outputs[2].status == "timeout"
    assert ev.outputs[0].value.dtype == np.float32
    broken = decode_evidence(f, b"\xc1garbage", codec.dumps(outputs[:2]))
    assert "inputs cannot be decoded" in broken.problem and "2 entries for 3" in broken.problem
    assert [o.api for o in broken.outputs] == ["a.f", "b.f", "c.f"]
    assert decode_evidence(f, None, None).problem == "no evidence stored for this finding"


def test_to_jsonable_is_strict_json():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    value = {"x": np.array([1.0, np.nan, -np.inf]), "b": np.array([0.5], ml_dtypes.bfloat16),
             "c": np.complex64(1 + 2j), "axes": (0, 1), "d": np.dtype("int8")}
    j = to_jsonable(value)
    text = json.dumps(j, allow_nan=False)
    assert j["x"] == {"dtype": "float64", "shape": [3], "values": [1.0, "nan", "-inf"]}
    assert j["b"]["values"] == [0.5] and j["b"]["dtype"] == "bfloat16"
    assert j["c"]["values"] == {"real": 1.0, "imag": 2.0}
    assert j["axes"] == [0, 1] and j["d"] == "int8" and "NaN" not in text
