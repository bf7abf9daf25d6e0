"""host$bash in R cells does what host.bash does in Python cells (issue 32
point 1): the SDK's static precheck and the egress check before any
capability is asked for, the files a command changed, and the same result
fields. Real Rscript and Python workers, a real dispatcher on a real
SQLite store."""

import json
import os
import sys
import time
import uuid

import pytest

from openai4s.config import Config, LLMConfig
from openai4s.host_dispatch import build_dispatcher
from openai4s.kernel import Kernel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "sandbox"))
from sandbox_support import pids_with_marker  # noqa: E402  (the sandbox tests' helper)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "host"))
from host_support import allow_bash  # noqa: E402  (the host tests' helper)


@pytest.fixture
def dispatcher(tmp_path, workspace, monkeypatch):
    monkeypatch.delenv("OPENAI4S_UNATTENDED_APPROVAL", raising=False)
    monkeypatch.delenv("OPENAI4S_EGRESS_ALLOW", raising=False)
    monkeypatch.setenv("OPENAI4S_EGRESS", "allowlist")
    cfg = Config(data_dir=tmp_path / "data", llm=LLMConfig(provider="deepseek", api_key="x"))
    d = build_dispatcher(cfg, workspace=workspace)
    d.frame_id = d.store.new_frame(kind="turn")
    # Whoever would be asked is noted: a blocked command must ask nobody.
    d.asked = []
    d.approver = lambda request: d.asked.append(request["target"]) or "once"
    yield d
    d.store.close()


def methods(dispatcher):
    rows = dispatcher.store._conn.execute("SELECT method FROM host_call_log ORDER BY created_at")
    return [method for (method,) in rows]


def run(kernel, code):
    out = kernel.execute(code)
    assert out["error"] is None, (out["error"], out["stderr"])
    return out["stdout"]


def r_error(kernel, call):
    return run(kernel, f"cat(tryCatch({{{call}; 'NO ERROR'}}, error = conditionMessage))")


def test_a_blocked_command_is_refused_before_any_host_call(start_r, dispatcher, workspace):
    k = start_r(dispatcher=dispatcher)
    blocked = r_error(k, "host$bash('rm -rf /')")
    # Python's text, from the SDK's own precheck: no capability was asked
    # for, so nobody was asked to approve it and the host audited nothing.
    assert blocked == "bash: blocked by static safety precheck: " + (
        "recursive delete targeting '/', '~', or $HOME"
    )
    assert r_error(k, "host$bash('   ')") == "bash: empty command"
    assert r_error(k, "host$bash('true', timeout = 'x')") == "bash: timeout must be a number"
    assert dispatcher.asked == [] and methods(dispatcher) == []
    # A command that passes is put to the person as before.
    assert run(k, "cat(host$bash('echo fine')$stdout)") == "fine\n"
    assert dispatcher.asked == ["echo fine"]


def test_a_url_outside_the_egress_policy_is_refused_before_authorization(
    start_r, dispatcher, workspace
):
    allow_bash(dispatcher)
    k = start_r(dispatcher=dispatcher)
    refused = r_error(k, "host$bash('curl -s https://Data.Example.ORG./x')")
    assert "data.example.org" in refused and "egress" in refused
    # The host was asked about the domain only; no capability exists.
    assert methods(dispatcher) == ["egress_check"]
    # A URL's userinfo does not pass for its domain.
    refused = r_error(k, "host$bash('curl -s HTTPS://trusted.org:pw@evil.example/x')")
    assert "evil.example" in refused and "egress" in refused


def test_the_result_names_the_files_the_command_changed(start_r, dispatcher, workspace):
    allow_bash(dispatcher)
    k = start_r(dispatcher=dispatcher)
    # Made by the cell (a file the test made is not the sandboxed cell's to
    # change); a command naming a secret file is refused, so a script makes one.
    run(
        k,
        "for (f in c('kept.txt', 'gone.txt', 'same.txt')) writeLines('old', f)\n"
        "writeLines('echo k=v > .env', 'make.sh')",
    )
    out = run(
        k,
        "r <- host$bash('mkdir -p sub && echo new > sub/made.txt && echo more >> kept.txt"
        " && rm gone.txt && sh make.sh')\n"
        "d <- r$workspace_diff\n"
        "cat(d$created, '|', d$modified, '|', d$deleted, '|', d$truncated, r$audit_recorded)",
    )
    # The host's record of it (the worker sent the names as they are): a
    # secret file's name is not shown.
    assert out == "<secret-path> sub/made.txt | kept.txt | gone.txt | FALSE TRUE"
    assert dispatcher.store._conn.execute(
        "SELECT ok, outcome FROM host_call_log WHERE method = 'bash'"
    ).fetchall() == [(1, "exit 0")]


