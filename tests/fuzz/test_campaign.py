"""End-to-end campaigns on a tiny registry with planted divergences (tests/fuzz/fakelib.py)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xamt.findings import FindingClass, FindingsStore
from xamt.exec.group import MemberResult
from xamt.fuzz.campaign import FuzzConfig, isolated_cost, parse_budget, run_campaign
from xamt.fuzz.schedule import load_settings
from xamt.inputs.arrays import ArrayRecipe
from xamt.groups.model import REGISTRY_SCHEMA, MemberInfo, RegisteredGroup
from xamt.inputs.model import GroupInput, SlotValue
from xamt.matching.model import ArgSpec, ArgumentPlan, GroupSlot, Member
from xamt.errors import XamtError
from xamt.store import Store

ROOT = Path(__file__).resolve().parents[2]


def member(target, params=("a",)):
    plan = ArgumentPlan(args=[ArgSpec(slot=i, param=p, position=i, transform="tensor" if i == 0 else None)
                              for i, p in enumerate(params)])
    return Member(library="numpy", qualname=target.replace(":", "."), target=target, kind="function",
                  call="function", plan=plan)


def group(key, targets, params=("a",), relation="cross_library", evidence=None):
    members = [member(t, params) for t in targets]
    seed = GroupInput({0: SlotValue.array(ArrayRecipe(seed=1, dtype="float32", shape=(2, 3)))})
    return RegisteredGroup(
        key=key, candidate=key, relation=relation, category="generic", canonical=key,
        evidence=dict(evidence or {}),
        equivalence="value", state="validated", confidence=1.0,
        slots=[GroupSlot(index=0, name="a", role="tensor", required=True, shared=True)],
        members=members,
        member_info=[MemberInfo(qualname=m.qualname, library="numpy", state="validated",
                                accepted=["float32", "float64"]) for m in members],
        seeds=[seed.to_json()])


GROUPS = [
    group("t:max", ["numpy:max", "tests.fuzz.fakelib:max_ignoring_nan"]),
    group("t:negative", ["numpy:negative", "tests.fuzz.fakelib:negative_abort_on_inf"]),
    # as an inferred relation (xamt.matching.inferred): its findings carry the similarity score
    group("t:exp", ["numpy:exp", "tests.fuzz.fakelib:exp_rejecting_negatives"], relation="inferred",
          evidence={"matching": {"score": 0.81, "signature": 0.9, "doc": 0.7, "ranks": [1, 2]}}),
    # the same refusal from a check in the function's own body: its own check, a policy
    group("t:exp_own", ["numpy:exp", "tests.fuzz.fakelib:exp_checking_negatives"], relation="inferred"),
    group("t:add_twins", ["numpy:add", "numpy:add"], params=("a", "b")),
    group("t:sqrt", ["numpy:sqrt", "tests.fuzz.fakelib:sqrt_checking_its_domain"]),
]


def make_store(out: Path, groups=GROUPS) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with Store(out / "xamt.db") as st:
        st.ensure(REGISTRY_SCHEMA)
        for g in groups:
            st.execute("INSERT INTO registry VALUES (?,?,?,?,?,?,?,?,?,?)",
                       (g.key, "test", g.candidate, g.relation, g.state, g.equivalence,
                        ",".join(g.libraries), len(g.members), g.confidence, json.dumps(g.to_json())))
        st.execute("INSERT OR REPLACE INTO registry_info(key, value) VALUES ('versions', 'test')")


def test_parse_budget():
    assert parse_budget("90") == 90 and parse_budget("2m") == 120 and parse_budget("1.5h") == 5400
    with pytest.raises(XamtError):
        parse_budget("ten minutes")
    with pytest.raises(XamtError):
        parse_budget("0")


def test_missing_store_and_empty_registry_are_clear_errors(tmp_path):
    with pytest.raises(XamtError, match="no store"):
        run_campaign(FuzzConfig(out=tmp_path / "none", libraries=["numpy"], progress=False))
    make_store(tmp_path / "empty", groups=[])
    with pytest.raises(XamtError, match="no validated groups"):
        run_campaign(FuzzConfig(out=tmp_path / "empty", libraries=["numpy"], progress=False))


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign")
    make_store(out)
    # the reproducers import tests.fuzz.fakelib, as a user's scripts import their own modules
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT)
    try:
        res = _run(out)
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = old
    return out, res


def _run(out):
    return run_campaign(FuzzConfig(out=out, libraries=["numpy"], budget_s=25, workers=2, seed=3,
                                  window=16, timeout=5, progress=False, verify_timeout=60))


def test_campaign_finds_the_planted_divergences(campaign):
    out, res = campaign
    assert res.iterations > 50 and res.executions >= 2 * res.iterations * 0.9
    with Store(out / "xamt.db") as st:
        fs = FindingsStore(st)
        found = {(f.group_key, f.finding_class) for f in fs.findings(res.campaign_id)}
        findings = fs.findings(res.campaign_id)
        c = fs.campaign(res.campaign_id)
    assert c.status == "done" and c.iterations == res.iterations
    assert res.triaged >= res.findings and isinstance(res.by_class, dict)
    assert sum(res.by_class.values()) == res.findings
    assert ("t:max", FindingClass.NAN) in found
    assert ("t:negative", FindingClass.CRASH) in found
    assert ("t:exp", FindingClass.STATUS) in found
    assert ("t:exp_own", FindingClass.POLICY) in found and ("t:exp_own", FindingClass.STATUS) not in found
    own = next(f for f in findings if f.group_key == "t:exp_own")
    assert own.summary["policy"]["name"] == "its own check, in a different function"
    assert own.summary["raised_at"] == "exp_checking_negatives:raise"
    # a refusal whose message states its precondition is filed as a policy, not as a bug
    assert ("t:sqrt", FindingClass.POLICY) in found and ("t:sqrt", FindingClass.STATUS) not in found
    sqrt = next(f for f in findings if f.group_key == "t:sqrt")
    assert sqrt.summary["policy"]["name"] == "refuses outside its stated precondition" and not sqrt.is_bug
    assert not any(g == "t:add_twins" for g, _ in found), "identical twins must never diverge"
    # the API that aborts killed a worker: its group then ran on the isolation pool
    assert c.settings["isolated"] == {"apis": ["numpy:tests.fuzz.fakelib.negative_abort_on_inf"], "groups": 1}
    assert c.settings["pool"]["isolation"]["submitted"] > 0
    for f in findings:
        assert f.verified and (out / f.reproducer).exists()
        assert f.outlier_api.startswith("tests.fuzz.fakelib.")
        if f.group_key == "t:exp":
            assert f.relation == "inferred" and f.summary["relation_score"] == 0.81
            assert "inferred, similarity score 0.81" in (out / f.reproducer).read_text()
        else:
            assert "relation_score" not in f.summary


def test_repro_command_replays_a_finding(campaign):
    out, res = campaign
    with Store(out / "xamt.db") as st:
        f = next(f for f in FindingsStore(st).findings(res.campaign_id) if f.finding_class is FindingClass.NAN)
    proc = subprocess.run([sys.executable, "-m", "xamt.cli", "repro", str(f.id), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reproduced" in proc.stdout


def test_a_later_campaign_starts_with_the_apis_that_killed_workers_isolated(campaign, tmp_path):
    out, _ = campaign
    later = tmp_path / "later"
    later.mkdir()
    shutil.copy(out / "xamt.db", later / "xamt.db")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT)
    try:
        run_campaign(FuzzConfig(out=later, libraries=["numpy"], budget_s=8, workers=1, seed=4, window=8,
                                timeout=5, progress=False, triage=False))
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = old
    with Store(later / "xamt.db") as st:
        c = FindingsStore(st).campaign()
    assert c.settings["isolated"]["apis"] == ["numpy:tests.fuzz.fakelib.negative_abort_on_inf"]
    assert c.settings["pool"]["isolation"]["submitted"] > 0


def test_a_death_that_teaches_a_regime_to_avoid_is_forgiven_after_it_is_charged():
    """x:lcm's first iteration at integer extremes killed four workers (30 s with their death
    costs): cleared before that iteration was charged, the charge met its 30-s floor cap at
    once and held the group at 2 iterations all campaign."""
    from collections import Counter
    from types import SimpleNamespace as NS

    from tests.fuzz.test_schedule import group as sgroup, make
    from xamt.fuzz.campaign import _Fuzzer

    sched, search, _ = make([sgroup("x:lcm")])
    while True:  # up to its first draw of edge values
        (prop,) = sched.propose(1, 0.0)
        if prop.op == "values:edges":
            break
        sched.done(prop, 0.0, ran=True)
        search.report(prop.key, prop.input, 0.0, cost=0.0)
    g = group("x:lcm", ["numpy:lcm", "numpy:lcm"])
    fuzzer = NS(settings=NS(quarantine_after=2), strikes=Counter(), quarantined={}, schedule=sched,
                search=search, judge=lambda run: (0.0, None), compiles=[], compile_by_library=Counter(),
                _note_killers=lambda run: None, _account=lambda *a: 0.0, _rate_now=lambda: 1.0,
                campaign=NS(iterations=0), _dirty=set(), _since_checkpoint=0, window=1000)
    fuzzer._quarantine = lambda run, op: _Fuzzer._quarantine(fuzzer, run, op)
    hang = MemberResult("timeout", duration_s=10.0)
    run = NS(group=g, members=[0, 1], results=[hang, hang], task_s=20.0, killed=[11, 12], workers=[11, 12])
    assert sched.below_floor("x:lcm")
    _Fuzzer.on_result(fuzzer, prop, run)
    assert sched.charged["x:lcm"] == 0.0 and "x:lcm" not in sched.capped
    assert "edges" in sched.summary()["avoided"]["x:lcm"]


def _aborting_campaign(out, monkeypatch, key, members):
    """A 15-s campaign of one group whose last member aborts on an infinity: the campaign's
    settings and the group's iterations."""
    make_store(out, [group(key, [*members, "tests.fuzz.fakelib:negative_abort_on_inf"])])
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    res = run_campaign(FuzzConfig(out=out, libraries=["numpy"], budget_s=15, workers=2, seed=5, window=8,
                                  timeout=5, progress=False, triage=False))
    with Store(out / "xamt.db") as st:
        c = FindingsStore(st).campaign(res.campaign_id)
        its = st.query("SELECT iterations FROM group_stats WHERE group_key=?", (key,))[0]["iterations"]
    return c, its


