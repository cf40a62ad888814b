"""The cost-aware budget (xamt/fuzz/schedule.py), driven with stand-in groups and inputs."""
from __future__ import annotations

import collections
import dataclasses
import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from xamt.errors import DataFileError
from xamt.fuzz.schedule import FAST, SLOW, Schedule, load_settings
from xamt.fuzz.search import Search


@dataclasses.dataclass(frozen=True)
class Inp:
    """An input whose compile signature is its shape; the value changes with every draw."""

    shape: int
    value: float = 0.0

    def compile_signature(self) -> str:
        return str(self.shape)


def group(key, *, compiled=False, cross=True, first_call=0.001):
    call = "compiled" if compiled else "function"
    return SimpleNamespace(key=key, relation="cross_library" if cross else "alias",
                           members=[SimpleNamespace(call="function"), SimpleNamespace(call=call)],
                           member_info=[SimpleNamespace(seconds=first_call / 2)] * 2)


def make(groups, settings=None, budget_s=100.0, guided=True, timeout=None):
    settings = settings or load_settings()
    search = Search({g.key: [Inp(3)] for g in groups}, mutate=lambda k, p, r: p, guided=guided, seed=1)
    ops = collections.Counter()

    def mutate(key, parent, rng):
        ops["structural"] += 1
        return Inp(int(rng.integers(1, 1000)), float(rng.random()))

    def revalue(key, parent, rng, regime):
        ops[regime] += 1
        return dataclasses.replace(parent, value=float(rng.random()))

    sched = Schedule({g.key: g for g in groups}, search, mutate=mutate, revalue=revalue,
                     settings=settings, budget_s=budget_s, seed=2, timeout=timeout)
    return sched, search, ops


def finish(sched, search, prop, seconds=0.001):
    sched.done(prop, seconds, ran=True, rate=100.0)
    search.report(prop.key, prop.input, 0.0, cost=seconds)


def test_the_packaged_settings_load_and_bad_ones_are_named(tmp_path):
    s = load_settings()
    assert s.cycle and all(r in s.regimes for r in s.cycle) and 0 < s.structural < 0.5
    bad = tmp_path / "fuzzing.toml"
    bad.write_text('[values]\ncycle = ["ordinary", "nope"]\n[values.regimes]\nordinary = {}\n')
    with pytest.raises(DataFileError, match="nope"):
        load_settings(bad)
    bad.write_text('[values]\ncycle = ["o"]\n[values.regimes]\no = {}\n[schedule]\nflor = 3\n')
    with pytest.raises(DataFileError, match="flor"):
        load_settings(bad)
    bad.write_text('[values]\ncycle = ["o"]\n[values.regimes]\no = {rate = 1}\n')
    with pytest.raises(DataFileError, match="rate"):
        load_settings(bad)


def test_most_iterations_are_new_values_and_each_regime_comes_within_one_cycle():
    sched, search, ops = make([group("a")])
    cycle = sched.settings.cycle
    seen = []
    for _ in range(400):
        (prop,) = sched.propose(1, 0.0)
        seen.append(prop.op)
        finish(sched, search, prop)
    assert ops["structural"] < 0.25 * 400 and sum(ops[r] for r in set(cycle)) > 0.75 * 400
    regimes = [op.split(":")[1] for op in seen if op.startswith("values:")]
    # every regime of the cycle within the group's first len(cycle) + a few value iterations
    assert set(regimes[: len(cycle) + 4]) == set(cycle)


def test_calls_expected_to_compile_take_the_slow_lane_one_at_a_time():
    groups = [group(f"c{i}", compiled=True, cross=False) for i in range(6)]
    sched, search, _ = make(groups)
    props = sched.propose(6, 0.0)
    assert sum(p.lane == SLOW for p in props) == sched.settings.slow_lanes == 1
    # once its signature ran, the group's value iterations are fast
    slow = next(p for p in props if p.lane == SLOW)
    finish(sched, search, slow, seconds=3.0)
    again = [p for p in sched.propose(40, 0.0) if p.key == slow.key]
    assert again and all(p.lane == FAST or p.op == "structural" for p in again)


