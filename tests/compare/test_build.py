"""The C extension: built by setup.py in the normal path, buildable lazily as a fallback."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import xamt.compare as xc
from xamt.compare import backend_c
from xamt.compare.dtypes import Code
from xamt.compare.errors import BackendUnavailableError


def test_installed_extension_is_used():
    from xamt.compare import _ccompare  # built by `pip install -e .` (setup.py cffi_modules)

    assert Path(_ccompare.__file__).parent == Path(xc.__file__).parent
    assert backend_c.load_ccompare() is _ccompare


def test_element_codes_match_the_header():
    lib = backend_c.load_ccompare().lib
    for name in ("BOOL", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "F16", "BF16",
                 "F32", "F64", "C64", "C128"):
        assert getattr(lib, f"XC_{name}") == getattr(Code, name), name
    assert (lib.XC_DOMAIN_INT, lib.XC_DOMAIN_REAL, lib.XC_DOMAIN_COMPLEX) == (0, 1, 2)


def test_kernel_rejects_bad_arguments():
    be = xc.get_backend("c")
    with pytest.raises(BackendUnavailableError):
        be.run([np.zeros(2)] * 2, (12, 12), (True, True), 2, 5, 1, 0.0, 0.0, False,
               (0.0, 0.0), (1.0, 1.0))


def test_bytes_equal_and_read_sum():
    be = xc.get_backend("c")
    a = np.arange(10000, dtype=np.float64)
    b = a.copy()
    assert be.bytes_equal([a, b], a.nbytes)
    b[-1] += 1
    assert not be.bytes_equal([a, b], a.nbytes)
    assert be.read_sum(a) == float(a.sum())


def test_fallback_reports_missing_sources(monkeypatch, tmp_path):
    monkeypatch.setattr(backend_c, "_CSRC", tmp_path / "nowhere")
    with pytest.raises(BackendUnavailableError, match="not built"):
        backend_c._build_in_cache()


@pytest.mark.slow
def test_fallback_builds_into_cache(monkeypatch, tmp_path):
    """Without the installed module, the sources are compiled once into the cache folder."""
    monkeypatch.setenv("XAMT_CACHE_DIR", str(tmp_path))
    module = backend_c._build_in_cache()
    built = list(tmp_path.glob("ccompare-*/_ccompare*"))
    assert len(built) == 1 and Path(module.__file__) == built[0]
    be = backend_c.CBackend(module)
    a = np.float32([1, 2, np.nan, 4])
    b = np.float32([1, 2.5, np.nan, np.inf])
    assert be.run([a, b], (11, 11), (True, True), 4, 0, 1, 0.0, 0.0, False, (2.0**-23,) * 2,
                  (2.0**-149,) * 2) == xc.get_backend("c").run(
        [a, b], (11, 11), (True, True), 4, 0, 1, 0.0, 0.0, False, (2.0**-23,) * 2, (2.0**-149,) * 2)
    assert backend_c._build_in_cache().__file__ == module.__file__  # cached: no second build
