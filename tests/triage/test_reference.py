"""Which member triage measures the others against when nothing else decides."""
from types import SimpleNamespace as NS

import pytest

from xamt.errors import DataFileError
from xamt.oracle import ErrorKinds
from xamt.triage.pipeline import Triage, load_call_order


def triage(tmp_path, adapters=None):
    return Triage(executor=None, adapters=adapters or {}, kinds=ErrorKinds.load(), out_dir=tmp_path)


def test_inside_one_library_the_plainest_call_is_the_reference(tmp_path):
    # an eager/compiled pair listed compiled-first: the eager call is the reference, so a
    # divergence is blamed on the compiled one (whichever order the registry lists them in)
    group = NS(members=[NS(library="jax", call="compiled"), NS(library="jax", call="function")])
    assert triage(tmp_path)._pivot_order(group, [0, 1]) == [1, 0]
    module_pair = NS(members=[NS(library="torch", call="module"), NS(library="torch", call="function"),
                              NS(library="torch", call="out"), NS(library="torch", call="method")])
    assert triage(tmp_path)._pivot_order(module_pair, [0, 1, 2, 3]) == [1, 3, 0, 2]


def test_the_numpy_like_library_still_comes_first(tmp_path):
    adapters = {"numpy": NS(pivot_rank=0), "jax": NS(pivot_rank=20)}
    group = NS(members=[NS(library="jax", call="function"), NS(library="numpy", call="compiled")])
    assert triage(tmp_path, adapters)._pivot_order(group, [0, 1]) == [1, 0]


def _rejects(load, tmp_path, text, match):
    """``load`` refuses a ``triage.toml`` holding ``text`` with a DataFileError matching ``match``."""
    bad = tmp_path / "triage.toml"
    bad.write_text(text)
    with pytest.raises(DataFileError, match=match):
        load(bad)


def test_call_order_file_is_checked(tmp_path):
    assert load_call_order()[0] == "function"
    _rejects(load_call_order, tmp_path, '[reference]\ncall_order = ["function", "jitted"]\n', "jitted")
    _rejects(load_call_order, tmp_path, '[reference]\ncall_order = "function"\n', "list")


def test_a_declared_original_is_the_reference_before_its_reimplementation(tmp_path):
    # jax ranks before scipy as a pivot, but jax.scipy's documentation says it implements scipy's
    adapters = {"scipy": NS(pivot_rank=10), "jax": NS(pivot_rank=5)}
    group = NS(members=[
        NS(library="jax", call="function", qualname="jax.scipy.stats.cauchy.ppf",
           implements=["scipy.stats.cauchy"]),
        NS(library="scipy", call="function", qualname="scipy.stats.cauchy.ppf", implements=[])])
    assert triage(tmp_path, adapters)._pivot_order(group, [0, 1]) == [1, 0]


def test_a_member_rounding_the_float64_reference_to_its_dtype_is_no_outlier(tmp_path):
    import numpy as np

    # float32 determinants of a matrix whose float64 determinant (1e39) overflows float32: two
    # members honestly give inf, one gives the largest float32 — that one is the outlier
    ref = np.array([1e39, 2.0])
    outputs = {0: np.array([np.inf, 2.0], np.float32), 1: np.array([np.inf, 2.0], np.float32),
               2: np.array([np.finfo(np.float32).max, 2.0], np.float32)}
    group = NS(tolerance=None)
    t = triage(tmp_path)
    assert t._outlier(group, outputs, [0, 1, 2], 0, ref, precise=True) == (2, 0)
    # all of them rounding honestly: nobody is an outlier
    outputs[2] = outputs[0]
    assert t._outlier(group, outputs, [0, 1, 2], 0, ref, precise=True) == (None, 0)
    # a member alone in a narrower dtype than the others is still measured strictly
    outputs[2] = np.array([np.inf, 2.0], np.float16)
    assert t._outlier(group, outputs, [0, 1, 2], 0, ref, precise=True)[0] == 2


def test_a_crash_reproducer_leaves_out_the_other_members_that_died(tmp_path, monkeypatch):
    # jnp.lcm and tnp.lcm both hang on one input: each is its own candidate, and the
    # reproducer of one must not hang in the other before reaching its own call
    from xamt.triage.pipeline import Candidate

    t = triage(tmp_path)
    seen = {}
    monkeypatch.setattr(t, "_finish", lambda cand, cid, cls, outlier, values, members, results, summary, **kw:
                        seen.update(members=members, outlier=outlier, kw=kw))
    ok = NS(status="ok", ok=True, outcome=None)
    hang = NS(status="timeout", ok=False, outcome=NS(confirmed=True, signal=9, signal_name="SIGKILL",
                                                     exit_code=None, stderr_tail=""))
    cand = Candidate(group=NS(members=[]), input=None, values={}, members=[0, 1, 2],
                     results=[ok, hang, hang], kind="crash", member=2)
    t._crash(cand, 1)
    assert seen["members"] == [0, 2] and seen["outlier"] == 2 and seen["kw"]["crash_status"] == "timeout"


def test_a_hang_in_another_package_s_native_code_says_so(tmp_path, monkeypatch):
    # jnp.linalg.lstsq spinning in the LAPACK of scipy's OpenBLAS: the finding names the loop's
    # package and function; a hang in the library's own objects is not said to be elsewhere
    from sandbox.native import NativeSpot
    from xamt.triage.pipeline import Candidate

    jax = NS(owns=lambda module: module in ("jax", "jaxlib"))
    t = triage(tmp_path, adapters={"jax": jax})
    seen = {}
    monkeypatch.setattr(t, "_finish", lambda cand, cid, cls, outlier, values, members, results, summary, **kw:
                        seen.update(summary=summary))
    monkeypatch.setattr("xamt.triage.pipeline.native.symbol_at", lambda path, offset: "scipy_sbdsqr_")

    def hang(spots):
        return NS(status="timeout", ok=False, outcome=NS(confirmed=True, signal=9, signal_name="SIGKILL",
                                                         exit_code=None, stderr_tail="", native=spots))

    member = NS(library="jax", qualname="jax.numpy.linalg.lstsq")
    lapack = (NativeSpot("/v/site-packages/scipy.libs/libscipy_openblas.so", 64, 7),
              NativeSpot("/usr/lib/libc.so.6", 8, 1))
    t._crash(Candidate(group=NS(members=[member]), input=None, values={}, members=[0],
                       results=[hang(lapack)], kind="crash", member=0), 1)
    assert seen["summary"]["native"] == {"object": "libscipy_openblas.so", "package": "scipy",
                                         "symbol": "scipy_sbdsqr_", "share": 0.88, "python": False,
                                         "outside": True, "extension": False}
    assert seen["summary"]["why"] == ("timeout: the loop runs in scipy's native code (libscipy_openblas.so, "
                                      "in scipy_sbdsqr_), which jax.numpy.linalg.lstsq calls")
    own = (NativeSpot("/v/site-packages/jaxlib/xla_extension.so", 64, 3),)
    t._crash(Candidate(group=NS(members=[member]), input=None, values={}, members=[0],
                       results=[hang(own)], kind="crash", member=0), 1)
    assert not seen["summary"]["native"]["outside"] and "which" not in seen["summary"]["why"]
    jit = (NativeSpot("[anon]", 64, 3),)
    t._crash(Candidate(group=NS(members=[member]), input=None, values={}, members=[0],
                       results=[hang(jit)], kind="crash", member=0), 1)
    assert seen["summary"]["why"].startswith("timeout: the loop runs in code compiled at run time")
    # a loop of Python code (scipy's entropy sum) calling numpy: the loop is the library's own
    # innermost frame's, not numpy's sum wrapper it calls each turn
    scipy = NS(owns=lambda module: module.split(".")[0] == "scipy")
    t.adapters["scipy"] = scipy
    member = NS(library="scipy", qualname="scipy.stats.poisson.entropy")
    dump = ('Current thread 0x1 (most recent call first):\n'
            '  File "/v/site-packages/numpy/_core/fromnumeric.py", line 83 in _wrapreduction\n'
            '  File "/v/site-packages/scipy/stats/_discrete_distns.py", line 812 in _entropy\n'
            '  File "/w/xamt/exec/member.py", line 231 in invoke\n')
    python = (NativeSpot("/v/site-packages/numpy/_core/_multiarray_umath.so", 64, 4),
              NativeSpot("/v/bin/python3.11", 8, 3, interpreter=True))
    looped = hang(python)
    looped.outcome.stderr_tail = dump
    t._crash(Candidate(group=NS(members=[member]), input=None, values={}, members=[0],
                       results=[looped], kind="crash", member=0), 1)
    assert seen["summary"]["why"] == ("timeout: the loop runs in Python code (scipy/stats/_discrete_distns.py:812 "
                                      "in _entropy), calling numpy's native code (_multiarray_umath.so, in "
                                      "scipy_sbdsqr_)")
    assert not seen["summary"]["native"]["outside"] and seen["summary"]["native"]["python"]
    assert seen["summary"]["frames"][:2] == ["numpy/_core/fromnumeric.py:83 in _wrapreduction",
                                             "scipy/stats/_discrete_distns.py:812 in _entropy"]
    # nothing sampled: the finding keeps the plain reason
    t._crash(Candidate(group=NS(members=[member]), input=None, values={}, members=[0],
                       results=[hang(())], kind="crash", member=0, why="timeout"), 1)
    assert "native" not in seen["summary"] and seen["summary"]["why"] == "timeout"


def test_a_returning_suspect_is_contrasted_with_a_member_that_refuses(tmp_path, monkeypatch):
    # scipy.fft.hfft returns where numpy and torch refuse (n=0): the finding names scipy and
    # reproduces with a refusing member as the reference
    from xamt.triage.pipeline import Candidate

    t = triage(tmp_path)
    ok = NS(status="ok", ok=True, error_type=None, error_message=None, value=None)
    bad = NS(status="raised", ok=False, error_type="ValueError",
             error_message="Invalid number of FFT data points (0) specified.", value=None)
    by_member = {0: bad, 1: ok, 2: bad}
    monkeypatch.setattr(t, "_run", lambda group, vals, members: [by_member[m] for m in members])
    seen = {}
    monkeypatch.setattr(t, "_finish", lambda cand, cid, cls, outlier, values, members, results, summary, **kw:
                        seen.update(outlier=outlier, ref=kw["ref_member"], summary=summary, cls=cls))
    cand = Candidate(group=NS(members=[]), input=None, values={}, members=[0, 1, 2],
                     results=[bad, ok, bad], kind="status", member=1, signature="returns|x")
    t._raised(cand, 1, internal=False)
    assert seen["outlier"] == 1 and seen["ref"] == 0 and seen["summary"]["returns_where_others_raise"]
    # accepting what the others refuse is a validation finding, blamed on the one that returns
    assert seen["cls"].value == "validation"
    assert seen["summary"]["error_type"] == "ValueError"


def test_eager_and_compiled_twins_are_told_apart_in_findings():
    from xamt.triage.pipeline import _api_label

    members = [NS(qualname="tensorflow.cumsum", call="function"),
               NS(qualname="tensorflow.cumsum", call="compiled"), NS(qualname="numpy.cumsum", call="function")]
    assert _api_label(members, 1) == "tensorflow.cumsum [compiled]"
    # the plain call has one name in every group, so its findings fold into one root cause
    assert _api_label(members, 0) == "tensorflow.cumsum"
    assert _api_label(members, 2) == "numpy.cumsum"


def test_an_xla_kernel_missing_for_a_dtype_is_benign():
    msg = ("Detected unsupported operations when trying to compile graph __inference_f_1[] on "
           "XLA_CPU_JIT: Cumsum (No registered 'Cumsum' OpKernel for XLA_CPU_JIT devices compatible "
           "with node {{node Cumsum}}){{node Cumsum}}")
    assert ErrorKinds.load().classify("InvalidArgumentError", msg)[0] == "benign"


