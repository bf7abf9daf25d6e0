"""An attacker on the machine who can reach the kernel's ports but has no
key, with raw ZeroMQ sockets against the real kernel process: floods of
huge unsigned messages on every socket leave its memory flat (read from
/proc), a signature with bytes after it is refused, and stdin traffic that
arrives outside an input wait never answers a later input()."""

import os
import subprocess
import sys
import time
import uuid

import pytest
from jupyter_client.session import Session

from jupyter_support import KernelEnvironment, kernel_missing_reason
from kernel_client import RunningKernel, stdout_of

zmq = pytest.importorskip("zmq")

MIB = 1 << 20
HUGE = 64 * MIB
# Far below the 512 MiB that eight held 64 MiB messages take, or that 16
# connections' full queues would hold (32 messages of 1 MiB each). What
# arrives between two of the sweeper's reads (every 20 ms) is held
# meanwhile: 23-62 MiB here with the machine idle or loaded, 97 MiB once
# in a full parallel test run.
ALLOWED_GROWTH = 128 * MIB


@pytest.fixture(scope="module")
def kernel():
    reason = kernel_missing_reason()
    if reason:
        pytest.skip(reason)
    environment = KernelEnvironment()
    running = RunningKernel(environment)
    yield running
    running.shutdown()
    environment.cleanup()


@pytest.fixture
def context():
    ctx = zmq.Context()
    yield ctx
    ctx.destroy(linger=0)


def _rss(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _peak_rss(pid, seconds):
    """The highest RSS seen over `seconds` (a flood takes a while to land)."""
    peak = _rss(pid)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.1)
        peak = max(peak, _rss(pid))
    return peak


def _connect(context, kernel, channel, kind=None):
    info = kernel.km.get_connection_info()
    sock = context.socket(kind or zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.IDENTITY, uuid.uuid4().hex.encode())
    sock.connect(f"{info['transport']}://{info['ip']}:{info[channel + '_port']}")
    return sock


def _flood(context, kernel, channel, count, kind=None):
    sock = _connect(context, kernel, channel, kind)
    payload = bytes(HUGE)
    for _ in range(count):
        # Shaped like a message (delimiter, empty signature, header...),
        # but unsigned; the sender needs no key.
        sock.send_multipart([b"<IDS|MSG>", b"", payload, b"{}", b"{}", b"{}"], copy=False)
    return sock


def _still_serves(kernel):
    reply, outputs = kernel.execute("print('still here')")
    assert reply["status"] == "ok"
    assert stdout_of(outputs) == "still here\n"


@pytest.mark.parametrize("channel", ["stdin", "shell", "control"])
def test_a_flood_of_huge_unsigned_messages_leaves_memory_flat(kernel, context, channel):
    _still_serves(kernel)
    before = _rss(kernel.pid)
    sock = _flood(context, kernel, channel, 8)
    peak = _peak_rss(kernel.pid, 4.0)
    sock.close()
    assert peak - before < ALLOWED_GROWTH, f"{(peak - before) // MIB} MiB"
    _still_serves(kernel)
    assert _rss(kernel.pid) - before < ALLOWED_GROWTH


@pytest.mark.parametrize("channel, count", [("stdin", 8), ("shell", 32)])
def test_a_flood_while_a_cell_runs_leaves_memory_flat(kernel, context, channel, count):
    # Frames under the size bound from many connections, each up to its
    # queue's high-water mark, while the shell thread is busy in a cell and
    # reads nothing itself. (A frame in flight is held whole: the bound per
    # connection is one frame of the socket's size bound.)
    msg_id = kernel.kc.execute("import time\ntime.sleep(6)\nprint('slept')")
    kernel.wait_busy_state(msg_id)
    before = _rss(kernel.pid)
    payload = bytes(MIB - 4096)
    socks = [_connect(context, kernel, channel) for _ in range(16)]
    for _ in range(count):
        for sock in socks:
            try:
                sock.send_multipart(
                    [b"<IDS|MSG>", b"", payload, b"{}", b"{}", b"{}"], copy=False, flags=zmq.NOBLOCK
                )
            except zmq.Again:
                pass
    peak = _peak_rss(kernel.pid, 3.0)
    for sock in socks:
        sock.close()
    assert peak - before < ALLOWED_GROWTH, f"{(peak - before) // MIB} MiB"
    reply, outputs = kernel.collect(msg_id)
    assert stdout_of(outputs) == "slept\n"
    _still_serves(kernel)


# Run in a process of its own that never closes its sockets: the attacker's
# own XSUB crashes (SIGSEGV in libzmq 4.3.4) closing with 64 MiB
# subscriptions in it.
_SUBSCRIPTION_FLOOD = """
import os, sys, time, zmq
ctx = zmq.Context()
hb = ctx.socket(zmq.REQ)
hb.connect(sys.argv[1])
hb.send(bytes(64 << 20))
iopub = ctx.socket(zmq.XSUB)
iopub.connect(sys.argv[2])
for _ in range(4):
    iopub.send(b"\\x01" + bytes(64 << 20))
time.sleep(float(sys.argv[3]))
os._exit(0)
"""


