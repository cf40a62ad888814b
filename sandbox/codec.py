"""msgpack with extension types for arrays, numpy scalars, tuples and a few Python objects.

Two forms:

* :func:`dumps` / :func:`loads`: one self-contained msgpack blob (for storing values).
* :func:`encode_packet` / :func:`decode_packet`: a msgpack *header* plus out-of-band buffers,
  one per large array, which :mod:`sandbox.channel` writes to a socket with scatter-gather I/O
  and the receiver decodes as views into the received bytes (no further copy).

Arrays of every numeric numpy dtype and every ``ml_dtypes`` dtype (bfloat16, float8 variants,
int4 ...) round-trip, including 0-d, empty, Fortran-ordered (kept) and non-contiguous ones (sent
as C-contiguous copies). Big-endian arrays are sent in native (little-endian) order. Object and
structured arrays are refused. Tuples stay tuples; other tuple, list, dict, str, int and float
subclasses (namedtuples, ``torch.Size``, ``OrderedDict``, ``IntEnum``) become their base type.

On the worker side (``tensors=True``) torch, tensorflow and jax tensors are converted to numpy,
and each conversion is recorded (type, device, library dtype). The table of converters,
:data:`TENSOR_CONVERTERS`, is keyed by the top-level package of the tensor's type.

Runs under other interpreters too (numpy and msgpack needed, ml_dtypes optional): Python 3.9 syntax.
"""
from __future__ import annotations

import functools
import struct
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import msgpack
import numpy as np

from .errors import DecodeError, EncodeError
from .outcome import Ref

# Array payload: u8 fortran, u8 ndim, u8 len(dtype code), dtype code, ndim x i64 shape, then the
# raw bytes (inline) or a u32 buffer index (out of band).
EXT_ARRAY = 1
EXT_ARRAY_OOB = 2
EXT_SCALAR = 3       # u8 len(dtype code), dtype code, raw bytes: a numpy scalar
EXT_TUPLE = 4        # msgpack list
EXT_COMPLEX = 5      # two little-endian float64
EXT_BIGINT = 6       # decimal string, for ints outside msgpack's 64-bit range
EXT_REF = 7          # i64 step index
EXT_DTYPE = 8        # dtype code
EXT_SLICE = 9        # [start, stop, step]
EXT_ELLIPSIS = 10    # empty

#: arrays up to this many bytes travel inside the header (copied); larger ones out of band
INLINE_LIMIT = 16 * 1024

_BUILTIN_KINDS = frozenset("biufcmMSU")
_COMPLEX = struct.Struct("<dd")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_ARRAY_HEAD = struct.Struct("<BBB")
_PACKET_HEAD = struct.Struct("<II")  # header length, buffer count: a packet in a sandbox.channel frame
_SHAPES = [struct.Struct(f"<{n}q") for n in range(65)]  # numpy allows at most 64 dimensions
_ML_PREFIX = "ml_dtypes:"

_code_cache: Dict[np.dtype, str] = {}
_prefix_cache: Dict[Tuple[np.dtype, int, bool], bytes] = {}  # array header up to the shape
_dtype_cache: Dict[str, np.dtype] = {}


def dtype_code(dtype: np.dtype) -> str:
    """A portable name for ``dtype``: ``"<f4"`` for numpy's own, ``"ml_dtypes:bfloat16"`` for ml_dtypes'."""
    code = _code_cache.get(dtype)
    if code is None:
        if dtype.fields is None and getattr(dtype.type, "__module__", "").startswith("ml_dtypes"):
            code = _ML_PREFIX + dtype.name  # before the kind test: some report kind 'f' ('<f1')
        elif dtype.kind in _BUILTIN_KINDS:
            code = dtype.newbyteorder("<").str if dtype.byteorder == ">" else dtype.str
        else:
            raise EncodeError(f"arrays of dtype {dtype!r} (kind {dtype.kind!r}) cannot be encoded")
        _code_cache[dtype] = code
    return code


