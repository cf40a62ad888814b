"""Fill namespaces: torch.nn.init's functions fill a tensor they are given; mined as ``filling``
APIs called from a shape (the ``fill`` call style through the adapter's helper)."""
import numpy as np
import pytest

from xamt.catalog import ApiRecord, Param, mine_library
from xamt.catalog.callstyles import as_fillings
from xamt.libraries.base import FillNamespace
from xamt.libraries.registry import Registry


def _rec(name, params, namespace="pkg.init"):
    return ApiRecord(library="x", qualname=f"{namespace}.{name}", name=name, namespace=namespace,
                     kind="function", target=f"{namespace}:{name}", params=params)


def test_functions_filling_their_first_tensor_become_fillings():
    fill = _rec("uniform_", [Param("tensor", "positional_or_keyword"),
                             Param("a", "positional_or_keyword", "0.0", False)])
    gain = _rec("calculate_gain", [Param("nonlinearity", "positional_or_keyword")])
    other = _rec("uniform_", [Param("tensor", "positional_or_keyword")], namespace="pkg.other")
    as_fillings([fill, gain, other], FillNamespace("pkg.init", "tensor"))
    assert fill.kind == "filling" and fill.target == "pkg.init:uniform_"
    assert [(p.name, p.kind, p.required) for p in fill.params] == [
        ("shape", "positional_only", True), ("a", "positional_or_keyword", False)]
    assert gain.kind == "function" and other.kind == "function"


def test_torch_init_is_mined_as_fillings_without_its_deprecated_wrappers():
    pytest.importorskip("torch")
    cat = mine_library(Registry().get("torch"))
    recs = {r.qualname: r for r in cat.records if r.namespace == "torch.nn.init"}
    assert recs["torch.nn.init.kaiming_uniform_"].kind == "filling"
    assert recs["torch.nn.init.kaiming_uniform_"].params[0].name == "shape"
    assert recs["torch.nn.init.calculate_gain"].kind == "function"
    # kaiming_uniform(*args, **kwargs) is a deprecated wrapper of kaiming_uniform_
    assert "torch.nn.init.kaiming_uniform" not in recs and "torch.nn.init.eye" not in recs


def test_the_fill_call_makes_the_tensor_from_the_shape():
    pytest.importorskip("torch")
    from xamt.exec.member import call_member
    from xamt.matching.model import ArgSpec, ArgumentPlan, Member

    m = Member(library="torch", qualname="torch.nn.init.eye_", target="torch.nn.init:eye_",
               kind="filling", call="fill", via="xamt.libraries.torch:call_filling",
               plan=ArgumentPlan(args=[ArgSpec(slot=0, param="shape", position=0)]))
    assert m.task({0: (2, 3)})[0] == "xamt.libraries.torch:call_filling"
    np.testing.assert_array_equal(call_member(m.to_json(), {0: (2, 3)}), np.eye(2, 3))
    m.plan.args.append(ArgSpec(slot=None, param="val", position=1, value=0.5))
    m.target, m.qualname = "torch.nn.init:constant_", "torch.nn.init.constant_"
    out = call_member(m.to_json(), {0: [4]})
    assert out.dtype == np.float32 and out.tolist() == [0.5] * 4
