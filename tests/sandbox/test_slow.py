"""Heavier sandbox checks (``pytest -m slow``): a 10,000-task mixed run and a numpy-1.x interpreter."""
from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter

import ml_dtypes
import numpy as np
import pytest

from sandbox import Ref, SandboxPool, Status, Step, Task

from .conftest import BAD, require

pytestmark = pytest.mark.slow

MIX = [  # (function, expected status, weight)
    ("numpy:add", Status.OK, 900), ("segfault", Status.CRASHED, 12), ("abort", Status.CRASHED, 6),
    ("exit3", Status.CRASHED, 6), ("unserializable", Status.UNSERIALIZABLE, 30), ("recursion", Status.RAISED, 10),
    ("huge_message", Status.RAISED, 10), ("endless_loop", Status.TIMEOUT, 1),
]


def test_ten_thousand_mixed_tasks_lose_nothing():
    require("torch")
    rng = random.Random(2024)
    plan = rng.choices([m[0] for m in MIX], weights=[m[2] for m in MIX], k=10_000)
    expected = {name: status for name, status, _ in MIX}
    tasks = []
    for i, name in enumerate(plan):
        if name == "numpy:add":
            tasks.append(Task("numpy:add", (np.full(16, i, np.float32), np.float32(1))))
        else:
            tasks.append(Task(BAD + name, timeout=0.5 if name == "endless_loop" else None))
    with SandboxPool(preload=("numpy", "torch"), workers=2, timeout=10.0, confirm=False,
                     capture_limit=2048) as pool:
        outcomes = pool.run(tasks)
        stats = dict(pool.stats)
    assert len(outcomes) == len(tasks)
    assert Counter(o.status for o in outcomes) == Counter(expected[name] for name in plan)
    for i, (name, outcome) in enumerate(zip(plan, outcomes)):
        assert outcome.task is tasks[i] and outcome.status == expected[name], (i, name, outcome)
        if name == "numpy:add":
            np.testing.assert_array_equal(outcome.value, np.full(16, i + 1, np.float32))
    assert stats["submitted"] == sum(stats[s.value] for s in Status) == 10_000


@pytest.fixture(scope="module")
def numpy1_python(tmp_path_factory):
    """A venv with numpy 1.26 and msgpack only: the kind chainer or mxnet need."""
    venv = tmp_path_factory.mktemp("numpy1") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    result = subprocess.run([python, "-m", "pip", "install", "-q", "numpy==1.26.4", "msgpack==1.2.4"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot install numpy 1.26 here: {result.stderr[-500:]}")
    return python


def test_a_numpy1_interpreter_joins_through_the_same_codec(numpy1_python):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    version = Task.chain([Step("importlib:import_module", ("numpy",)), Step("builtins:getattr", (Ref(0), "__version__"))])
    with SandboxPool(preload=("numpy",), workers=1, python=numpy1_python) as pool:
        assert pool.info["versions"] == {"numpy": "1.26.4"} and pool.mode == "fork"
        outcomes = pool.run([
            version,
            Task("numpy:sum", (x,), {"axis": 1}),
            Task(BAD + "echo", ([x.astype(d) for d in ("int8", "uint64", "float16", "complex128", "bool")],)),
            Task(BAD + "echo", (np.ones(2, ml_dtypes.bfloat16),)),  # ml_dtypes is not installed there
            Task(BAD + "segfault"),
            Task(BAD + "modules_loaded", ("ml_dtypes",)),
        ])
    assert outcomes[0].value == "1.26.4"
    np.testing.assert_array_equal(outcomes[1].value, x.sum(axis=1))
    for sent, back in zip([x.astype(d) for d in ("int8", "uint64", "float16", "complex128", "bool")], outcomes[2].value):
        assert back.dtype == sent.dtype and np.array_equal(back, sent)
    assert outcomes[3].status == Status.UNSERIALIZABLE and "ml_dtypes" in outcomes[3].error_message
    assert outcomes[4].status == Status.CRASHED and outcomes[4].signal_name == "SIGSEGV"
    assert outcomes[5].value == {"ml_dtypes": False}  # nothing of our environment leaked in
    assert os.path.exists(numpy1_python)
