"""GPU: the zygote never initialises CUDA, so one pool serves CPU and GPU calls (skipped without a GPU)."""
from __future__ import annotations

import numpy as np
import pytest

from sandbox import SandboxPool, Status, Task

from .conftest import BAD, has_gpu, require

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not has_gpu(), reason="no NVIDIA GPU on this machine")]


@pytest.fixture(scope="module")
def gpu_pool():
    require("torch")
    with SandboxPool(preload=("numpy", "torch"), workers=2, timeout=120.0, memory_limit=None) as pool:
        state = pool.run([Task(BAD + "cuda_state")])[0]
        if not (state.ok and state.value["available"]):
            pytest.skip(f"torch sees no CUDA device: {state}")
        yield pool


def test_fresh_workers_start_without_cuda(gpu_pool):
    # every worker forked after the previous task is fresh; none inherits an initialised CUDA
    state = gpu_pool.run([Task(BAD + "cuda_state")])[0].value
    assert state["bad_fork"] is False


def test_one_pool_serves_cpu_and_gpu_calls(gpu_pool):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.ones((3, 4), dtype=np.float32)
    cpu, gpu = gpu_pool.run([
        Task("torch:add", (a, b), convert="torch:as_tensor", device="cpu"),
        Task("torch:add", (a, b), convert="torch:as_tensor", device="cuda"),
    ])
    assert cpu.status == gpu.status == Status.OK, (cpu, gpu)
    np.testing.assert_array_equal(cpu.value, gpu.value)
    assert cpu.tensors[0].device == "cpu" and gpu.tensors[0].device.startswith("cuda")


def test_a_gpu_crash_is_contained(gpu_pool):
    outcomes = gpu_pool.run([Task(BAD + "segfault"), Task("torch:ones", (2,), convert=None)])
    assert outcomes[0].status == Status.CRASHED and outcomes[1].status == Status.OK