def test_a_member_that_keeps_killing_workers_is_left_out_and_its_group_goes_on(tmp_path, monkeypatch):
    # three members: once the aborting one is left out, two still compare
    c, its = _aborting_campaign(tmp_path / "quarantine", monkeypatch, "t:negative3",
                                ["numpy:negative", "numpy:negative"])
    assert c.settings["quarantined"] == {"t:negative3": [2]}
    # cleared when it was left out, and at its first death if that death's iteration drew a
    # value regime (below the floor, the group then avoids it)
    assert c.settings["schedule"]["forgiven"] == 1 + len(c.settings["schedule"].get("avoided", {}).get("t:negative3", []))
    # the API is still known as one that kills workers, but its group no longer runs apart
    assert c.settings["isolated"] == {"apis": ["numpy:tests.fuzz.fakelib.negative_abort_on_inf"], "groups": 0}
    deaths = c.settings["pool"].get("deaths", 0) + c.settings["pool"].get("isolation", {}).get("deaths", 0)
    assert 2 <= deaths <= 2 + 2 * 8  # at most what was in flight when it was left out
    assert its > 200


def test_a_pair_whose_member_keeps_dying_stops_drawing_the_values_it_dies_on(tmp_path, monkeypatch):
    # two members: the aborting one cannot be left out, so the pair avoids the regimes it died in
    c, its = _aborting_campaign(tmp_path / "avoid", monkeypatch, "t:negative2", ["numpy:negative"])
    assert c.settings["quarantined"] == {}
    avoided = c.settings["schedule"]["avoided"]["t:negative2"]
    assert avoided and set(avoided) <= set(load_settings().cycle), avoided
    # each regime newly avoided, with another left, cleared what the pair was charged
    assert 1 <= c.settings["schedule"]["forgiven"] <= len(avoided)
    deaths = c.settings["pool"].get("deaths", 0) + c.settings["pool"].get("isolation", {}).get("deaths", 0)
    # the pool also counts deaths of iterations still in flight when the budget ended
    assert 0 <= deaths - dict(c.settings["deaths_by_group"])["t:negative2"] <= 8
    # an input that killed a worker is no parent, and the pair no longer draws non-finite values:
    # the deaths left come from structural changes (a float16 cast of a large value is inf)
    assert its > 1000 and deaths < its / 10, (its, deaths)