def _triage_one_value_candidate(tmp_path, relation, members, values, outputs, nondeterministic):
    """Triage of a value candidate of two members on ``values``, run by a stand-in executor:
    member ``m`` returns ``outputs(m, x)``, and says it differed from itself when
    ``nondeterministic(m, x)`` (on calls with ``repeat`` > 1); the first member's library is the
    pivot."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.triage.pipeline import Candidate, Triage

    group = NS(key="t:case", relation=relation, equivalence="value", tolerance=None,
               normalisation="none", slots=[],
               members=[NS(library=lib, qualname=q, call="function", device=None, implements=[])
                        for lib, q in members])

    class Executor:
        def run(self, items):
            out = []
            for it in items:
                x = np.asarray(it.input[0])
                res = [MemberResult("ok", value=outputs(m, x),
                                    nondeterministic=it.repeat > 1 and nondeterministic(m, x)) for m in it.members]
                out.append(NS(results=res))
            return out

    ranks: dict[str, int] = {}  # the first member's library is the pivot
    for lib, _ in members:
        ranks.setdefault(lib, 50 * len(ranks))
    t = Triage(executor=Executor(), adapters={lib: NS(pivot_rank=r) for lib, r in ranks.items()},
               kinds=ErrorKinds.load(), out_dir=tmp_path, verify=False)
    first = Executor().run([NS(input=values, members=[0, 1], repeat=1)])[0].results
    cand = Candidate(group=group, input=None, values=values, members=[0, 1], results=first,
                     kind="value", member=1)
    return t.process(cand, 1)


def test_a_member_that_disagrees_with_itself_is_dropped_before_filing(tmp_path):
    import numpy as np

    out = _triage_one_value_candidate(
        tmp_path, "cross_library", [("numpy", "numpy.negative"), ("fake", "fake.noisy_negative")],
        {0: np.array([1.0, 2.0])}, outputs=lambda m, x: -x if m == 0 else -x + 1.0,
        nondeterministic=lambda m, x: m == 1)
    assert out.finding is None and out.dropped.startswith("nondeterministic"), out.dropped


def test_a_random_draw_that_repeats_on_the_minimised_input_is_still_dropped(tmp_path):
    """A dropout mask over one element is drawn alike by two calls half the time: the check on
    the input the divergence was found on (four elements) tells."""
    import numpy as np

    out = _triage_one_value_candidate(
        tmp_path, "inplace", [("fake", "fake.dropout"), ("fake", "fake.dropout_")],
        {0: np.array([1.0, 2.0, 3.0, 4.0])}, outputs=lambda m, x: x * (1.0 if m == 0 else 2.0),
        nondeterministic=lambda m, x: x.size > 1)
    assert out.finding is None and out.dropped.startswith("nondeterministic"), out.dropped


def test_an_outlier_that_agrees_in_float64_is_a_precision_finding(tmp_path, monkeypatch):
    import numpy as np

    from xamt.findings import FindingClass
    from xamt.exec.group import MemberResult
    from xamt.triage.pipeline import Candidate, Triage, TriageOutcome

    def member(lib, q):
        return NS(library=lib, qualname=q, call="function", device=None, implements=[])

    group = NS(key="t:id", relation="cross_library", equivalence="value", tolerance=None,
               normalisation="none", slots=[], members=[member("numpy", "numpy.positive"),
                                                        member("fake", "fake.square_over")])

    class Executor:  # member 1 computes x*x/x in the input's dtype: float32 overflows at 3e38
        def run(self, items):
            out = []
            for it in items:
                x = np.asarray(it.input[0])
                with np.errstate(all="ignore"):
                    res = [MemberResult("ok", value=x.copy() if m == 0 else (x * x) / x) for m in it.members]
                out.append(NS(results=res))
            return out

    t = Triage(executor=Executor(), adapters={"numpy": NS(pivot_rank=0), "fake": NS(pivot_rank=50)},
               kinds=ErrorKinds.load(), out_dir=tmp_path, verify=False)
    seen = {}
    monkeypatch.setattr(t, "_finish", lambda cand, cid, cls, outlier, values, members, results, summary, **kw:
                        seen.update(cls=cls, outlier=outlier, why=summary["why"])
                        or TriageOutcome(None, dropped="captured"))
    values = {0: np.array([3e38, 2.0], np.float32)}
    first = Executor().run([NS(input=values, members=[0, 1], repeat=1)])[0].results
    t.process(Candidate(group=group, input=None, values=values, members=[0, 1], results=first,
                        kind="value", member=1), 1)
    assert seen["outlier"] == 1 and seen["cls"] == FindingClass.PRECISION, seen


def test_a_later_hit_never_overwrites_a_filed_reproducer(tmp_path):
    from xamt.findings import Finding, FindingClass

    t = triage(tmp_path)
    f = Finding(campaign_id=1, group_key="x:k0/generic", relation="cross_library",
                finding_class=FindingClass.NAN, outlier_library="tensorflow",
                outlier_api="tensorflow.math.special.bessel_k0", dtype="float32", signature="float32",
                members=[], summary={}, input_recipe={})
    first = t._folder(f)
    first.mkdir(parents=True)
    second = t._folder(f)
    assert second != first and second.name == first.name + "-2" and not second.exists()


def test_minimisation_stops_at_the_deadline(tmp_path):
    import time

    t = triage(tmp_path)
    calls = []
    bounded = t._bounded(lambda vals: calls.append(1) or True)
    assert bounded({}) and calls == [1]
    t.deadline = time.monotonic() - 1.0
    assert not bounded({}) and calls == [1]  # nothing run once the deadline has passed


def test_integer_tensors_of_a_float_computation_get_a_float64_reference():
    """scipy.stats.pareto.pdf on uint64 wraps where a float64 evaluation does not: integer
    tensors go to float64 when the members compute in floats; index slots keep integers."""
    import numpy as np

    from xamt.triage.reference import float_computed_slots, upcast

    group = NS(slots=[NS(index=0, role="tensor"), NS(index=1, role="index")])
    values = {0: np.array([3, 7], np.uint64), 1: np.array([0, 1], np.int64)}
    assert float_computed_slots(group, values, {0: np.array([0.5, 0.1])}) == {0}
    assert float_computed_slots(group, values, {0: np.array([1, 2], np.uint64)}) == set()
    up = upcast(values, {0})
    assert up[0].dtype == np.float64 and up[1].dtype == np.int64
    assert upcast(values) is None


def test_a_float32_dtype_argument_asks_the_reference_run_for_float64():
    """numpy's cumulative_sum(x, axis=1, dtype=float32) of [-445.68, 1510.44, -1053.21, 1]: its
    sequential float32 sum loses 3e-5 of 11.5466 to cancellation, where torch's wider accumulator
    keeps it. With the dtype argument left at float32 the float64 run returned float32, there was
    no float64 reference, and the float32 majority blamed torch; asked for float64, it is one."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.triage.reference import ReferenceChooser, upcast

    x = np.array([[-445.6839904785156, 1510.4383544921875, -1053.207763671875, 1.0]], np.float32)
    values = {0: x, 1: 1, 2: np.dtype("float32")}
    up = upcast(values)
    assert up[0].dtype == np.float64 and up[1] == 1 and up[2] == np.dtype("float64")
    assert upcast({0: np.zeros(2), 1: np.dtype("int32")}) is None

    def run(group, vals, mis, **kw):
        return [MemberResult("ok", value=np.cumsum(vals[0], axis=vals[1], dtype=vals[2])) for _ in mis]

    members = [NS(library=lib, qualname=f"{lib}.cumsum", call="function", device=None, implements=[])
               for lib in ("numpy", "other")]
    group = NS(key="t:cumsum", members=members, slots=[NS(index=0, role="tensor"), NS(index=1, role="axis"),
                                                      NS(index=2, role="dtype")], tolerance=None)
    outputs = {m: run(group, values, [m])[0].value for m in (0, 1)}
    chooser = ReferenceChooser({"numpy": NS(pivot_rank=0), "other": NS(pivot_rank=50)}, load_call_order(), run)
    mi, value, label, ran_on = chooser.choose(group, values, [0, 1], outputs)
    assert mi == 0 and label.endswith("on float64 inputs") and value.dtype == np.float64, label
    assert abs(float(value[0, 2]) - 11.5466003417969) < 1e-9 and ran_on[2] == np.dtype("float64")


def _triage_pair(tmp_path, monkeypatch, quals, compute, values):
    """Triage a value divergence of a two-member group (numpy's member 0 and a fake member 1),
    ``compute(member, x)`` standing in for the calls; the filed class and outlier are captured
    instead of writing a reproducer. Returns (outcome, captured)."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.triage.pipeline import Candidate, TriageOutcome

    members = [NS(library=lib, qualname=q, call="function", device=None, implements=[])
               for lib, q in zip(("numpy", "fake"), quals)]
    group = NS(key="t:pair", relation="cross_library", equivalence="value", tolerance=None,
               normalisation="none", slots=[], members=members)

    class Executor:
        def run(self, items):
            return [NS(results=[MemberResult("ok", value=compute(m, np.asarray(it.input[0])))
                                for m in it.members]) for it in items]

    t = Triage(executor=Executor(), adapters={"numpy": NS(pivot_rank=0), "fake": NS(pivot_rank=50)},
               kinds=ErrorKinds.load(), out_dir=tmp_path, verify=False)
    seen = {}
    monkeypatch.setattr(t, "_finish", lambda cand, cid, cls, outlier, values, members, results, summary, **kw:
                        seen.update(cls=cls, outlier=outlier) or TriageOutcome(None, dropped="filed"))
    first = Executor().run([NS(input=values, members=[0, 1], repeat=1)])[0].results
    out = t.process(Candidate(group=group, input=None, values=values, members=[0, 1], results=first,
                              kind="value", member=1), 1)
    return out, seen


def _reversed_sum(bias=0.0):
    """Member 0: numpy.sum; member 1: a left-to-right sum of the reversed input in the input's
    dtype, plus ``bias``."""
    import numpy as np

    def compute(m, x):
        if m == 0:
            return np.asarray(np.sum(x))
        acc = x.dtype.type(0)
        for v in x[::-1]:
            acc = x.dtype.type(acc + v)
        return np.asarray(acc + x.dtype.type(bias))
    return compute


def test_a_float32_sum_that_cancels_is_rounding_not_a_finding(tmp_path, monkeypatch):
    import numpy as np

    # exact sum 2; numpy's float32 sum gives 1, the reversed one 0: 1e8 + 1 rounds to 1e8
    out, seen = _triage_pair(tmp_path, monkeypatch, ("numpy.sum", "fake.sum_reversed"), _reversed_sum(),
                             {0: np.array([1e8, 1, -1e8, 1], np.float32)})
    assert not seen and out.dropped.startswith("within its dtype's rounding"), (out.dropped, seen)


def test_a_wrong_sum_of_a_well_conditioned_input_is_still_filed(tmp_path, monkeypatch):
    import numpy as np

    out, seen = _triage_pair(tmp_path, monkeypatch, ("numpy.sum", "fake.sum_reversed"), _reversed_sum(1.0),
                             {0: np.array([1, 2, 3, 4], np.float32)})
    assert seen.get("outlier") == 1 and out.dropped == "filed", (out.dropped, seen)


def test_a_step_at_an_exact_integer_is_not_excused_as_rounding(tmp_path, monkeypatch):
    import numpy as np

    def floor(m, x):  # member 1 is wrong at exact integers: floor(3.0) = 2
        return np.floor(x) if m == 0 else np.where(x == np.round(x), x - 1, np.floor(x))

    out, seen = _triage_pair(tmp_path, monkeypatch, ("numpy.floor", "fake.floor_off_by_one"), floor,
                             {0: np.array([3.0, 5.0], np.float32)})
    assert seen.get("outlier") == 1 and out.dropped == "filed", (out.dropped, seen)


def test_perturbed_inputs_move_only_the_lower_precision_floats_by_one_roundoff():
    import numpy as np

    from xamt.triage.reference import perturbed, upcast

    values = {0: np.array([1.0, -2.0, 4.0], np.float32), 1: np.array([3, 4]), 2: np.array([1.0, 2.0])}
    up = upcast(values)
    p = perturbed(values, up, np.random.default_rng(0))
    rel = np.abs(p[0] / values[0].astype(np.float64) - 1)
    assert p[0].dtype == np.float64 and np.allclose(rel, 2.0 ** -24)
    assert p[1] is up[1] and p[2] is up[2]


def test_within_noise_needs_non_finite_values_to_match():
    import numpy as np

    from xamt.compare import computation_tolerance
    from xamt.triage.reference import within_noise

    tol = computation_tolerance(None, [np.dtype("float32")])
    ref = np.array([2.0, np.inf, np.nan])
    noise = np.array([1.0, 0.0, 0.0])
    assert within_noise(np.array([5.0, np.inf, np.nan], np.float32), ref, noise, tol, 4.0)
    assert not within_noise(np.array([7.0, np.inf, np.nan], np.float32), ref, noise, tol, 4.0)
    assert not within_noise(np.array([2.0, 1.0, np.nan], np.float32), ref, noise, tol, 4.0)
    # nothing ill-conditioned: no excuse
    assert not within_noise(np.array([2.0, np.inf, np.nan], np.float32), ref, np.zeros(3), tol, 4.0)
    # a reference that overflows when its inputs move: any finite value is within reach
    assert within_noise(np.array([1e30], np.float32), np.array([3e38]), np.array([np.inf]), tol, 4.0)


def test_conditioning_settings_are_checked(tmp_path):
    from xamt.triage.reference import load_conditioning

    assert load_conditioning().draws >= 1
    bad = tmp_path / "triage.toml"
    bad.write_text("[conditioning]\nfactor = -1\n")
    with pytest.raises(DataFileError, match="factor"):
        load_conditioning(bad)



def test_element_moves_count_matching_non_finite_values_as_unmoved():
    import numpy as np

    from xamt.triage.reference import element_moves

    ref = np.array([1.0, np.inf, np.nan, 2.0], np.float32)
    moved = np.array([1.5, np.inf, np.nan, np.inf])
    assert element_moves(moved, ref).tolist() == [0.5, 0.0, 0.0, np.inf]
    assert element_moves(np.zeros(3), ref) is None and element_moves(np.zeros(4, int), ref) is None


def _chooser(float64_results):
    """A ReferenceChooser over a four-member group whose float64 runs return
    ``float64_results[member]`` (members 0 numpy-like, 1-3 others, in that pivot order)."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.triage.reference import ReferenceChooser

    libs = ("numpy", "jax", "torch", "tensorflow")
    members = [NS(library=lib, qualname=f"{lib}.airy", call="function", device=None, implements=[])
               for lib in libs]
    group = NS(members=members, tolerance=None, slots=[NS(index=0, role="tensor")])
    calls = []

    def run(group, values, mis):
        calls.append(mis[0])
        return [MemberResult("ok", value=np.asarray(float64_results[mis[0]], np.float64))]
    adapters = {lib: NS(pivot_rank=r) for lib, r in zip(libs, (0, 20, 30, 40))}
    return group, ReferenceChooser(adapters, ("function",), run), calls


