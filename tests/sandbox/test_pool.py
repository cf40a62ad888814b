"""SandboxPool behaviour: API, limits, capture, attribution inside batches, lifecycle, bad input."""
from __future__ import annotations

import concurrent.futures
import os
import pickle
import random
import threading
import time

import numpy as np
import pytest

from sandbox import (
    ConfigError, EncodeError, PoolClosedError, Ref, SandboxPool, Status, Step, Task, TaskError, ZygoteError,
)

from .conftest import BAD, MEMORY_LIMIT


# --- the API -----------------------------------------------------------------------------------

def test_run_returns_outcomes_in_submission_order(numpy_pool):
    rng = random.Random(1)
    tasks = [Task(BAD + "sleep_then", (rng.choice([0, 0, 0.002]), i)) for i in range(300)]
    outcomes = numpy_pool.run(tasks)
    assert [o.value for o in outcomes] == list(range(300))
    assert all(o.status == Status.OK and o.task is t for o, t in zip(outcomes, tasks))
    assert all(o.worker_pid and o.duration_s >= 0 and o.max_rss_bytes > 1 << 20 for o in outcomes)


def test_submit_returns_futures_and_is_thread_safe(numpy_pool):
    def client(k):
        futures = [numpy_pool.submit(Task("numpy:multiply", (np.arange(5), k * 100 + i))) for i in range(50)]
        return [f.result(timeout=60) for f in futures]

    with concurrent.futures.ThreadPoolExecutor(4) as threads:
        results = list(threads.map(client, range(4)))
    for k, outcomes in enumerate(results):
        for i, outcome in enumerate(outcomes):
            np.testing.assert_array_equal(outcome.value, np.arange(5) * (k * 100 + i))


def test_no_submission_is_stranded_by_a_coalesced_wake(numpy_pool, monkeypatch):
    """Submissions wake the manager once per turn, not once each. A submission that lands while
    the manager drains its wake pipe (forced here after every read) must still be taken: a flag
    left set with the pipe empty would strand every later one."""
    real_read = os.read

    def read_then_submit(fd, n):
        data = real_read(fd, n)
        if fd == numpy_pool._wake_r and data and not threading.current_thread().name.startswith("late"):
            late = threading.Thread(target=lambda: numpy_pool.submit(Task("numpy:add", (1, 1))), name="late")
            late.start()
            late.join()
        return data

    monkeypatch.setattr(os, "read", read_then_submit)

    def client(k):
        return [numpy_pool.run([Task("numpy:multiply", (k, i))], timeout=30)[0].value for i in range(40)]

    with concurrent.futures.ThreadPoolExecutor(3) as threads:
        results = list(threads.map(client, range(3)))
    assert results == [[k * i for i in range(40)] for k in range(3)]
    monkeypatch.undo()
    deadline = time.monotonic() + 10
    while numpy_pool._woken and time.monotonic() < deadline:  # the late submissions settle
        time.sleep(0.05)
    assert not numpy_pool._woken
    assert numpy_pool.run([Task("numpy:add", (2, 3))], timeout=30)[0].value == 5


def test_raised_outcome_names_the_step_and_keeps_the_traceback(numpy_pool):
    task = Task.chain([Step("numpy:arange", (6,)), Step(".reshape", (Ref(0), 4, 4))])
    (outcome,) = numpy_pool.run([task])
    assert outcome.status == Status.RAISED and outcome.error_type == "ValueError"
    assert "cannot reshape" in outcome.error_message and outcome.failed_step == 1
    assert "Traceback" in outcome.traceback and "ValueError" in outcome.traceback


