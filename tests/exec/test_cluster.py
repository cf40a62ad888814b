"""The placement logic of :class:`xamt.exec.cluster.Shards`, without a cluster: keys stay with
their actor, move off one that is stuck, and a lost actor's jobs go to the others with what they
need. (The real cluster runs in tests/fuzz/test_ray.py.)"""
import os

import pytest

from xamt.exec.cluster import ClusterError, Shards, _Actor, _guarded, _node_local


def _shards(*workers):
    s = object.__new__(Shards)
    s.actors = [_Actor(handle=None, where=f"n{i}", node_id=str(i), workers=w) for i, w in enumerate(workers)]
    s.owner, s.lost, s.on_moved = {}, [], None
    s.moved = s.resubmitted = s.calls = 0
    return s


def test_keys_are_spread_by_load_and_stay_with_their_actor():
    s = _shards(1, 1)
    first = {k: s.actor_for(k).where for k in "abcd"}
    assert sorted(first.values()) == ["n0", "n0", "n1", "n1"]
    for token, k in enumerate("abcd"):
        s.start(token, k, None)
    # a moderate imbalance keeps every key where it is (its compiled state is there)
    s.start(10, "e", None)
    assert {k: s.actor_for(k).where for k in "abcd"} == first and s.moved == 0


def test_a_key_moves_off_an_actor_stuck_behind_slow_calls():
    s = _shards(1, 1)
    home = s.actor_for("k")
    other = next(a for a in s.actors if a is not home)
    for token in range(12):  # the home actor holds a backlog; the other runs dry
        home.inflight[token] = ("x", None)
    other.inflight[99] = ("y", None)
    assert s.actor_for("k") is other and s.moved == 1
    assert s.owner["k"] is other and other.keys == 1 and home.keys == 0


def test_workers_weigh_the_load():
    s = _shards(4, 1)
    big, small = s.actors
    for token in range(8):
        big.inflight[token] = ("x", None)  # 2 per worker
    small.inflight[50] = ("y", None)       # 1 per worker
    assert s.actor_for("new") is small     # fewer jobs per worker
    for token in range(8, 12):
        big.inflight[token] = ("x", None)  # 3 per worker: not over 2 * 1 + 4
    assert s.actor_for("new") is small and s.moved == 0


def test_a_lost_actors_jobs_go_to_the_others_with_what_they_need():
    s = _shards(1, 1)
    s.on_moved = lambda token, key, payload: ("again", payload)
    a, b = s.actors
    s.owner["k"] = a
    a.keys = 1
    s.start(1, "k", "p1", a)
    s.start(2, "k", "p2", a)
    s._lose(a, RuntimeError("node died"))
    assert s.lost == ["n0"] and s.resubmitted == 2 and not a.alive
    assert b.inflight == {1: ("k", ("again", "p1")), 2: ("k", ("again", "p2"))}
    assert b.outbox == [(1, ("again", "p1")), (2, ("again", "p2"))] and s.owner["k"] is b
    with pytest.raises(ClusterError, match="every Ray node of the campaign was lost: n0, n1"):
        s._lose(b, RuntimeError("node died"))  # its jobs have nowhere left to run


def test_a_job_that_raises_is_reported_not_raised():
    def steps():
        outcomes = yield ["task"]
        raise ValueError(f"bad outcome {outcomes}")

    gen = _guarded(steps())
    assert next(gen) == ["task"]
    with pytest.raises(StopIteration) as stop:
        gen.send(["o"])
    assert stop.value.value == (False, "ValueError: bad outcome ['o']")


def test_caches_below_an_unwritable_output_folder_move_to_the_nodes_temporary_folder(tmp_path):
    out = tmp_path / "out"
    kw = _node_local({"env": {"CACHE": str(out / "cache" / "jax"), "OTHER": "1"}, "workers": 2}, str(out))
    assert kw["env"]["CACHE"] == str(out / "cache" / "jax") and (out / "cache" / "jax").is_dir()
    assert kw["workers"] == 2 and kw["env"]["OTHER"] == "1"
    kw = _node_local({"env": {"CACHE": "/proc/xamt-out/cache/jax"}}, "/proc/xamt-out")
    assert kw["env"]["CACHE"].endswith(os.path.join("xamt-node-cache", "cache", "jax"))