def test_a_float64_reference_that_is_nan_where_the_others_agree_on_a_number_is_passed_over():
    import numpy as np

    group, chooser, calls = _chooser({0: [np.nan, 1.0], 1: [0.0, 1.0]})
    values = {0: np.array([1e10, 0.5], np.float32)}
    outputs = {0: np.array([np.nan, 1.0], np.float32), 1: np.array([0.0, 1.0], np.float32),
               2: np.array([0.0, 1.0], np.float32), 3: np.array([0.0, 1.0], np.float32)}
    mi, value, label, _ = chooser.choose(group, values, [0, 1, 2, 3], outputs)
    assert (mi, calls) == (1, [0, 1]) and value[0] == 0.0 and "float64" in label


def test_a_nan_reference_stays_where_the_others_are_nan_too_or_do_not_agree_in_number():
    import numpy as np

    from xamt.triage.reference import nan_against_majority

    ref = np.array([np.nan, 1.0])
    # the others mostly NaN too: a NaN the majority shares
    assert not nan_against_majority(ref, [np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), np.array([0.0, 1.0])])
    # one other member only: no majority of independent implementations to speak of
    assert not nan_against_majority(ref, [np.array([0.0, 1.0])])
    # two of three return numbers: the reference is passed over
    assert nan_against_majority(ref, [np.array([0.0, 1.0]), np.array([2.0, 1.0]), np.array([np.nan, 1.0])])
    assert not nan_against_majority(np.array([0.5, 1.0]), [np.array([0.0, 1.0]), np.array([2.0, 1.0])])


def test_a_float64_reference_that_drops_an_input_nan_every_other_propagates_is_passed_over():
    import numpy as np

    from xamt.triage.reference import drops_nan

    # scipy's chebyshev([1, nan], [1, 1]) is 0 (Python's max skips the NaN), torch.dist's NaN
    group, chooser, calls = _chooser({0: 0.0, 1: np.nan})
    group.members = group.members[:2]
    values = {0: np.array([1.0, np.nan], np.float32)}
    outputs = {0: np.asarray(np.float32(0.0)), 1: np.asarray(np.float32(np.nan))}
    mi, value, label, _ = chooser.choose(group, values, [0, 1], outputs)
    assert (mi, calls) == (1, [0, 1]) and np.isnan(value) and "float64" in label
    # no NaN in the inputs, or another implementation returning a number too: it stays
    assert not drops_nan(np.asarray(0.0), [np.asarray(np.nan)], {0: np.array([1.0, 2.0])})
    assert not drops_nan(np.asarray(0.0), [np.asarray(np.nan), np.asarray(0.0)], values)
    assert drops_nan(np.asarray(0.0), [np.asarray(np.nan), np.asarray(np.nan)], values)
    # an inf beside the NaN: Python's max gives inf, still a dropped NaN
    assert drops_nan(np.asarray(np.inf), [np.asarray(np.nan)], {0: np.array([np.inf, np.nan])})


def test_a_hang_in_another_library_s_extension_module_blames_that_library(tmp_path):
    """scipy.stats.vonmises.rvs spinning in numpy's legacy sampler (numpy's own extension
    module): the finding blames numpy, says which API reached it, and folds with numpy's
    native hangs; a loop in a library the package only ships (scipy.libs' OpenBLAS under
    jax) keeps the called API's library."""
    import numpy as np

    from sandbox.native import NativeSpot
    from xamt.exec.group import MemberResult
    from xamt.libraries.registry import Registry
    from xamt.matching.model import ArgSpec, ArgumentPlan, Member
    from xamt.triage.pipeline import Candidate

    reg = Registry()
    adapters = {name: reg.get(name) for name in ("numpy", "scipy")}
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param="a", position=0, transform="tensor")])
    members = [Member(library=lib, qualname=target.replace(":", "."), target=target, kind="function",
                      call="function", plan=plan) for lib, target in (("numpy", "numpy:sum"), ("scipy", "scipy.special:ndtr"))]
    group = NS(key="t:hang", relation="cross_library", equivalence="value", tolerance=None,
               normalisation="none", slots=[], members=members, evidence={}, category="generic",
               canonical="sum")

    def filed(path):
        outcome = NS(confirmed=True, signal=9, signal_name="SIGKILL", exit_code=None, stderr_tail="",
                     native=(NativeSpot(path, 64, 9),))
        hang = MemberResult("timeout", outcome=outcome)

        class Executor:
            def run(self, items):
                return [NS(results=[hang for _ in it.members]) for it in items]

        t = Triage(executor=Executor(), adapters=adapters, kinds=ErrorKinds.load(), out_dir=tmp_path, verify=False)
        values = {0: np.array([1.0, np.inf])}
        out = t._crash(Candidate(group=group, input=None, values=values, members=[0, 1],
                                 results=[MemberResult("ok", value=np.float64(1.0)), hang],
                                 kind="crash", member=1), 1)
        assert out.finding is not None, out.dropped
        return out.finding

    f = filed("/v/site-packages/numpy/random/_mt19937.cpython-311-x86_64-linux-gnu.so")
    assert f.outlier_library == "numpy"
    # the label names the native code and its library before the API called
    assert f.outlier_api == "_mt19937.cpython-311-x86_64-linux-gnu.so in numpy (called by scipy.special.ndtr)"
    assert f.summary["called_through"] == "scipy.special.ndtr" and f.summary["cluster"].startswith("crash: numpy")
    assert "in numpy (called by scipy.special.ndtr)" in (tmp_path / f.reproducer).read_text()
    vendored = filed("/v/site-packages/numpy.libs/libscipy_openblas64_.so")
    assert vendored.outlier_library == "scipy" and "called_through" not in vendored.summary
    assert vendored.outlier_api == "scipy.special.ndtr"


def test_an_outlier_in_another_interpreter_is_verified_against_the_recorded_reference(tmp_path):
    """numpy's sum is the reference and a library in a venv of its own (here the project's own
    venv, described as another runtime) the outlier: no member can share its process, so the
    reproducer compares its fresh result with the reference's recorded output, and is verified."""
    import dataclasses
    import os

    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.libraries.base import Runtime
    from xamt.libraries.registry import Registry
    from xamt.matching.model import ArgSpec, ArgumentPlan, Member
    from xamt.triage.pipeline import Candidate

    from xamt.libraries.base import project_root

    # this interpreter's venv, named as a venv of its own: another runtime to the reproducer
    venv = os.path.relpath(os.path.dirname(os.path.dirname(os.path.abspath(os.sys.executable))), project_root())
    numpy_ad = Registry().get("numpy")
    other = dataclasses.replace(numpy_ad, name="venvlib", runtime=Runtime("venvlib", venv=venv))
    if not os.access(other.runtime.python(), os.X_OK):
        pytest.skip(f"no interpreter at {other.runtime.python()}")

    def member(lib, target):
        plan = ArgumentPlan(args=[ArgSpec(slot=0, param="a", position=0, transform="tensor")])
        return Member(library=lib, qualname=target.replace(":", "."), target=target, kind="function",
                      call="function", plan=plan)
    members = [member("numpy", "numpy:sum"), member("venvlib", "numpy:prod")]
    group = NS(key="t:venv", relation="cross_library", equivalence="value", tolerance=None,
               normalisation="none", slots=[], members=members, evidence={})
    fns = {0: np.sum, 1: np.prod}

    class Executor:
        def run(self, items):
            return [NS(results=[MemberResult("ok", value=np.asarray(fns[m](np.asarray(it.input[0]))))
                                for m in it.members]) for it in items]

    t = Triage(executor=Executor(), adapters={"numpy": numpy_ad, "venvlib": other},
               kinds=ErrorKinds.load(), out_dir=tmp_path, verify=True)
    values = {0: np.array([1.0, 2.0, 3.0, 4.0])}
    first = Executor().run([NS(input=values, members=[0, 1], repeat=1)])[0].results
    out = t.process(Candidate(group=group, input=None, values=values, members=[0, 1], results=first,
                              kind="value", member=1), 1)
    assert out.finding is not None, out.dropped
    f = out.finding
    assert f.verified and f.outlier_library == "venvlib" and f.summary["reference_recorded"].startswith("numpy.sum")
    script = (tmp_path / f.reproducer).read_text()
    assert "RECORDED = ('ok'" in script and "recorded by the fuzzer in another process" in script