def test_a_first_call_the_build_timed_as_slow_is_a_slow_call_too():
    sched, search, _ = make([group("jaxish", first_call=1.5), group("cheap")])
    props = sched.propose(8, 0.0)
    assert [p.lane for p in props if p.key == "jaxish"].count(SLOW) <= 1
    assert all(p.lane == FAST for p in props if p.key == "cheap")


def test_compiled_relations_take_their_share_of_time_not_of_draws():
    groups = [group(f"c{i}", compiled=True, cross=False) for i in range(20)]
    groups += [group(f"e{i}", cross=False) for i in range(20)]
    sched, search, _ = make(groups)
    cost = {"compiled": 0.5, "eager": 0.001}
    for _ in range(3000):
        for prop in sched.propose(4, 0.0):
            finish(sched, search, prop, cost[sched.classes[prop.key]])
    used = sched.spent["compiled"] / (sched.spent["compiled"] + sched.spent["eager"])
    assert used <= sched.settings.compiled_share + 0.05
    draws = sum(search.groups[g.key].iterations for g in groups[:20])
    assert draws < 0.05 * sum(st.iterations for st in search.groups.values())


def test_every_cross_library_group_reaches_the_floor():
    settings = dataclasses.replace(load_settings(), floor=30)
    groups = [group(f"x{i}") for i in range(40)] + [group(f"i{i}", cross=False) for i in range(40)]
    sched, search, _ = make(groups, settings)
    for _ in range(2 * 30 * 80):
        for prop in sched.propose(1, 10.0):
            finish(sched, search, prop)
    assert min(search.groups[f"x{i}"].iterations for i in range(40)) >= 30
    assert sched.floor_deficit == 0 and sched.summary()["floor_left"] == 0


def _with_a_hanging_group():
    """50 cheap groups and one whose iterations take 6 s each, after 3,000 proposals."""
    groups = [group("hangs")] + [group(f"g{i}") for i in range(50)]
    sched, search, _ = make(groups)
    for _ in range(3000):
        for prop in sched.propose(1, 0.0):
            finish(sched, search, prop, 6.0 if prop.key == "hangs" else 0.001)
    return sched, search


def test_a_group_that_hangs_waits_until_the_others_caught_up():
    sched, search = _with_a_hanging_group()
    assert "hangs" in sched.capped
    # below the floor a cross-library group may take floor_cap_s (30 s: five 6-s iterations)
    assert search.groups["hangs"].iterations <= sched.settings.floor_cap_s // 6 + 1
    assert min(search.groups[f"g{i}"].iterations for i in range(50)) > 10


def test_a_slow_cross_library_group_reaches_the_floor_under_its_own_cap_and_the_common_one_after():
    # 100 iterations of 0.1 s: 10 s, twice the common cap of 5 s, within floor_cap_s (30 s)
    groups = [group("slow")] + [group(f"g{i}") for i in range(50)]
    sched, search, _ = make(groups)
    assert sched.settings.group_cap_s < 100 * 0.1 < sched.settings.floor_cap_s
    for _ in range(20000):
        for prop in sched.propose(1, 0.0):
            finish(sched, search, prop, 0.1 if prop.key == "slow" else 0.0001)
    floor = sched.settings.floor
    assert floor <= search.groups["slow"].iterations <= floor + 2  # reached it, then the cap held it
    assert "slow" in sched.capped and sched.summary()["floor_short"] == []
    # with the floor's own cap as low as the common one, it stays short, and the summary says why
    settings = dataclasses.replace(load_settings(), floor_cap_s=5.0)
    sched, search, _ = make(groups, settings)
    for _ in range(20000):
        for prop in sched.propose(1, 0.0):
            finish(sched, search, prop, 0.1 if prop.key == "slow" else 0.0001)
    ((key, its, charged, capped, isolated),) = sched.summary()["floor_short"]
    assert key == "slow" and its < 60 and charged > 5.0 and capped and not isolated


