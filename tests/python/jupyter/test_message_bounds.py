"""A peer without the key that speaks ZMTP itself (a plain TCP socket: a
libzmq client never sends a message before its last frame) against the
real kernel: a message that never ends (many frames, each under the frame
bound) or whose frames add up past the message bound leaves the kernel's
memory flat (read from /proc), as do many connections each holding a
message under its own bound (one budget for all); the rest of it is discarded unread, a
later message on the same connection gets through, and the kernel still
serves. A peer that does not speak ZMTP 3 is disconnected."""

import socket
import struct
import time

import pytest

from test_socket_flood import (
    ALLOWED_GROWTH,
    MIB,
    _peak_rss,
    _rss,
    _still_serves,
    kernel,
)  # noqa: F401

FRAME = 64 << 10


def _greeting():
    # Signature, version 3.0, the NULL mechanism, as-server 0, filler.
    return b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\0") + bytes(32)


def _command(name, properties):
    body = bytes([len(name)]) + name
    for key, value in properties.items():
        body += bytes([len(key)]) + key + struct.pack(">I", len(value)) + value
    return bytes([0x04, len(body)]) + body


def _frame(body, more):
    if len(body) < 256:
        return bytes([0x01 if more else 0x00, len(body)]) + body
    return bytes([0x03 if more else 0x02]) + struct.pack(">Q", len(body)) + body


def _read_exactly(peer, count):
    data = b""
    while len(data) < count:
        more = peer.recv(count - len(data))
        assert more, "the kernel closed the connection during the handshake"
        data += more
    return data


def _raw_peer(kernel, channel):
    info = kernel.km.get_connection_info()
    peer = socket.create_connection((info["ip"], info[channel + "_port"]), timeout=30)
    # The handshake as libzmq does it: each side's greeting, then READY.
    peer.sendall(_greeting())
    _read_exactly(peer, 64)
    peer.sendall(_command(b"READY", {b"Socket-Type": b"DEALER"}))
    flags, size = _read_exactly(peer, 2)
    assert flags == 0x04
    _read_exactly(peer, size)
    # libzmq takes a message that arrives before it has sent its own READY
    # for a bad handshake command and drops the connection (seen when this
    # peer sent READY and its first frame at once): a libzmq client sends
    # nothing before the kernel's READY, nor does this one.
    time.sleep(0.2)
    return peer


def _send(peer, data):
    """False once the kernel has dropped the connection (which bounds it too)."""
    try:
        peer.sendall(data)
        return True
    except (ConnectionResetError, BrokenPipeError):
        return False


def _send_frames(peer, count, size):
    frame = _frame(bytes(size), more=True)
    return all(_send(peer, frame) for _ in range(count))


@pytest.mark.parametrize("channel", ["shell", "control", "stdin"])
def test_an_endless_multipart_message_leaves_memory_flat(kernel, channel):
    # A fresh kernel, flooded before its first cell.
    before = _rss(kernel.pid)
    peer = _raw_peer(kernel, channel)
    # 192 MiB in frames of 64 KiB, never ended: libzmq alone held it all.
    connected = _send_frames(peer, 3 * 1024, FRAME)
    peak = _peak_rss(kernel.pid, 2.0)
    assert peak - before < ALLOWED_GROWTH, f"{(peak - before) // MIB} MiB"
    if connected:
        # Ended at last, then a second message on the same connection.
        _send(peer, _frame(b"end", more=False))
        _send(peer, _frame(b"<IDS|MSG>", True) + _frame(b"", True) + _frame(b"{}", False))
    _still_serves(kernel)
    peer.close()
    assert _rss(kernel.pid) - before < ALLOWED_GROWTH


def test_many_connections_each_holding_a_message_leave_memory_flat(kernel):
    before = _rss(kernel.pid)
    # Twelve connections each send 16 MiB of a shell message (under the
    # socket's own bound) and never end it: 192 MiB that libzmq would hold.
    # Unfinished messages of all connections share one budget.
    peers = [_raw_peer(kernel, "shell") for _ in range(12)]
    for peer in peers:
        _send_frames(peer, 256, FRAME)
    peak = _peak_rss(kernel.pid, 2.0)
    assert peak - before < ALLOWED_GROWTH, f"{(peak - before) // MIB} MiB"
    # Their peers gone, the budget is whole again: a real request passes.
    for peer in peers:
        peer.close()
    time.sleep(0.5)
    _still_serves(kernel)


def test_a_message_of_countless_tiny_frames_leaves_memory_flat(kernel):
    before = _rss(kernel.pid)
    peer = _raw_peer(kernel, "shell")
    # A frame costs libzmq far more than its two bytes: 1.5 million of them.
    chunk = _frame(b"", more=True) * 100_000
    for _ in range(15):
        if not _send(peer, chunk):
            break
    peak = _peak_rss(kernel.pid, 2.0)
    peer.close()
    assert peak - before < ALLOWED_GROWTH, f"{(peak - before) // MIB} MiB"
    _still_serves(kernel)


def test_a_peer_that_does_not_speak_zmtp_3_is_disconnected(kernel):
    info = kernel.km.get_connection_info()
    peer = socket.create_connection((info["ip"], info["shell_port"]), timeout=30)
    # ZMTP 2.0's greeting (revision 1): libzmq would read its other framing.
    peer.sendall(b"\xff" + bytes(8) + b"\x7f" + b"\x01\x05")
    peer.settimeout(10)
    received = b""
    try:
        while True:
            data = peer.recv(4096)
            if not data:
                break
            received += data
    except (ConnectionResetError, socket.timeout) as exc:
        assert not isinstance(exc, socket.timeout), "still connected"
    peer.close()
    _still_serves(kernel)