def test_a_librarys_aliases_vote_once_for_the_reference():
    """tf's k0e under three names returns inf for x < 0 where torch and scipy return NaN: three
    aliases of one implementation must not outvote two libraries (the stop-29 audit's cluster)."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.triage.reference import ReferenceChooser

    libs = ("scipy", "torch", "tensorflow", "tensorflow", "tensorflow")
    members = [NS(library=lib, qualname=f"{lib}.k0e{i}", call="function", device=None, implements=[])
               for i, lib in enumerate(libs)]
    group = NS(members=members, tolerance=None, slots=[NS(index=0, role="tensor")])
    nan, inf = np.float32(np.nan), np.float32(np.inf)
    outputs = {i: np.array([v, 1.0], np.float32) for i, v in enumerate((nan, nan, inf, inf, inf))}

    def run(group, values, mis):  # no float64 evaluation here: the majority decides
        return [MemberResult("raised", error_type="TypeError")]
    adapters = {"scipy": NS(pivot_rank=10), "torch": NS(pivot_rank=20), "tensorflow": NS(pivot_rank=40)}
    chooser = ReferenceChooser(adapters, ("function",), run)
    mi, _, label, _ = chooser.choose(group, {0: np.array([-1.0, 2.0], np.float32)}, list(range(5)), outputs)
    assert group.members[mi].library in ("scipy", "torch") and "majority" in label, label


def test_libraries_on_one_backend_vote_once_for_the_reference():
    """JAX, Keras on JAX and TensorFlow's compiled call all run XLA, which flushes a subnormal
    result to 0 on the CPU; numpy and torch keep it. Three calls of one backend must not
    outvote two implementations, and TensorFlow's eager call is an implementation of its own."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.libraries.registry import Registry
    from xamt.triage.reference import ReferenceChooser

    reg = Registry()
    adapters = {name: reg.get(name) for name in ("numpy", "torch", "jax", "keras_jax", "tensorflow")}
    spec = [("numpy", "function"), ("torch", "function"), ("jax", "function"),
            ("keras_jax", "function"), ("tensorflow", "compiled")]
    members = [NS(library=lib, qualname=f"{lib}.f{i}", call=call, device=None, implements=[])
               for i, (lib, call) in enumerate(spec)]
    group = NS(members=members, tolerance=None, slots=[NS(index=0, role="tensor")])
    # x * 2**126 of a subnormal x: about 1 in IEEE arithmetic, 0 where x was flushed first
    kept, flushed = np.float32(1e-40) * np.float32(2.0**126), np.float32(0.0)
    outputs = {i: np.array([v, 1.0], np.float32) for i, v in enumerate((kept, kept, flushed, flushed, flushed))}

    def run(group, values, mis):  # no float64 evaluation here: the majority decides
        return [MemberResult("raised", error_type="TypeError")]
    chooser = ReferenceChooser(adapters, ("function", "compiled"), run)
    assert [chooser.implementation(m) for m in members] == ["numpy", "torch", "xla", "xla", "xla"]
    mi, _, label, _ = chooser.choose(group, {0: np.array([1e-40, 1.0], np.float32)}, list(range(5)), outputs)
    assert group.members[mi].library in ("numpy", "torch") and "majority" in label, label
    eager_tf = NS(library="tensorflow", qualname="tf.f", call="function", device=None, implements=[])
    assert chooser.implementation(eager_tf) == "tensorflow"


def test_an_infinite_reference_against_a_majority_is_passed_over():
    """scipy's gammaln(-inf) is -inf where jax, torch and C99's lgamma give +inf: the float64
    evaluation by scipy is no reference there. A finite one always stays."""
    import numpy as np

    from xamt.triage.reference import nan_against_majority

    ref = np.array([-np.inf, 1.0])
    others = [np.array([np.inf, 1.0], np.float32), np.array([np.inf, 1.0], np.float32)]
    assert nan_against_majority(ref, others)
    assert not nan_against_majority(ref, [np.array([-np.inf, 1.0]), np.array([np.inf, 1.0])])
    assert not nan_against_majority(np.array([1e39, 1.0]), [np.array([np.inf, 1.0], np.float32)] * 3)
    # NaN from others where the reference is infinite is their bug, not a majority
    assert not nan_against_majority(np.array([np.inf]), [np.array([np.nan], np.float32)] * 3)


def test_a_member_that_narrowed_the_result_is_no_reference():
    """JAX without x64 turns an int64 input into int32 (-9223372036854775807 becomes 1): with no
    majority it ranked first as a pivot, and tf.identity, which kept the value, was blamed (the
    stop-31 audit). A float32 result against a float64 one is narrowed too."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.triage.reference import ReferenceChooser, narrower_members

    libs = ("jax", "tensorflow")
    members = [NS(library=lib, qualname=f"{lib}.identity", call="function", device=None, implements=[])
               for lib in libs]
    group = NS(members=members, tolerance=None, slots=[NS(index=0, role="tensor")])
    outputs = {0: np.array([1], np.int32), 1: np.array([-9223372036854775807], np.int64)}

    def run(group, values, mis):
        return [MemberResult("raised", error_type="TypeError")]
    adapters = {"jax": NS(pivot_rank=20), "tensorflow": NS(pivot_rank=40)}
    chooser = ReferenceChooser(adapters, ("function",), run)
    mi, value, label, _ = chooser.choose(group, {0: np.array([-9223372036854775807], np.int64)}, [0, 1], outputs)
    assert (mi, int(value[0])) == (1, -9223372036854775807), label
    # the same widths everywhere, or kinds that do not widen into each other: nobody narrowed
    assert narrower_members({0: np.array([1], np.int64), 1: np.array([2], np.int64)}, [0, 1]) == set()
    assert narrower_members({0: np.array([1], np.int32), 1: np.array([2.0])}, [0, 1]) == set()
    assert narrower_members({0: (np.array([1.0], np.float32), np.array([1], np.int64)),
                     1: (np.array([1.0]), np.array([1], np.int64))}, [0, 1]) == {0}


def test_an_edge_input_that_no_library_evaluates_in_its_dtype_is_at_the_edge():
    """numpy.cross of float32 MAX values: NaN in numpy, inf in torch (a fused multiply-add), 0 in
    float64. No library holds the float64 result, so blaming one was arbitrary (stop 31's read
    #16); the edge-of-range policy names it. One member holding it keeps the finding."""
    import numpy as np

    from xamt.triage.pipeline import Triage
    from xamt.triage.reference import none_holds

    big = np.finfo(np.float32).max
    values = {0: np.array([big, big, 1.0], np.float32)}
    ref = np.array([0.0, 0.0, 0.0])
    outputs = {0: np.array([np.nan, np.nan, 0.0], np.float32), 1: np.array([np.inf, -np.inf, 0.0], np.float32)}
    assert none_holds(outputs, [0, 1], 0, ref, None, [np.dtype(np.float32)])
    group = NS(tolerance=None)
    out = outputs[0]
    assert Triage._edge(values, outputs, [0, 1], 0, ref, {0: values[0].astype(np.float64)}, out, group)
    # a library that returns float64 for the float32 input evaluated in float64: it holds
    # the reference but is no evaluation in the input's precision
    upcast = {**outputs, 2: np.array([0.0, 0.0, 0.0])}
    assert none_holds(upcast, [0, 1, 2], 0, ref, None, [np.dtype(np.float32)])
    assert not none_holds(upcast, [0, 1, 2], 0, ref, None, [np.dtype(np.float64)])
    # a library that gives the float64 result: the others' results are its outliers
    held = {**outputs, 2: np.array([0.0, 0.0, 0.0], np.float32)}
    assert not none_holds(held, [0, 1, 2], 0, ref, None, [np.dtype(np.float32)])
    assert not Triage._edge(values, held, [0, 1, 2], 0, ref, {0: values[0].astype(np.float64)}, out, group)
    # no float64 evaluation: at the edge wherever the float results part (finite from not, or
    # two finite sums in different orders); integer results (an index) are no rounding
    assert Triage._edge(values, outputs, [0, 1], 0, ref, None, out, group)
    assert Triage._edge(values, outputs, [0, 1], 0, ref + 1, None, ref.astype(np.float32), group)
    assert not Triage._edge(values, outputs, [0, 1], 0, np.array([0, 1]), None, np.array([1, 0]), group)
    assert not Triage._edge(values, outputs, [0, 1], 0, ref, None, ref[:2].astype(np.float32), group)  # a shape
    # ordinary inputs: not at the edge
    small = {0: np.array([1.0, 2.0, 3.0], np.float32)}
    assert not Triage._edge(small, outputs, [0, 1], 0, ref, {0: small[0].astype(np.float64)}, out, group)


def _three(tmp_path, monkeypatch, api, compute, flushing=None, wide=None):
    """A triage of a group of numpy's member 0 and two other libraries' members 1 and 2 (named
    ``<library>.<api>``), ``compute(member, x)`` standing in for the calls (``flushing(member,
    x)`` for calls run with the CPU flushing subnormals, ``wide(member, x)`` for calls run at
    full width; ``compute`` when None). Filing is captured (class, outlier, reference member,
    shared-loss, near-subnormal and own-float64 evidence) instead of writing a reproducer.
    Returns (triage, group, executor, captured)."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.triage.pipeline import Triage, TriageOutcome

    members = [NS(library=lib, qualname=f"{lib}.{api}", call="function", device=None, implements=[])
               for lib in ("numpy", "fake", "other")]
    group = NS(key=f"t:{api}", relation="cross_library", equivalence="value", tolerance=None,
               normalisation="none", slots=[], members=members)

    def call(m, x):
        try:
            return MemberResult("ok", value=compute(m, x))
        except ValueError as exc:  # a refusal, as the sandbox reports one
            return MemberResult("raised", error_type="ValueError", error_message=str(exc))

    class Executor:
        flushed_calls = []

        def run(self, items):
            out = []
            for it in items:
                flush = getattr(it, "flush_subnormals", False) and flushing is not None
                if flush:
                    self.flushed_calls.append(list(it.members))
                full = getattr(it, "wide", False) and wide is not None
                out.append(NS(results=[MemberResult("ok", value=flushing(m, np.asarray(it.input[0]))) if flush
                                       else MemberResult("ok", value=wide(m, np.asarray(it.input[0]))) if full
                                       else call(m, np.asarray(it.input[0])) for m in it.members]))
            return out

    t = Triage(executor=Executor(), adapters={"numpy": NS(pivot_rank=0), "fake": NS(pivot_rank=50),
                                              "other": NS(pivot_rank=60)},
               kinds=ErrorKinds.load(), out_dir=tmp_path, verify=False)
    seen = {}
    monkeypatch.setattr(t, "_finish", lambda cand, cid, cls, outlier, values, members, results, summary, **kw:
                        seen.update(cls=cls, outlier=outlier, ref=kw.get("ref_member"), values=values,
                                    edge=kw.get("edge"), shared=kw.get("shared"), tiny=kw.get("tiny"),
                                    own_float64=kw.get("own_float64"), documented_domain=kw.get("documented_domain"))
                        or TriageOutcome(None, dropped="filed"))
    return t, group, Executor(), seen


def _process(t, group, executor, values, suspect):
    from xamt.triage.pipeline import Candidate

    first = executor.run([NS(input=values, members=[0, 1, 2], repeat=1)])[0].results
    return first, t.process(Candidate(group=group, input=None, values=values, members=[0, 1, 2],
                                      results=first, kind="value", member=suspect), 1)


def test_a_minimised_input_on_which_another_member_is_farther_off_is_not_the_one_filed(tmp_path, monkeypatch):
    """Member 2 is off by 1 everywhere; member 1 agrees with the reference on four elements
    but is off by 10 on one. The minimiser keeps 2 apart from the reference down to one
    element, where 1 is the farther: filing 2 with that input would blame the wrong member of
    the reproducer, so the finding keeps the input it was found on."""
    import numpy as np

    def compute(m, x):
        return np.asarray(x.sum() + {0: 0.0, 1: 0.0 if x.size > 1 else 10.0, 2: 1.0}[m])

    t, group, executor, seen = _three(tmp_path, monkeypatch, "total", compute)
    _process(t, group, executor, {0: np.array([1.0, 2.0, 3.0, 4.0])}, 2)
    assert seen["outlier"] == 2 and seen["ref"] == 0
    assert seen["values"][0].size == 4, seen["values"]
    # where the smaller input keeps 2 the farthest, it is filed minimised
    t, group, executor, seen = _three(tmp_path, monkeypatch, "total", lambda m, x: np.asarray(x.sum() + (m == 2)))
    _process(t, group, executor, {0: np.array([1.0, 2.0, 3.0, 4.0])}, 2)
    assert seen["outlier"] == 2 and seen["values"][0].size == 1, seen["values"]


def test_a_reference_passed_over_on_the_input_found_takes_its_place_on_the_minimised_one(tmp_path, monkeypatch):
    """numpy (first in pivot order) is NaN at the negative inputs, outside the domain, where the
    two others return numbers: its float64 run is passed over there and member 1's is the
    reference, against which numpy is the outlier. Minimised to the 5 (where the two others
    return 0 and numpy the exact 5), numpy's float64 run is the reference again, and the
    outlier is a member that returns 0 (scipy's exact cauchy.ppf at FLT_MIN was blamed against
    torch's rounded q - 0.5 so). Where the minimised input keeps the reference, nothing moves."""
    import numpy as np

    def compute(m, x):
        if m == 0:
            return np.where(x < 0, np.nan, x)
        return np.where(x < 0, x, 0.0 * x)

    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)
    monkeypatch.setattr("xamt.triage.pipeline.minimise",
                        lambda values, fails, budget, frozen: NS(inputs={0: np.array([5.0], np.float32)}))
    _, out = _process(t, group, executor, {0: np.array([-1.0, -2.0, 5.0], np.float32)}, 0)
    assert seen.get("outlier") == 1 and seen["ref"] == 0 and seen["values"][0].size == 1, (out.dropped, seen)
    # minimised to a negative input, numpy is passed over there too: it stays the outlier
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)
    monkeypatch.setattr("xamt.triage.pipeline.minimise",
                        lambda values, fails, budget, frozen: NS(inputs={0: np.array([-1.0], np.float32)}))
    _, out = _process(t, group, executor, {0: np.array([-1.0, -2.0, 5.0], np.float32)}, 0)
    assert seen.get("outlier") == 0 and seen["ref"] == 1, (out.dropped, seen)


