import numpy as np
import pytest

from xamt.inputs.arrays import (
    DTYPE_NAMES,
    MUTATIONS,
    ArrayRecipe,
    boundary_values,
    draw_shape,
    mutate,
    nonfinite_values,
    numpy_dtype,
)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_recipe_regenerates_same_bits(name):
    r = ArrayRecipe(seed=123, dtype=name, shape=(3, 4), log10_scale=2.0, boundary_rate=0.3,
                    nonfinite_rate=0.2)
    a, b = r.build(), r.build()
    assert a.dtype == numpy_dtype(name) and a.shape == (3, 4)
    assert a.tobytes() == b.tobytes()
    assert ArrayRecipe.from_json(r.to_json()) == r


def test_different_seeds_differ():
    a = ArrayRecipe(seed=1, shape=(64,)).build()
    b = ArrayRecipe(seed=2, shape=(64,)).build()
    assert not np.array_equal(a, b)


def test_float_boundaries_are_the_documented_ones():
    b = boundary_values("float32")
    fi = np.finfo(np.float32)
    for v in (fi.smallest_subnormal, fi.smallest_normal, fi.max, -fi.max, fi.eps, 1.0, -1.0):
        assert v in b
    signs = {np.signbit(x) for x in b[b == 0]}
    assert signs == {True, False}, "both +0.0 and -0.0 must be present"
    bf = boundary_values("bfloat16")
    assert np.isfinite(bf.astype(np.float64)).all() and (bf.astype(np.float64) > 0).any()


@pytest.mark.parametrize("name", ["int8", "int64", "uint8", "uint64"])
def test_integer_extremes(name):
    info = np.iinfo(np.dtype(name))
    b = boundary_values(name)
    assert info.min in b and info.max in b


def test_nonfinite_only_for_inexact():
    assert nonfinite_values("int32").size == 0
    assert nonfinite_values("bool").size == 0
    nf = nonfinite_values("float64")
    assert np.isnan(nf).any() and np.isposinf(nf).any() and np.isneginf(nf).any()
    c = nonfinite_values("complex64")
    assert np.isnan(c.real).any() and np.isnan(c.imag).any() and np.isinf(c.imag).any()


def test_injection_rates_take_effect():
    a = ArrayRecipe(seed=7, dtype="float64", shape=(10000,), nonfinite_rate=0.2).build()
    frac = (~np.isfinite(a)).mean()
    assert 0.15 < frac < 0.25
    clean = ArrayRecipe(seed=7, dtype="float64", shape=(10000,)).build()
    assert np.isfinite(clean).all()


def test_bounds_restrict_ordinary_values():
    a = ArrayRecipe(seed=3, dtype="float32", shape=(1000,), low=0.1, high=5.0).build()
    assert a.min() >= 0.1 and a.max() <= 5.0
    i = ArrayRecipe(seed=3, dtype="int64", shape=(1000,), low=0, high=4).build()
    assert set(np.unique(i)) <= {0, 1, 2, 3, 4}


def test_empty_and_scalar_shapes():
    assert ArrayRecipe(seed=0, shape=()).build().shape == ()
    e = ArrayRecipe(seed=0, shape=(0, 3), boundary_rate=1.0, nonfinite_rate=1.0).build()
    assert e.shape == (0, 3)


def test_huge_scale_overflows_to_inf_not_error():
    a = ArrayRecipe(seed=0, dtype="float16", shape=(100,), log10_scale=8).build()
    assert np.isinf(a).any()


def test_draw_shape_ranges():
    rng = np.random.default_rng(0)
    shapes = [draw_shape(rng) for _ in range(500)]
    ranks = {len(s) for s in shapes}
    assert ranks == {0, 1, 2, 3, 4}
    assert any(0 in s for s in shapes) and any(1 in s for s in shapes)


@pytest.mark.parametrize("op", MUTATIONS)
def test_each_mutation_builds(op):
    rng = np.random.default_rng(5)
    r0 = ArrayRecipe(seed=9)
    r1, name = mutate(r0, rng, op=op, dtypes=("float32", "float64"))
    assert name == op and r1 != r0
    r1.build()
    if op == "redtype":
        assert r1.dtype in ("float32", "float64")


def test_unknown_names_are_clear_errors():
    with pytest.raises(ValueError, match="unknown dtype"):
        numpy_dtype("float8")
    with pytest.raises(ValueError, match="unknown mutation"):
        mutate(ArrayRecipe(seed=0), np.random.default_rng(0), op="explode")
