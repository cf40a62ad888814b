"""Errors of the comparator.

The comparator never raises on *data*: every difference between outputs is a counted field of
the report. These errors are for misuse of the API (fewer than two outputs, a reference index
out of range, a malformed tolerance, an unknown backend) and for a backend that cannot run.
"""
from __future__ import annotations

from xamt.errors import ConfigError, XamtError

__all__ = ["CompareError", "CompareUsageError", "ToleranceError", "BackendUnavailableError"]


class CompareError(XamtError):
    """Base class of the comparator's errors."""


class CompareUsageError(CompareError, ValueError):
    """``compare_group`` was called with arguments it cannot accept."""


class ToleranceError(CompareUsageError, ConfigError):
    """A tolerance (or a per-dtype tolerance mapping) is malformed."""


class BackendUnavailableError(CompareError, RuntimeError):
    """The requested backend cannot run here (e.g. the C extension is neither built nor buildable)."""