def test_a_member_that_refuses_the_minimised_input_leaves_the_vote(tmp_path, monkeypatch):
    """Member 1 returns on the input found but refuses a single element (a campaign's triage
    error, KeyError: the reference's vote read every member's output); member 2 is off by 1
    throughout and is filed on the minimised input."""
    import numpy as np

    def compute(m, x):
        if m == 1 and x.size < 2:
            raise ValueError("expected at least two elements")
        return np.asarray(x.sum() + (m == 2))

    t, group, executor, seen = _three(tmp_path, monkeypatch, "total", compute)
    _, out = _process(t, group, executor, {0: np.array([1.0, 2.0, 3.0, 4.0])}, 2)
    assert out.dropped == "filed" and seen["outlier"] == 2 and seen["values"][0].size == 1, (out.dropped, seen)


def test_without_a_float64_reference_a_member_finite_where_the_majority_overflowed_is_at_the_edge(
        tmp_path, monkeypatch):
    """prod of [MAX, MAX, 0] in float32 with a dtype argument (no float64 evaluation): two
    members' float32 products give NaN (inf * 0), one accumulating in double gives 0. Nothing
    says which side lost the result: the edge evidence, not a bug of the minority (torch's
    cumprod of [1, MAX, -MAX, 0] was filed so)."""
    import numpy as np

    def compute(m, x):
        with np.errstate(all="ignore"):
            return np.asarray(np.prod(x.astype(np.float64)), np.float32) if m == 2 else np.asarray(np.prod(x))

    t, group, executor, seen = _three(tmp_path, monkeypatch, "prod", compute)
    monkeypatch.setattr(t, "_reference", lambda group, values, ok, outputs:
                        (0, outputs[0], "numpy.prod (agrees with the majority)", None))
    top = np.finfo(np.float32).max
    _, out = _process(t, group, executor, {0: np.array([top, top, 0.0], np.float32)}, 2)
    assert seen.get("outlier") == 2 and seen["edge"], (out.dropped, seen)
    # the same split on ordinary values is no edge
    t, group, executor, seen = _three(tmp_path, monkeypatch, "cumprod", lambda m, x: np.full_like(x, np.nan) if m == 2 else np.cumprod(x))
    monkeypatch.setattr(t, "_reference", lambda group, values, ok, outputs:
                        (0, outputs[0], "numpy.cumprod (agrees with the majority)", None))
    _, out = _process(t, group, executor, {0: np.array([1.0, 2.0, 3.0], np.float32)}, 2)
    assert seen.get("outlier") == 2 and not seen["edge"], (out.dropped, seen)


def test_at_an_edge_input_an_overflow_to_the_references_sign_or_a_split_without_majority_is_the_edge(
        tmp_path, monkeypatch):
    """numpy's float32 matvec of [1, 1.0000001] and [MAX, -MAX] is -inf, as IEEE arithmetic
    without a fused multiply-add gives; the float64 reference is -4.06e31 and fused members hold
    it. An overflow to the reference's own sign at an edge input is the edge evidence; an inf
    where the reference is 0 (JAX's pareto.pdf(2, 1e38)) is not. Without a float64 evaluation,
    members giving different sums of [1, 1, 1, MAX, -MAX, 1] are at the edge too, with or
    without a majority."""
    import numpy as np

    top = np.finfo(np.float32).max

    def dot(m, x):
        if x.size != 2:
            raise ValueError("a 2-vector")
        with np.errstate(all="ignore"):
            if m == 0 and x.dtype == np.float32:  # no fused multiply-add: the product overflows
                return np.asarray([x[0] + x[1] * np.float32(1.0000001)], np.float32)
            return np.asarray([x[0].astype(np.float64) + x[1].astype(np.float64) * 1.0000001], x.dtype)

    t, group, executor, seen = _three(tmp_path, monkeypatch, "matvec", dot)
    _, out = _process(t, group, executor, {0: np.array([top, -top], np.float32)}, 0)
    assert seen.get("outlier") == 0 and seen["edge"], (out.dropped, seen)

    def pdf(m, x):
        with np.errstate(all="ignore"):
            return np.asarray([np.inf if m == 2 else 0.0], x.dtype)

    t, group, executor, seen = _three(tmp_path, monkeypatch, "pareto_pdf", pdf)
    _, out = _process(t, group, executor, {0: np.array([2.0, 1e38], np.float32)}, 2)
    assert seen.get("outlier") == 2 and not seen["edge"], (out.dropped, seen)

    import math

    orders = {0: lambda x: np.cumsum(x)[-1], 1: lambda x: math.fsum(x.tolist()), 2: lambda x: x[::-1].cumsum()[-1]}
    t, group, executor, seen = _three(tmp_path, monkeypatch, "nansum",
                                      lambda m, x: np.asarray(orders[m](x), np.float32))
    monkeypatch.setattr(t, "_reference", lambda group, values, ok, outputs:
                        (0, outputs[0], "numpy.nansum (first pivot; no majority)", None))
    values = {0: np.array([1.0, 1.0, 1.0, top, -top, 1.0], np.float32)}
    assert len({float(orders[m](values[0])) for m in orders}) == 3
    _, out = _process(t, group, executor, values, 1)
    assert seen.get("outlier") in (1, 2) and seen["edge"], (out.dropped, seen)
    # a majority of two sequential sums against one in another order (torch.compile's
    # masked.sum against eager's, a referee deciding): no float64 evaluation says which is right
    orders[2] = orders[0]
    t, group, executor, seen = _three(tmp_path, monkeypatch, "nansum",
                                      lambda m, x: np.asarray(orders[m](x), np.float32))
    monkeypatch.setattr(t, "_reference", lambda group, values, ok, outputs:
                        (0, outputs[0], "numpy.nansum (agrees with the majority)", None))
    _, out = _process(t, group, executor, values, 1)
    assert seen.get("outlier") == 1 and seen["edge"], (out.dropped, seen)


def test_a_majority_that_flushes_subnormals_is_the_outlier_not_the_member_that_keeps_them(tmp_path, monkeypatch):
    """No float64 reference (the call fixes float32): two members that flush subnormal inputs
    (XLA, TensorFlow) outvote one that keeps them. The member that keeps them gives the
    majority's NaN once its inputs are flushed: the flushing side is the outlier, class
    subnormal (the flush-to-zero policy's), not the IEEE member."""
    import numpy as np

    from xamt.findings import FindingClass
    from xamt.triage.classify import flush_subnormals

    def compute(m, x):
        with np.errstate(all="ignore"):
            return np.asarray(np.prod(x if m == 0 else flush_subnormals({0: x})[0]))

    t, group, executor, seen = _three(tmp_path, monkeypatch, "nanprod", compute)
    # the majority, in the input's precision, is the reference (as when a dtype argument rules
    # out a float64 evaluation)
    monkeypatch.setattr(t, "_reference", lambda group, values, ok, outputs:
                        (1, outputs[1], "fake.nanprod (agrees with the majority)", None))
    first, _ = _process(t, group, executor, {0: np.array([-1.4e-45, 1.0, -np.inf, 1.0], np.float32)}, 0)
    assert np.isinf(first[0].value) and np.isnan(first[1].value)
    assert seen["outlier"] == 1 and seen["ref"] == 0 and seen["cls"] == FindingClass.SUBNORMAL, seen


def test_a_subnormal_intermediate_the_outlier_flushes_is_told_by_running_a_reference_member_flushing(
        tmp_path, monkeypatch):
    """No input is subnormal, but x * 2**-130 is: member 2 (XLA-like) flushes it and returns 0,
    which float64 would not show (2**-130 is normal there). A member of the reference's side
    run with the CPU flushing gives 0 too: class subnormal. Where the flushed run still gives
    the reference's result, the finding stays a value finding."""
    import numpy as np

    from xamt.findings import FindingClass

    def honest(m, x):
        lo, hi = x.dtype.type(2.0 ** -65), x.dtype.type(2.0 ** 65)
        return np.asarray(x * lo * lo * hi * hi)

    def flushing(m, x):
        return np.zeros_like(x)

    values = {0: np.array([1.0, 2.0, 3.0], np.float32)}
    t, group, executor, seen = _three(tmp_path, monkeypatch, "scaled",
                                      lambda m, x: flushing(m, x) if m == 2 and x.dtype == np.float32 else honest(m, x),
                                      flushing=flushing)
    _, out = _process(t, group, executor, values, 2)
    assert seen.get("outlier") == 2 and seen.get("cls") == FindingClass.SUBNORMAL, (out.dropped, seen)
    # the outlier's own library is never the one run flushing, and one member answered
    assert executor.flushed_calls and all(2 not in ms for ms in executor.flushed_calls)
    # a wrong result that flushing does not explain
    t, group, executor, seen = _three(tmp_path, monkeypatch, "scaled",
                                      lambda m, x: np.asarray(x + 1) if m == 2 else honest(m, x),
                                      flushing=honest)
    _, out = _process(t, group, executor, values, 2)
    assert seen.get("outlier") == 2 and seen.get("cls") == FindingClass.VALUE, (out.dropped, seen)


