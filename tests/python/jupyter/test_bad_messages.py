"""Messages a hostile or broken client sends the Jupyter kernel: none may
crash it or be dropped without a word. Unsigned or badly signed messages
and unknown types are refused with a line on the kernel's stderr (the
protocol has no reply for them; ipykernel also only logs); a signed request
whose fields have the wrong types gets the protocol's error reply."""

import json

import pytest
import zmq
from jupyter_client.jsonutil import json_default
from jupyter_client.manager import KernelManager
from jupyter_client.session import Session

from jupyter_support import KernelEnvironment, kernel_missing_reason

pytestmark = pytest.mark.skipif(
    kernel_missing_reason() is not None, reason=str(kernel_missing_reason())
)


@pytest.fixture
def started(tmp_path):
    environment = KernelEnvironment()
    log = tmp_path / "kernel-stderr.txt"
    with environment.applied(), open(log, "wb") as sink:
        km = KernelManager(kernel_name=environment.kernel_name)
        km.start_kernel(cwd=str(environment.workspace), stderr=sink)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    info = km.get_connection_info()
    context = zmq.Context()
    shell = context.socket(zmq.DEALER)
    shell.linger = 0
    shell.connect(f"tcp://{info['ip']}:{info['shell_port']}")
    key = info["key"] if isinstance(info["key"], bytes) else info["key"].encode()
    session = Session(key=key, signature_scheme=info["signature_scheme"])
    yield km, kc, shell, session, log
    shell.close()
    context.term()
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    environment.cleanup()


def _reply(shell, session, timeout_ms):
    if not shell.poll(timeout_ms):
        return None
    _, message = session.feed_identities(shell.recv_multipart())
    return session.deserialize(message)


def _still_answers(kc):
    reply = kc.kernel_info(reply=True, timeout=30)
    assert reply["content"]["status"] == "ok"


def _signed(session, header, content):
    parts = [json.dumps(p, default=json_default).encode() for p in (header, {}, {}, content)]
    return [b"<IDS|MSG>", session.sign(parts)] + parts


def test_garbage_and_bad_signatures_are_refused_and_logged(started):
    km, kc, shell, session, log = started
    wrong_key = Session(key=b"not-the-key", signature_scheme=session.signature_scheme)
    shell.send_multipart([b"not", b"a message"])
    wrong_key.send(shell, "kernel_info_request", {})
    unsigned = session.msg("kernel_info_request", {})
    shell.send_multipart(
        [b"<IDS|MSG>", b""]
        + [json.dumps(p, default=json_default).encode() for p in (unsigned["header"], {}, {}, {})]
    )
    # A signed frame whose content is not JSON.
    header = session.msg("execute_request", {})["header"]
    parts = [json.dumps(header, default=json_default).encode(), b"{}", b"{}", b"not json"]
    shell.send_multipart([b"<IDS|MSG>", session.sign(parts)] + parts)
    session.send(shell, "frobnicate_request", {})
    assert _reply(shell, session, 1500) is None, "no reply exists for these"
    _still_answers(kc)
    said = log.read_text(errors="replace")
    # Refused before xeus parses anything (socket_guard.h); a signed
    # message that is not JSON is xeus's to refuse.
    assert "dropped a message on shell: no <IDS|MSG> delimiter" in said
    assert said.count("dropped a message on shell: the signature does not match") >= 2
    assert "parse error" in said
    assert "frobnicate_request" in said


@pytest.mark.parametrize(
    "msg_type, content, problem",
    [
        ("execute_request", {"code": 5}, "field 'code' must be a string, not number"),
        ("execute_request", {"silent": True}, "missing field 'code'"),
        ("execute_request", {"code": "1", "silent": "yes"}, "field 'silent' must be a boolean"),
        ("complete_request", {"code": "zi", "cursor_pos": "2"}, "field 'cursor_pos' must be"),
        ("inspect_request", {"code": "zip"}, "missing field 'cursor_pos'"),
        ("history_request", {"hist_access_type": 3}, "field 'hist_access_type' must be"),
    ],
)
def test_a_malformed_request_gets_an_error_reply(started, msg_type, content, problem):
    km, kc, shell, session, log = started
    sent = session.send(shell, msg_type, content)
    reply = _reply(shell, session, 30_000)
    assert reply is not None, "a malformed request must still be answered"
    assert reply["msg_type"] == msg_type.replace("_request", "_reply")
    assert reply["parent_header"]["msg_id"] == sent["header"]["msg_id"]
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "BadRequest"
    assert problem in reply["content"]["evalue"]
    # iopub: busy then idle for this request, so a waiting client finishes.
    states = []
    while len(states) < 2:
        message = kc.get_iopub_msg(timeout=30)
        if message["parent_header"].get("msg_id") == sent["header"]["msg_id"]:
            states.append(message["content"].get("execution_state"))
    assert states == ["busy", "idle"]
    assert f"rejected a malformed {msg_type}" in log.read_text(errors="replace")
    _still_answers(kc)
    assert kc.execute_interactive("print(6 * 7)", timeout=60)["content"]["status"] == "ok"
