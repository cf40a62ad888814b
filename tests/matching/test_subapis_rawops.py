"""Matching of ufunc methods (numpy.add.reduce) and of tf.raw_ops records."""
from xamt.catalog import ApiRecord, LibraryCatalog, Param
from xamt.matching.engine import match
from xamt.matching.names import canonical_name


def test_canonical_names_of_ufunc_methods_and_raw_ops(data):
    assert canonical_name("add_reduce", data, "numpy").name == "sum"
    assert canonical_name("logaddexp_accumulate", data, "jax").name == "logcumsumexp"
    assert canonical_name("multiply_outer", data, "numpy").name == "multiply_outer"  # not outer
    raw = "tensorflow.raw_ops"
    for op, canon in [("Igammac", "gammaincc"), ("MatrixInverse", "inv"), ("BiasAdd", "bias_add"),
                      ("Xlog1py", "xlog1py"), ("BatchMatMulV2", "matmul"), ("ArgMax", "argmax"),
                      ("FloorMod", "remainder"), ("Mod", "fmod"), ("Inv", "reciprocal"),
                      ("Div", "truncatediv"), ("SelectV2", "where")]:
        assert canonical_name(op, data, "tensorflow", raw).name == canon, op
    # the raw-op table applies to that namespace only: tf.math.mod stays a floor remainder
    assert canonical_name("mod", data, "tensorflow", "tensorflow.math").name == "remainder"


def test_ufunc_methods_join_the_plain_functions_group(groups):
    s = groups["x:sum/reduction"]
    names = {m.qualname for m in s.members}
    assert {"numpy.sum", "numpy.add.reduce", "jax.numpy.add.reduce"} <= names
    assert s.pivot == "numpy.sum"  # the plain function stays the reference
    red = next(m for m in s.members if m.qualname == "numpy.add.reduce")
    assert red.target == "numpy:add.reduce" and red.plan.complete
    # add.reduce defaults to axis=0, sum to None: the fuzzer must always give the axis
    assert next(sl for sl in s.slots if sl.role == "axis").required
    assert "numpy.maximum.accumulate" in {m.qualname for m in groups["x:cummax/generic"].members}
    outer = groups["x:subtract_outer/generic"]
    assert {m.qualname for m in outer.members} == {"numpy.subtract.outer",
                                                   "jax.numpy.subtract.outer"}
    assert "numpy.multiply.outer" not in {m.qualname for g in groups.values()
                                          if g.canonical == "outer" for m in g.members}


def test_ufunc_method_joins_the_intra_alias_group_without_renaming_it(groups):
    g = next(g for g in groups.values() if g.relation in ("alias", "namespace_twin")
             and not g.same_object and "numpy.add.reduce" in {m.qualname for m in g.members})
    assert "numpy.sum" in {m.qualname for m in g.members}
    assert not g.key.endswith("numpy.add.reduce")  # keyed by the plain function


def _raw(name: str, params: list[str]) -> ApiRecord:
    ps = [Param(p, "keyword_only") for p in params] + [Param("name", "keyword_only", "None", False)]
    return ApiRecord(library="tensorflow", qualname=f"tensorflow.raw_ops.{name}", name=name,
                     namespace="tensorflow.raw_ops", kind="function",
                     target=f"tensorflow.raw_ops:{name}", params=ps, signature_source="inspect")


def test_raw_ops_match_by_keyword_and_get_no_compiled_twin(catalogs, data):
    public = ApiRecord(library="tensorflow", qualname="tensorflow.math.subtract", name="subtract",
                       namespace="tensorflow.math", kind="function",
                       target="tensorflow.math:subtract",
                       params=[Param("x", "positional_or_keyword"),
                               Param("y", "positional_or_keyword")],
                       signature_source="inspect")
    tf = LibraryCatalog("tensorflow", "test",
                        [public, _raw("Sub", ["x", "y"]), _raw("Mod", ["x", "y"])],
                        info={"compile": {"available": True}})
    numpy_only = {"numpy": catalogs["numpy"], "tensorflow": tf}
    result = match(numpy_only, data)
    groups = {g.key: g for g in result.groups}
    sub = groups["x:subtract/generic"]
    assert sub.pivot == "numpy.subtract"
    raw = next(m for m in sub.members if m.qualname == "tensorflow.raw_ops.Sub")
    assert [(a.slot, a.keyword, a.position) for a in raw.plan.args] == [(0, "x", None),
                                                                       (1, "y", None)]
    target, args, kwargs = raw.task({0: "a", 1: "b"})
    assert args == [] and kwargs == {"x": "a", "y": "b"}
    # Mod is C's truncated remainder: numpy.fmod's group, not numpy.remainder's
    assert "tensorflow.raw_ops.Mod" in {m.qualname for m in groups["x:fmod/generic"].members}
    assert not any(g.canonical == "remainder" for g in result.groups
                   if "tensorflow.raw_ops.Mod" in {m.qualname for m in g.members})
    # the public op gets a compiled twin; its raw op does not (the adapter's uncompiled namespace)
    assert "eager_compiled:tensorflow.math.subtract" in groups
    assert "eager_compiled:tensorflow.raw_ops.Sub" not in groups
    # the raw op and its public wrapper form an intra-library relation keyed by the wrapper
    twin = next(g for g in result.groups if g.relation in ("alias", "namespace_twin")
                and {m.qualname for m in g.members} == {"tensorflow.math.subtract",
                                                        "tensorflow.raw_ops.Sub"})
    assert twin.key.endswith(":tensorflow.math.subtract")
