"""One progress display for long work (the registry build, campaigns).

On a terminal it is a live line (rich) that redraws a few times a second; elsewhere (a log file,
CI) it prints a plain line at most every ``log_every`` seconds and whenever asked to
(``force=True``): a long run is never silent for longer than that.
"""
from __future__ import annotations

import sys
import time
from typing import IO

__all__ = ["Progress"]


class Progress:
    """``done`` of ``total`` (items or seconds), an ETA and a free text.

    Args:
        enabled: False shows nothing.
        total: what ``done`` runs up to (None: no bar, no ETA).
        unit: the unit of ``done`` and ``total``, shown after them (``"s"``, ``" groups"``).
        log_every: seconds between two plain lines when not on a terminal.
        stream: where to write (standard error by default).
    """

    def __init__(self, enabled: bool, *, total: float | None, unit: str = "", log_every: float = 10.0,
                 stream: IO[str] | None = None):
        self.stream = stream or sys.stderr
        self.enabled = bool(enabled)
        self.total = total
        self.unit = unit
        self.log_every = float(log_every)
        self.start = time.monotonic()
        self._last_log = float("-inf")
        self._live = None
        if self.enabled and getattr(self.stream, "isatty", lambda: False)():
            from rich.console import Console
            from rich.live import Live

            self._live = Live(console=Console(file=self.stream), refresh_per_second=4, transient=False)
            self._live.start()

    def line(self, done: float, text: str) -> str:
        """The text shown for ``done`` (also what a plain line prints)."""
        elapsed = time.monotonic() - self.start
        head = f"{done:,.0f}{self.unit}"
        if self.total:
            frac = min(1.0, max(0.0, done / self.total))
            filled = int(frac * 24)
            eta = elapsed / done * (self.total - done) if done > 0 else 0.0
            head = f"{'█' * filled}{'░' * (24 - filled)} {done:,.0f}/{self.total:,.0f}{self.unit} ETA {eta:,.0f}s"
        return f"{head}  {text}" if text else head

    def update(self, done: float, text: str = "", *, force: bool = False) -> None:
        """Show ``done`` and ``text`` now (a plain line only when due, or forced)."""
        if not self.enabled:
            return
        if self._live is not None:
            from rich.text import Text

            self._live.update(Text(self.line(done, text)))
            return
        now = time.monotonic()
        if force or now - self._last_log >= self.log_every:
            self._last_log = now
            print(self.line(done, text), file=self.stream, flush=True)

    def close(self) -> None:
        """Stop the live line (the last state stays on screen)."""
        if self._live is not None:
            self._live.stop()
            self._live = None
