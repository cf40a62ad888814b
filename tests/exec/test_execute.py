import numpy as np
import pytest

from tests.groups.helpers import group, member, unary
from xamt.exec.group import ExecItem, GroupExecutor, member_spec
from xamt.exec.member import run_members
from xamt.inputs import GroupInput, SlotValue, materialise, seed_inputs
from xamt.inputs.arrays import ArrayRecipe


def test_run_members_in_process(adapters):
    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                ("crashy", "tests.groups.crashers.noisy", "tests.groups.crashers:noisy"),
                                ("numpy", "numpy.linalg.inv", "numpy.linalg:inv")])
    values = materialise(seed_inputs(g)[0])
    specs = [member_spec(m, adapters) for m in g.members]
    out = run_members(specs, values, {"repeat": 2})
    assert out[0][0] == "ok" and np.array_equal(out[0][1], np.abs(values[0])) and out[0][2] is False
    assert out[1][0] == "ok" and out[1][2] is True           # two calls differ: nondeterministic
    assert out[2][0] == "raised" and "LinAlgError" in out[2][1]
    # numpy raises it in a helper inv calls, not in inv's own body
    assert out[2][5].endswith(":raise") and not out[2][5].startswith("inv:")
    # parsed members are cached per process by id
    again = run_members(specs[:1], values, {"normalise": "mean"})
    assert again[0][1].shape == ()


def test_fixed_sequence_arrives_as_a_tuple(adapters):
    """An override's fixed axis = [-2, -1] travels as a JSON list; numpy.linalg.norm takes its
    axes only as a tuple (a list raises TypeError)."""
    from xamt.matching.model import ArgSpec

    m = member("numpy", "numpy.linalg.norm", "numpy.linalg:norm", [(0, "x", 0, None, True)])
    m.plan.args += [ArgSpec(slot=None, param="ord", keyword="ord", value="nuc"),
                    ArgSpec(slot=None, param="axis", keyword="axis", value=[-2, -1],
                            transform="tuple")]
    x = np.arange(18.0).reshape(2, 3, 3)
    out = run_members([member_spec(m, adapters)], {0: x}, {})
    assert out[0][0] == "ok", out[0]
    assert np.allclose(out[0][1], np.linalg.norm(x, "nuc", axis=(-2, -1)))


def test_bind_errors_are_skips_not_library_errors(adapters):
    m = member("numpy", "numpy.add", "numpy:add", [(0, "x", 0, None, True), (1, "y", 1, None, False)])
    # slot 0 missing but slot 1 given: a positional gap the plan cannot fill
    out = run_members([member_spec(m, adapters)], {1: np.ones(2)}, {})
    assert out[0][0] == "skipped"


def test_executor_batches_isolates_crashes_and_memoises(pool, adapters):
    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                ("crashy", "tests.groups.crashers.segfault", "tests.groups.crashers:segfault"),
                                ("numpy", "numpy.absolute", "numpy:absolute")])
    ex = GroupExecutor(pool, adapters, timeout=10, memo=True)
    inp = seed_inputs(g)[0]
    runs = ex.run([ExecItem(g, inp), ExecItem(g, inp, members=[0, 2])])
    first = runs[0].results
    assert [r.status for r in first] == ["ok", "crashed", "ok"]
    assert first[1].outcome is not None and first[1].outcome.signal_name == "SIGSEGV"
    assert ex.stats["solo_tasks"] == 3 and runs[1].members == [0, 2]
    assert len(runs[0].outputs()) == 2
    again = ex.run([ExecItem(g, inp)])
    assert [r.status for r in again[0].results] == ["ok", "crashed", "ok"]
    assert ex.stats["memo_hits"] == 3


def test_a_death_the_task_marked_is_not_run_again_unless_deaths_are_confirmed(pool, adapters):
    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                ("crashy", "tests.groups.crashers.segfault", "tests.groups.crashers:segfault"),
                                ("numpy", "numpy.absolute", "numpy:absolute")])
    inp = seed_inputs(g)[0]
    fuzzing = GroupExecutor(pool, adapters, timeout=10, confirm_deaths=False)
    deaths = pool.stats["deaths"]
    run = fuzzing.run([ExecItem(g, inp)])[0]
    assert [r.status for r in run.results] == ["ok", "crashed", "ok"]
    assert run.results[1].outcome.signal_name == "SIGSEGV" and run.results[1].outcome.mark == 1
    # only the two members that did not die run again, and the worker died once, not twice
    assert fuzzing.stats["solo_tasks"] == 2 and pool.stats["deaths"] == deaths + 1
    # the worker seconds of the dead group task count with the runs after it
    assert run.task_s >= sum(r.duration_s for r in run.results) > 0


