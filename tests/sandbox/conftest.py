"""Shared fixtures for the sandbox tests.

The test process never imports torch, TensorFlow or JAX: whether a library is installed is
checked with ``importlib.util.find_spec``; the libraries are only imported by sandbox zygotes.
"""
from __future__ import annotations

import importlib.util
import os

import pytest

from sandbox import SandboxPool

BAD = "tests.badtasks:"
MEMORY_LIMIT = 256 << 20
CORPUS_TIMEOUT = 2.0


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(*modules: str) -> None:
    """Skip the calling test unless every module is installed (without importing them here)."""
    missing = [m for m in modules if not installed(m)]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


def has_gpu() -> bool:
    return os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl")


@pytest.fixture(scope="session")
def numpy_pool():
    """A small numpy pool shared by the tests that do not change its configuration."""
    with SandboxPool(preload=("numpy",), workers=2, timeout=5.0, memory_limit=MEMORY_LIMIT) as pool:
        yield pool


@pytest.fixture(scope="session")
def torch_pool():
    require("torch")
    with SandboxPool(preload=("numpy", "torch"), workers=2, timeout=20.0, memory_limit=1 << 30) as pool:
        yield pool
