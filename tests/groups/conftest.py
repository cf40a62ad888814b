import pytest

from tests.groups.helpers import fake_adapter


@pytest.fixture(scope="package")
def adapters():
    """numpy, torch (when installed) and a fake library backed by numpy."""
    from xamt.libraries.registry import Registry

    reg = Registry()
    out = {"numpy": reg.get("numpy"), "crashy": fake_adapter()}
    try:
        import importlib.util

        if importlib.util.find_spec("torch") is not None:
            out["torch"] = reg.get("torch")
    except (ImportError, ValueError):
        pass
    return out


@pytest.fixture(scope="package")
def pool(adapters):
    """One sandbox pool for the package's tests (numpy and torch preloaded)."""
    from xamt.exec.pools import open_pool, pool_settings

    conf = pool_settings(a for n, a in adapters.items() if n != "crashy")
    with open_pool(workers=2, timeout=10, confirm=False, max_tasks_per_worker=None, **conf) as p:
        yield p
