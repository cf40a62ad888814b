"""Framing of codec packets on stream sockets, and the zygote's control messages.

A *frame* is ``u64 body length`` + body; the body holds one or more packets::

    u32 packet count
    per packet: u32 header length, u32 buffer count, u64 length of each buffer,
                header bytes, then each buffer, every buffer starting on a 64-byte boundary

The sender writes the packets' buffers with ``sendmsg`` (scatter-gather: arrays are not joined
into one bytes object first); the receiver reads the body into one ``bytearray`` and decodes
arrays as views into it. Control messages between the pool and its zygote use a
``SOCK_SEQPACKET`` socket (message boundaries kept, file descriptors passed with SCM_RIGHTS).

Runs under other interpreters too: Python 3.9 syntax.
"""
from __future__ import annotations

import array
import errno
import socket
import struct
from typing import Any, List, Optional, Sequence, Tuple

from . import codec
from .errors import ProtocolError

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_PACKET_HEAD = struct.Struct("<II")
_ALIGN = 64
_ZEROS = bytes(_ALIGN)
_IOV_MAX = 512              # stay well below the kernel's 1024 iovecs per sendmsg
_SMALL_FRAME = 1 << 16      # frames up to this size are received through the shared buffer
MAX_FRAME = 1 << 40         # sanity bound against corrupt length fields

Parsed = Tuple[memoryview, List[memoryview]]


def build_frame(packets: Sequence[codec.Packet]) -> List[Any]:
    """The buffers of one frame holding ``packets`` (for :func:`send_buffers`)."""
    if not any(p.buffers for p in packets):
        # the common case of small packets: one buffer, joined (cheaper than many iovecs)
        body = b"".join([_U32.pack(len(packets))] + [p.framed() for p in packets])
        return [_U64.pack(len(body)) + body]
    parts: List[Any] = [b"", _U32.pack(len(packets))]
    offset = 4
    for packet in packets:
        if not packet.buffers:
            framed = packet.framed()
            parts.append(framed)
            offset += len(framed)
            continue
        lengths = [b.nbytes for b in packet.buffers]
        head = _PACKET_HEAD.pack(len(packet.header), len(lengths)) + struct.pack(f"<{len(lengths)}Q", *lengths)
        parts.append(head)
        parts.append(packet.header)
        offset += len(head) + len(packet.header)
        for buf, length in zip(packet.buffers, lengths):
            pad = -offset % _ALIGN
            if pad:
                parts.append(_ZEROS[:pad])
                offset += pad
            parts.append(buf)
            offset += length
    parts[0] = _U64.pack(offset)
    return parts


def parse_frame(body: bytearray) -> List[Parsed]:
    """Split a received frame body into ``(header, buffers)`` views (no copies)."""
    view = memoryview(body)
    try:
        (count,) = _U32.unpack_from(body, 0)
        offset = 4
        packets: List[Parsed] = []
        for _ in range(count):
            hlen, nbuf = _PACKET_HEAD.unpack_from(body, offset)
            offset += _PACKET_HEAD.size
            lengths = struct.unpack_from(f"<{nbuf}Q", body, offset)
            offset += 8 * nbuf
            header = view[offset:offset + hlen]
            offset += hlen
            buffers = []
            for length in lengths:
                offset += -offset % _ALIGN
                buffers.append(view[offset:offset + length])
                offset += length
            packets.append((header, buffers))
    except struct.error as exc:
        raise ProtocolError(f"truncated frame: {exc}") from None
    if offset != len(body):
        raise ProtocolError(f"frame length mismatch: parsed {offset} of {len(body)} bytes")
    return packets


_JOIN_LIMIT = 1 << 16  # frames up to this size are joined into one buffer (cheaper than many iovecs)


def send_buffers(sock: socket.socket, buffers: Sequence[Any]) -> None:
    """Write all ``buffers`` to a blocking socket, resuming after partial writes."""
    if len(buffers) > 2 and sum(map(len, buffers)) <= _JOIN_LIMIT:
        buffers = [b"".join(buffers)]
    views = [memoryview(b).cast("B") for b in buffers if len(b)]
    while views:
        sent = sock.sendmsg(views[:_IOV_MAX])
        while sent:
            first = views[0]
            if sent >= first.nbytes:
                sent -= first.nbytes
                views.pop(0)
            else:
                views[0] = first[sent:]
                sent = 0


def send_packets(sock: socket.socket, packets: Sequence[codec.Packet]) -> None:
    send_buffers(sock, build_frame(packets))


def _recv_exactly(sock: socket.socket, view: memoryview) -> bool:
    """Fill ``view`` from a blocking socket; False on EOF before the first byte, error on EOF after."""
    got = 0
    total = view.nbytes
    while got < total:
        n = sock.recv_into(view[got:], total - got)
        if n == 0:
            if got == 0:
                return False
            raise EOFError(f"connection closed after {got} of {total} bytes")
        got += n
    return True


def recv_length(sock: socket.socket) -> Optional[int]:
    """Read a frame's length field; None on a clean EOF."""
    head = bytearray(8)
    if not _recv_exactly(sock, memoryview(head)):
        return None
    (length,) = _U64.unpack(head)
    if length > MAX_FRAME:
        raise ProtocolError(f"frame length {length} is implausible")
    return length


