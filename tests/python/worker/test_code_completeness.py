"""The worker's is_complete answer (codeop semantics), which the Jupyter
kernel's is_complete_request relays."""

import pytest

from openai4s.kernel.runtime import code_completeness


@pytest.mark.parametrize(
    "code, status",
    [
        ("x = 1", "complete"),
        ("def f(x):\n  return x*2\n\n\n", "complete"),
        ("", "complete"),
        ("print('''hello", "incomplete"),
        ("def f(x):\n  x*2", "incomplete"),
        ("x = [1,\n2", "incomplete"),
        ("import = 7q", "invalid"),
        ("random = 3 + *", "invalid"),
    ],
)
def test_status(code, status):
    assert code_completeness.is_complete(code)["status"] == status


def test_indent_follows_the_open_block():
    assert code_completeness.is_complete("for i in x:")["indent"] == "    "
    assert code_completeness.is_complete("if a:\n    for i in x:")["indent"] == "        "


def test_reply_frame_echoes_the_id_and_never_runs_code():
    frame = code_completeness.reply(
        {"type": "is_complete", "id": "r1", "code": "import os; os._exit(1)"}
    )
    assert frame == {"type": "is_complete_reply", "id": "r1", "status": "complete"}
    assert code_completeness.reply({"id": "r2", "code": 5})["status"] == "invalid"
