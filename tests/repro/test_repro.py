from pathlib import Path

import numpy as np
import pytest

from xamt.libraries.registry import Registry
from xamt.matching.model import ArgSpec, ArgumentPlan, Member
from xamt.repro import ReproSpec, decode_inputs, encode_inputs, render, verify, write


ROOT = Path(__file__).resolve().parents[2]


def fn_member(lib, target, tensor_param="a", axis_kw="axis"):
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param=tensor_param, position=0, transform="tensor"),
                              ArgSpec(slot=1, param=axis_kw, keyword=axis_kw)])
    return Member(library=lib, qualname=target.replace(":", "."), target=target, kind="function",
                  call="function", plan=plan)


def adapters():
    return {a.name: a for a in Registry()}


def test_inputs_round_trip_bit_exact():
    import ml_dtypes

    vals = {0: np.array([np.nan, -0.0, 1e-45, np.inf], np.float32), 1: 1, 2: (0, 1),
            3: np.dtype("int8"), 4: [np.arange(3), np.ones((2, 2), np.complex64)],
            5: np.array([1.5], ml_dtypes.bfloat16), 6: 2.5, 7: None}
    back = decode_inputs(encode_inputs(vals))
    assert back[0].tobytes() == vals[0].tobytes() and back[1] == 1 and back[2] == (0, 1)
    assert back[3] == np.dtype("int8") and back[4][1].dtype == np.complex64
    assert back[5].dtype == vals[5].dtype and back[6] == 2.5 and back[7] is None


def spec_for(members, expect="value", outlier=1, reference=0):
    ad = adapters()
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], np.float32)
    vals = {0: x, 1: 1}
    calls = [(m.qualname, m, ad[m.library], vals) for m in members]
    return ReproSpec(title="test finding", header="numbers", calls=calls, normalisation=None,
                     expect=expect, outlier=outlier, reference=reference, rtol=1.3e-6, atol=1e-5), vals


def test_script_reproduces_a_real_difference_and_not_an_agreement(tmp_path):
    spec, vals = spec_for([fn_member("numpy", "numpy:sum"), fn_member("numpy", "numpy:prod")])
    path = write(tmp_path / "diff", render(spec), [vals])
    r = verify(path, expect="value", timeout=120)
    assert r.reproduced and r.returncode == 1, r.output_tail
    assert "numpy.prod" in r.output_tail and "REPRODUCED" in r.output_tail

    spec, vals = spec_for([fn_member("numpy", "numpy:sum"), fn_member("numpy", "numpy:sum")])
    path = write(tmp_path / "same", render(spec), [vals])
    r = verify(path, expect="value", timeout=120)
    assert not r.reproduced and r.returncode == 0, r.output_tail


def test_script_calls_torch_literally_and_needs_no_xamt(tmp_path):
    pytest.importorskip("torch")
    spec, vals = spec_for([fn_member("numpy", "numpy:sum"), fn_member("torch", "torch:sum", "input", "dim")])
    text = render(spec)
    assert "torch.sum(G_torch.from_numpy(V[0]), dim=1)" in text
    assert "import xamt" not in text and "from xamt" not in text
    path = write(tmp_path / "t", text, [vals])
    r = verify(path, expect="value", timeout=180, env={"PYTHONPATH": ""})
    assert r.returncode == 0, r.output_tail  # numpy and torch agree on this input


def test_status_expectation(tmp_path):
    bad = fn_member("numpy", "numpy:sum")
    bad.plan.args[1] = ArgSpec(slot=None, param="axis", keyword="axis", value=7)
    spec, vals = spec_for([fn_member("numpy", "numpy:sum"), bad], expect="status")
    path = write(tmp_path / "s", render(spec), [vals])
    r = verify(path, expect="status", timeout=120)
    assert r.reproduced, r.output_tail


