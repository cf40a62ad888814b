from types import SimpleNamespace

import pytest

from xamt.errors import ConfigError
from xamt.oracle import ErrorKinds, SignalKind, judge_statuses


def out(status, error_type=None, message=None):
    return SimpleNamespace(status=status, error_type=error_type, error_message=message)


@pytest.fixture(scope="module")
def kinds():
    return ErrorKinds.load()


@pytest.mark.parametrize(
    "etype,msg",
    [
        ("RuntimeError", "false INTERNAL ASSERT FAILED at \"aten/src/ATen/native/X.cpp\":42"),
        ("InternalError", "Failed to run kernel"),
        ("tensorflow.python.framework.errors_impl.InternalError", "boom"),
        ("JaxRuntimeError", "INTERNAL: during context [pre-optimization]: RET_CHECK failure"),
        ("RuntimeError", "Check failed: dims == 2 (3 vs. 2)"),
        ("SystemError", "error return without exception set"),
    ],
)
def test_internal_errors_are_findings_even_when_all_raise(kinds, etype, msg):
    sig = judge_statuses([out("raised", etype, msg), out("raised", "ValueError", "bad")], kinds)
    assert [(s.kind, s.member) for s in sig] == [(SignalKind.INTERNAL, 0)]


def test_a_library_s_ordinary_refusal_that_reads_internal_is_a_status_divergence(kinds):
    msg = ('Traceback (most recent call last):\n  File "../src/operator/numpy/np_bincount_op.h", line 9\n'
           "MXNetError: Check failed: minlength >= 0")
    assert kinds.classify("MXNetError", msg)[0] == "other"
    msg = ('Traceback (most recent call last):\n  File "../src/operator/numpy/random/./np_pareto_op.h", '
           "line 130\nValueError: Check failed: indicator_host >= 0.0 (-1 vs. 0) : expect a > 0")
    assert kinds.classify("ValueError", msg)[0] == "other"
    sig = judge_statuses([out("raised", "MXNetError", msg), out("ok")], kinds)
    assert [(s.kind, s.member) for s in sig] == [(SignalKind.STATUS, 0)]
    assert kinds.classify("RuntimeError", "Check failed: dims == 2")[0] == "internal"


def test_consistent_ordinary_errors_are_silent(kinds):
    assert judge_statuses([out("raised", "ValueError", "x"), out("raised", "TypeError", "y")], kinds) == []


def test_status_inconsistency(kinds):
    sig = judge_statuses([out("ok"), out("raised", "RuntimeError", "negative dimension"), out("ok")], kinds)
    assert [(s.kind, s.member) for s in sig] == [(SignalKind.STATUS, 1)]


def test_benign_refusal_is_recorded_not_filed(kinds):
    sig = judge_statuses([out("ok"), out("raised", "RuntimeError", '"abs_cpu" not implemented for \'Bool\'')], kinds)
    assert [(s.kind, s.member) for s in sig] == [(SignalKind.STATUS_BENIGN, 1)]
    sig = judge_statuses([out("ok"), out("raised", "AxisError", "axis 5 is out of bounds")], kinds)
    assert sig[0].kind is SignalKind.STATUS_BENIGN
    # torch.distributions with validate_args=True refuses a domain scipy answers with nan
    msg = ("Expected parameter rate (Tensor of shape (1,)) of distribution Poisson(rate: "
           "tensor([-1.])) to satisfy the constraint GreaterThanEq(lower_bound=0.0), but found")
    sig = judge_statuses([out("ok"), out("raised", "ValueError", msg)], kinds)
    assert sig[0].kind is SignalKind.STATUS_BENIGN
    # any other ValueError stays a status finding
    sig = judge_statuses([out("ok"), out("raised", "ValueError", "Expected a bigger array")], kinds)
    assert sig[0].kind is SignalKind.STATUS


@pytest.mark.parametrize("status", ["crashed", "timeout", "oom"])
def test_process_deaths_are_crashes(kinds, status):
    sig = judge_statuses([out("ok"), out(status)], kinds)
    assert [(s.kind, s.member, s.why) for s in sig] == [(SignalKind.CRASH, 1, status)]


def test_unserializable_and_cancelled_say_nothing(kinds):
    assert judge_statuses([out("ok"), out("unserializable"), out("cancelled")], kinds) == []


def test_bad_rule_files_fail_loudly(tmp_path):
    p = tmp_path / "k.toml"
    p.write_text('[[internal]]\nmessage = "("\nwhy = "x"\n')
    with pytest.raises(ConfigError, match="bad regex"):
        ErrorKinds.load(p)
    p.write_text('[[benign]]\nwhy = "no condition"\n')
    with pytest.raises(ConfigError, match="needs"):
        ErrorKinds.load(p)
    p.write_text('[[bengin]]\ntype = "X"\nwhy = "typo"\n')
    with pytest.raises(ConfigError, match="unknown section"):
        ErrorKinds.load(p)
    with pytest.raises(ConfigError, match="cannot read"):
        ErrorKinds.load(tmp_path / "missing.toml")