def dtype_from_code(code: str) -> np.dtype:
    """Inverse of :func:`dtype_code`."""
    dtype = _dtype_cache.get(code)
    if dtype is None:
        try:
            if code.startswith(_ML_PREFIX):
                import ml_dtypes  # optional: only needed when such arrays arrive

                dtype = np.dtype(getattr(ml_dtypes, code[len(_ML_PREFIX):]))
            else:
                dtype = np.dtype(code)
        except (ImportError, AttributeError, TypeError) as exc:
            raise DecodeError(f"unknown dtype code {code!r}: {exc}") from None
        _dtype_cache[code] = dtype
    return dtype


# ---------------------------------------------------------------------------------------------
# tensor -> numpy, worker side. Each converter returns (array, TensorInfo fields) or None when the
# object is not a tensor of its library.

_names: Dict[Any, str] = {}  # str() of types, dtypes and devices: few distinct values, asked often


def _name(obj: Any) -> str:
    name = _names.get(obj)
    if name is None:
        name = _names[obj] = (f"{obj.__module__}.{obj.__qualname__}" if isinstance(obj, type) else str(obj))
    return name


_modules: Dict[str, Any] = {}  # libraries the converters imported (an import statement per call costs)


def _torch_to_numpy(obj: Any) -> Optional[Tuple[np.ndarray, str, str, str]]:
    torch = _modules.get("torch")
    if torch is None:
        import torch

        _modules["torch"] = torch
    if not isinstance(obj, torch.Tensor):
        return None
    try:
        # the common case: a dense CPU tensor of a dtype numpy has (shares memory, no copy)
        array = obj.numpy()
    except (RuntimeError, TypeError):
        array = _torch_to_numpy_careful(obj, torch)
    # the device of a CPU tensor is "cpu" (is_cpu is cheap; .device makes a new object per call)
    return array, _name(type(obj)), "cpu" if obj.is_cpu else _name(obj.device), _name(obj.dtype)


def _torch_to_numpy_careful(obj: Any, torch: Any) -> np.ndarray:
    """Gradients, sparse layouts, quantized, conjugate/negative views, other devices, and the
    dtypes numpy lacks (bfloat16 and float8 via ml_dtypes, complex32 as complex64)."""
    t = obj.detach()
    if t.layout != torch.strided:
        t = t.to_dense()
    if t.is_quantized:
        t = t.dequantize()
    t = t.resolve_conj().resolve_neg().cpu()
    dt = t.dtype
    if dt == torch.bfloat16 or str(dt).startswith("torch.float8"):
        import ml_dtypes

        name = "bfloat16" if dt == torch.bfloat16 else str(dt)[len("torch."):]
        bits = torch.int16 if dt == torch.bfloat16 else torch.uint8
        return t.contiguous().view(bits).numpy().view(getattr(ml_dtypes, name))
    if dt == torch.complex32:
        return t.to(torch.complex64).numpy()
    return t.numpy()


def _tensorflow_to_numpy(obj: Any) -> Optional[Tuple[np.ndarray, str, str, str]]:
    import tensorflow as tf

    if not (tf.is_tensor(obj) or isinstance(obj, tf.Variable)) or not hasattr(obj, "numpy"):
        return None
    kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
    array = np.asarray(obj.numpy())
    return array, kind, str(obj.device), obj.dtype.name


def _jax_to_numpy(obj: Any) -> Optional[Tuple[np.ndarray, str, str, str]]:
    import jax

    if not isinstance(obj, jax.Array):
        return None
    kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
    devices = ",".join(sorted(str(d) for d in obj.devices()))
    return np.asarray(obj), kind, devices, str(obj.dtype)