def test_killed_campaign_resumes(tmp_path):
    out = tmp_path / "resume"
    make_store(out)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "xamt.cli", "fuzz", "--out", str(out), "--libs", "numpy",
           "--budget", "40s", "--batch", "8", "--no-progress", "--no-triage", "--timeout", "5"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    iterations = 0
    while time.monotonic() < deadline and iterations < 40:
        time.sleep(1)
        try:
            with Store(out / "xamt.db") as st:
                c = FindingsStore(st).campaign()
                iterations = c.iterations if c else 0
        except Exception:
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert iterations >= 40, "the campaign should have checkpointed progress before the kill"
    with Store(out / "xamt.db") as st:
        killed = FindingsStore(st).campaign()
    assert killed.status == "running"  # died without a goodbye
    res = run_campaign(FuzzConfig(out=out, libraries=["numpy"], resume=True, window=8, timeout=5,
                                  progress=False, triage=False))
    with Store(out / "xamt.db") as st:
        c = FindingsStore(st).campaign()
    assert c.id == killed.id and c.status == "done"
    assert c.iterations > killed.iterations
    assert c.settings["elapsed_s"] >= killed.settings["elapsed_s"]
    with pytest.raises(XamtError, match="nothing to resume"):
        run_campaign(FuzzConfig(out=out, libraries=["numpy"], resume=True, progress=False))


