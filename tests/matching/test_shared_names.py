"""Libraries that share every API name (keras on TensorFlow, on JAX, on PyTorch): their
relations stay inside each library, with keys of their own; across them, one cross-library
group per computation."""
from __future__ import annotations

from collections import Counter

from xamt.catalog import ApiRecord, LibraryCatalog, Param
from xamt.matching.engine import match


def _keras(lib: str) -> LibraryCatalog:
    x = [Param("x", "positional_or_keyword", None, True)]
    records = [
        ApiRecord(library=lib, qualname="keras.ops.relu", name="relu", namespace="keras.ops",
                  kind="function", target="keras.ops:relu", params=x, signature_source="inspect"),
        ApiRecord(library=lib, qualname="keras.ops.sigmoid", name="sigmoid", namespace="keras.ops",
                  kind="function", target="keras.ops:sigmoid", params=x, signature_source="inspect"),
        ApiRecord(library=lib, qualname="keras.activations.relu", name="relu", namespace="keras.activations",
                  kind="function", target="keras.activations:relu", params=x, signature_source="inspect",
                  alias_of="keras.ops.relu"),
        ApiRecord(library=lib, qualname="keras.layers.ReLU", name="ReLU", namespace="keras.layers",
                  kind="class", target="keras.layers:ReLU", params=[Param("inputs", "positional_or_keyword",
                                                                          None, True)],
                  signature_source="inspect", functional_forms=["keras.ops.relu"]),
    ]
    return LibraryCatalog(lib, "3.15.1", records)


def test_relations_of_libraries_that_share_names_stay_apart():
    catalogs = {lib: _keras(lib) for lib in ("keras", "keras_jax", "keras_torch")}
    groups = match(catalogs).groups
    keys = Counter(g.key for g in groups)
    assert all(n == 1 for n in keys.values()), [k for k, n in keys.items() if n > 1]
    inside = [g for g in groups if g.relation != "cross_library"]
    assert inside and all(len({m.library for m in g.members}) == 1 for g in inside)
    modules = sorted(g.key for g in inside if g.relation == "functional_module")
    assert modules == ["functional_module:keras.ops.relu|keras.layers.ReLU",
                       "functional_module:keras.ops.relu|keras.layers.ReLU@keras_jax",
                       "functional_module:keras.ops.relu|keras.layers.ReLU@keras_torch"]
    cross = [g for g in groups if g.relation == "cross_library" and "sigmoid" in g.key]
    assert len(cross) == 1 and sorted(m.library for m in cross[0].members) == ["keras", "keras_jax",
                                                                               "keras_torch"]