def test_a_subnormal_input_the_outlier_flushes_is_told_where_its_own_float64_run_is_the_reference(
        tmp_path, monkeypatch):
    """tnp.log10 of [nan, -1.4e-45] in float32: TensorFlow flushes the subnormal to -0 and
    returns -inf where its own float64 run (the reference) gives NaN. Rerunning that reference
    in float32 gives -inf flushed or not (it is the outlier), so the rerun cannot tell; the NaN
    keys the finding. A member of another library run flushing gives -inf too: class subnormal."""
    import numpy as np

    from xamt.findings import FindingClass
    from xamt.triage.classify import flush_subnormals

    def log10(m, x):
        with np.errstate(all="ignore"):
            flushes = m == 2 and x.dtype == np.float32
            return np.log10(flush_subnormals({0: x})[0] if flushes else x)

    def flushing(m, x):
        with np.errstate(all="ignore"):
            return np.log10(flush_subnormals({0: x})[0])

    values = {0: np.array([np.nan, -1.4e-45], np.float32)}
    t, group, executor, seen = _three(tmp_path, monkeypatch, "log10", log10, flushing=flushing)
    def own_float64_run(group, vals, ok, outputs):
        up = {0: vals[0].astype(np.float64)}
        return 2, log10(2, up[0]), "other.log10 on float64 inputs", up
    monkeypatch.setattr(t, "_reference", own_float64_run)
    assert np.isnan(own_float64_run(group, values, [], {})[1][1])
    _, out = _process(t, group, executor, values, 2)
    assert seen.get("outlier") == 2 and seen.get("cls") == FindingClass.SUBNORMAL, (out.dropped, seen)


def test_a_divergence_that_stays_at_the_smallest_normal_number_is_no_flushing(tmp_path, monkeypatch):
    """torch's float32 LogNormal.icdf: 0 at q = 1.4e-45, which scipy's ppf of the flushed q = 0
    gives too, but also at q = FLT_MIN (its erfinv(2q - 1) rounds to -1 below 3e-8), where
    nothing flushes. Member 2 stands in, a log that gives -inf below 3e-8: the divergence stays
    with the smallest normal number in the subnormal's place, so it is filed there, a value
    finding, not a subnormal one (nor, for JAX or TensorFlow, the flush-to-zero policy). A
    member that does flush its input agrees with the reference there and stays subnormal, on
    the input it was found on; so does one whose difference at the new input is a flushed
    intermediate (TensorFlow's bessel_k0e at FLT_MIN: log(0.5 x)), which a member of the
    reference's side run flushing gives too. Where the new input gives no finding, the
    candidate is filed on the input as found."""
    import numpy as np

    from xamt.findings import FindingClass
    from xamt.triage.classify import flush_subnormals
    from xamt.triage.pipeline import TriageOutcome

    def cancels(m, x):
        with np.errstate(all="ignore"):
            return np.where(x < 3e-8, -np.inf, np.log(x)).astype(x.dtype) if m == 2 else np.log(x)

    def filing(t):  # the capture, answering with a filed finding as _finish does
        capture = t._finish
        monkeypatch.setattr(t, "_finish", lambda *a, **kw: capture(*a, **kw) and TriageOutcome(finding=object()))

    values = {0: np.array([1.4e-45], np.float32)}
    t, group, executor, seen = _three(tmp_path, monkeypatch, "logn", cancels)
    filing(t)
    _, out = _process(t, group, executor, values, 2)
    assert seen.get("outlier") == 2 and seen.get("cls") == FindingClass.VALUE, (out.dropped, seen)
    assert seen["values"][0].tolist() == [np.finfo(np.float32).tiny], seen["values"]
    # _three's capture files nothing: the candidate falls back to the input it was found on
    t, group, executor, seen = _three(tmp_path, monkeypatch, "logn", cancels)
    _, out = _process(t, group, executor, values, 2)
    assert seen.get("cls") == FindingClass.SUBNORMAL and seen["values"][0].tolist() == values[0].tolist()

    def halves_flushing(m, x):  # XLA: operands and results flushed
        with np.errstate(all="ignore"):
            return np.log(flush_subnormals({0: flush_subnormals({0: x})[0] * x.dtype.type(0.5)})[0])

    def halves(m, x):
        if m == 2 and x.dtype == np.float32:
            return halves_flushing(m, x)
        with np.errstate(all="ignore"):
            return np.log(x * x.dtype.type(0.5))

    t, group, executor, seen = _three(tmp_path, monkeypatch, "k0e", halves, flushing=halves_flushing)
    filing(t)
    halved = {0: np.array([1e-40], np.float32)}  # its half is subnormal, not 0
    _, out = _process(t, group, executor, halved, 2)
    assert seen.get("outlier") == 2 and seen.get("cls") == FindingClass.SUBNORMAL, (out.dropped, seen)
    assert seen["values"][0].tolist() == halved[0].tolist()

    def flushes(m, x):
        with np.errstate(all="ignore"):
            return np.log(flush_subnormals({0: x})[0] if m == 2 and x.dtype == np.float32 else x)

    t, group, executor, seen = _three(tmp_path, monkeypatch, "logn", flushes)
    filing(t)
    _, out = _process(t, group, executor, values, 2)
    assert seen.get("outlier") == 2 and seen.get("cls") == FindingClass.SUBNORMAL, (out.dropped, seen)
    assert seen["values"][0].tolist() == values[0].tolist()


def test_a_flushed_intermediate_at_a_tiny_input_is_told_by_the_outliers_own_full_width_run(tmp_path, monkeypatch):
    """JAX's boxcox1p(1.0000001, -FLT_MIN): an intermediate x * 2**-20 of an input near the
    smallest normal is subnormal in float32, and member 2 (XLA-like) flushes it, returning 0
    where the others return 1. Like JAX, it truncates float64 inputs to float32 unless run at
    full width, so only that run shows its float64 evaluation agreeing: class precision, with
    the near-subnormal and own-float64 evidence the flush-to-zero policy takes. A member that
    is wrong in float64 too gets no own-float64 evidence, and an input far from the subnormal
    range no near-subnormal evidence."""
    import numpy as np

    from xamt.findings import FindingClass
    from xamt.triage.classify import flush_subnormals

    def xla(x):
        x32 = x.astype(np.float32)  # float64 truncated to float32, as JAX does by default
        t = flush_subnormals({0: x32 * np.float32(2.0 ** -20)})[0]
        with np.errstate(all="ignore"):
            return t / x32 * np.float32(2.0 ** 20)

    def compute(m, x):
        with np.errstate(all="ignore"):
            return xla(x) if m == 2 else (x * 2.0 ** -20) / x * 2.0 ** 20

    tiny = {0: np.array([2 * 1.1754944e-38, 1.0, 2.0], np.float32)}
    # at full width member 2 computes its float64 input in float64
    full = lambda m, x: compute(0, x) if x.dtype == np.float64 else compute(m, x)
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ratio", compute, wide=full)
    _, out = _process(t, group, executor, tiny, 2)
    assert seen.get("outlier") == 2 and seen.get("cls") == FindingClass.PRECISION, (out.dropped, seen)
    assert seen["tiny"] is True and seen["own_float64"] is True
    # not at full width (the executor ignores it): the float32 truncation hides the float64 evaluation
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ratio", compute)
    _process(t, group, executor, tiny, 2)
    assert seen.get("cls") == FindingClass.VALUE and seen["own_float64"] is False, seen
    # wrong however wide: no own-float64 evidence
    wrong = lambda m, x: np.zeros_like(x) if m == 2 else compute(0, x)
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ratio", wrong, wide=wrong)
    _process(t, group, executor, tiny, 2)
    assert seen.get("outlier") == 2 and seen["tiny"] is True and seen["own_float64"] is False, seen
    # off by rounding only (within the loose tolerance): no flushing, whatever the input
    close = lambda m, x: np.asarray(compute(0, x) * (1 + 1e-4)).astype(x.dtype) if m == 2 else compute(0, x)
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ratio", close, wide=lambda m, x: compute(0, x))
    _process(t, group, executor, tiny, 2)
    assert seen.get("outlier") == 2 and seen["tiny"] is False, seen
    # far from the subnormal range
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ratio", wrong, wide=wrong)
    _process(t, group, executor, {0: np.array([1e-20, 1.0, 2.0], np.float32)}, 2)
    assert seen.get("outlier") == 2 and seen["tiny"] is False, seen
    # the policy: a flushing library with both pieces of evidence, never one that keeps subnormals
    from xamt.triage.policy import load_policies

    p = load_policies()
    group = NS(category="generic", canonical="boxcox1p", relation="cross_library")
    pol = p.match(FindingClass.PRECISION, library="jax", computation="float32", trigger="negative",
                  group=group, tiny=True, own_float64=True)
    assert pol is not None and pol.name == "flush-to-zero"
    for evidence in ({"tiny": True}, {"own_float64": True}):
        assert p.match(FindingClass.PRECISION, library="jax", computation="float32", trigger="negative",
                       group=group, **evidence) is None
    assert p.match(FindingClass.PRECISION, library="torch", computation="float32", trigger="negative",
                   group=group, tiny=True, own_float64=True) is None


def test_a_precision_loss_another_implementation_shares_is_the_dtypes_rounding(tmp_path, monkeypatch):
    """Member 2 is off the float64 result by 0.3 %, under a loose tolerance (a precision
    finding); where another library's float32 result is off too (0.1 %), the loss is the
    computation's precision (the policy's evidence); where the others are exact, it is not."""
    import numpy as np

    from xamt.findings import FindingClass

    def compute(shared):
        def f(m, x):
            if x.dtype == np.float64 or m == 0:
                return np.asarray(x * 2.0).astype(x.dtype)
            factor = {1: 1.001 if shared else 1.0, 2: 0.997}[m]
            return np.asarray(x * np.float32(2.0 * factor)).astype(np.float32)
        return f

    values = {0: np.array([1.5, 2.5, 3.5], np.float32)}
    for shared in (True, False):
        t, group, executor, seen = _three(tmp_path, monkeypatch, "squareplus", compute(shared))
        _, out = _process(t, group, executor, values, 2)
        assert seen.get("outlier") == 2 and seen.get("cls") == FindingClass.PRECISION, (out.dropped, seen)
        assert seen.get("shared") is shared
    # the policy files the shared loss as such; an unshared one stays a bug
    from xamt.triage.policy import load_policies

    p = load_policies()
    group = NS(category="generic", canonical="squareplus", relation="cross_library")
    pol = p.match(FindingClass.PRECISION, library="jax", computation="float32", trigger="negative",
                  group=group, shared=True)
    assert pol is not None and pol.name == "rounding the computation's precision shares"
    assert p.match(FindingClass.PRECISION, library="jax", computation="float32", trigger="negative",
                   group=group) is None


def _member(lib, qualname, call="function", slots=(("input", 0),), fixed=()):
    from xamt.matching.model import ArgSpec, ArgumentPlan, Member

    args = [ArgSpec(slot=s, param=p, position=i, required=i == 0) for i, (p, s) in enumerate(slots)]
    args += [ArgSpec(slot=None, param=p, keyword=p, value=v) for p, v in fixed]
    return Member(library=lib, qualname=f"{lib}.{qualname}", target=f"{lib}:{qualname}", kind="function", call=call,
                  plan=ArgumentPlan(args=args), via="helper:compiled" if call == "compiled" else None)


def test_a_call_translates_into_another_group_by_its_parameters():
    import numpy as np

    from xamt.triage.reference import translate

    x = np.arange(3.0)
    src = _member("tensorflow", "math.argmax", slots=(("input", 0), ("axis", 1)))
    dst = _member("tensorflow", "math.argmax", slots=(("axis", 4), ("input", 2)))
    assert translate(src, {0: x, 1: 0}, dst) == {2: x, 4: 0}
    # a parameter the other group's call does not pass: another computation
    assert translate(src, {0: x, 1: 0}, _member("tensorflow", "math.argmax")) is None
    # without the axis both take their (omitted) default
    assert list(translate(src, {0: x}, _member("tensorflow", "math.argmax"))) == [0]
    # a fixed argument must be the same fixed argument
    fixed = _member("tensorflow", "math.argmax", fixed=[("output_type", "int32")])
    assert translate(fixed, {0: x}, fixed) == {0: x}
    assert translate(fixed, {0: x}, _member("tensorflow", "math.argmax", fixed=[("output_type", "int64")])) is None
    # a parameter the other call requires and this one leaves out
    assert translate(_member("tensorflow", "math.argmax", slots=(("input", 0),)), {},
                     _member("tensorflow", "math.argmax")) is None


