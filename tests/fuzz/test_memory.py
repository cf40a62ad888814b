"""The campaign's memory budget (xamt/fuzz/memory.py): the allowance each worker may grow by."""
from __future__ import annotations

import os

import pytest

from xamt.fuzz.memory import MemoryGovernor, machine_memory, tree_pss

MIB = 1 << 20


class _Pool:
    def __init__(self, workers: int):
        self.workers = workers
        self.recycle_memory = None


def _governor(readings, pools, **kw):
    it = iter(readings)
    return MemoryGovernor(lambda: pools, kw.pop("budget", 1000 * MIB), floor=kw.pop("floor", 50 * MIB),
                          every_s=10.0, measure=lambda: (next(it), 5), **kw)


def test_the_first_reading_shares_what_the_budget_leaves_among_the_workers():
    pools = [_Pool(2), _Pool(1), None]  # None: a pool not started yet
    g = _governor([400 * MIB], pools)
    g.tick(now=0.0)  # too early: the zygotes are still importing
    assert g.allowance is None and pools[0].recycle_memory is None
    g.tick(now=1e9)
    assert g.allowance == 200 * MIB and [p.recycle_memory for p in pools[:2]] == [200 * MIB] * 2


def test_over_the_budget_the_allowance_halves_down_to_the_floor_and_under_it_grows_again():
    pools = [_Pool(2)]
    g = _governor([600 * MIB, 1100 * MIB, 1200 * MIB, 1300 * MIB, 900 * MIB, 300 * MIB], pools,
                  ceiling=500 * MIB)
    seen = []
    for i in range(6):
        g.tick(now=1e9 + 20 * i)
        seen.append(g.allowance // MIB)
    # 200 shared; halved twice over budget, floored at 50; kept at 90 %; raised by half under 75 %
    assert seen == [200, 100, 50, 50, 50, 75]
    assert pools[0].recycle_memory == 75 * MIB and g.summary()["peak_pss_gib"] == round(1300 / 1024, 2)


def test_the_ceiling_bounds_the_allowance():
    g = _governor([0], [_Pool(1)], ceiling=100 * MIB)
    g.tick(now=1e9)
    assert g.allowance == 100 * MIB


def test_bad_budgets_are_refused():
    with pytest.raises(ValueError):
        MemoryGovernor(lambda: [], 0, floor=MIB)


def test_the_tree_of_this_process_is_measured():
    pss, processes = tree_pss(os.getpid())
    assert pss > 10 * MIB and processes >= 1
    assert machine_memory() > pss


def test_a_budget_that_is_not_positive_is_refused_before_anything_runs(tmp_path):
    from xamt.errors import ConfigError
    from xamt.fuzz.campaign import FuzzConfig, run_campaign

    with pytest.raises(ConfigError, match="--memory-budget"):
        run_campaign(FuzzConfig(out=tmp_path, libraries=["numpy"], memory_budget=0, progress=False))
