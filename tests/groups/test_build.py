import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from tests.groups.helpers import group, member, unary
from xamt.groups.build import build_registry
from xamt.groups.model import RegisteredGroup, load_registry
from xamt.libraries.registry import Registry
from xamt.store import Store

C = "tests.groups.crashers"


def _registry(adapters):
    return Registry(list(adapters.values()))


def _abs_group(adapters):
    pairs = [("numpy", "numpy.abs", "numpy:abs"),
             ("crashy", f"{C}.off_by_one", f"{C}:off_by_one"),
             ("crashy", f"{C}.segfault", f"{C}:segfault"),
             ("crashy", f"{C}.noisy", f"{C}:noisy"),
             ("numpy", "numpy.linalg.inv", "numpy.linalg:inv")]
    if "torch" in adapters:
        pairs.insert(1, ("torch", "torch.abs", "torch:abs"))
    g = unary("x:abs/generic", pairs)
    g.members.append(member("numpy", "numpy.f", "numpy:abs", [(0, "x", 0, None, True)], unmatched=["w"]))
    return g


def _build(tmp_path, pool, adapters, candidates, **kw):
    store = Store(tmp_path / "xamt.db")
    result = build_registry(store, candidates=candidates, pool=pool, registry=_registry(adapters), **kw)
    return store, result


def _by_key(store, **kw):
    return {g.key: g for g in load_registry(store, states=None, **kw)}


def test_validation_reasons_and_figures(tmp_path, pool, adapters):
    store, result = _build(tmp_path, pool, adapters, [_abs_group(adapters)])
    g = _by_key(store)["x:abs/generic"]
    assert g.state == "validated" and g.equivalence == "value"
    names = {m.qualname for m in g.members}
    assert "numpy.abs" in names and ("torch.abs" in names or "torch" not in adapters)
    reasons = {i.qualname: i.reason for _, i in g.rejected}
    assert reasons[f"{C}.off_by_one"] == "differs"
    assert reasons[f"{C}.segfault"] == "crashed"
    assert reasons[f"{C}.noisy"] == "nondeterministic"
    assert reasons["numpy.linalg.inv"] == "raised"
    assert reasons["numpy.f"] == "incomplete_plan"
    stats = result.stats
    assert stats["cross_library_groups"] == (1 if "torch" in adapters else 0)
    assert stats["rejection_reasons"]["crashed"] == 1
    # the registered group round-trips and keeps its seeds and dtypes
    back = RegisteredGroup.from_json(json.loads(json.dumps(g.to_json())))
    assert back.key == g.key and back.seed_inputs()[0].variant == g.variant
    info = g.member_info[0]
    assert "float32" in info.accepted and "float64" in info.accepted


def test_tuple_results_are_normalised(tmp_path, pool, adapters):
    declared = unary("x:sort/generic", [("numpy", "numpy.sort", "numpy:sort"),
                                        ("crashy", f"{C}.pair_sort", f"{C}:pair_sort")])
    fallback = unary("x:mysort/generic", [("numpy", "numpy.sort", "numpy:sort"),
                                          ("crashy", f"{C}.pair_sort", f"{C}:pair_sort")])
    store, _ = _build(tmp_path, pool, adapters, [declared, fallback])
    groups = _by_key(store)
    assert groups["x:sort/generic"].normalisation == "first" and groups["x:sort/generic"].state == "validated"
    assert groups["x:mysort/generic"].normalisation == "first"   # found among the fallbacks
    assert len(groups["x:mysort/generic"].members) == 2