def test_chains_refs_methods_and_conversion(numpy_pool):
    x = np.arange(6.0).reshape(2, 3)
    chain = Task.chain([
        Step("numpy:multiply", (x, 2)),
        Step(".sum", (Ref(0),), {"axis": 0}),
        Step("builtins:tuple", ([Ref(1), {"nested": Ref(0)}],)),
    ])
    total, nested = numpy_pool.run([chain])[0].value
    np.testing.assert_array_equal(total, (x * 2).sum(axis=0))
    np.testing.assert_array_equal(nested["nested"], x * 2)
    # convert applies to every received array (not to step results), with its keywords
    converted = Task.chain([Step("numpy:transpose", (x,)), Step("numpy:isfortran", (Ref(0),))],
                           convert="numpy:asfortranarray")
    assert numpy_pool.run([converted])[0].value is False  # the transposed result was not converted again
    assert numpy_pool.run([Task("numpy:isfortran", (x,), convert="numpy:asfortranarray")])[0].value is True
    as_type = Task("numpy:sum", (np.arange(3),), convert="numpy:asarray", convert_kwargs={"dtype": "float32"})
    assert numpy_pool.run([as_type])[0].value.dtype == np.float32


def test_unknown_module_or_function_is_a_clear_error(numpy_pool):
    outcomes = numpy_pool.run([Task("no_such_module_xyz:f"), Task("numpy:no_such_fn"), Task("numpy:pi"),
                               Task("numpy:linalg.no_such")])
    for outcome in outcomes:
        assert outcome.status == Status.RAISED and outcome.error_type == "sandbox.errors.ResolveError", outcome
    assert "No module named 'no_such_module_xyz'" in outcomes[0].error_message
    assert "no attribute 'no_such_fn'" in outcomes[1].error_message
    assert "not callable" in outcomes[2].error_message


def test_unserializable_argument_is_refused_at_submission(numpy_pool):
    before = numpy_pool.stats["submitted"]
    with pytest.raises(EncodeError, match=r"step 0 \(numpy:sum\) args\[1\]\['k'\]: cannot encode an object of type object"):
        numpy_pool.submit(Task("numpy:sum", (1, {"k": object()})))
    with pytest.raises(EncodeError, match="kwargs"):
        numpy_pool.run([Task("numpy:sum", (1,)), Task("numpy:sum", (1,), {"axis": threading.Lock()})])
    time.sleep(0.1)
    assert numpy_pool.stats["submitted"] == before  # a bad task in run() queues none of them


@pytest.mark.parametrize("kwargs", [
    {"workers": 0}, {"workers": 1.5}, {"timeout": -1}, {"timeout": float("inf")}, {"memory_limit": 1000},
    {"memory_limit": -5}, {"max_tasks_per_worker": 0}, {"recycle_memory": 0}, {"batch_size": 0}, {"start_method": "thread"},
    {"python": "/no/such/python"}, {"preload": "numpy"}, {"preload": ("not a module",)}, {"spares": -1},
    {"capture_limit": 10}, {"kill_grace": -1}, {"confirm": "yes"}, {"env": {"A": 1}}, {"file_size_limit": 10},
    {"warmup": "os:getpid"}, {"warmup": ("os",)}, {"warmup": ("os:get pid",)}, {"nice": -1}, {"nice": 20},
    {"nice": True}, {"help_after": -1}, {"help_after": float("inf")}, {"help_after": "1"},
])
def test_invalid_configuration_is_refused(kwargs):
    with pytest.raises(ConfigError):
        SandboxPool(**kwargs)


def test_unknown_preload_module_fails_at_start():
    with pytest.raises(ZygoteError, match="No module named 'no_such_module_xyz'"):
        SandboxPool(preload=("no_such_module_xyz",))


def test_warmup_runs_once_in_the_zygote_and_workers_inherit_it():
    # a warm-up is work every worker would redo: the zygote does it, forked workers share it
    with SandboxPool(preload=("numpy", "tests.sandbox.warmup_module"), warmup=("tests.sandbox.warmup_module:warm",),
                     workers=2, timeout=30, nice=3) as pool:
        results = [o.value for o in pool.run([Task("tests.sandbox.warmup_module:warmed_in") for _ in range(4)])]
        assert pool.mode == "fork" and "niceness +3" in pool.describe()
    zygote = pool.info["pid"]
    assert {warmed for warmed, _, _ in results} == {zygote}
    assert all(worker != zygote for _, worker, _ in results)
    assert {nice for _, _, nice in results} == {os.nice(0) + 3}


