"""The worker's audit hook beyond files_read: skill-sidecar diagnostics (audit
events become bounded, validated frames) and the dlopen guard."""

import os
import re

import pytest

from worker_harness import worker_env

from openai4s.kernel.runtime.sidecars import INVALID_EVENT, validate_event

HEX64 = "a" * 64


def test_validation():
    good = {"event": "sidecar_loaded", "attestation_id": "x", "source_b64": "", "mac": HEX64}
    assert validate_event(good) is good
    started = {"event": "sidecar_capture_started", "attestation_id": "x", "mac": HEX64}
    assert validate_event({**started, "sha256": HEX64})["event"] == "sidecar_capture_started"
    for bad in (
        None,
        {**good, "mac": "short"},
        {**good, "attestation_id": ""},
        {**good, "source_b64": "x" * 2_666_673},
        {**good, "source_b64": None},
        {**started, "sha256": "nope"},
    ):
        assert validate_event(bad) == INVALID_EVENT


def test_a_sidecar_load_event_is_forwarded_with_a_mac(worker):
    response, frames = worker.execute(
        "import sys\n"
        "sys.audit('openai4s.skill_sidecar_loaded', {'skill': 's', 'module': 's.kernel',"
        " 'actual_sha256': 'b' * 64, 'source_b64': 'cHJpbnQoMSk='})\n"
        "sys.audit('openai4s.skill_sidecar_loaded', 'not a dict')\n"
        "sys.audit('openai4s.skill_loader_register', compile('1', 's', 'eval'))\n",
        cell_id="cell-skill",
    )
    assert response["error"] is None
    loads = [frame for frame in frames if frame["type"] == "skill_sidecar_load"]
    assert [frame["id"] for frame in loads] == ["cell-skill", "cell-skill"]
    event = loads[0]["event"]
    assert event["event"] == "sidecar_loaded" and event["skill"] == "s"
    assert re.fullmatch(r"[0-9a-f]{64}", event["mac"])
    assert loads[1]["event"] == INVALID_EVENT
    assert "skill_sidecar_loads" not in response


def test_legacy_events_in_the_namespace_are_reported_once(worker):
    worker.execute("__openai4s_skill_load_events__ = []")
    response, _ = worker.execute(
        "__openai4s_skill_load_events__.append({'event': 'sidecar_loaded', 'skill': 's'})"
    )
    assert response["skill_sidecar_loads"] == [{"event": "sidecar_loaded", "skill": "s"}]
    response, _ = worker.execute("__openai4s_skill_load_events__.append('junk')")
    assert response["skill_sidecar_loads"] == [INVALID_EVENT]
    assert "skill_sidecar_loads" not in worker.execute("pass")[0]


def _library_copy(tmp_path):
    import ctypes.util
    import shutil

    found = ctypes.util.find_library("m")
    candidates = [f"/lib/x86_64-linux-gnu/{found}", f"/usr/lib/x86_64-linux-gnu/{found}"]
    source = next((path for path in candidates if found and os.path.exists(path)), None)
    if source is None:
        pytest.skip("no libm to copy")
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    shutil.copy(source, blocked / "libcopy.so")
    return blocked


@pytest.mark.parametrize(("guard", "expected"), [("1", "PermissionError"), ("off", "loaded")])
def test_the_dlopen_guard_refuses_libraries_under_protected_roots(spawn, tmp_path, guard, expected):
    blocked = _library_copy(tmp_path)
    env = worker_env(
        tmp_path, OPENAI4S_DLOPEN_BLOCK_ROOTS=str(blocked), OPENAI4S_SAFETY_AUDIT_HOOK=guard
    )
    worker = spawn(env=env)
    response, _ = worker.execute(
        "import ctypes\ntry:\n"
        f"    ctypes.CDLL({str(blocked / 'libcopy.so')!r})\n"
        "    print('loaded')\nexcept PermissionError:\n    print('PermissionError')"
    )
    assert response["stdout"] == expected + "\n"


def test_the_mac_covers_the_canonical_json_of_the_event():
    # The body is json.dumps(event, sort_keys=True, separators=(",", ":"),
    # default=str), the form a verifier recomputes; the worker builds it
    # without importing json.
    import hashlib
    import hmac
    import json

    from openai4s.kernel.runtime.sidecars import SidecarChannel

    sent = []
    channel = SidecarChannel(b"k" * 32, sent.append, lambda: ("cell-1", "origin é"))
    channel.on_sidecar_loaded(
        [
            {
                "skill": "ské\u2603",
                "module": object(),
                "attestation_id": 7,
                "sha256": "a" * 64,
                "source_b64": "eA==",
            }
        ]
    )
    event = dict(sent[0]["event"])
    mac = event.pop("mac")
    body = json.dumps(event, sort_keys=True, separators=(",", ":"), default=str)
    assert mac == hmac.new(b"k" * 32, body.encode("utf-8"), hashlib.sha256).hexdigest()
    assert event["skill"] == "ské\u2603" and event["cell_origin"] == "origin é"


def test_a_sidecar_event_does_not_load_json_into_the_worker(worker):
    response, frames = worker.execute(
        "import sys\n"
        "sys.audit('openai4s.skill_sidecar_loaded', {'skill': 's', 'module': 'm',"
        " 'actual_sha256': 'b' * 64, 'source_b64': ''})\n"
        "print('json' in sys.modules)\n"
    )
    assert response["error"] is None
    assert [frame["type"] for frame in frames].count("skill_sidecar_load") == 1
    assert response["stdout"] == "False\n"
