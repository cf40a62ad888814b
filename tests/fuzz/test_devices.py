"""The CPU-vs-device oracle (xamt/fuzz/devices.py), exercised without a GPU through the fake
library's second device "fake:1" (tests/fuzz/fakelib.py), plus real-GPU checks that skip here."""
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import msgpack
import numpy as np
import pytest

from tests.fuzz import fakelib
from tests.fuzz.test_campaign import ROOT, group, make_store
from xamt import repro
from xamt.errors import ConfigError
from xamt.findings import FindingClass, FindingsStore
from xamt.fuzz.campaign import FuzzConfig, run_campaign
from xamt.fuzz.devices import (DevicePlan, cpu_twin, device_label, parse_devices, probe_devices,
                               resolve, with_device_twins)
from xamt.exec.group import member_spec
from xamt.exec.member import run_members
from xamt.groups.model import MemberInfo
from xamt.libraries.registry import Registry
from xamt.matching.model import ArgSpec, ArgumentPlan, Member
from xamt.store import Store

FAKE = "tests.fuzz.fakelib"


def adapters():
    return {a.name: a for a in Registry([*Registry(), fakelib.adapter()])}


def fake_member(name):
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param="a", position=0, transform="tensor")])
    return Member(library="fakelib", qualname=f"{FAKE}.{name}", target=f"{FAKE}:{name}",
                  kind="function", call="function", plan=plan)


def square_group(key="t:square"):
    """numpy.square next to the fake library's square (which has the planted device bug)."""
    g = group(key, ["numpy:square"])
    m = fake_member("square")
    return dataclasses.replace(
        g, members=[*g.members, m],
        member_info=[*g.member_info, MemberInfo(qualname=m.qualname, library="fakelib", state="validated",
                                                accepted=["float32", "float64"])])


# ---------------------------------------------------------------------------------- unit level
def test_parse_devices():
    assert parse_devices(None) == "auto" and parse_devices("auto") == "auto"
    assert parse_devices("cpu") == ("cpu",)
    assert parse_devices("cuda:0") == ("cpu", "cuda:0")  # cpu is the baseline, always in
    assert parse_devices("CPU, gpu:1") == ("cpu", "gpu:1")
    for bad in ("", "auto,cpu", "cuda:x", "gpu 0"):
        with pytest.raises(ConfigError):
            parse_devices(bad)


def test_resolve_uses_found_devices_and_rejects_unknown_ones():
    ads = adapters()
    found = {"numpy": ["cpu"], "fakelib": ["cpu", "fake:1"]}
    auto = resolve("auto", found, ads)
    assert auto.active and auto.extra == {"fakelib": ["fake:1"]}
    assert auto.describe() == "device oracle: on (fakelib on cpu + fake:1)"
    assert resolve(("cpu", "fake:1"), found, ads).extra == {"fakelib": ["fake:1"]}
    cpu = resolve(("cpu",), found, ads)
    assert not cpu.active and cpu.describe() == "device oracle: skipped (--devices cpu)"
    none = resolve("auto", {"numpy": ["cpu"]}, ads)
    assert not none.active and "no device other than the CPU" in none.describe()
    with pytest.raises(ConfigError, match="cuda:0"):
        resolve(("cpu", "cuda:0"), found, ads)
    # a device reported by a library whose adapter cannot place calls there is noted, not used
    odd = resolve("auto", {"numpy": ["cpu", "gpu:0"]}, ads)
    assert not odd.active and "numpy reports gpu:0" in odd.describe()
    assert DevicePlan.from_json(json.loads(json.dumps(auto.to_json()))) == auto


def test_probe_devices_reports_hook_failures_by_name():
    found = probe_devices([["fakelib", f"{FAKE}:devices"], ["numpy", None], ["broken", f"{FAKE}:no_such"]])
    assert found["fakelib"] == ["cpu", "fake:1"] and found["numpy"] == ["cpu"]
    assert isinstance(found["broken"], str) and "AttributeError" in found["broken"]


