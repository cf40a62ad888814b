"""A tiny "library" with known, planted divergences from numpy, for the campaign tests.

Each function disagrees with its numpy twin only on inputs a fuzzer has to find: NaN, infinity,
negative values. Used as group members via the numpy adapter (they take and return arrays).
"""
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


def exp_rejecting_negatives(a):
    """numpy.exp, but refuses negative inputs."""
    if (a < 0).any():
        raise ValueError("exp_rejecting_negatives: negative input")
    return np.exp(a)
