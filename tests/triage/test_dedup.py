"""Root causes: the trigger of an input, the key before and after triage."""
from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest

from xamt.errors import DataFileError
from xamt.findings import FindingClass
from xamt.triage.dedup import Candidate, finding_signature, load_triage_per_cause, trigger


@pytest.mark.parametrize("values, want", [
    ({0: np.array([1.0, np.nan, np.inf], np.float32)}, "nan"),
    ({0: np.array([1.0, -np.inf], np.float64), 1: np.array([np.inf])}, "+inf"),
    ({0: np.array([1.0, 1e-45], np.float32)}, "subnormal"),
    ({0: np.array([1, np.iinfo(np.int32).min], np.int32)}, "int-extreme"),
    ({0: np.array([0, 255], np.uint8)}, "int-extreme"),
    ({0: np.array([3.0, 1e38], np.float32)}, "large"),
    ({0: np.array([300.0], np.float16)}, "large"),
    ({0: np.zeros((0, 3), np.float32)}, "empty"),
    ({0: np.array([1.0, -0.0])}, "-0"),
    ({0: np.array([1.0, -2.0])}, "negative"),
    ({0: np.array([1.0, 2.0]), 1: -3.5}, "negative"),
    ({0: np.zeros(3, np.int64)}, "zero"),
    ({0: np.array([1.0, 2.0]), 1: "mean", 2: None}, "ordinary"),
    ({0: [np.array([1.0]), np.array([np.nan])]}, "nan"),
])
def test_trigger_is_the_most_telling_kind_of_value(values, want):
    assert trigger(values) == want


def test_the_signature_is_the_trigger_the_rule_or_how_a_crash_died():
    vals = {0: np.array([1.0, np.inf], np.float32)}
    assert finding_signature(FindingClass.VALUE, vals) == "+inf"
    assert finding_signature(FindingClass.SUBNORMAL, {0: np.float32([1e-45, 1])}) == "subnormal"
    assert finding_signature(FindingClass.STATUS, vals, "ValueError: # must be positive") \
        == "ValueError: # must be positive"
    assert finding_signature(FindingClass.VALIDATION, vals, "returns where others raise | x") \
        == "returns where others raise | x"
    assert finding_signature(FindingClass.CRASH, vals, status="timeout") == "timeout"
    # a validation finding of a value divergence has no rule: its trigger keys it
    assert finding_signature(FindingClass.VALIDATION, vals) == "+inf"
    # float32 and float64 of one cause have one signature
    assert finding_signature(FindingClass.NAN, {0: np.float64([np.nan])}) == \
        finding_signature(FindingClass.NAN, {0: np.float32([np.nan])})


def test_the_cause_before_triage_names_the_api_signal_and_trigger():
    group = NS(key="g", members=[NS(qualname="numpy.exp"), NS(qualname="jax.numpy.exp")])
    cand = Candidate(group=group, input=None, values={0: np.float32([np.inf])}, members=[0, 1],
                     results=[], kind="value", member=1, signature="float32/1i")
    assert cand.cause == ("jax.numpy.exp", "value", "+inf")
    status = Candidate(group=group, input=None, values={0: np.float32([np.inf])}, members=[0, 1],
                       results=[], kind="status", member=0, signature="ValueError: #")
    assert status.cause == ("numpy.exp", "status", "ValueError: #")


def test_triage_per_cause_is_checked(tmp_path):
    assert load_triage_per_cause() >= 1
    bad = tmp_path / "triage.toml"
    bad.write_text("[dedup]\ntriage_per_cause = 0\n")
    with pytest.raises(DataFileError, match="triage_per_cause"):
        load_triage_per_cause(bad)