def test_device_twins_expand_only_libraries_with_extra_devices():
    g = square_group()
    plan = DevicePlan(extra={"fakelib": ["fake:1"]})
    t = with_device_twins(g, plan)
    assert [m.qualname for m in t.members] == ["numpy.square", f"{FAKE}.square", f"{FAKE}.square@fake:1"]
    assert [m.device for m in t.members] == [None, "cpu", "fake:1"]
    assert [i.qualname for i in t.member_info] == [m.qualname for m in t.members]
    assert t.member_info[2].accepted == t.member_info[1].accepted
    assert cpu_twin(t.members, 2) == 1 and cpu_twin(t.members, 1) is None
    assert g.members[1].device is None, "the registry's group is not modified"
    # nothing to twin: the very same group comes back
    plain = group("t:max", ["numpy:max", "tests.fuzz.fakelib:max_ignoring_nan"])
    assert with_device_twins(plain, plan) is plain
    assert with_device_twins(g, DevicePlan()) is g
    assert device_label("torch.sum", "cuda:0") == "torch.sum@cuda:0" and device_label("x", "cpu") == "x"


def test_run_members_places_inputs_and_scopes_the_call():
    ads = adapters()
    m = fake_member("where_am_i")
    members = [m, dataclasses.replace(m, device="cpu"), dataclasses.replace(m, device="fake:1")]
    specs = [list(member_spec(x, ads)) for x in members]
    # a member without a device is specified exactly as before devices existed
    plain = msgpack.unpackb(specs[0][1], raw=False)
    assert set(plain) == {"member", "from", "to", "dtype"} and "device" not in plain["member"]
    assert specs[1][0] != specs[0][0] != specs[2][0]
    out = run_members(specs, {0: np.arange(3.0)})
    assert [r[0] for r in out] == ["ok"] * 3
    # [input's device, scope's device]: fake:1 for both only on the twin
    assert [r[1].tolist() for r in out] == [[0, 0], [0, 0], [1, 1]]
    # the planted device bug shows on the twin only
    sq = fake_member("square")
    specs = [list(member_spec(x, ads)) for x in (sq, dataclasses.replace(sq, device="fake:1"))]
    cpu, dev = run_members(specs, {0: np.array([2.0, np.inf], dtype=np.float32)})
    assert cpu[1].tolist() == [4.0, np.inf] and np.isnan(dev[1][1]) and dev[1][0] == 4.0


def test_member_spec_refuses_a_device_its_adapter_cannot_place():
    ads = adapters()
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param="a", position=0, transform="tensor")])
    m = Member(library="numpy", qualname="numpy.sum", target="numpy:sum", kind="function",
               call="function", plan=plan, device="cuda:0")
    with pytest.raises(ConfigError, match="cannot place"):
        member_spec(m, ads)
    # pinning to the CPU needs no placement hook
    member_spec(dataclasses.replace(m, device="cpu"), ads)


def _repro_spec(device):
    ads = adapters()
    sq = fake_member("square")
    twin = dataclasses.replace(sq, device=device, qualname=device_label(sq.qualname, device))
    values = {0: np.array([1.5, -np.inf], dtype=np.float32)}
    return repro.ReproSpec(title="t", header="h",
                           calls=[("cpu", dataclasses.replace(sq, device="cpu"), ads["fakelib"], values),
                                  (twin.qualname, twin, ads["fakelib"], values)],
                           normalisation=None, expect="value", outlier=1, reference=0)


def test_reproducer_places_inputs_on_the_device(tmp_path):
    spec = _repro_spec("fake:1")
    text = repro.render(spec)
    assert "place(G_fakelib.from_numpy(V[0]), 'fake:1')" in text and "_on_device(" in text
    script = repro.write(tmp_path / "r", text, repro.spec_inputs(spec))
    v = repro.verify(script, expect="value", timeout=60, env={"PYTHONPATH": str(ROOT)})
    assert v.reproduced, v.output_tail
    assert "nan" in v.output_tail


def test_reproducer_on_a_machine_without_the_device_cannot_run(tmp_path):
    spec = _repro_spec("fake:7")  # a device the fake library does not have
    script = repro.write(tmp_path / "r", repro.render(spec), repro.spec_inputs(spec))
    v = repro.verify(script, expect="value", timeout=60, env={"PYTHONPATH": str(ROOT)})
    assert not v.reproduced and v.returncode == repro.CANNOT_RUN
    assert "cannot run here: fakelib has no device fake:7 on this machine (it has: cpu, fake:1)" in v.output_tail


