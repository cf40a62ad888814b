import numpy as np
import pytest

from xamt.errors import ConfigError
from xamt.inputs import structured
from xamt.inputs.arrays import ArrayRecipe


def _base(shape, dtype="float32", seed=0):
    return ArrayRecipe(seed=seed, dtype=dtype, shape=shape).build()


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
