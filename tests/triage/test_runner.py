"""Triage on a thread beside fuzzing (xamt/triage/runner.py)."""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from xamt.triage.runner import TriageRunner


class FakeTriage:
    def __init__(self, gate: threading.Event | None = None):
        self.order: list[str] = []
        self.gate = gate
        self.deadline = None

    def process(self, cand, campaign_id):
        if self.gate is not None:
            self.gate.wait(10)
        self.order.append(cand.name)
        return SimpleNamespace(seconds=0.01, finding=None, dropped="fake")


def cand(group, name):
    return SimpleNamespace(group=SimpleNamespace(key=group), name=name)


def _wait(runner, n):
    deadline = time.monotonic() + 10
    got = []
    while len(got) < n and time.monotonic() < deadline:
        got += runner.results()
        time.sleep(0.01)
    return got


def test_the_group_triaged_least_goes_first_and_results_come_back():
    gate = threading.Event()
    triage = FakeTriage(gate)
    runner = TriageRunner(triage, campaign_id=1)
    runner.put(cand("a", "a1"))  # taken at once; waits at the gate
    time.sleep(0.1)
    for c in [cand("a", "a2"), cand("a", "a3"), cand("b", "b1"), cand("c", "c1"), cand("b", "b2")]:
        runner.put(c)
    assert runner.queued == 5
    gate.set()
    got = _wait(runner, 6)
    assert [c.name for c, _ in got] == triage.order
    # after a1: b and c (never served) before a's second, then the rest by age
    assert triage.order == ["a1", "b1", "c1", "a2", "b2", "a3"]
    assert runner.processed == 6 and runner.stop(1.0) == []


def test_stop_returns_what_was_never_triaged_and_a_full_queue_drops_the_busiest_group():
    gate = threading.Event()
    runner = TriageRunner(FakeTriage(gate), campaign_id=1, limit=3)
    runner.put(cand("x", "busy"))
    time.sleep(0.1)
    for c in [cand("a", "a1"), cand("a", "a2"), cand("b", "b1"), cand("a", "a3")]:
        runner.put(c)
    assert [c.name for c in runner.overflow] == ["a3"]
    left = runner.stop(0.2)  # the one in progress waits at the gate: left behind
    assert sorted(c.name for c in left) == ["a1", "a2", "a3", "b1"]
    runner.put(cand("z", "late"))  # after stop: not triaged, counted
    gate.set()
    assert "late" in [c.name for c in runner.overflow]
