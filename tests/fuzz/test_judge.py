"""Which members a campaign compares on one input, how status divergences are bucketed, and
where the workers' seconds went."""
from types import SimpleNamespace

import numpy as np

from xamt.fuzz.campaign import comparable_members, lacked_dtype, status_suspects
from xamt.matching.model import ArgSpec, ArgumentPlan, GroupSlot, Member
from xamt.oracle import Signal, SignalKind, error_key


def member(lib, qual, call="function", slots=(0,)):
    plan = ArgumentPlan(args=[ArgSpec(slot=s, param=f"p{s}", position=i) for i, s in enumerate(slots)])
    return Member(library=lib, qualname=qual, target=qual.replace(".", ":", 1), kind="function",
                  call=call, plan=plan)


def run_of(members, values, results=None, shared=(0,)):
    slots = [GroupSlot(index=i, name=f"p{i}", role="tensor", shared=i in shared) for i in range(3)]
    group = SimpleNamespace(members=members, slots=slots)
    return SimpleNamespace(group=group, members=list(range(len(members))), values=values,
                           results=results or [])


def test_an_optional_argument_only_some_members_take_leaves_the_others_out():
    ms = [member("numpy", "numpy.trace", slots=(0, 1)), member("jax", "jax.numpy.trace", slots=(0, 1)),
          member("torch", "torch.trace", slots=(0,))]
    x = np.ones((2, 2), np.float32)
    assert comparable_members(run_of(ms, {0: x, 1: np.dtype("uint8")})) == {0, 1}
    # not given (None or absent): every member computes the same thing
    assert comparable_members(run_of(ms, {0: x, 1: None})) == {0, 1, 2}
    assert comparable_members(run_of(ms, {0: x})) == {0, 1, 2}
    # a shared slot given to all members changes nothing
    assert comparable_members(run_of(ms, {0: x, 1: np.dtype("uint8")}, shared=(0, 1))) == {0, 1, 2}


def raised(t, msg):
    return SimpleNamespace(status="raised", ok=False, error_type=t, error_message=msg)


def test_one_status_suspect_per_library_and_rule_named_by_the_plainest_call():
    ms = [member("scipy", "scipy.linalg.expm"), member("torch", "torch.Tensor.matrix_exp", call="method"),
          member("torch", "torch.linalg.matrix_exp"), member("torch", "torch.matrix_exp"),
          member("tensorflow", "tensorflow.linalg.expm")]
    ok = SimpleNamespace(status="ok", ok=True, error_type=None, error_message=None)
    msg = "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got {}"
    results = [ok, raised("RuntimeError", msg.format("Int")), raised("RuntimeError", msg.format("Long")),
               raised("RuntimeError", msg.format("Int")), raised("InvalidArgumentError", "bad dtype int32")]
    run = run_of(ms, {0: np.ones((2, 2), np.int32)}, results)
    signals = [Signal(SignalKind.STATUS, i, "raised") for i in (1, 2, 3, 4)]
    got = status_suspects(run, signals, ["function", "method", "module", "out", "compiled"])
    by_member = {ms[pos].qualname: key for pos, _, key in got}
    # torch's three refusals are one rule (the dtype name is blanked) named by its first function
    assert set(by_member) == {"torch.linalg.matrix_exp", "tensorflow.linalg.expm"}
    assert by_member["torch.linalg.matrix_exp"] == error_key("RuntimeError", msg.format("Double"))


def test_error_key_blanks_what_varies_with_the_input():
    a = error_key("tensorflow.errors.InvalidArgumentError", "Value for attr 'T' of int32 is not allowed: 3\n NodeDef")
    b = error_key("InvalidArgumentError", "Value for attr 'T' of bool is not allowed: 17")
    assert a == b == "InvalidArgumentError: Value for attr '…' of <dtype> is not allowed: #"
    assert error_key("TypeError", "x") != error_key("ValueError", "x")


def test_triage_serves_the_least_served_group_first():
    # the queue moved with triage onto its own thread (xamt/triage/runner.py); same policy
    from xamt.triage.runner import TriageRunner

    cands = [SimpleNamespace(group=SimpleNamespace(key=k)) for k in ("a", "a", "b", "c", "a")]
    fz = SimpleNamespace(_pending=cands, _served={"a": 3, "b": 1})
    assert TriageRunner._next(fz) == 3            # c: never served
    fz._served["c"] = 1
    assert TriageRunner._next(fz) == 2            # b and c tie: the older one
    fz._served = {}
    assert TriageRunner._next(fz) == 0            # nothing served yet: first in, first out


def test_the_one_library_that_returns_where_several_refuse_is_the_suspect():
    ok = SimpleNamespace(status="ok", ok=True, error_type=None, error_message=None)
    bad = raised("ValueError", "Invalid number of FFT data points (0) specified.")
    ms = [member("numpy", "numpy.fft.hfft"), member("scipy", "scipy.fft.hfft"),
          member("jax", "jax.numpy.fft.hfft"), member("torch", "torch.fft.hfft")]
    run = run_of(ms, {0: np.ones(3, np.float32)}, [bad, ok, bad, bad])
    run.group.relation = "cross_library"
    signals = [Signal(SignalKind.STATUS, i, "raised") for i in (0, 2, 3)]
    got = status_suspects(run, signals, ["function"], {0, 1, 2, 3})
    assert [(ms[pos].qualname, key.startswith("returns where others raise")) for pos, _, key in got] == \
        [("scipy.fft.hfft", True)]
    # numpy returning where jax (which says it implements numpy's) and torch refuse: numpy
    # still accepts what three others reject, and those that refuse are never blamed for it
    # (numpy.tri(N=-1) was blamed on the three that refuse)
    ms[2].implements = ["numpy.fft.hfft"]
    run = run_of(ms, {0: np.ones(3, np.float32)}, [ok, bad, bad, bad])
    run.group.relation = "cross_library"
    signals = [Signal(SignalKind.STATUS, i, "raised") for i in (1, 2, 3)]
    got = status_suspects(run, signals, ["function"], {0, 1, 2, 3})
    assert [(ms[pos].library, key.startswith("returns where others raise")) for pos, _, key in got] == \
        [("numpy", True)]
    # an intra-library group keeps naming the members that refuse
    run.group.relation = "alias"
    assert {ms[pos].library for pos, _, _ in status_suspects(run, signals, ["function"])} == \
        {"scipy", "jax", "torch"}