def test_a_failing_warmup_fails_the_start_with_its_error():
    with pytest.raises(ZygoteError, match="has no attribute 'no_such_function'"):
        SandboxPool(preload=("numpy",), warmup=("os:no_such_function",))


def test_pool_reports_its_mode_and_zygote(numpy_pool):
    info = numpy_pool.info
    assert numpy_pool.mode == "fork" and info["threads"] == 1 and info["versions"]["numpy"] == np.__version__
    assert info["memory_mechanism"].startswith("RLIMIT_DATA")


# --- limits and the worker's environment -------------------------------------------------------

def test_worker_limits_and_environment(numpy_pool):
    limits, env, stdin = (o.value for o in numpy_pool.run(
        [Task(BAD + "limits"), Task(BAD + "thread_env"), Task(BAD + "read_stdin")]))
    assert limits["core"] == (0, 0)
    assert limits["fsize"] == (64 << 20, 64 << 20)
    assert MEMORY_LIMIT < limits["data"][0] == limits["data"][1] < MEMORY_LIMIT + (512 << 20)
    assert limits["tmpdir"] == limits["cwd"] and "sandbox-" in limits["cwd"]
    assert limits["pgid_is_pid"] and limits["threads"] == 1
    assert env == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMBA_THREADING_LAYER": "workqueue",
                   "TF_NUM_INTRAOP_THREADS": "1"}
    assert stdin == ""


def test_private_directory_is_emptied_after_each_task_and_removed_at_close():
    with SandboxPool(workers=1, spares=0) as pool:
        cwd, listing = (o.value for o in pool.run([Task(BAD + "write_files"), Task(BAD + "list_cwd")]))
        assert "leftover.txt" not in listing and "leftover_dir" not in listing
        assert os.path.isdir(cwd)
    assert not os.path.exists(cwd)


def test_output_is_captured_per_task(numpy_pool):
    loud, quiet, c_level = numpy_pool.run([Task(BAD + "warn_and_return", (1,)), Task(BAD + "echo", (2,)),
                                           Task(BAD + "c_printf", ("from C stdio",))])
    assert loud.stdout_tail == "to stdout\n" and loud.stderr_tail == "to stderr\n"
    assert quiet.stdout_tail == "" and quiet.stderr_tail == ""
    assert c_level.stdout_tail == "from C stdio\n"


def test_memory_limit_gives_oom_and_the_pool_recovers(numpy_pool):
    outcomes = numpy_pool.run([Task("builtins:bytearray", (2 * MEMORY_LIMIT,)), Task(BAD + "echo", (5,))])
    assert outcomes[0].status == Status.OOM and outcomes[0].error_type == "MemoryError"
    assert outcomes[1].value == 5


def test_kernel_style_oom_kill_is_reported_as_oom():
    with SandboxPool(workers=1, memory_limit=MEMORY_LIMIT, confirm=False) as pool:
        (outcome,) = pool.run([Task(BAD + "oom_killed")])
    assert outcome.status == Status.OOM and outcome.signal_name == "SIGKILL", outcome
    assert outcome.max_rss_bytes > MEMORY_LIMIT


def test_arguments_too_large_for_the_worker_are_oom():
    with SandboxPool(workers=1, memory_limit=32 << 20, confirm=False) as pool:
        big = np.zeros(64 << 20, dtype=np.uint8)
        outcomes = pool.run([Task("numpy:sum", (big,)), Task(BAD + "echo", (1,))])
    assert outcomes[0].status == Status.OOM and "do not fit" in outcomes[0].error_message
    assert outcomes[1].value == 1


def test_large_arrays_round_trip():
    with SandboxPool(preload=("numpy",), workers=1, memory_limit=1 << 30) as pool:
        big = np.random.default_rng(0).standard_normal((2000, 2000))  # 32 MB each way
        (outcome,) = pool.run([Task("numpy:negative", (big,))])
    np.testing.assert_array_equal(outcome.value, -big)
    assert outcome.value.flags.writeable


