"""Compile seconds as the libraries count them (adapters' ``compile_clock_ref``), read around
every member call and carried back in each result (``MemberResult.compile_s``)."""
import dataclasses
import subprocess
import sys
import textwrap

import pytest

from tests.groups.helpers import fake_adapter, unary
from xamt.exec.group import ExecItem, GroupExecutor, member_spec
from xamt.exec.member import run_members
from xamt.inputs import materialise, seed_inputs

CLOCK = "tests.groups.crashers:compile_clock"


def _group():
    return unary("x:abs/generic", [("numpy", "numpy.abs", "numpy:abs"),
                                   ("crashy", "tests.groups.compiling_abs", "tests.groups.crashers:compiling_abs"),
                                   ("numpy", "numpy.linalg.inv", "numpy.linalg:inv")])


def test_each_result_ends_with_the_seconds_compiled_during_its_call(adapters):
    g = _group()
    values = materialise(seed_inputs(g)[0])
    specs = [member_spec(m, adapters) for m in g.members]
    plain = run_members(specs, values, {})
    assert [len(r) for r in plain] == [5, 5, 7]  # no clocks: seconds (a raise: where), then CPU seconds last
    out = run_members(specs, values, {"clocks": [CLOCK]})
    assert [r[0] for r in out] == ["ok", "ok", "raised"]
    assert out[0][-1] == 0.0 and out[1][-1] == pytest.approx(0.25) and out[2][-1] == 0.0
    assert all(r[-2] >= 0.0 for r in out)  # the CPU seconds before the compile seconds


def test_the_executor_reads_its_adapters_clocks_in_the_workers(pool, adapters):
    libs = dict(adapters, crashy=dataclasses.replace(fake_adapter(), compile_clock_ref=CLOCK))
    ex = GroupExecutor(pool, libs, timeout=10)
    assert CLOCK in ex.clocks
    g = _group()
    run = ex.run([ExecItem(g, seed_inputs(g)[0])])[0]
    assert [r.status for r in run.results] == ["ok", "ok", "raised"]
    assert [r.compile_s for r in run.results] == [0.0, pytest.approx(0.25), 0.0]
    assert all(r.cpu_s >= 0.0 for r in run.results)
    # adapters without a clock: nothing is read, nothing is counted
    bare = GroupExecutor(pool, {n: a for n, a in adapters.items() if n != "torch"}, timeout=10)
    assert bare.clocks == []
    assert all(r.compile_s == 0.0 for r in bare.run([ExecItem(g, seed_inputs(g)[0])])[0].results)


