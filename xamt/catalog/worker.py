"""Mining in a child interpreter: ``python -m xamt.catalog --worker LIB --result FILE``.

Heavy imports stay out of the caller and libraries are isolated from one another. A library of
another interpreter (an adapter whose runtime has a venv) is mined by that interpreter.
:func:`mine_in_child` is the parent's side, :func:`main` the child's (run by ``__main__``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from xamt.catalog.mining import mine_library
from xamt.catalog.records import LibraryCatalog
from xamt.errors import LibraryNotInstalledError, MiningError
from xamt.libraries.base import LibraryAdapter
from xamt.libraries.registry import Registry

__all__ = ["mine_in_child", "main"]


def mine_in_child(adapter: LibraryAdapter, timeout: float) -> LibraryCatalog:
    """Mine one library in a child interpreter and read its JSON result."""
    with tempfile.TemporaryDirectory(prefix="xamt-mine-") as tmp:
        result = Path(tmp) / "catalog.json"
        python, env = sys.executable, dict(os.environ)
        if adapter.runtime is not None and adapter.runtime.venv is not None:
            # a library of another interpreter is imported, and so mined, only there; that
            # interpreter runs this package from the checkout (its PYTHONPATH)
            python, env = adapter.runtime.python(), adapter.runtime.child_environment(env)
        cmd = [python, "-m", "xamt.catalog", "--worker", adapter.name, "--result", str(result)]
        # The worker only introspects; one thread per library keeps two workers from
        # oversubscribing the cores while they import.
        env.setdefault("OMP_NUM_THREADS", "1")
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as exc:
            raise MiningError(f"mining {adapter.name} took longer than {timeout:.0f} s") from exc
        if proc.returncode != 0 or not result.exists():
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-6:]
            raise MiningError(
                f"mining {adapter.name} failed (exit {proc.returncode}): " + " | ".join(tail)
            )
        return LibraryCatalog.from_json(json.loads(result.read_text()))


def main(argv: Sequence[str] | None = None) -> int:
    """The child's side: mine ``--worker LIB`` and write its catalog as JSON to ``--result``."""
    parser = argparse.ArgumentParser(prog="python -m xamt.catalog")
    parser.add_argument("--worker", required=True, help="library to mine")
    parser.add_argument("--result", required=True, help="file to write the JSON catalog to")
    ns = parser.parse_args(argv)
    registry = Registry()
    adapter = registry.get(ns.worker)
    if not adapter.is_installed():
        raise LibraryNotInstalledError(f"{adapter.import_name} is not installed")
    cat = mine_library(adapter, registry)
    Path(ns.result).write_text(json.dumps(cat.to_json()))
    return 0
