"""Task affinity: tasks sharing a key run in one worker (so its per-process caches serve them)."""
from __future__ import annotations

import collections
import time

import pytest

from sandbox import SandboxPool, Task, TaskError

from .conftest import BAD

KEYS = [f"group-{i}" for i in range(8)]


def _pids_by_key(outcomes, keys):
    by_key = collections.defaultdict(collections.Counter)
    for key, o in zip(keys, outcomes):
        assert o.status == "ok", o.summary()
        by_key[key][o.worker_pid] += 1
    return by_key


def test_one_key_one_worker_and_the_keys_are_shared_out():
    with SandboxPool(preload=(), workers=2, timeout=20) as pool:
        rounds = []
        for _ in range(2):
            # keys interleaved, as a fuzzer's batches are; a short sleep so both workers are busy
            keys = [KEYS[i % len(KEYS)] for i in range(320)]
            outs = pool.run([Task(BAD + "sleep_then", (0.001, i), affinity=k) for i, k in enumerate(keys)])
            rounds.append(_pids_by_key(outs, keys))
    for by_key in rounds:
        # an idle worker may help out with another's key at the end of a round; the bulk stays
        for key, pids in by_key.items():
            assert pids.most_common(1)[0][1] >= 0.75 * sum(pids.values()), (key, pids)
        homes = {key: pids.most_common(1)[0][0] for key, pids in by_key.items()}
        assert len(set(homes.values())) == 2, homes  # both workers hold keys
    # the second round's keys stay where the first round put them
    assert ({k: p.most_common(1)[0][0] for k, p in rounds[0].items()}
            == {k: p.most_common(1)[0][0] for k, p in rounds[1].items()})


def test_keys_of_a_dead_worker_move_on():
    with SandboxPool(preload=(), workers=2, timeout=20) as pool:
        first = pool.run([Task(BAD + "sleep_then", (0, 1), affinity="k")])[0]
        crash = pool.run([Task(BAD + "segfault", affinity="k")])[0]
        assert crash.status == "crashed" and crash.worker_pid == first.worker_pid
        after = pool.run([Task(BAD + "sleep_then", (0, 2), affinity="k")])[0]
        assert after.status == "ok" and after.worker_pid != first.worker_pid


def test_affinity_must_be_a_string():
    with pytest.raises(TaskError, match="affinity"):
        Task("os:getpid", affinity=3)


def test_an_idle_worker_with_nothing_of_its_own_leaves_the_slot_to_the_owner():
    """Keys handed out while a fresh pool's workers start can land on the one that becomes the
    spare; an idle worker that finds only those keys must not hold the single slot (this hung)."""
    for _ in range(6):
        with SandboxPool(preload=(), workers=1, spares=1, timeout=20) as pool:
            keys = ["a", "b", "c", "a", "b", "c"]
            outs = pool.run([Task(BAD + "sleep_then", (0.01, i), affinity=k) for i, k in enumerate(keys)],
                            timeout=30)
            assert [o.value for o in outs] == list(range(len(keys)))
            # and again, now that each key has its owner
            outs = pool.run([Task(BAD + "sleep_then", (0.0, i), affinity=k) for i, k in enumerate(keys)],
                            timeout=30)
            assert [o.value for o in outs] == list(range(len(keys)))


def test_keys_have_no_more_homes_than_slots():
    """With one slot and two spares, whichever worker starts first takes the slot and every key:
    a key given to a spare would wait for a slot its owner never gets (this flaked as a third home)."""
    for _ in range(4):
        with SandboxPool(preload=(), workers=1, spares=2, timeout=20) as pool:
            keys = [KEYS[i % 4] for i in range(64)]
            outs = pool.run([Task(BAD + "sleep_then", (0.001, i), affinity=k) for i, k in enumerate(keys)])
            homes = {p for by in _pids_by_key(outs, keys).values() for p in by}
            assert len(homes) == 1, homes


def test_an_idle_worker_helps_out_while_the_owner_of_every_queued_key_is_busy():
    """One worker busy with a slow task must not hold the whole queue when every queued task
    carries its key: the idle worker takes a share (a campaign stalled like this after a worker
    death gave the replacement all the orphaned keys). What was already pipelined to the busy
    worker (a few small frames) waits for it; the rest of the queue must not."""
    with SandboxPool(preload=(), workers=2, timeout=60, batch_size=2) as pool:
        pool.run([Task(BAD + "sleep_then", (0, 0), affinity="k")])  # "k" has a home now
        slow = pool.submit(Task(BAD + "sleep", (10.0,), affinity="k"))
        time.sleep(0.3)  # the slow one runs
        quick = [pool.submit(Task(BAD + "sleep_then", (0.001, i), affinity="k")) for i in range(40)]
        deadline = time.monotonic() + 8.0
        while time.monotonic() < deadline and sum(f.done() for f in quick) < 30:
            time.sleep(0.05)
        served = sum(f.done() for f in quick)
        assert not slow.done() and served >= 30, f"{served} of 40 served while the slow one ran"
        assert all(f.result(timeout=60).status == "ok" for f in quick)
        assert slow.result(timeout=60).status == "ok"


def test_a_task_may_turn_the_pools_confirmation_off():
    with SandboxPool(preload=(), workers=1, timeout=20, confirm=True) as pool:
        plain, own = pool.run([Task(BAD + "segfault"), Task(BAD + "segfault", confirm=False)])
        assert plain.status == own.status == "crashed"
        assert plain.confirmed is True and own.confirmed is None
        assert pool.stats["confirm_runs"] == 1
    with pytest.raises(TaskError, match="confirm"):
        Task("os:getpid", confirm="yes")


def test_an_idle_worker_leaves_a_busy_owner_its_tasks_until_help_after():
    """A task of a key whose owner is busy for less than ``help_after`` waits for the owner (its
    caches are there); once the owner's task has run that long, the idle worker helps, woken by
    a timer even when nothing else happens."""
    with SandboxPool(preload=(), workers=2, timeout=60, batch_size=2, help_after=0.6) as pool:
        home = pool.run([Task(BAD + "sleep_then", (0, 0), affinity="k")])[0].worker_pid
        pool.run([Task(BAD + "sleep_then", (0, 0), affinity="other")])  # both workers have run
        slow = pool.submit(Task(BAD + "sleep", (0.3,), affinity="k"))
        time.sleep(0.05)
        quick = [pool.submit(Task(BAD + "sleep_then", (0, i), affinity="k")) for i in range(40)]
        assert {f.result(timeout=30).worker_pid for f in quick} == {home}
        assert slow.result(timeout=30).status == "ok" and pool.stats["helped"] == 0

        slow = pool.submit(Task(BAD + "sleep", (10.0,), affinity="k"))
        time.sleep(0.05)
        start = time.monotonic()
        quick = [pool.submit(Task(BAD + "sleep_then", (0, i), affinity="k")) for i in range(40)]
        deadline = start + 8.0
        while time.monotonic() < deadline and sum(f.done() for f in quick) < 30:
            time.sleep(0.02)
        served = [f.result() for f in quick if f.done()]
        assert len(served) >= 30 and all(o.worker_pid != home for o in served)
        assert time.monotonic() - start > 0.4 and not slow.done() and pool.stats["helped"] >= 1
