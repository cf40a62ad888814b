"""cffi build script of the comparator kernels (``xamt.compare._ccompare``).

``setup.py`` finds this file through ``cffi_modules`` and builds the extension with the package
(``pip install -e .`` puts it next to ``xamt/compare/__init__.py``). The comparator can also call
:func:`make_builder` at run time to compile into a cache folder when the built module is missing
(see ``xamt/compare/backend_c.py``).

Flags: ``-O3`` for auto-vectorisation; ``-ffp-contract=off`` because a fused multiply-add would
round differently from the numba and numpy backends and break bit-identical reports;
``-fno-math-errno`` and ``-fno-trapping-math`` only drop errno/FP-flag bookkeeping and change no
result. No ``-march``: the hot loops carry ``target_clones`` (AVX-512, AVX2, baseline) instead,
so one build runs on any x86-64 machine.
"""
from __future__ import annotations

from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent
MODULE = "xamt.compare._ccompare"
SOURCES = ("xamt_compare.c",)
HEADER = "xamt_compare.h"
CFLAGS = ["-O3", "-std=c99", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math"]


def cdef_text() -> str:
    """The declarations between the CDEF markers of the header (one source of truth)."""
    text = (HERE / HEADER).read_text(encoding="utf-8")
    start = text.index("/* CDEF-BEGIN */") + len("/* CDEF-BEGIN */")
    end = text.index("/* CDEF-END */")
    return text[start:end]


def make_builder(absolute_paths: bool = False) -> cffi.FFI:
    """A configured :class:`cffi.FFI` builder.

    ``setup.py`` needs source paths relative to the project root (it runs there);
    ``absolute_paths=True`` is for compiling from anywhere else (the run-time fallback).
    """
    builder = cffi.FFI()
    builder.cdef(cdef_text())
    base = HERE if absolute_paths else Path(HERE.name)
    builder.set_source(
        MODULE,
        f'#include "{HEADER}"',
        sources=[str(base / s) for s in SOURCES],
        include_dirs=[str(base)],
        extra_compile_args=list(CFLAGS),
        libraries=["m"],
    )
    return builder


ffibuilder = make_builder()

if __name__ == "__main__":
    # manual rebuild (python csrc/build_compare.py): objects go to build/ (ignored), the module
    # next to the package, where the editable install puts it too
    import shutil

    root = HERE.parent
    built = Path(make_builder(absolute_paths=True).compile(tmpdir=str(root / "build" / "cffi"),
                                                           verbose=True))
    # the file name setup.py's build uses, so that neither build can shadow the other
    target = root / "xamt" / "compare" / "_ccompare.abi3.so"
    for stale in target.parent.glob("_ccompare*.so"):
        stale.unlink()
    shutil.copy2(built, target)
    print(target)
