"""Confinement: what a task does to the machine stays in its worker's folder (Landlock).

The side-effect corpus (tests/badtasks.py, SIDE_EFFECTS) aims at a sentinel tree outside every
worker's folder and at a TCP listener on 127.0.0.1. With confinement on (the default) every case
must be an outcome ``raised`` naming the OSError, the tree's content hashes must not change, the
listener must see no connection, and the pool must keep serving. With ``confine=False`` the
corpus behaves as it did before confinement existed: every case changes what it aims at.
"""
from __future__ import annotations

import os
import select
import socket
import warnings

import numpy as np
import pytest

from sandbox import ConfigError, ConfinementWarning, SandboxPool, Status, Task, confine
from tests.badtasks import SIDE_EFFECT_ABI, SIDE_EFFECTS, side_effect_args, tree_digest

from .conftest import BAD, require

ABI = confine.landlock_abi()[0]
needs_landlock = pytest.mark.skipif(ABI < 1, reason=f"no Landlock here: {confine.landlock_abi()[1]}")

#: what a confined case may raise: the OSError of the denied call (EACCES, EPERM; EXDEV for a
#: hard link across folders), also when a child process met it
DENIED = ("Permission denied", "Operation not permitted", "Invalid cross-device link")


@pytest.fixture
def listener():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.setblocking(False)
    yield server
    server.close()


def connections(server: socket.socket, wait: float = 0.3) -> int:
    """Connections the listener has received (accepted and closed here)."""
    count = 0
    while select.select([server], [], [], wait)[0]:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            break
        conn.close()
        count += 1
        wait = 0.05
    return count


def corpus_tasks(root: str, port: int, abi: int):
    """(name, task, case folder) for every case this kernel can confine."""
    cases = []
    for name, ref, kind in SIDE_EFFECTS:
        if SIDE_EFFECT_ABI.get(name, 1) > abi:
            continue
        folder = os.path.join(root, name)
        cases.append((name, Task(ref, side_effect_args(kind, folder, port), timeout=60), folder))
    return cases


def good(i: int) -> Task:
    return Task("numpy:add", (np.full(3, float(i)), np.ones(3)))


def check_good(i: int, outcome) -> None:
    assert outcome.status == Status.OK, outcome
    np.testing.assert_array_equal(outcome.value, np.full(3, i + 1.0))


@needs_landlock
def test_the_side_effect_corpus_is_confined_by_a_default_pool(tmp_path, listener):
    root = str(tmp_path / "sentinel")
    cases = corpus_tasks(root, listener.getsockname()[1], ABI)
    before = tree_digest(root)
    with SandboxPool(workers=2) as pool:
        assert pool.info["confinement"]["enabled"] and pool.info["confinement"]["abi"] == ABI
        tasks = []
        for i, (_, task, _) in enumerate(cases):
            tasks += [task, good(i)]
        outcomes = pool.run(tasks)
        for i, (name, _, _) in enumerate(cases):
            bad = outcomes[2 * i]
            assert bad.status == Status.RAISED, f"{name}: {bad}"
            assert bad.error_type in ("PermissionError", "OSError"), f"{name}: {bad}"
            assert any(text in bad.error_message for text in DENIED), f"{name}: {bad.error_message}"
            check_good(i, outcomes[2 * i + 1])
        # the pool keeps serving, with the same workers (a denial kills nothing)
        again = pool.run([good(i) for i in range(20)])
        for i, outcome in enumerate(again):
            check_good(i, outcome)
        assert pool.stats["deaths"] == 0
    assert tree_digest(root) == before
    assert connections(listener) == 0
    assert len(cases) == len(SIDE_EFFECTS) or ABI < 6  # 100 % of the corpus where the kernel has it all


def test_without_confinement_the_corpus_behaves_as_before(tmp_path, listener):
    root = str(tmp_path / "sentinel")
    cases = corpus_tasks(root, listener.getsockname()[1], abi=99)
    before = {name: tree_digest(folder) for name, _, folder in cases}
    with SandboxPool(workers=2, confine=False) as pool:
        assert pool.info["confinement"] == {"enabled": False}
        assert "confinement off" in pool.describe()
        outcomes = pool.run([task for _, task, _ in cases])
    for (name, _, folder), outcome in zip(cases, outcomes):
        assert outcome.status == Status.OK, f"{name}: {outcome}"
        if name not in ("tcp_connect", "tcp_bind", "signal"):
            assert tree_digest(folder) != before[name], name
    assert connections(listener) == 1