def test_below_the_floor_the_cap_grows_with_the_budget():
    # 100 iterations of 0.4 s: 40 s, over floor_cap_s (30 s) and within 4 % of a 20-minute budget
    groups = [group("slow")] + [group(f"g{i}") for i in range(50)]
    settings = load_settings()
    assert settings.floor_cap_s < 100 * 0.4 < settings.floor_cap_share * 1200.0
    short = {}
    for budget in (100.0, 1200.0):
        sched, search, _ = make(groups, settings, budget_s=budget)
        for _ in range(20000):
            for prop in sched.propose(1, 0.0):
                finish(sched, search, prop, 0.4 if prop.key == "slow" else 0.0001)
        short[budget] = sched.summary()["floor_short"]
        its = search.groups["slow"].iterations
        assert its <= settings.floor + 2
    # a short budget keeps floor_cap_s: 30 s of 0.4-s iterations
    ((key, its, charged, capped, _),) = short[100.0]
    assert key == "slow" and its <= 30 / 0.4 + 2 and capped
    assert short[1200.0] == []
    # a group that hangs at every input stops at the share (48 s: eight 6-s iterations)
    sched, search, _ = make([group("hangs")] + groups[1:], settings, budget_s=1200.0)
    for _ in range(3000):
        for prop in sched.propose(1, 0.0):
            finish(sched, search, prop, 6.0 if prop.key == "hangs" else 0.001)
    assert "hangs" in sched.capped
    assert 30 // 6 + 1 < search.groups["hangs"].iterations <= settings.floor_cap_share * 1200 // 6 + 1


def test_unguided_search_still_runs_the_schedule():
    sched, search, _ = make([group("a"), group("b")], guided=False)
    props = [p for _ in range(50) for p in sched.propose(1, 0.0) if not finish(sched, search, p)]
    assert {p.key for p in props} == {"a", "b"}
    assert np.mean([p.op.startswith("values:") for p in props]) > 0.6


def test_cross_library_groups_come_first_in_the_slow_lane():
    groups = [group(f"x{i}", first_call=1.0) for i in range(8)]
    groups += [group(f"c{i}", compiled=True, cross=False) for i in range(8)]
    sched, search, _ = make(groups)
    slow = []
    for _ in range(200):
        for prop in sched.propose(1, 0.0):
            if prop.lane == SLOW:
                slow.append(prop.key)
            finish(sched, search, prop, 0.5 if prop.lane == SLOW else 0.001)
    first = slow[:8]
    assert sum(k.startswith("x") for k in first) >= 5, slow
    assert {f"x{i}" for i in range(8)} <= set(slow)


def test_the_floor_round_goes_in_bursts_of_one_group():
    settings = dataclasses.replace(load_settings(), floor=30, floor_burst=10, group_inflight=1)
    groups = [group(f"x{i}") for i in range(20)]
    sched, search, _ = make(groups, settings)
    order = []
    for _ in range(60):
        (prop,) = sched.propose(1, 10.0)
        order.append(prop.key)
        sched.done(prop, 0.001, ran=True, rate=1.0)  # slow: every draw goes to the floor
        search.report(prop.key, prop.input, 0.0, cost=0.001)
    # runs of ten: a group keeps its turn for a burst, while its compiled programs are cached
    runs = [len(list(g)) for _, g in itertools.groupby(order)]
    assert runs == [10] * 6


def test_a_group_has_few_iterations_in_flight_and_one_after_it_killed_a_worker():
    settings = dataclasses.replace(load_settings(), group_inflight=3)
    sched, search, _ = make([group("a", cross=False)], settings)
    props = sched.propose(10, 0.0)
    assert len(props) == 3
    for p in props[1:]:
        finish(sched, search, p)
    sched.done(props[0], 5.0, ran=True, deaths=1, workers=(11,), killed=(11,))
    assert len(sched.propose(10, 0.0)) == 1


