"""The worker's half of the attestation handshake (the first frame).

The host's ``initialize`` carries the skill-attestation key; the worker
installs its audit hook (files_read, skill sidecars) keyed with it, then
answers ``initialized``. Anything else is refused with one
``initialization_error`` frame and the worker exits.
"""

import os

from openai4s.kernel.runtime import channel, frames
from openai4s.kernel.runtime.files_read import ReadObserver


def _valid_key(key):
    hexdigits = "0123456789abcdefABCDEF"
    if len(key) != 64 or any(char not in hexdigits for char in key):
        return None
    return bytes.fromhex(key)


def handshake(write_frame, emit_frame, log, cell_identity):
    """Read ``initialize``; install the audit hook; answer.

    ``(observer, sidecar_channel)``, or None: the worker exits.
    """
    line = channel.read_line()
    if not line:
        return None
    try:
        frame = frames.decode(line)
    except frames.MalformedFrame:
        return None
    if not isinstance(frame, dict):
        frame = {}
    init_id = frame.get("id")
    init_id = "unknown" if init_id is None else init_id

    def refuse(error):
        write_frame({"type": "initialization_error", "id": init_id, "error": error})
        return None

    key = frame.get("skill_attestation_key")
    if frame.get("type") != "initialize" or not isinstance(key, str):
        return refuse("missing manager attestation handshake")
    key = _valid_key(key)
    if key is None:
        return refuse("invalid manager attestation handshake")
    try:
        from openai4s.kernel.runtime import audit, sidecars
    except Exception as exc:
        log(f"audit hook unavailable: {exc}")
        return refuse("invalid manager attestation handshake")
    observer = ReadObserver(os.getcwd())
    channel_ = sidecars.SidecarChannel(key, emit_frame, cell_identity)
    try:
        audit.install(observer, channel_)
    except Exception as exc:
        log(f"audit hook unavailable: {exc}")
        return refuse("invalid manager attestation handshake")
    write_frame({"type": "initialized", "id": init_id})
    return observer, channel_