def test_the_result_has_the_python_results_fields(start_r, dispatcher, workspace):
    allow_bash(dispatcher)
    command = "yes x | head -c 40000; echo é >&2"
    k = start_r(dispatcher=dispatcher)
    r_fields = json.loads(
        run(
            k,
            f'r <- host$bash("{command}"); r$stdout <- NULL; r$stderr <- NULL\n'
            "r$workdir <- NULL; r$duration_ms <- NULL; r$workspace_diff <- NULL\n"
            "cat(jsonlite::toJSON(r, auto_unbox = TRUE))",
        )
    )
    with Kernel(dispatcher=dispatcher, cwd=workspace) as py:
        shown = py.execute(
            "import json\n"
            f"r = host.bash({command!r})\n"
            "print(json.dumps(sorted(r)))\n"
            "print(json.dumps({k: v for k, v in r.items() if k not in"
            " ('stdout', 'stderr', 'workdir', 'duration_ms', 'workspace_diff')}))"
        )
    assert shown["error"] is None, shown
    py_names, py_fields = (json.loads(line) for line in shown["stdout"].splitlines())
    shown_apart = ["duration_ms", "stderr", "stdout", "workdir", "workspace_diff"]
    assert sorted(list(r_fields) + shown_apart) == sorted(py_names)
    # The same counts: 30000 characters kept of the 40000 written, and the
    # two characters of stderr ("é" and the newline).
    assert r_fields == py_fields
    assert r_fields["stdout_seen_chars"] == 40000 and r_fields["stdout_retained_chars"] == 30000
    assert r_fields["stdout_truncated"] is True and r_fields["stderr_seen_chars"] == 2


def test_a_command_past_its_timeout_is_stopped_with_what_it_started(start_r, dispatcher):
    allow_bash(dispatcher)
    k = start_r(dispatcher=dispatcher)
    marker = f"o4s-r-timeout-{uuid.uuid4().hex[:12]}"
    late = r_error(
        k,
        f"host$bash('(exec -a {marker}-child sleep 60) & exec -a {marker} sleep 60', timeout = 1)",
    )
    assert late == "bash: timed out after 1s"
    deadline = time.monotonic() + 10
    while pids_with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pids_with_marker(marker) == []
    assert dispatcher.store._conn.execute(
        "SELECT ok, outcome FROM host_call_log WHERE method = 'bash'"
    ).fetchall() == [(0, "timed_out")]


def test_a_refusal_says_what_pythons_says(start_r, dispatcher, workspace):
    dispatcher.approver = lambda request: "deny"
    # Spread over lines, with an escape sequence that must not reach a terminal.
    command = "echo  one\n  echo \x1b[2Jtwo"
    k = start_r(dispatcher=dispatcher)
    r_text = r_error(k, 'host$bash("echo  one\\n  echo \\033[2Jtwo")')
    with Kernel(dispatcher=dispatcher, cwd=workspace) as py:
        shown = py.execute(
            f"try:\n    host.bash({command!r})\nexcept PermissionError as e:\n    print(e)"
        )
    assert shown["error"] is None, shown
    assert r_text == shown["stdout"].strip().replace("host.bash", "host$bash")
    assert r_text == "host$bash was denied by the user: echo one echo \\x1b[2Jtwo"


def test_a_workdir_is_taken_as_pythons_is(start_r, dispatcher, workspace):
    allow_bash(dispatcher)
    k = start_r(dispatcher=dispatcher)
    run(k, "dir.create('sub')")
    assert run(k, "cat(host$bash('pwd', workdir = 'sub')$stdout)") == f"{workspace}/sub\n"
    assert run(k, f"cat(host$bash('pwd', workdir = '{workspace}/sub')$stdout)") == (
        f"{workspace}/sub\n"
    )
    assert r_error(k, "host$bash('pwd', workdir = 'nope')") == "bash: workdir not found: nope"
