"""The shape of an ``xamt`` subcommand, which each stage's provider returns to :mod:`xamt.cli`.

Kept apart from :mod:`xamt.cli` (which imports every stage) so that a stage low in the pipeline
(:mod:`xamt.catalog`) can describe its own subcommand without importing the command line.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable

from xamt.errors import ConfigError

__all__ = ["Command", "parse_duration"]


@dataclass(frozen=True)
class Command:
    """One subcommand: ``configure`` adds its options, ``run`` executes it (exit status)."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def parse_duration(text: str | float | int, what: str = "budget") -> float:
    """Seconds from ``"90"``, ``"90s"``, ``"10m"``, ``"1.5h"`` (a campaign's or a build's budget).

    Raises:
        ConfigError: not a number with an optional s/m/h suffix, or not positive.
    """
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        t = str(text).strip().lower()
        scale = {"s": 1, "m": 60, "h": 3600}.get(t[-1:], None)
        try:
            value = float(t[:-1]) * scale if scale else float(t)
        except ValueError:
            raise ConfigError(f"{what} {text!r}: expected seconds or a number with s/m/h, e.g. 10m") from None
    if not value > 0:
        raise ConfigError(f"{what} must be positive, got {text!r}")
    return value