# ---------------------------------------------------------------------------------- campaigns
@pytest.fixture(scope="module")
def pythonpath():
    # workers and reproducers import tests.fuzz.fakelib, as a user's scripts import their modules
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT)
    yield
    if old is None:
        os.environ.pop("PYTHONPATH")
    else:
        os.environ["PYTHONPATH"] = old


GROUPS = [square_group(), group("t:max", ["numpy:max", "tests.fuzz.fakelib:max_ignoring_nan"])]


@pytest.fixture(scope="module")
def device_campaign(tmp_path_factory, pythonpath):
    out = tmp_path_factory.mktemp("devices")
    make_store(out, GROUPS)
    logged = []
    res = run_campaign(FuzzConfig(out=out, libraries=["numpy", "fakelib"], budget_s=20, workers=2,
                                  seed=5, window=16, timeout=5, progress=False, verify_timeout=60,
                                  extra_adapters=[fakelib.adapter()]), log=logged.append)
    return out, res, logged


def test_campaign_finds_the_planted_device_bug(device_campaign):
    out, res, logged = device_campaign
    assert res.devices == "device oracle: on (fakelib on cpu + fake:1)"
    assert res.devices in logged
    with Store(out / "xamt.db") as st:
        fs = FindingsStore(st)
        findings = fs.findings(res.campaign_id)
        c = fs.campaign(res.campaign_id)
        stats = {r["group_key"]: json.loads(r["members"]) for r in st.query(
            "SELECT group_key, members FROM group_stats WHERE campaign_id=?", (res.campaign_id,))}
    assert c.settings["devices"]["extra"] == {"fakelib": ["fake:1"]}
    assert [m["api"] for m in stats["t:square"]] == ["numpy.square", f"{FAKE}.square", f"{FAKE}.square@fake:1"]
    assert stats["t:square"][2]["device"] == "fake:1"
    assert len(stats["t:max"]) == 2, "a group without a device-capable library is unchanged"
    on_device = [f for f in findings if f.group_key == "t:square"]
    assert on_device, [(f.group_key, f.outlier_api) for f in findings]
    for f in on_device:
        # the CPU run of the same API agrees with numpy: only the device twin is ever the outlier
        assert f.outlier_api == f"{FAKE}.square@fake:1" and f.outlier_library == "fakelib"
        assert f.summary["device"] == "fake:1" and f.summary["cpu_api"] == f"{FAKE}.square"
        # inf in, NaN out: "nan" when the input also holds a NaN, else "value" (the evidence decides)
        assert f.finding_class in (FindingClass.NAN, FindingClass.VALUE) and f.verified
        twin = next(m for m in f.members if m["outlier"])
        assert twin["device"] == "fake:1"
        text = (out / f.reproducer).read_text()
        assert "'fake:1'" in text and "Device: fake:1 (the same API on the CPU: tests.fuzz.fakelib.square)" in text
    assert res.device_findings == len(on_device)
    assert ("t:max", FindingClass.NAN) in {(f.group_key, f.finding_class) for f in findings}


