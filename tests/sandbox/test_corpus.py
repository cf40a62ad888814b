"""The misbehaving-task corpus, interleaved with good tasks, under each preload set.

Every bad task must get its own status, attributed to it (the good task after it must still
return *its* value), the pool must keep serving, and each preload set must fork its workers
from a single-threaded zygote.
"""
from __future__ import annotations

import numpy as np
import pytest

from sandbox import SandboxPool, Status, Task

from .conftest import BAD, CORPUS_TIMEOUT, MEMORY_LIMIT, require

# (name, kwargs, expected status, check of the outcome)
CORPUS = [
    ("segfault", {}, Status.CRASHED,
     lambda o: o.signal_name == "SIGSEGV" and "Segmentation fault" in o.stderr_tail and "segfault" in o.stderr_tail),
    ("abort", {}, Status.CRASHED, lambda o: o.signal_name == "SIGABRT" and "Aborted" in o.stderr_tail),
    ("sigfpe", {}, Status.CRASHED, lambda o: o.signal_name == "SIGFPE" and "sigfpe" in o.stderr_tail),
    ("sigbus", {}, Status.CRASHED, lambda o: o.signal_name == "SIGBUS" and "sigbus" in o.stderr_tail),
    ("exit3", {}, Status.CRASHED, lambda o: o.exit_code == 3 and o.signal is None),
    ("endless_loop", {}, Status.TIMEOUT, lambda o: "endless_loop" in o.stderr_tail and o.duration_s >= CORPUS_TIMEOUT),
    ("c_sleep", {}, Status.TIMEOUT, lambda o: o.duration_s >= CORPUS_TIMEOUT),
    ("memory_bomb", {}, Status.OOM, lambda o: o.error_type == "MemoryError"),
    ("stdout_flood", {"megabytes": 4}, Status.OK,
     lambda o: o.value == 4 * (1 << 20) // 100 and o.stdout_tail.endswith("FLOOD_END\n")
     and len(o.stdout_tail) <= 16 << 10),
    ("huge_message", {}, Status.RAISED,
     lambda o: o.error_type == "ValueError" and o.error_message.startswith("boom m")
     and len(o.error_message) < 64 << 10 and len(o.traceback) < 256 << 10),
    ("unserializable", {}, Status.UNSERIALIZABLE,
     lambda o: o.error_type == "sandbox.errors.EncodeError" and "value['bad']" in o.error_message),
    ("recursion", {}, Status.RAISED, lambda o: o.error_type == "RecursionError" and "recursion" in o.traceback),
]

# preload set -> how a good task calls the set's own library (arguments arrive as numpy arrays)
GOOD = {
    (): ("tests.badtasks:add", None, None),
    ("numpy",): ("numpy:add", None, None),
    ("torch",): ("torch:add", "torch:from_numpy", "torch.Tensor"),
    ("tensorflow",): ("tensorflow:add", "tensorflow:constant", "tensorflow.python.framework.ops.EagerTensor"),
    ("jax",): ("jax.numpy:add", "jax.numpy:asarray", "jaxlib"),
}


def good_task(preload: tuple, i: int) -> Task:
    fn, convert, _ = GOOD[preload]
    x = np.full(4, float(i), dtype=np.float32)
    y = np.ones(4, dtype=np.float32)
    return Task(fn, (x, y), convert=convert)


def check_good(preload: tuple, i: int, outcome) -> None:
    assert outcome.status == Status.OK, outcome
    np.testing.assert_array_equal(np.asarray(outcome.value), np.full(4, i + 1.0, dtype=np.float32))
    kind = GOOD[preload][2]
    if kind is not None:
        assert len(outcome.tensors) == 1 and outcome.tensors[0].kind.startswith(kind), outcome.tensors
        assert "cpu" in outcome.tensors[0].device.lower()


@pytest.mark.parametrize("preload", list(GOOD), ids=lambda p: "+".join(p) or "bare")
def test_corpus_under_preload_set(preload):
    require(*preload)
    with SandboxPool(preload=preload, workers=2, timeout=CORPUS_TIMEOUT, memory_limit=MEMORY_LIMIT) as pool:
        assert pool.mode == "fork" and pool.info["threads"] == 1, pool.info
        tasks = []
        for i, (name, kwargs, _, _) in enumerate(CORPUS):
            timeout = 30.0 if name == "stdout_flood" else None  # a 4 MB print loop on a busy machine
            tasks.append(Task(BAD + name, kwargs=kwargs, timeout=timeout))
            tasks.append(good_task(preload, i))
        outcomes = pool.run(tasks)

        assert len(outcomes) == len(tasks)
        for i, (name, _, expected, check) in enumerate(CORPUS):
            bad, good = outcomes[2 * i], outcomes[2 * i + 1]
            assert bad.task is tasks[2 * i] and good.task is tasks[2 * i + 1]
            assert bad.status == expected, f"{name}: {bad}"
            assert check(bad), f"{name}: {bad}"
            if expected in (Status.CRASHED, Status.TIMEOUT, Status.OOM):
                assert bad.confirmed is True and bad.confirm_status == expected, f"{name}: {bad}"
            else:
                assert bad.confirmed is None
            check_good(preload, i, good)

        # the pool keeps serving after all of that
        again = pool.run([good_task(preload, i) for i in range(10)])
        for i, outcome in enumerate(again):
            check_good(preload, i, outcome)
        assert pool.stats["deaths"] >= 10  # 5 crashes, each run twice (confirmation)
