import sqlite3

import pytest

from xamt.errors import StoreCorruptError, StoreError, StoreVersionError
from xamt.store import STORE_FORMAT, Schema, Store, default_db_path

SCHEMA_V1 = Schema("demo", 1, ("demo_rows",),
                   ("CREATE TABLE IF NOT EXISTS demo_rows (k TEXT PRIMARY KEY, v TEXT)",))
SCHEMA_V2 = Schema("demo", 2, ("demo_rows",),
                   ("CREATE TABLE IF NOT EXISTS demo_rows (k TEXT PRIMARY KEY, v TEXT, w TEXT)",))


def test_new_store_is_wal_with_version_tables(tmp_path):
    with Store(default_db_path(tmp_path)) as store:
        assert store.journal_mode().lower() == "wal"
        assert {"meta", "schema_versions"} <= set(store.tables())
        fmt = store.query("SELECT value FROM meta WHERE key='store_format'")[0][0]
        assert fmt == str(STORE_FORMAT)


def test_schema_version_recorded_and_mismatch_is_an_error(tmp_path):
    path = tmp_path / "x.db"
    with Store(path) as store:
        store.ensure(SCHEMA_V1)
        store.execute("INSERT INTO demo_rows VALUES ('a', '1')")
        assert store.schema_version("demo") == 1
    with Store(path) as store:
        with pytest.raises(StoreVersionError, match="demo"):
            store.ensure(SCHEMA_V2)
        # the rows survive a refused upgrade
        assert store.query("SELECT v FROM demo_rows")[0][0] == "1"


def test_recreate_on_mismatch_drops_cache_tables(tmp_path):
    path = tmp_path / "x.db"
    with Store(path) as store:
        store.ensure(SCHEMA_V1)
        store.execute("INSERT INTO demo_rows VALUES ('a', '1')")
    with Store(path) as store:
        store.ensure(SCHEMA_V2, on_mismatch="recreate")
        assert store.schema_version("demo") == 2
        assert store.query("SELECT count(*) FROM demo_rows")[0][0] == 0
        cols = [r[1] for r in store.query("PRAGMA table_info(demo_rows)")]
        assert cols == ["k", "v", "w"]


def test_corrupt_file_gives_a_clear_error(tmp_path):
    path = tmp_path / "xamt.db"
    path.write_bytes(b"this is not a sqlite database at all" * 100)
    with pytest.raises(StoreCorruptError, match="not a readable Xamt store"):
        Store(path)


def test_foreign_store_format_is_refused(tmp_path):
    path = tmp_path / "xamt.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('store_format', '999')")
    conn.commit()
    conn.close()
    with pytest.raises(StoreVersionError, match="format 999"):
        Store(path)


def test_transaction_rolls_back_on_error(tmp_path):
    with Store(tmp_path / "x.db") as store:
        store.ensure(SCHEMA_V1)
        with pytest.raises(RuntimeError):
            with store.transaction():
                store.execute("INSERT INTO demo_rows VALUES ('a', '1')")
                raise RuntimeError("boom")
        assert store.query("SELECT count(*) FROM demo_rows")[0][0] == 0


def test_bad_sql_is_a_store_error(tmp_path):
    with Store(tmp_path / "x.db") as store:
        with pytest.raises(StoreError, match="no such table"):
            store.query("SELECT * FROM nothing_here")


def test_missing_store_without_create(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        Store(tmp_path / "absent.db", create=False)