def test_intra_relations_value_and_status(tmp_path, pool, adapters):
    fm = group("function_method:numpy.abs|numpy.ndarray.abs",
               [member("numpy", "numpy.abs", "numpy:abs", [(0, "x", 0, None, True)]),
                member("numpy", "numpy.ndarray.__abs__", "numpy:ndarray.__abs__", [(0, "self", 0, None, True)],
                       call="method", receiver_slot=0)],
               [(0, "x", "tensor")], relation="function_method", canonical="abs")
    # a candidate matched as status-only stays so, though its values agree
    twins = group("functional_module:numpy.isposinf|numpy.isneginf",
                  [member("numpy", "numpy.isposinf", "numpy:isposinf", [(0, "x", 0, None, True)]),
                   member("numpy", "numpy.isneginf", "numpy:isneginf", [(0, "x", 0, None, True)])],
                  [(0, "x", "tensor")], relation="functional_module", canonical="twins",
                  equivalence="status")
    store, result = _build(tmp_path, pool, adapters, [fm, twins])
    groups = _by_key(store)
    assert groups[fm.key].state == "validated" and groups[fm.key].equivalence == "value"
    assert groups[twins.key].state == "validated" and groups[twins.key].equivalence == "status"
    assert result.stats["intra_relations_total"] == 2 and result.stats["cross_library_groups"] == 0


def _inferred(a, b):
    return group(f"inferred:numpy.{a}|numpy.{b}",
                 [member("numpy", f"numpy.{a}", f"numpy:{a}", [(0, "x", 0, None, True)]),
                  member("numpy", f"numpy.{b}", f"numpy:{b}", [(0, "x", 0, None, True)])],
                 [(0, "x", "tensor")], relation="inferred", canonical=a)


def test_inferred_relations_value_then_status(tmp_path, pool, adapters):
    """DeepREL's validation: value when outputs agree and depend on the input's values; status
    when both succeed or fail alike on every input tried, invalid ones and dtypes included;
    rejected otherwise, with the input on which they part."""
    value = _inferred("abs", "fabs")            # equal on real inputs
    status = _inferred("sin", "cos")            # different values, the same valid inputs
    constant = _inferred("isposinf", "isneginf")  # agree only on a constant (all False)
    differs = _inferred("abs", "negative")      # numpy.negative refuses bool, abs takes it
    store, _ = _build(tmp_path, pool, adapters, [value, status, constant, differs])
    groups = _by_key(store)
    assert groups[value.key].state == "validated" and groups[value.key].equivalence == "value"
    for g in (status, constant):
        assert groups[g.key].state == "validated" and groups[g.key].equivalence == "status", g.key
        assert "rank:0" in groups[g.key].evidence["status_probes"]
    rejected = groups[differs.key]
    assert rejected.state == "rejected"
    reasons = {i.qualname: (i.reason, i.detail) for _, i in rejected.rejected}
    assert reasons["numpy.negative"][0] == "status_differs"
    assert "dtype:bool" in reasons["numpy.negative"][1]


def test_inferred_value_needs_values_beyond_ties_and_the_identity(tmp_path, pool, adapters):
    """Agreement that holds on random values but parts on ties (``x > y`` against ``x >= y``),
    or that is only the input given back (two identities), is no value equivalence: status."""
    binary = [(0, "x", 0, None, True), (1, "y", 1, None, True)]
    ties = group("inferred:numpy.greater|numpy.greater_equal",
                 [member("numpy", "numpy.greater", "numpy:greater", binary),
                  member("numpy", "numpy.greater_equal", "numpy:greater_equal", binary)],
                 [(0, "x1", "tensor"), (1, "x2", "tensor")], relation="inferred", canonical="greater")
    identity = _inferred("positive", "copy")
    value = _inferred("abs", "fabs")
    store, _ = _build(tmp_path, pool, adapters, [ties, identity, value])
    groups = _by_key(store)
    assert groups[ties.key].state == "validated" and groups[ties.key].equivalence == "status"
    # two identities are tried for status (where copy, which takes bool, parts from positive)
    ident = groups[identity.key]
    assert ident.state == "rejected"
    assert {i.reason for _, i in ident.rejected} == {"status_differs"}
    assert groups[value.key].state == "validated" and groups[value.key].equivalence == "value"