@needs_landlock
@pytest.mark.parametrize("library", ["torch", "tensorflow"])
def test_library_file_writers_are_confined(library, tmp_path):
    require(library)
    path = str(tmp_path / f"saved.{library}")
    if library == "torch":
        task = Task("torch:save", (np.ones(3, dtype=np.float32), path), convert="torch:from_numpy")
    else:
        task = Task("tensorflow.io:write_file", (path, "written by tensorflow"))
    with SandboxPool(preload=("numpy", library), workers=1, spares=0, timeout=120) as pool:
        (denied,) = pool.run([task])
    assert denied.status == Status.RAISED, denied
    assert "PermissionDenied" in (denied.error_type or "") or "Permission denied" in denied.error_message, denied
    assert not os.path.exists(path)
    with SandboxPool(preload=("numpy", library), workers=1, spares=0, timeout=120, confine=False) as pool:
        (allowed,) = pool.run([task])
    assert allowed.status == Status.OK, allowed
    assert os.path.getsize(path) > 0


@needs_landlock
def test_what_is_enforced_is_reported(numpy_pool):
    info = numpy_pool.info["confinement"]
    assert info["enabled"] and info["abi"] == ABI and info["off"] == [] or ABI < 6
    line = numpy_pool.describe()
    assert line.startswith("sandbox: 2 worker(s)") and f"confined (Landlock ABI {ABI})" in line
    assert "writes only beneath the worker's folder" in line
    if ABI >= 4:
        assert "no TCP bind/connect" in line
    numpy_pool.run([Task(BAD + "echo", (1,))])
    assert numpy_pool.confine_times and max(numpy_pool.confine_times) < 0.05
    assert numpy_pool.ready_times


def test_the_network_namespace_stops_udp():
    """UDP is not Landlock's: where the zygote got a network namespace of its own, no datagram
    leaves a worker (its loopback interface is down); with confine=False one arrives."""
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(5)
    port = receiver.getsockname()[1]
    try:
        with SandboxPool(workers=1, spares=0) as pool:
            info = pool.info["confinement"]
            (sent,) = pool.run([Task(BAD + "udp_send", (port,))])
        if not info["netns"]:
            assert "network namespace" in pool.describe()  # named as off
            pytest.skip(f"no network namespace here: {info['netns_error']}")
        assert sent.status == Status.RAISED and "Network is unreachable" in sent.error_message, sent
        with SandboxPool(workers=1, spares=0, confine=False) as pool:
            (sent,) = pool.run([Task(BAD + "udp_send", (port,))])
        assert sent.status == Status.OK, sent
        assert receiver.recvfrom(100)[0] == b"hello from a task"
    finally:
        receiver.close()


