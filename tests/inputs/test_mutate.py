import numpy as np

from tests.groups.helpers import group, member
from xamt.inputs import GroupInput, materialise, mutate, seed_inputs
from xamt.inputs.model import SlotValue
from xamt.inputs.mutate import INVALID_OPS


def _binary_axis_group():
    m = member("numpy", "numpy.f", "numpy:add",
               [(0, "x", 0, None, True), (1, "y", 1, None, True), (2, "axis", None, "axis", True),
                (3, "keepdims", None, "keepdims", True), (4, "dtype", None, "dtype", True),
                (5, "indices", None, "indices", True)])
    return group("x:f/generic", [m], [(0, "x", "tensor"), (1, "y", "tensor"), (2, "axis", "axis"),
                                     (3, "keepdims", "keepdim"), (4, "dtype", "dtype"), (5, "indices", "index")])


def _broadcast(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def test_mutations_stay_materialisable_and_mostly_valid():
    g = _binary_axis_group()
    inp = seed_inputs(g)[0]
    rng = np.random.default_rng(7)
    same_shape = axis_ok = total = 0
    ops = set()
    for _ in range(400):
        inp2, op = mutate(g, inp, rng, dtypes=("float32", "float64"), p_invalid=0.0)
        ops.add(op)
        v = materialise(inp2)
        total += 1
        same_shape += _broadcast(v[0].shape, v[1].shape)
        rank = v[0].ndim
        axis = v[2]
        axis_ok += axis is None or (isinstance(axis, int) and -max(rank, 1) <= axis < max(rank, 1)) or isinstance(axis, tuple)
        assert v[5].size == 0 or v[5].max() < max(1, min(v[0].shape) if v[0].ndim else 1)
        assert v[0].dtype.name in ("float32", "float64")
        inp = inp2 if rng.random() < 0.5 else inp
    assert same_shape / total > 0.8
    assert axis_ok / total > 0.8
    assert {"axis", "flag", "dtype_arg"} <= ops and any(op.endswith(":rescale") for op in ops)


def test_a_structured_array_never_gets_special_values_from_a_mutation():
    """Sorted bins given NaN and inf by a structural mutation broke digitize's precondition
    (bins monotonic); revalue's regimes leave structured arrays' values alone too."""
    import dataclasses

    g = group("x:f/generic", [member("numpy", "numpy.f", "numpy:add",
                                     [(0, "x", 0, None, True), (1, "y", 1, None, True)])],
              [(0, "x", "tensor"), (1, "y", "tensor")])
    inp = seed_inputs(g)[0]
    assert inp[1].is_array and not inp[0].structure
    inp = inp.replace(1, dataclasses.replace(inp[1], structure="sorted"))
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(300):
        out, op = mutate(g, inp, rng, dtypes=("float32",), p_invalid=0.0)
        seen.add(op)
        for r in out[1].all_recipes():
            assert r.nonfinite_rate == 0.0 and r.boundary_rate == 0.0, op
        assert np.isfinite(materialise(out)[1]).all()
    assert {"tensor:nonfinite", "tensor:boundary"} <= seen  # the unstructured array still gets them


def test_invalid_mutations_on_request():
    g = _binary_axis_group()
    inp = seed_inputs(g)[0]
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(100):
        out, op = mutate(g, inp, rng, dtypes=("float32",), p_invalid=1.0)
        assert op in INVALID_OPS
        seen.add(op)
        materialise(out)
    assert {"invalid:axis", "invalid:dtype", "invalid:index", "invalid:shape"} <= seen


def test_mutation_is_deterministic_for_a_seeded_rng():
    g = _binary_axis_group()
    inp = seed_inputs(g)[0]
    a = [mutate(g, inp, np.random.default_rng(5))[0].signature() for _ in range(3)]
    assert len(set(a)) == 1


def test_empty_input():
    g = _binary_axis_group()
    assert mutate(g, GroupInput({}), np.random.default_rng(0)) == (GroupInput({}), "none")


def test_a_group_max_rank_bounds_the_data_arrays():
    """A registered group's max_rank (a registry annotation) bounds the ranks reshapes draw."""
    import types

    g = _binary_axis_group()
    inp = seed_inputs(g)[0]
    rng = np.random.default_rng(11)
    ranks = {len(r.shape) for _ in range(200) for r in mutate(g, inp, rng)[0][0].all_recipes()}
    assert max(ranks) > 2  # unbounded, reshapes reach rank 3 and 4
    bounded = types.SimpleNamespace(slots=g.slots, max_rank=2)
    cur, rng, ops = inp, np.random.default_rng(11), set()
    for _ in range(300):
        cur, op = mutate(bounded, cur, rng, p_invalid=0.2)
        ops.add(op)
        assert all(len(r.shape) <= 2 for s in (0, 1) for r in cur[s].all_recipes())
    assert any(op.endswith("reshape") for op in ops)  # reshapes still happen, within the bound


def test_a_float_in_a_shape_slot_mutates_as_a_scalar():
    """numpy.random.gamma(shape, scale, size): `shape` is the gamma shape k (a float), `size` the
    sample shape; only the latter becomes a list of dimensions."""
    m = member("numpy", "numpy.random.gamma", "numpy.random:gamma",
               [(0, "shape", 0, None, True), (1, "size", None, "size", True)])
    g = group("x:gamma/random", [m], [(0, "shape", "shape"), (1, "size", "shape")], category="random")
    inp = GroupInput({0: SlotValue.literal(2.0), 1: SlotValue.literal([3, 4])})
    rng = np.random.default_rng(0)
    for _ in range(60):
        out, op = mutate(g, inp, rng, p_invalid=0.0)
        assert isinstance(out[0].value, float), (op, out[0].value)
        assert isinstance(out[1].value, list)


def test_revalue_keeps_the_compile_signature_and_sets_the_regime():
    from xamt.fuzz.schedule import load_settings
    from xamt.inputs.mutate import revalue

    regimes = load_settings().regimes
    g = _binary_axis_group()
    inp = seed_inputs(g)[0]
    rng = np.random.default_rng(3)
    for regime in regimes:
        child, op = revalue(g, inp, rng, regime, regimes)
        assert op == f"values:{regime}" and child.compile_signature() == inp.compile_signature()
        before, after = materialise(inp), materialise(child)
        for slot in (0, 1):
            assert after[slot].shape == before[slot].shape and after[slot].dtype == before[slot].dtype
        assert after[2] == before[2] and after[3] == before[3]  # literals as they were
        data = np.concatenate([after[0].ravel(), after[1].ravel()]).astype(np.float64)
        if regime == "nonfinite" and data.size >= 8:
            pass  # a rate, not a certainty, on small arrays
        if regime == "edges" and data.size:
            from xamt.inputs.arrays import boundary_values

            pool = set(boundary_values(str(after[0].dtype)).astype(np.float64).tolist())
            assert float(after[0].ravel()[0]) in pool
    # a structural mutation may change the signature; revalue never does
    changed = sum(mutate(g, inp, rng, dtypes=("float32", "float64"))[0].compile_signature()
                  != inp.compile_signature() for _ in range(200))
    assert changed > 20


def test_edge_recipes_cover_every_boundary_value_as_the_seed_moves_the_offset():
    import dataclasses

    from xamt.inputs.arrays import ArrayRecipe, boundary_values

    base = ArrayRecipe(seed=0, dtype="float32", shape=(2, 3), edges=True)
    seen = set()
    for seed in range(len(boundary_values("float32"))):
        seen |= set(dataclasses.replace(base, seed=seed).build().ravel().view(np.uint32).tolist())
    assert set(boundary_values("float32").view(np.uint32).tolist()) <= seen
    # the field is left out of the JSON when off: recipes stored before it keep their form
    assert "edges" not in ArrayRecipe(seed=1).to_json() and ArrayRecipe.from_json(base.to_json()) == base


def test_status_probes_cover_every_applicable_invalid_operator_once():
    from xamt.inputs.mutate import status_probes

    g = _binary_axis_group()
    inp = seed_inputs(g)[0]
    probes = status_probes(g, inp)
    names = [name for _, name in probes]
    # dtypes are the registry's dtype probe's business, not these
    assert names[:8] == ["invalid:axis", "invalid:index", "invalid:shape", "rank:0", "rank:1", "rank:+1",
                         "axis:tuple", "scalar"]
    shape2 = materialise(inp)[1].shape  # (3, 4)
    assert names[8:] == ["shape2:transposed", "shape2:first+1", "dtype_arg:bool", "dtype_arg:int32",
                         "dtype_arg:complex64"]
    assert [p.signature() for p, _ in status_probes(g, inp)] == [p.signature() for p, _ in probes]
    values = {name: materialise(p) for p, name in probes}
    rank = materialise(inp)[0].ndim
    axis = values["invalid:axis"][2]
    assert not -rank <= axis < rank
    assert values["invalid:shape"][0].shape != values["invalid:shape"][1].shape
    assert values["rank:0"][0].shape == () and values["rank:0"][1].shape == ()
    shape = materialise(inp)[0].shape
    assert values["rank:1"][0].shape == (int(np.prod(shape)),)
    assert values["rank:+1"][0].shape == (2, *shape) and values["rank:+1"][1].shape[0] == 2
    assert tuple(values["axis:tuple"][2]) == (0, 1)
    assert values["scalar"][1] == 1.5 and values["scalar"][0].shape == shape
    assert [values[f"dtype_arg:{d}"][4] for d in ("bool", "int32", "complex64")] == [
        np.dtype("bool"), np.dtype("int32"), np.dtype("complex64")]
    indices, x = values["invalid:index"][5], values["invalid:index"][0]
    assert indices.size and indices.max() >= min(x.shape)
    # the second array along one axis: transposed, one more along the first
    assert values["shape2:transposed"][1].shape == (*shape2[:-2], shape2[-1], shape2[-2])
    assert values["shape2:first+1"][1].shape == (shape2[0] + 1, *shape2[1:])
    assert values["shape2:first+1"][0].shape == shape


def test_values_beyond_the_seeds_range_are_probed_where_the_seed_kept_them_in_one():
    import dataclasses

    from xamt.inputs.mutate import out_of_range_inputs, status_probes

    g = _binary_axis_group()
    inp = seed_inputs(g)[0]
    assert out_of_range_inputs(inp) == []  # ordinary draws hold every sign and size already
    ranged = inp.replace(0, inp[0].with_recipes(tuple(dataclasses.replace(r, low=-1.0, high=1.0)
                                                      for r in inp[0].all_recipes())))
    names = [name for _, name in status_probes(g, ranged)]
    assert names[-2:] == ["values:below", "values:above"]
    probes = dict((name, materialise(p)) for p, name in out_of_range_inputs(ranged))
    below, above = probes["values:below"], probes["values:above"]
    shape = materialise(inp)[0].shape
    assert (below[0] < -1).all() and (above[0] > 1).all() and below[0].shape == shape
    np.testing.assert_array_equal(below[1], materialise(inp)[1])  # unbounded: unchanged
    # indices into another argument have a structure: left whole
    assert inp[5].structure and np.array_equal(below[5], materialise(inp)[5])


def test_a_sequence_of_arrays_is_probed_with_its_second_array_longer_along_an_axis():
    from xamt.inputs.mutate import status_probes

    g = group("x:g/shape", [member("numpy", "numpy.vstack", "numpy:vstack", [(0, "tup", 0, None, True)])],
              [(0, "tup", "tensors")])
    inp = seed_inputs(g)[0]
    probes = {name: materialise(p) for p, name in status_probes(g, inp)}
    first, second = materialise(inp)[0][0].shape, materialise(inp)[0][1].shape
    assert probes["seq2:first+1"][0][1].shape == (second[0] + 1, *second[1:])
    assert probes["seq2:first+1"][0][0].shape == first
    assert probes["seq2:last+1"][0][1].shape == (*second[:-1], second[-1] + 1)


def test_nonfinite_input_puts_nan_and_inf_in_float_arrays_only():
    import dataclasses

    from xamt.inputs.mutate import nonfinite_input

    g = _binary_axis_group()
    inp = seed_inputs(g)[0]
    v = materialise(nonfinite_input(inp))
    assert (~np.isfinite(v[0])).any() and (~np.isfinite(v[1])).any()
    assert v[0].shape == materialise(inp)[0].shape
    np.testing.assert_array_equal(v[5], materialise(inp)[5])  # integer indices unchanged
    ints = group("x:g/generic", [member("numpy", "numpy.g", "numpy:abs", [(0, "x", 0, None, True)])],
                 [(0, "x", "tensor")])
    i = seed_inputs(ints)[0]
    i = i.replace(0, i[0].with_recipes(tuple(dataclasses.replace(r, dtype="int32") for r in i[0].all_recipes())))
    assert nonfinite_input(i) is None


def test_ties_input_makes_arrays_of_one_shape_and_dtype_equal():
    from xamt.inputs.mutate import ties_input

    g = _binary_axis_group()
    inp = seed_inputs(g)[0]
    tied = ties_input(inp)
    a, b = materialise(inp)[0], materialise(inp)[1]
    assert a.shape == b.shape and a.dtype == b.dtype and not np.array_equal(a, b)
    va = materialise(tied)
    np.testing.assert_array_equal(va[0], va[1])
    np.testing.assert_array_equal(va[0], a)  # the first keeps its values
    assert va[5].dtype == np.int64  # other arrays (indices) keep theirs
    one = group("x:g/generic", [member("numpy", "numpy.g", "numpy:abs", [(0, "x", 0, None, True)])],
                [(0, "x", "tensor")])
    assert ties_input(seed_inputs(one)[0]) is None


def test_status_probes_of_a_one_array_input():
    from xamt.inputs.mutate import status_probes

    g = group("x:g/generic", [member("numpy", "numpy.g", "numpy:abs", [(0, "x", 0, None, True)])],
              [(0, "x", "tensor")])
    assert [name for _, name in status_probes(g, seed_inputs(g)[0])] == ["rank:0", "rank:1", "rank:+1"]
