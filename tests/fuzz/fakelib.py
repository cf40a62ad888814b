"""A tiny "library" with known, planted divergences from numpy, for the campaign tests.

Each function disagrees with its numpy twin only on inputs a fuzzer has to find: NaN, infinity,
negative values. Used as group members via the numpy adapter (they take and return arrays).
"""
import contextlib
import os

import numpy as np


def max_ignoring_nan(a, axis=None):
    """Like numpy.max, but skips NaN (numpy propagates it)."""
    return np.nanmax(a, axis=axis) if np.isnan(a).any() and not np.isnan(a).all() else np.max(a, axis=axis)


def negative_abort_on_inf(a):
    """numpy.negative, but the process aborts when an infinity comes in."""
    if np.isinf(a).any():
        os.abort()
    return np.negative(a)


def sqrt_checking_its_domain(a):
    """numpy.sqrt, but refuses negative inputs with a message that states its precondition."""
    if (a < 0).any():
        raise ValueError("every element of a must be >= 0")
    return np.sqrt(a)


def exp_rejecting_negatives(a):
    """numpy.exp, but fails on negative inputs inside a helper it calls (an error from the
    computation, not a check of its own)."""
    return _exp_series(a)


def _exp_series(a):
    if (a < 0).any():
        raise ValueError("the series cannot continue")
    return np.exp(a)


def exp_checking_negatives(a):
    """numpy.exp, but refuses negative inputs with a check in its own body."""
    if (a < 0).any():
        raise ValueError("exp_checking_negatives: negative input")
    return np.exp(a)


def sum_hanging_on_nan(a, axis=None):
    """numpy.sum, but never returns when a NaN comes in (a hang, like an endless loop in C)."""
    if np.isnan(a).any():
        import time

        while True:
            time.sleep(0.05)
    return np.sum(a, axis=axis)


# ------------------------------------------------------------------ a fake second device
# The fake library also runs on a device "fake:1" (like torch on cuda:0): `place` marks an
# array as living there and `device_scope` makes it the current device. Its `square` has a
# planted device bug: on fake:1 the square of an infinity comes out NaN (the CPU gives inf).

class DeviceArray(np.ndarray):
    """An array that knows which fake device it lives on."""

    def __array_finalize__(self, obj):
        # not `device`: numpy 2 arrays have a read-only `device` (the array API's, always "cpu")
        self.fake_device = getattr(obj, "fake_device", "cpu")


class _Current:
    """The current device of `device_scope` (a class, so a reproducer shares it by import)."""

    device = "cpu"


def devices():
    # XAMT_FAKELIB_NO_DEVICE plays a machine without the device (a reproducer replayed there)
    return ["cpu"] if os.environ.get("XAMT_FAKELIB_NO_DEVICE") else ["cpu", "fake:1"]


def place(value, device):
    if not isinstance(value, np.ndarray):
        return value
    out = np.array(value, copy=True).view(DeviceArray)
    out.fake_device = device
    return out


@contextlib.contextmanager
def device_scope(device):
    previous, _Current.device = _Current.device, device
    try:
        yield
    finally:
        _Current.device = previous


def _device_of(a):
    return getattr(a, "fake_device", None) or _Current.device


def square(a):
    """numpy.square; on fake:1 an infinite input gives NaN (the planted device bug)."""
    out = np.square(np.asarray(a))
    if _device_of(a) == "fake:1":
        out = np.where(np.isinf(a), np.nan, out).astype(out.dtype)
    return out


def where_am_i(a):
    """[the input's device, the current scope's device] as indices (0: cpu, 1: fake:1)."""
    index = {"cpu": 0, "fake:1": 1}
    return np.array([index[getattr(a, "fake_device", "cpu")], index[_Current.device]])


def adapter():
    """The fake library's adapter (given to campaigns through FuzzConfig.extra_adapters)."""
    from xamt.libraries.base import LibraryAdapter, same_dtype_names

    return LibraryAdapter(
        name="fakelib", import_name="tests.fuzz.fakelib", distributions=(), namespaces=(),
        own_modules=("tests.fuzz.fakelib",),
        from_numpy_ref="xamt.libraries.numpy:from_numpy", to_numpy_ref="xamt.libraries.numpy:to_numpy",
        dtype_ref="xamt.libraries.numpy:dtype", dtypes=same_dtype_names(("bfloat16",)),
        devices_ref="tests.fuzz.fakelib:devices", placement_ref="tests.fuzz.fakelib:place",
        device_scope_ref="tests.fuzz.fakelib:device_scope")
