"""Cell execution: capture, echo, errors, trapping, usage and the response."""

import json
import os


from worker_harness import as_the_host_finalises

RESPONSE_KEYS = {
    "type",
    "id",
    "stdout",
    "stderr",
    "error",
    "interrupted",
    "trace",
    "guards",
    "files_read",
    "usage",
}


def test_the_response_has_exactly_the_documented_keys(worker):
    response, _ = worker.execute("print('shape')", cell_id="cell-shape")
    assert set(response) == RESPONSE_KEYS
    assert response["id"] == "cell-shape"
    assert response["interrupted"] is False
    assert response["trace"] == {"error_lineno": None, "error_call": None}
    assert response["guards"] == {} and response["files_read"] == []


def test_print_is_captured_and_streamed_per_write(worker):
    response, frames = worker.execute("print('hello')", cell_id="c1")
    assert response["stdout"] == "hello\n"
    stream = frames[0]["stream"]
    assert frames == [
        {"type": "stdout_chunk", "id": "c1", "stream": stream, "seq": 0, "text": "hello"},
        {"type": "stdout_chunk", "id": "c1", "stream": stream, "seq": 1, "text": "\n"},
    ]
    # The response leaves the text to the chunks and says which ones.
    assert worker.last_raw_response["stdout"] == ""
    assert worker.last_raw_response["stdout_stream"] == {
        "stream": stream,
        "chunks": 2,
        "head_trim": 0,
    }


def test_the_namespace_persists_and_is_the_cells_globals(worker):
    worker.execute("x = 41")
    response, _ = worker.execute("print(x + 1, globals() is globals(), __name__)")
    assert response["stdout"] == "42 True __openai4s__\n"


def test_a_last_expression_is_echoed_but_not_none_or_statements(worker):
    assert worker.execute("21 * 2")[0]["stdout"] == "42\n"
    assert worker.execute("sum(range(1000))")[0]["stdout"] == "499500\n"
    assert worker.execute("None")[0]["stdout"] == ""
    assert worker.execute("y = 5")[0]["stdout"] == ""
    # Like IPython: the last expression of a multi-statement Cell too.
    assert worker.execute("y\ny")[0]["stdout"] == "5\n"
    assert worker.execute("y\ny;")[0]["stdout"] == ""
    assert worker.execute("'a' + 'b'")[0]["stdout"] == "'ab'\n"


def test_earlier_cells_sources_are_there_when_linecache_is_first_imported(worker):
    worker.execute("def shout(text):\n    return text.upper()\n")
    response, _ = worker.execute(
        "import sys\n"
        "print('linecache' in sys.modules)\n"
        "import inspect\n"
        "print(inspect.getsource(shout), end='')"
    )
    assert response["error"] is None, response["error"]
    # The first line pins the path under test: linecache was not imported
    # until this Cell, and still knows the earlier Cell's source.
    assert response["stdout"] == "False\ndef shout(text):\n    return text.upper()\n"


def test_a_cell_that_replaces_linecache_breaks_only_its_own_source_lines(worker):
    worker.execute("import sys\nsys.modules['linecache'] = 42")
    response, _ = worker.execute("print('still runs')")
    assert response["error"] is None and response["stdout"] == "still runs\n"


def test_an_error_reports_the_traceback_and_the_cells_line(worker):
    response, _ = worker.execute("a = 1\nb = 2\nraise ValueError('boom')")
    assert response["error"].startswith("Traceback (most recent call last):\n")
    assert response["error"].endswith("ValueError: boom\n")
    assert "raise ValueError('boom')" in response["error"]  # source via linecache
    assert "worker.py" not in response["error"]
    assert response["trace"] == {"error_lineno": 3, "error_call": None}


def test_the_deepest_frame_of_this_cell_names_the_call(worker):
    code = "def inner():\n    1 / 0\ndef outer():\n    inner()\nouter()"
    response, _ = worker.execute(code)
    assert "ZeroDivisionError" in response["error"]
    assert response["trace"] == {"error_lineno": 2, "error_call": "inner"}