def test_inferred_value_holds_on_nan_and_inf_and_negative_values_are_a_domain(tmp_path, pool, adapters):
    """Equal on finite values but not on NaN (``nancumsum`` against ``cumsum``): no value
    equivalence. Status probes include negative values, and NaN out of NaN-free input is a
    refusal: ``sqrt`` and ``exp2`` part there."""
    nan_aware = _inferred("nancumsum", "cumsum")
    domain = _inferred("sqrt", "exp2")
    store, _ = _build(tmp_path, pool, adapters, [nan_aware, domain])
    groups = _by_key(store)
    assert groups[nan_aware.key].equivalence == "status"
    dom = groups[domain.key]
    assert dom.state == "rejected"
    assert any("values:below" in i.detail and "NaN" in i.detail for _, i in dom.rejected)


def test_value_components_need_every_slot_to_reach_every_member():
    """``hfft(x, n)`` against ``hfftn(x)``: agreeing at the one validated ``n`` says nothing
    about other values of a slot only one member takes."""
    from types import SimpleNamespace as NS

    from xamt.groups.validate import _Validator

    def m(*slots):
        return NS(plan=NS(args=[NS(slot=s) for s in slots] + [NS(slot=None)], init_args=[]))
    v = NS(group=NS(members=[m(0, 1), m(0), m(0, 1), m(1, 0)]))
    kept, apart = _Validator._shared_slots(v, [[0, 1], [2, 3]])
    assert kept == [[2, 3]] and apart == [0, 1]


def test_dtype_probing_records_refusals(tmp_path, pool, adapters):
    g = group("x:bitwise_and/generic",
              [member("numpy", "numpy.bitwise_and", "numpy:bitwise_and", [(0, "x", 0, None, True), (1, "y", 1, None, True)]),
               member("crashy", f"{C}.int_only_and", f"{C}:int_only_and", [(0, "x", 0, None, True), (1, "y", 1, None, True)])],
              [(0, "x1", "tensor"), (1, "x2", "tensor")])
    store, _ = _build(tmp_path, pool, adapters, [g])
    reg = _by_key(store)["x:bitwise_and/generic"]
    assert reg.state == "validated" and reg.variant == "base"   # integer inputs from the data file
    info = reg.member_info[0]
    assert {"int32", "int64", "bool"} <= set(info.accepted)
    assert "float32" not in info.accepted and info.dtypes["float64"].startswith("raised:")
    assert set(reg.common_dtypes()) == set(info.accepted)