#: top-level package of a tensor's type -> converter (the only per-library code in the sandbox)
TENSOR_CONVERTERS: Dict[str, Callable[[Any], Optional[Tuple[np.ndarray, str, str, str]]]] = {
    "torch": _torch_to_numpy,
    "tensorflow": _tensorflow_to_numpy,
    "jax": _jax_to_numpy,
    "jaxlib": _jax_to_numpy,
}


class _TensorsSeen:
    """Marker that encodes as the list of tensors converted so far in the same encoding:
    placed after a value in a list, it lists the value's tensors as ``[index, kind, device, dtype]``."""

    def __repr__(self) -> str:
        return "TENSORS_SEEN"


TENSORS_SEEN = _TensorsSeen()


# ---------------------------------------------------------------------------------------------

def _type_name(obj: Any) -> str:
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


class _Encoder:
    """Encoding state (out-of-band buffers, converted tensors) and reusable msgpack Packers.

    Packers are expensive to create, so each encoder keeps one per nesting depth (a Packer is
    not re-entrant, and tuples pack their items with a nested call). Encoders are reused per
    thread (see :func:`_encoder`), with the state reset for every value.

    msgpack calls :meth:`default` for every object it does not pack itself (``strict_types``:
    also for subclasses of the types it knows). The handler depends only on the object's type,
    so it is looked up in a per-encoder table filled on first sight of each type
    (:meth:`_classify`): one dictionary lookup per object instead of a chain of tests.
    """

    __slots__ = ("oob", "tensors", "buffers", "tensor_info", "header", "_packers", "_depth", "_handlers")

    def __init__(self, oob: bool, tensors: bool) -> None:
        self.header = b""
        self.oob = oob
        self.tensors = tensors
        self.buffers: List[memoryview] = []
        self.tensor_info: List[list] = []
        self._packers: List[msgpack.Packer] = []
        self._depth = 0
        self._handlers: Dict[type, Callable[[Any], Any]] = {
            np.ndarray: self.array,
            tuple: self._tuple,
            int: self._bigint,  # a plain int reaches default only outside msgpack's 64-bit range
            complex: self._complex,
            _TensorsSeen: self._tensors_seen,
            Ref: self._ref,
            slice: self._slice,
            type(Ellipsis): self._ellipsis,
        }

    def reset(self) -> None:
        self.header = b""
        self.buffers = []
        self.tensor_info = []
        self._depth = 0

    def pack(self, obj: Any) -> bytes:
        depth = self._depth
        if depth == len(self._packers):
            self._packers.append(_new_packer(self.default))
        self._depth = depth + 1
        try:
            return self._packers[depth].pack(obj)
        except BaseException as exc:
            self._packers[depth] = _new_packer(self.default)  # its buffer may hold a partial value
            if isinstance(exc, (TypeError, ValueError, OverflowError)) and not isinstance(exc, EncodeError):
                raise EncodeError(str(exc)) from None
            raise
        finally:
            self._depth = depth

    def default(self, obj: Any) -> Any:
        handler = self._handlers.get(type(obj))
        if handler is None:
            handler = self._classify(type(obj))
        return handler(obj)

    def _classify(self, t: type) -> Callable[[Any], Any]:
        """The handler for objects of type ``t`` (cached). Subclasses become their base type
        (what a handler returns is not passed to :meth:`default` again)."""
        handler: Optional[Callable[[Any], Any]] = None
        if issubclass(t, np.generic):
            handler = self._scalar
        elif issubclass(t, np.dtype):
            handler = self._dtype
        elif issubclass(t, np.ndarray):  # subclasses (np.matrix; masked arrays lose their extras)
            handler = self._array_subclass
        else:
            for base, convert in _BASE_TYPES:
                if issubclass(t, base):
                    handler = self._tuple if base is tuple else convert
                    break
        if handler is None and self.tensors:
            converter = TENSOR_CONVERTERS.get(t.__module__.partition(".")[0])
            if converter is not None:
                handler = functools.partial(self._tensor, converter)
        if handler is None:
            handler = self._refuse
        if len(self._handlers) < 1024:
            self._handlers[t] = handler
        return handler

    def array(self, a: np.ndarray) -> msgpack.ExtType:
        dtype = a.dtype
        ndim = a.ndim
        prefix = _c_prefix_cache.get((dtype, ndim))  # only native or byte-order-free dtypes
        if prefix is not None and a.flags.c_contiguous:
            head = prefix + _SHAPES[ndim].pack(*a.shape)
            if self.oob and a.nbytes > INLINE_LIMIT:
                self.buffers.append(memoryview(a.reshape(-1).view(np.uint8) if dtype.itemsize else a))
                return _ext(_ExtType, (EXT_ARRAY_OOB, head + _U32.pack(len(self.buffers) - 1)))
            return _ext(_ExtType, (EXT_ARRAY, head + a.tobytes()))
        if dtype.byteorder == ">":
            a = a.astype(dtype.newbyteorder("<"))
        fortran = False
        if not a.flags.c_contiguous:
            if a.flags.f_contiguous and ndim > 1:
                fortran = True
            else:
                a = np.ascontiguousarray(a)
        key = (dtype, ndim, fortran)
        prefix = _prefix_cache.get(key)
        if prefix is None:
            code = dtype_code(dtype).encode()
            prefix = _prefix_cache[key] = _ARRAY_HEAD.pack(fortran, ndim, len(code)) + code
            if not fortran and dtype.byteorder != ">":
                _c_prefix_cache[(dtype, ndim)] = prefix
        head = prefix + _SHAPES[ndim].pack(*a.shape)
        if self.oob and a.nbytes > INLINE_LIMIT:
            flat = a.reshape(-1, order="F" if fortran else "C")
            self.buffers.append(memoryview(flat.view(np.uint8) if flat.dtype.itemsize else flat))
            return _ext(_ExtType, (EXT_ARRAY_OOB, head + _U32.pack(len(self.buffers) - 1)))
        return _ext(_ExtType, (EXT_ARRAY, head + a.tobytes(order="F" if fortran else "C")))

    # handlers by type (see _classify)

    def _array_subclass(self, obj: np.ndarray) -> msgpack.ExtType:
        return self.array(np.asarray(obj))

    def _tuple(self, obj: tuple) -> msgpack.ExtType:
        return _ext(_ExtType, (EXT_TUPLE, self.pack(list(obj))))

    def _scalar(self, obj: np.generic) -> msgpack.ExtType:
        code = dtype_code(obj.dtype).encode()
        scalar = np.asarray(obj)
        if scalar.dtype.byteorder == ">":
            scalar = scalar.astype(scalar.dtype.newbyteorder("<"))
        return _ext(_ExtType, (EXT_SCALAR, bytes((len(code),)) + code + scalar.tobytes()))

    def _bigint(self, obj: int) -> msgpack.ExtType:
        return _ext(_ExtType, (EXT_BIGINT, str(obj).encode()))

    def _complex(self, obj: complex) -> msgpack.ExtType:
        return _ext(_ExtType, (EXT_COMPLEX, _COMPLEX.pack(obj.real, obj.imag)))

    def _tensors_seen(self, obj: Any) -> list:
        return list(self.tensor_info)

    def _ref(self, obj: Ref) -> msgpack.ExtType:
        return _ext(_ExtType, (EXT_REF, _I64.pack(obj.step)))

    def _dtype(self, obj: np.dtype) -> msgpack.ExtType:
        return _ext(_ExtType, (EXT_DTYPE, dtype_code(obj).encode()))

    def _slice(self, obj: slice) -> msgpack.ExtType:
        return _ext(_ExtType, (EXT_SLICE, self.pack([obj.start, obj.stop, obj.step])))

    def _ellipsis(self, obj: Any) -> msgpack.ExtType:
        return _ext(_ExtType, (EXT_ELLIPSIS, b""))

    def _tensor(self, converter: Callable[[Any], Optional[Tuple[np.ndarray, str, str, str]]], obj: Any) -> msgpack.ExtType:
        converted = converter(obj)
        if converted is None:  # e.g. torch.dtype: of the library, not a tensor
            self._refuse(obj)
        array, kind, device, dtype_name = converted  # type: ignore[misc]
        self.tensor_info.append([len(self.tensor_info), kind, device, dtype_name])
        if type(array) is not np.ndarray:
            array = np.asarray(array)
        return self.array(array)

    @staticmethod
    def _refuse(obj: Any) -> Any:
        raise EncodeError(f"cannot encode an object of type {_type_name(obj)}")


