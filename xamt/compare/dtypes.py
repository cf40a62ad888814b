"""How each member dtype is read by the kernels.

One :class:`DtypeInfo` per dtype says which *kind* the dtype is (``bool``, ``int``, ``float``,
``complex`` or ``other``), which element code the kernels use for it, whether the array must be
converted first (ml_dtypes' narrow formats, ``longdouble``, non-native byte order), the
parameters of its ulp (``ulp(x) = max(pow2floor(|x|) * ulp_scale, ulp_min)``) and its default
tolerance. Lookups are cached per dtype, so the per-call cost is one dict access.
:func:`resolve_tolerance` makes a group's tolerance from its members' dtypes.
"""
from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

import ml_dtypes
import numpy as np

from xamt.compare.errors import ToleranceError
from xamt.compare.tolerance import Tolerance

__all__ = ["DtypeInfo", "dtype_info", "default_tolerances", "resolve_tolerance", "computation_tolerance",
           "KINDS", "Code"]

KINDS = ("bool", "int", "float", "complex", "other")


class Code:
    """Element codes; must match the XC_* enum of csrc/xamt_compare.h."""

    BOOL, I8, I16, I32, I64, U8, U16, U32, U64 = range(9)
    F16, BF16, F32, F64, C64, C128 = range(9, 15)
    OTHER = -1


@dataclass(frozen=True, slots=True)
class DtypeInfo:
    """Everything the comparator needs to know about one member dtype."""

    name: str  # the dtype's name as reported (e.g. "float32", "bfloat16", ">f4")
    kind: str  # one of KINDS
    code: int  # Code.* of the array handed to the kernels (after ``convert``)
    convert: np.dtype | None  # convert to this dtype first; None: use the array as it is
    ulp_scale: float  # 2**(1 - p) of the member's own precision p; 0 for integers and bool
    ulp_min: float  # 2**(emin + 1 - p), the spacing of its subnormals; 1 for integers and bool
    tol: tuple[float, float]  # default (rtol, atol)
    label: str  # str(dtype) of the member, for reports
    default_tol: Tolerance  # ``tol`` as a Tolerance (shared, so the front end need not build one)


@functools.cache
def default_tolerances() -> dict[str, tuple[float, float]]:
    """The reviewable default table (``xamt/compare/tolerances.json``), name -> (rtol, atol)."""
    text = resources.files("xamt.compare").joinpath("tolerances.json").read_text(encoding="utf-8")
    raw = json.loads(text)
    table: dict[str, tuple[float, float]] = {}
    for name, value in raw.items():
        if name.startswith("_"):
            continue
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in value)
        ):
            raise ToleranceError(f"tolerances.json: {name!r} must be [rtol, atol] (finite, >= 0)")
        table[name] = (float(value[0]), float(value[1]))
    return table


def _ulp(p: int, emin: int) -> tuple[float, float]:
    # ulp_min is clamped to float64's smallest subnormal so that longdouble stays usable
    return math.ldexp(1.0, 1 - p), max(math.ldexp(1.0, emin + 1 - p), math.ldexp(1.0, -1074))


_INT_ULP = (0.0, 1.0)
_EXACT = (0.0, 0.0)


@functools.cache
def _tolerance(pair: tuple[float, float]) -> Tolerance:
    return Tolerance(*pair)


def _build_table() -> dict[np.dtype, DtypeInfo]:
    tols = default_tolerances()
    table: dict[np.dtype, DtypeInfo] = {}

    def add(dt, kind, code, ulp, tol_name=None, convert=None, name=None):
        dt = np.dtype(dt)
        tol = tols.get(tol_name or dt.name, _EXACT)
        table[dt] = DtypeInfo(name or dt.name, kind, code, convert, ulp[0], ulp[1], tol, str(dt),
                              _tolerance(tol))

    add(np.bool_, "bool", Code.BOOL, _INT_ULP)
    for t, c in ((np.int8, Code.I8), (np.int16, Code.I16), (np.int32, Code.I32),
                 (np.int64, Code.I64), (np.uint8, Code.U8), (np.uint16, Code.U16),
                 (np.uint32, Code.U32), (np.uint64, Code.U64)):
        add(t, "int", c, _INT_ULP)
    add(np.float16, "float", Code.F16, _ulp(11, -14))
    add(np.float32, "float", Code.F32, _ulp(24, -126))
    add(np.float64, "float", Code.F64, _ulp(53, -1022))
    add(np.complex64, "complex", Code.C64, _ulp(24, -126))
    add(np.complex128, "complex", Code.C128, _ulp(53, -1022))
    add(ml_dtypes.bfloat16, "float", Code.BF16, _ulp(8, -126))
    if np.dtype(np.longdouble) != np.dtype(np.float64):
        fi = np.finfo(np.longdouble)
        ulp = _ulp(fi.nmant + 1, fi.minexp)
        add(np.longdouble, "float", Code.F64, ulp, "longdouble", np.dtype(np.float64))
        add(np.clongdouble, "complex", Code.C128, ulp, "clongdouble", np.dtype(np.complex128))
    # ml_dtypes' narrow formats are converted exactly to float32 / complex64 / int8 / uint8
    for name in ("float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                 "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                 "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"):
        t = getattr(ml_dtypes, name, None)
        if t is not None:
            fi = ml_dtypes.finfo(t)
            add(t, "float", Code.F32, _ulp(fi.nmant + 1, fi.minexp), name, np.dtype(np.float32))
    for name, comp in (("complex32", np.float16), ("bcomplex32", ml_dtypes.bfloat16)):
        t = getattr(ml_dtypes, name, None)
        if t is not None:
            fi = ml_dtypes.finfo(comp)
            add(t, "complex", Code.C64, _ulp(fi.nmant + 1, fi.minexp), name,
                np.dtype(np.complex64))
    for name, target, code in (("int1", np.int8, Code.I8), ("int2", np.int8, Code.I8),
                               ("int4", np.int8, Code.I8), ("uint1", np.uint8, Code.U8),
                               ("uint2", np.uint8, Code.U8), ("uint4", np.uint8, Code.U8)):
        t = getattr(ml_dtypes, name, None)
        if t is not None:
            add(t, "int", code, _INT_ULP, name, np.dtype(target))
    return table


