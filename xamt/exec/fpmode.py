"""The CPU's handling of subnormal floats around one call: flush-to-zero and denormals-are-zero.

XLA on CPU (under JAX, TensorFlow and Keras) and TensorFlow's CPU kernels run with the SSE
control register's FTZ bit (a subnormal result becomes 0) and DAZ bit (a subnormal operand reads
as 0) set. A subnormal *intermediate* flushed inside such a computation shows where no input is
subnormal: keras' ``cholesky_inverse`` zeroing a row through TensorFlow's triangular solve of
1/3.4e38. Triage tells that from a wrong result by calling a member of another library with the
same two bits set (:func:`flushing_subnormals`): when it then gives the outlier's result, the
difference is the flushing.

The bits are per thread, and the call runs on the worker's thread (its libraries' thread pools
are pinned to one). Supported on Linux x86-64 with glibc, whose ``fenv_t`` holds MXCSR at byte 28;
elsewhere :func:`flushing_subnormals` raises :class:`FloatModeUnavailable` and no such evidence is
taken.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import platform
import struct
import sys
from typing import Iterator

__all__ = ["FloatModeUnavailable", "flushing_subnormals"]

#: MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6)
_FTZ_DAZ = 0x8040
#: glibc's x86-64 ``fenv_t``: the x87 environment (28 bytes), then MXCSR
_FENV_SIZE, _MXCSR_AT = 32, 28


class FloatModeUnavailable(RuntimeError):
    """This platform offers no way to set the flush-to-zero mode from here."""


def _libm() -> ctypes.CDLL:
    if sys.platform != "linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        raise FloatModeUnavailable(f"flush-to-zero mode is set on Linux x86-64 only, not {sys.platform} "
                                   f"{platform.machine()}")
    name = ctypes.util.find_library("m")
    if name is None:
        raise FloatModeUnavailable("libm not found")
    return ctypes.CDLL(name)


@contextlib.contextmanager
def flushing_subnormals() -> Iterator[None]:
    """Run the block with FTZ and DAZ set on this thread; the previous floating-point
    environment is restored afterwards, whatever the block raised."""
    libm = _libm()
    saved = ctypes.create_string_buffer(_FENV_SIZE)
    if libm.fegetenv(saved) != 0:
        raise FloatModeUnavailable("fegetenv failed")
    flushed = ctypes.create_string_buffer(saved.raw, _FENV_SIZE)
    mxcsr = struct.unpack_from("<I", saved.raw, _MXCSR_AT)[0]
    struct.pack_into("<I", flushed, _MXCSR_AT, mxcsr | _FTZ_DAZ)
    if libm.fesetenv(flushed) != 0:
        raise FloatModeUnavailable("fesetenv failed")
    try:
        yield
    finally:
        libm.fesetenv(saved)
