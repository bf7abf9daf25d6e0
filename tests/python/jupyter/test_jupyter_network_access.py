"""host.request_network_access through the Jupyter kernel: the question is
an input_request on stdin, and the answer decides (issue 30 part 3)."""

import sqlite3

import pytest

from kernel_client import stdout_of

CODE = (
    "try:\n"
    "    print(host.request_network_access('granted.test', reason='a dataset'))\n"
    "except RuntimeError as exc:\n"
    "    print('refused:', exc)\n"
)


@pytest.mark.parametrize("answer", ["y", "n"])
def test_the_question_is_an_input_request(kernel, environment, answer):
    msg_id = kernel.kc.execute(CODE, allow_stdin=True)
    request = kernel.kc.get_stdin_msg(timeout=60)
    assert request["msg_type"] == "input_request"
    assert "'request_network_access'" in request["content"]["prompt"]
    assert "    | granted.test\n" in request["content"]["prompt"]
    assert "reason (its own words, not checked):\n    | a dataset\n" in request["content"]["prompt"]
    kernel.kc.input(answer)
    reply, outputs = kernel.collect(msg_id)
    assert reply["status"] == "ok", reply
    text = stdout_of(outputs)
    with sqlite3.connect(environment.data_dir / "openai4s.db") as conn:
        grants = conn.execute(
            "SELECT scope, pattern FROM permission_rules WHERE tool = 'egress'"
        ).fetchall()
    if answer == "n":
        assert "refused:" in text and "denied by user" in text
        assert grants == []
    else:
        assert "'granted': True" in text
        assert grants == [("conversation", "granted.test")]


def test_without_stdin_it_is_refused_with_how_to_allow_it(kernel):
    reply, outputs = kernel.execute(CODE)
    assert "refused:" in stdout_of(outputs)
    assert "OPENAI4S_EGRESS_ALLOW" in stdout_of(outputs)
