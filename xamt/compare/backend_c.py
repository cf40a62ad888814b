"""The ``c`` backend: the C99 kernels of ``csrc/`` through cffi.

Normally ``setup.py`` builds ``xamt.compare._ccompare`` with the package. When that module is
missing (a source checkout that was never installed, a build without a compiler at install
time) and the C sources are next to the package, :func:`load_ccompare` compiles them once into a
cache folder (``$XAMT_CACHE_DIR``, else ``$XDG_CACHE_HOME/xamt``, else ``~/.cache/xamt``) and
loads that build; the folder name carries a hash of the sources, so an edit triggers a rebuild.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
import tempfile
from pathlib import Path

from xamt.compare.errors import BackendUnavailableError
from xamt.log import get_logger

__all__ = ["CBackend", "load_ccompare"]

log = get_logger("compare")

_MODULE = "xamt.compare._ccompare"
_CSRC = Path(__file__).resolve().parents[2] / "csrc"
_SOURCES = ("xamt_compare.c", "xamt_compare.h", "build_compare.py")


def _cache_root() -> Path:
    explicit = os.environ.get("XAMT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "xamt"


def _build_in_cache():
    if not all((_CSRC / name).is_file() for name in _SOURCES):
        raise BackendUnavailableError(
            "the C comparator is not built (xamt.compare._ccompare is missing) and its sources "
            f"are not next to the package ({_CSRC}); reinstall with `pip install -e .`")
    digest = hashlib.sha256()
    for name in _SOURCES:
        digest.update((_CSRC / name).read_bytes())
    digest.update(sys.version.encode())
    digest.update(str(sysconfig.get_platform()).encode())
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    target = _cache_root() / f"ccompare-{digest.hexdigest()[:16]}" / f"_ccompare{suffix}"
    if not target.is_file():
        log.warning("building the C comparator into %s (the installed build is missing)", target)
        spec = importlib.util.spec_from_file_location("_xamt_build_compare", _CSRC / "build_compare.py")
        if spec is None or spec.loader is None:
            raise BackendUnavailableError(f"cannot load {_CSRC / 'build_compare.py'}")
        build_mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(build_mod)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
                builder = build_mod.make_builder(absolute_paths=True)
                built = Path(builder.compile(tmpdir=tmp, verbose=False))
                os.replace(built, target)  # atomic: concurrent builders do not see a partial file
        except Exception as exc:  # compiler missing or failing: say so, with the cause
            raise BackendUnavailableError(f"building the C comparator failed: {exc}") from exc
    spec = importlib.util.spec_from_file_location(_MODULE, target)
    if spec is None or spec.loader is None:
        raise BackendUnavailableError(f"cannot load the C comparator from {target}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def _load_once():
    try:
        from xamt.compare import _ccompare  # built by setup.py
        return _ccompare, None
    except ImportError:
        pass
    try:
        return _build_in_cache(), None
    except BackendUnavailableError as exc:  # remembered: a failed build is not retried per call
        return None, exc


def load_ccompare():
    """The compiled module (``ffi``, ``lib``): the installed build, else a cached local build.

    Raises :class:`BackendUnavailableError` (every time, after one attempt) when neither works.
    """
    module, error = _load_once()
    if error is not None:
        raise error
    return module


class CBackend:
    """Runs the C kernels. Construct with :meth:`load` (raises when unavailable)."""

    name = "c"

    def __init__(self, module) -> None:
        self._ffi = module.ffi
        self._lib = module.lib
        self._null = module.ffi.NULL
        # per-signature parameter arrays (codes, active flags, ulp parameters): the fuzzer
        # compares the same few dtype combinations over and over; the C side only reads them
        self._params: dict[tuple, tuple] = {}

    @classmethod
    def load(cls) -> "CBackend":
        return cls(load_ccompare())

    def _param_arrays(self, codes, active, ulp_scale, ulp_min) -> tuple:
        key = (codes, active, ulp_scale, ulp_min)
        params = self._params.get(key)
        if params is None:
            ffi = self._ffi
            params = (ffi.new("int[]", list(codes)), ffi.new("unsigned char[]", list(active)),
                      ffi.new("double[]", list(ulp_scale)), ffi.new("double[]", list(ulp_min)))
            if len(self._params) >= 4096:  # bounded; signatures are few in practice
                self._params.clear()
            self._params[key] = params
        return params

    def run(self, arrays, codes, active, n, ref, domain, rtol, atol, signed_zero, ulp_scale,
            ulp_min):
        """Kernel call; returns (counts: 5 ints per member, maxima: 4 floats per member).

        ``codes``, ``active``, ``ulp_scale`` and ``ulp_min`` are tuples (hashable)."""
        ffi = self._ffi
        k = len(arrays)
        c_codes, c_active, c_scale, c_min = self._param_arrays(codes, active, ulp_scale, ulp_min)
        from_buffer = ffi.from_buffer
        null = self._null
        data = ffi.new("void *[]", [from_buffer(a) if act else null for a, act in zip(arrays, active)])
        counts = ffi.new("int64_t[]", 5 * k)
        maxima = ffi.new("double[]", 4 * k)
        rc = self._lib.xc_compare(k, data, c_codes, c_active, n, ref, domain, rtol, atol,
                                  signed_zero, c_scale, c_min, counts, maxima)
        if rc != 0:
            if rc == -2:
                raise MemoryError("xc_compare: out of memory")
            raise BackendUnavailableError(f"xc_compare rejected its arguments (rc={rc})")
        return ffi.unpack(counts, 5 * k), ffi.unpack(maxima, 4 * k)

    def bytes_equal(self, arrays, nbytes: int) -> bool:
        """True when the first ``nbytes`` bytes of all arrays are identical (memcmp)."""
        ffi = self._ffi
        data = ffi.new("void *[]", [ffi.from_buffer(a) for a in arrays])
        return bool(self._lib.xc_bytes_equal(len(arrays), data, nbytes))

    def read_sum(self, buf) -> float:
        """Sum of a float64 buffer, for measuring memory read bandwidth (bench only)."""
        return self._lib.xc_read_sum(self._ffi.from_buffer("double[]", buf), len(buf))