# --- attribution, timeouts, confirmation -------------------------------------------------------

def test_a_death_inside_a_batch_is_attributed_to_exactly_one_task():
    with SandboxPool(workers=1, spares=0, batch_size=16, confirm=False) as pool:
        tasks = [Task(BAD + "echo", (i,)) for i in range(6)] + [Task(BAD + "segfault")]
        tasks += [Task(BAD + "echo", (i,)) for i in range(6, 12)]
        outcomes = pool.run(tasks)
        assert [o.status for o in outcomes] == [Status.OK] * 6 + [Status.CRASHED] + [Status.OK] * 6
        assert [o.value for o in outcomes if o.ok] == list(range(12))
        assert pool.stats["deaths"] == 1


def test_a_timeout_inside_a_batch_is_attributed_and_dumps_the_stack():
    with SandboxPool(workers=1, spares=0, batch_size=8, timeout=1.0, confirm=False) as pool:
        tasks = [Task(BAD + "echo", (i,)) for i in range(3)] + [Task(BAD + "endless_loop")]
        tasks += [Task(BAD + "echo", (i,)) for i in range(3, 6)]
        outcomes = pool.run(tasks)
    assert [o.status for o in outcomes] == [Status.OK] * 3 + [Status.TIMEOUT] + [Status.OK] * 3
    assert "endless_loop" in outcomes[3].stderr_tail  # faulthandler's dump before the kill
    assert 1.0 <= outcomes[3].duration_s < 5


def test_a_timed_out_task_says_how_much_cpu_it_used():
    """A hang that waits (a sleep) used almost no CPU, one that spins used most of its wall
    time; the CPU of the tasks before it in the same worker is not counted."""
    with SandboxPool(workers=1, spares=0, batch_size=4, timeout=1.0, confirm=False) as pool:
        spun, slept = pool.run([Task(BAD + "spin", (0.6,), timeout=5), Task(BAD + "c_sleep", timeout=0.8)])
        (looped,) = pool.run([Task(BAD + "endless_loop")])
    assert spun.ok and spun.cpu_s is None  # only a death carries it
    assert slept.status == Status.TIMEOUT and slept.cpu_s is not None and slept.cpu_s < 0.3, slept.cpu_s
    assert looped.status == Status.TIMEOUT and 0.3 < looped.cpu_s <= looped.duration_s + 0.2, looped


def test_a_dead_task_names_the_step_it_marked_last():
    with SandboxPool(workers=1, spares=0, batch_size=4, timeout=1.0, confirm=False) as pool:
        crash, hang, done, unmarked = pool.run([
            Task(BAD + "steps_then", (2,)), Task(BAD + "steps_then", (3, "hang")),
            Task(BAD + "steps_then", (-1,)), Task(BAD + "segfault")])
    assert crash.status == Status.CRASHED and crash.mark == 2 and 0 <= crash.mark_s < 1
    assert hang.status == Status.TIMEOUT and hang.mark == 3 and 0.9 <= hang.mark_s < 5
    assert done.ok and done.value == 5 and done.mark is None  # only a death carries its mark
    # a task that set no mark of its own names none (the page is reset per task)
    assert unmarked.status == Status.CRASHED and unmarked.mark is None


def test_a_step_limit_kills_the_part_that_hangs_not_the_whole_task():
    """Each marked part may take ``step_timeout``: a task of many quick parts runs longer than
    that in all; one that hangs in a part is killed a step limit after its mark, long before
    its task limit, naming the part; before the first mark only the task limit applies."""
    with SandboxPool(workers=1, spares=0, batch_size=4, timeout=1.0, confirm=False) as pool:
        paced, hung, unmarked = pool.run([
            Task(BAD + "paced_steps", (0.3, 6), timeout=30, step_timeout=1.0),
            Task(BAD + "paced_steps", (0.2, 5, 2), timeout=30, step_timeout=1.0),
            Task(BAD + "endless_loop", timeout=1.5, step_timeout=0.3)])
    assert paced.ok and paced.value == 6 and paced.duration_s > 1.5, paced
    assert hung.status == Status.TIMEOUT and hung.mark == 2, hung
    assert 1.3 <= hung.duration_s < 5 and 1.0 <= hung.mark_s < 4, hung
    assert "step 2" in hung.error_message and "1 s" in hung.error_message, hung.error_message
    assert unmarked.status == Status.TIMEOUT and unmarked.mark is None and unmarked.duration_s >= 1.5, unmarked
    assert unmarked.error_message == "killed after 1.5 s"