def test_a_call_over_the_items_limit_ends_as_a_timeout(pool, adapters):
    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                ("crashy", "tests.groups.crashers.slow_abs", "tests.groups.crashers:slow_abs")])
    ex = GroupExecutor(pool, adapters, timeout=30, confirm_deaths=False)
    run = ex.run([ExecItem(g, seed_inputs(g)[0], limit=0.5)])[0]
    assert [r.status for r in run.results] == ["ok", "timeout"]
    assert run.task_s < 5  # 0.5 s and a second for the other member, not the 30 s allowance


def test_incomplete_plans_and_missing_slots_are_skipped(pool, adapters):
    ok = member("numpy", "numpy.abs", "numpy:abs", [(0, "x", 0, None, True)])
    incomplete = member("numpy", "numpy.f", "numpy:abs", [(0, "x", 0, None, True)], unmatched=["weights"])
    needs = member("numpy", "numpy.add", "numpy:add", [(0, "x", 0, None, True), (1, "y", 1, None, True)])
    g = group("x:g/generic", [ok, incomplete, needs], [(0, "x", "tensor"), (1, "y", "tensor")])
    inp = GroupInput({0: SlotValue.array(ArrayRecipe(seed=1))})
    res = GroupExecutor(pool, adapters).run([(g, inp)])[0].results
    assert [r.status for r in res] == ["ok", "skipped", "skipped"]
    assert "incomplete" in res[1].error_message and "lacks slot" in res[2].error_message


def test_cross_library_torch_and_dtype_probe(pool, adapters):
    pytest.importorskip("torch")
    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"), ("torch", "torch.abs", "torch:abs")])
    ex = GroupExecutor(pool, adapters)
    run = ex.run([(g, seed_inputs(g)[0])])[0]
    a, b = run.outputs()
    assert isinstance(b, np.ndarray) and np.array_equal(a, b)
    values = materialise(seed_inputs(g)[0])
    probed = ex.probe([(g, 0, values, [0]), (g, 1, values, [0])], ["float64", "bfloat16", "bool"])
    assert probed[0]["float64"][0] == "ok" and probed[1]["bfloat16"][0] == "ok"
    assert probed[1]["bool"][0] == "raised"  # torch.abs refuses bool tensors


def test_a_probe_that_hangs_in_one_dtype_costs_that_dtypes_limit(pool, adapters):
    """The probe task is killed a limit into the dtype that hangs, not after the task's limit
    (the limit times the dtypes); that dtype is a timeout without a second run, and the others
    are re-run one by one."""
    import time

    g = unary("x:abs/generic", [("crashy", "tests.groups.crashers.hangs_on_int64",
                                 "tests.groups.crashers:hangs_on_int64")])
    ex = GroupExecutor(pool, adapters)
    values = materialise(seed_inputs(g)[0])
    dtypes = ["float64", "int32", "int64", "bool", "float32", "uint8"]
    start = time.monotonic()
    (probed,) = ex.probe([(g, 0, values, [0])], dtypes, limits=[1.0])
    took = time.monotonic() - start
    assert probed["int64"][0] == "timeout", probed
    assert all(probed[d][0] == "ok" for d in dtypes if d != "int64"), probed
    assert took < 4.0, took  # the task's own limit is 6 s, and a second run of int64 1 s more


def test_throughput_smoke(pool, adapters):
    """Many cheap group-iterations in one batch (the fuzzer's use); the figure is in bench/."""
    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"), ("numpy", "numpy.absolute", "numpy:absolute")])
    ex = GroupExecutor(pool, adapters)
    inputs = [GroupInput({0: SlotValue.array(ArrayRecipe(seed=i))}) for i in range(200)]
    runs = ex.run([(g, inp) for inp in inputs])
    assert all(len(r.outputs()) == 2 for r in runs) and ex.stats["group_tasks"] == 200


