"""Xamt's error taxonomy.

Every error Xamt raises on purpose derives from :class:`XamtError`, so the command line can turn
it into a one-line message and a non-zero exit status instead of a traceback. Subclasses name the
kind of failure; the message says what was wrong and, where possible, what to do about it.
"""
from __future__ import annotations

__all__ = [
    "XamtError",
    "ConfigError",
    "DataFileError",
    "UnknownLibraryError",
    "LibraryNotInstalledError",
    "MiningError",
    "MatchingError",
    "StoreError",
    "StoreCorruptError",
    "StoreVersionError",
]


class XamtError(Exception):
    """Base class of every error Xamt raises deliberately."""


class ConfigError(XamtError):
    """A setting, option or configuration value is invalid or inconsistent."""


class DataFileError(ConfigError):
    """A reviewable data file under ``xamt/data/`` is missing, unreadable or malformed."""


class UnknownLibraryError(ConfigError):
    """A library name is not one Xamt has an adapter for."""

    def __init__(self, name: str, known: list[str] | tuple[str, ...]):
        self.name = name
        self.known = tuple(known)
        super().__init__(
            f"unknown library {name!r}; known libraries: {', '.join(sorted(self.known))}"
        )


class LibraryNotInstalledError(XamtError):
    """A library has an adapter but cannot be imported in this environment."""


class MiningError(XamtError):
    """Mining a library's public API failed (the import or the worker process broke)."""


class MatchingError(XamtError):
    """Candidate matching cannot run (e.g. no mined catalog to match)."""


class StoreError(XamtError):
    """The SQLite store cannot be opened, read or written."""


class StoreCorruptError(StoreError):
    """The store file exists but is not a readable SQLite database."""


class StoreVersionError(StoreError):
    """The store (or one component's tables) was written by an incompatible schema version."""
