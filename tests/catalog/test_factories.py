"""Initialisers: jax.nn.initializers' factories and keras.initializers' classes as constructed
APIs (FactoryNamespace, ConstructedNamespace(named_by_class=True))."""
import pytest

from xamt.catalog import ApiRecord, Param, mine_library
from xamt.catalog.callstyles import as_factories
from xamt.libraries.base import FactoryNamespace
from xamt.libraries.invoke import call_constructed
from xamt.libraries.registry import Registry

CALL = (("key", "positional_or_keyword", None, None), ("shape", "positional_or_keyword", None, None),
        ("dtype", "positional_or_keyword", "None", None))


def _rec(name, params, namespace="pkg.init"):
    return ApiRecord(library="x", qualname=f"{namespace}.{name}", name=name, namespace=namespace,
                     kind="function", target=f"{namespace}:{name}", params=params)


def test_factory_functions_become_constructed_and_ready_callables_stay():
    factory = _rec("normal", [Param("stddev", "positional_or_keyword", "0.01", False),
                              Param("dtype", "positional_or_keyword", "None", False)])
    ready = _rec("zeros", [Param("key", "positional_or_keyword"),
                           Param("shape", "positional_or_keyword")])
    other = _rec("normal", [Param("x", "positional_or_keyword")], namespace="pkg.other")
    records = [factory, ready, other]
    as_factories(records, FactoryNamespace("pkg.init", CALL))
    assert factory.kind == "constructed" and factory.target == "pkg.init:normal.__call__"
    # the factory's dtype is the call's default: left to the call, not the constructor
    assert [p.name for p in factory.init_params] == ["stddev"]
    assert [p.name for p in factory.params] == ["key", "shape", "dtype"]
    assert [p.required for p in factory.params] == [True, True, False]
    assert ready.kind == "function" and ready.target == "pkg.init:zeros"
    assert other.kind == "function"


def test_jax_initializers_are_mined_as_factories():
    pytest.importorskip("jax")
    cat = mine_library(Registry().get("jax"))
    recs = {r.qualname: r for r in cat.records}
    he = recs["jax.nn.initializers.he_normal"]
    assert he.kind == "constructed" and he.target.endswith(":he_normal.__call__")
    assert {p.name for p in he.init_params} == {"in_axis", "out_axis", "batch_axis"}
    assert recs["jax.nn.initializers.zeros"].kind == "function"
    # the constructed call builds the initializer and calls it
    import jax

    out = call_constructed(he.target, {"in_axis": -2}, jax.random.PRNGKey(0), (3, 4))
    assert out.shape == (3, 4)


def test_keras_initializers_are_named_by_class():
    pytest.importorskip("keras")
    cat = mine_library(Registry().get("keras"))
    recs = {r.qualname: r for r in cat.records if r.namespace == "keras.initializers"
            and r.kind == "constructed"}
    he = recs["keras.initializers.HeNormal"]
    assert he.owner is None and he.target == "keras.initializers:HeNormal.__call__"
    assert [p.name for p in he.params][:2] == ["shape", "dtype"]
    assert "seed" in {p.name for p in he.init_params}
    # one record per class: the lowercase alias names the same class
    assert "keras.initializers.he_normal" in he.aliases
    assert "keras.initializers.he_normal" not in recs