def test_report_and_exports_of_a_real_campaign(campaign):
    from xamt.report.export import issue_markdown  # noqa: F401  (the export path below uses it)
    from xamt.report.html import build_report

    out, res = campaign
    index = build_report(out)
    html = index.read_text()
    with Store(out / "xamt.db") as st:
        findings = FindingsStore(st).findings(res.campaign_id)
    for f in findings:
        assert f'findings/{f.id}.html' in html
        assert (index.parent / "findings" / f"{f.id}.html").exists()
        # triage records the cluster the report's causes table folds by
        assert f.summary["cluster"] == f.cause and f.cause.startswith(
            "policy: " if not f.is_bug else f"{f.finding_class.value}: {f.outlier_library}:"), f.cause

    def export(finding):
        return subprocess.run([sys.executable, "-m", "xamt.cli", "findings", "export", str(finding.id),
                               "--format", "issue", "--out", str(out)],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)

    # which finding triage files first depends on the scheduling: take one of each kind
    bug = next(f for f in findings if f.is_bug)
    proc = export(bug)
    assert proc.returncode == 0 and bug.outlier_api in proc.stdout, proc.stderr
    policy = next((f for f in findings if not f.is_bug), None)
    if policy is not None:  # a documented policy is no bug to report: refused, saying why
        proc = export(policy)
        assert proc.returncode == 2 and "follows the documented policy" in proc.stderr, proc.stderr


def test_checkpoints_come_at_least_every_window_of_iterations(tmp_path, monkeypatch):
    """A campaign killed outright loses at most one window: the search state is committed after
    every window of completed iterations (or sooner, by the clock)."""
    import xamt.fuzz.campaign as campaign_mod

    out = tmp_path / "cadence"
    make_store(out)
    committed = []
    real = campaign_mod._Fuzzer.checkpoint

    def spy(self, touched, elapsed, **kw):
        committed.append(self.campaign.iterations)
        return real(self, touched, elapsed, **kw)

    monkeypatch.setattr(campaign_mod._Fuzzer, "checkpoint", spy)
    res = run_campaign(FuzzConfig(out=out, libraries=["numpy"], budget_s=6, workers=2, window=8,
                                  timeout=5, progress=False, triage=False))
    assert res.iterations > 100
    gaps = [b - a for a, b in zip([0] + committed, committed)]
    assert max(gaps) <= 8, gaps
    assert committed[-1] == res.iterations


def test_workers_that_outgrow_the_memory_budget_are_replaced(tmp_path, monkeypatch):
    """With a budget the tree is always over, every worker may grow by the floor only (one
    byte here, read every second): the workers are replaced as they outgrow it, and the
    campaign goes on."""
    import xamt.fuzz.campaign as campaign_mod

    real = campaign_mod.MemoryGovernor

    def governor(pools, budget, **kw):
        kw.update(floor=1, every_s=1.0)
        return real(pools, budget, **kw)

    monkeypatch.setattr(campaign_mod, "MemoryGovernor", governor)
    out = tmp_path / "memory"
    make_store(out)
    res = run_campaign(FuzzConfig(out=out, libraries=["numpy"], budget_s=8, workers=2, window=8,
                                  timeout=5, progress=False, triage=False, memory_budget=1 << 20))
    with Store(out / "xamt.db") as st:
        c = FindingsStore(st).campaign(res.campaign_id)
    assert c.settings["memory"]["worker_growth_mib"] == 0 and c.settings["memory"]["readings"] >= 3
    assert c.settings["pool"].get("recycled_memory", 0) >= 1
    assert res.iterations > 50