def test_interrupted_build_resumes(tmp_path, pool, adapters):
    cands = [unary(f"x:abs{i}/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                          ("crashy", "numpy.absolute", "numpy:absolute")]) for i in range(4)]
    seen = []

    def stop_after_two(result):
        seen.append(result.candidate)
        if len(seen) == 2:
            raise KeyboardInterrupt

    store = Store(tmp_path / "xamt.db")
    with pytest.raises(KeyboardInterrupt):
        build_registry(store, candidates=cands, pool=pool, registry=_registry(adapters), on_result=stop_after_two)
    again = build_registry(store, candidates=cands, pool=pool, registry=_registry(adapters))
    assert again.resumed == 2 and again.built == 2
    assert len(load_registry(store)) == 4
    fresh = build_registry(store, candidates=cands, pool=pool, registry=_registry(adapters), resume=False)
    assert fresh.built == 4 and fresh.resumed == 0


def test_annotations_are_honoured(tmp_path, pool, adapters):
    ann = tmp_path / "ann.toml"
    ann.write_text(f'''
[[group]]
key = "x:ex/generic"
exclude = true
reason = "not an operation"

[[group]]
key = "x:pin/generic"
pin = true
members = ["numpy.abs", "{C}.off_by_one"]
reason = "documented: off by one on purpose"

[[group]]
key = "x:norm/generic"
normalise = "mean"
tolerance = {{ float32 = [1e-2, 1e-3] }}
note = "compared by the mean"
max_rank = 2
reason = "test"

[[member]]
key = "x:mem/generic"
api = "numpy.absolute"
action = "exclude"
reason = "documented default differs"
''')
    def pair(key, second):
        return unary(key, [("numpy", "numpy.abs", "numpy:abs"), ("crashy", second, second.replace(".", ":", 1)
                                                                   if second.startswith("numpy") else second.rsplit(".", 1)[0] + ":" + second.rsplit(".", 1)[1])])
    cands = [pair("x:ex/generic", "numpy.absolute"), pair("x:pin/generic", f"{C}.off_by_one"),
             pair("x:norm/generic", f"{C}.off_by_one"),
             unary("x:mem/generic", [("numpy", "numpy.abs", "numpy:abs"), ("crashy", "numpy.absolute", "numpy:absolute"),
                                     ("numpy", "numpy.absolute", "numpy:absolute")])]
    store, _ = _build(tmp_path, pool, adapters, cands, data_paths={"annotations": str(ann)})
    groups = _by_key(store)
    assert groups["x:ex/generic"].state == "excluded" and groups["x:ex/generic"].excluded
    assert any("not an operation" in a for a in groups["x:ex/generic"].annotations)
    pinned = groups["x:pin/generic"]
    assert pinned.state == "validated" and pinned.pinned and len(pinned.members) == 2
    norm = groups["x:norm/generic"]
    assert norm.normalisation == "mean" and norm.tolerance == {"float32": [1e-2, 1e-3]}
    assert "compared by the mean" in norm.annotations
    assert norm.max_rank == 2 and groups["x:pin/generic"].max_rank is None  # stored, read back
    mem = groups["x:mem/generic"]
    assert "numpy.absolute" not in {m.qualname for m in mem.members if m.library == "numpy"}
    assert any(i.reason == "annotated" and i.qualname == "numpy.absolute" for _, i in mem.rejected)
    assert load_registry(store, states=("excluded",))[0].key == "x:ex/generic"


def test_cli_list_json(tmp_path, pool, adapters):
    from xamt.cli import main

    _build(tmp_path, pool, adapters, [unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                                              ("crashy", "numpy.absolute", "numpy:absolute")])])
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["groups", "list", "--out", str(tmp_path), "--json"]) == 0
    doc = json.loads(buf.getvalue())
    g = doc["groups"][0]
    assert g["key"] == "x:abs/generic" and g["state"] == "validated"
    assert {"library", "qualname", "plan", "accepted_dtypes"} <= set(g["members"][0])
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["groups", "list", "--out", str(tmp_path), "--members", "--rejected"]) == 0
    assert "numpy.abs(#0=slot0)" in buf.getvalue()


def test_compiled_members_run_on_one_variant(tmp_path, pool, adapters):
    """A compiled member (here a stand-in 'compiler' that just calls the target) runs only on the
    variant its eager twin runs on: square matrices only, so the eager member fails on base first."""
    eager = member("numpy", "numpy.linalg.eigvalsh", "numpy.linalg:eigvalsh", [(0, "x", 0, None, True)])
    comp = member("numpy", "numpy.linalg.eigvalsh", "numpy.linalg:eigvalsh", [(0, "x", 0, None, True)],
                  call="compiled", via=f"{C}:call_through")
    g = group("eager_compiled:numpy.linalg.eigvalsh", [eager, comp], [(0, "x", "tensor")], relation="eager_compiled",
              canonical="somefn")
    store, _ = _build(tmp_path, pool, adapters, [g])
    reg = _by_key(store)[g.key]
    assert reg.state == "validated" and reg.variant == "square"
    tried = reg.evidence["variants_tried"]
    assert tried[0] == "base?" and "square" in tried  # searched on the eager member, then run in full