def test_abstract_probe_traces_without_running(pool, adapters):
    pytest.importorskip("jax")
    from xamt.libraries.registry import Registry

    libs = dict(adapters, jax=Registry().get("jax"))
    g = unary("x:abs/generic", [("jax", "jax.numpy.abs", "jax.numpy:abs"),
                                ("jax", "jax.lax.population_count", "jax.lax:population_count")])
    values = materialise(seed_inputs(g)[0])
    ex = GroupExecutor(pool, libs)
    res = ex.probe([(g, 0, values, [0]), (g, 1, values, [0])], ["int32", "float64", "bool"],
                   {"jax": "jax:eval_shape"})
    assert res[0]["int32"][0] == "ok"
    assert res[1]["int32"][0] == "ok" and res[1]["float64"][0] == "raised"  # popcount wants integers


def test_jax_probes_run_a_call_its_trace_refuses(pool, adapters):
    """JAX's probe evaluator (validation.toml) traces, and runs the call where the trace
    raises: ``jnp.nonzero``'s output shape depends on its values, which a trace has not, yet
    every dtype runs; ``population_count`` still refuses floats."""
    pytest.importorskip("jax")
    from xamt.groups.annotations import load_settings
    from xamt.libraries.registry import Registry

    abstract = load_settings().probe_abstract
    assert abstract["jax"] == "xamt.libraries.jax:probe_call"
    libs = dict(adapters, jax=Registry().get("jax"))
    g = unary("x:nonzero/generic", [("jax", "jax.numpy.nonzero", "jax.numpy:nonzero"),
                                    ("jax", "jax.lax.population_count", "jax.lax:population_count")])
    values = materialise(seed_inputs(g)[0])
    ex = GroupExecutor(pool, libs)
    jobs = [(g, 0, values, [0]), (g, 1, values, [0])]
    traced = ex.probe(jobs, ["int32", "bool"], {"jax": "jax:eval_shape"})
    assert traced[0]["int32"] == ("raised", "jax.errors.ConcretizationTypeError")
    nonzero, popcount = ex.probe(jobs, ["int32", "bool", "float64"], abstract)
    assert {d: s for d, (s, _) in nonzero.items()} == {"int32": "ok", "bool": "ok", "float64": "ok"}
    assert popcount["int32"][0] == "ok" and popcount["float64"][0] == "raised"


def test_a_lazy_librarys_dtype_probe_computes_its_result(pool, adapters):
    """A lazy library computes in its adapter's ``finish`` hook, as a member's run does: what
    the hook raises is the probed dtype's refusal (it was taken for an output that does not
    convert, and the dtype counted as accepted)."""
    import dataclasses

    from tests.groups.helpers import fake_adapter

    lazy = dataclasses.replace(fake_adapter("lazy"), finish_ref="tests.badtasks:refuse_complex")
    g = unary("x:abs/generic", [("lazy", "numpy.negative", "numpy:negative")])
    values = materialise(seed_inputs(g)[0])
    (res,) = GroupExecutor(pool, dict(adapters, lazy=lazy)).probe([(g, 0, values, [0])],
                                                                  ["float32", "complex64"])
    assert res["float32"][0] == "ok" and res["complex64"] == ("raised", "TypeError"), res


def test_an_item_run_wide_computes_a_jax_members_float64_input_in_float64(pool, adapters):
    """JAX truncates float64 inputs to float32 unless float64 is enabled: an item run wide gets
    the float64 result (triage's float64 experiments on the outlier), the plain one float32,
    and the worker is left as it was."""
    pytest.importorskip("jax")
    from xamt.libraries.registry import Registry

    libs = dict(adapters, jax=Registry().get("jax"))
    g = unary("x:exp/generic", [("jax", "jax.numpy.exp", "jax.numpy:exp"),
                                ("numpy", "numpy.exp", "numpy:exp")])
    values = {0: np.array([0.1, 1.0], np.float64)}
    ex = GroupExecutor(pool, libs, timeout=60, memo=True)
    plain, wide, again = ex.run([ExecItem(g, values), ExecItem(g, values, wide=True), ExecItem(g, values)])
    assert plain.results[0].value.dtype == np.float32
    assert wide.results[0].value.dtype == np.float64 and wide.results[1].value.dtype == np.float64
    np.testing.assert_allclose(wide.results[0].value, np.exp(values[0]), rtol=1e-14)  # not float32's 1e-8
    assert again.results[0].value.dtype == np.float32


