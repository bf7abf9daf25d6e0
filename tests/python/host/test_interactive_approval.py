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


# -- a prompt that cannot lie (issue 27, point 2) --------------------------------

_CONTROLS = "".join(map(chr, [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]))
_REORDERING = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def _raw_controls(text):
    """The characters of `text` a terminal or a bidi renderer would act on,
    apart from the prompt's own line breaks."""
    return [c for c in text if (c in _CONTROLS or c in _REORDERING) and c != "\n"]


def test_the_prompt_shows_a_target_s_controls_as_escapes(dispatcher, workspace):
    # In a terminal, CR + "erase line" would wipe the real command and
    # leave the harmless one; a bidi override would reorder what is shown.
    command = "rm -rf precious\r\x1b[2Kecho harmless\u202e txt.exe\nsecond line\x9b31m"
    dispatcher.approver = approver = Approver("deny")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        out = k.execute(_RUN.format(command))["stdout"]
    assert "denied by the user" in out
    (request,) = approver.asked
    assert request["target"] == command  # the real target, for programs
    prompt = request["prompt"]
    assert _raw_controls(prompt) == []
    assert "    | rm -rf precious\\r\\x1b[2Kecho harmless\\u202e txt.exe\n" in prompt
    # The cell's newline starts a gutter line, never a line of its own.
    assert "\n    | second line\\u009b31m\n" in prompt
    assert request["target_display"] in prompt
    assert request["choices"] == ["once", "conversation", "deny"]


def test_a_long_command_is_cut_visibly_and_only_once_is_offered(dispatcher, workspace):
    prefix = "echo " + "x" * 4100
    approved, attack = prefix + " && echo benign", prefix + " && echo EVIL"
    dispatcher.approver = approver = Approver("conversation", "deny")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        first = k.execute(_RUN.format(approved))["stdout"]
        # Same first 4,000 characters, another tail: it must be asked again.
        second = k.execute(_RUN.format(attack))["stdout"]
    assert first.endswith("benign\n")
    assert "denied by the user" in second and "EVIL" not in second
    assert len(approver.asked) == 2
    request = approver.asked[0]
    import hashlib

    digest = hashlib.sha256(approved.encode()).hexdigest()
    assert request["target_whole"] is False
    assert request["target_length"] == len(approved)
    assert request["target_sha256"] == digest
    assert request["choices"] == ["once", "deny"]
    assert f"bytes shown; sha256 {digest}]" in request["prompt"]
    assert "[a]lways" not in request["prompt"]
    # "Always" for a target nobody saw whole was honoured as "once".
    assert _bash_rules(dispatcher) == []
    states = [(state, scope) for _, _, state, scope, _ in _requests(dispatcher)]
    assert states == [("allowed", "once"), ("denied", None)]


def test_an_always_rule_matches_the_whole_command_only(dispatcher, workspace):
    # 3,990 characters: shown whole, so "always" is offered and stands for
    # exactly this command, not for every command that starts with it.
    short = "echo " + "y" * 3985
    dispatcher.approver = approver = Approver("conversation", "deny")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        assert k.execute(_RUN.format(short))["stdout"].strip() == "y" * 3985
        assert k.execute(_RUN.format(short))["stdout"].strip() == "y" * 3985
        longer = k.execute(_RUN.format(short + "y" * 20 + " && echo EVIL"))["stdout"]
    assert "denied by the user" in longer
    assert len(approver.asked) == 2


def test_a_redacted_command_is_never_approved_for_always(dispatcher, workspace):
    # The person sees API_TOKEN=<redacted>: "always" would approve every
    # value nobody saw, so only "once" counts.
    command = "API_TOKEN=hunter2 sh -c 'echo ran'"
    dispatcher.approver = approver = Approver("conversation", "deny")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        assert k.execute(_RUN.format(command))["stdout"] == "ran\n"
        again = k.execute(_RUN.format(command))["stdout"]
    assert "denied by the user" in again
    assert approver.asked[0]["choices"] == ["once", "deny"]
    assert "hunter2" not in approver.asked[0]["prompt"]
    assert _bash_rules(dispatcher) == []
