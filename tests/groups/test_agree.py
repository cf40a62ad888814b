import numpy as np

from xamt.groups.agree import Agreement
from xamt.groups.unionfind import UnionFind


def test_pairs_within_tolerance_and_structure():
    ag = Agreement({"float32": (1e-4, 1e-5)})
    a = np.array([1.0, 2.0], np.float32)
    assert ag.pair(a, a + np.float32(1e-6))
    assert ag.pair(a, a.astype(np.float64))           # dtype width is not a disagreement
    assert ag.pair(np.array([1, 2], np.int32), np.array([1, 2], np.int64))
    assert not ag.pair(a, a + 1)
    assert not ag.pair(a, np.array([1.0, 2.0, 3.0]))  # shape
    assert not ag.pair((a, a), a)                      # structure
    assert ag.pair((a, "float32"), (a, "float32"))
    assert not ag.pair((a, "float32"), (a, "float64"))
    assert ag.pair(np.array([np.nan]), np.array([np.nan]))


def test_group_flags_the_outlier():
    ag = Agreement({"float64": (1e-6, 1e-7)})
    x = np.arange(4.0)
    flags = ag.group([x, x.copy(), x + 5, x.copy()])
    assert flags == [True, True, False, True]
    assert ag.dispersion([x, x]) == 0.0 and ag.dispersion([x, x + 5]) > 0


def test_union_find():
    uf = UnionFind("abcde")
    uf.union("a", "b")
    uf.union("c", "d")
    uf.union("b", "d")
    assert not uf.union("a", "c")
    assert uf.components() == [["a", "b", "c", "d"], ["e"]]


def test_a_float16_computation_is_compared_at_float16_tolerance_whatever_the_outputs():
    """A float16 input computed into float64 outputs (one library upcasts) is judged at
    float16's tolerance: the audit found a float16 loss compared at float64's 1e-7."""
    import numpy as np

    from xamt.groups.agree import Agreement, input_dtypes

    a = np.array([1.0, 2.0], np.float64)
    b = a * (1 + 3e-4)                      # within float16's rtol 1e-3, far beyond float64's
    inputs = input_dtypes({0: np.ones(2, np.float16), 1: 3})
    assert inputs == (np.dtype("float16"),)
    agree = Agreement()
    assert not agree.pair(a, b) and agree.pair(a, b, inputs)
    assert agree.group([a, a, b], inputs) == [True, True, True]
    flags, _ = agree.assess([a, b], inputs)
    assert flags == [True, True]
    # integer outputs stay exact whatever the inputs
    i = np.array([1, 2]), np.array([1, 3])
    assert not agree.pair(*i, inputs)
