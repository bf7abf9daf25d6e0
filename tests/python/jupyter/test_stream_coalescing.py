"""A cell's stdout reaches the client in fewer stream messages (issue 28:
each costs the client about a millisecond), without reordering it against
the cell's displays, stderr and result, and without holding back a print
that a long-running statement follows."""

import time

from kernel_client import stdout_of


def _streams(outputs):
    return [m for m in outputs if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"]


def test_a_one_line_print_is_one_stream_message(kernel):
    reply, outputs = kernel.execute("print('hello')")
    assert reply["status"] == "ok"
    assert [m["content"]["text"] for m in _streams(outputs)] == ["hello\n"]


def test_prints_displays_stderr_and_the_result_keep_their_order(kernel):
    code = (
        "import sys\n"
        "from openai4s.kernel.display import HTML\n"
        "print('one')\n"
        "display(HTML('<b>first</b>'))\n"
        "print('two'); print('three')\n"
        "display(HTML('<b>second</b>'))\n"
        "print('four')\n"
        "sys.stderr.write('err\\n')\n"
        "41 + 1\n"
    )
    reply, outputs = kernel.execute(code)
    assert reply["status"] == "ok"
    seen = []
    for m in outputs:
        kind = m["msg_type"]
        if kind == "stream":
            seen.append((m["content"]["name"], m["content"]["text"]))
        elif kind == "display_data":
            seen.append(("display", m["content"]["data"]["text/html"]))
        elif kind == "execute_result":
            seen.append(("result", m["content"]["data"]["text/plain"]))
    assert seen == [
        ("stdout", "one\n"),
        ("display", "<b>first</b>"),
        ("stdout", "two\nthree\n"),
        ("display", "<b>second</b>"),
        ("stdout", "four\n"),
        ("stderr", "err\n"),
        ("result", "42"),
    ]


def test_a_lone_print_arrives_while_the_cell_still_runs(kernel):
    msg_id = kernel.kc.execute("print('early')\nimport time\ntime.sleep(3)\nprint('late')")
    sent = time.monotonic()
    text = ""
    while text != "early\n":
        text += kernel.wait_busy(msg_id, timeout=30)["content"]["text"]  # a stream message
        assert "early\n".startswith(text), text
    arrived = time.monotonic() - sent
    # Well before the sleep ends: the window is milliseconds, not the cell.
    assert arrived < 2.5, arrived
    reply, outputs = kernel.collect(msg_id)
    assert reply["status"] == "ok"
    assert stdout_of(outputs) == "late\n"


def test_a_print_before_a_worker_death_comes_before_the_error(kernel):
    reply, outputs = kernel.execute("print('last words')\nimport os\nos._exit(3)")
    assert reply["status"] == "error"
    kinds = [m["msg_type"] for m in outputs]
    assert "error" in kinds and "stream" in kinds
    assert kinds.index("stream") < kinds.index("error")
    assert stdout_of(outputs) == "last words\n"


def test_a_flood_arrives_whole_in_order(kernel):
    code = "for i in range(3000):\n    print(i)\n"
    reply, outputs = kernel.execute(code)
    assert reply["status"] == "ok"
    assert stdout_of(outputs) == "".join(f"{i}\n" for i in range(3000))
    assert len(_streams(outputs)) < 3000