def test_status_only_samplers_validate_on_acceptance(tmp_path, pool, adapters):
    """A cross-library group that matching made status-only (samplers): values are never
    compared, so a nondeterministic member, a deterministic one and a keyed one that all return
    the common output shape validate together; a member returning another shape does not."""
    import dataclasses

    from xamt.matching.model import ArgSpec

    keyed = member("crashy", f"{C}.keyed_sample", f"{C}:keyed_sample", [(0, "x", 1, "x", True)])
    keyed.plan.args.append(ArgSpec(slot=None, param="key", position=0, keyword="key",
                                   transform="prng_key", value=7, required=True))
    g = group("x:sample/random", [
        member("crashy", f"{C}.noisy", f"{C}:noisy", [(0, "x", 0, None, True)]),
        keyed,
        member("numpy", "numpy.abs", "numpy:abs", [(0, "x", 0, None, True)]),
        member("numpy", "numpy.ravel", "numpy:ravel", [(0, "x", 0, None, True)]),
    ], [(0, "x", "tensor")], category="random", equivalence="status")
    keyed_adapters = dict(adapters, crashy=dataclasses.replace(adapters["crashy"],
                                                               prng_key_ref=f"{C}:make_key"))
    store, result = _build(tmp_path, pool, keyed_adapters, [g])
    reg = _by_key(store)[g.key]
    assert reg.state == "validated" and reg.equivalence == "status"
    assert {m.qualname for m in reg.members} == {f"{C}.noisy", f"{C}.keyed_sample", "numpy.abs"}
    reasons = {i.qualname: (i.reason, i.detail) for _, i in reg.rejected}
    assert reasons["numpy.ravel"][0] == "differs" and "output shape (12,)" in reasons["numpy.ravel"][1]
    assert result.stats["cross_library_groups_status"] == 1

    # without the key hook the keyed member cannot be called: it is rejected, the rest validate
    store2, _ = _build(tmp_path / "nokey", pool, adapters, [g])
    reg2 = _by_key(store2)[g.key]
    assert f"{C}.keyed_sample" not in {m.qualname for m in reg2.members}
    assert reg2.state == "validated"


def test_candidates_matching_no_longer_proposes_are_forgotten(tmp_path, pool, adapters):
    """A rebuild from the store's candidates drops the registered groups of candidates that
    are gone (a relation kind replaced, a data change): the fuzzer must not run them."""
    from xamt.matching.engine import MatchResult, save_groups

    a = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                ("crashy", "numpy.absolute", "numpy:absolute")])
    b = unary("x:neg/generic", [("numpy", "numpy.negative", "numpy:negative"),
                                ("crashy", "numpy.negative", "numpy:negative")])
    store = Store(tmp_path / "xamt.db")
    save_groups(store, MatchResult([a, b]))
    build_registry(store, pool=pool, registry=_registry(adapters))
    assert {"x:abs/generic", "x:neg/generic"} <= set(_by_key(store))
    save_groups(store, MatchResult([a]))
    result = build_registry(store, pool=pool, registry=_registry(adapters))
    keys = set(_by_key(store))
    assert "x:abs/generic" in keys and "x:neg/generic" not in keys
    assert result.resumed == 1 and result.built == 0