#: ExtType is a namedtuple whose ``__new__`` checks its arguments in Python (a third of the cost of
#: encoding a small array); the codes and bytes made here are valid, so the tuple is built directly
_ext = tuple.__new__
_ExtType = msgpack.ExtType
#: ``_prefix_cache`` entries for C-ordered arrays whose dtype needs no byte swap, keyed (dtype, ndim)
_c_prefix_cache: Dict[Tuple[np.dtype, int], bytes] = {}
#: subclasses of the types msgpack packs natively, turned into those types (in this order: bool
#: before int, since a bool is an int)
_BASE_TYPES: Tuple[Tuple[type, Callable[[Any], Any]], ...] = (
    (tuple, tuple), (list, list), (dict, dict), (str, str), (bytes, bytes), (bytearray, bytes),
    (memoryview, bytes), (bool, bool), (int, int), (float, float),
)


def _new_packer(default: Callable[[Any], Any]) -> msgpack.Packer:
    return msgpack.Packer(default=default, strict_types=True, use_bin_type=True,
                          unicode_errors="surrogatepass", datetime=False)


_local = threading.local()


def _encoder(oob: bool, tensors: bool) -> _Encoder:
    """This thread's reusable encoder for the given mode."""
    cache = getattr(_local, "encoders", None)
    if cache is None:
        cache = _local.encoders = {}
    enc = cache.get((oob, tensors))
    if enc is None:
        enc = cache[(oob, tensors)] = _Encoder(oob, tensors)
    enc.reset()
    return enc


