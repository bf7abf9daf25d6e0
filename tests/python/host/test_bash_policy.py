"""host.bash through real kernels and the real dispatcher: the policy
decides, the capability is single-use and bound to one worker generation,
and every call is audited."""

import pytest

from openai4s.kernel import Kernel

from host_support import allow_bash, audit_rows


def test_a_denied_command_never_runs_and_is_audited_as_denied(dispatcher, workspace):
    marker = workspace / "ran.txt"
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result = k.execute(
            "try:\n"
            f"    host.bash('touch {marker}')\n"
            "except RuntimeError as e:\n"
            "    print('refused:', e)\n"
        )
    assert result["error"] is None, result
    assert "refused:" in result["stdout"]
    assert not marker.exists(), "a command the policy denied was executed"
    rows = audit_rows(dispatcher)
    authorize = [row for row in rows if row[0] == "authorize_bash"]
    assert authorize and authorize[0][1] == 0, rows
    assert authorize[0][2], "the denial carries no durable decision id"
    assert "bash" not in [row[0] for row in rows]


def test_a_standing_deny_wins_over_an_allow(dispatcher, workspace):
    allow_bash(dispatcher)
    dispatcher.store.set_permission_rule(
        scope="global", tool="bash", pattern="touch *", decision="deny"
    )
    marker = workspace / "ran.txt"
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        k.execute(f"try:\n    host.bash('touch {marker}')\nexcept RuntimeError:\n    pass")
        ok = k.execute("print(host.bash('echo fine')['stdout'].strip())")
    assert not marker.exists()
    assert ok["stdout"].strip() == "fine"


def test_an_allowed_command_runs_in_the_workspace_and_is_audited(dispatcher, workspace):
    allow_bash(dispatcher)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result = k.execute("r = host.bash('echo hi > out.txt; cat out.txt')\nprint(r['stdout'])")
    assert result["error"] is None, result
    assert result["stdout"].strip() == "hi"
    assert (workspace / "out.txt").read_text() == "hi\n"
    methods = [row[0] for row in audit_rows(dispatcher)]
    for step in ("authorize_bash", "consume_bash_authorization", "bash", "record_bash_result"):
        assert step in methods, methods


def _authorize_once(k):
    """Authorize a command through the worker's own RPC and return the
    capability, without consuming it."""
    result = k.execute(
        "import hashlib, os, secrets\n"
        "cmd = 'echo replay'\n"
        "cap = host._call('authorize_bash', [{'command': cmd,\n"
        "    'command_sha256': hashlib.sha256(cmd.encode()).hexdigest(),\n"
        "    'cwd': os.getcwd(), 'workspace': os.environ['OPENAI4S_WORKSPACE'],\n"
        "    'generation': os.environ['OPENAI4S_KERNEL_GENERATION'],\n"
        "    'challenge': secrets.token_urlsafe(24), 'timeout': 30}])\n"
        "consume = {k: cap[k] for k in ('token', 'command_sha256', 'cwd', 'generation', 'challenge')}\n"
    )
    assert result["error"] is None, result


def test_a_token_is_single_use(dispatcher, workspace):
    allow_bash(dispatcher)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        _authorize_once(k)
        first = k.execute("print(host._call('consume_bash_authorization', [consume])['ok'])")
        replay = k.execute(
            "try:\n    host._call('consume_bash_authorization', [consume])\n"
            "except RuntimeError as e:\n    print('refused:', e)"
        )
    assert first["stdout"].strip() == "True"
    assert "token was already consumed" in replay["stdout"]


def test_a_token_from_before_restart_is_refused(dispatcher, workspace):
    allow_bash(dispatcher)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        _authorize_once(k)
        token = k.execute("import json\nprint(json.dumps(consume))")["stdout"].strip()
        k.restart()
        # The new worker presents its predecessor's grant, as its own.
        replay = k.execute(
            "import json, os\n"
            f"consume = json.loads({token!r})\n"
            "consume['generation'] = os.environ['OPENAI4S_KERNEL_GENERATION']\n"
            "try:\n    host._call('consume_bash_authorization', [consume])\n"
            "except RuntimeError as e:\n    print('refused:', e)"
        )
        stale = k.execute(
            "import json\n"
            f"old = json.loads({token!r})\n"
            "try:\n    host._call('consume_bash_authorization', [old])\n"
            "    print('accepted')\n"
            "except RuntimeError as e:\n    print('refused:', e)"
        )
    assert "token binding mismatch (generation)" in replay["stdout"]
    # Presented unchanged, the old grant names a generation that no longer
    # runs: restart() revoked it, and the caller's trusted generation is not
    # the one it was issued to.
    assert "refused:" in stale["stdout"], stale["stdout"]
    assert "accepted" not in stale["stdout"]


