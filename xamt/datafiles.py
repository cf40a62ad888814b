"""Reading the reviewable TOML data files under ``xamt/data/`` (or a user's replacement)."""
from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from xamt.errors import DataFileError

__all__ = ["read_toml"]


def read_toml(name: str, path: str | Path | None = None) -> tuple[dict[str, Any], str, str]:
    """``(data, where, text)`` of the packaged data file ``name``, or of ``path`` when given.

    ``where`` names the file for error messages. Raises :class:`DataFileError` when the file is
    missing, unreadable or not TOML.
    """
    try:
        if path is None:
            text = resources.files("xamt.data").joinpath(name).read_text("utf-8")
            where = f"xamt/data/{name}"
        else:
            text, where = Path(path).read_text("utf-8"), str(path)
        return tomllib.loads(text), where, text
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DataFileError(f"cannot read {name} from {path or 'package data'}: {exc}") from exc
