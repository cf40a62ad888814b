import numpy as np
import pytest

from xamt.fuzz.search import EXPLORE, PARENT_FLOOR, Corpus, Search, _numpy_sum, fitness


def test_fitness_is_monotone_and_bounded():
    assert fitness(0) == 0 and fitness(1) < fitness(10) < fitness(float("inf"))
    assert fitness(float("nan")) == fitness(float("inf"))


def test_corpus_keeps_the_fittest():
    c = Corpus(capacity=3)
    for i, f in enumerate([0.1, 0.5, 0.2, 0.9, 0.05]):
        c.add(i, f)
    assert sorted(i for _, i in c.entries) == [1, 2, 3] and c.best == 0.9
    rng = np.random.default_rng(0)
    draws = [c.choose(rng) for _ in range(2000)]
    assert draws.count(3) > draws.count(2)


def hidden_dispersion(x):
    # the "bug" only shows far from the seed; dispersion grows as inputs get there
    return max(0.0, x - 3.0) ** 2


def run(guided, steps=60, seed=1):
    s = Search({"g": [0.0], "flat": [0.0]}, mutate=lambda k, p, r: p + r.normal(0, 1),
               fresh=lambda k, r: r.normal(0, 1), guided=guided, seed=seed)
    best = 0.0
    for _ in range(steps):
        for key, x in s.next_batch(8):
            d = hidden_dispersion(x) if key == "g" else 0.0
            best = max(best, d)
            s.report(key, x, d)
    return s, best


def test_a_parent_is_the_one_numpy_choice_would_draw():
    """Corpus.choose draws in plain floats what ``rng.choice(n, p=w / w.sum())`` draws: the same
    parent from the same generator state, and the generator left in the same state."""
    src = np.random.default_rng(7)
    for trial in range(3000):
        n = int(src.integers(1, 40))
        fits = np.where(src.random(n) < 0.3, 0.0, src.random(n) * src.choice([1e-9, 1.0, 14.0]))
        corpus = Corpus(capacity=64, entries=[(float(f), i) for i, f in enumerate(fits)])
        w = fits + PARENT_FLOOR
        assert _numpy_sum([float(x) for x in w]) == float(w.sum())
        ours, theirs = np.random.default_rng(trial), np.random.default_rng(trial)
        assert corpus.choose(ours) == int(theirs.choice(n, p=w / w.sum()))
        assert ours.random() == theirs.random()


def test_guidance_climbs_where_random_does_not():
    wins = 0
    for seed in range(5):
        _, guided_best = run(True, seed=seed)
        _, random_best = run(False, seed=seed)
        wins += guided_best > random_best
    assert wins >= 4


def test_budget_flows_to_the_group_whose_dispersion_grows():
    s, _ = run(True, steps=80, seed=3)
    assert s.state("g").iterations > s.state("flat").iterations


def test_seeds_first_then_retire():
    s = Search({"a": [1, 2], "b": [3]}, mutate=lambda k, p, r: p, seed=0)
    assert s.next_batch(2) == [("a", 1), ("a", 2)]
    s.retire("a")
    assert all(k == "b" for k, _ in s.next_batch(10)[1:])
    with pytest.raises(ValueError):
        Search({"a": []}, mutate=lambda k, p, r: p)


def test_costly_groups_get_a_time_share_not_an_iteration_share():
    s = Search({"cheap": [0], "costly": [0]}, mutate=lambda k, p, r: p, seed=0, run_seeds=False)
    for _ in range(50):
        for key, x in s.next_batch(10):
            s.report(key, x, 0.0, cost=0.001 if key == "cheap" else 0.5)
    cheap, costly = s.state("cheap").iterations, s.state("costly").iterations
    # the weighted draws go by time (cheap ~500x more); the exploring share is uniform, so the
    # costly group keeps about EXPLORE / 2 of the draws and is never starved
    total = cheap + costly
    assert cheap > 4 * costly
    assert 0.5 * EXPLORE / 2 < costly / total < 2 * EXPLORE / 2


def test_seeds_can_be_skipped():
    s = Search({"a": [1, 2]}, mutate=lambda k, p, r: p + 10, seed=0, run_seeds=False)
    assert all(x > 10 for _, x in s.next_batch(5))


def test_known_divergences_do_not_hold_the_budget():
    # "stuck" keeps showing one divergence it already reported; "fresh" keeps finding new ones
    s = Search({"stuck": [0], "fresh": [0]}, mutate=lambda k, p, r: p + 1, seed=0, run_seeds=False)
    seen, fresh_sigs = set(), iter(range(10**6))
    for _ in range(100):
        for key, x in s.next_batch(8):
            sig = "one" if key == "stuck" else next(fresh_sigs)
            novel = (key, sig) not in seen
            seen.add((key, sig))
            s.report(key, x, 1e6, novel=novel)
    assert s.state("fresh").iterations > 3 * s.state("stuck").iterations
    # a known divergence is a weak parent: it stays in the corpus below a new one
    fits = [f for f, _ in s.state("stuck").corpus.entries]
    assert max(fits) > 5 * sorted(fits)[-2] or len(fits) == 1


def test_novelty_is_optional_and_plain_reports_behave_as_before():
    s = Search({"g": [0.0]}, mutate=lambda k, p, r: p, seed=0, run_seeds=False)
    s.report("g", 1.0, 10.0)
    assert s.state("g").gain == pytest.approx(fitness(10.0))


def test_draws_follow_the_weights_whoever_changed_a_state():
    s = Search({k: [0.0] for k in "abcd"}, mutate=lambda k, p, r: p, seed=3)
    keys = list("abcd")
    s.groups["a"].gain = 50.0          # changed directly (a resumed campaign restores states so)
    s.groups["d"].retired = True
    draws = s.pick(keys, 4000)
    assert "d" not in draws
    assert draws.count("a") > 5 * draws.count("b") > 0
    s.report("b", 0.0, 0.0, cost=1e-9)  # cheap now: drawn more than before
    s.groups["a"].gain = 0.0
    again = s.pick(keys, 4000)
    assert again.count("b") > again.count("a") and again.count("c") > 0
    # a subset of the keys, asked again after a state changed
    assert set(s.pick(["c", "d"], 50)) == {"c"}
    s.groups["c"].retired = True
    assert s.pick(["c", "d"], 50) == []
    # the exploring share is drawn among live groups only
    assert set(s.pick(keys, 200)) <= {"a", "b"}


def test_an_input_that_killed_a_worker_is_counted_but_never_a_parent():
    s = Search({"g": [0.0]}, mutate=lambda k, p, r: p, seed=0, run_seeds=False)
    before = list(s.state("g").corpus.entries)
    s.report("g", 99.0, float("nan"), cost=1.0, novel=True, parent=False)
    st = s.state("g")
    assert st.iterations == 1 and st.cost == 1.0 and st.gain == 0.0
    assert st.corpus.entries == before and all(item != 99.0 for _, item in st.corpus.entries)
