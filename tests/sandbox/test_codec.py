"""sandbox.codec: every dtype, every array layout, Python containers, errors."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox import DecodeError, EncodeError, Ref, codec

DTYPES = [
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.int4,
]


def wire(value):
    """Round trip through the out-of-band wire form, with buffers as the receiver holds them."""
    packet = codec.encode_packet(value)
    return codec.decode_packet(packet.header, [memoryview(bytearray(b)) for b in packet.buffers])


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bytes (bit-exact: NaN payloads and -0.0 included)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def make(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape))
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, count).astype(bool).reshape(shape)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(count) + 1j * rng.standard_normal(count)).astype(dtype).reshape(shape)
    if np.dtype(dtype).kind in "iu" or dtype is ml_dtypes.int4:
        return rng.integers(0, 7, count).astype(dtype).reshape(shape)
    return (rng.standard_normal(count) * 4).astype(dtype).reshape(shape)


@pytest.mark.parametrize("roundtrip", [wire, lambda v: codec.loads(codec.dumps(v))], ids=["wire", "blob"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_arrays_of_every_dtype_and_layout(dtype, roundtrip):
    base = make(dtype, (40, 300))  # large enough to travel out of band on the wire
    cases = {
        "matrix": base,
        "small": base[:2, :3].copy(),
        "0-d": np.array(base[0, 0]),
        "empty": base[:0],
        "empty-3d": np.zeros((2, 0, 3), dtype=dtype),
        "strided": base[::3, ::7],
        "transposed": base.T,
        "fortran": np.asfortranarray(base),
    }
    for name, array in cases.items():
        back = roundtrip(array)
        assert isinstance(back, np.ndarray), name
        assert same_array(array, back), name
        assert back.flags.writeable, name
    assert roundtrip(cases["fortran"]).flags.f_contiguous


def test_special_float_values_survive_bit_exactly():
    values = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 1.7e308], dtype=np.float64)
    for dtype in (np.float16, np.float32, np.float64, ml_dtypes.bfloat16):
        with np.errstate(over="ignore"):
            array = values.astype(dtype)
        assert same_array(array, wire(array))
        assert same_array(array, codec.loads(codec.dumps(array)))


def test_big_endian_arrays_arrive_native():
    array = np.arange(6, dtype=">i4").reshape(2, 3)
    back = wire(array)
    assert back.dtype == np.dtype("<i4")
    np.testing.assert_array_equal(back, array)


def test_large_arrays_are_views_of_the_received_buffer():
    array = np.arange(1 << 16, dtype=np.float64)
    packet = codec.encode_packet([array, array[:4]])
    assert len(packet.buffers) == 1  # the large one out of band, the small one inline
    assert np.shares_memory(np.frombuffer(packet.buffers[0], dtype=np.float64), array)  # sent without a copy
    received = bytearray(packet.buffers[0])
    big, small = codec.decode_packet(packet.header, [memoryview(received)])
    assert np.shares_memory(big, np.frombuffer(received, dtype=np.uint8))  # decoded without a copy
    big[0] = 42.0
    assert received[:8] == np.float64(42.0).tobytes()
    np.testing.assert_array_equal(small, array[:4])


def test_scalars_and_python_values():
    values = [
        None, True, False, 0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 2**70, -(2**100), 1.5, math.inf, -0.0,
        1 + 2j, "text", "surrogate \udcff", b"\x00\xff", bytearray(b"ab"), [], {}, (), (1, (2, [3, (4,)])),
        {"a": [1, {"b": (2, 3)}], 7: "int key", (1, 2): "tuple key"},
        np.float32(1.5), np.int8(-3), np.uint64(2**64 - 1), np.complex64(1 - 1j), np.bool_(True),
        ml_dtypes.bfloat16(2.5), np.float16(-0.0),
        slice(1, None, -2), Ellipsis, np.dtype("float16"), np.dtype(ml_dtypes.bfloat16), Ref(3),
    ]
    for value in values:
        for back in (wire(value), codec.loads(codec.dumps(value))):
            expected = bytes(value) if isinstance(value, bytearray) else value
            assert type(back) is type(expected), (value, back)
            if isinstance(value, np.generic):
                assert back.dtype == value.dtype and back.tobytes() == value.tobytes()
            elif isinstance(value, float) and value == 0:
                assert math.copysign(1, back) == math.copysign(1, value)
            else:
                assert back == expected


def test_subclasses_become_their_base_type():
    import collections
    import enum

    Pair = collections.namedtuple("Pair", "a b")

    class Color(enum.IntEnum):
        RED = 1

    back = codec.loads(codec.dumps([Pair(1, 2), collections.OrderedDict(x=1), Color.RED, np.ma.masked_array([1, 2])]))
    assert back[0] == (1, 2) and type(back[0]) is tuple
    assert back[1] == {"x": 1} and type(back[1]) is dict
    assert back[2] == 1 and type(back[2]) is int
    assert type(back[3]) is np.ndarray


def test_unencodable_values_are_named_by_path():
    with pytest.raises(EncodeError, match=r"value\[1\]\['a'\]\[1\]: cannot encode an object of type object"):
        codec.dumps([1, {"a": (2, object())}])
    with pytest.raises(EncodeError, match="dtype"):
        codec.dumps(np.array([object()]))
    with pytest.raises(EncodeError, match="dtype"):
        codec.dumps(np.zeros(2, dtype=[("a", "i4"), ("b", "f8")]))
    with pytest.raises(EncodeError, match="function"):
        codec.encode_packet({"f": lambda: 1}, where="task")
    assert codec.locate_unencodable([1, 2]) is None


def test_garbage_does_not_decode():
    with pytest.raises(DecodeError):
        codec.loads(b"\xc1")  # a reserved msgpack byte
    with pytest.raises(DecodeError, match="unknown msgpack extension type 99"):
        codec.loads(b"\xd4\x63\x00")  # fixext1 with type 99
    with pytest.raises(DecodeError, match="unknown dtype code"):
        codec.dtype_from_code("ml_dtypes:no_such_type")
    packet = codec.encode_packet(np.arange(1 << 14, dtype=np.float64))
    with pytest.raises(DecodeError, match="out-of-band buffer 0 missing"):
        codec.decode_packet(packet.header, [])
    assert codec.decode_packet(packet.header, [], ext_fallback=True) is codec.UNDECODABLE
    mixed = codec.encode_packet([None, {"a": (1, np.arange(1 << 14, dtype=np.float64))}])
    fallback = codec.decode_packet(mixed.header, [], ext_fallback=True)
    assert fallback[0] is None and codec.contains_undecodable(fallback) and not codec.contains_undecodable(fallback[0])


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**80), 2**80), st.floats(allow_nan=False), st.text(), st.binary(),
    st.complex_numbers(allow_nan=False),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=5), st.integers(-5, 5)), inner, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(values)
def test_nested_values_round_trip(value):
    assert codec.loads(codec.dumps(value)) == value
    assert wire(value) == value
