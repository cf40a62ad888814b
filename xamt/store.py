"""Xamt's SQLite store: one file (``xamt-out/xamt.db`` by default) shared by every component.

The store is small and general:

* the connection runs in WAL mode (readers do not block the one writer) with foreign keys on;
* a ``meta`` table holds the store's own format version; a file written by a newer or older
  *store format* is refused with :class:`~xamt.errors.StoreVersionError`;
* each component declares its tables as a :class:`Schema` (a name, a version, DDL statements) and
  calls :meth:`Store.ensure` once; the ``schema_versions`` table records which version of each
  component's tables the file holds. A mismatch is either an error (``on_mismatch="error"``, for
  tables holding results worth keeping) or drops and recreates that component's tables
  (``on_mismatch="recreate"``, for caches that can be rebuilt, such as the mined catalog);
* a file that is not a SQLite database raises :class:`~xamt.errors.StoreCorruptError` naming the
  file, never a bare ``sqlite3.DatabaseError``.

Components add tables by declaring another :class:`Schema`; nothing here knows their content.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Sequence

from xamt.errors import StoreCorruptError, StoreError, StoreVersionError
from xamt.log import get_logger

__all__ = ["Schema", "Store", "STORE_FORMAT", "DEFAULT_DB_NAME", "default_db_path"]

#: Version of the store's own bookkeeping (``meta`` and ``schema_versions``).
STORE_FORMAT = 1
DEFAULT_DB_NAME = "xamt.db"

_log = get_logger("store")

_BOOTSTRAP = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS schema_versions ("
    " component TEXT PRIMARY KEY, version INTEGER NOT NULL, tables TEXT NOT NULL)",
)


def default_db_path(out_dir: str | Path) -> Path:
    """Path of the store inside an output folder (``<out>/xamt.db``)."""
    return Path(out_dir) / DEFAULT_DB_NAME


@dataclass(frozen=True)
class Schema:
    """The tables one component owns.

    ``tables`` lists the table names the DDL creates (so a recreate can drop them);
    ``statements`` are ``CREATE TABLE/INDEX IF NOT EXISTS`` statements run in order.
    """

    component: str
    version: int
    tables: tuple[str, ...]
    statements: tuple[str, ...]


class Store:
    """An open store. Use as a context manager, or call :meth:`close`.

    The store is not a singleton: every caller opens its own :class:`Store` on a path.
    """

    def __init__(self, path: str | Path, *, create: bool = True, timeout: float = 30.0):
        self.path = Path(path)
        if not create and not self.path.exists():
            raise StoreError(f"store {self.path} does not exist (run `xamt catalog` first?)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for store {self.path}: {exc}") from exc
        try:
            # Autocommit mode: transactions are explicit (see transaction()), never implicit.
            self._conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        try:
            self._init_connection()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise StoreCorruptError(
                f"{self.path} is not a readable Xamt store ({exc}); move it away or delete it"
            ) from exc
        except BaseException:
            self._conn.close()
            raise

    # -- set-up -----------------------------------------------------------------------------
    def _init_connection(self) -> None:
        conn = self._conn
        # Touching the schema first makes sqlite read the header: a non-database file fails here.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            _log.warning("store %s: journal mode is %s, not WAL", self.path, mode)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        with self.transaction():
            for stmt in _BOOTSTRAP:
                conn.execute(stmt)
            row = conn.execute("SELECT value FROM meta WHERE key='store_format'").fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES ('store_format', ?)", (str(STORE_FORMAT),)
                )
            elif row[0] != str(STORE_FORMAT):
                raise StoreVersionError(
                    f"store {self.path} has store format {row[0]}, this Xamt writes format "
                    f"{STORE_FORMAT}; use another --out folder or delete the file"
                )

    def ensure(self, schema: Schema, *, on_mismatch: Literal["error", "recreate"] = "error") -> None:
        """Create ``schema``'s tables if needed and check the recorded version.

        On a version mismatch, ``"recreate"`` drops the component's tables (a rebuildable cache)
        and ``"error"`` raises :class:`StoreVersionError`.
        """
        conn = self._conn
        with self.transaction():
            row = conn.execute(
                "SELECT version, tables FROM schema_versions WHERE component=?", (schema.component,)
            ).fetchone()
            if row is not None and row["version"] != schema.version:
                if on_mismatch != "recreate":
                    raise StoreVersionError(
                        f"store {self.path}: tables of {schema.component!r} are version "
                        f"{row['version']}, this Xamt expects {schema.version}"
                    )
                _log.info(
                    "store %s: recreating %s tables (version %s -> %s)",
                    self.path, schema.component, row["version"], schema.version,
                )
                old_tables = [t for t in row["tables"].split(",") if t]
                for table in dict.fromkeys([*old_tables, *schema.tables]):
                    conn.execute(f'DROP TABLE IF EXISTS "{table}"')
            for stmt in schema.statements:
                conn.execute(stmt)
            conn.execute(
                "INSERT INTO schema_versions(component, version, tables) VALUES (?, ?, ?) "
                "ON CONFLICT(component) DO UPDATE SET version=excluded.version, tables=excluded.tables",
                (schema.component, schema.version, ",".join(schema.tables)),
            )

    def schema_version(self, component: str) -> int | None:
        """Version of ``component``'s tables in this file, or None if it has none."""
        row = self._conn.execute(
            "SELECT version FROM schema_versions WHERE component=?", (component,)
        ).fetchone()
        return None if row is None else int(row[0])

    # -- access -----------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        """Run one statement; outside :meth:`transaction` it commits at once."""
        try:
            return self._conn.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"store {self.path}: {exc} (in: {sql.strip()[:80]})") from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        """Run one statement for many parameter rows."""
        try:
            return self._conn.executemany(sql, rows)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"store {self.path}: {exc} (in: {sql.strip()[:80]})") from exc

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run a query and return all rows (rows index by column name)."""
        return self.execute(sql, params).fetchall()

    def transaction(self) -> "_Transaction":
        """Context manager: commit on success, roll back on an exception."""
        return _Transaction(self)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        try:
            self._conn.close()
        except sqlite3.Error:  # closing twice or after a failed open is harmless
            pass

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tables(self) -> list[str]:
        """Names of all tables in the file (for diagnostics and tests)."""
        return [r[0] for r in self.query("SELECT name FROM sqlite_master WHERE type='table'")]

    def journal_mode(self) -> str:
        return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0])


class _Transaction:
    def __init__(self, store: Store):
        self._store = store

    def __enter__(self) -> Store:
        self._store._conn.execute("BEGIN IMMEDIATE")
        return self._store

    def __exit__(self, exc_type, exc, tb) -> None:
        conn = self._store._conn
        if exc_type is None:
            try:
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as err:
                raise StoreError(f"store {self._store.path}: commit failed: {err}") from err
        else:
            conn.execute("ROLLBACK")


def iter_chunks(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    """Split ``items`` into slices of at most ``size`` (bulk inserts stay bounded)."""
    for start in range(0, len(items), size):
        yield items[start:start + size]
