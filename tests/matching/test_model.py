from xamt.matching.model import ArgSpec, ArgumentPlan, CandidateGroup, GroupSlot, Member, band


def member(call="function", **kw):
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param="x", position=0, transform="tensor"),
                              ArgSpec(slot=1, param="dim", keyword="dim")])
    return Member(library="torch", qualname="torch.sum", target="torch:sum", kind="function",
                  call=call, plan=plan, **kw)


def test_group_json_round_trip():
    g = CandidateGroup(key="x:sum/reduction", relation="cross_library", category="reduction",
                       canonical="sum", equivalence="value", confidence=0.9,
                       slots=[GroupSlot(0, "a", "tensor", required=True, shared=True)],
                       members=[member()], band=band(0.9))
    again = CandidateGroup.from_json(g.to_json())
    assert again.to_json() == g.to_json() and again.band == "high"
    assert again.callable_slots == [0]


def test_task_for_each_call_style():
    assert member().task({0: "X", 1: 1}) == ("torch:sum", ["X"], {"dim": 1})
    m = member(call="compiled", via="xamt.libraries.torch:call_compiled")
    assert m.task({0: "X"}) == ("xamt.libraries.torch:call_compiled", ["torch:sum", "X"], {})
    meth = Member(library="torch", qualname="torch.Tensor.sum", target="torch:Tensor.sum",
                  kind="method", call="method", receiver_slot=0,
                  plan=ArgumentPlan(args=[ArgSpec(slot=0, param="self", position=0),
                                          ArgSpec(slot=1, param="dim", keyword="dim")]))
    assert meth.task({0: "X", 1: 1}) == ("xamt.libraries.invoke:call_method", ["sum", "X"], {"dim": 1})
    mod = Member(library="torch", qualname="torch.nn.Softmax", target="torch.nn:Softmax",
                 kind="class", call="module",
                 plan=ArgumentPlan(args=[ArgSpec(slot=0, param="input", position=0)],
                                   init_args=[ArgSpec(slot=1, param="dim", keyword="dim")]))
    assert mod.task({0: "X", 1: 1}) == ("xamt.libraries.invoke:call_module",
                                        ["torch.nn:Softmax", {"dim": 1}, "X"], {})
    dist = Member(library="torch", qualname="torch.distributions.Normal.log_prob",
                  target="torch.distributions:Normal.log_prob", kind="constructed",
                  call="constructed",
                  plan=ArgumentPlan(args=[ArgSpec(slot=0, param="value", position=0)],
                                    init_args=[ArgSpec(slot=1, param="loc", keyword="loc"),
                                               ArgSpec(slot=None, param="validate_args",
                                                       keyword="validate_args", value=True)]))
    assert dist.task({0: "X", 1: 0.5}) == (
        "xamt.libraries.invoke:call_constructed",
        ["torch.distributions:Normal.log_prob", {"loc": 0.5, "validate_args": True}, "X"], {})


def test_bands():
    assert band(0.85) == "high" and band(0.7) == "medium" and band(0.69) == "low"
