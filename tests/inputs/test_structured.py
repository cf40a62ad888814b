import numpy as np
import pytest

from xamt.errors import ConfigError
from xamt.inputs.arrays import ArrayRecipe
from xamt.inputs import structured


def _base(shape, dtype="float32", seed=0):
    return ArrayRecipe(seed=seed, dtype=dtype, shape=shape).build()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_spd_is_hermitian_positive_definite(dtype):
    m = structured.apply_array("spd", _base((2, 4, 4), dtype), {})
    assert m.dtype == np.dtype(dtype)
    np.testing.assert_allclose(m, np.conj(np.swapaxes(m, -1, -2)), rtol=1e-5, atol=1e-6)
    np.linalg.cholesky(m.astype(np.complex128 if m.dtype.kind == "c" else np.float64))  # raises if not PD


def test_spd_of_non_square_uses_leading_block():
    m = structured.apply_array("spd", _base((3, 5)), {})
    assert m.shape == (3, 3)


def test_probabilities_and_one_hot():
    p = structured.apply_array("probabilities", _base((3, 4)), {})
    assert (p > 0).all() and np.allclose(p.sum(-1), 1, atol=1e-6)
    h = structured.apply_array("one_hot", _base((3, 4)), {})
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()


def test_index_structures_follow_the_target():
    target = np.zeros((3, 7))
    idx = structured.apply_array("index_into:0", _base((20,), "int64"), {0: target})
    assert idx.min() >= 0 and idx.max() < 3
    bad = structured.apply_array("index_out_of:0", _base((20,), "int64"), {0: target})
    assert ((bad >= 3) | (bad < -3)).all()
    cls = structured.apply_array("class_of:1", _base((50,)), {1: 4})
    assert cls.dtype == np.int64 and set(np.unique(cls)) <= {0, 1, 2, 3}


def test_counts_of_sum_to_the_referenced_count():
    """A multinomial variate: non-negative integer counts summing to n along the last axis,
    spread over several categories (largest remainder), whatever the recipe's dtype."""
    for dtype in ("float32", "int64"):
        c = structured.apply_array("counts_of:1", _base((5, 4), dtype), {1: 3})
        assert c.dtype.kind == "i" and c.shape == (5, 4)
        assert (c >= 0).all() and (c.sum(-1) == 3).all()
    c = structured.apply_array("counts_of:1", _base((200, 4)), {1: 3})
    assert (c.max(-1) < 3).any()  # not every trial lands in one category
    assert (structured.apply_array("counts_of:0", _base((4,)), {0: 0}) == 0).all()
    assert "counts_of" in structured.INTEGER_STRUCTURES
    with pytest.raises(ConfigError):
        structured.check("counts_of", derived=False)  # needs the count's slot


def test_derived_literals():
    ctx = {0: np.zeros((2, 3, 4))}
    assert structured.apply_derived("reshape_of:0", ctx) == (4, 3, 2)
    assert structured.apply_derived("shape_of:0", ctx) == (2, 3, 4)
    assert structured.apply_derived("broadcast_of:0", ctx) == (2, 2, 3, 4)
    assert structured.apply_derived("size_of:0", ctx) == 24
    assert structured.apply_derived("permutation_of:0", ctx) == (2, 1, 0)


def test_unknown_and_unreferenced_structures():
    with pytest.raises(ConfigError):
        structured.apply_array("banana", _base((2,)), {})
    with pytest.raises(ConfigError):
        structured.check("index_into", derived=False)
    with pytest.raises(ConfigError):
        structured.apply_array("index_into:3", _base((2,)), {})


@pytest.mark.parametrize("rows", [1, 3, 6])
def test_segment_ids_are_sorted_and_cover_every_segment(rows):
    ids = structured.apply_array("segments_of:0", _base((3,), "int64"), {0: np.zeros((rows, 4))})
    count = structured.apply_derived("segment_count_of:0", {0: np.zeros((rows, 4))})
    assert ids.dtype == np.int64 and len(ids) == rows
    assert (np.diff(ids) >= 0).all() and set(ids.tolist()) == set(range(count))


def test_degrees_are_small_non_negative_integers():
    """An orthogonal polynomial's degree n stays a non-negative integer whatever the fuzzer did
    to the recipe (a float, negative, huge or non-finite base)."""
    for dtype, scale in (("float32", 0.0), ("float64", 6.0), ("int64", 0.0)):
        base = ArrayRecipe(seed=3, dtype=dtype, shape=(50,), log10_scale=scale, nonfinite_rate=0.2).build()
        n = structured.apply_array("degree", base, {})
        assert n.dtype.kind == "i" and (n >= 0).all() and (n <= 10).all()
    assert len(np.unique(structured.apply_array("degree", _base((200,)), {}))) > 3
    assert "degree" in structured.INTEGER_STRUCTURES


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_signs_are_minus_one_and_plus_one_of_the_recipes_dtype(dtype):
    base = _base((3, 4), dtype) if dtype.startswith("float") else _base((3, 4), "float32")
    if not dtype.startswith("float"):
        base = (base * 100).astype(dtype)
    s = structured.apply_array("signs", base, {})
    assert s.dtype == np.dtype(dtype) and s.shape == (3, 4)
    assert set(np.unique(s).tolist()) == {-1, 1}  # both targets occur
    np.testing.assert_array_equal(s, np.where(base > np.median(base), 1, -1))


def test_signs_are_deterministic_and_checked():
    base = _base((7,))
    np.testing.assert_array_equal(structured.apply_array("signs", base, {}),
                                  structured.apply_array("signs", base.copy(), {}))
    assert structured.apply_array("signs", _base((0,)), {}).shape == (0,)
    structured.check("signs", derived=False)
    assert "signs" not in structured.INTEGER_STRUCTURES
    with pytest.raises(ConfigError):
        structured.check("signs", derived=True)
