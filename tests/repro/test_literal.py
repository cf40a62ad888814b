"""Literal reproducers (xamt/literal.py): the input written out, public calls, a few lines."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests.groups.helpers import member
from xamt import literal
from xamt.libraries.registry import Registry

X = [(0, "x", 0, None, True)]


def _adapter(name):
    reg = Registry()
    if name not in reg:
        pytest.skip(f"{name} is not installed here")
    return reg.get(name)


def _run(tmp_path, text):
    path = tmp_path / "repro.py"
    path.write_text(text)
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)


def test_array_literals_give_the_same_bits_back():
    for a in (np.array([[1.5, np.nan], [-np.inf, -0.0]], np.float32), np.array(1.4e-45, np.float32),
              np.array([np.iinfo(np.int32).min, 7], np.int32), np.zeros((0, 3), np.float64),
              np.array([complex(np.nan, 1.0), 2j], np.complex64), np.array([True, False])):
        back = eval(literal.array_literal(a), {"np": np})
        assert back.dtype == a.dtype and back.shape == a.shape
        assert back.tobytes() == a.tobytes()


def test_a_value_finding_is_a_short_script_that_reproduces(tmp_path):
    np_ad = _adapter("numpy")
    x = np.array([[0.25, -1.0], [np.inf, 4.0]], np.float32)
    # numpy.sqrt against numpy.cbrt: they differ wherever x is not 0, 1 or inf
    out = literal.LiteralCall("numpy.sqrt", member("numpy", "numpy.sqrt", "numpy:sqrt", X), np_ad, {0: x})
    ref = literal.LiteralCall("numpy.cbrt", member("numpy", "numpy.cbrt", "numpy:cbrt", X), np_ad, {0: x})
    text = literal.render("Xamt finding: value", out, ref, expect="value", rtol=1e-5, atol=1e-8)
    assert text is not None and text.count("\n") <= literal.MAX_LINES
    assert "np.array([[0.25, -1.0], [np.inf, 4.0]], dtype=np.float32)" in text
    assert "numpy.sqrt(x0)" in text and "xamt" not in text.split('"""')[-1]
    done = _run(tmp_path, text)
    assert done.returncode == 1 and "REPRODUCED" in done.stdout, done.stdout + done.stderr
    # the same call against itself does not reproduce
    same = literal.render("t", out, out, expect="value")
    done = _run(tmp_path, same)
    assert done.returncode == 0 and "NOT REPRODUCED" in done.stdout


def test_torch_and_a_status_finding(tmp_path):
    np_ad, torch_ad = _adapter("numpy"), _adapter("torch")
    x = np.array([1.0, 2.0], np.float64)
    out = literal.LiteralCall("torch.linalg.inv", member("torch", "torch.linalg.inv", "torch.linalg:inv", X),
                              torch_ad, {0: x})
    ref = literal.LiteralCall("numpy.abs", member("numpy", "numpy.abs", "numpy:abs", X), np_ad, {0: x})
    text = literal.render("status", out, ref, expect="status")
    assert "torch.linalg.inv(torch.from_numpy(x0))" in text
    done = _run(tmp_path, text)
    assert done.returncode == 1 and "REPRODUCED" in done.stdout, done.stdout + done.stderr


def test_what_has_no_literal_form_keeps_the_msgpack_one():
    np_ad = _adapter("numpy")
    m = member("numpy", "numpy.abs", "numpy:abs", X)
    big = literal.LiteralCall("a", m, np_ad, {0: np.ones(literal.MAX_ELEMENTS + 1, np.float32)})
    assert literal.render("t", big, big, expect="value") is None
    import ml_dtypes

    bf = literal.LiteralCall("a", m, np_ad, {0: np.ones(3, ml_dtypes.bfloat16)})
    assert literal.render("t", bf, bf, expect="value") is None
    small = literal.LiteralCall("a", m, np_ad, {0: np.ones(3, np.float32)})
    assert literal.render("t", small, small, expect="value", normalisation="no_such") is None
    assert literal.render("t", small, None, expect="value") is None


def test_a_normalised_group_compares_as_the_fuzzer_did(tmp_path):
    """numpy.sort against numpy.flip of one vector: unequal as they are, equal once sorted
    (the group's `sort` normaliser): the literal script normalises both, so it does not
    reproduce; numpy.sort against numpy.negative still differs after sorting."""
    np_ad = _adapter("numpy")
    x = np.array([3.0, 1.0, 2.0], np.float64)
    srt = literal.LiteralCall("numpy.sort", member("numpy", "numpy.sort", "numpy:sort", X), np_ad, {0: x})
    flip = literal.LiteralCall("numpy.flip", member("numpy", "numpy.flip", "numpy:flip", X), np_ad, {0: x})
    neg = literal.LiteralCall("numpy.negative", member("numpy", "numpy.negative", "numpy:negative", X),
                              np_ad, {0: x})
    text = literal.render("t", flip, srt, expect="value", normalisation="first|sort")
    assert "def norm(v)" in text and text.count("\n") <= literal.MAX_LINES
    assert _run(tmp_path, text).returncode == 0
    done = _run(tmp_path, literal.render("t", neg, srt, expect="value", normalisation="sort"))
    assert done.returncode == 1 and "REPRODUCED" in done.stdout