def test_a_group_is_cold_again_once_the_worker_holding_it_died_or_it_moved():
    sched, search, _ = make([group("jaxish", first_call=1.5, cross=False), group("other", first_call=1.5, cross=False)])
    (slow,) = [p for p in sched.propose(2, 0.0) if p.lane == SLOW]
    sched.done(slow, 1.0, ran=True, workers=(7,))
    assert sched.warm[slow.key]
    other = "other" if slow.key == "jaxish" else "jaxish"
    # another group's call kills worker 7: what it held is gone
    (prop,) = [p for p in sched.propose(4, 0.0) if p.key == other][:1] or [None]
    if prop is None:
        pytest.skip("no proposal of the other group")  # pragma: no cover
    sched.done(prop, 5.0, ran=False, deaths=1, workers=(7,), killed=(7,))
    assert not sched.warm[slow.key]
    # a group that ran on worker 8 and then shows up on worker 9 is cold there
    sched.done(dataclasses.replace(slow, lane=FAST), 0.1, ran=True, workers=(8,))
    assert sched.warm[slow.key]
    sched.inflight[slow.key] += 1
    sched.done(dataclasses.replace(slow, lane=FAST, input=Inp(5)), 0.1, ran=True, workers=(9,))
    assert sched.warm[slow.key] == {"5"}


def test_the_call_limit_follows_the_groups_own_calls():
    settings = load_settings()
    sched, search, _ = make([group("a", first_call=0.002, cross=False)], settings)
    (prop,) = sched.propose(1, 0.0)
    assert sched.call_limit(prop, 10.0) == settings.hang_floor_s  # fast calls: the floor
    sched.done(prop, 0.5, ran=True, slowest_call=0.1)
    (prop,) = sched.propose(1, 0.0)
    assert sched.call_limit(prop, 10.0) == pytest.approx(min(10.0, settings.hang_factor * 0.1))
    assert sched.call_limit(dataclasses.replace(prop, lane=SLOW), 10.0) is None
    # once an iteration of the group killed its worker, the slow lane keeps to --timeout (a hang
    # under a compiler would hold a worker for the whole compile allowance); a clean one lifts it
    sched.done(prop, 10.0, ran=False, deaths=1, workers=(7,), killed=(7,))
    assert sched.call_limit(dataclasses.replace(prop, lane=SLOW), 10.0) == 10.0
    sched.inflight[prop.key] += 1
    sched.done(prop, 0.1, ran=True, slowest_call=0.1)
    assert sched.call_limit(dataclasses.replace(prop, lane=SLOW), 10.0) is None


def _ops_drawn(sched, search, n):
    """The operations of ``n`` iterations proposed one at a time, each finished at once."""
    ops = set()
    for _ in range(n):
        (prop,) = sched.propose(1, 0.0)
        ops.add(prop.op)
        finish(sched, search, prop)
    return ops


def test_a_group_stops_drawing_a_regime_it_was_told_to_avoid_and_a_first_call_that_died_is_charged_the_timeout():
    sched, search, ops = make([group("a")])
    cycle = sched.settings.cycle
    assert not sched.avoid("a", "structural")  # no regime: nothing changes
    assert sched.avoid("a", f"values:{cycle[1]}")  # newly avoided, others left: forgivable
    assert not sched.avoid("a", f"values:{cycle[1]}")  # once per regime
    assert sched.avoid("a", f"values:{cycle[2]}")
    seen = _ops_drawn(sched, search, 200)
    assert f"values:{cycle[1]}" not in seen and f"values:{cycle[2]}" not in seen
    assert {f"values:{r}" for r in cycle} - {f"values:{cycle[1]}", f"values:{cycle[2]}"} <= seen
    assert sched.summary()["avoided"] == {"a": sorted({cycle[1], cycle[2]})}
    # every regime avoided: the last one avoided is forgivable too (the group moves to the
    # regime it died in least often per draw), still once per regime
    rest = [r for r in dict.fromkeys(cycle) if r not in {cycle[1], cycle[2]}]
    last = [sched.avoid("a", f"values:{r}") for r in rest]
    assert all(last) and not any(sched.avoid("a", f"values:{r}") for r in dict.fromkeys(cycle))
    drawn = sched._regime_draws["a"]
    safe = max(dict.fromkeys(cycle), key=lambda r: drawn.get(r, 0))  # drawn most, one death
    for r in dict.fromkeys(cycle):
        if r != safe:
            sched.avoid("a", f"values:{r}")
    assert _ops_drawn(sched, search, 50) & {f"values:{r}" for r in cycle} == {f"values:{safe}"}
    # a second death after many more draws there keeps it the safest
    sched.avoid("a", f"values:{safe}")
    assert _ops_drawn(sched, search, 50) & {f"values:{r}" for r in cycle} == {f"values:{safe}"}
    # a first call that died in the slow lane is charged at most the campaign's timeout
    sched2, _, _ = make([group("b", first_call=1.0)], timeout=10.0)
    (prop,) = sched2.propose(1, 0.0)
    assert prop.lane == SLOW
    sched2.done(prop, 31.0, ran=False, deaths=1, workers=(7,), killed=(7,))
    assert sched2.charged["b"] == pytest.approx(10.0 + sched2.settings.death_cost_s)


