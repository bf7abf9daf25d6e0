"""host.request_network_access: the person is asked (the dispatcher's
approver, as the REPL and Jupyter front doors install it), a yes widens
the egress policy for the conversation, a no and an unattended run refuse
with how to allow it (issue 30 part 3)."""

import pytest

from openai4s.kernel import Kernel

from web_support import LocalServer, call, web_rows


@pytest.fixture(scope="module")
def server():
    local = LocalServer()
    yield local
    local.stop()


@pytest.fixture
def kernel(dispatcher, workspace, monkeypatch):
    # The server's addresses may be reached; its name "localhost" is not
    # on any list until the person grants it.
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    monkeypatch.delenv("OPENAI4S_EGRESS_ALLOW", raising=False)
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.0/8, ::1")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        yield k


class Approver:
    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked = []

    def __call__(self, request):
        self.asked.append(dict(request))
        return self.answers.pop(0)


def test_yes_widens_the_policy_for_the_conversation(kernel, dispatcher, server):
    url = f"http://localhost:{server.port}/data.csv"
    _, error = call(kernel, f"web_fetch({url!r})")
    assert "host.request_network_access('localhost'" in error
    dispatcher.approver = approver = Approver("once")
    granted, error = call(kernel, "request_network_access('localhost', reason='the lab server')")
    assert error is None
    assert granted == {
        "ok": True,
        "domain": "localhost",
        "mode": "allowlist",
        "granted": True,
        "asked": True,
        "scope": "conversation",
    }
    assert [(a["tool"], a["target"]) for a in approver.asked] == [
        ("request_network_access", "localhost")
    ]
    # The person sees why the cell asks, as the cell's words.
    assert approver.asked[0]["reason_display"] == "    | the lab server\n"
    assert "reason (its own words, not checked):\n    | the lab server\n" in (
        approver.asked[0]["prompt"]
    )
    page, error = call(kernel, f"web_fetch({url!r})")
    assert error is None and page["text"] == "a,b\n1,2\n" and page["egress"] == "session"
    # Already allowed: nobody is asked again.
    again, _ = call(kernel, "request_network_access('localhost')")
    assert again["asked"] is False and approver.asked[1:] == []
    rules = dispatcher.store._conn.execute(
        "SELECT scope, scope_id, pattern, decision FROM permission_rules WHERE tool = 'egress'"
    ).fetchall()
    assert rules == [("conversation", dispatcher.frame_id, "localhost", "allow")]
    assert [row[:4] for row in web_rows(dispatcher)] == [
        ("web_fetch", 0, "localhost", "rule"),
        ("request_network_access", 1, "localhost", "user"),
        ("web_fetch", 1, "localhost", "rule"),
        ("request_network_access", 1, "localhost", None),
    ]


def test_no_leaves_the_policy_as_it_was(kernel, dispatcher, server):
    dispatcher.approver = Approver("deny")
    _, error = call(kernel, "request_network_access('localhost', reason='x')")
    assert "Permission denied: denied by user" in error
    _, error = call(kernel, f"web_fetch('http://localhost:{server.port}/data.csv')")
    assert "blocked by the egress allowlist" in error


def test_unattended_it_is_refused_with_how_to_allow_it(kernel, dispatcher):
    _, error = call(kernel, "request_network_access('granted.test')")
    assert "no interactive channel is attached" in error
    assert "add it to OPENAI4S_EGRESS_ALLOW" in error
    assert "OPENAI4S_UNATTENDED_APPROVAL=allow" in error


def test_a_missing_or_malformed_domain_asks_nobody(kernel, dispatcher):
    dispatcher.approver = approver = Approver()
    _, error = call(kernel, "request_network_access('')")
    assert "a 'domain' (e.g. 'example.org') is required" in error
    _, error = call(kernel, "request_network_access('not a domain')")
    assert "is not a domain name" in error
    assert approver.asked == []


def test_a_reason_cannot_dress_up_as_the_prompt(kernel, dispatcher):
    # Controls, a bidi override and a line break in the reason are shown as
    # escapes on the reason's one gutter line; a long one is cut visibly.
    dispatcher.approver = approver = Approver("deny", "deny")
    hostile = "ok\n\x1b[2KAllow? [y]es\u202e" + "x" * 600
    call(kernel, f"request_network_access('localhost', reason={hostile!r})")
    shown = approver.asked[0]["reason_display"]
    assert shown.startswith("    | ok\\n\\x1b[2KAllow? [y]es\\u202e") and shown.count("\n") == 1
    assert shown.endswith(" [cut: 500 of 622 bytes shown]\n")
    assert "\x1b" not in approver.asked[0]["prompt"]
    # No reason: no reason line.
    call(kernel, "request_network_access('localhost')")
    assert approver.asked[1]["reason_display"] == ""
    assert "reason" not in approver.asked[1]["prompt"]
