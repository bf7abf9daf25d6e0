"""``host.bash``: kernel-local execution behind a one-shot host capability."""

import json
import os

import pytest

from worker_harness import FakeBashAuthority, decoded

RESULT_KEYS = {
    "exit_code",
    "stdout",
    "stderr",
    "stdout_seen_chars",
    "stdout_retained_chars",
    "stdout_dropped_chars",
    "stdout_truncated",
    "stderr_seen_chars",
    "stderr_retained_chars",
    "stderr_dropped_chars",
    "stderr_truncated",
    "workdir",
    "duration_ms",
    "workspace_diff",
    "audit_recorded",
}


def _bash(worker, authority, call):
    code = (
        "import json\n"
        "try:\n"
        f"    print(json.dumps({call}))\n"
        "except RuntimeError as e:\n"
        "    print('ERROR', e)\n"
    )
    response, _ = worker.execute(code, on_host_call=authority)
    assert response["error"] is None, response["error"]
    out = response["stdout"]
    return out[len("ERROR ") :].strip() if out.startswith("ERROR ") else json.loads(out)


@pytest.fixture
def authority(tmp_path):
    return FakeBashAuthority(tmp_path)


def test_a_command_runs_in_the_worker_after_three_rpcs(worker, authority, tmp_path):
    result = _bash(
        worker, authority, "host.bash('echo kernel-local; echo err >&2; touch made.txt')"
    )
    assert set(result) == RESULT_KEYS
    assert result["exit_code"] == 0
    assert result["stdout"] == "kernel-local\n" and result["stderr"] == "err\n"
    assert result["workdir"] == str(tmp_path.resolve())
    assert result["workspace_diff"] == {
        "created": ["made.txt"],
        "modified": [],
        "deleted": [],
        "truncated": False,
    }
    assert result["audit_recorded"] is True
    assert [method for method, _ in authority.calls] == [
        "authorize_bash",
        "consume_bash_authorization",
        "record_bash_result",
    ]
    authorize = authority.calls[0][1][0]
    assert set(authorize) == {
        "command",
        "commandSha256",
        "cwd",
        "workspace",
        "generation",
        "challenge",
        "timeout",
    }
    assert authorize["generation"] == worker.env["OPENAI4S_KERNEL_GENERATION"]
    assert authorize["workspace"] == worker.env["OPENAI4S_WORKSPACE"]
    record = decoded(authority.calls[2][1])[0]
    assert record["status"] == "completed" and record["exit_code"] == 0


def test_the_shell_runs_in_its_own_session_with_the_workers_environment(worker, authority):
    result = _bash(
        worker,
        authority,
        "[host.bash('cut -d\" \" -f6 /proc/$$/stat')['stdout'].strip(), "
        "str(__import__('os').getsid(0)), "
        "host.bash('echo $OPENAI4S_KERNEL_MODE')['stdout'].strip()]",
    )
    shell_sid, worker_sid, mode = result
    assert shell_sid != worker_sid and mode == "repl"


def test_a_relative_workdir_is_resolved_against_the_cwd(worker, authority, tmp_path):
    (tmp_path / "sub").mkdir()
    result = _bash(worker, authority, "host.bash('pwd', workdir='sub')")
    assert result["stdout"].strip() == str((tmp_path / "sub").resolve())
    assert _bash(worker, authority, "host.bash('pwd', workdir='missing')") == (
        "bash: workdir not found: missing"
    )


@pytest.mark.parametrize(
    ("call", "error"),
    [
        ("host.bash('   ')", "bash: empty command"),
        ("host.bash('echo \\x00')", "bash: command contains a NUL byte"),
        ("host.bash('echo', timeout='soon')", "bash: timeout must be a number"),
        ("host.bash('echo', timeout=-1)", "bash: timeout must be finite and positive"),
        ("host.bash('echo', timeout=float('inf'))", "bash: timeout must be finite and positive"),
        (
            "host.bash('rm -rf /')",
            "bash: blocked by static safety precheck: recursive delete targeting '/', '~', or $HOME",
        ),
    ],
)
def test_local_refusals_happen_before_any_rpc(worker, authority, call, error):
    assert _bash(worker, authority, call) == error
    assert authority.calls == []