@pytest.mark.parametrize("etype,message", [
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError",
     "Value for attr 'T' of int64 is not in the list of allowed values: bfloat16, half, float"),
    ("RuntimeError", "result type Float can't be cast to the desired output type Long"),
    ("RuntimeError", "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got Int"),
    ("ValueError", "array must not contain infs or NaNs"),
    ("torch._C._LinAlgError", "linalg.eigh: The algorithm failed to converge"),
    ("InvalidArgumentError", "{{function_node x}} Self-adjoint eigen decomposition was not successful."),
])
def test_unsupported_dtype_refusals_are_benign(etype, message):
    assert ErrorKinds.load().classify(etype, message)[0] == "benign"


def test_a_value_refusal_stays_a_status_divergence():
    # one library rejecting a value another accepts is what the status oracle is for
    kinds = ErrorKinds.load()
    assert kinds.classify("InvalidArgumentError", "Input `a` must have at least 2 dimensions")[0] == "other"
    assert kinds.classify("RuntimeError", "shape mismatch: [1] vs [1, 1]")[0] == "other"


@pytest.mark.parametrize("etype,message", [
    ("ValueError", "mean <= 0"),
    ("RuntimeError", "all elements of input should be between 0 and 1"),
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError",
     "cannot compute Mul as input #1(zero-based) was expected to be a float tensor but is a half tensor [Op:Mul]"),
    ("InvalidArgumentError", "{{function_node __wrapped__Range}} Requires start <= limit when delta > 0: 0/-1"),
    ("ValueError", "reduction axes (-2,) contains out-of-bounds indices for float32[1,1]."),
    ("RuntimeError", "cannot do hardtanh on an unsigned type with negative limits"),
    ("ValueError", "Leading coefficient is zero."),
    ("ValueError", "Too many bins for data range. Cannot create 4 finite-sized bins."),
    ("InvalidArgumentError", "{{function_node __wrapped__UnsortedSegmentMin}} data.shape = [] does "
                             "not start with segment_ids.shape = [1]"),
    # a heading ending in a colon states its reason on the next line (jax.lax.reduce_and, axis -1)
    ("ValueError", "Cannot lower jaxpr with verifier errors:\n\tOut-of-bounds dimension -1, expected to "
                   "be in range [0, 2)\n\t\tat loc(\"jit(reduce_and)/reduce_and\")\nDefine JAX_DUMP_IR_TO"),
])
def test_a_refusal_that_states_its_precondition_is_one(etype, message):
    kinds = ErrorKinds.load()
    assert kinds.precondition(etype, message) is not None
    assert kinds.classify(etype, message)[0] == "other"  # still judged by the status oracle


@pytest.mark.parametrize("etype,message", [
    ("ZeroDivisionError", "float division by zero"),
    ("OverflowError", "(34, 'Numerical result out of range')"),
    ("AttributeError", "EagerTensor object has no attribute 'astype'. If you are looking for numpy"),
    ("ValueError", "The function value at x=0.0 is NaN; solver cannot continue."),
    ("ValueError", "arange: cannot compute length"),
    ("SpecialFunctionError", "scipy.special/pbdv: (memory allocation failed) memory allocation error"),
    # an internal assertion stays internal whatever it says it expected
    ("RuntimeError", "INTERNAL ASSERT FAILED at aten/src/x.cpp:12: expected dim >= 0"),
    # only a heading's next line is read: a later line is a trace, not the refusal's statement
    ("ValueError", "Cannot lower jaxpr with verifier errors:\n\tunknown op\n\tat x >= 0"),
    ("ValueError", "the solver cannot continue\n  expected x >= 0 at step 3"),
])
def test_an_error_from_inside_the_computation_states_no_precondition(etype, message):
    assert ErrorKinds.load().precondition(etype, message) is None


def test_a_rule_may_name_several_types_and_nothing_else(tmp_path):
    p = tmp_path / "k.toml"
    p.write_text('[[precondition]]\ntype = ["ValueError", "TypeError"]\nmessage = "must"\nwhy = "x"\n')
    kinds = ErrorKinds.load(p)
    assert kinds.precondition("TypeError", "x must be 1-D") and not kinds.precondition("KeyError", "x must")
    p.write_text('[[precondition]]\ntype = [1]\nmessage = "must"\nwhy = "x"\n')
    with pytest.raises(ConfigError, match="a list of names"):
        ErrorKinds.load(p)
