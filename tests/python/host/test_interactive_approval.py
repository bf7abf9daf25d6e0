"""The interactive approval channel: a dispatcher's `approver` answers the
permission gate's "ask" (the REPL's prompt, a Jupyter stdin reply), and the
answer is recorded in the store like any other resolution."""

import pytest

from openai4s.kernel import Kernel


def _requests(dispatcher):
    return dispatcher.store._conn.execute(
        "SELECT tool, target, state, scope, resolution_context FROM permission_requests"
        " ORDER BY created_at"
    ).fetchall()


def _bash_rules(dispatcher):
    return dispatcher.store._conn.execute(
        "SELECT scope, scope_id, pattern, decision FROM permission_rules WHERE tool = 'bash'"
    ).fetchall()


class Approver:
    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked = []

    def __call__(self, request):
        self.asked.append(dict(request))
        return self.answers.pop(0)


_RUN = "try:\n    print(host.bash({!r})['stdout'].strip())\nexcept RuntimeError as e:\n    print('refused:', e)\n"


def test_once_allows_this_call_and_asks_again_next_time(dispatcher, workspace):
    dispatcher.approver = approver = Approver("once", "once")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        assert k.execute(_RUN.format("echo first"))["stdout"] == "first\n"
        assert k.execute(_RUN.format("echo first"))["stdout"] == "first\n"
    assert [a["target"] for a in approver.asked] == ["echo first", "echo first"]
    assert approver.asked[0]["tool"] == "bash"
    assert approver.asked[0]["decision_id"].startswith("perm-")
    states = [
        (tool, state, scope, context) for tool, _, state, scope, context in _requests(dispatcher)
    ]
    assert states == [("bash", "allowed", "once", "live_thread")] * 2
    assert _bash_rules(dispatcher) == []


def test_conversation_answer_stands_for_that_exact_command_only(dispatcher, workspace):
    dispatcher.approver = approver = Approver("conversation", "deny")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        (workspace / "a.csv").write_text("x")
        assert k.execute(_RUN.format("ls *.csv"))["stdout"] == "a.csv\n"
        # The same command again: the standing rule answers, nobody is asked.
        assert k.execute(_RUN.format("ls *.csv"))["stdout"] == "a.csv\n"
        # The glob in the approved command is not a wildcard for others.
        refused = k.execute(_RUN.format("ls a.csv"))["stdout"]
    assert refused.startswith("refused:") and "denied by the user" in refused
    assert [a["target"] for a in approver.asked] == ["ls *.csv", "ls a.csv"]
    assert _bash_rules(dispatcher) == [("conversation", dispatcher.frame_id, "ls [*].csv", "allow")]


# The approver's exception is reported as unraisable (it cannot propagate
# through the C++ gate); the call is denied.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_raising_or_odd_approver_denies(dispatcher, workspace):
    def broken(request):
        raise RuntimeError("the terminal went away")

    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        dispatcher.approver = broken
        first = k.execute(_RUN.format("echo no"))["stdout"]
        dispatcher.approver = lambda request: 1
        second = k.execute(_RUN.format("echo no"))["stdout"]
    assert first.startswith("refused:") and "denied by the user" in first
    assert second.startswith("refused:") and "denied by the user" in second
    assert [state for _, _, state, _, _ in _requests(dispatcher)] == ["denied", "denied"]


def test_a_standing_deny_is_never_put_to_the_approver(dispatcher, workspace):
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="bash",
        pattern="*",
        decision="deny",
    )
    dispatcher.approver = approver = Approver("once")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        out = k.execute(_RUN.format("echo hi"))["stdout"]
    assert "standing 'deny'" in out and approver.asked == []
