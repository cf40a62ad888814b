"""Compile caches keyed by CPU and library versions (xamt.exec.group.compile_cache_dir)."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from xamt.exec.pools import compile_cache_dir, pool_settings


def lib(name, version):
    return SimpleNamespace(name=name, version=lambda: version, is_installed=lambda: True)


def test_the_key_follows_the_versions_and_stays_put_otherwise(tmp_path):
    a = compile_cache_dir(str(tmp_path), [lib("jax", "0.10.2"), lib("torch", "2.13.0")])
    b = compile_cache_dir(str(tmp_path), [lib("torch", "2.13.0"), lib("jax", "0.10.2")])
    c = compile_cache_dir(str(tmp_path), [lib("jax", "0.10.3"), lib("torch", "2.13.0")])
    assert a == b != c
    assert Path(a).parent == tmp_path / "cache"


def test_workers_are_pointed_at_the_keyed_cache(tmp_path, monkeypatch):
    from xamt.libraries.registry import Registry

    # a variable the user set wins over the data file's: not what this test is about
    for name in ("JAX_COMPILATION_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)

    adapters = [a for a in Registry() if a.name in ("numpy", "jax") and a.is_installed()]
    env = pool_settings(adapters, out_dir=str(tmp_path))["env"]
    key = compile_cache_dir(str(tmp_path.resolve()), adapters)
    assert env["JAX_COMPILATION_CACHE_DIR"] == str(Path(key) / "jax")
    # Inductor keys its own entries, in a folder of its own (validation.toml says why)
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path.resolve() / "cache" / "torchinductor")
    assert all("{" not in v for v in env.values())


def test_a_cache_copied_to_another_output_folder_is_read(tmp_path, monkeypatch):
    """A campaign in another folder, or on a copied cache, reuses what an earlier one compiled:
    no absolute path may reach JAX's cache keys (its GPU autotuning cache folder did)."""
    import shutil

    from sandbox import SandboxPool, Task
    from xamt.libraries.registry import Registry

    pytest.importorskip("jax", reason="jax is not installed")
    for name in ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"):
        monkeypatch.delenv(name, raising=False)
    adapters = [a for a in Registry() if a.name in ("numpy", "jax")]

    def events(out):
        ps = pool_settings(adapters, out_dir=str(out))
        with SandboxPool(preload=ps["preload"], warmup=ps["warmup"], env=ps["env"], workers=1,
                         timeout=120) as pool:
            outcome = pool.run([Task("tests.exec.cache_tasks:jax_cache_events")])[0]
        assert outcome.ok, outcome
        return outcome.value

    first = events(tmp_path / "a")
    assert first["cache_misses"] > 0 and first["cache_hits"] == 0
    shutil.copytree(tmp_path / "a" / "cache", tmp_path / "b" / "cache")
    assert events(tmp_path / "b") == {"cache_hits": first["cache_misses"], "cache_misses": 0}


@pytest.mark.slow
def test_inductor_s_cache_copied_to_another_output_folder_is_read(tmp_path, monkeypatch):
    """The same for torch.compile: Inductor's FX-graph cache, in ``{out}/cache/torchinductor``."""
    import shutil

    from sandbox import SandboxPool, Task
    from xamt.libraries.registry import Registry

    pytest.importorskip("torch", reason="torch is not installed")
    from xamt.libraries.torch import compile_available

    ok, why = compile_available()
    if not ok:
        pytest.skip(f"torch.compile cannot run here: {why}")
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    adapters = [a for a in Registry() if a.name in ("numpy", "torch")]

    def events(out):
        ps = pool_settings(adapters, out_dir=str(out))
        with SandboxPool(preload=ps["preload"], warmup=ps["warmup"], env=ps["env"], workers=1,
                         timeout=300, file_size_limit=ps["file_size_limit"]) as pool:
            outcome = pool.run([Task("tests.exec.cache_tasks:torch_cache_events")])[0]
        assert outcome.ok, outcome
        return outcome.value

    assert events(tmp_path / "a") == {"cache_hits": 0, "cache_misses": 2}
    shutil.copytree(tmp_path / "a" / "cache", tmp_path / "b" / "cache")
    assert events(tmp_path / "b") == {"cache_hits": 2, "cache_misses": 0}