def test_an_items_limit_caps_every_members_allowance_and_its_timeout_raises_it(pool, adapters):
    from types import SimpleNamespace

    ex = GroupExecutor(pool, adapters, timeout=10, compiled_timeout=60)
    eager, compiled = SimpleNamespace(call="function"), SimpleNamespace(call="compiled")
    assert ex._limit(ExecItem(None, None), eager) == 10 and ex._limit(ExecItem(None, None), compiled) == 60
    assert ex._limit(ExecItem(None, None, limit=3.0), compiled) == 3.0
    assert ex._limit(ExecItem(None, None, timeout=30.0, repeat=2), eager) == 60.0


def test_a_sticky_items_tasks_carry_its_groups_affinity_and_others_none(pool, adapters):
    from types import SimpleNamespace

    ex = GroupExecutor(pool, adapters, timeout=10)
    g = SimpleNamespace(key="x:sum/reduction")
    assert ex._task([], {}, {}, 1.0, g, None).affinity == "x:sum/reduction"
    assert ex._task([], {}, {}, 1.0, g, None, sticky=False).affinity is None
    assert ExecItem(g, None).sticky


def _ftz_ok() -> str | None:
    """Why the flush-to-zero mode cannot be set here, or None."""
    from xamt.exec.fpmode import FloatModeUnavailable, flushing_subnormals

    try:
        with flushing_subnormals():
            pass
    except FloatModeUnavailable as exc:
        return str(exc)
    return None


def test_the_flush_to_zero_mode_flushes_inside_and_is_restored_after_even_on_error():
    why = _ftz_ok()
    if why:
        pytest.skip(why)
    from xamt.exec.fpmode import flushing_subnormals

    x = np.array([2.0 ** -126, 3.0], np.float32)
    half = np.float32(0.5)
    with flushing_subnormals():
        assert (x * half)[0] == 0.0  # FTZ: a subnormal result is 0
        assert (np.array([2.0 ** -130], np.float32) + np.float32(0))[0] == 0.0  # DAZ: read as 0
    assert (x * half)[0] == np.float32(2.0 ** -127)
    with pytest.raises(KeyError):
        with flushing_subnormals():
            raise KeyError("inside")
    assert (x * half)[0] == np.float32(2.0 ** -127)


def test_an_item_run_flushing_subnormals_is_a_call_of_its_own(pool, adapters):
    why = _ftz_ok()
    if why:
        pytest.skip(why)
    m = member("numpy", "numpy.multiply", "numpy:multiply", [(0, "x", 0, None, True), (1, "y", 1, None, True)])
    g = group("x:multiply/generic", [m, m], [(0, "x", "tensor"), (1, "y", "tensor")])
    values = {0: np.array([2.0 ** -126, 3.0], np.float32), 1: np.array([0.5, 0.5], np.float32)}
    ex = GroupExecutor(pool, adapters, timeout=10, memo=True)
    plain, flushed, again = ex.run([ExecItem(g, values, members=[0]),
                                    ExecItem(g, values, members=[0], flush_subnormals=True),
                                    ExecItem(g, values, members=[0])])
    assert plain.results[0].value[0] == np.float32(2.0 ** -127)
    assert flushed.results[0].value[0] == 0.0 and flushed.results[0].value[1] == 1.5
    # the memo keeps the two apart, and the worker's mode was restored after the flushed call
    assert again.results[0].value[0] == np.float32(2.0 ** -127)


