import numpy as np

from xamt.triage.minimise import minimise


def test_keeps_the_culprit_element_and_plains_the_rest():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    x[3, 2] = np.nan
    calls = []

    def fails(c):
        calls.append(1)
        return bool(np.isnan(c["x"]).any())

    r = minimise({"x": x}, fails, budget=200)
    assert r.shrunk and np.isnan(r.inputs["x"]).sum() == 1
    finite = r.inputs["x"][~np.isnan(r.inputs["x"])]
    assert (finite == 1).all()
    assert r.calls == len(calls) <= 200


def test_arrays_of_the_same_shape_shrink_together():
    x = np.full((8, 3), 2.0)
    y = np.full((8, 3), 5.0)

    def fails(c):
        assert c["x"].shape == c["y"].shape, "arguments that agree in shape must stay in agreement"
        return c["x"].size >= 1

    r = minimise({"x": x, "y": y, "axis": np.array(1)}, fails)
    assert r.inputs["x"].shape == (1, 1) and r.inputs["y"].shape == (1, 1)
    assert r.inputs["axis"] == 1


def test_budget_is_respected_and_nothing_shrinks_when_predicate_never_holds():
    x = np.random.default_rng(0).standard_normal((16, 16))
    r = minimise({"x": x}, lambda c: False, budget=7)
    assert r.calls == 7 and not r.shrunk and r.inputs["x"] is not None
    assert np.array_equal(r.inputs["x"], x)


def test_shrinks_towards_a_culprit_in_the_second_half():
    x = np.ones((4, 3, 3))
    x[3, 2, 1] = np.nan
    r = minimise({"x": x}, lambda c: bool(np.isnan(c["x"]).any()), budget=100)
    assert r.inputs["x"].size == 1 and np.isnan(r.inputs["x"]).all()


def test_values_that_are_not_arrays_pass_through_unchanged():
    # a list of arrays (a tensor-list slot), a dtype, None and a literal must reach the
    # predicate as they came: turned into object arrays, the sandbox could not carry them
    ragged = [np.ones(3), np.ones(5)]
    inputs = {0: np.arange(8.0), 1: ragged, 2: np.dtype("float32"), 3: None, 4: 2}
    seen = []

    def still_fails(c):
        seen.append(c)
        return c[0].size >= 1 and 7.0 in c[0]

    res = minimise(inputs, still_fails, budget=20)
    assert res.shrunk and res.inputs[0].tolist() == [7.0]
    for c in seen:
        assert c[1] is ragged and c[2] == np.dtype("float32") and c[3] is None and c[4] == 2


def test_frozen_arguments_are_left_whole():
    import numpy as np

    from xamt.triage.minimise import minimise

    x = np.arange(8, dtype=np.float32)
    cov = np.eye(4, dtype=np.float32) * 2
    res = minimise({"x": x, "cov": cov}, lambda c: True, budget=40, frozen={"cov"})
    assert res.shrunk and res.inputs["x"].size < 8
    assert np.array_equal(res.inputs["cov"], cov)
