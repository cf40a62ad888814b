"""sandbox.channel: frames over sockets, partial reads and writes, control messages with fds."""
from __future__ import annotations

import os
import socket
import threading

import numpy as np
import pytest

from sandbox import ProtocolError, channel, codec


def packets(*values):
    return [codec.encode_packet(v) for v in values]


def body_of(frame) -> bytearray:
    """The body of a frame built by build_frame (after its 8-byte length)."""
    joined = b"".join(bytes(part) for part in frame)
    assert int.from_bytes(joined[:8], "little") == len(joined) - 8
    return bytearray(joined[8:])


def decode_all(body):
    return [codec.decode_packet(h, b) for h, b in channel.parse_frame(body)]


def test_frame_round_trip_and_alignment():
    big = np.arange(100_000, dtype=np.float64)
    frame = channel.build_frame(packets([1, "a"], big, {"x": (big[:3], big[:50_000])}))
    body = body_of(frame)
    parsed = channel.parse_frame(body)
    base = np.frombuffer(body, dtype=np.uint8).__array_interface__["data"][0]
    for _, buffers in parsed:
        for buf in buffers:
            address = np.frombuffer(buf, dtype=np.uint8).__array_interface__["data"][0]
            assert (address - base) % 64 == 0  # every out-of-band array starts on a 64-byte boundary
    first, second, third = decode_all(body)
    assert first == [1, "a"]
    np.testing.assert_array_equal(second, big)
    np.testing.assert_array_equal(third["x"][1], big[:50_000])


def test_empty_frame_parses_to_no_packets():
    assert channel.parse_frame(body_of(channel.build_frame([]))) == []


def test_corrupt_frames_are_rejected():
    body = body_of(channel.build_frame(packets([1, 2])))
    with pytest.raises(ProtocolError):
        channel.parse_frame(body[:-1])
    with pytest.raises(ProtocolError):
        channel.parse_frame(body + b"\0")


def test_reader_reassembles_frames_split_at_every_byte():
    ours, theirs = socket.socketpair()
    values = [[i, "x" * i] for i in range(20)] + [np.arange(30_000, dtype=np.int32)]
    stream = b"".join(b"".join(bytes(p) for p in channel.build_frame([pk])) for pk in packets(*values))
    reader = channel.FrameReader(ours)
    got = []
    for i in range(0, len(stream), 997):  # odd-sized pieces: headers and bodies split anywhere
        theirs.sendall(stream[i:i + 997])
        got += [v for frame in reader.read() for v in decode_all(frame)]
    assert got[:-1] == values[:-1]
    np.testing.assert_array_equal(got[-1], values[-1])
    theirs.close()
    with pytest.raises(EOFError):
        reader.read()


def test_reader_reports_eof_after_a_partial_frame():
    ours, theirs = socket.socketpair()
    whole = b"".join(bytes(p) for p in channel.build_frame(packets([1, 2, 3])))
    theirs.sendall(whole + whole[: len(whole) // 2])
    theirs.close()
    reader = channel.FrameReader(ours)
    assert [decode_all(f) for f in reader.read()] == [[[1, 2, 3]]]
    with pytest.raises(EOFError):
        reader.read()


def test_large_frames_cross_a_blocking_socket():
    ours, theirs = socket.socketpair()
    big = np.random.default_rng(0).standard_normal((1000, 1000))
    sender = threading.Thread(target=channel.send_packets, args=(theirs, packets({"a": big}, [big[:2]])))
    sender.start()
    length = channel.recv_length(ours)
    body = channel.recv_body(ours, length)
    sender.join()
    first, second = decode_all(body)
    np.testing.assert_array_equal(first["a"], big)
    np.testing.assert_array_equal(second[0], big[:2])
    theirs.close()
    assert channel.recv_length(ours) is None  # clean EOF


def test_control_messages_carry_file_descriptors():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    r, w = os.pipe()
    channel.send_control(a, {"t": "spawn", "wid": 7}, [w])
    os.close(w)
    message, fds = channel.recv_control(b)
    assert message == {"t": "spawn", "wid": 7} and len(fds) == 1
    os.write(fds[0], b"through the passed fd")
    os.close(fds[0])
    assert os.read(r, 100) == b"through the passed fd"
    assert channel.recv_control(b, block=False) is None
    a.close()
    with pytest.raises(EOFError):
        channel.recv_control(b)
