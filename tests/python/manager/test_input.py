"""input() through real workers: answered by on_input, a clear error without
one, interruptible while waiting, and a worker flooding requests cannot wedge
the host."""

import threading
import time


def test_on_input_answers_input_and_getpass(kernel):
    asked = []

    def on_input(prompt, password):
        asked.append((prompt, password))
        return "secret" if password else "Ada"

    result = kernel.execute(
        "import getpass\n"
        "name = input('name? ')\n"
        "word = getpass.getpass()\n"
        "print(name, len(word))",
        on_input=on_input,
    )
    assert result["error"] is None, result
    assert result["stdout"] == "Ada 6\n"
    assert asked == [("name? ", False), ("Password: ", True)]


def test_without_on_input_input_raises_a_clear_error_inside_the_cell(kernel):
    result = kernel.execute(
        "try:\n"
        "    input('x? ')\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, isinstance(exc, RuntimeError))\n"
        "input()"
    )
    assert result["stdout"] == "StdinNotImplementedError True\n"
    assert "no input channel: pass on_input=" in result["error"]
    assert kernel.execute("print('aligned')")["stdout"] == "aligned\n"


def test_a_failing_or_wrong_on_input_becomes_the_cell_s_error(kernel):
    def broken(prompt, password):
        raise LookupError("terminal gone")

    result = kernel.execute("input()", on_input=broken)
    assert "on_input raised LookupError: terminal gone" in result["error"]
    result = kernel.execute("input()", on_input=lambda p, w: 42)
    assert "on_input returned int, expected str" in result["error"]
    assert kernel.execute("print('ok')")["stdout"] == "ok\n"


def test_ctrl_c_at_the_prompt_interrupts_the_cell(kernel):
    def cancelled(prompt, password):
        raise KeyboardInterrupt

    result = kernel.execute("input('go? ')\nprint('never')", on_input=cancelled)
    assert result["interrupted"] is True and result["error"] == "Interrupted"
    assert result["stdout"] == ""
    assert kernel.execute("print('next')")["stdout"] == "next\n"


def test_an_interrupt_while_the_cell_waits_for_input_stops_it(kernel):
    waiting = threading.Event()
    release = threading.Event()

    def slow_answer(prompt, password):
        waiting.set()
        release.wait(30)
        return "too late"

    box = {}
    runner = threading.Thread(
        target=lambda: box.update(r=kernel.execute("input()\nprint('never')", on_input=slow_answer))
    )
    runner.start()
    assert waiting.wait(30)
    assert kernel.interrupt()
    time.sleep(0.2)
    release.set()
    runner.join(30)
    assert not runner.is_alive()
    assert box["r"]["interrupted"] is True
    # The late answer is skipped, not taken by a later input().
    result = kernel.execute("print(input())", on_input=lambda p, w: "fresh")
    assert result["stdout"] == "fresh\n", result


def test_a_cell_flooding_input_requests_cannot_wedge_the_host(kernel):
    # Written straight to the protocol pipe, never reading a reply: without a
    # bound the host blocks writing replies while the worker blocks writing
    # requests. The host stops answering instead and the cell completes.
    code = (
        "import sys, json\n"
        "out = sys._openai4s_protocol_stdout\n"
        "cell = json.dumps(CELL)\n"
        'line = \'{"type":"input_request","id":\' + cell + \',"prompt":"","password":false}\\n\'\n'
        "for _ in range(40_000):\n"
        "    out.write(line)\n"
        "out.flush()\n"
        "print('flooded')"
    )
    box = {}
    runner = threading.Thread(
        target=lambda: box.update(
            r=kernel.execute(code.replace("CELL", "'flood-cell'"), cell_id="flood-cell")
        )
    )
    runner.start()
    runner.join(120)
    assert not runner.is_alive(), "the host wedged answering a flood of input requests"
    assert box["r"]["stdout"] == "flooded\n", box["r"]
    assert any("stopped answering input requests" in m for m in kernel.worker_log_tail)
    assert kernel.execute("print('after')")["stdout"] == "after\n"
