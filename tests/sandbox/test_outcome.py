"""sandbox.outcome (tasks and their validation) and sandbox.classify (status rules)."""
from __future__ import annotations

import signal

import numpy as np
import pytest

from sandbox import Outcome, Ref, Status, Step, Task, TaskError
from sandbox.classify import OOM_RSS_FRACTION, death_status, exception_status, oom_kill_count, signal_name


def test_task_forms():
    x = np.ones(3)
    task = Task("numpy:sum", [x], {"axis": 0})
    assert task.fn == "numpy:sum" and task.args == (x,) and task.kwargs == {"axis": 0}
    assert Task("torch:Tensor.abs", (x,), convert="torch:from_numpy").convert == "torch:from_numpy"
    chain = Task.chain([Step("numpy:ones", (3,)), Step(".sum", (Ref(0),)), Step("builtins:list", ([Ref(0), Ref(1)],))])
    assert chain.fn == "builtins:list" and len(chain.steps) == 3
    assert "steps=[numpy:ones, .sum, builtins:list]" in repr(chain)
    with pytest.raises(AttributeError):
        task.timeout = 3  # immutable


@pytest.mark.parametrize("make, message", [
    (lambda: Task("numpy.sum"), "module:qualname"),
    (lambda: Task("numpy:"), "module:qualname"),
    (lambda: Task("numpy:sum; import os"), "module:qualname"),
    (lambda: Task(".abs"), "first argument"),
    (lambda: Task(42), "module:qualname"),
    (lambda: Task("numpy:sum", args=5), "tuple or list"),
    (lambda: Task("numpy:sum", kwargs={1: 2}), "str keys"),
    (lambda: Task("numpy:sum", (Ref(0),)), "not an earlier step"),
    (lambda: Task.chain([Step("numpy:ones", (3,)), Step("numpy:sum", ({"a": [Ref(1)]},))]), "not an earlier step"),
    (lambda: Task.chain([]), "at least one step"),
    (lambda: Task.chain(["numpy:sum"]), "sandbox.Step"),
    (lambda: Task("numpy:sum", convert="torch"), "convert"),
    (lambda: Task("numpy:sum", device="cuda"), "convert callable"),
    (lambda: Task("numpy:sum", convert="torch:as_tensor", device=""), "device"),
    (lambda: Task("numpy:sum", timeout=0), "timeout"),
    (lambda: Task("numpy:sum", timeout=float("inf")), "timeout"),
    (lambda: Task("numpy:sum", timeout=True), "timeout"),
    (lambda: Ref(-1), "non-negative"),
])
def test_malformed_tasks_are_refused_with_a_clear_message(make, message):
    with pytest.raises(TaskError, match=message):
        make()


def test_status_is_a_plain_string():
    assert Status.OK == "ok" and f"{Status.TIMEOUT}" == "timeout"
    outcome = Outcome(Status.CRASHED, signal=11, signal_name="SIGSEGV", duration_s=0.002, confirmed=True)
    assert not outcome.ok and outcome.summary() == "crashed | SIGSEGV | confirmed | 2.0 ms"


def test_exception_status():
    assert exception_status(MemoryError(), "MemoryError", "") == Status.OOM
    assert exception_status(RuntimeError(), "RuntimeError",
                            "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1 bytes") == Status.OOM
    assert exception_status(Exception(), "tensorflow.python.framework.errors_impl.ResourceExhaustedError",
                            "OOM when allocating tensor") == Status.OOM
    assert exception_status(Exception(), "jax.errors.JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory") == Status.OOM
    assert exception_status(ValueError(), "ValueError", "room for improvement") == Status.RAISED


def wait_status_signal(sig: int) -> int:
    return sig  # a process killed by a signal: WIFSIGNALED, WTERMSIG == sig


def wait_status_exit(code: int) -> int:
    return code << 8


def test_death_status_rules():
    common = dict(max_rss=None, memory_ceiling=None, stderr_tail="")
    assert death_status(wait_status_signal(11), kill_reason=None, **common) == (Status.CRASHED, 11, "SIGSEGV", None)
    assert death_status(wait_status_exit(3), kill_reason=None, **common) == (Status.CRASHED, None, None, 3)
    assert death_status(9, kill_reason="timeout", **common)[0] == Status.TIMEOUT
    assert death_status(9, kill_reason="cancel", **common)[0] == Status.CANCELLED
    assert death_status(None, kill_reason=None, **common) == (Status.CRASHED, None, None, None)
    aborted = dict(common, stderr_tail="terminate called after throwing an instance of 'std::bad_alloc'\n")
    assert death_status(wait_status_signal(6), kill_reason=None, **aborted)[0] == Status.OOM
    # a SIGKILL nobody in the pool sent, at a peak RSS near the ceiling: the kernel's OOM killer
    ceiling = 1 << 30
    near = dict(common, max_rss=int(OOM_RSS_FRACTION * ceiling) + 1, memory_ceiling=ceiling)
    far = dict(common, max_rss=ceiling // 4, memory_ceiling=ceiling)
    assert death_status(signal.SIGKILL, kill_reason=None, **near)[0] == Status.OOM
    assert death_status(signal.SIGKILL, kill_reason=None, **far)[0] == Status.CRASHED
    assert death_status(signal.SIGSEGV, kill_reason=None, **near)[0] == Status.CRASHED
    assert death_status(signal.SIGKILL, kill_reason=None, oom_killer_fired=True, **common)[0] == Status.OOM
    assert death_status(signal.SIGKILL, kill_reason="timeout", oom_killer_fired=True, **common)[0] == Status.TIMEOUT
    assert oom_kill_count() is None or oom_kill_count() >= 0
    # file names in a traceback are not evidence of memory exhaustion
    named = dict(common, stderr_tail='File "/x/oom.py", line 3 in test_oom\n')
    assert death_status(wait_status_signal(11), kill_reason=None, **named)[0] == Status.CRASHED


def test_signal_names():
    assert signal_name(11) == "SIGSEGV" and signal_name(7) == "SIGBUS" and signal_name(8) == "SIGFPE"
    assert signal_name(200) == "SIG200"


def test_returned_outcome_fills_the_fields_it_names():
    """The pool's positional constructor must follow the field order of Outcome."""
    from sandbox.outcome import TensorInfo, returned_outcome

    task = Task("numpy:add", (1, 2))
    tensors = (TensorInfo(0, "torch.Tensor", "cpu", "torch.float32"),)
    fast = returned_outcome(Status.RAISED, 3, "ValueError", "bad", "tb", 1, "out", "err", 0.5, 1024, 77, tensors, task)
    slow = Outcome(status=Status.RAISED, value=3, error_type="ValueError", error_message="bad", traceback="tb",
                   failed_step=1, stdout_tail="out", stderr_tail="err", duration_s=0.5, max_rss_bytes=1024,
                   worker_pid=77, tensors=tensors, task=task)
    assert fast == slow and fast.task is task
    assert fast.signal is None and fast.exit_code is None and fast.confirmed is None and fast.confirm_status is None