def recv_body(sock: socket.socket, length: int) -> bytearray:
    body = bytearray(length)  # may raise MemoryError under the worker's memory limit
    if not _recv_exactly(sock, memoryview(body)):
        raise EOFError("connection closed before the frame body")
    return body


def discard(sock: socket.socket, length: int) -> None:
    """Read and drop ``length`` bytes (a frame the receiver cannot hold)."""
    scratch = memoryview(bytearray(1 << 16))
    while length:
        n = sock.recv_into(scratch, min(length, scratch.nbytes))
        if n == 0:
            raise EOFError("connection closed while discarding a frame")
        length -= n


class FrameReader:
    """Non-blocking frame reader for the pool side of a worker socket.

    :meth:`read` returns the frames that are complete now (possibly none) and raises
    :class:`EOFError` once the peer has closed and everything before was returned.
    Small frames are cut out of a shared receive buffer; a large frame gets its own
    ``bytearray`` that the socket fills directly.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = bytearray(1 << 16)
        self._start = 0    # parsed up to here
        self._end = 0      # filled up to here
        self._big: Optional[bytearray] = None
        self._big_got = 0
        self.eof = False

    def read(self) -> List[bytearray]:
        frames: List[bytearray] = []
        while not self.eof:
            if self._big is not None:
                if not self._fill_big():
                    break
                frames.append(self._big)
                self._big = None
                continue
            frames.extend(self._cut())
            if self._big is not None:
                continue
            if not self._fill():
                break
        if self.eof and not frames:
            if self._big is not None or self._end > self._start:
                # the peer died mid-frame: the partial frame is discarded
                self._big = None
                self._start = self._end = 0
            raise EOFError("peer closed")
        return frames

    def _cut(self) -> List[bytearray]:
        frames = []
        buf = self._buf
        while self._end - self._start >= 8:
            (length,) = _U64.unpack_from(buf, self._start)
            if length > MAX_FRAME:
                raise ProtocolError(f"frame length {length} is implausible")
            if self._end - self._start - 8 >= length:
                begin = self._start + 8
                frames.append(buf[begin:begin + length])  # a slice of a bytearray is a new bytearray
                self._start = begin + length
            elif length > _SMALL_FRAME:
                have = self._end - self._start - 8
                self._big = bytearray(length)
                self._big[:have] = buf[self._start + 8:self._end]
                self._big_got = have
                self._start = self._end = 0
                return frames
            else:
                break
        if self._start == self._end:
            self._start = self._end = 0
        elif self._start > len(buf) // 2:
            remaining = self._end - self._start
            buf[:remaining] = buf[self._start:self._end]
            self._start, self._end = 0, remaining
        return frames

    def _recv(self, view: memoryview) -> int:
        """Bytes read; 0 when nothing is available now; sets ``eof`` on a closed peer."""
        try:
            n = self.sock.recv_into(view, view.nbytes, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return 0
        except ConnectionResetError:
            n = 0
        if n == 0:
            self.eof = True
        return n

    def _fill(self) -> bool:
        """Receive into the shared buffer; False when nothing more is available now."""
        if self._end == len(self._buf):
            self._buf.extend(bytes(len(self._buf)))
        n = self._recv(memoryview(self._buf)[self._end:])
        self._end += n
        return n > 0

    def _fill_big(self) -> bool:
        """Receive into the current large frame; True once it is complete."""
        assert self._big is not None
        while self._big_got < len(self._big):
            n = self._recv(memoryview(self._big)[self._big_got:])
            if n == 0:
                return False
            self._big_got += n
        return True


# --- control messages (SOCK_SEQPACKET) --------------------------------------------------------

_CONTROL_MAX = 1 << 16


def send_control(sock: socket.socket, message: Any, fds: Sequence[int] = ()) -> None:
    """Send one control message (a codec value), optionally with file descriptors."""
    data = codec.dumps(message)
    if len(data) > _CONTROL_MAX:
        raise ProtocolError(f"control message of {len(data)} bytes is too large")
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


def recv_control(sock: socket.socket, block: bool = True) -> Optional[Tuple[Any, List[int]]]:
    """Receive one control message and its descriptors; None when nothing is waiting (non-blocking).

    Raises EOFError when the peer closed.
    """
    flags = 0 if block else socket.MSG_DONTWAIT
    fds = array.array("i")
    try:
        data, ancdata, msg_flags, _ = sock.recvmsg(_CONTROL_MAX, socket.CMSG_LEN(16 * fds.itemsize), flags)
    except BlockingIOError:
        return None
    except ConnectionResetError:
        data, ancdata, msg_flags = b"", [], 0
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if not data:
        for fd in fds:
            _close_quietly(fd)
        raise EOFError("control peer closed")
    if msg_flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
        for fd in fds:
            _close_quietly(fd)
        raise ProtocolError("truncated control message")
    return codec.loads(data), list(fds)


def _close_quietly(fd: int) -> None:
    import os

    try:
        os.close(fd)
    except OSError as exc:
        if exc.errno != errno.EBADF:
            raise