@needs_landlock
def test_the_worker_folder_tmpdir_and_extra_paths_stay_writable(tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    cache = tmp_path / "cache" / "compiled"  # named by the env, created by the pool
    with SandboxPool(workers=1, writable=[extra], env={"SOME_LIBRARY_CACHE_DIR": str(cache)}) as pool:
        assert str(extra) in pool.describe() and str(cache) in pool.describe()
        outcomes = pool.run([
            Task(BAD + "write_inside_and_in", (str(extra),)),
            Task(BAD + "write_inside_and_in", (str(cache),)),
            Task(BAD + "write_outside", (str(tmp_path / "elsewhere.txt"),)),
            Task(BAD + "limits"),
        ])
    assert [o.status for o in outcomes] == [Status.OK, Status.OK, Status.RAISED, Status.OK], outcomes
    here, temporary, _ = outcomes[0].value
    workdir = outcomes[3].value["cwd"]
    assert here.startswith(workdir) and temporary.startswith(workdir)
    assert (extra / "allowed.txt").read_text() == "allowed" and (cache / "allowed.txt").read_text() == "allowed"
    assert not (tmp_path / "elsewhere.txt").exists()


@needs_landlock
def test_spawned_workers_are_confined_before_their_imports(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("sentinel")
    with SandboxPool(workers=1, spares=0, start_method="spawn", timeout=60) as pool:
        assert pool.mode == "spawn"
        outcomes = pool.run([Task(BAD + "write_outside", (str(target),)), Task(BAD + "echo", (5,))])
    assert outcomes[0].status == Status.RAISED and outcomes[0].error_type == "PermissionError", outcomes[0]
    assert outcomes[1].value == 5
    assert target.read_text() == "sentinel"


@needs_landlock
@pytest.mark.parametrize("abi", [0, 3])
def test_missing_or_partial_landlock_warns_once_and_uses_what_is_there(abi, monkeypatch, tmp_path):
    reason = "the kernel has no Landlock (ENOSYS)" if abi == 0 else ""
    monkeypatch.setattr(confine, "landlock_abi", lambda: (abi, reason))
    target = tmp_path / "target.txt"
    target.write_text("sentinel")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with SandboxPool(workers=1) as pool:
            outcomes = pool.run([Task(BAD + "write_outside", (str(target),)), Task(BAD + "segfault"),
                                 Task(BAD + "echo", (1,))])  # the crash makes new workers: no new warning
            line = pool.describe()
    ours = [w for w in caught if issubclass(w.category, ConfinementWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    message = str(ours[0].message)
    assert "TCP bind/connect" in message and "OFF" in line
    if abi == 0:
        assert "filesystem writes" in message and "ENOSYS" in message
        assert outcomes[0].status == Status.OK and target.read_text() == "overwritten"
    else:
        assert "needs Landlock ABI 4" in message
        assert outcomes[0].status == Status.RAISED and target.read_text() == "sentinel"
    assert outcomes[2].value == 1


def test_handled_rights_and_the_plan_follow_the_abi():
    for abi in range(0, 8):
        fs, net, scoped = confine.handled_access(abi)
        assert bool(fs) == (abi >= 1) and bool(fs & confine.FS_REFER) == (abi >= 2)
        assert bool(fs & confine.FS_TRUNCATE) == (abi >= 3)
        assert net == (confine.NET_BIND_TCP | confine.NET_CONNECT_TCP if abi >= 4 else 0)
        assert bool(scoped) == (abi >= 6)
        assert not fs & 0b1101  # reads and execution are never restricted
    assert confine.plan(abi=99)["abi"] == ABI  # never more than the kernel has
    if ABI >= 3:
        partial = confine.plan(["/some/cache"], abi=3)
        assert partial["abi"] == 3 and ["tree", "/some/cache"] in partial["rules"]
        assert any("ABI 4" in o for o in partial["off"]) and any("ABI 6" in o for o in partial["off"])
        assert "/some/cache" in partial["enforced"][0]
    assert ["file", "/dev/null"] in confine.plan()["rules"]


def test_confinement_arguments_are_checked(tmp_path):
    with pytest.raises(ConfigError, match="confine"):
        SandboxPool(confine="yes")
    with pytest.raises(ConfigError, match="does not exist"):
        SandboxPool(writable=[tmp_path / "missing"])
    with pytest.raises(ConfigError, match="sequence of paths"):
        SandboxPool(writable=str(tmp_path))


@pytest.mark.slow
@needs_landlock
@pytest.mark.parametrize("cache", [False, True], ids=["tmpdir", "cache_dir"])
def test_torch_compile_works_confined(cache, tmp_path):
    """TorchInductor writes generated code and compiled kernels (in TMPDIR, the worker's folder,
    or in TORCHINDUCTOR_CACHE_DIR) and runs the C++ compiler, all under confinement."""
    require("torch")
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")} if cache else {}
    with SandboxPool(preload=("numpy", "torch"), workers=1, spares=0, timeout=600, env=env,
                     file_size_limit=1 << 30, memory_limit=4 << 30) as pool:
        x = np.linspace(0, 1, 8, dtype=np.float32)
        outcomes = pool.run([Task(BAD + "torch_compile_add", (x,)), Task(BAD + "torch_compile_add", (x + 1,))])
    for outcome in outcomes:
        assert outcome.status == Status.OK, outcome
    np.testing.assert_allclose(outcomes[0].value, np.sin(x) + 2 * x, rtol=1e-5)
    if cache:
        assert any((tmp_path / "inductor").rglob("*.py")), "nothing cached"