def test_hang_reproducer_ends_itself_with_sigalrm(tmp_path):
    import signal
    import time

    spec, vals = spec_for([fn_member("numpy", "numpy:sum"),
                           fn_member("numpy", "tests.fuzz.fakelib:sum_hanging_on_nan")], expect="crash")
    vals[0][0, 0] = np.nan
    spec.hang_limit = 2
    path = write(tmp_path / "h", render(spec), [vals])
    start = time.monotonic()
    r = verify(path, expect="crash", timeout=60, crash_signal=0, env={"PYTHONPATH": str(ROOT)})
    assert r.reproduced and r.returncode == -signal.SIGALRM and not r.timed_out, r.output_tail
    assert time.monotonic() - start < 30 and "expected to hang" in r.output_tail
    # without a NaN the same call returns: the script reaches its end and does not reproduce
    vals[0][0, 0] = 1.0
    path = write(tmp_path / "h2", render(spec), [vals])
    assert not verify(path, expect="crash", timeout=60, crash_signal=0,
                      env={"PYTHONPATH": str(ROOT)}).reproduced


def test_method_only_groups_import_their_library_and_a_broken_script_never_counts(tmp_path):
    pytest.importorskip("torch")
    ad = adapters()
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param="self", position=0, transform="tensor")])
    m = Member(library="torch", qualname="torch.Tensor.abs", target="torch:Tensor.abs", kind="method",
               call="method", plan=plan, receiver_slot=0)
    vals = {0: np.array([-1.0, 2.0], np.float32)}
    spec = ReproSpec(title="t", header="h", calls=[("a", m, ad["torch"], vals), ("b", m, ad["torch"], vals)],
                     normalisation=None, expect="value", outlier=1, reference=0)
    text = render(spec)
    assert "    import torch" in text
    compile(text, "repro.py", "exec")
    path = write(tmp_path / "m", text, [vals])
    assert verify(path, expect="value", timeout=120).returncode == 0
    path.write_text("try:\nexcept ImportError:\n    pass\n")  # a script Python cannot compile exits 1
    assert not verify(path, expect="value", timeout=60).reproduced


