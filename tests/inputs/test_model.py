import json

import numpy as np
import pytest

from xamt.errors import ConfigError
from xamt.inputs.arrays import ArrayRecipe
from xamt.inputs import GroupInput, SlotValue, materialise
from xamt.inputs.materialise import as_literal


def _input():
    return GroupInput({
        0: SlotValue.array(ArrayRecipe(seed=1, shape=(3, 4))),
        1: SlotValue.literal([0, 1]),
        2: SlotValue.dtype("float64"),
        3: SlotValue.arrays([ArrayRecipe(seed=2, shape=(2,)), ArrayRecipe(seed=3, shape=(2,))]),
        4: SlotValue.array(ArrayRecipe(seed=4, dtype="int64", shape=(5,)), "index_into:0"),
        5: SlotValue.derived("reshape_of:0"),
    }, variant="base")


def test_json_round_trip_and_signature():
    inp = _input()
    text = json.dumps(inp.to_json())
    back = GroupInput.from_json(json.loads(text))
    assert back == inp
    assert back.signature() == inp.signature()
    assert inp.replace(1, SlotValue.literal(1)).signature() != inp.signature()
    # the variant name is not part of the identity
    assert GroupInput(inp.values, "other").signature() == inp.signature()


def test_materialise_is_exact_and_typed():
    inp = _input()
    a, b = materialise(inp), materialise(inp)
    assert a[0].tobytes() == b[0].tobytes() and a[0].dtype == np.float32
    assert a[1] == (0, 1)  # JSON lists become tuples
    assert a[2] == np.dtype("float64")
    assert isinstance(a[3], list) and len(a[3]) == 2
    assert a[4].dtype == np.int64 and a[4].min() >= 0 and a[4].max() < 3  # valid along any axis of slot 0
    assert a[5] == (4, 3)


def test_bad_values_are_refused():
    with pytest.raises(ConfigError):
        SlotValue("tensor")
    with pytest.raises(ConfigError):
        SlotValue.from_json({"kind": "nope"})
    with pytest.raises(ConfigError):
        materialise(GroupInput({0: SlotValue.derived("shape_of:7")}))
    cyclic = GroupInput({0: SlotValue.array(ArrayRecipe(seed=1), "index_into:1"),
                         1: SlotValue.array(ArrayRecipe(seed=2), "index_into:0")})
    with pytest.raises(ConfigError, match="cycle"):
        materialise(cyclic)


def test_as_literal_nested():
    assert as_literal([[1, 2], 3]) == ((1, 2), 3)
    assert as_literal(None) is None
