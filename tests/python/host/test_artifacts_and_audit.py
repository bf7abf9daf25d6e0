"""Artifacts, provenance and the audit log through a real kernel and store."""

import os
import signal
import threading
import time

from openai4s.kernel import Kernel

from host_support import audit_rows


def test_save_artifact_with_an_unknown_input_version_writes_nothing(dispatcher, workspace):
    (workspace / "result.csv").write_text("a,b\n1,2\n")
    artifacts_dir = dispatcher.cfg.artifacts_dir
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result = k.execute(
            "try:\n"
            "    host.save_artifact('result.csv', input_version_ids=['v-000000000000'])\n"
            "except RuntimeError as e:\n"
            "    print('refused:', e)\n"
        )
    assert "no artifact version 'v-000000000000' in the current session" in result["stdout"]
    rows = dispatcher.store._conn.execute("SELECT COUNT(*) FROM artifact_versions").fetchone()
    assert rows[0] == 0
    assert not artifacts_dir.exists() or not any(artifacts_dir.iterdir())


def test_save_artifact_snapshots_the_file_and_links_inputs(dispatcher, workspace):
    (workspace / "input.csv").write_text("x\n1\n")
    (workspace / "output.csv").write_text("y\n2\n")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        first = k.execute("v = host.save_artifact('input.csv')\nprint(v['version_id'])")
        version = first["stdout"].strip()
        second = k.execute(
            f"w = host.save_artifact('output.csv', input_version_ids=[{version!r}])\n"
            "print(w['version_id'], w['path'])"
        )
    out_version, snapshot = second["stdout"].split()
    assert open(snapshot).read() == "y\n2\n"
    edges = dispatcher.store._conn.execute(
        "SELECT input_version_id, output_version_id FROM lineage_edges"
    ).fetchall()
    assert (version, out_version) in [tuple(e) for e in edges]


def test_save_artifact_refuses_paths_outside_the_workspace(dispatcher, workspace, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result = k.execute(
            f"try:\n    host.save_artifact({str(outside)!r})\n"
            "except RuntimeError as e:\n    print('refused:', e)"
        )
    assert "escapes the workspace" in result["stdout"]


def test_the_audit_log_survives_a_worker_killed_mid_cell(dispatcher, workspace):
    (workspace / "a.txt").write_text("a")
    calls = threading.Event()

    def recording(method, args):
        result = dispatcher(method, args)
        if method == "save_artifact":
            calls.set()
        return result

    k = Kernel(dispatcher=recording, cwd=workspace)
    try:
        box = {}

        def run():
            try:
                box["r"] = k.execute("host.save_artifact('a.txt')\nimport time\ntime.sleep(60)")
            except RuntimeError as exc:
                box["e"] = exc

        thread = threading.Thread(target=run)
        thread.start()
        assert calls.wait(30)
        os.kill(k.pid, signal.SIGKILL)
        thread.join(15)
        assert not thread.is_alive()
        assert "exited unexpectedly" in str(box.get("e"))
    finally:
        k.shutdown()
    # A fresh connection (as after a host restart) sees the committed rows.
    import sqlite3

    fresh = sqlite3.connect(dispatcher.store.path)
    methods = [r[0] for r in fresh.execute("SELECT method FROM host_call_log")]
    versions = fresh.execute("SELECT COUNT(*) FROM artifact_versions").fetchone()[0]
    fresh.close()
    assert "save_artifact" in methods
    assert versions == 1


def test_unknown_methods_raise_and_leave_no_audit_row(dispatcher):
    import pytest

    with pytest.raises(ValueError, match="unknown host method: 'bash'"):
        dispatcher("bash", [{"command": "echo"}])
    assert audit_rows(dispatcher) == []


def test_a_fifo_or_a_symlinked_secret_is_refused_without_hanging_the_host(
    dispatcher, workspace, tmp_path
):
    """The host hashes what a cell names; a FIFO must not block it (the
    kernel would be wedged with the transaction held) and a symlink must not
    lead it out of the workspace."""
    os.mkfifo(workspace / "pipe.csv")
    outside = tmp_path / "credentials"
    outside.write_text("secret")
    (workspace / "link.csv").symlink_to(outside)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result = k.execute(
            "for name in ('pipe.csv', 'link.csv'):\n"
            "    try:\n"
            "        host.save_artifact(name)\n"
            "    except RuntimeError as e:\n"
            "        print(name, 'refused:', e)\n"
            "try:\n"
            "    host._call('prov_record', [{'path': 'pipe.csv', 'filename': 'pipe.csv',\n"
            "        'input_version_ids': [], 'producing_cell_id': 'c'}])\n"
            "except RuntimeError as e:\n"
            "    print('prov_record refused:', e)\n"
        )
    assert result["error"] is None, result
    lines = result["stdout"].splitlines()
    assert lines[0].startswith("pipe.csv refused:") and "not a regular file" in lines[0]
    assert lines[1].startswith("link.csv refused:") and "escapes the workspace" in lines[1]
    assert "no such output file: pipe.csv" in lines[2]
    count = dispatcher.store._conn.execute("SELECT COUNT(*) FROM artifact_versions").fetchone()
    assert count[0] == 0


def test_host_calls_are_attributed_to_the_agent_action_that_ran_the_cell(dispatcher, workspace):
    (workspace / "r.csv").write_text("1\n")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        k.execute(
            "host.save_artifact('r.csv')",
            action_context={"action_group_id": "g-1", "action_id": "a-7"},
        )
        with k.bind_action_context({"action_group_id": "g-2", "action_id": "a-8"}):
            k.execute("host.save_artifact('r.csv')")
        k.execute("host.save_artifact('r.csv')")
    rows = dispatcher.store._conn.execute(
        "SELECT action_group_id, action_id FROM host_call_log "
        "WHERE method = 'save_artifact' ORDER BY created_at"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("g-1", "a-7"), ("g-2", "a-8"), (None, None)]
