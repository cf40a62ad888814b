"""Campaigns and registry builds on a real Ray cluster of two 1-CPU nodes on loopback
(:class:`xamt.exec.loopback.LoopbackCluster`), run as a user runs them: ``xamt fuzz --ray ADDRESS``.

The short campaign runs by default; losing a node mid-campaign and resuming after the driver
was killed are marked slow."""
import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("ray") is None:
    pytest.skip("Ray is not installed here (setup.py pins it; `make venv` installs it)", allow_module_level=True)

from xamt.exec.loopback import LoopbackCluster, wait_until  # noqa: E402
from xamt.findings import FindingsStore  # noqa: E402
from xamt.store import Store  # noqa: E402

from tests.fuzz.test_campaign import make_store  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster():
    with LoopbackCluster(nodes=2, cpus=1) as c:
        yield c


def _fuzz(out: Path, cluster: LoopbackCluster, *extra: str, budget: str = "25s") -> subprocess.Popen:
    env = dict(cluster.env, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "xamt.cli", "fuzz", "--out", str(out), "--libs", "numpy",
           "--budget", budget, "--no-progress", "--timeout", "5", "--seed", "3",
           "--ray", cluster.address, *extra]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _campaign(out: Path):
    with Store(out / "xamt.db") as st:
        fs = FindingsStore(st)
        c = fs.campaign()
        return c, fs.findings(c.id) if c else []


def test_campaign_runs_on_both_nodes_and_files_verified_findings(cluster, tmp_path):
    out = tmp_path / "two-nodes"
    make_store(out)
    proc = _fuzz(out, cluster)
    text, _ = proc.communicate(timeout=240)
    assert proc.returncode == 0, text
    c, findings = _campaign(out)
    run = c.settings["ray_run"]
    assert c.status == "done" and c.iterations > 50, text
    assert run["nodes"] == ["n0", "n1"] and run["workers"] == {"n0": 1, "n1": 1}
    # sharded by group: each node ran iterations, and they add up to the campaign's
    assert all(run["iterations_by_node"].get(n, 0) > 0 for n in ("n0", "n1")), run
    assert sum(run["iterations_by_node"].values()) == c.iterations
    assert not run["lost"] and "ray at 127.0.0.1" in text
    # triage ran its tasks on the cluster and replayed on the driver: verified findings
    assert findings and all(f.verified and (out / f.reproducer).exists() for f in findings)
    assert {f.group_key for f in findings} >= {"t:max", "t:exp"}


def test_a_bad_address_is_a_clear_error(tmp_path):
    out = tmp_path / "nowhere"
    make_store(out)
    proc = subprocess.run([sys.executable, "-m", "xamt.cli", "fuzz", "--out", str(out), "--libs", "numpy",
                           "--budget", "5s", "--no-progress", "--ray", "auto"],
                          cwd=ROOT, env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "RAY_ADDRESS" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_a_lost_node_hands_its_groups_on_and_nothing_is_lost(tmp_path):
    out = tmp_path / "lose"
    make_store(out)
    with LoopbackCluster(nodes=2, cpus=1) as c:
        proc = _fuzz(out, c, budget="45s")
        # some findings filed before the node goes
        assert wait_until(lambda: len(_safe_findings(out)) >= 2, 90), "no finding filed in 90 s"
        before = {f.id: f.verified for f in _safe_findings(out)}
        c.kill_node(1)
        text, _ = proc.communicate(timeout=240)
        assert proc.returncode == 0, text
        camp, findings = _campaign(out)
    assert camp.status == "done"
    run = camp.settings["ray_run"]
    assert run["lost"] == ["n1"], run
    assert sum(run["iterations_by_node"].values()) == camp.iterations
    assert before.items() <= {f.id: f.verified for f in findings}.items(), "a finding filed before the loss is gone"
    with sqlite3.connect(out / "xamt.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _safe_findings(out: Path) -> list:
    try:
        return _campaign(out)[1]
    except Exception:  # the store does not exist yet, or a write is under way
        return []


@pytest.mark.slow
def test_killed_driver_resumes_on_the_cluster(tmp_path):
    out = tmp_path / "resume"
    make_store(out)
    with LoopbackCluster(nodes=2, cpus=1) as c:
        proc = _fuzz(out, c, "--no-triage", budget="40s")
        assert wait_until(lambda: (_safe_campaign(out) or 0) >= 40, 90)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed, _ = _campaign(out)
        assert killed.status == "running"
        proc = _fuzz(out, c, "--no-triage", "--resume")
        text, _ = proc.communicate(timeout=240)
        assert proc.returncode == 0, text
        camp, _ = _campaign(out)
    assert camp.id == killed.id and camp.status == "done" and camp.iterations > killed.iterations
    assert camp.settings["elapsed_s"] >= killed.settings["elapsed_s"]


def _safe_campaign(out: Path) -> int | None:
    try:
        c, _ = _campaign(out)
        return c.iterations if c else None
    except Exception:
        return None


_BUILD = """
import json, sys
from tests.groups.helpers import unary
from xamt.groups.build import build_registry
from xamt.groups.model import load_registry
from xamt.store import Store

np_ = lambda name: ("numpy", f"numpy.{name}", f"numpy:{name}")
cands = [unary("a:abs", [np_("abs"), np_("absolute")], relation="alias"),
         unary("a:neg", [np_("negative"), np_("positive")], relation="alias"),
         unary("a:exp", [np_("exp"), np_("exp"), ("numpy", "tests.groups.crashers.segfault",
                                                   "tests.groups.crashers:segfault")], relation="alias"),
         unary("a:sqrt", [np_("sqrt"), np_("sqrt")], relation="alias")]
ray = sys.argv[2] or None
with Store(sys.argv[1]) as st:
    res = build_registry(st, libraries=["numpy"], candidates=cands, ray=ray, workers=1)
    groups = {g.key: [g.state, g.equivalence, sorted(m.qualname for m in g.members)]
              for g in load_registry(st, states=None)}
print(json.dumps({"built": res.built, "ray": res.stats["build"].get("ray"), "groups": groups}))
"""


def test_registry_build_on_the_cluster_matches_the_local_build(cluster, tmp_path):
    """Both nodes validate candidates (one of them kills its worker); the registry equals a
    local build's, group by group."""
    results = {}
    for name, ray in (("local", ""), ("ray", cluster.address)):
        proc = subprocess.run([sys.executable, "-c", _BUILD, str(tmp_path / f"{name}.db"), ray],
                              cwd=ROOT, env=dict(cluster.env, PYTHONPATH=str(ROOT)),
                              capture_output=True, text=True, timeout=240)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert results["ray"]["groups"] == results["local"]["groups"]
    assert results["ray"]["groups"]["a:abs"][0] == "validated"
    assert results["ray"]["built"] == 4 and results["ray"]["ray"]["nodes"] == ["n0", "n1"]