def test_a_step_limit_is_checked_like_the_task_limit():
    assert pickle.loads(pickle.dumps(Task("numpy:sum", step_timeout=2))).step_timeout == 2.0
    for bad in (0, -1, float("inf"), True, "1"):
        with pytest.raises(TaskError, match="step_timeout"):
            Task("numpy:sum", step_timeout=bad)


def test_per_task_timeout_overrides_the_pool_default(numpy_pool):
    slow, fast = numpy_pool.run([Task(BAD + "sleep", (3,), timeout=0.3), Task(BAD + "sleep", (0.05,), timeout=2)])
    assert slow.status == Status.TIMEOUT and 0.3 <= slow.duration_s < 2.5
    assert fast.status == Status.OK


def test_grandchildren_die_with_a_timed_out_worker():
    with SandboxPool(workers=1, timeout=1.0, confirm=False) as pool:
        (outcome,) = pool.run([Task(BAD + "spawn_grandchild_and_hang")])
    assert outcome.status == Status.TIMEOUT
    pid = int(outcome.stderr_tail.split("GRANDCHILD ")[1].split()[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"grandchild {pid} outlived its worker")


def test_confirmation_distinguishes_flaky_crashes(tmp_path):
    marker = str(tmp_path / "crashed-once")
    with SandboxPool(workers=1) as pool:
        flaky, steady = pool.run([Task(BAD + "crash_once", (marker,)), Task(BAD + "abort")])
    assert flaky.status == Status.CRASHED and flaky.confirmed is False and flaky.confirm_status == Status.OK
    assert steady.status == Status.CRASHED and steady.confirmed is True and steady.confirm_status == Status.CRASHED
    with SandboxPool(workers=1, confirm=False) as pool:
        (unconfirmed,) = pool.run([Task(BAD + "abort")])
    assert unconfirmed.confirmed is None and unconfirmed.confirm_status is None


def test_no_task_is_lost_among_frequent_crashes():
    rng = random.Random(7)
    kinds = ["echo"] * 12 + ["segfault", "exit3", "abort", "unserializable", "huge_message"]
    plan = [rng.choice(kinds) for _ in range(400)]
    with SandboxPool(workers=2, batch_size=16, confirm=False, capture_limit=1024) as pool:
        outcomes = pool.run([Task(BAD + k, (i,) if k == "echo" else ()) for i, k in enumerate(plan)])
    expected = {"echo": Status.OK, "segfault": Status.CRASHED, "exit3": Status.CRASHED, "abort": Status.CRASHED,
                "unserializable": Status.UNSERIALIZABLE, "huge_message": Status.RAISED}
    assert len(outcomes) == len(plan)
    for i, (kind, outcome) in enumerate(zip(plan, outcomes)):
        assert outcome.status == expected[kind], (i, kind, outcome)
        if kind == "echo":
            assert outcome.value == i


# --- lifecycle ----------------------------------------------------------------------------------

def test_close_with_work_in_flight_cancels_everything():
    pool = SandboxPool(workers=1, timeout=60)
    futures = [pool.submit(Task(BAD + "sleep_then", (30, i))) for i in range(4)]
    time.sleep(0.5)  # the first one is running
    start = time.monotonic()
    pool.close(wait=False)
    assert time.monotonic() - start < 10
    outcomes = [f.result(timeout=5) for f in futures]
    assert [o.status for o in outcomes] == [Status.CANCELLED] * 4
    with pytest.raises(PoolClosedError):
        pool.submit(Task(BAD + "echo", (1,)))


def test_leaving_the_with_block_waits_for_submitted_work():
    with SandboxPool(workers=2) as pool:
        futures = [pool.submit(Task(BAD + "sleep_then", (0.2, i))) for i in range(4)]
    assert [f.result(timeout=0).value for f in futures] == [0, 1, 2, 3]


def test_run_timeout_raises_but_the_tasks_go_on():
    with SandboxPool(workers=1) as pool:
        with pytest.raises(TimeoutError):
            pool.run([Task(BAD + "sleep", (1,))], timeout=0.1)
        assert pool.run([Task(BAD + "echo", (3,))])[0].value == 3


def test_workers_are_replaced_after_max_tasks():
    with SandboxPool(workers=1, max_tasks_per_worker=5) as pool:
        pids = [o.value for o in pool.run([Task(BAD + "getpid") for _ in range(20)])]
    assert len(set(pids)) == 4 and all(pids.count(p) == 5 for p in set(pids))


def test_a_worker_whose_memory_grew_past_recycle_memory_is_replaced():
    """A soft memory limit: the worker that kept 96 MB is replaced after its task; one that kept
    8 MB, under the 48 MB allowed, stays."""
    with SandboxPool(workers=1, spares=0, recycle_memory=48 << 20) as pool:
        small = pool.run([Task(BAD + "hold", (8,))])[0].value
        time.sleep(1.1)  # a worker's memory is read at most once a second
        assert pool.run([Task(BAD + "getpid")])[0].value == small and pool.stats["recycled_memory"] == 0
        time.sleep(1.1)
        big = pool.run([Task(BAD + "hold", (96,))])[0].value
        assert big == small and pool.stats["recycled_memory"] == 1
        assert pool.run([Task(BAD + "getpid")])[0].value != big
    with SandboxPool(workers=1, spares=0) as pool:  # without the option: kept, whatever it holds
        big = pool.run([Task(BAD + "hold", (96,))])[0].value
        time.sleep(1.1)
        assert pool.run([Task(BAD + "getpid")])[0].value == big and pool.stats["recycled_memory"] == 0


def test_retirement_does_not_depend_on_eof(caplog):
    """A fork of the parent holds copies of the worker sockets; workers must still retire."""
    with SandboxPool(workers=1, max_tasks_per_worker=3) as pool:
        pool.run([Task(BAD + "echo", (0,))])
        child = os.fork()
        if child == 0:  # holds every descriptor of the parent, sockets included
            time.sleep(20)
            os._exit(0)
        try:
            start = time.monotonic()
            assert [o.value for o in pool.run([Task(BAD + "echo", (i,)) for i in range(12)])] == list(range(12))
            assert time.monotonic() - start < 8
        finally:
            os.kill(child, 9)
            os.waitpid(child, 0)
    assert "no exit report" not in caplog.text


# --- start methods and interpreters --------------------------------------------------------------

def test_zygote_with_threads_falls_back_to_spawn():
    with SandboxPool(preload=("tests.sandbox.threaded_preload",), workers=1, confirm=False) as pool:
        assert pool.mode == "spawn" and "threads" in pool.info["reason"] and pool.info["threads"] >= 2
        outcomes = pool.run([Task(BAD + "modules_loaded", ("tests.sandbox.threaded_preload",)),
                             Task(BAD + "segfault"), Task(BAD + "echo", (9,))])
    assert outcomes[0].value == {"tests.sandbox.threaded_preload": True}  # imported by the spawned worker
    assert outcomes[1].status == Status.CRASHED and outcomes[2].value == 9


def test_start_method_fork_refuses_an_unsafe_zygote():
    with pytest.raises(ZygoteError, match="cannot fork safely"):
        SandboxPool(preload=("tests.sandbox.threaded_preload",), start_method="fork")


def test_start_method_spawn():
    with SandboxPool(preload=("numpy",), workers=1, start_method="spawn") as pool:
        assert pool.mode == "spawn"
        assert pool.run([Task("numpy:add", (1, 2))])[0].value == 3


def test_another_interpreter(tmp_path):
    """A venv whose python differs from ours; it sees our packages through a .pth file."""
    import subprocess
    import sys
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(site, "ours.pth"), "w") as handle:
        handle.write(sysconfig.get_paths()["purelib"] + "\n")
    with SandboxPool(preload=("numpy",), workers=1, python=str(python)) as pool:
        executable, added = (o.value for o in pool.run([Task(BAD + "python_executable"), Task("numpy:add", (1, 2))]))
        assert pool.info["python"] == str(python)
    assert executable == str(python) and added == 3


