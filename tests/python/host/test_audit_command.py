"""`python -m openai4s audit` against a real store written by a real kernel."""

import json
import subprocess
import sys

from openai4s.kernel import Kernel

from host_support import allow_bash


def _audit(data_dir, *args):
    return subprocess.run(
        [sys.executable, "-m", "openai4s", "audit", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_audit_lists_the_calls_a_cell_made_newest_first(dispatcher, workspace):
    allow_bash(dispatcher)
    (workspace / "notes.txt").write_text("hello\n")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        k.execute("host.save_artifact('notes.txt')")
        k.execute("host.bash('echo hi')")
    done = _audit(dispatcher.cfg.data_dir, "--json")
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in done.stdout.splitlines()]
    tools = [call["tool"] for call in calls]
    assert "save_artifact" in tools and "record_bash_result" in tools
    # Newest first: the shell's rows come after the artifact's in time.
    assert tools.index("record_bash_result") < tools.index("save_artifact")
    artifact = next(call for call in calls if call["tool"] == "save_artifact")
    assert "notes.txt" in artifact["arguments"] and artifact["ok"] is True
    assert all(call["frame_id"] == dispatcher.frame_id for call in calls)

    table = _audit(dispatcher.cfg.data_dir, "--limit", "1")
    assert table.returncode == 0
    header, *rows = table.stdout.splitlines()
    assert header.split() == ["time", "tool", "decision", "ok", "frame", "arguments"]
    assert len(rows) == 1 and "record_bash_result" in rows[0]


def test_audit_shows_a_refused_call_as_denied(dispatcher, workspace):
    # No rule for bash: the gate resolves to ask, and headless ask is deny.
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        k.execute("try:\n    host.bash('echo hi')\nexcept Exception as e:\n    print(e)")
    done = _audit(dispatcher.cfg.data_dir, "--json", "--tool", "authorize_bash")
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in done.stdout.splitlines()]
    assert calls and calls[0]["decision"] == "denied" and calls[0]["ok"] is False


def test_audit_of_a_missing_store_is_a_clear_error(tmp_path):
    done = _audit(tmp_path / "nowhere")
    assert done.returncode == 1
    assert "no store at" in done.stderr
    assert not (tmp_path / "nowhere").exists(), "listing must not create a store"


def test_audit_rejects_a_bad_limit(tmp_path):
    done = _audit(tmp_path, "--limit", "0")
    assert done.returncode == 2 and "positive" in done.stderr