def test_an_isolated_group_seen_in_the_fast_lane_drops_the_first_call_term():
    settings = load_settings()
    sched, search, _ = make([group("j", first_call=3.0, cross=False)], settings)
    sched.isolated.add("j")
    sched.warm["j"].add("3")  # its signature ran on its worker: the fast lane
    (prop,) = sched.propose(1, 0.0)
    assert prop.lane == FAST and prop.isolated
    # before its first fast-lane result: the registry's first call (a compilation) is its timing
    assert sched.call_limit(prop, 10.0) == 10.0
    sched.done(prop, 0.01, ran=True, slowest_call=0.01)
    (prop,) = sched.propose(1, 0.0)
    assert sched.call_limit(prop, 10.0) == settings.hang_floor_s
    # a group that is not isolated keeps three times its first call
    assert sched.call_limit(dataclasses.replace(prop, isolated=False), 10.0) == pytest.approx(
        settings.first_call_factor * 1.5)


def test_isolated_groups_are_marked_and_few_are_in_flight():
    settings = dataclasses.replace(load_settings(), isolated_inflight=2, group_inflight=2)
    groups = [group(f"g{i}", cross=False) for i in range(6)]
    sched, search, _ = make(groups, settings)
    sched.isolated |= {"g0", "g1", "g2"}
    props = sched.propose(12, 0.0)
    isolated = [p for p in props if p.key in sched.isolated]
    assert len(isolated) == 2 and all(p.isolated for p in isolated)
    assert all(not p.isolated for p in props if p.key not in sched.isolated)
    assert len(props) == 2 + 3 * 2  # the others fill the window
    finish(sched, search, isolated[0])
    assert sched.isolated_inflight == 1
    assert [p.isolated for p in sched.propose(12, 0.0)] == [True]


def test_isolated_groups_short_of_their_floor_keep_half_the_isolation_worker():
    settings = dataclasses.replace(load_settings(), isolated_inflight=4, group_inflight=4)
    others = [group(f"o{i}", cross=False) for i in range(4)]
    sched, search, _ = make([*others, group("short")], settings)
    sched.isolated |= {g.key for g in others} | {"short"}
    # only the others are drawn: they stop at half the isolation worker's queue
    for g in others * 2:
        prop = sched._derive(g.key)
        if prop is not None:
            sched._start(prop)
    assert sched.isolated_inflight == 2 and sched.below_floor("short")
    # the group short of its floor takes the rest
    for _ in range(2):
        prop = sched._derive("short")
        assert prop is not None and prop.isolated
        sched._start(prop)
    assert sched.isolated_inflight == 4 and sched._derive("short") is None
    # with every isolated group at its floor the others get all of it again
    search.groups["short"].iterations = settings.floor
    assert sched._isolated_room("o0") == 4


def test_a_group_whose_costly_member_was_left_out_is_forgiven():
    sched, search = _with_a_hanging_group()
    assert "hangs" in sched.capped
    before = search.groups["hangs"].iterations
    sched.forgive("hangs")  # its hanging member is left out: what runs now is cheap
    assert "hangs" not in sched.capped and sched.charged["hangs"] == 0.0
    for _ in range(8000):
        for prop in sched.propose(1, 0.0):
            finish(sched, search, prop)
    assert before <= sched.settings.floor_cap_s // 6 + 1 and search.groups["hangs"].iterations >= sched.settings.floor


