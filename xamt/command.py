"""The shape of an ``xamt`` subcommand, which each stage's provider returns to :mod:`xamt.cli`.

Kept apart from :mod:`xamt.cli` (which imports every stage) so that a stage low in the pipeline
(:mod:`xamt.catalog`) can describe its own subcommand without importing the command line.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable

__all__ = ["Command"]


@dataclass(frozen=True)
class Command:
    """One subcommand: ``configure`` adds its options, ``run`` executes it (exit status)."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