def test_a_cross_library_group_keeps_to_the_ranks_where_its_members_share_a_convention(tmp_path, pool, adapters):
    """numpy.outer flattens a matrix where numpy.linalg.outer (like torch.outer) refuses it: the
    group agrees on vectors, so its domain stops at rank 1 and fuzzing keeps its arrays there.
    Members that agree one rank up leave the group unbounded."""
    binary = [(0, "x", 0, None, True), (1, "y", 1, None, True)]
    outer = group("x:outer/generic",
                  [member("numpy", "numpy.outer", "numpy:outer", binary),
                   member("crashy", "numpy.linalg.outer", "numpy.linalg:outer", binary)],
                  [(0, "a", "tensor"), (1, "b", "tensor")], canonical="outer", category="linalg")
    add = group("x:add/generic",
                [member("numpy", "numpy.add", "numpy:add", binary),
                 member("crashy", "numpy.add", "numpy:add", binary)],
                [(0, "x1", "tensor"), (1, "x2", "tensor")], canonical="add")
    store, _ = _build(tmp_path, pool, adapters, [outer, add])
    groups = _by_key(store)
    g = groups["x:outer/generic"]
    if g.state != "validated":
        pytest.skip(f"the outer seeds did not validate here: {[(m.qualname, i.detail) for m, i in g.rejected]}")
    assert g.evidence["domain"]["inside"] is False and g.max_rank == g.evidence["domain"]["seed_rank"] == 1
    assert "numpy.linalg.outer" in g.evidence["domain"]["why"]
    a = groups["x:add/generic"]
    assert a.evidence["domain"]["inside"] is True and a.max_rank is None



def test_an_axis_argument_none_that_parts_the_members_is_left_out_of_fuzzing(tmp_path, pool, adapters):
    """numpy.sum(axis=None) sums everything; a member whose None is the first axis (tf.gather's
    None against numpy.take's) agrees on the seed's axis but not at None: the group records it
    (axis_none False) and mutation never gives its axis None. Members that agree at None, or
    refuse it while the others agree, leave the group as it was."""
    import numpy as np

    from xamt.inputs.mutate import mutate

    args = [(0, "x", 0, None, True), (1, "axis", None, "axis", False)]
    slots = [(0, "x", "tensor"), (1, "axis", "axis")]
    parted = group("x:sum/reduction", [member("numpy", "numpy.sum", "numpy:sum", args),
                                       member("crashy", "tests.groups.crashers.sum_none_is_first_axis",
                                              "tests.groups.crashers:sum_none_is_first_axis", args)],
                   slots, canonical="sum", category="reduction")
    same = group("x:nansum/reduction", [member("numpy", "numpy.nansum", "numpy:nansum", args),
                                        member("crashy", "numpy.sum", "numpy:sum", args)],
                 slots, canonical="nansum", category="reduction")
    refusing = group("x:add_reduce/reduction", [
        member("numpy", "numpy.add.reduce", "numpy:add.reduce", args),
        member("numpy", "numpy.sum", "numpy:sum", args),
        member("crashy", "tests.groups.crashers.sum_refuses_none", "tests.groups.crashers:sum_refuses_none", args)],
        slots, canonical="add_reduce", category="reduction")
    store, _ = _build(tmp_path, pool, adapters, [parted, same, refusing])
    groups = _by_key(store)
    g, s = groups["x:sum/reduction"], groups["x:nansum/reduction"]
    # a member that refuses None leaves it in: the others still compare at None
    r = groups["x:add_reduce/reduction"]
    assert r.axis_none is None and r.evidence["axis_none"]["inside"] is True
    assert "sum_refuses_none refuse" in r.evidence["axis_none"]["why"]
    seed = g.seed_inputs()[0]
    if g.state != "validated" or seed[1].value is None:
        pytest.skip(f"the seed gives no axis here: {g.state}, {seed}")
    assert g.axis_none is False and g.evidence["axis_none"] == {"inside": False, "why": "output shapes differ"}
    assert s.axis_none is None and s.evidence["axis_none"]["inside"] is True
    rng = np.random.default_rng(3)
    axes = {repr(mutate(g, seed, rng)[0][1].value) for _ in range(400)}
    assert "None" not in axes and len(axes) > 2, axes
    rng = np.random.default_rng(3)
    assert "None" in {repr(mutate(s, seed, rng)[0][1].value) for _ in range(400)}