def test_floods_of_the_heartbeat_and_iopub_sockets_leave_memory_flat(kernel):
    info = kernel.km.get_connection_info()
    endpoint = f"{info['transport']}://{info['ip']}:"
    before = _rss(kernel.pid)
    attacker = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _SUBSCRIPTION_FLOOD,
            endpoint + str(info["hb_port"]),
            endpoint + str(info["iopub_port"]),
            "5",
        ]
    )
    try:
        peak = _peak_rss(kernel.pid, 4.0)
    finally:
        attacker.kill()
        attacker.wait()
    assert peak - before < ALLOWED_GROWTH, f"{(peak - before) // MIB} MiB"
    _still_serves(kernel)
    # Its subscriptions went with it; the kernel's own client still hears.
    time.sleep(0.5)
    _still_serves(kernel)


def _signed_execute(kernel, code):
    info = kernel.km.get_connection_info()
    session = Session(key=info["key"], signature_scheme=info["signature_scheme"])
    msg = session.msg("execute_request", {"code": code, "silent": False, "store_history": False})
    return session, msg, session.serialize(msg)


def _replies(sock, seconds):
    got = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if sock.poll(100):
            got.append(sock.recv_multipart())
    return got


@pytest.mark.parametrize(
    "tamper",
    [
        lambda sig: sig + b"00",  # xeus 2.4 compared only the digest's length
        lambda sig: sig + b"\0",
        lambda sig: sig[:-2],  # and read past a short one
        lambda sig: sig.upper(),
        lambda sig: b"",
    ],
    ids=["extra-hex", "extra-nul", "short", "uppercase", "empty"],
)
def test_only_an_exact_signature_is_accepted(kernel, context, tamper):
    marker = kernel.environment.workspace / f"tampered-ran-{uuid.uuid4().hex}"
    shell = _connect(context, kernel, "shell")
    _, bad_msg, frames = _signed_execute(kernel, f"open({str(marker)!r}, 'w').close()")
    frames[1] = tamper(frames[1])
    shell.send_multipart(frames)
    # A good request after it: its reply means the bad one was handled.
    session, good_msg, good = _signed_execute(kernel, "print('signed')")
    shell.send_multipart(good)
    replies = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not shell.poll(200):
            continue
        _, reply = session.feed_identities(shell.recv_multipart())
        reply = session.deserialize(reply)
        replies.append(reply["parent_header"]["msg_id"])
        if reply["parent_header"]["msg_id"] == good_msg["header"]["msg_id"]:
            break
    shell.close()
    assert good_msg["header"]["msg_id"] in replies
    assert bad_msg["header"]["msg_id"] not in replies
    assert not marker.exists()


def test_stdin_traffic_outside_an_input_wait_is_discarded(kernel, context):
    stdin = _connect(context, kernel, "stdin")
    info = kernel.km.get_connection_info()
    session = Session(key=info["key"], signature_scheme=info["signature_scheme"])
    stale = session.msg("input_reply", {"value": "stale"})
    # Garbage, then a well-signed but stale answer, both while no cell waits.
    stdin.send_multipart([b"<IDS|MSG>", b"", b"not json", b"{}", b"{}", b"{}"])
    stdin.send_multipart(session.serialize(stale))
    time.sleep(0.5)
    _still_serves(kernel)
    msg_id = kernel.kc.execute("got = input('? ')\nprint('got', repr(got))", allow_stdin=True)
    request = kernel.kc.get_stdin_msg(timeout=60)
    assert request["msg_type"] == "input_request"
    kernel.kc.input("fresh")
    reply, outputs = kernel.collect(msg_id)
    stdin.close()
    assert reply["status"] == "ok", reply
    assert stdout_of(outputs) == "got 'fresh'\n"


def test_garbage_during_an_input_wait_does_not_answer_it(kernel, context):
    msg_id = kernel.kc.execute("got = input('? ')\nprint('got', repr(got))", allow_stdin=True)
    request = kernel.kc.get_stdin_msg(timeout=60)
    assert request["msg_type"] == "input_request"
    stdin = _connect(context, kernel, "stdin")
    stdin.send_multipart([b"<IDS|MSG>", b"", b"not json", b"{}", b"{}", b"{}"])
    time.sleep(0.5)
    kernel.kc.input("typed")
    reply, outputs = kernel.collect(msg_id)
    stdin.close()
    assert stdout_of(outputs) == "got 'typed'\n"


def test_the_kernel_pid_is_the_kernel_process(kernel):
    # The RSS read above is the kernel's own, not a wrapper's.
    with open(f"/proc/{kernel.pid}/cmdline", "rb") as cmdline:
        assert b"openai4s-jupyter-kernel" in cmdline.read().split(b"\0")[0]
    assert os.path.exists(f"/proc/{kernel.pid}")
