"""`python -m openai4s audit` against a real store written by a real kernel."""

import json
import shutil
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


def test_audit_reads_like_a_log_one_row_per_call(dispatcher, workspace):
    allow_bash(dispatcher)
    (workspace / "notes.txt").write_text("hello\n")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        k.execute("host.save_artifact('notes.txt')")
        k.execute("host.bash('echo hi')")
        k.execute("host.bash('API_TOKEN=s3cr3t-value-123 sh -c \"exit 3\"')")
    done = _audit(dispatcher.cfg.data_dir, "--json")
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in done.stdout.splitlines()]
    # Newest first; a host.bash is one row (its decision and exit code),
    # not its four protocol steps.
    story = [(call["tool"], call["what"], call["decided_by"], call["outcome"]) for call in calls]
    assert story[:2] == [
        ("bash", 'API_TOKEN=<redacted> sh -c "exit 3"', "rule", "exit 3"),
        ("bash", "echo hi", "rule", "exit 0"),
    ]
    assert story[2][0] == "save_artifact" and story[2][1] == "notes.txt"
    assert story[2][2:] == ("rule", "ok")
    assert "s3cr3t" not in done.stdout
    assert all(call["frame_id"] == dispatcher.frame_id for call in calls)

    table = _audit(dispatcher.cfg.data_dir, "--limit", "2")
    assert table.returncode == 0
    header, *rows = table.stdout.splitlines()
    assert header.split() == ["time", "tool", "what", "decided", "by", "outcome"]
    assert len(rows) == 2 and rows[1].split()[2:] == ["bash", "echo", "hi", "rule", "exit", "0"]

    # Every stored row, protocol steps included, on request.
    raw = _audit(dispatcher.cfg.data_dir, "--json", "--all")
    methods = [json.loads(line)["method"] for line in raw.stdout.splitlines()]
    assert {"authorize_bash", "consume_bash_authorization", "record_bash_result"} <= set(methods)


def test_audit_shows_a_refused_call_and_who_refused_it(dispatcher, workspace):
    # No rule for bash: the gate resolves to ask, and headless ask is deny.
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        k.execute("try:\n    host.bash('echo hi')\nexcept Exception as e:\n    print(e)")
    done = _audit(dispatcher.cfg.data_dir, "--json", "--tool", "bash")
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(calls) == 1
    call = calls[0]
    assert (call["tool"], call["what"], call["decided_by"]) == ("bash", "echo hi", "unattended")
    assert call["outcome"] == "denied: approval required but no interactive channel is attached"
    assert call["decision"] == "denied" and call["ok"] is False


def test_audit_of_a_missing_store_is_a_clear_error(tmp_path):
    done = _audit(tmp_path / "nowhere")
    assert done.returncode == 1
    assert "no store at" in done.stderr
    assert not (tmp_path / "nowhere").exists(), "listing must not create a store"


def test_audit_rejects_a_bad_limit(tmp_path):
    done = _audit(tmp_path, "--limit", "0")
    assert done.returncode == 2 and "positive" in done.stderr


def test_audit_merges_each_slurm_jobs_record_and_says_where(dispatcher, workspace, tmp_path):
    # A Slurm job's kernel writes its own store on its node and copies it
    # to <data dir>/slurm-jobs/<job id>/ (openai4s.slurm.records): here a
    # real store stands for job 12's record beside an empty local one.
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        k.execute("try:\n    host.bash('echo on the node')\nexcept Exception:\n    pass")
    data = tmp_path / "login-node"
    record = data / "slurm-jobs" / "12"
    record.mkdir(parents=True)
    shutil.copy(dispatcher.cfg.data_dir / "openai4s.db", record / "openai4s.db")
    calls = [json.loads(line) for line in _audit(data, "--json").stdout.splitlines()]
    assert [(c["what"], c["where"]) for c in calls] == [("echo on the node", "slurm job 12")]
    table = _audit(data).stdout.splitlines()
    assert table[0].split()[-1] == "outcome"  # one store: no "where" column
    assert _audit(data, "--json", "--job", "12").stdout.strip()
    missing = _audit(data, "--job", "13")
    assert missing.returncode == 1 and "no record of Slurm job 13" in missing.stderr
    # With a local store too, the table says where each row came from.
    shutil.copy(record / "openai4s.db", data / "openai4s.db")
    header, *rows = _audit(data).stdout.splitlines()
    assert header.split()[-1] == "where"
    assert sorted(row.split()[-1] for row in rows) == ["12", "local"]
    assert any(row.endswith("slurm job 12") for row in rows)
