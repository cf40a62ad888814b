"""PoolSet: tasks go to the pool their runtime names; a set reads like one pool."""
from __future__ import annotations

import pytest

from sandbox import ConfigError, PoolSet, SandboxPool, Status, Task, TaskError

BAD = "tests.badtasks:"


@pytest.fixture
def pools():
    """Two runtimes told apart by an environment variable (as KERAS_BACKEND tells keras')."""
    main = SandboxPool(preload=("numpy",), workers=1, env={"XAMT_TEST_RUNTIME": "main"})
    try:
        other = SandboxPool(preload=("numpy",), workers=1, env={"XAMT_TEST_RUNTIME": "other"})
    except BaseException:
        main.close()
        raise
    with PoolSet({"main": main, "other": other}, default="main") as ps:
        yield ps


def test_tasks_run_in_the_pool_their_runtime_names(pools):
    tasks = [Task("os:getenv", ("XAMT_TEST_RUNTIME",), runtime=r) for r in ("other", None, "main", "other")]
    assert [o.value for o in pools.run(tasks)] == ["other", "main", "main", "other"]
    futures = pools.submit_many(tasks[::-1])
    assert [f.result(timeout=60).value for f in futures] == ["other", "main", "main", "other"]
    assert pools.submit(Task("os:getenv", ("XAMT_TEST_RUNTIME",), runtime="other")).result(60).value == "other"


def test_pids_stats_and_workers_cover_every_pool(pools):
    pids = {o.worker_pid for o in pools.run([Task(BAD + "getpid", runtime=r) for r in ("main", "other")])}
    assert len(pids) == 2 and pids <= set(pools.worker_pids())
    assert pools.stats["ok"] == 2 and pools.workers == 2
    assert "runtime other" in pools.describe()


def test_a_crash_in_one_runtime_leaves_the_other_alone(pools):
    crashed, fine = pools.run([Task(BAD + "segfault", runtime="other", confirm=False),
                               Task("numpy:add", (1, 2))])
    assert crashed.status == Status.CRASHED and fine.value == 3
    assert pools.run([Task("numpy:add", (2, 2), runtime="other")])[0].value == 4


def test_an_unknown_runtime_queues_nothing(pools):
    with pytest.raises(TaskError, match="no pool for runtime 'elsewhere'"):
        pools.submit_many([Task("numpy:add", (1, 2)), Task("numpy:add", (1, 2), runtime="elsewhere")])
    assert pools.stats["submitted"] == 0


def test_bad_sets_and_bad_runtime_names_are_refused():
    with pytest.raises(ConfigError, match="at least one pool"):
        PoolSet({}, default="main")
    with pytest.raises(ConfigError, match="default runtime"):
        PoolSet({"a": object()}, default="b")  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="not a pool"):
        PoolSet({"a": object()}, default="a")  # type: ignore[dict-item]
    with pytest.raises(TaskError, match="runtime must be a non-empty string"):
        Task("numpy:add", (1, 2), runtime="")


def test_the_runtime_survives_pickling():
    import pickle

    task = pickle.loads(pickle.dumps(Task("numpy:add", (1, 2), runtime="other", affinity="k")))
    assert task.runtime == "other" and task.affinity == "k"