def _find_unencodable(obj: Any, path: str, tensors: bool, depth: int = 0) -> Optional[str]:
    """Locate the first part of ``obj`` that cannot be encoded (slow; only used for messages)."""
    if depth > 100:
        return None
    if isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            found = _find_unencodable(item, f"{path}[{i}]", tensors, depth + 1)
            if found:
                return found
        return None
    if isinstance(obj, dict):
        for key, item in obj.items():
            found = _find_unencodable(key, f"{path} key {key!r}", tensors, depth + 1) or _find_unencodable(
                item, f"{path}[{key!r}]", tensors, depth + 1
            )
            if found:
                return found
        return None
    try:
        _Encoder(False, tensors).pack(obj)
    except EncodeError as exc:
        return f"{path}: {exc}"
    return None


def locate_unencodable(obj: Any, where: str = "value", tensors: bool = False) -> Optional[str]:
    """A message naming the first part of ``obj`` that cannot be encoded, or None if all can."""
    return _find_unencodable(obj, where, tensors)


def _encode(obj: Any, oob: bool, tensors: bool, where: str, buffers: Optional[List[memoryview]] = None) -> _Encoder:
    enc = _encoder(oob, tensors)
    if buffers is not None:
        enc.buffers = buffers  # continue a packet group's buffer list (see pack_group)
    try:
        enc.header = enc.pack(obj)
    except EncodeError as exc:
        located = _find_unencodable(obj, where, tensors)
        raise EncodeError(located or f"{where}: {exc}") from None
    except RecursionError:
        raise EncodeError(f"{where}: nesting too deep to encode") from None
    return enc


_NONE: Tuple[Any, ...] = ()  # an empty sequence that costs the garbage collector nothing


