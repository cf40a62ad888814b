"""Groups of dtype-argument APIs: slots of the dtype role reach each library as its own dtype
object and dtype results compare by name (torch.float32 is numpy's "float32")."""
import pytest

from tests.groups.helpers import group, member
from xamt.groups.build import build_registry
from xamt.groups.model import load_registry
from xamt.libraries.registry import Registry
from xamt.store import Store


def _promote(key: str, category: str):
    args = [(0, "type1", 0, None, True), (1, "type2", 1, None, True)]
    return group(key, [member("numpy", "numpy.promote_types", "numpy:promote_types", args),
                       member("torch", "torch.promote_types", "torch:promote_types", args)],
                 [(0, "type1", "dtype"), (1, "type2", "dtype")], canonical="promote_types",
                 category=category)


def test_dtype_slots_and_dtype_results(tmp_path, pool, adapters):
    if "torch" not in adapters:
        pytest.skip("torch not installed")
    same = _promote("x:promote_same/generic", "generic")       # float32, float32 -> float32
    mixed = _promote("x:promote_types/dtype", "dtype")         # float32, int32: the lattices differ
    store = Store(tmp_path / "xamt.db")
    build_registry(store, candidates=[same, mixed], pool=pool,
                   registry=Registry(list(adapters.values())))
    got = {g.key: g for g in load_registry(store, states=None)}
    assert got["x:promote_same/generic"].state == "validated"
    seed = got["x:promote_types/dtype"].seed_inputs()[0]
    assert [seed[i].value for i in (0, 1)] == ["float32", "int32"]  # canonical_inputs.toml rule
    # numpy promotes int32 + float32 to float64, torch to float32: a value difference, not an
    # error (the dtype objects were accepted) and not "not comparable" (names compared)
    reasons = {i.qualname: i.reason for _, i in got["x:promote_types/dtype"].rejected}
    assert got["x:promote_types/dtype"].state != "validated"
    assert "differs" in set(reasons.values()) and set(reasons.values()) <= {"differs", "no_partner"}