def _eager_compiled(referees):
    """An eager/compiled pair of one API whose eager result is wrong (index 1 of [nan, 5, 1]:
    the largest number, where numpy, torch and jax give the NaN's index 0), refereed by the
    cross-library group of the same API when ``referees``."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.libraries.registry import Registry
    from xamt.triage.reference import ReferenceChooser, referee_index

    reg = Registry()
    adapters = {n: reg.get(n) for n in ("numpy", "torch", "jax", "tensorflow")}
    pair = NS(relation="eager_compiled", tolerance=None,
              members=[_member("tensorflow", "math.argmax"), _member("tensorflow", "math.argmax", "compiled")])
    cross = NS(relation="cross_library", tolerance=None,
               members=[_member("numpy", "argmax", slots=(("a", 0),)), _member("torch", "argmax"),
                        _member("jax", "numpy.argmax", slots=(("a", 0),)), _member("tensorflow", "math.argmax")])
    answers = {"numpy": 0, "torch": 0, "jax": 0, "tensorflow": 1}
    calls = []

    def run(group, values, mis):
        calls.append([group.members[m].library for m in mis])
        return [MemberResult("ok", value=np.asarray(answers[group.members[m].library]))
                if group is cross and values.get(0) is not None else MemberResult("raised", error_type="TypeError")
                for m in mis]
    index = referee_index([pair, cross]) if referees else {}
    chooser = ReferenceChooser(adapters, ("function", "compiled"), run, index)
    values = {0: np.array([np.nan, 5.0, 1.0], np.float32)}
    outputs = {0: np.asarray(1), 1: np.asarray(0)}
    return chooser.choose(pair, values, [0, 1], outputs), calls


def test_an_eager_compiled_pair_takes_the_side_its_cross_library_group_takes():
    """TensorFlow's eager argmax was wrong and its XLA twin blamed, by the call order alone: the
    pair's own two calls are no majority. numpy and torch on the same call decide; neither the
    pair's own library nor JAX, whose XLA the compiled twin runs on, votes."""
    (mi, _, label, ref_values), calls = _eager_compiled(referees=True)
    assert mi == 1 and ref_values is None, label
    assert "agrees with numpy.argmax, torch.argmax" in label
    assert calls == [["numpy", "torch"]]


def test_a_referee_whose_outputs_are_normalised_otherwise_is_not_asked():
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.libraries.registry import Registry
    from xamt.triage.reference import ReferenceChooser, referee_index

    reg = Registry()
    adapters = {n: reg.get(n) for n in ("numpy", "torch", "tensorflow")}
    pair = NS(relation="eager_compiled", tolerance=None, normalisation="none",
              members=[_member("tensorflow", "math.argmax"), _member("tensorflow", "math.argmax", "compiled")])
    cross = NS(relation="cross_library", tolerance=None, normalisation="sort",
               members=[_member("numpy", "argmax"), _member("torch", "argmax"), _member("tensorflow", "math.argmax")])
    calls = []

    def run(group, values, mis):
        calls.append(mis)
        return [MemberResult("ok", value=np.asarray(0)) for _ in mis]
    chooser = ReferenceChooser(adapters, ("function", "compiled"), run, referee_index([cross]))
    assert chooser.refereed(pair, {0: np.zeros(3, np.float32)}, [0, 1], {0: np.asarray(1), 1: np.asarray(0)}) is None
    assert calls == []
    cross.normalisation = "none"
    assert chooser.refereed(pair, {0: np.zeros(3, np.float32)}, [0, 1], {0: np.asarray(1), 1: np.asarray(0)})[0] == 1


def test_without_a_referee_the_pair_keeps_the_call_order():
    (mi, _, label, _), _ = _eager_compiled(referees=False)
    assert mi == 0 and "first pivot" in label, label


def test_a_referee_without_a_majority_decides_nothing():
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.libraries.registry import Registry
    from xamt.triage.reference import ReferenceChooser, referee_index

    reg = Registry()
    adapters = {n: reg.get(n) for n in ("numpy", "torch", "tensorflow")}
    pair = NS(relation="eager_compiled", tolerance=None,
              members=[_member("tensorflow", "math.argmax"), _member("tensorflow", "math.argmax", "compiled")])
    cross = NS(relation="cross_library", tolerance=None,
               members=[_member("numpy", "argmax"), _member("torch", "argmax"), _member("tensorflow", "math.argmax")])

    def run(group, values, mis):  # numpy and torch part: no majority of two
        return [MemberResult("ok", value=np.asarray(i)) for i, _ in enumerate(mis)]
    chooser = ReferenceChooser(adapters, ("function", "compiled"), run, referee_index([cross]))
    assert chooser.refereed(pair, {0: np.zeros(3, np.float32)}, [0, 1], {0: np.asarray(1), 1: np.asarray(0)}) is None


def test_inside_one_library_a_float64_run_that_drops_nan_is_no_reference_against_a_twin_that_keeps_it():
    """torch.masked.median (first in the pair) dropped the input's NaN on float64 inputs and was
    the reference; torch.median, documented to return NaN, was blamed. The pair has no referee
    (torch.median is in no cross-library group here): its other member's NaN is the voice."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.libraries.registry import Registry
    from xamt.triage.reference import ReferenceChooser

    pair = NS(relation="namespace_twin", tolerance=None,
              members=[_member("torch", "masked.median"), _member("torch", "median")])
    float64 = {0: np.float64(2.0), 1: np.float64(np.nan)}

    def run(group, values, mis):
        return [MemberResult("ok", value=np.asarray(float64[m])) for m in mis]
    chooser = ReferenceChooser({"torch": Registry().get("torch")}, ("function",), run)
    values = {0: np.array([1.0, np.nan, 3.0], np.float32)}
    outputs = {0: np.asarray(np.float32(2.0)), 1: np.asarray(np.float32(np.nan))}
    mi, _, label, _ = chooser.choose(pair, values, [0, 1], outputs)
    assert mi == 1 and "torch.median on float64" in label, label


def _limit_side(f, x, out):
    """limit_at_infinity for the float64 reference ``f`` on slot 0 ``x`` (float64, holding an
    infinity) against the outlier's result ``out``."""
    import numpy as np

    from xamt.triage.reference import limit_at_infinity

    def run(vals):
        with np.errstate(all="ignore"):
            return np.asarray(f(vals[0]), np.float64)
    return limit_at_infinity(run, {0: x}, run({0: x}), np.asarray(out, np.float32))


def test_a_reference_with_no_limit_at_the_infinite_input_is_told():
    """scipy's beta(0.7265, -inf) is inf; JAX's NaN was blamed. Between its poles beta takes
    values of either sign as b goes to -inf: it has no limit, and NaN is as right."""
    import numpy as np
    import scipy.special as sp

    x = np.array([-np.inf, 2.0])
    assert _limit_side(lambda b: sp.beta(0.7265, b), x, [np.nan, sp.beta(0.7265, 2.0)]) == "none"


def test_a_reference_that_gives_up_at_a_huge_input_is_asked_for_its_limit_there():
    """scipy's airy is NaN from 1e8 on, where Ai(x) underflowed to 0 long before; torch's
    0 at 3.4e38 was blamed. The stand-ins replace finite inputs beyond the largest of them only
    when asked (``huge``): at an infinity's place they say nothing of a finite value."""
    import numpy as np
    import scipy.special as sp

    ai = lambda v: sp.airy(v)[0]  # noqa: E731
    x = np.array([3.4028234663852886e38, 1.0])
    assert np.isnan(ai(x[0]))
    from xamt.triage.reference import limit_at_infinity

    def side(f, out, huge):
        def run(vals):
            with np.errstate(all="ignore"):
                return np.asarray(f(vals[0]), np.float64)
        return limit_at_infinity(run, {0: x}, run({0: x}), np.asarray(out, np.float32), huge=huge)

    assert side(ai, [0.0, ai(1.0)], huge=True) == "outlier"
    assert side(ai, [0.0, ai(1.0)], huge=False) == "unknown"
    # a number off the limit is not the reference's limit: the finding stays
    assert side(ai, [1.0, ai(1.0)], huge=True) == "unknown"


def test_a_limit_the_reference_takes_keeps_the_finding():
    """x * ndtr(x) (gelu) at +inf is +inf, arctan at +inf is pi/2: a NaN there is the outlier's bug."""
    import numpy as np
    import scipy.special as sp

    x = np.array([np.inf, 1.0])
    gelu = lambda v: v * sp.ndtr(v)  # noqa: E731
    assert _limit_side(gelu, x, [np.nan, gelu(1.0)]) == "reference"
    assert _limit_side(np.arctan, x, [np.nan, np.arctan(1.0)]) == "reference"
    # stand-ins that overflow in float64 too (cosh(1e4) is inf already): still a limit
    assert _limit_side(np.cosh, x, [np.nan, np.cosh(1.0)]) == "reference"
    # Bessel's y0 tends to 0 changing sign; a reference that says 0 at inf and gives up (NaN) at
    # the largest stand-ins keeps the finding of TensorFlow's NaN for bessel_y0(inf)
    y0 = lambda v: np.where(np.isinf(v), 0.0, np.where(v > 1e12, np.nan, sp.y0(v)))  # noqa: E731
    assert _limit_side(y0, x, [np.nan, sp.y0(1.0)]) == "reference"


def test_a_reference_nan_at_the_infinity_whose_limit_the_outlier_gives_is_told():
    """scipy's genpareto.entropy(c=inf) is NaN (it refuses a non-finite c) where torch gives inf,
    the limit of log(scale) + c + 1: the outlier is the side that holds the limit."""
    import numpy as np

    entropy = lambda c: np.where(np.isinf(c), np.nan, c + 1.0)  # noqa: E731
    assert _limit_side(entropy, np.array([np.inf]), [np.inf]) == "outlier"


def test_no_infinite_input_or_no_nan_split_tells_nothing():
    import numpy as np

    assert _limit_side(np.exp, np.array([1.0, 2.0]), [np.nan, 1.0]) == "unknown"
    assert _limit_side(np.exp, np.array([np.inf]), [1.0]) == "unknown"  # both numbers: no NaN split
    # 1 / log(x) tends to 0 too slowly to tell from the stand-ins
    assert _limit_side(lambda v: 1.0 / np.log(v), np.array([np.inf]), [np.nan]) == "unknown"


def test_an_outlier_holding_the_references_limit_at_a_huge_input_is_not_blamed(tmp_path, monkeypatch):
    """Two members give up (NaN) at 3.4e38 where the third gives exp(-x)'s limit, 0: that is the
    float64 reference's own limit there, not the third's bug. A third giving 1 stays a finding."""
    import numpy as np

    def decaying(third):
        def compute(m, x):
            with np.errstate(all="ignore"):
                return third(x) if m == 2 else np.where(np.abs(x) > 1e10, np.nan, np.exp(-np.abs(x)))
        return compute

    values = {0: np.array([3.4028235e38], np.float32)}
    t, group, executor, seen = _three(tmp_path, monkeypatch, "decay", decaying(lambda x: np.exp(-np.abs(x))))
    _, out = _process(t, group, executor, values, 2)
    assert not seen and "limit toward the huge input" in out.dropped, (out.dropped, seen)
    t, group, executor, seen = _three(tmp_path, monkeypatch, "decay", decaying(lambda x: np.ones_like(x)))
    _process(t, group, executor, values, 2)
    assert seen.get("outlier") == 2, seen


def _ppf_group(t, group):
    """``group`` as a percent point function whose members pass slot 0 as ``q``."""
    for m in group.members:
        m.plan = NS(args=[NS(slot=0, param="q")], init_args=[])
    group.canonical = "uniform_ppf"
    return group