def test_a_death_on_the_isolation_worker_costs_only_its_seconds():
    settings = dataclasses.replace(load_settings(), death_cost_s=5.0)
    sched, search, _ = make([group("a", cross=False), group("b", cross=False)], settings)
    sched.isolated.add("a")
    props = {p.key: p for p in sched.propose(2, 0.0)}
    assert props["a"].isolated and not props["b"].isolated
    for key in ("a", "b"):
        sched.done(props[key], 0.01, ran=False, deaths=1, workers=[1], killed=[1])
    assert sched.charged["a"] == pytest.approx(0.01)
    assert sched.charged["b"] == pytest.approx(5.01)


def test_a_negative_quarantine_setting_is_refused(tmp_path):
    bad = tmp_path / "fuzzing.toml"
    bad.write_text('[values]\ncycle = ["o"]\n[values.regimes]\no = {}\n[schedule]\nquarantine_after = -1\n')
    with pytest.raises(DataFileError, match="quarantine_after"):
        load_settings(bad)


def test_a_groups_inputs_do_not_depend_on_the_order_results_came_back_in():
    """Two runs of one campaign: group a's iterations interleave differently with b's and c's,
    and a still meets the same inputs in the same order (so a warm run finds them compiled)."""
    def run(order):
        groups = [group("a"), group("b"), group("c")]
        sched, search, _ = make(groups)
        seen = []
        for turn in order:
            for key in turn:
                prop = sched._derive(key)
                sched._start(prop)
                finish(sched, search, prop)
                if key == "a":
                    seen.append(prop.input)
        return seen
    first = run([["a", "b"], ["c", "a"], ["a"], ["b", "a", "c"], ["a"]] * 6)
    second = run([["c", "b", "a"], ["a"], ["b", "b", "a"], ["c", "a"], ["a", "c"]] * 6)
    assert len(first) == len(second) == 30
    assert first == second
    # and the draws differ from one iteration to the next (structural changes happen too)
    assert len({i.value for i in first}) > 20 and len({i.shape for i in first}) > 1


def test_a_group_whose_calls_compile_nothing_runs_on_any_worker():
    """Until it has run, and while its calls compile, a group stays on its worker; once a run
    compiled nothing its iterations go to any free worker, and where they ran moves nothing
    (neither a move counted nor its signatures forgotten)."""
    sched, search, _ = make([group("numpyish", cross=False), group("jaxish", cross=False)])
    first = {p.key: p for p in sched.propose(2, 0.0)}
    assert all(p.sticky for p in first.values())
    sched.done(first["numpyish"], 0.01, ran=True, workers=(7,), compile_s=0.0)
    sched.done(first["jaxish"], 0.01, ran=True, workers=(7,), compile_s=0.3)
    assert not sched.sticky("numpyish") and sched.sticky("jaxish")
    warm = set(sched.warm["numpyish"])
    assert warm  # a signature it ran stays known wherever it runs next
    moves = sched.moves
    for worker in (8, 9, 8):
        props = [p for p in sched.propose(8, 1.0) if p.key == "numpyish"]
        assert props and not any(p.sticky for p in props)
        for p in props:
            sched.done(dataclasses.replace(p, input=Inp(3)), 0.01, ran=True, workers=(worker,), compile_s=0.0)
        for p in sched.propose(8, 1.0):  # let the others finish too
            sched.done(p, 0.01, ran=True, workers=(7,), compile_s=0.3 if p.key == "jaxish" else 0.0)
    assert sched.moves == moves and warm <= sched.warm["numpyish"]
    # a later run that compiles makes it sticky again
    (p,) = [p for p in sched.propose(8, 1.0) if p.key == "numpyish"][:1]
    sched.done(p, 0.01, ran=True, workers=(8,), compile_s=0.5)
    assert sched.sticky("numpyish")