class Packet:
    """An encoded value: msgpack ``header`` plus out-of-band ``buffers`` (views, not copies)."""

    __slots__ = ("header", "buffers", "tensors", "_framed")

    def __init__(self, header: bytes, buffers: Sequence[memoryview], tensors: Optional[Sequence[list]] = None) -> None:
        self.header = header
        self.buffers = buffers
        self.tensors = tensors or _NONE
        self._framed: Optional[bytes] = None

    def framed(self) -> bytes:
        """A packet without buffers as it appears in a frame (see sandbox.channel); cached,
        since a task's packet may be sent twice (confirmation runs)."""
        if self._framed is None:
            self._framed = _PACKET_HEAD.pack(len(self.header), 0) + self.header
        return self._framed

    @property
    def nbytes(self) -> int:
        if not self.buffers:
            return len(self.header)
        return len(self.header) + sum(b.nbytes for b in self.buffers)


def encode_packet(obj: Any, *, tensors: bool = False, where: str = "value") -> Packet:
    """Encode ``obj`` for the wire; large arrays become out-of-band buffers.

    With ``tensors=True`` torch/tensorflow/jax tensors are converted to numpy and listed in
    ``Packet.tensors``. Raises :class:`EncodeError` naming the offending part (``where`` prefixes it).
    """
    enc = _encode(obj, True, tensors, where)
    # empty lists are not kept: every object a packet holds is one more for the garbage
    # collector to track while the task waits (thousands, for a large run())
    return Packet(enc.header, enc.buffers or _NONE, enc.tensor_info or _NONE)


class PacketGroup:
    """Values encoded one by one that travel as one packet: a msgpack array of them.

    A msgpack array is its header followed by its items' encodings, so each value is encoded
    when it is ready (a failure concerns that value only) and the group costs one packet.
    Out-of-band buffer indices continue across the group.
    """

    def __init__(self) -> None:
        self.items: List[bytes] = []
        self.buffers: List[memoryview] = []

    def __len__(self) -> int:
        return len(self.items)

    def add(self, obj: Any, *, tensors: bool = False, where: str = "value") -> None:
        """Encode and append ``obj``; on EncodeError the group is left as it was."""
        mark = len(self.buffers)
        try:
            self.items.append(_encode(obj, True, tensors, where, self.buffers).header)
        except BaseException:
            del self.buffers[mark:]
            raise

    def packet(self) -> Packet:
        n = len(self.items)
        head = bytes((0x90 | n,)) if n < 16 else (b"\xdc" + struct.pack(">H", n) if n < 1 << 16
                                                   else b"\xdd" + struct.pack(">I", n))
        return Packet(head + b"".join(self.items), self.buffers)


_array_meta: Dict[bytes, Tuple[np.dtype, str, struct.Struct, int, int]] = {}


def _parse_array_head(data: bytes) -> Tuple[np.dtype, str, struct.Struct, int, int]:
    """(dtype, order, shape struct, shape offset, data offset) of an array payload, cached by
    the header bytes before the shape (dtype code, rank and order: few distinct values)."""
    fortran, ndim, clen = _ARRAY_HEAD.unpack_from(data, 0)
    meta = (dtype_from_code(data[3:3 + clen].decode()), "F" if fortran else "C", _SHAPES[ndim], 3 + clen,
            3 + clen + 8 * ndim)
    if len(_array_meta) < 4096:
        _array_meta[bytes(data[:3 + clen])] = meta
    return meta