def test_a_precheck_or_egress_refusal_is_one_line_in_the_cell(worker, tmp_path):
    """A refusal is a decision: the cell shows one line, not a traceback
    through the facade (as a refused approval does)."""
    authority = FakeBashAuthority(tmp_path)

    def with_egress(method, args):
        if method == "egress_check":
            return {"blocked": "evil.example", "message": "evil.example is blocked"}
        return authority(method, args)

    for call, line in (
        ("host.bash('rm -rf /')", "bash: blocked by static safety precheck: recursive delete"),
        ("host.bash('curl -s https://evil.example/x')", "evil.example is blocked"),
    ):
        response, _ = worker.execute(call, on_host_call=with_egress)
        assert response["error"].startswith("RuntimeError: " + line), response["error"]
        assert response["error"].count("\n") == 1 and "Traceback" not in response["error"]


def test_an_authorization_failure_runs_nothing(worker, tmp_path):
    def fail(method, args):
        raise RuntimeError("the host's store is locked")

    # The host's reason is in the message, not only in __cause__.
    assert _bash(worker, fail, "host.bash('touch ran.txt')") == (
        "bash: host authorization unavailable; command was not executed "
        "(the host's store is locked)"
    )
    assert not (tmp_path / "ran.txt").exists()


@pytest.mark.parametrize(
    ("reason", "line"),
    [
        ("denied by user", "PermissionError: host.bash was denied by the user: touch ran.txt"),
        (
            "approval required but no interactive channel is attached",
            "PermissionError: host.bash needs approval and nobody can be asked here "
            "(unattended): touch ran.txt -- allow it with OPENAI4S_UNATTENDED_APPROVAL=allow"
            " or a standing allow rule",
        ),
        (
            "blocked by a standing 'deny' permission rule",
            "PermissionError: host.bash is refused by a standing 'deny' permission rule: "
            "touch ran.txt",
        ),
        (
            "approval required but this client cannot show approval prompts",
            "PermissionError: host.bash needs approval and this client cannot show approval"
            " prompts (it declared no MCP elicitation): touch ran.txt -- use a client that"
            " supports elicitation, or add a standing allow rule",
        ),
    ],
)
def test_a_refusal_is_one_line_in_the_cell(worker, tmp_path, reason, line):
    def deny(method, args):
        raise RuntimeError(f"Permission denied: {reason}")

    response, _ = worker.execute("host.bash('touch   ran.txt')", on_host_call=deny)
    # No traceback through the facade, no chained "During handling" text.
    assert response["error"] == line + "\n"
    assert response["trace"]["error_lineno"] == 1
    assert not (tmp_path / "ran.txt").exists()
    # Code that caught the RuntimeError host.bash always raised still does.
    caught = "try:\n    host.bash('true')\nexcept RuntimeError as e:\n    print(type(e).__name__)"
    response, _ = worker.execute(caught, on_host_call=deny)
    assert response["stdout"] == "PermissionError\n"


@pytest.mark.parametrize(
    ("tamper", "error"),
    [
        (lambda c: {"error": "bash authorization: denied"}, "bash authorization: denied"),
        (
            lambda c: {k: v for k, v in c.items() if k not in ("token", "challenge")},
            "bash: host authorization omitted capability fields: token, challenge",
        ),
        (lambda c: {**c, "cwd": "/"}, "bash: host capability binding mismatch (cwd)"),
        (
            lambda c: {**c, "challenge": "x" * 32},
            "bash: host capability binding mismatch (challenge)",
        ),
        (
            lambda c: {**c, "generation": "kernel:other"},
            "bash: host capability binding mismatch (generation)",
        ),
        (lambda c: {**c, "version": "v0"}, "bash: host capability version is not supported"),
        (lambda c: {**c, "token": "short"}, "bash: host capability token is malformed"),
        (lambda c: {**c, "expires_at_ms": c["issued_at_ms"] - 1}, "bash: host capability expired"),
        (
            lambda c: {**c, "expires_at_ms": c["issued_at_ms"] + 61_000},
            "bash: host capability lifetime is invalid",
        ),
        (
            lambda c: {
                **c,
                "issued_at_ms": c["issued_at_ms"] + 10_000,
                "expires_at_ms": c["issued_at_ms"] + 20_000,
            },
            "bash: host capability was issued in the future",
        ),
        (
            lambda c: {**c, "allowed_root": "/nonexistent-root"},
            "bash: host capability allowed_root is not a directory",
        ),
    ],
)
def test_a_bad_capability_runs_nothing(worker, tmp_path, tamper, error):
    authority = FakeBashAuthority(tmp_path, tamper=tamper)
    assert _bash(worker, authority, "host.bash('touch ran.txt')") == error
    assert not (tmp_path / "ran.txt").exists()
    assert "consume_bash_authorization" not in [method for method, _ in authority.calls]