def test_an_isolated_iteration_costs_its_calls_cpu_seconds_and_its_deaths_cpu_or_wall_seconds():
    """The isolation worker is niced: a call that used 0.1 s of the CPU may take seconds of wall
    time there, waiting for the CPU the other workers leave."""
    from types import SimpleNamespace

    run = SimpleNamespace(task_s=9.0, results=[
        MemberResult("ok", duration_s=5.0, cpu_s=0.1),
        MemberResult("raised", duration_s=2.0, cpu_s=0.05),
        MemberResult("timeout", duration_s=3.0),     # a death: what it held the worker for
        MemberResult("skipped"), MemberResult("cancelled")])
    assert isolated_cost(run) == pytest.approx(3.15)
    # a death whose CPU seconds the sandbox told: those (a hang waiting for the CPU the others
    # leave), never more than its wall seconds
    from sandbox import Outcome, Status
    run.results[2] = MemberResult("timeout", duration_s=3.0, outcome=Outcome(Status.TIMEOUT, cpu_s=0.4))
    assert isolated_cost(run) == pytest.approx(0.55)
    run.results[2] = MemberResult("timeout", duration_s=3.0, outcome=Outcome(Status.TIMEOUT, cpu_s=7.0))
    assert isolated_cost(run) == pytest.approx(3.15)
    # a call that compiled for most of its wall time is charged the rest of its CPU seconds
    run = SimpleNamespace(task_s=9.0, results=[MemberResult("ok", duration_s=4.0, cpu_s=0.8, compile_s=3.0),
                                               MemberResult("ok", duration_s=1.0, cpu_s=0.1, compile_s=2.0)])
    assert isolated_cost(run) == pytest.approx(0.2)


def test_a_group_short_of_its_floor_avoids_a_regime_at_a_members_first_death():
    """x:lcm: torch's lcm died once (SIGFPE) and JAX's once (a hang) at integer extremes, and
    the two deaths charged the group its whole floor cap in two iterations. Below the floor, a
    first death makes the group avoid that regime and clears its charges; above it, a member
    needs quarantine_after deaths as before."""
    from collections import Counter
    from types import SimpleNamespace as NS

    from xamt.fuzz.campaign import _Fuzzer

    class Schedule:
        def __init__(self, short):
            self.short, self.avoided, self.forgiven = short, [], 0

        def below_floor(self, key):
            return self.short

        def avoid(self, key, op):
            self.avoided.append(op)
            return True

        def forgive(self, key):
            self.forgiven += 1

    g = group("x:lcm", ["numpy:lcm", "numpy:lcm", "numpy:lcm"])
    died = MemberResult("crashed")
    for short, want in ((True, ["values:edges"]), (False, [])):
        fuzzer = NS(settings=NS(quarantine_after=2), strikes=Counter(), quarantined={},
                    schedule=Schedule(short))
        _Fuzzer._quarantine(fuzzer, NS(group=g, members=[0, 1, 2], results=[MemberResult("ok"), died,
                                                                             MemberResult("ok")]),
                            "values:edges")
        assert fuzzer.schedule.avoided == want and fuzzer.schedule.forgiven == len(want)
        assert fuzzer.quarantined == {}


def test_an_absorbed_finding_hands_its_references_to_the_one_it_went_into(tmp_path):
    """A fold that bridged two filed findings absorbed the later (FindingsStore.absorbed): the
    prekeys that pointed at it point at the survivor, its reproducer folder goes, and the
    campaign counts one finding less."""
    from types import SimpleNamespace

    from xamt.fuzz.campaign import _Fuzzer

    repro = tmp_path / "findings" / "7" / "repro.py"
    repro.parent.mkdir(parents=True)
    repro.write_text("pass\n")
    executed = []
    stub = SimpleNamespace(
        fs=SimpleNamespace(absorbed=[(7, 3, "findings/7/repro.py")]),
        seen={"a": {"finding": 7}, "b": {"finding": 3}, "c": {"finding": None}},
        store=SimpleNamespace(execute=lambda sql, args: executed.append((sql.split()[0], args))),
        campaign=SimpleNamespace(id=1), triage=SimpleNamespace(out_dir=str(tmp_path)),
        findings=5, by_class={"nan": 2})
    _Fuzzer._absorbed(stub, "nan")
    assert [v["finding"] for v in stub.seen.values()] == [3, 3, None]
    assert executed == [("UPDATE", (3, 1, 7))] and not repro.parent.exists()
    assert stub.findings == 4 and stub.by_class == {"nan": 1} and stub.fs.absorbed == []
