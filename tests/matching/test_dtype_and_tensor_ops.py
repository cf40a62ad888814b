"""dtype-argument APIs (promote_types, issubdtype, isdtype) and leftover tensor ops matched
across libraries through data (categories, roles, namespace aliases, argument plans)."""
from xamt.inputs.seed import seed_inputs
from xamt.matching.names import canonical_name


def test_namespace_aliases_name_the_counterparts(data):
    cases = [
        ("promote_types", "torch", "torch", "promote_types_category"),
        ("promote_types", "jax", "jax.numpy", "promote_types_category"),
        ("promote_types", "numpy", "numpy", "promote_types"),
        ("promote_types", "tensorflow", "tensorflow.experimental.numpy", "promote_types"),
        ("select", "torch", "torch", "index_in_dim"),
        ("index_in_dim", "jax", "jax.lax", "index_in_dim"),
        ("dynamic_index_in_dim", "jax", "jax.lax", "index_in_dim"),
        ("dynamic_slice", "jax", "jax.lax", "slice"),
        ("dynamic_slice_in_dim", "jax", "jax.lax", "narrow"),
        ("bitcast_convert_type", "jax", "jax.lax", "bitcast"),
        ("extract_sequences", "keras", "keras.ops", "frame"),
        ("scatter", "keras", "keras.ops", "scatter_nd"),
        ("diag", "tensorflow", "tensorflow.linalg", "diag_embed"),
    ]
    for raw, lib, ns, canon in cases:
        assert canonical_name(raw, data, lib, ns).name == canon, (raw, ns)
    # the names keep their meaning elsewhere: numpy.select, the im2col unfold, numpy.diag
    assert canonical_name("select", data, "numpy", "numpy").name == "select"
    assert canonical_name("unfold", data, "torch", "torch.nn.functional").name == "unfold"
    assert canonical_name("diag", data, "numpy", "numpy").name == "diag"
    assert canonical_name("slice", data, "jax", "jax.lax").name == "slice"  # removed by homonyms


def test_promote_types_groups_follow_the_promotion_lattice(groups):
    cat = groups["x:promote_types_category/dtype"]
    assert {m.qualname for m in cat.members} == {"torch.promote_types", "jax.numpy.promote_types"}
    assert [s.role for s in cat.slots] == ["dtype", "dtype"]
    # jax's docstring names numpy.promote_types; the homonym keeps it out of numpy's lattice
    assert not any("jax.numpy.promote_types" in {m.qualname for m in g.members}
                   for g in groups.values() if g.canonical == "promote_types")


def test_dtype_apis_are_seeded_with_dtypes(groups):
    inp = seed_inputs(groups["x:promote_types_category/dtype"])[0]
    assert [(inp[i].kind, inp[i].value) for i in (0, 1)] == [("dtype", "float32"), ("dtype", "int32")]
    sub = groups["x:issubdtype/dtype"]
    assert {m.qualname for m in sub.members} == {"numpy.issubdtype", "jax.numpy.issubdtype"}
    isd = groups["x:isdtype/dtype"]
    inp = seed_inputs(isd)[0]
    assert inp[0].kind == "dtype" and (inp[1].kind, inp[1].value) == ("literal", "real floating")


def test_torch_select_and_narrow_meet_jax_lax(groups):
    sel = groups["x:index_in_dim/generic"]
    names = {m.qualname for m in sel.members}
    assert {"torch.select", "torch.Tensor.select", "jax.lax.index_in_dim",
            "jax.lax.dynamic_index_in_dim"} <= names
    jx = next(m for m in sel.members if m.qualname == "jax.lax.index_in_dim")
    fixed = {a.param: a.value for a in jx.plan.args if a.slot is None}
    assert fixed == {"keepdims": False}  # torch.select drops the indexed dimension
    assert all(m.plan.complete for m in sel.members)
    nar = groups["x:narrow/generic"]
    assert {"torch.narrow", "jax.lax.dynamic_slice_in_dim"} <= {m.qualname for m in nar.members}
    tn = next(m for m in nar.members if m.qualname == "torch.narrow")
    slot_of = {a.param: a.slot for a in tn.plan.args}
    names_of = {s.index: s.name for s in nar.slots}
    assert names_of[slot_of["start"]] == "start_index" and names_of[slot_of["length"]] == "slice_size"
    inp = seed_inputs(nar)[0]
    assert inp[slot_of["start"]].value == 1 and inp[slot_of["length"]].value == 2


def test_torch_triangle_indices_join_numpy(groups):
    for name in ("tril_indices", "triu_indices"):
        g = groups[f"x:{name}/generic"]
        t = next(m for m in g.members if m.qualname == f"torch.{name}")
        names_of = {s.index: s.name for s in g.slots}
        assert {names_of[a.slot] for a in t.plan.args if a.slot is not None} == {"n", "m", "k"}
        inp = seed_inputs(g)[0]
        m_slot = next(s.index for s in g.slots if s.name == "m")
        assert (inp[m_slot].kind, inp[m_slot].value) == ("literal", 4)  # a column count


def test_jax_result_type_stays_out_of_numpys_lattice(groups, data):
    assert canonical_name("result_type", data, "jax", "jax.numpy").name == "result_type_category"
    for g in groups.values():
        if g.relation == "cross_library" and g.canonical == "result_type":
            assert "jax.numpy.result_type" not in {m.qualname for m in g.members}, g.key