@functools.cache
def _table() -> dict[np.dtype, DtypeInfo]:
    return _build_table()


_OTHER_CACHE: dict[np.dtype, DtypeInfo] = {}


def dtype_info(dt: np.dtype) -> DtypeInfo:
    """The :class:`DtypeInfo` of ``dt`` (any numpy or ml_dtypes dtype; never raises)."""
    table = _table()
    info = table.get(dt)
    if info is not None:
        return info
    info = _OTHER_CACHE.get(dt)
    if info is not None:
        return info
    info = _slow_info(dt, table)
    if len(_OTHER_CACHE) < 4096:  # bounded: structured dtypes can be made up without end
        _OTHER_CACHE[dt] = info
    return info


def _slow_info(dt: np.dtype, table: dict[np.dtype, DtypeInfo]) -> DtypeInfo:
    if not dt.isnative:
        nat = dt.newbyteorder("=")
        native = table.get(nat)
        if native is not None:  # same values, converted to native byte order first
            return DtypeInfo(native.name, native.kind, native.code, native.convert or nat,
                             native.ulp_scale, native.ulp_min, native.tol, str(dt),
                             native.default_tol)
    # strings, bytes, objects, datetimes, structured records: compared for exact equality
    return DtypeInfo(dt.str if dt.names is None else "structured", "other", Code.OTHER, None,
                     0.0, 1.0, _EXACT, str(dt), _tolerance(_EXACT))


# -- a group's tolerance ------------------------------------------------------------------
def _as_tolerance(value: object, where: str) -> Tolerance:
    if isinstance(value, Tolerance):
        return value
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) == 2:
        return Tolerance(value[0], value[1])
    raise ToleranceError(f"{where}: expected a Tolerance or an (rtol, atol) pair, got {value!r}")


def _dtype_name(key: object) -> str:
    try:
        return np.dtype(key).name  # accepts names, dtypes and scalar types alike
    except TypeError:
        raise ToleranceError(f"tolerance mapping key {key!r} is not a dtype") from None


def resolve_tolerance(tol: object, infos: Sequence[DtypeInfo]) -> Tolerance:
    """The group tolerance: the largest rtol and the largest atol over the members' dtypes.

    ``tol`` is None (defaults per dtype), a :class:`Tolerance` or (rtol, atol) pair (applies to
    every dtype), or a mapping dtype -> Tolerance / pair that overrides the defaults of the
    dtypes it names.
    """
    if tol is None:
        first = infos[0].default_tol
        if all(info.default_tol is first for info in infos):
            return first
        rtol = atol = 0.0
        for info in infos:
            r, a = info.tol
            rtol = r if r > rtol else rtol
            atol = a if a > atol else atol
        return Tolerance(rtol, atol)
    if isinstance(tol, Mapping):
        table = {_dtype_name(k): _as_tolerance(v, f"tolerance for {k!r}") for k, v in tol.items()}
        rtol = atol = 0.0
        for info in infos:
            over = table.get(info.name)
            r, a = (over.rtol, over.atol) if over is not None else info.tol
            rtol = r if r > rtol else rtol
            atol = a if a > atol else atol
        return Tolerance(rtol, atol)
    return _as_tolerance(tol, "tol")


def computation_tolerance(tol: object, dtypes: Iterable[np.dtype]) -> Tolerance | None:
    """The tolerance of a computation that ran over ``dtypes`` (its inputs' and outputs'): that
    of its lowest-precision float dtype (:func:`resolve_tolerance` over the float and complex
    ones, so ``tol`` overrides as there). A float16 input computed into a float64 output is
    compared at float16's tolerance, not float64's. None when no dtype is a float."""
    infos = []
    for dt in dtypes:
        info = dtype_info(np.dtype(dt))
        if info.kind in ("float", "complex") and info not in infos:
            infos.append(info)
    return resolve_tolerance(tol, infos) if infos else None
