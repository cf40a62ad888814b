import json

import pytest

from xamt.cli import main
from xamt.matching.engine import load_groups
from xamt.store import Store


def test_match_json_and_stored_groups(tmp_path, capsys):
    pytest.importorskip("numpy")
    pytest.importorskip("jax")
    assert main(["match", "--libs", "numpy,jax", "--out", str(tmp_path), "--json",
                 "--relations", "cross"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["groups"] and all(g["relation"] == "cross_library" for g in doc["groups"])
    first = doc["groups"][0]
    assert {"key", "relation", "equivalence", "confidence", "members", "slots"} <= set(first)
    member = first["members"][0]
    assert {"library", "qualname", "target", "call", "plan"} <= set(member)
    assert doc["stats"]["mined"].keys() == {"numpy", "jax"}
    with Store(tmp_path / "xamt.db") as store:
        stored = load_groups(store, "cross_library")
    assert len(stored.groups) == len(doc["groups"])


def test_match_summary_and_quality(tmp_path, capsys):
    pytest.importorskip("numpy")
    pytest.importorskip("jax")
    assert main(["match", "--libs", "numpy,jax", "--out", str(tmp_path), "--quality"]) == 0
    out = capsys.readouterr().out
    assert "cross-library groups:" in out and "recall vs array_api" in out