def test_a_failing_run_runs_none_of_its_queued_tasks():
    with SandboxPool(workers=1, spares=0, batch_size=1) as pool:
        tasks = [Task(BAD + "sleep_then", (0.05, i)) for i in range(200)] + [Task(BAD + "echo", (object(),))]
        with pytest.raises(EncodeError, match=r"step 0 \(tests.badtasks:echo\) args\[0\]"):
            pool.run(tasks)
        assert pool.run([Task(BAD + "echo", (1,))])[0].value == 1
        stats = pool.stats
    # run() queues all 201 (the manager encodes those past the first few, finds the bad one and
    # fails the call): what had not started was dropped unrun, the bad task too; each of the
    # 200 takes 50 ms, so few ran in the meantime. The last run's one task makes 202.
    assert stats["ok"] + stats["abandoned"] == stats["submitted"] == 202
    assert stats["ok"] - 1 < 40 and stats["abandoned"] >= 20


def test_a_value_the_pool_cannot_decode_spoils_only_its_own_result(monkeypatch):
    """Results travel in groups; a value the parent cannot decode marks only its own task."""
    import sandbox.codec as codec_module

    real = codec_module.dtype_from_code

    def no_float16(code):
        if code == "<f2":
            raise codec_module.DecodeError("no float16 in this test")
        return real(code)

    with SandboxPool(workers=1, spares=0) as pool:
        monkeypatch.setattr(codec_module, "_array_meta", {})
        monkeypatch.setattr(codec_module, "_dtype_cache", {})
        monkeypatch.setattr(codec_module, "dtype_from_code", no_float16)
        outcomes = pool.run([Task(BAD + "echo", (None,)), Task("numpy:ones", (3,), {"dtype": "float16"}),
                             Task(BAD + "echo", (7,))])
    assert [o.status for o in outcomes] == [Status.OK, Status.UNSERIALIZABLE, Status.OK]
    assert outcomes[0].value is None and outcomes[2].value == 7
    assert outcomes[1].error_type == "sandbox.errors.DecodeError"


