"""The streaming loop (xamt/fuzz/engine.py): a window in flight, results as they complete."""
from __future__ import annotations

import queue
import threading
import time
from types import SimpleNamespace

from xamt.fuzz.engine import Engine
from xamt.fuzz.schedule import FAST, SLOW, Proposal


class FakeExecutor:
    """Runs each item on a timer: ``slow`` keys take ``slow_s``, the others ``fast_s``."""

    def __init__(self, slow_s=1.0, fast_s=0.002):
        self.slow_s, self.fast_s = slow_s, fast_s
        self.done: queue.Queue = queue.Queue()
        self.inflight = 0
        self.peak = 0

    def submit(self, token, item):
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        delay = self.slow_s if item.key == "slow" else self.fast_s
        threading.Timer(delay, lambda: self.done.put((token, SimpleNamespace(key=item.key)))).start()

    def submit_many(self, pairs):
        for token, item in pairs:
            self.submit(token, item)

    def wait(self, timeout):
        out = []
        try:
            out.append(self.done.get(timeout=timeout))
            while True:
                out.append(self.done.get_nowait())
        except queue.Empty:
            pass
        self.inflight -= len(out)
        return out


class FakeSchedule:
    """One slow proposal first, then fast ones; stops after ``total``."""

    def __init__(self, total):
        self.left = total
        self.first = True

    def propose(self, n, elapsed):
        out = []
        for _ in range(min(n, self.left)):
            key = "slow" if self.first else "fast"
            self.first = False
            self.left -= 1
            out.append(Proposal(key, None, SLOW if key == "slow" else FAST, "values:ordinary", 0.0))
        return out


def test_results_stream_while_a_slow_call_is_in_flight_and_the_window_holds():
    ex = FakeExecutor(slow_s=1.5)
    finished = []
    engine = Engine({"slow": "S", "fast": "F"}, FakeSchedule(600), ex, window=16,
                    make_item=lambda g, p: SimpleNamespace(key=p.key),
                    on_result=lambda p, run: finished.append((time.monotonic(), p.key)),
                    on_tick=lambda now: None)
    start = time.monotonic()
    exhausted = engine.run(start + 20, lambda: time.monotonic() - start, lambda: False)
    assert exhausted and len(finished) == 600 and ex.peak <= 16
    slow_at = next(t for t, k in finished if k == "slow")
    # the fast ones did not wait for the slow one: most finished before it
    assert sum(1 for t, k in finished if k == "fast" and t < slow_at) > 300
    assert engine.stats.started == engine.stats.finished == 600 and engine.stats.slow_started == 1


class BatchingExecutor(FakeExecutor):
    """A FakeExecutor that also takes a refill of the window in one call."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.batches = []

    def submit_many(self, pairs):
        self.batches.append(len(pairs))
        for token, item in pairs:
            super().submit(token, item)

    def submit(self, token, item):
        raise AssertionError("the engine hands a batching executor whole refills")


def test_an_executor_that_batches_gets_each_refill_in_one_call():
    ex = BatchingExecutor(slow_s=0.2)
    finished = []
    engine = Engine({"slow": "S", "fast": "F"}, FakeSchedule(200), ex, window=16,
                    make_item=lambda g, p: SimpleNamespace(key=p.key),
                    on_result=lambda p, run: finished.append(p.key), on_tick=lambda now: None)
    start = time.monotonic()
    assert engine.run(start + 20, lambda: time.monotonic() - start, lambda: False)
    assert len(finished) == 200 and sum(ex.batches) == 200 and ex.peak <= 16
    # the first fills the window; later ones refill it by a quarter window or more, but for the
    # schedule's last few proposals
    assert ex.batches[0] == 16 and all(n >= 4 for n in ex.batches[1:-1]), ex.batches


def test_the_loop_ticks_and_stops_when_asked():
    ex = FakeExecutor(slow_s=30.0)
    ticks = []
    stop = threading.Event()
    engine = Engine({"slow": "S"}, FakeSchedule(1), ex, window=4,
                    make_item=lambda g, p: SimpleNamespace(key=p.key),
                    on_result=lambda p, run: None, on_tick=ticks.append, poll=0.05)
    threading.Timer(0.5, stop.set).start()
    start = time.monotonic()
    assert engine.run(start + 20, lambda: 0.0, stop.is_set) is False
    assert time.monotonic() - start < 2.0 and len(ticks) >= 5 and len(engine.inflight) == 1


class _RecordingPool:
    """A pool stand-in that resolves every task at once and remembers what it ran."""

    def __init__(self):
        self.ran = []

    def submit_many(self, tasks):
        import concurrent.futures

        out = []
        for t in tasks:
            self.ran.append(t)
            f = concurrent.futures.Future()
            f.set_result(t)
            out.append(f)
        return out


def test_the_local_executor_sends_isolated_items_to_the_isolation_pool():
    from xamt.fuzz.engine import LocalExecutor

    class Gx:  # one task per item, whose result is the item's run
        def run_steps(self, items):
            outcomes = yield [items[0].tag]
            return [outcomes[0]]

    main, apart = _RecordingPool(), _RecordingPool()
    iso = {"pool": None}
    ex = LocalExecutor(main, Gx(), isolation=lambda: iso["pool"])
    ex.submit_many([(1, SimpleNamespace(tag="a", isolate=True))])   # no isolation pool yet: the main one
    iso["pool"] = apart
    ex.submit_many([(2, SimpleNamespace(tag="b", isolate=True))])
    ex.submit_many([(3, SimpleNamespace(tag="c", isolate=False))])
    assert sorted(ex.wait(1.0)) == [(1, "a"), (2, "b"), (3, "c")]
    assert main.ran == ["a", "c"] and apart.ran == ["b"]


def test_the_isolation_pool_has_a_zygote_of_the_main_runtime_only(monkeypatch):
    """Calls of other runtimes in isolated groups go to those runtimes' pools of the main set:
    no second zygote per runtime."""
    import xamt.exec.pools as pools_mod
    from sandbox import PoolSet
    from xamt.fuzz.campaign import _LocalBackend

    class Fake:
        def __init__(self, name):
            self.name, self.workers, self.stats, self.closed = name, 1, {"submitted": 1}, 0

        def submit_many(self, tasks):
            return []

        def describe(self):
            return self.name

        def close(self, wait=True):
            self.closed += 1

    main, paddle, made = Fake("main"), Fake("paddle"), []

    def open_pool(**kw):
        made.append(kw)
        return Fake("isolation")

    monkeypatch.setattr(pools_mod, "open_pool", open_pool)
    backend = _LocalBackend(PoolSet({"main": main, "paddle": paddle}, default="main"),
                            {"timeout": 5.0, "runtimes": {"paddle": {}}})
    backend._start_isolation()
    iso = backend.isolation()
    assert "runtimes" not in made[0] and made[0]["workers"] == 1
    assert iso.pools["paddle"] is paddle and iso.pools["main"].name == "isolation"
    assert [p.name for p in backend.sandbox_pools()] == ["main", "paddle", "isolation"]
    stats = backend.close()
    assert (main.closed, paddle.closed, iso.pools["main"].closed) == (1, 1, 1)
    assert stats["isolation"] == {"submitted": 1}