def test_every_normaliser_has_a_literal_form_that_agrees_with_it():
    from xamt.exec.normalise import LITERAL_FORMS, NORMALISERS

    assert set(LITERAL_FORMS) == set(NORMALISERS)
    rng = np.random.default_rng(0)
    cases = [(rng.standard_normal((2, 3)),), (rng.standard_normal((2, 3)), rng.standard_normal((2, 3))),
             (np.array([3, 1, 2], np.int32), np.array([1.0, 2.0, 0.5]))]
    for name, fn in NORMALISERS.items():
        for case in cases:
            want = fn(case if len(case) > 1 else case[0])
            want = [np.asarray(a) for a in (want if isinstance(want, tuple) else [want])]
            got = eval(LITERAL_FORMS[name].format(v="v"), {"np": np}, {"v": list(case)})
            assert len(got) == len(want) and all(
                np.allclose(np.asarray(g), w) and np.shape(g) == w.shape for g, w in zip(got, want)), name


def test_non_finite_arguments_are_written_so_python_reads_them_back(tmp_path):
    """A plan's ``p=inf`` was written ``p=inf``: a NameError the script then took for the
    library's refusal, so a status finding "reproduced" without any library call failing."""
    from xamt.repro import _args_code

    code = _args_code([float("inf"), (1.0, float("-inf"))], {"p": float("nan"), "q": [2.0]})
    assert code == "float('inf'), (1.0, float('-inf')), p=float('nan'), q=[2.0]"
    assert eval(f"(lambda *a, **k: (a, k))({code})")[1]["q"] == [2.0]
    # a script's own NameError is no answer of a library's: it does not reproduce
    np_ad = _adapter("numpy")
    x = np.array([1.0], np.float64)
    ok = literal.LiteralCall("numpy.abs", member("numpy", "numpy.abs", "numpy:abs", X), np_ad, {0: x})
    text = literal.render("t", ok, ok, expect="status").replace("numpy.abs(x0)", "numpy.abs(undefined_name)", 1)
    done = _run(tmp_path, text)
    assert "REPRODUCED\n" not in done.stdout.replace("NOT REPRODUCED", "")


def test_no_literal_form_says_why():
    np_ad = _adapter("numpy")
    small = literal.LiteralCall("numpy.sqrt", member("numpy", "numpy.sqrt", "numpy:sqrt", X), np_ad,
                                {0: np.ones(2, np.float32)})
    big = literal.LiteralCall("numpy.sqrt", small.member, np_ad, {0: np.ones(300, np.float32)})
    assert literal.render_or_why("t", big, big, expect="value") == (None, "more than 256 input elements")
    assert literal.render_or_why("t", small, None, expect="value") == (None, "no reference member to call")
    text, why = literal.render_or_why("t", small, small, expect="value")
    assert text is not None and why == ""


def test_an_outlier_against_its_own_float64_evaluation_gets_a_literal_script(tmp_path):
    """scipy.fft.dctn in float32 overflows to inf where its float64 run is finite: the reference
    is the outlier itself on float64 inputs. Those findings kept the msgpack form (stop 31's
    campaign: 8 of its 22 msgpack reproducers)."""
    from types import SimpleNamespace as NS

    from xamt.oracle import ErrorKinds
    from xamt.triage.pipeline import Triage

    np_ad = _adapter("numpy")
    m = member("numpy", "numpy.exp", "numpy:exp", X)
    group = NS(key="t:exp", relation="cross_library", members=[m])
    t = Triage(executor=None, adapters={"numpy": np_ad}, kinds=ErrorKinds.load(), out_dir=tmp_path, verify=False)
    x = np.array([100.0, 1.0], np.float32)
    spec = NS(title="Xamt finding: value", header="group t:exp", expect="value", rtol=1e-5, atol=1e-8,
              error_type=None, hang_limit=None, normalisation=None)
    finding = NS(outlier_api="numpy.exp")
    text, why = t._literal(group, finding, 0, 0, {0: x.astype(np.float64)}, {0: x}, spec, {"why": "overflow"})
    assert text is not None, why
    assert "numpy.exp on float64 inputs" in text and "np.float64" in text
    done = _run(tmp_path, text)
    assert done.returncode == 1 and "REPRODUCED" in done.stdout, done.stdout + done.stderr
    # without a float64 evaluation the outlier is no reference of its own
    assert t._literal(group, finding, 0, 0, None, {0: x}, spec, {})[0] is None
