"""The sandbox pools that run members: their preloads and environment, one pool per runtime.

Most libraries share the main zygote. An adapter with a :class:`~xamt.libraries.base.Runtime`
(keras on JAX, which needs ``KERAS_BACKEND=jax`` at import; a library in a venv of its own) gets a
pool of its own, and :func:`open_pool` puts them behind one :class:`sandbox.PoolSet`: a task
whose ``runtime`` names that pool runs there (:func:`runtime_of` names a member's).
:func:`pool_settings` gives the keyword arguments, :func:`compile_cache_dir` the compile cache
folder every runtime shares.
"""
from __future__ import annotations

import hashlib
import os
import platform
from typing import Any, Iterable, Mapping

__all__ = ["MAIN_RUNTIME", "RUNTIME_WORKERS", "runtime_of", "pool_settings", "open_pool",
           "compile_cache_dir", "compatible"]

#: the name of the main zygote's pool in a :class:`sandbox.PoolSet`
MAIN_RUNTIME = "main"
#: workers of each other runtime's pool by default (their libraries take a small share of the calls)
RUNTIME_WORKERS = 1


def runtime_of(adapter: Any) -> str | None:
    """The runtime a library's calls run in: its runtime's name, None for the main zygote."""
    runtime = getattr(adapter, "runtime", None)
    return None if runtime is None else runtime.name


def compatible(a: Any, b: Any) -> bool:
    """Whether two libraries can run in one process (a reproducer's): one interpreter, and no
    environment variable that one needs set otherwise than the other (``KERAS_BACKEND``)."""
    def python(adapter: Any) -> str | None:
        runtime = getattr(adapter, "runtime", None)
        return None if runtime is None else runtime.venv

    if python(a) != python(b):
        return False
    env_a, env_b = a.worker_environment(), b.worker_environment()
    return all(env_b[k] == v for k, v in env_a.items() if k in env_b)


def _preloads(libraries: Iterable[Any]) -> tuple[list[str], list[str], dict[str, str]]:
    preload = ["numpy"]
    warmup: list[str] = []
    env: dict[str, str] = {}
    for adapter in libraries:
        warmup += [ref for ref in adapter.zygote_warmup if ref not in warmup]
        if adapter.import_name not in preload:
            preload.append(adapter.import_name)
        env.update(adapter.worker_environment())
        module = adapter.from_numpy_ref.split(":")[0]
        if module not in preload:
            preload.append(module)
    preload += ["xamt.exec.member", "xamt.exec.probe", "xamt.libraries.invoke"]
    return preload, warmup, env


def pool_settings(libraries: Iterable[Any], out_dir: str | None = None,
                  environment: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``preload``, ``warmup``, ``env``, ``file_size_limit`` and ``runtimes`` for
    :func:`open_pool` (the first four are a :class:`sandbox.SandboxPool`'s, for the main zygote's
    libraries; ``runtimes`` maps each other runtime's name to its ``preload``, ``warmup``,
    ``python`` and the ``env`` it sets over the main pool's).

    With ``out_dir`` the worker environment of ``validation.toml`` (``[environment]``: on-disk
    caches of compiled programs, JAX's and TorchInductor's) is added, ``{cache}`` standing for
    :func:`compile_cache_dir` and ``{out}`` for the output folder; ``environment`` replaces that
    table (a build's own ``validation.toml``). A variable set in this process wins over the
    table's. ``file_size_limit`` leaves room for TorchInductor's precompiled header (~150 MB).
    """
    libraries = list(libraries)
    main = [a for a in libraries if runtime_of(a) is None]
    preload, warmup, env = _preloads(main)
    runtimes: dict[str, dict[str, Any]] = {}
    for adapter in libraries:
        name = runtime_of(adapter)
        if name is None:
            continue
        members = [a for a in libraries if runtime_of(a) == name]
        r_preload, r_warmup, r_env = _preloads(members)
        python = adapter.runtime.python() if adapter.runtime.venv is not None else None
        # the other interpreter imports xamt's worker modules from this checkout (PYTHONPATH)
        r_env = adapter.runtime.child_environment(r_env)
        runtimes[name] = {"preload": tuple(r_preload), "warmup": tuple(r_warmup), "env": r_env,
                          "python": python}
    if out_dir is not None:
        base = os.path.abspath(out_dir)
        cache = compile_cache_dir(base, libraries)
        table = _worker_environment() if environment is None else environment
        for key, value in table.items():
            env.setdefault(key, os.environ.get(key, value.replace("{cache}", cache).replace("{out}", base)))
    return {"preload": tuple(preload), "warmup": tuple(warmup), "env": env, "file_size_limit": 1 << 30,
            "runtimes": runtimes}


def open_pool(*, runtimes: Mapping[str, Mapping[str, Any]] | None = None,
              runtime_workers: int = RUNTIME_WORKERS, **kwargs: Any) -> Any:
    """A :class:`sandbox.SandboxPool` with ``kwargs``; with ``runtimes`` (from
    :func:`pool_settings`), a :class:`sandbox.PoolSet` of it (``main``) and one pool per runtime,
    with the same settings, that runtime's preloads, interpreter and environment on top, and
    ``runtime_workers`` workers at most (their libraries take a small share of the calls)."""
    from sandbox import PoolSet, SandboxPool

    main = SandboxPool(**kwargs)
    if not runtimes:
        return main
    pools = {MAIN_RUNTIME: main}
    try:
        for name, extra in runtimes.items():
            opts = dict(kwargs)
            opts["workers"] = max(1, min(int(kwargs.get("workers", 2)), runtime_workers))
            opts["preload"], opts["warmup"] = extra["preload"], extra["warmup"]
            opts["env"] = {**(kwargs.get("env") or {}), **extra["env"]}
            if extra.get("python"):
                opts["python"] = extra["python"]
            pools[name] = SandboxPool(**opts)
    except BaseException:
        for pool in pools.values():
            pool.close(wait=False)
        raise
    return PoolSet(pools, default=MAIN_RUNTIME)


def compile_cache_dir(out_dir: str, libraries: Iterable[Any]) -> str:
    """``<out_dir>/cache/<key>`` (``{cache}`` in ``validation.toml``): a compile cache folder
    keyed by the CPU and the libraries' versions (a program compiled for another CPU or by
    another version must never be loaded), so an upgrade or a copied output folder starts a cache
    of its own. JAX's cache lives there; ``validation.toml`` says why Inductor's does not."""
    cpu = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(("model name", "flags", "Features")):
                    cpu += "|" + line.split(":", 1)[1].strip()
    except OSError:
        cpu += "|" + platform.processor()
    versions = ",".join(sorted(f"{a.name}={a.version()}" for a in libraries if a.is_installed()))
    digest = hashlib.blake2b(f"{cpu}\n{versions}\n{platform.python_version()}".encode(), digest_size=6)
    return os.path.join(out_dir, "cache", digest.hexdigest())


def _worker_environment() -> dict[str, str]:
    """``validation.toml``'s ``[environment]``: the workers' environment, ``{cache}`` standing for
    the compile cache folder and ``{out}`` for the output folder (read here, below the groups
    package that reads the rest of the file)."""
    from xamt.datafiles import read_toml
    from xamt.errors import DataFileError

    data, where, _ = read_toml("validation.toml")
    env = data.get("environment", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise DataFileError(f"{where}: [environment] values must be strings")
    return dict(env)