def test_frames_of_a_previous_cell_are_not_this_cells_lines(worker):
    worker.execute("def explode():\n    raise KeyError('k')")
    response, _ = worker.execute("explode()")
    assert response["trace"] == {"error_lineno": 1, "error_call": None}


def test_a_syntax_error_has_no_line_attribution(worker):
    response, _ = worker.execute("x = (")
    assert "SyntaxError" in response["error"]
    assert response["trace"] == {"error_lineno": None, "error_call": None}


def test_system_exit_is_trapped_and_the_namespace_survives(worker):
    worker.execute("kept = 7")
    response, _ = worker.execute("raise SystemExit(3)")
    assert response["error"] == "SystemExit trapped (worker kept alive): 3"
    assert response["interrupted"] is False
    assert response["trace"] == {"error_lineno": None, "error_call": None}
    response, _ = worker.execute("exit()")
    assert response["error"] == "SystemExit trapped (worker kept alive): None"
    assert worker.execute("print(kept)")[0]["stdout"] == "7\n"


def test_a_huge_exit_message_is_capped_once(worker):
    response, _ = worker.execute("raise SystemExit('x' * 3_000_000)")
    assert len(response["error"]) < 1_000_100
    assert response["error"].count("...(truncated at 1000000 characters)") == 1


def test_generator_exit_is_trapped(worker):
    response, _ = worker.execute("raise GeneratorExit('gone')")
    assert response["error"] == "GeneratorExit trapped (worker kept alive): gone"


def test_user_raised_keyboard_interrupt_is_a_normal_error(worker):
    response, _ = worker.execute("x = 1\nraise KeyboardInterrupt('manual')")
    assert response["interrupted"] is False
    assert "KeyboardInterrupt: manual" in response["error"]
    assert response["trace"]["error_lineno"] == 2


def test_stderr_is_captured_separately_and_never_streamed(worker):
    response, frames = worker.execute("import sys\nsys.stderr.write('warn!\\n')\nprint('out')")
    assert response["stdout"] == "out\n"
    assert response["stderr"] == "warn!\n"
    assert all(frame["text"] != "warn!\n" for frame in frames)


def test_usage_is_reported(worker):
    usage = worker.execute("sum(range(10**6))")[0]["usage"]
    assert set(usage) == {"wall_s", "cpu_s", "peak_rss_kb"}
    assert usage["wall_s"] > 0 and usage["cpu_s"] > 0 and usage["peak_rss_kb"] > 0


def test_peak_rss_is_per_cell(worker):
    big = worker.execute("b = bytearray(200 * 1024 * 1024)\ndel b")[0]["usage"]
    small = worker.execute("pass")[0]["usage"]
    assert big["peak_rss_kb"] > 150 * 1024
    assert small["peak_rss_kb"] < big["peak_rss_kb"] - 100 * 1024


def test_one_huge_print_is_streamed_in_bounded_chunks(worker):
    response, frames = worker.execute("print('x' * 20_000_000)")
    chunks = [frame["text"] for frame in frames if frame["type"] == "stdout_chunk"]
    assert max(len(chunk) for chunk in chunks) <= 64_000
    streamed = "".join(chunks)
    assert len(streamed) < 1_000_200
    assert streamed.count("...(truncated at") == 1
    path = response["stdout_file"]
    assert response["stdout"].endswith(
        f"\n...(truncated at 1000000 characters; full output in {path})"
    )
    assert len(response["stdout"]) <= 1_000_064


def test_many_overflowing_writes_leave_one_marker(worker):
    response, frames = worker.execute(
        "import sys\nfor _ in range(30):\n    sys.stdout.write('y' * 100_000)\n"
        "    sys.stderr.write('z' * 100_000)"
    )
    streamed = "".join(frame["text"] for frame in frames)
    assert streamed.count("...(truncated at") == 1
    assert response["stdout"].count("...(truncated at") == 1
    assert response["stderr"].count("...(truncated at") == 1
    assert len(response["stderr"]) <= 1_000_064


def test_a_cell_may_close_its_stdout(worker):
    response, _ = worker.execute("import sys\nprint('before')\nsys.stdout.close()")
    assert response["error"] is None
    assert response["stdout"] == "before\n"
    assert worker.execute("print('after')")[0]["stdout"] == "after\n"


