"""A callable class and its functional form (``functional_module`` relations)."""
from __future__ import annotations

from xamt.catalog import ApiRecord, LibraryCatalog, Param
from xamt.matching.engine import match


def _p(name, required=False):
    return Param(name, "positional_or_keyword", None, required)


def test_a_module_with_a_training_flag_its_function_lacks_is_no_relation():
    """keras.layers.Dropout called without training=True returns its input (inference mode),
    where keras.random.dropout always drops: by default they compute different things. A layer
    without such a flag (ReLU) keeps its relation."""
    records = [
        ApiRecord(library="keras", qualname="keras.random.dropout", name="dropout", namespace="keras.random",
                  kind="function", target="keras.random:dropout",
                  params=[_p("inputs", True), _p("rate", True), _p("noise_shape"), _p("seed")],
                  signature_source="inspect"),
        ApiRecord(library="keras", qualname="keras.layers.Dropout", name="Dropout", namespace="keras.layers",
                  kind="class", target="keras.layers:Dropout", params=[_p("inputs", True), _p("training")],
                  init_params=[_p("rate", True), _p("noise_shape"), _p("seed")], signature_source="inspect",
                  functional_forms=["keras.random.dropout"]),
        ApiRecord(library="keras", qualname="keras.ops.relu", name="relu", namespace="keras.ops",
                  kind="function", target="keras.ops:relu", params=[_p("x", True)], signature_source="inspect"),
        ApiRecord(library="keras", qualname="keras.layers.ReLU", name="ReLU", namespace="keras.layers",
                  kind="class", target="keras.layers:ReLU", params=[_p("inputs", True)],
                  signature_source="inspect", functional_forms=["keras.ops.relu"]),
    ]
    groups = match({"keras": LibraryCatalog("keras", "3.15.1", records)}).groups
    modules = sorted(g.key for g in groups if g.relation == "functional_module")
    assert modules == ["functional_module:keras.ops.relu|keras.layers.ReLU"]
