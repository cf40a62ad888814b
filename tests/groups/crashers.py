"""Misbehaving 'library functions' for the registry tests (resolved inside sandbox workers)."""
from __future__ import annotations

import ctypes

import numpy as np


def segfault(x):
    """Dies with SIGSEGV (a null pointer read)."""
    return ctypes.string_at(0)


def off_by_one(x):
    """abs, but wrong."""
    return np.abs(x) + 1.0


def noisy(x):
    """Nondeterministic: a different result on every call."""
    return np.asarray(x) + np.random.default_rng().random(np.shape(x))


def nap_abs(x):
    """abs, after half a second (a library whose every call is slow)."""
    import time

    time.sleep(0.5)
    return np.abs(x)


def hangs_on_int64(x):
    """abs, but spins forever on int64 input (one dtype of a probe hangs)."""
    if np.asarray(x).dtype == np.int64:
        while True:
            pass
    return np.abs(x)


def slow_abs(x):
    """abs, eventually (used for timeouts)."""
    import time

    time.sleep(60)
    return np.abs(x)


def sleeping_abs(x):
    """abs after 0.3 s of waiting, which uses no CPU (wall time apart from CPU time)."""
    import time

    time.sleep(0.3)
    return np.abs(x)


def spinning_abs(x):
    """abs after 0.2 s of the CPU's time (a busy loop)."""
    import time

    start = time.process_time()
    while time.process_time() - start < 0.2:
        pass
    return np.abs(x)


def wrapped_off_by_one(x):
    """A wrapper that computes through :func:`off_by_one`, as ``tnp.sort`` sorts through
    ``top_k``: its footprint holds the callee's function."""
    return off_by_one(np.asarray(x))


def pair_sort(x):
    """(values, indices) like torch.sort."""
    return np.sort(x, axis=-1), np.argsort(x, axis=-1)


def int_only_and(x, y):
    """bitwise and that refuses floats (like numpy's)."""
    return np.bitwise_and(x, y)


def call_through(target, *args, **kwargs):
    """A stand-in 'compiler' (a member's ``via``): calls the target as it is."""
    from xamt.libraries.base import resolve_ref

    return resolve_ref(target)(*args, **kwargs)


def make_key(seed):
    """A stand-in PRNG key hook (an adapter's ``prng_key_ref``): a raw two-word key."""
    return np.array([0, seed], dtype=np.uint32)


def keyed_sample(key, x):
    """A functional 'sampler': refuses anything but a key made by :func:`make_key`."""
    if not (isinstance(key, np.ndarray) and key.shape == (2,) and key.dtype == np.uint32):
        raise TypeError(f"invalid PRNG key {key!r}")
    return np.asarray(x) * 0 + float(key[1])


#: a stand-in compile clock (an adapter's ``compile_clock_ref``): seconds "compiled" so far
_COMPILED_S = [0.0]


def compile_clock():
    return _COMPILED_S[0]


def compiling_abs(x):
    """abs, after 'compiling' for 0.25 s on the stand-in clock (as a jit's first call would)."""
    _COMPILED_S[0] += 0.25
    return np.abs(x)


def sum_none_is_first_axis(x, axis=None):
    """numpy.sum, but axis=None sums the first axis (as tf.gather's None is axis 0)."""
    import numpy as np

    return np.sum(x, axis=0 if axis is None else axis)


def sum_refuses_none(x, axis=None):
    """numpy.sum that takes one axis only (as jax.lax.reduce_sum wants its axes)."""
    import numpy as np

    if axis is None:
        raise TypeError("axis must be an int")
    return np.sum(x, axis=axis)