def test_a_nan_outside_a_documented_domain_is_never_blamed(tmp_path, monkeypatch):
    """scipy's uniform.ppf(-1.4e-45) is NaN, as documented (q in [0, 1]); torch computes a
    number and JAX, flushing the subnormal, too. The majority had blamed scipy."""
    import numpy as np

    def compute(m, x):
        with np.errstate(invalid="ignore"):
            return np.where((x < 0) | (x > 1), np.nan, x) if m == 0 else x.copy()

    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)
    values = {0: np.array([-1.4e-45, 0.5], np.float32)}
    _, out = _process(t, group, executor, values, 0)
    assert seen.get("outlier") == 0, (out.dropped, seen)  # without the domain: scipy is blamed
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)
    _ppf_group(t, group)
    _, out = _process(t, group, executor, values, 0)
    assert not seen and "outside the documented domain" in out.dropped, (out.dropped, seen)


def test_a_number_outside_a_documented_domain_is_a_validation_finding(tmp_path, monkeypatch):
    """torch's icdf takes q = -inf and returns a number where scipy and JAX return NaN: it accepts
    an input outside the domain (one validation finding of its namespace), not an infinity's NaN
    bug and not a divergence without a limit."""
    import numpy as np

    from xamt.findings import FindingClass

    def compute(m, x):
        with np.errstate(invalid="ignore"):
            return x * 2.0 if m == 2 else np.where((x < 0) | (x > 1), np.nan, x * 2.0)

    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)
    _ppf_group(t, group)
    _, out = _process(t, group, executor, {0: np.array([-np.inf, 0.5], np.float32)}, 2)
    assert seen.get("outlier") == 2 and seen["cls"] == FindingClass.VALIDATION, (out.dropped, seen)
    assert seen["documented_domain"] is True  # a policy may tell a documented domain from the others' NaN
    # no documented domain: the others' NaN alone says "outside", and the evidence says so
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)
    _, out = _process(t, group, executor, {0: np.array([-0.5, 0.5], np.float32)}, 2)
    assert seen.get("outlier") == 2 and seen["cls"] == FindingClass.VALIDATION, (out.dropped, seen)
    assert seen["documented_domain"] is False


def test_a_number_within_rounding_of_a_domains_edge_that_is_the_value_at_the_edge_is_not_blamed(tmp_path,
                                                                                                 monkeypatch):
    """torch's Laplace.icdf(-1.2e-38) in float32 computes q - 0.5 = -0.5, its value at q = 0,
    where scipy's float64 check gives NaN (two readers of campaign 31: no bug). A q farther out,
    or a number that is not the outlier's value at the edge, stays a validation finding."""
    import numpy as np

    from xamt.findings import FindingClass

    def compute(m, x):
        centred = (x - np.float32(0.5)).astype(np.float32)  # rounds -1.2e-38 - 0.5 to -0.5
        with np.errstate(invalid="ignore"):
            return centred * 2 if m == 2 else np.where((x < 0) | (x > 1), np.nan, centred * 2)

    tiny = np.array([-1.1754944e-38, 0.5], np.float32)
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)
    _ppf_group(t, group)
    _, out = _process(t, group, executor, {0: tiny}, 2)
    assert not seen and "rounding of the edge" in out.dropped, (out.dropped, seen)
    for q in (-1e-3, -2e-7):  # beyond float32's rounding of 0 (eps 1.2e-7)
        t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)
        _ppf_group(t, group)
        _, out = _process(t, group, executor, {0: np.array([q, 0.5], np.float32)}, 2)
        assert seen.get("outlier") == 2 and seen["cls"] == FindingClass.VALIDATION, (q, out.dropped, seen)

    def apart(m, x):  # a number, but not its value at the edge
        with np.errstate(invalid="ignore"):
            return np.where(x < 0, 7.0, x).astype(np.float32) if m == 2 else np.where(x < 0, np.nan, x)

    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", apart)
    _ppf_group(t, group)
    _, out = _process(t, group, executor, {0: tiny}, 2)
    assert seen.get("outlier") == 2 and seen["cls"] == FindingClass.VALIDATION, (out.dropped, seen)


def test_two_numbers_for_an_input_wholly_outside_a_documented_domain_are_never_blamed(tmp_path, monkeypatch):
    """JAX's cauchy.ppf(1 + 1 ulp) is -2.49e6 compiled and -1.92e6 eager, near a pole: q > 1 has
    no documented value, so neither number is wrong. A divergence at an input inside the domain
    stays a finding, and so does one where the domain's bound is not the group's."""
    import numpy as np

    def compute(m, x):
        with np.errstate(invalid="ignore"):
            return np.where((x < 0) | (x > 1), x * 3.0, x * 2.0) if m == 2 else x * 2.0

    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)
    _ppf_group(t, group)
    _, out = _process(t, group, executor, {0: np.array([1.0000001, -0.5], np.float32)}, 2)
    assert not seen and "wholly outside the documented domain" in out.dropped, (out.dropped, seen)

    def inside(m, x):
        return np.where(x == 0.5, x * 3.0, x * 2.0) if m == 2 else x * 2.0

    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", inside)
    _ppf_group(t, group)
    _, out = _process(t, group, executor, {0: np.array([1.5, 0.5], np.float32)}, 2)
    assert seen.get("outlier") == 2, (out.dropped, seen)
    t, group, executor, seen = _three(tmp_path, monkeypatch, "ppf", compute)  # no domain stated
    _, out = _process(t, group, executor, {0: np.array([1.0000001, -0.5], np.float32)}, 2)
    assert seen.get("outlier") == 2, (out.dropped, seen)


def test_a_reference_no_majority_chose_is_the_lineage_s_other_side(tmp_path, monkeypatch):
    """Only the pivot rank chose the reference: the finding's lineage names its side too
    (``either``), so a later finding blaming that side can fold into it (dedup.same_cause)."""
    import numpy as np

    from xamt.findings import FindingClass
    from xamt.triage.reference import NO_MAJORITY

    t, group, _, _ = _three(tmp_path, monkeypatch, "top", lambda m, x: x)
    values = {0: np.array([1.0], np.float32)}
    lineage = t._lineage(group, 2, values, FindingClass.NAN, tied=0)
    assert lineage["library"] == "other" and lineage["either"]["library"] == "numpy", lineage
    assert "either" not in t._lineage(group, 2, values, FindingClass.NAN)
    assert NO_MAJORITY in t._reference(group, values, [0, 2], {0: np.float32(1.0), 2: np.float32(2.0)})[2]


def test_domains_load_from_triage_toml_and_a_broken_entry_says_where(tmp_path):
    import numpy as np

    from xamt.triage.domain import load_domains

    ppf = next(d for d in load_domains() if d.suffix == "_ppf")
    assert ppf.broken_by(np.array([0.5, -1e-45])) and ppf.broken_by(1.5)
    assert not ppf.broken_by(np.array([0.0, 1.0, np.nan])) and not ppf.broken_by(np.array([1, 0], np.int32))
    assert ppf.holds_nothing_in(np.array([1.5, np.nan, -2.0])) and ppf.holds_nothing_in(-0.5)
    assert not ppf.holds_nothing_in(np.array([1.5, 0.5])) and not ppf.holds_nothing_in(np.array([np.nan]))
    betaln = next(d for d in load_domains() if d.suffix == "betaln")  # positive parameters
    assert betaln.broken_by(np.array([0.0], np.float32)) and betaln.broken_by(-1.0)
    assert not betaln.broken_by(np.array([1e-45, 3.4e38], np.float32))
    _rejects(load_domains, tmp_path,
             '[[domain]]\nsuffix = "_ppf"\nparams = ["q"]\nlow = 1.0\nhigh = 0.0\nreason = "x"\n', "low <= high")
    _rejects(load_domains, tmp_path, '[[domain]]\nsuffix = "_ppf"\n', "entry 1")


def test_members_whose_result_is_the_outlier_s_are_told_apart(tmp_path, monkeypatch):
    """jax.scipy.special.zeta returned lax.zeta's NaN and was listed beside the reference; the
    record marks such members (``same_as_outlier``)."""
    import numpy as np

    from xamt.exec.group import MemberResult

    t, group, _, _ = _three(tmp_path, monkeypatch, "zeta", lambda m, x: x)
    nan, one = np.array([np.nan, 1.0], np.float32), np.array([2.0, 1.0], np.float32)
    results = [MemberResult("ok", value=one), MemberResult("ok", value=nan.copy()), MemberResult("ok", value=nan)]
    assert t._alike(group, {0: one}, [0, 1, 2], results, 2) == {1}
    results[1] = MemberResult("raised", error_type="ValueError")
    assert t._alike(group, {0: one}, [0, 1, 2], results, 2) == set()


def test_a_float64_run_whose_output_shape_differs_is_no_reference():
    """keras.ops.view(float32[1, 2], float64) reinterprets the pair as one float64 of shape
    (1, 1); on an upcast float64 input it reinterprets nothing and keeps (1, 2). Such a run is no
    float64 evaluation of the call: the majority decides instead."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.triage.reference import ReferenceChooser, same_shapes

    assert same_shapes(np.zeros((1, 2)), np.zeros((1, 2), np.float32)) and same_shapes(np.zeros(2), None)
    assert not same_shapes(np.zeros((1, 2)), np.zeros((1, 1)))
    assert not same_shapes((np.zeros(2), np.zeros(2)), np.zeros(2))
    group = NS(relation="cross_library", tolerance=None,
               members=[_member("numpy", "view"), _member("torch", "view"), _member("jax", "view")])
    bits = np.array([[1.0, 1.0]], np.float32).view(np.float64)

    def run(group, values, mis):
        return [MemberResult("ok", value=values[0].view(np.float64)) for _ in mis]
    chooser = ReferenceChooser({}, ("function",), run)
    values = {0: np.array([[1.0, 1.0]], np.float32)}
    outputs = {0: bits, 1: bits, 2: np.zeros((1, 1))}
    mi, _, label, up = chooser.choose(group, values, [0, 1, 2], outputs)
    assert up is None and "float64" not in label and mi in (0, 1), label


def test_two_members_that_differ_in_shape_take_the_shape_the_others_give_in_float64():
    """Campaign 31: on a complex input only TensorFlow's numpy isposinf (a scalar False) and
    Keras's (the input's shape) returned; numpy, JAX and torch refuse complex. The float64 run
    of TensorFlow's repeated its scalar, and Keras was blamed. The others, run on the input in
    float64, give the input's shape: TensorFlow's member is the outlier."""
    import numpy as np

    from xamt.exec.group import MemberResult
    from xamt.triage.reference import ReferenceChooser

    libs = ("numpy", "jax", "torch", "tensorflow", "keras")
    members = [NS(library=lib, qualname=f"{lib}.isposinf", call="function", device=None, implements=[])
               for lib in libs]
    group = NS(members=members, tolerance=None, slots=[NS(index=0, role="tensor")])
    x = np.array([[0.9 - 0.03j]], np.complex64)
    outputs = {3: np.array(False), 4: np.array([[False]])}
    ran = []

    def run(group, values, mis):
        ran.append((tuple(mis), values[0].dtype.name))
        if values[0].dtype.kind == "c":  # a float64 run of either side repeats its own shape
            return [MemberResult("ok", value=outputs[m]) for m in mis]
        return [MemberResult("ok", value=np.isposinf(values[0])) for _ in mis]
    adapters = {lib: NS(pivot_rank=r) for lib, r in zip(libs, (0, 10, 20, 30, 40))}
    chooser = ReferenceChooser(adapters, ("function",), run)
    mi, value, label, _ = chooser.choose(group, {0: x}, [3, 4], outputs)
    assert mi == 4 and value.shape == (1, 1) and "keeps the shape" in label, label
    assert ran[0] == ((0, 1, 2), "float64")

    # the others agreeing with neither side, or with both, decide nothing
    same = {3: np.array([[False]]), 4: np.array([[True]])}
    assert chooser.shape_side(group, {0: x}, [3, 4], same) is None
    # a majority of the implementations that returned settles it without the others
    outputs3 = {2: np.array([[False]]), 3: np.array(False), 4: np.array([[False]])}
    assert chooser.shape_side(group, {0: x}, [2, 3, 4], outputs3) is None