def test_a_build_out_of_budget_stores_what_it_validated_and_the_next_resumes(tmp_path, pool, adapters):
    cands = [unary(f"x:abs{i}/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                          ("crashy", "numpy.absolute", "numpy:absolute")]) for i in range(3)]
    store = Store(tmp_path / "xamt.db")
    spent = build_registry(store, candidates=cands, pool=pool, registry=_registry(adapters), budget_s=1e-9)
    assert (spent.built, spent.left, spent.stats["build"]["left"]) == (0, 3, 3)
    assert load_registry(store) == []
    rest = build_registry(store, candidates=cands, pool=pool, registry=_registry(adapters), budget_s=3600)
    assert (rest.built, rest.left, rest.resumed) == (3, 0, 0) and len(load_registry(store)) == 3


def test_a_build_leaves_what_is_still_in_flight_after_the_budgets_grace(tmp_path, pool, adapters):
    """A candidate still running a tenth of the budget after it ends is left for the next build
    (PyTensor's probes, a minute each, kept a 20-minute build running for 10 more); without the
    grace this build would wait for the sandbox's 10 s timeout."""
    slow = unary("x:slow/generic", [("numpy", "numpy.abs", "numpy:abs"), ("crashy", f"{C}.slow_abs", f"{C}:slow_abs")])
    store = Store(tmp_path / "xamt.db")
    res = build_registry(store, candidates=[slow], pool=pool, registry=_registry(adapters), budget_s=1.5)
    # left: in flight when the grace ran out, or (on a slow machine) never started
    assert (res.built, res.left) == (0, 1)
    assert res.stats["build"]["seconds"] < 9.0, res.stats["build"]
    assert load_registry(store) == []


def test_candidates_are_validated_cross_library_first_and_inferred_pairs_last_best_first():
    from types import SimpleNamespace as NS

    from xamt.groups.build import select_candidates

    def cand(key, relation, libs, confidence=0.0, call="function"):
        return NS(key=key, relation=relation, confidence=confidence,
                  members=[NS(library=lib, call=call) for lib in libs])
    cands = [cand("i:low", "inferred", ["numpy", "numpy"], 0.55), cand("i:high", "inferred", ["numpy", "numpy"], 0.9),
             cand("c:jit", "eager_compiled", ["jax", "jax"], call="compiled"),
             cand("a:alias", "alias", ["numpy", "numpy"]), cand("x:sum", "cross_library", ["numpy", "jax"])]
    order = [g.key for g in select_candidates(cands, ["numpy", "jax"])]
    assert order == ["x:sum", "a:alias", "c:jit", "i:high", "i:low"]


def test_a_slow_one_worker_runtime_does_not_hold_up_the_main_pools_candidates(tmp_path, adapters):
    """Candidates whose members run in a one-worker runtime of their own get only its share of
    the window (xamt.exec.window): the main pool's candidates queued behind them run beside
    them. With one window for all, the slow ones queued first held every slot (late in an
    eighteen-library build, PyTensor's held all 96 while the main pool sat idle)."""
    import dataclasses

    from xamt.datafiles import read_toml
    from xamt.exec.pools import open_pool, pool_settings
    from xamt.libraries.base import Runtime
    from tests.groups.helpers import fake_adapter

    slow_lib = dataclasses.replace(fake_adapter("slowlib"), runtime=Runtime("slowrt"))
    libs = {"numpy": adapters["numpy"], "crashy": adapters["crashy"], "slowlib": slow_lib}
    settings = tmp_path / "validation.toml"
    text = read_toml("validation.toml")[2]
    assert "\nwindow = 96\n" in text
    settings.write_text(text.replace("\nwindow = 96\n", "\nwindow = 2\n"), encoding="utf-8")
    slow = [unary(f"x:a-slow{k}/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                           ("slowlib", f"slowlib.nap{k}", f"{C}:nap_abs")]) for k in range(2)]
    fast = [unary(f"x:b-fast{k}/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                           ("crashy", "numpy.absolute", "numpy:absolute")]) for k in range(2)]
    done = []
    conf = pool_settings(a for n, a in libs.items() if n != "crashy")
    assert list(conf["runtimes"]) == ["slowrt"]
    with open_pool(workers=2, timeout=10, confirm=False, max_tasks_per_worker=None, **conf) as pool:
        res = build_registry(Store(tmp_path / "xamt.db"), candidates=slow + fast, pool=pool,
                             registry=Registry(list(libs.values())), probe=False,
                             data_paths={"settings": str(settings)},
                             on_result=lambda r: done.append(r.candidate))
    assert res.built == 4
    # the order starts the slow ones first; the fast ones still finish first
    assert sorted(done[:2]) == ["x:b-fast0/generic", "x:b-fast1/generic"], done


def test_a_build_keeps_jaxs_compiled_programs_in_the_output_folders_cache(tmp_path, monkeypatch):
    """The build's workers write JAX's compiled programs to ``<out>/cache/<key>/jax``, where the
    other workers, later builds and the campaign read them. ``{cache}`` in validation.toml was
    once left unreplaced by the build: each worker then kept a cache of its own in its working
    folder, lost when it exited."""
    pytest.importorskip("jax", reason="jax is not installed")
    from xamt.exec.pools import compile_cache_dir

    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    libs = [a for a in Registry() if a.name in ("numpy", "jax")]
    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"), ("jax", "jax.numpy.abs", "jax.numpy:abs")])
    res = build_registry(Store(tmp_path / "xamt.db"), candidates=[g], registry=Registry(libs), probe=False,
                         workers=1)
    assert res.built == 1
    jax_cache = Path(compile_cache_dir(str(tmp_path.resolve()), libs)) / "jax"
    assert jax_cache.is_dir() and any(jax_cache.iterdir()), sorted(p.name for p in tmp_path.rglob("*"))


def test_the_builds_workers_get_the_build_environment_over_the_shared_one(tmp_path, monkeypatch):
    """validation.toml's ``[build_environment]`` (PyTensor on its Python linker) reaches the
    build's workers on top of ``[environment]``; a campaign's pool settings never hold it."""
    from xamt.exec.pools import pool_settings
    from xamt.groups.annotations import load_settings

    class Opened(Exception):
        pass

    seen = {}

    def open_pool(**kwargs):
        seen.update(kwargs)
        raise Opened

    monkeypatch.delenv("XAMT_PYTENSOR_LINKER", raising=False)
    monkeypatch.delenv("XAMT_TORCH_COMPILE_BACKEND", raising=False)
    monkeypatch.setattr("xamt.groups.build.open_pool", open_pool)
    libs = [a for a in Registry() if a.name in ("numpy", "jax")]
    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"), ("jax", "jax.numpy.abs", "jax.numpy:abs")])
    with pytest.raises(Opened):
        build_registry(Store(tmp_path / "xamt.db"), candidates=[g], registry=Registry(libs), probe=False, workers=1)
    settings = load_settings()
    assert settings.build_environment and all(seen["env"][k] == v for k, v in settings.build_environment.items())
    assert "JAX_COMPILATION_CACHE_DIR" in seen["env"]
    campaign = pool_settings(libs, out_dir=str(tmp_path))
    assert not set(settings.build_environment) & set(campaign["env"])


def test_a_build_environment_that_is_not_strings_is_refused(tmp_path):
    from xamt.errors import DataFileError
    from xamt.groups.annotations import load_settings

    path = tmp_path / "validation.toml"
    path.write_text('[tolerance]\nfloat32 = [1e-4, 1e-5]\n[build_environment]\nXAMT_PYTENSOR_LINKER = 1\n')
    with pytest.raises(DataFileError, match=r"\[build_environment\] values must be strings"):
        load_settings(path)
    path.write_text('[tolerance]\nfloat32 = [1e-4, 1e-5]\n[build_environment]\nXAMT_PYTENSOR_LINKER = "py"\n')
    assert load_settings(path).build_environment == {"XAMT_PYTENSOR_LINKER": "py"}