def test_extraction_refuses_source_that_changed_since_import(tmp_path, monkeypatch):
    # a campaign keeps running while Xamt's files are edited: the loaded code and the file on
    # disk no longer match, and copying the lines would give a reproducer of other code
    import importlib
    import sys

    from xamt.standalone import ExtractError, standalone_source

    mod = tmp_path / "stale_mod.py"
    mod.write_text("def first(x):\n    return x + 1\n\n\ndef second(x):\n    return first(x) * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    stale = importlib.import_module("stale_mod")
    try:
        assert "def second" in standalone_source(stale.second)
        mod.write_text("import os\n\n\n" + mod.read_text())  # three lines inserted on top
        with pytest.raises(ExtractError, match="changed since it was imported"):
            standalone_source(stale.second)
    finally:
        sys.modules.pop("stale_mod", None)


def test_extraction_refuses_a_function_that_imports_xamt_in_its_body(tmp_path, monkeypatch):
    # copied as is, such a function would need Xamt in the reproducer (numpy's out= helper did)
    import importlib
    import sys

    from xamt.standalone import ExtractError, standalone_source

    (tmp_path / "inner_import_mod.py").write_text(
        "def helper(ref):\n    from xamt.libraries.base import resolve_ref\n\n    return resolve_ref(ref)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(ExtractError, match="imports xamt.libraries.base in its body"):
            standalone_source(importlib.import_module("inner_import_mod").helper)
    finally:
        sys.modules.pop("inner_import_mod", None)


def test_verify_finds_a_script_given_relative_to_the_working_directory(tmp_path, monkeypatch):
    # `make fuzz` uses `--out xamt-out`: reproducer paths are relative to the working directory,
    # while the script runs in its own folder
    from xamt.repro import REPRODUCED, verify

    folder = tmp_path / "out" / "findings" / "value-x"
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text(f"import sys\nprint('REPRODUCED')\nsys.exit({REPRODUCED})\n")
    monkeypatch.chdir(tmp_path)
    result = verify("out/findings/value-x/repro.py", expect="value", timeout=60)
    assert result.reproduced, result.output_tail


def test_constructed_member_is_written_as_construct_then_method(tmp_path):
    """A distribution method (``constructed`` call style) reads as
    ``torch.distributions.Normal(loc=..., ...).log_prob(value)`` in the reproducer."""
    pytest.importorskip("torch")
    ad = adapters()
    plan = ArgumentPlan(args=[ArgSpec(slot=0, param="value", position=0, transform="tensor")],
                        init_args=[ArgSpec(slot=1, param="loc", keyword="loc"),
                                   ArgSpec(slot=None, param="scale", keyword="scale", value=0.5)])
    m = Member(library="torch", qualname="torch.distributions.Normal.log_prob",
               target="torch.distributions:Normal.log_prob", kind="constructed",
               call="constructed", plan=plan)
    vals = {0: np.array([0.5, 2.0], np.float32), 1: 1.0}
    spec = ReproSpec(title="t", header="h", calls=[("a", m, ad["torch"], vals), ("b", m, ad["torch"], vals)],
                     normalisation=None, expect="value", outlier=1, reference=0)
    text = render(spec)
    assert "torch.distributions.Normal(loc=V[1], scale=0.5).log_prob(" in text
    path = write(tmp_path / "c", text, [vals])
    assert verify(path, expect="value", timeout=120).returncode == 0


def test_a_fixed_sequence_is_passed_as_a_tuple(tmp_path):
    """A fixed axis pair read back from the registry is a JSON list; the script passes a tuple,
    as the worker does (numpy.linalg.norm takes two axes only as a tuple)."""
    def norm(ord_):
        plan = ArgumentPlan(args=[ArgSpec(slot=0, param="x", position=0, transform="tensor"),
                                  ArgSpec(slot=None, param="ord", keyword="ord", value=ord_),
                                  ArgSpec(slot=None, param="axis", keyword="axis", value=[-2, -1],
                                          transform="tuple")])
        return Member(library="numpy", qualname="numpy.linalg.norm", target="numpy.linalg:norm",
                      kind="function", call="function", plan=plan)
    spec, vals = spec_for([norm("nuc"), norm("fro")])
    text = render(spec)
    assert "axis=(-2, -1)" in text
    r = verify(write(tmp_path / "n", text, [vals]), expect="value", timeout=120)
    assert r.reproduced and r.returncode == 1, r.output_tail  # both ran; the norms differ


def test_a_recorded_reference_stands_in_for_one_that_cannot_share_the_outliers_process(tmp_path):
    """A member in another interpreter (a venv library) is compared with the reference's output
    as the fuzzer recorded it: the script says where the value came from, and reproduces only
    while the outlier still differs from it."""
    from xamt.repro import spec_inputs

    spec, vals = spec_for([fn_member("numpy", "numpy:sum")], outlier=0, reference=None)
    row_sums = np.array([6.0, 15.5], np.float32)
    for recorded, want in ((row_sums + 1, True), (row_sums, False)):
        rec = ReproSpec(**{**spec.__dict__, "recorded": ("numpy.sum [numpy 2, recorded]", "ok", recorded, None)})
        path = write(tmp_path / str(want), render(rec), spec_inputs(rec))
        r = verify(path, expect="value", timeout=120)
        assert r.reproduced is want, r.output_tail
        assert "recorded]: float32[2]" in r.output_tail
    # a status finding against a recorded refusal: the outlier returns where the reference raised
    st = ReproSpec(**{**spec.__dict__, "expect": "status",
                      "recorded": ("ref [recorded]", "raised", None, "numpy.exceptions.AxisError")})
    assert len(spec_inputs(st)) == 1
    r = verify(write(tmp_path / "status", render(st), spec_inputs(st)), expect="status", timeout=120)
    assert r.reproduced and "raised numpy.exceptions.AxisError" in r.output_tail, r.output_tail
