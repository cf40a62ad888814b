"""Catalogs of several libraries: each one from the store's cache when its version and the
miner's fingerprint match, else mined in a child process (two at a time by default) and saved."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence

from xamt.catalog.cache import CATALOG_SCHEMA, cached_catalog, save_catalog
from xamt.catalog.mining import mine_library
from xamt.catalog.records import CatalogResult, LibraryCatalog
from xamt.catalog.worker import mine_in_child
from xamt.errors import XamtError
from xamt.libraries.base import LibraryAdapter
from xamt.libraries.registry import Registry
from xamt.store import Store

__all__ = ["build_catalog"]


def build_catalog(
    store: Store,
    libraries: Sequence[str],
    *,
    registry: Registry | None = None,
    refresh: bool = False,
    jobs: int = 2,
    timeout: float = 600.0,
    in_process: bool = False,
    on_event: Callable[[str, str, Any], None] | None = None,
) -> CatalogResult:
    """Mine (or load from the store) the catalogs of ``libraries``.

    A library that is not installed is skipped with a note. ``on_event(kind, library, payload)``
    reports progress: ``"cached"``, ``"start"``, ``"done"``, ``"skip"``. ``in_process`` mines in
    this process instead of child processes (tests, debugging).
    """
    t0 = time.perf_counter()
    registry = registry or Registry()
    store.ensure(CATALOG_SCHEMA, on_mismatch="recreate")
    emit = on_event or (lambda *_: None)
    catalogs: dict[str, LibraryCatalog] = {}
    skipped: dict[str, str] = {}
    todo: list[LibraryAdapter] = []
    for name in libraries:
        adapter = registry.get(name)
        if not adapter.is_installed():
            skipped[name] = f"{adapter.import_name} is not installed; skipped"
            emit("skip", name, skipped[name])
            continue
        version = adapter.version()
        cat = None if refresh else cached_catalog(store, adapter, version)
        if cat is not None:
            catalogs[name] = cat
            emit("cached", name, cat)
        else:
            todo.append(adapter)

    def work(adapter: LibraryAdapter) -> tuple[LibraryAdapter, LibraryCatalog | Exception]:
        emit("start", adapter.name, None)
        try:
            if in_process:
                return adapter, mine_library(adapter, registry)
            return adapter, mine_in_child(adapter, timeout)
        except XamtError as exc:
            return adapter, exc

    if todo:
        with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(todo)))) as pool:
            for adapter, outcome in pool.map(work, todo):
                if isinstance(outcome, Exception):
                    skipped[adapter.name] = str(outcome)
                    emit("skip", adapter.name, str(outcome))
                    continue
                save_catalog(store, adapter, outcome)
                catalogs[adapter.name] = outcome
                emit("done", adapter.name, outcome)
    ordered = {n: catalogs[n] for n in libraries if n in catalogs}
    return CatalogResult(ordered, skipped, time.perf_counter() - t0)
