"""The step-generator scheduler: many generators in flight, their tasks batched per pool."""
from __future__ import annotations

from concurrent.futures import Future

from xamt.exec.schedule import Scheduler


class FakePool:
    """Runs a task at once: a task is a number, its outcome that number doubled."""

    def __init__(self):
        self.batches: list[list[int]] = []

    def submit_many(self, tasks):
        self.batches.append(list(tasks))
        futures = []
        for t in tasks:
            f: Future = Future()
            f.set_result(2 * t)
            futures.append(f)
        return futures


def steps(*rounds):
    """A generator yielding each round's tasks and returning every outcome it received."""
    got = []
    for tasks in rounds:
        got.append((yield list(tasks)))
    return got


def drain(sched):
    out = {}
    while len(sched):
        out.update(sched.wait(timeout=5))
    return out


def test_start_many_hands_each_pool_one_batch_and_every_generator_finishes():
    main, other = FakePool(), FakePool()
    sched = Scheduler(main)
    sched.start_many([
        ("a", steps([1, 2], [3]), None),
        ("b", steps([], [4]), None),      # an empty first step is answered at once
        ("c", steps(), None),             # finishes before running anything
        ("d", steps([5]), other),
    ])
    assert main.batches == [[1, 2, 4]]    # one hand-over for a and b's first tasks
    assert other.batches == [[5]]
    done = drain(sched)
    done.update(sched.wait(timeout=0))
    assert done == {"a": [[2, 4], [6]], "b": [[], [8]], "c": [], "d": [[10]]}
    assert main.batches[1:] == [[3]]      # a's second step went on its own


def test_start_many_is_start_for_each():
    one, many = FakePool(), FakePool()
    s1, s2 = Scheduler(one), Scheduler(many)
    for k in range(4):
        s1.start(k, steps([k], [k + 10]))
    s2.start_many([(k, steps([k], [k + 10]), None) for k in range(4)])
    assert drain(s1) == drain(s2) == {k: [[2 * k], [2 * k + 20]] for k in range(4)}
    assert len(one.batches) == 8 and len(many.batches) == 5
