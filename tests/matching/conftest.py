"""Shared fixtures: catalogs of numpy, scipy, torch and jax mined once per test session."""
import pytest

from xamt.catalog import build_catalog
from xamt.matching.data import load_matching_data
from xamt.matching.engine import match
from xamt.store import Store

FAST_LIBS = ("numpy", "scipy", "torch", "jax")


@pytest.fixture(scope="session")
def data():
    return load_matching_data()


@pytest.fixture(scope="session")
def catalogs(tmp_path_factory):
    for lib in FAST_LIBS:
        pytest.importorskip(lib)
    path = tmp_path_factory.mktemp("xamt-catalog") / "xamt.db"
    with Store(path) as store:
        result = build_catalog(store, list(FAST_LIBS))
    assert not result.skipped, result.skipped
    return result.catalogs


@pytest.fixture(scope="session")
def result(catalogs, data):
    return match(catalogs, data)


@pytest.fixture(scope="session")
def groups(result):
    return {g.key: g for g in result.groups}