def _make_ext_hook(buffers: Optional[List[memoryview]], fallback: bool = False) -> Callable[[int, bytes], Any]:
    def unpack(data: bytes) -> Any:
        return msgpack.unpackb(data, ext_hook=hook, raw=False, strict_map_key=False, unicode_errors="surrogatepass")

    def safe_hook(code: int, data: bytes) -> Any:
        try:
            return hook(code, data)
        except (DecodeError, ValueError, TypeError, struct.error):
            return UNDECODABLE

    def hook(code: int, data: bytes) -> Any:
        if code == EXT_ARRAY or code == EXT_ARRAY_OOB:
            meta = _array_meta.get(data[:3 + data[2]])
            if meta is None:
                meta = _parse_array_head(data)
            dtype, order, shape_struct, shape_at, offset = meta
            shape = shape_struct.unpack_from(data, shape_at)
            if code == EXT_ARRAY_OOB:
                (index,) = _U32.unpack_from(data, offset)
                if buffers is None or index >= len(buffers):
                    raise DecodeError(f"out-of-band buffer {index} missing")
                flat = _frombuffer(buffers[index], dtype)  # a view: no copy
            else:
                # a private copy, so the array is writable (frombuffer on bytes is read-only);
                # positional arguments: numpy parses keywords slowly
                flat = _frombuffer(data, dtype, -1, offset).copy()
            if order == "C":
                return flat if len(shape) == 1 and flat.shape == shape else flat.reshape(shape)
            return flat.reshape(shape, order=order)
        if code == EXT_TUPLE:
            return tuple(unpack(data))
        if code == EXT_SCALAR:
            clen = data[0]
            return _frombuffer(data, dtype_from_code(data[1:1 + clen].decode()), -1, 1 + clen)[0]
        if code == EXT_COMPLEX:
            return complex(*_COMPLEX.unpack(data))
        if code == EXT_BIGINT:
            return int(data.decode())
        if code == EXT_REF:
            return Ref(_I64.unpack(data)[0])
        if code == EXT_DTYPE:
            return dtype_from_code(data.decode())
        if code == EXT_SLICE:
            return slice(*unpack(data))
        if code == EXT_ELLIPSIS:
            return Ellipsis
        raise DecodeError(f"unknown msgpack extension type {code}")

    return safe_hook if fallback else hook


_frombuffer = np.frombuffer
#: hooks for values without out-of-band buffers (most packets), made once: (strict, fallback)
_HOOKS_NO_BUFFERS = (_make_ext_hook(None), _make_ext_hook(None, True))


class _Undecodable:
    def __repr__(self) -> str:
        return "UNDECODABLE"


#: stands for an extension value that could not be decoded (``decode_packet(..., ext_fallback=True)``)
UNDECODABLE = _Undecodable()


def contains_undecodable(value: Any, depth: int = 0) -> bool:
    """Whether :data:`UNDECODABLE` occurs in ``value`` (lists, tuples, dict keys and values)."""
    if value is UNDECODABLE:
        return True
    if depth > 200:
        return False
    if isinstance(value, (list, tuple)):
        return any(contains_undecodable(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(contains_undecodable(k, depth + 1) or contains_undecodable(v, depth + 1) for k, v in value.items())
    return False


def decode_packet(header: Any, buffers: Optional[List[memoryview]] = None, *, ext_fallback: bool = False) -> Any:
    """Decode a header (bytes-like) whose out-of-band arrays are views into ``buffers``.

    Arrays are writable when the buffers are (e.g. views of a ``bytearray``). With
    ``ext_fallback`` an extension value that cannot be decoded becomes :data:`UNDECODABLE`
    instead of an error.
    """
    hook = _make_ext_hook(buffers, ext_fallback) if buffers else _HOOKS_NO_BUFFERS[ext_fallback]
    try:
        return msgpack.unpackb(header, ext_hook=hook, raw=False, strict_map_key=False, unicode_errors="surrogatepass")
    except DecodeError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, struct.error, msgpack.UnpackException) as exc:
        raise DecodeError(f"cannot decode: {exc}") from None


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` as one self-contained msgpack blob (arrays inline)."""
    return _encode(obj, False, False, "value").header


def loads(data: Any) -> Any:
    """Decode a blob made by :func:`dumps`; arrays are writable copies."""
    return decode_packet(data, None)