def test_a_consumed_token_cannot_be_recorded_by_the_next_generation(dispatcher, workspace):
    allow_bash(dispatcher)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        _authorize_once(k)
        k.execute("host._call('consume_bash_authorization', [consume])")
        token = k.execute("import json\nprint(json.dumps(consume))")["stdout"].strip()
        k.restart()
        forged = k.execute(
            "import json\n"
            f"report = json.loads({token!r})\n"
            "report.update(status='completed', exit_code=0, stdout='forged', stderr='',\n"
            "              duration_ms=1, workspace_diff={})\n"
            "try:\n    host._call('record_bash_result', [report])\n    print('recorded')\n"
            "except RuntimeError as e:\n    print('refused:', e)"
        )
    assert "refused:" in forged["stdout"], forged["stdout"]
    assert "bash" not in [row[0] for row in audit_rows(dispatcher)]


def test_shutdown_revokes_the_generation_s_outstanding_tokens(dispatcher, workspace):
    allow_bash(dispatcher)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        _authorize_once(k)
        token = k.execute("import json\nprint(json.dumps(consume))")["stdout"].strip()
        generation = k.authorization_generation
    import json

    # Even a caller presenting the right trusted generation is refused: the
    # worker it was issued to is gone.
    spec = json.loads(token)
    result = dispatcher._core.consume(spec, generation=generation)
    assert "revoked" in result.get("error", ""), result


def test_authorize_for_a_previous_generation_is_refused(dispatcher, workspace):
    allow_bash(dispatcher)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        old_generation = k.authorization_generation
        k.restart()
        result = k.execute(
            "import hashlib, os, secrets\n"
            "cmd = 'echo x'\n"
            "try:\n"
            "    host._call('authorize_bash', [{'command': cmd,\n"
            "        'command_sha256': hashlib.sha256(cmd.encode()).hexdigest(),\n"
            "        'cwd': os.getcwd(), 'workspace': os.environ['OPENAI4S_WORKSPACE'],\n"
            f"        'generation': {old_generation!r},\n"
            "        'challenge': secrets.token_urlsafe(24), 'timeout': 30}])\n"
            "except RuntimeError as e:\n"
            "    print('refused:', e)\n"
        )
    assert "worker generation does not match the active Host generation" in result["stdout"]


def test_a_denial_says_why_in_the_cell(dispatcher, workspace):
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result = k.execute(
            "try:\n    host.bash('echo hi')\nexcept RuntimeError as e:\n    print(e)"
        )
    assert result["stdout"] == (
        "host.bash needs approval and nobody can be asked here (unattended): echo hi"
        " -- allow it with OPENAI4S_UNATTENDED_APPROVAL=allow or a standing allow rule\n"
    )


# Issue 27, point 7: spellings the precheck now refuses, each harmless if it
# ran (an unset variable, a nonexistent user, a dry run), through a real
# worker with bash allowed: the refusal is the precheck's, and nothing runs.
_REFUSED_SPELLINGS = [
    'eval "$NO_SUCH_VAR_O4S"',
    'sh -c "$NO_SUCH_VAR_O4S"',
    "alias ll='ls -la'",
    "busybox rm -rf $NO_SUCH_VAR_O4S",
    "echo 'echo piped' | sh",
    "rsync -a --dry-run --delete /nonexistent-o4s/ ~",
    "python3 -c \"import shutil; print(shutil.rmtree, '/')\"",
    "perl -e 'print \"unlink ~\"'",
    "IFS=,; c=echo,split; $c",
    "rm -rf ~no-such-user-o4s",
]


def test_the_precheck_refuses_what_it_cannot_resolve(dispatcher, workspace):
    allow_bash(dispatcher)
    code = (
        "for command in {commands!r}:\n"
        "    try:\n"
        "        print('ran:', host.bash(command)['stdout'].strip())\n"
        "    except RuntimeError as e:\n"
        "        print('refused:', e)\n"
    ).format(commands=_REFUSED_SPELLINGS)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        lines = k.execute(code)["stdout"].splitlines()
    assert len(lines) == len(_REFUSED_SPELLINGS), lines
    for command, line in zip(_REFUSED_SPELLINGS, lines):
        assert line.startswith("refused:") and "static safety precheck" in line, (command, line)
    assert [row for row in audit_rows(dispatcher) if "bash" in row[0]] == []
