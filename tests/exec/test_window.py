"""The build's window of candidates in flight, shared out by runtime (xamt.exec.window)."""
from types import SimpleNamespace as NS

import pytest

from xamt.exec.window import RuntimeWindow, pool_workers, runtime_caps


def _window(total, caps, items):
    w = RuntimeWindow(total, caps)
    for key, needs in items:
        w.push(key, key, needs)
    return w


def test_items_start_in_push_order_up_to_the_window():
    w = _window(3, {"main": 3}, [(k, {"main"}) for k in "abcde"])
    assert w.take() == ["a", "b", "c"] and w.take() == []
    assert (len(w), w.running) == (2, 3)
    w.finished("b")
    assert w.take() == ["d"]


def test_a_one_worker_runtime_holds_its_share_and_the_rest_goes_on():
    """A slow one-worker runtime's items queued first fill no more than its share: the main
    pool's items behind them start, and keep starting while the slow ones wait (one window for
    all left the main pool idle with 1,380 candidates queued)."""
    items = [(f"pt{k}", {"pytensor"}) for k in range(6)] + [(f"m{k}", {"main"}) for k in range(6)]
    w = _window(4, runtime_caps(4, {"main": 2, "pytensor": 1}), items)
    assert w.take() == ["pt0", "pt1", "m0", "m1"]
    w.finished("m0")
    w.finished("m1")
    assert w.take() == ["m2", "m3"]  # not pt2: PyTensor's two are still running
    w.finished("pt0")
    w.finished("m2")
    assert w.take() == ["pt2", "m4"]  # the earliest first, each where there is room


def test_an_item_needs_room_in_every_runtime_it_uses():
    w = _window(10, {"main": 10, "paddle": 1}, [("x1", {"main", "paddle"}), ("x2", {"main", "paddle"}),
                                                 ("m", {"main"})])
    assert w.take() == ["x1", "m"]
    w.finished("x1")
    assert w.take() == ["x2"]


def test_a_runtime_without_a_cap_is_held_by_the_window_alone_and_clear_drops_the_queue():
    w = _window(2, {}, [("a", {"other"}), ("b", {"other"}), ("c", {"other"})])
    assert w.take() == ["a", "b"]
    assert w.clear() == 1 and len(w) == 0 and w.running == 2
    w.finished("a")
    assert w.take() == []


def test_caps_follow_the_workers_and_come_from_a_pool_set_or_one_pool():
    assert runtime_caps(96, {"main": 2, "pytensor": 1}) == {"main": 96, "pytensor": 48}
    assert runtime_caps(3, {"main": 8, "mlx": 1}) == {"main": 3, "mlx": 1}
    pools = NS(pools={"main": NS(workers=2), "paddle": NS(workers=1)})
    assert pool_workers(pools, "main") == {"main": 2, "paddle": 1}
    assert pool_workers(NS(workers=3), "main") == {"main": 3}
    with pytest.raises(ValueError):
        RuntimeWindow(0)
