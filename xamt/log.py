"""Named-logger helpers.

Modules log through ``logging.getLogger("xamt.<sub>")`` (see :func:`get_logger`); nothing is
configured at import time. The command line calls :func:`configure` once, so library users of
Xamt keep control of their own logging set-up.
"""
from __future__ import annotations

import logging
import sys

__all__ = ["get_logger", "configure"]

_ROOT = "xamt"


def get_logger(sub: str) -> logging.Logger:
    """Return the logger ``xamt.<sub>`` (``sub`` may itself be dotted)."""
    return logging.getLogger(f"{_ROOT}.{sub}" if sub else _ROOT)


def configure(verbosity: int = 0, stream=None) -> None:
    """Attach one stderr handler to the ``xamt`` logger.

    ``verbosity`` 0 shows warnings, 1 info, 2 or more debug. Calling it again replaces the
    handler it installed before instead of stacking a second one.
    """
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    root = logging.getLogger(_ROOT)
    for handler in list(root.handlers):
        if getattr(handler, "_xamt_cli", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler._xamt_cli = True  # type: ignore[attr-defined]  # marks the handler as ours
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