def _in_fresh_process(code: str) -> str:
    """Run ``code`` in a fresh interpreter (the libraries' compilers must not run in the test
    process, which forks sandbox workers)."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip().splitlines()[-1]


def test_jax_counts_its_eager_and_jit_compiles():
    pytest.importorskip("jax", reason="jax is not installed")
    line = _in_fresh_process("""
        import numpy as np
        from xamt.libraries.jax import compile_seconds, call_compiled
        import jax.numpy as jnp
        t0 = compile_seconds()
        jnp.sin(np.ones((3, 5), np.float32)).block_until_ready()   # eager: compiles sin for (3, 5)
        t1 = compile_seconds()
        jnp.sin(np.ones((3, 5), np.float32)).block_until_ready()   # compiled already
        t2 = compile_seconds()
        call_compiled("jax.numpy:cos", np.ones((2, 7), np.float32))
        t3 = compile_seconds()
        print(t0, t1, t2, t3)
    """)
    t0, t1, t2, t3 = map(float, line.split())
    assert t0 == 0.0 and t1 > 0.0 and t2 == t1 and t3 > t2


def test_torch_counts_torch_compile_without_importing_dynamo():
    pytest.importorskip("torch", reason="torch is not installed")
    from xamt.libraries.torch import compile_available

    ok, why = compile_available()
    if not ok:
        pytest.skip(f"torch.compile cannot run here: {why}")
    line = _in_fresh_process("""
        import sys, torch
        from xamt.libraries.torch import compile_seconds, call_compiled
        torch.sin(torch.ones(3))                       # eager: nothing compiled
        t0, loaded = compile_seconds(), "torch._dynamo.utils" in sys.modules
        call_compiled("torch:cos", torch.ones(4))
        t1 = compile_seconds()
        call_compiled("torch:cos", torch.ones(4))      # the compiled program again
        print(t0, loaded, t1, compile_seconds())
    """)
    t0, loaded, t1, t2 = line.split()
    assert float(t0) == 0.0 and loaded == "False" and float(t1) > 0.0 and float(t2) == float(t1)


def test_tensorflow_counts_the_calls_that_traced():
    pytest.importorskip("tensorflow", reason="tensorflow is not installed")
    line = _in_fresh_process("""
        import numpy as np
        from xamt.libraries.tensorflow import call_compiled
        from xamt.libraries._compile import traced_seconds
        call_compiled("tensorflow:cos", np.ones(4, np.float32))
        t1 = traced_seconds()
        call_compiled("tensorflow:cos", np.ones(4, np.float32))     # traced already
        t2 = traced_seconds()
        call_compiled("tensorflow:cos", np.ones(5, np.float32))     # a new shape: traced again
        print(t1, t2, traced_seconds())
    """)
    t1, t2, t3 = map(float, line.split())
    assert t1 > 0.0 and t2 == t1 and t3 > t2


@pytest.mark.slow
def test_torch_compile_keeps_compiling_past_dynamo_s_recompile_limit():
    """Dynamo runs a code object eagerly, silently, once it compiled 8 signatures of it: the
    compiled member of an eager-vs-compiled group must still compile its 9th and 10th."""
    pytest.importorskip("torch", reason="torch is not installed")
    from xamt.libraries.torch import compile_available

    ok, why = compile_available()
    if not ok:
        pytest.skip(f"torch.compile cannot run here: {why}")
    line = _in_fresh_process("""
        import torch
        from xamt.libraries.torch import call_compiled
        import torch._dynamo.utils as utils
        for n in range(1, 11):
            call_compiled("torch:sin", torch.ones(n, 2))
        print(utils.counters["stats"]["unique_graphs"])
    """)
    assert int(line) == 10


def test_torch_compile_is_configured_past_dynamo_s_recompile_limit():
    pytest.importorskip("torch", reason="torch is not installed")
    line = _in_fresh_process("""
        import torch
        from xamt.libraries.torch import _compiled
        _compiled("torch:sin")                         # configures; compiles nothing yet
        c = torch._dynamo.config
        print(c.recompile_limit, c.accumulated_recompile_limit)
    """)
    assert all(int(v) > 1000 for v in line.split())


def test_each_result_carries_the_cpu_seconds_of_its_call_apart_from_its_wall_seconds(pool, adapters):
    """A niced worker waits for the CPU others leave: its wall seconds say little of what a
    call cost, so each result carries the CPU seconds the worker used during it."""
    g = unary("x:abs/generic", [("numpy", "tests.groups.sleeping_abs", "tests.groups.crashers:sleeping_abs"),
                                ("numpy", "tests.groups.spinning_abs", "tests.groups.crashers:spinning_abs")])
    run = GroupExecutor(pool, adapters, timeout=10).run([ExecItem(g, seed_inputs(g)[0])])[0]
    sleeping, spinning = run.results
    assert [r.status for r in run.results] == ["ok", "ok"]
    assert sleeping.duration_s >= 0.3 and sleeping.cpu_s < 0.15
    assert spinning.cpu_s >= 0.2


def test_the_builds_torch_compile_backend_generates_no_code():
    """``XAMT_TORCH_COMPILE_BACKEND=aot_eager``, which only the registry build's workers get
    (``validation.toml [build_environment]``), compiles through Dynamo and AOTAutograd and runs
    the traced graph eagerly: eager's values, and no code in Inductor's cache folder, where the
    default backend writes its generated kernels. An unknown backend name is refused."""
    pytest.importorskip("torch", reason="torch is not installed")
    from xamt.groups.annotations import load_settings
    from xamt.libraries.torch import BACKEND_VARIABLE, compile_available

    ok, why = compile_available()
    if not ok:
        pytest.skip(f"torch.compile cannot run here: {why}")
    settings = load_settings()
    assert settings.build_environment[BACKEND_VARIABLE] == "aot_eager"
    assert BACKEND_VARIABLE not in settings.environment  # a campaign's workers run Inductor
    code = """
        import os, pathlib, tempfile
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp()
        import torch
        from xamt.libraries.torch import call_compiled
        x = torch.linspace(-3, 3, 7, dtype=torch.float64)
        got = call_compiled("torch:erfc", x)
        files = [p for p in pathlib.Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]).rglob("*.py")]
        print(torch.equal(got, torch.erfc(x)), torch.allclose(got, torch.erfc(x)), len(files))
    """
    for backend in ("aot_eager", "inductor"):
        line = _in_fresh_process(f"import os; os.environ[{BACKEND_VARIABLE!r}] = {backend!r}\n" + textwrap.dedent(code))
        equal, close, n = line.split()
        if backend == "aot_eager":  # eager's own kernel, nothing generated
            assert equal == "True" and int(n) == 0, line
        else:  # Inductor's generated kernel: close to eager's, and its code in the cache folder
            assert close == "True" and int(n) > 0, line
    with pytest.raises(AssertionError, match="must be 'inductor' or 'aot_eager'"):
        _in_fresh_process(f"import os; os.environ[{BACKEND_VARIABLE!r}] = 'eager'\n" + textwrap.dedent(code))