def test_device_finding_replays_and_exports(device_campaign):
    out, res, _ = device_campaign
    with Store(out / "xamt.db") as st:
        f = next(f for f in FindingsStore(st).findings(res.campaign_id) if f.group_key == "t:square")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "xamt.cli", "repro", str(f.id), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 0 and "reproduced" in proc.stdout, proc.stdout + proc.stderr
    proc = subprocess.run([sys.executable, "-m", "xamt.cli", "findings", "--json", "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    record = next(r for r in json.loads(proc.stdout) if r["id"] == f.id)
    assert record["device"] == "fake:1" and f"{FAKE}.square@fake:1" in record["member_apis"]


def test_repro_command_says_when_the_device_is_missing(device_campaign, tmp_path):
    out, res, _ = device_campaign
    with Store(out / "xamt.db") as st:
        f = next(f for f in FindingsStore(st).findings(res.campaign_id) if f.group_key == "t:square")
    # the same reproducer on a "machine" whose fake library has no fake:1
    env = dict(os.environ, PYTHONPATH=str(ROOT), XAMT_FAKELIB_NO_DEVICE="1")
    proc = subprocess.run([sys.executable, "-m", "xamt.cli", "repro", str(f.id), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == repro.CANNOT_RUN, proc.stdout + proc.stderr
    assert "cannot run here: fakelib has no device fake:1" in proc.stdout
    assert "did NOT reproduce" not in proc.stdout


def test_cpu_only_campaign_skips_the_device_oracle(tmp_path, pythonpath):
    out = tmp_path / "cpu"
    make_store(out, GROUPS)
    logged = []
    res = run_campaign(FuzzConfig(out=out, libraries=["numpy", "fakelib"], budget_s=4, workers=1, seed=5,
                                  window=8, timeout=5, progress=False, triage=False, devices=("cpu",),
                                  extra_adapters=[fakelib.adapter()]), log=logged.append)
    assert res.devices == "device oracle: skipped (--devices cpu)" and res.devices in logged
    assert res.iterations > 0 and res.device_findings == 0
    with Store(out / "xamt.db") as st:
        members = {r["group_key"]: json.loads(r["members"]) for r in st.query(
            "SELECT group_key, members FROM group_stats WHERE campaign_id=?", (res.campaign_id,))}
    assert [m["api"] for m in members["t:square"]] == ["numpy.square", f"{FAKE}.square"]
    assert not any("device" in m for ms in members.values() for m in ms)


def test_auto_without_a_second_device_skips_cleanly(tmp_path, pythonpath):
    out = tmp_path / "auto"
    make_store(out, GROUPS)
    res = run_campaign(FuzzConfig(out=out, libraries=["numpy"], budget_s=3, workers=1, window=8,
                                  timeout=5, progress=False, triage=False), log=lambda _: None)
    assert res.devices == "device oracle: skipped (no device other than the CPU found)"
    with Store(out / "xamt.db") as st:
        c = FindingsStore(st).campaign(res.campaign_id)
    assert c.settings["devices"] == {"requested": "auto", "found": {"numpy": ["cpu"]}, "extra": {}, "notes": []}


def test_unknown_device_is_an_error_before_any_campaign(tmp_path, pythonpath):
    out = tmp_path / "typo"
    make_store(out, GROUPS)
    with pytest.raises(ConfigError, match="no library has it"):
        run_campaign(FuzzConfig(out=out, libraries=["numpy"], budget_s=3, workers=1, progress=False,
                                devices=("cpu", "cuda:0")), log=lambda _: None)
    with Store(out / "xamt.db") as st:
        assert FindingsStore(st).campaign() is None


# ---------------------------------------------------------------------------------- real adapters
_REAL = [("torch", "torch:sum"), ("jax", "jax.numpy:sum"), ("tensorflow", "tensorflow:reduce_sum")]


def test_real_devices_hooks_report_the_cpu_first():
    """Each real adapter's devices hook (run in a subprocess: it may initialise a GPU runtime)."""
    libs = [lib for lib, _ in _REAL if Registry().get(lib).is_installed()]
    if not libs:
        pytest.skip("none of torch, jax, tensorflow is installed")
    hooks = [[lib, Registry().get(lib).devices_ref] for lib in libs]
    code = ("import json, sys; from xamt.fuzz.devices import probe_devices; "
            "print(json.dumps(probe_devices(json.loads(sys.argv[1]))))")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(hooks)], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    for lib in libs:
        assert isinstance(found[lib], list) and found[lib][0] == "cpu", found
        assert all(d == "cpu" or d.partition(":")[2].isdigit() for d in found[lib]), found


@pytest.mark.parametrize("library,target", _REAL)
def test_real_adapter_pins_a_member_to_the_cpu(library, target, tmp_path):
    """The placement and scope hooks of torch, jax and tensorflow, on the CPU (what a GPU
    machine does to the original of a device twin): a reproducer with the plain and the pinned
    call runs both, and they agree."""
    pytest.importorskip(library)
    ad = Registry().get(library)
    assert ad.placement_ref and ad.device_scope_ref and ad.runs_on("gpu:0")
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param="x", position=0, transform="tensor")])
    m = Member(library=library, qualname=target.replace(":", "."), target=target, kind="function",
               call="function", plan=plan)
    values = {0: np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)}
    spec = repro.ReproSpec(title="t", header="h",
                           calls=[("plain", m, ad, values), ("pinned", dataclasses.replace(m, device="cpu"), ad, values)],
                           normalisation=None, expect="value", outlier=1, reference=0, rtol=1e-5, atol=1e-5)
    text = repro.render(spec)
    assert ".from_numpy(V[0]), 'cpu')" in text and "_on_device(" in text
    script = repro.write(tmp_path / "r", text, repro.spec_inputs(spec))
    v = repro.verify(script, expect="value", timeout=300)
    assert v.returncode == repro.NOT_REPRODUCED and "NOT REPRODUCED" in v.output_tail, v.output_tail


