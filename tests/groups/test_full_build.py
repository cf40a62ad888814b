"""The whole pipeline on real libraries: catalog, match, groups build (slow: minutes)."""
import io
import json
from contextlib import redirect_stdout

import pytest

pytestmark = pytest.mark.slow


def test_catalog_match_build_numpy_torch(tmp_path):
    pytest.importorskip("torch")
    from xamt.cli import main
    from xamt.groups.model import load_registry
    from xamt.store import Store

    out = str(tmp_path)
    assert main(["catalog", "--out", out, "--libs", "numpy,torch"]) == 0
    with redirect_stdout(io.StringIO()):
        assert main(["match", "--out", out, "--libs", "numpy,torch"]) == 0
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["groups", "build", "--out", out, "--libs", "numpy,torch", "--no-progress", "--json"]) == 0
    stats = json.loads(buf.getvalue())
    assert stats["cross_library_groups"] > 100 and stats["intra_relations_total"] > 100
    assert set(stats["rejection_reasons"]) <= {
        "raised", "crashed", "timeout", "oom", "differs", "not_comparable", "nondeterministic",
        "incomplete_plan", "unsupported_input", "plan_error", "annotated", "no_partner", "pending"}
    with Store(tmp_path / "xamt.db") as store:
        groups = load_registry(store)
    cross = [g for g in groups if g.relation == "cross_library"]
    assert all(set(g.libraries) == {"numpy", "torch"} for g in cross)
    assert all(g.seeds and g.member_info and len(g.members) == len(g.member_info) for g in groups)
    probed = [i for g in cross for i in g.member_info if i.dtypes]
    assert probed and all(i.accepted for i in probed)
    # a second build resumes everything
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["groups", "build", "--out", out, "--libs", "numpy,torch", "--no-progress", "--json"]) == 0
    again = json.loads(buf.getvalue())
    assert again["build"]["validated_now"] == 0 and again["cross_library_groups"] == stats["cross_library_groups"]