def test_workers_that_cannot_start_give_a_clear_error_not_a_hang(tmp_path):
    env = {"SANDBOX_TEST_MARKER": str(tmp_path / "imported")}
    with SandboxPool(preload=("tests.sandbox.fails_after_first_import",), workers=1, start_method="spawn",
                     env=env) as pool:
        start = time.monotonic()
        outcomes = pool.run([Task(BAD + "echo", (i,)) for i in range(3)], timeout=120)
        assert time.monotonic() - start < 120
        for outcome in outcomes:
            assert outcome.status == Status.CANCELLED and outcome.error_type == "sandbox.errors.WorkerStartError"
            assert "broken on purpose" in outcome.error_message
        with pytest.raises(PoolClosedError, match="broken"):
            pool.submit(Task(BAD + "echo", (1,)))


def test_the_zygote_is_restarted_when_it_dies():
    import signal

    with SandboxPool(workers=2, confirm=False) as pool:
        first = pool.info["pid"]
        timer = threading.Timer(0.3, os.kill, (first, signal.SIGKILL))
        timer.start()
        outcomes = pool.run([Task(BAD + "sleep_then", (0.05, i)) for i in range(30)])
        timer.join()
        assert [o.value for o in outcomes] == list(range(30))  # interrupted tasks ran again
        assert pool.info["pid"] != first
        assert pool.run([Task(BAD + "echo", (1,))])[0].value == 1
