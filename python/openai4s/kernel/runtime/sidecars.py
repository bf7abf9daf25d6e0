"""Skill-sidecar load diagnostics (``skill_sidecar_load`` frames).

Diagnostics only: a Cell shares the interpreter with the audit hook, so
nothing sent from here is evidence, and the host keeps none of its content.
What matters is that the channel never raises into a Cell and never puts a
malformed or unbounded event on the wire.
"""

from openai4s.kernel.runtime import wire_json

MAX_SOURCE_B64_CHARS = 2_666_672
INVALID_EVENT = {"event": "invalid_sidecar_event"}
_HEX = frozenset("0123456789abcdef")


def _is_hex64(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def validate_event(event) -> dict:
    """The event as it may leave the worker, or the invalid-event stand-in."""
    if not isinstance(event, dict) or not _is_hex64(event.get("mac")):
        return dict(INVALID_EVENT)
    attestation = event.get("attestation_id")
    if not isinstance(attestation, str) or not attestation:
        return dict(INVALID_EVENT)
    if event.get("event") == "sidecar_capture_started":
        return event if _is_hex64(event.get("sha256")) else dict(INVALID_EVENT)
    source = event.get("source_b64")
    if not isinstance(source, str) or len(source) > MAX_SOURCE_B64_CHARS:
        return dict(INVALID_EVENT)
    return event


def legacy_events(entries) -> list:
    """Response-field form of the events a bootstrap mirrored in the namespace."""
    if any(not isinstance(entry, dict) for entry in entries):
        return [dict(INVALID_EVENT)]
    return [dict(entry) for entry in entries]


class SidecarChannel:
    """Turns ``openai4s.skill_*`` audit events into ``skill_sidecar_load`` frames."""

    def __init__(self, key: bytes, write_frame, cell_identity) -> None:
        self._key = key
        self._write_frame = write_frame
        # () -> (cell id, origin) of the active Cell, or (None, None).
        self._cell_identity = cell_identity
        self.frames_sent = 0

    def on_sidecar_loaded(self, args) -> None:
        try:
            payload = args[0] if args else None
            if not isinstance(payload, dict):
                return self._send(dict(INVALID_EVENT))
            self._send(validate_event(self._attest("sidecar_loaded", payload)))
        except Exception:
            return None

    def on_capture_started(self, args) -> None:
        try:
            payload = args[0] if args else None
            if not isinstance(payload, dict):
                return self._send(dict(INVALID_EVENT))
            event = self._attest("sidecar_capture_started", payload)
            self._send(validate_event(event))
        except Exception:
            return None

    def _attest(self, name: str, payload: dict) -> dict:
        import hashlib
        import hmac
        import uuid

        cell_id, origin = self._cell_identity()
        event = {
            "event": name,
            "attestation_id": str(payload.get("attestation_id") or uuid.uuid4().hex),
            "skill": payload.get("skill"),
            "module": payload.get("module"),
            "sha256": payload.get("actual_sha256") or payload.get("sha256"),
            "source_b64": payload.get("source_b64"),
            "cell_origin": origin,
        }
        # json.dumps(event, sort_keys=True, separators=(",", ":"), default=str)
        # without importing json (and re with it) in the worker.
        body = wire_json.encode(
            event, ensure_ascii=True, allow_nan=True, sort_keys=True, default=str
        )
        digest = hmac.new(self._key, body.encode("utf-8", "replace"), hashlib.sha256)
        event["mac"] = digest.hexdigest()
        return event

    def _send(self, event: dict) -> None:
        cell_id, _origin = self._cell_identity()
        if cell_id is None:
            return
        self.frames_sent += 1
        self._write_frame({"type": "skill_sidecar_load", "id": cell_id, "event": event})