def test_a_footprint_names_the_api_s_function_and_the_public_functions_its_call_ran(pool, adapters):
    """The wrapper's call runs off_by_one's function; off_by_one's does not run the wrapper's;
    a member that dies gives none (its finding is not compared by footprint)."""
    from xamt.exec.footprint import call_footprint, code_key

    wrapper = member("crashy", "tests.groups.crashers.wrapped_off_by_one", "tests.groups.crashers:wrapped_off_by_one",
                     [(0, "x", 0, None, True)])
    callee = member("crashy", "tests.groups.crashers.off_by_one", "tests.groups.crashers:off_by_one",
                    [(0, "x", 0, None, True)])
    dying = member("crashy", "tests.groups.crashers.segfault", "tests.groups.crashers:segfault",
                   [(0, "x", 0, None, True)])
    ex = GroupExecutor(pool, adapters, timeout=10)
    values = {0: np.ones(3)}
    outer, inner = ex.footprint(wrapper, values), ex.footprint(callee, values)
    assert inner["entry"] == code_key("tests.groups.crashers", "off_by_one")
    assert outer["entry"] == code_key("tests.groups.crashers", "wrapped_off_by_one")
    assert inner["entry"] in outer["calls"] and outer["entry"] not in inner["calls"]
    # our own frames (the worker, the call helpers) are never part of it
    assert code_key("xamt.exec.member", "invoke") not in outer["calls"]
    assert ex.footprint(dying, values) is None
    # a compiled call's footprint is its API's own: the compiler runs the Python once per
    # signature only (the stand-in compiler here leaves no frame of its own)
    compiled = member("crashy", "tests.groups.crashers.wrapped_off_by_one", "tests.groups.crashers:wrapped_off_by_one",
                      [(0, "x", 0, None, True)], call="compiled", via="tests.groups.crashers:call_through")
    assert ex.footprint(compiled, values) == outer
    # in-process, the same answer
    assert call_footprint(member_spec(wrapper, adapters), values) == outer


def test_a_traced_footprint_runs_a_jitted_api_s_python_without_executing_it(pool, adapters):
    """jax.scipy.special.exp1 returns expn(1, x); both are jitted, so only tracing with jit
    disabled runs their bodies each time (a cached trace would show nothing)."""
    pytest.importorskip("jax")
    from xamt.exec.footprint import code_key
    from xamt.libraries.registry import Registry
    from xamt.triage.dedup import load_lineage

    libs = dict(adapters, jax=Registry().get("jax"))
    exp1 = member("jax", "jax.scipy.special.exp1", "jax.scipy.special:exp1", [(0, "x", 0, None, True)])
    ex = GroupExecutor(pool, libs)
    trace = load_lineage().trace["jax"]
    for _ in range(2):
        fp = ex.footprint(exp1, {0: np.float32([1e-38, 2.0])}, trace=trace)
        assert fp["entry"] == code_key("jax._src.scipy.special", "exp1")
        assert code_key("jax._src.scipy.special", "expn") in fp["calls"]


def test_where_a_call_raised_tells_its_own_check_from_what_it_called():
    from xamt.exec.member import raised_at
    from xamt.triage.policy import own_check_of

    def caught(f):
        try:
            f()
        except Exception as exc:
            return raised_at(exc)
        raise AssertionError("did not raise")

    split = caught(lambda: np.split(np.ones(1), 2))  # "array split does not result in an equal division"
    assert split == "split:raise"
    assert own_check_of(member("numpy", "numpy.split", "numpy:split", []), split)
    arange = caught(lambda: np.arange(0.0, np.inf))  # raised inside what the line called
    assert arange.endswith(":call")
    assert not own_check_of(member("numpy", "numpy.split", "numpy:split", []), "array_split:raise")
    assert not own_check_of(member("numpy", "numpy.split", "numpy:split", []), "")


def test_a_probe_resolves_every_dtype_before_its_first_step_starts(adapters, monkeypatch):
    """bfloat16 comes from ml_dtypes, whose import takes about a second in MLX's environment:
    inside a step it counted against the step limit (MLX's flip and squeeze timed out on
    bfloat16 in stop 48's build; their bfloat16 calls take microseconds). An unknown dtype
    still refuses in its own step."""
    import xamt.exec.probe as probe

    from xamt.inputs import arrays

    g = unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs")])
    values, spec = materialise(seed_inputs(g)[0]), member_spec(g.members[0], adapters)
    events = []
    original = arrays.numpy_dtype

    def resolving(name):
        events.append(("resolve", name))
        return original(name)
    monkeypatch.setattr(arrays, "numpy_dtype", resolving)  # probe_dtypes imports it per call
    monkeypatch.setattr(probe, "mark", lambda step: events.append(("mark", step)))
    out = probe.probe_dtypes(spec, values, [0], ["bfloat16", "float32", "nope"])
    assert [e[0] for e in events] == ["resolve"] * 3 + ["mark"] * 3, events
    assert [r[1] for r in out] == ["ok", "ok", "raised"] and "nope" in out[2][3], out
