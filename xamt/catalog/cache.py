"""The catalog in the store: its tables, the fingerprint that decides whether a cached
library's records are still what mining would yield, and saving and loading them."""
from __future__ import annotations

import hashlib
import json
import platform
import time
from typing import Iterable

from xamt.catalog.records import ApiRecord, LibraryCatalog
from xamt.libraries.base import LibraryAdapter
from xamt.store import Schema, Store

__all__ = ["MINER_VERSION", "CATALOG_SCHEMA", "miner_fingerprint", "cached_catalog",
           "save_catalog", "load_catalog"]


#: bump when mining rules change: cached catalogs with another version are mined again
MINER_VERSION = 5


CATALOG_SCHEMA = Schema(
    component="catalog",
    version=1,
    tables=("catalog_libraries", "catalog_apis"),
    statements=(
        "CREATE TABLE IF NOT EXISTS catalog_libraries ("
        " library TEXT PRIMARY KEY, version TEXT NOT NULL, fingerprint TEXT NOT NULL,"
        " mined_at REAL NOT NULL, seconds REAL NOT NULL, info TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS catalog_apis ("
        " library TEXT NOT NULL, qualname TEXT NOT NULL, kind TEXT NOT NULL,"
        " data TEXT NOT NULL, PRIMARY KEY (library, qualname))",
    ),
)


def miner_fingerprint(adapter: LibraryAdapter) -> str:
    """Hash of everything that decides what mining yields besides the library version."""
    payload = json.dumps(
        {
            "miner": MINER_VERSION,
            "adapter": adapter.describe(),
            "exclude": sorted(adapter.exclude),
            "methods": [(m.module, m.qualname, sorted(m.exclude)) for m in adapter.method_owners],
            "classes": [(c.module, c.base, c.call_method) for c in adapter.class_namespaces],
            "qualified": list(adapter.qualified_parents),
            "object_members": sorted(adapter.object_members),
            "python": platform.python_version(),
            # only when used, so adapters without these keep their cached catalogs
            **({"origins": {k: list(v) for k, v in sorted(adapter.namespace_origins.items())}}
               if adapter.namespace_origins else {}),
            **({"keyword_only": list(adapter.keyword_only_namespaces)}
               if adapter.keyword_only_namespaces else {}),
            **({"sub_apis": adapter.sub_apis_ref} if adapter.sub_apis_ref else {}),
            **({"constructed": [(c.module, c.base, list(c.methods))
                                + ((True,) if c.named_by_class else ())
                                for c in adapter.constructed_namespaces]}
               if adapter.constructed_namespaces else {}),
            **({"factories": [(f.module, [list(p) for p in f.call_params])
                              for f in adapter.factory_namespaces]}
               if adapter.factory_namespaces else {}),
            **({"fillings": [(f.module, f.param) for f in adapter.fill_namespaces]}
               if adapter.fill_namespaces else {}),
            **({"routine_types": sorted(adapter.routine_types)} if adapter.routine_types else {}),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def cached_catalog(store: Store, adapter: LibraryAdapter, version: str) -> LibraryCatalog | None:
    """The stored catalog of ``adapter``'s library when it was mined from ``version`` with
    today's :func:`miner_fingerprint`; None when it must be mined again."""
    rows = store.query(
        "SELECT version, fingerprint, seconds, info FROM catalog_libraries WHERE library=?",
        (adapter.name,),
    )
    if not rows:
        return None
    row = rows[0]
    if row["version"] != version or row["fingerprint"] != miner_fingerprint(adapter):
        return None
    records = [
        ApiRecord.from_json(json.loads(r["data"]))
        for r in store.query(
            "SELECT data FROM catalog_apis WHERE library=? ORDER BY qualname", (adapter.name,)
        )
    ]
    return LibraryCatalog(adapter.name, version, records, json.loads(row["info"]),
                          float(row["seconds"]), cached=True)


def save_catalog(store: Store, adapter: LibraryAdapter, cat: LibraryCatalog) -> None:
    """Replace the stored records of ``cat``'s library by ``cat``'s, with the fingerprint."""
    with store.transaction():
        store.execute("DELETE FROM catalog_apis WHERE library=?", (cat.library,))
        store.executemany(
            "INSERT INTO catalog_apis(library, qualname, kind, data) VALUES (?, ?, ?, ?)",
            [(cat.library, r.qualname, r.kind, json.dumps(r.to_json())) for r in cat.records],
        )
        store.execute(
            "INSERT OR REPLACE INTO catalog_libraries"
            "(library, version, fingerprint, mined_at, seconds, info) VALUES (?, ?, ?, ?, ?, ?)",
            (cat.library, cat.version, miner_fingerprint(adapter), time.time(), cat.seconds,
             json.dumps(cat.info)),
        )


def load_catalog(store: Store, libraries: Iterable[str] | None = None) -> dict[str, LibraryCatalog]:
    """Catalogs already in the store (no mining, no version check)."""
    store.ensure(CATALOG_SCHEMA, on_mismatch="recreate")
    wanted = None if libraries is None else set(libraries)
    result = {}
    for row in store.query("SELECT library, version, seconds, info FROM catalog_libraries"):
        lib = row["library"]
        if wanted is not None and lib not in wanted:
            continue
        records = [
            ApiRecord.from_json(json.loads(r["data"]))
            for r in store.query(
                "SELECT data FROM catalog_apis WHERE library=? ORDER BY qualname", (lib,)
            )
        ]
        result[lib] = LibraryCatalog(lib, row["version"], records, json.loads(row["info"]),
                                     float(row["seconds"]), cached=True)
    return result
