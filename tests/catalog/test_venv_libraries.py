"""What every library in a venv of its own must do (MXNet, MindSpore, PaddlePaddle, Chainer, MLX,
ndonnx): report itself not installed without its venv, and carry every dtype of its table through
its conversions in its own interpreter. Each library's own file tests the rest; the round trip
skips, saying why, without the venv."""
from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from sandbox import Status, Task
from xamt.libraries.base import Runtime
from xamt.libraries.registry import Registry

VENV_LIBRARIES = [a.name for a in Registry() if a.runtime is not None and a.runtime.venv]


def test_the_venv_libraries_are_the_expected_ones():
    assert {"mxnet", "mindspore", "paddle", "chainer", "mlx", "ndonnx", "tinygrad"} <= set(VENV_LIBRARIES)


@pytest.mark.parametrize("name", VENV_LIBRARIES)
def test_without_its_venv_a_library_is_not_installed(name):
    adapter = Registry().get(name)
    ghost = dataclasses.replace(adapter, runtime=Runtime(name, venv=".venv-absent-xyz"))
    assert not ghost.is_installed()
    assert ghost.version() == "unknown"
    assert adapter.pivot_rank > Registry().get("numpy").pivot_rank


@pytest.mark.parametrize("name", VENV_LIBRARIES)
def test_every_dtype_of_the_table_round_trips_in_the_venv(name):
    from xamt.exec.pools import open_pool, pool_settings

    adapter = Registry().get(name)
    if not os.access(adapter.runtime.python(), os.X_OK):
        pytest.skip(f"{adapter.runtime.venv} is absent (make venv-{name} makes it; it needs the network)")
    names = list(adapter.dtypes.values())
    settings = pool_settings([Registry().get("numpy"), adapter])
    with open_pool(workers=1, timeout=120, confirm=False, **settings) as pools:
        (out,) = pools.run([Task("tests.catalog.venv_tasks:round_trip", (name, names), runtime=name)])
    assert out.status is Status.OK, out
    for i, dtype in enumerate(names):
        full, scalar = out.value[2 * i], out.value[2 * i + 1]
        assert isinstance(full, np.ndarray) and full.dtype.name == dtype, dtype
        assert full.shape == (2, 3) and scalar.shape == () and scalar.dtype.name == dtype, dtype
        expected = np.arange(-2, 4).reshape(2, 3)
        expected = (expected > 0) if dtype == "bool" else expected + 2 if dtype.startswith("uint") else expected
        values = full.real if full.dtype.kind == "c" else full
        assert np.array_equal(values.astype(np.float64), expected.astype(np.float64)), dtype