# ---------------------------------------------------------------------------------- real GPUs
_PROBE = """
import json, sys
found = {}
try:
    import torch
    found["torch"] = torch.cuda.is_available()
except ImportError:
    pass
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def cuda():
    """Skip unless torch sees a CUDA device; asked in a subprocess, so this process never
    initialises CUDA (the sandbox forks workers from a zygote)."""
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 or not json.loads(proc.stdout or "{}").get("torch"):
        pytest.skip("no CUDA device here")


def _real_member(library, target, call="function"):
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param="x", position=0, transform="tensor")])
    return Member(library=library, qualname=target.replace(":", "."), target=target, kind="function",
                  call=call, plan=plan)


@pytest.mark.gpu
@pytest.mark.parametrize("library,target,device", [
    ("torch", "torch:sum", "cuda:0"),
    ("jax", "jax.numpy:sum", "gpu:0"),
    ("tensorflow", "tensorflow:reduce_sum", "gpu:0"),
])
def test_real_gpu_twin_runs_on_the_gpu(cuda, library, target, device, tmp_path):
    """On a GPU machine: discovery in a sandbox worker lists the device, the twin runs there and
    agrees with the CPU run, and its reproducer replays on the device."""
    pytest.importorskip(library)
    from sandbox import SandboxPool

    from xamt.fuzz.devices import discover
    from xamt.exec.pools import pool_settings

    ads = {a.name: a for a in Registry() if a.name == library}
    settings = pool_settings(ads.values())
    # the campaign's memory limit: a GPU runtime must start under it
    with SandboxPool(preload=settings["preload"], env=settings["env"], workers=1, timeout=120,
                     memory_limit=FuzzConfig(out=tmp_path).memory_limit) as pool:
        found, problems = discover(pool, ads)
        assert device in found[library], (found, problems)
        m = _real_member(library, target)
        members = [dataclasses.replace(m, device="cpu"), dataclasses.replace(m, device=device)]
        from sandbox import Task

        values = {0: np.random.default_rng(0).standard_normal((64, 33)).astype(np.float32)}
        specs = [list(member_spec(x_, ads)) for x_ in members]
        outcome = pool.run([Task("xamt.exec.member:run_members", args=(specs, values, {}), timeout=120)])[0]
    assert outcome.status == "ok", outcome.summary()
    cpu, gpu = outcome.value
    assert cpu[0] == "ok" and gpu[0] == "ok", (cpu, gpu)
    np.testing.assert_allclose(gpu[1], cpu[1], rtol=1e-4, atol=1e-4)
    spec = repro.ReproSpec(title="t", header="h",
                           calls=[("cpu", members[0], ads[library], values), ("gpu", members[1], ads[library], values)],
                           normalisation=None, expect="value", outlier=1, reference=0, rtol=1e-4, atol=1e-4)
    script = repro.write(tmp_path / "r", repro.render(spec), repro.spec_inputs(spec))
    v = repro.verify(script, expect="value", timeout=300)
    assert v.returncode == repro.NOT_REPRODUCED, v.output_tail  # ran on the GPU, and they agree