def test_a_replayed_token_is_refused(worker, tmp_path):
    first = {}

    def same_token(capability):
        first.setdefault("token", capability["token"])
        return {**capability, "token": first["token"]}

    authority = FakeBashAuthority(tmp_path, tamper=same_token)
    assert _bash(worker, authority, "host.bash('true')")["exit_code"] == 0
    assert _bash(worker, authority, "host.bash('touch ran.txt')") == (
        "bash: host capability token replayed"
    )
    assert not (tmp_path / "ran.txt").exists()


def test_a_timeout_ends_the_whole_group(worker, authority, tmp_path):
    assert _bash(worker, authority, "host.bash('sleep 30 & echo started', timeout=0.5)") == (
        "bash: timed out after 0.5s"
    )
    record = decoded(authority.calls[-1][1])[0]
    assert record["status"] == "timed_out"


def test_output_tails_are_bounded(worker, authority):
    result = _bash(
        worker,
        authority,
        "host.bash('python3 -c \"import sys; print(\\'o\\' * 100000); "
        "sys.stderr.write(\\'e\\' * 20000)\"')",
    )
    assert result["stdout_retained_chars"] == len(result["stdout"]) == 30_000
    assert result["stdout_seen_chars"] == 100_001 and result["stdout_truncated"] is True
    assert result["stdout_dropped_chars"] == 70_001
    assert len(result["stderr"]) == 8_000 and result["stderr_truncated"] is True


def test_secret_looking_paths_are_masked_in_the_diff(worker, authority, tmp_path):
    (tmp_path / "old.txt").write_text("x")
    result = _bash(worker, authority, "host.bash('touch .env id_rsa new.txt; rm old.txt')")
    diff = result["workspace_diff"]
    assert sorted(diff["created"]) == ["<secret-path>", "<secret-path>", "new.txt"]
    assert diff["deleted"] == ["old.txt"]


def test_urls_are_checked_against_egress_first(worker, tmp_path):
    authority = FakeBashAuthority(tmp_path)

    def with_egress(method, args):
        if method == "egress_check":
            authority.calls.append((method, args))
            return {"blocked": "evil.example", "message": "proxy 403: evil.example is blocked"}
        return authority(method, args)

    error = _bash(worker, with_egress, "host.bash('curl -s https://evil.example/x')")
    assert error == "proxy 403: evil.example is blocked"
    assert authority.calls == [("egress_check", [{"domains": ["evil.example"]}])]


def test_a_urls_userinfo_does_not_pass_for_its_domain(worker, tmp_path):
    """https://user:pass@evil.example names evil.example, not `user`."""
    authority = FakeBashAuthority(tmp_path)

    def with_egress(method, args):
        if method == "egress_check":
            authority.calls.append((method, args))
            return {"blocked": "evil.example", "message": "evil.example is blocked"}
        return authority(method, args)

    command = "curl -s HTTPS://trusted.org:pw@evil.example/x"
    error = _bash(worker, with_egress, f"host.bash({command!r})")
    assert error == "evil.example is blocked"
    assert authority.calls == [("egress_check", [{"domains": ["evil.example"]}])]


def test_the_generation_falls_back_to_the_worker_pid(spawn, tmp_path):
    from worker_harness import worker_env

    env = worker_env(tmp_path)
    del env["OPENAI4S_KERNEL_GENERATION"]
    worker = spawn(env=env)
    authority = FakeBashAuthority(tmp_path)
    _bash(worker, authority, "host.bash('true')")
    assert authority.calls[0][1][0]["generation"] == f"worker:{worker.proc.pid}"
    assert os.path.isdir(authority.workspace)