def test_stdout_looks_like_a_text_stream(worker):
    response, _ = worker.execute(
        "import io, sys\nprint(isinstance(sys.stdout, io.StringIO), sys.stdout.encoding,"
        " sys.stdout.write('abc'))"
    )
    assert response["stdout"] == "abcTrue utf-8 3\n"


def test_an_old_cells_stdout_keeps_its_own_id(worker):
    worker.execute("import sys\nold = sys.stdout", cell_id="old-cell")
    _, frames = worker.execute("old.write('late')", cell_id="new-cell")
    late = [frame for frame in frames if frame["id"] == "old-cell"]
    assert [(frame["text"], frame["seq"]) for frame in late] == [("late", 0)]


def test_missing_fields_default(worker):
    worker.send({"code": "print('no type, no id')"})
    response, _ = worker.collect()
    assert response["id"] == "unknown" and response["stdout"] == "no type, no id\n"


def test_invalid_json_gets_the_fixed_error_response_and_blank_lines_are_skipped(worker):
    worker.send_raw("\n   \n{not json\n")
    assert worker.read() == {
        "type": "response",
        "id": "unknown",
        "stdout": "",
        "stderr": "",
        "error": "invalid JSON request",
        "interrupted": False,
        "trace": {"error_lineno": None, "error_call": None},
        "usage": {},
    }
    assert worker.execute("print(1)")[0]["stdout"] == "1\n"


def test_frames_that_are_not_requests_are_ignored(worker):
    worker.send({"type": "host_response", "id": "hc-stale", "data": 1})
    worker.send({"type": "host_ack", "id": "hc-stale"})
    worker.send({"type": "mystery"})
    worker.send([1, 2])
    assert worker.execute("print('aligned')")[0]["stdout"] == "aligned\n"


def test_non_ascii_travels_raw_and_lone_surrogates_do_not_break_frames(worker):
    worker.send({"type": "execute", "id": "u", "code": "print('héllo ✓')"})
    line = worker.read_line()
    assert "héllo ✓" in line  # not \\u-escaped
    response, later = worker.collect()
    # The host rebuilds stdout from the chunks, this first one included.
    response = as_the_host_finalises(worker.last_raw_response, [json.loads(line)] + later)
    assert response["stdout"] == "héllo ✓\n"
    response, _ = worker.execute("print('\\udcff')")
    assert response["error"] is None and response["stdout"] == "?\n"


def test_an_unserialisable_legacy_diagnostic_does_not_cost_the_response(worker):
    response, _ = worker.execute("__openai4s_skill_load_events__ = [{'bad': object()}]")
    assert set(response) == RESPONSE_KEYS
    json.dumps(response)


def test_a_cell_reusing_the_usage_descriptors_keeps_its_files_and_usage(worker):
    # The worker keeps /proc/self/status and clear_refs open between Cells.
    # A Cell that closes every descriptor and reuses the numbers for its own
    # files must neither have "5" written into them nor break the report.
    code = (
        "import os\n"
        "mine = {}\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        target = os.readlink(f'/proc/self/fd/{fd}')\n"
        "    except OSError:\n"
        "        continue\n"
        "    if target.startswith('/proc/') and target.endswith(('/status', '/clear_refs')):\n"
        "        os.close(fd)\n"
        "        mine[fd] = os.open(f'taken-{fd}.txt', os.O_RDWR | os.O_CREAT, 0o644)\n"
        "        os.write(mine[fd], b'users data')\n"
        "print(sorted(mine) == sorted(mine.values()), len(mine))\n"
    )
    worker.execute("pass")  # both files are open once a Cell has finished
    first, _ = worker.execute(code)
    assert first["error"] is None, first["error"]
    assert first["stdout"] == "True 2\n"
    after, _ = worker.execute("b = bytearray(64 * 1024 * 1024)\ndel b")
    assert after["usage"]["peak_rss_kb"] > 60 * 1024
    for name in os.listdir(worker.cwd):
        if name.startswith("taken-"):
            with open(os.path.join(worker.cwd, name), "rb") as taken:
                assert taken.read() == b"users data"