def test_error_key_blanks_printed_arrays():
    a = error_key("ValueError", "condition a ([[1.  nan -inf]]) > (d-1)/2 is not satisfied")
    b = error_key("ValueError", "condition a ([2.5 3.]) > (d-1)/2 is not satisfied")
    assert a == b and "nan" not in a


def test_error_key_blanks_bare_dtype_words():
    a = error_key("InvalidArgumentError", "expected to be a bool tensor but is a float tensor")
    b = error_key("InvalidArgumentError", "expected to be a bool tensor but is a bfloat16 tensor")
    assert a == b


def test_worker_and_compile_seconds_are_kept_by_where_they_went():
    import collections

    from xamt.fuzz.campaign import _Fuzzer
    from xamt.fuzz.schedule import FAST, SLOW, Proposal

    class In:
        def __init__(self, sig):
            self.sig = sig

        def compile_signature(self):
            return self.sig

    me = SimpleNamespace(worker_time=collections.Counter(), worker_iterations=collections.Counter(),
                         compile_by_role=collections.Counter(), worker_time_by_group=collections.Counter(),
                         schedule=SimpleNamespace(warm={"g": {"s1"}}))
    res = lambda status, c: SimpleNamespace(status=status, compile_s=c)  # noqa: E731
    _Fuzzer._account(me, Proposal("g", In("s1"), FAST, "values:ordinary", 0.1), SimpleNamespace(
        results=[res("ok", 0.0), res("ok", 0.5)]), 1.0, 0)
    _Fuzzer._account(me, Proposal("g", In("s2"), FAST, "structural", 0.1), SimpleNamespace(
        results=[res("ok", 0.25), res("timeout", 0.0)]), 2.0, 1)
    _Fuzzer._account(me, Proposal("g", In("s3"), SLOW, "structural", 0.1), SimpleNamespace(
        results=[res("ok", 3.0), res("ok", None)]), 4.0, 0)
    assert me.worker_time == {"known_signature": 1.0, "new_values": 1.0, "new_signature": 2.0,
                              "structural": 6.0, "with_timeout": 2.0, "with_death": 2.0, "slow_lane": 4.0}
    assert me.compile_by_role == {"known_signature": 0.5, "new_values": 0.5, "new_signature": 0.25,
                                  "structural": 3.25, "with_timeout": 0.25, "with_death": 0.25,
                                  "slow_lane": 3.0}
    assert me.worker_iterations["structural"] == 2 and me.worker_time_by_group["g"] == 7.0


def test_libraries_computing_with_one_implementation_return_as_one():
    """numpy and dask (whose chunks numpy computes) return where torch and jax refuse: that is
    one implementation accepting what two reject, a validation finding named by the plainest
    of them; counted by library, the two that return looked like a split and every refusal was
    blamed."""
    from xamt.libraries.registry import Registry

    reg = Registry()
    adapters = {name: reg.get(name) for name in ("numpy", "dask", "torch", "jax")}
    ok = SimpleNamespace(status="ok", ok=True, error_type=None, error_message=None)
    bad = raised("ValueError", "n must be positive")
    ms = [member("numpy", "numpy.fft.hfft"), member("dask", "dask.array.fft.hfft"),
          member("torch", "torch.fft.hfft"), member("jax", "jax.numpy.fft.hfft")]
    run = run_of(ms, {0: np.ones(3, np.float32)}, [ok, ok, bad, bad])
    run.group.relation = "cross_library"
    signals = [Signal(SignalKind.STATUS, i, "raised") for i in (2, 3)]
    got = status_suspects(run, signals, ["function"], {0, 1, 2, 3}, adapters)
    assert [(ms[pos].qualname, key.startswith("returns where others raise")) for pos, _, key in got] == \
        [("numpy.fft.hfft", True)]
    # without the adapters (each library its own implementation) the refusals are blamed
    assert {ms[pos].library for pos, _, _ in status_suspects(run, signals, ["function"], {0, 1, 2, 3})} == \
        {"torch", "jax"}


def test_a_dtype_the_library_lacks_is_named():
    """mxnet has no uint64: its refusal of a uint64 dtype argument or array is no divergence."""
    mxnet = SimpleNamespace(dtypes={n: n for n in ("int32", "int64", "uint8", "float32", "float64")})
    assert lacked_dtype({0: [1], 1: np.dtype("uint64")}, mxnet) == "uint64"
    assert lacked_dtype({0: np.zeros(2, np.uint16)}, mxnet) == "uint16"
    assert lacked_dtype({0: np.zeros(2, np.float32), 1: np.dtype("int64"), 2: 3}, mxnet) is None
    assert lacked_dtype({0: np.dtype("uint64")}, SimpleNamespace(dtypes={})) is None  # none declared
    assert lacked_dtype(None, mxnet) is None
