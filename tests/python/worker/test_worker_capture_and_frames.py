"""Pure helpers: bounded capture, streaming, frame encoding and its ceiling."""

import json

import pytest

from openai4s.kernel.runtime import protocol
from openai4s.kernel.runtime.capture import BoundedBuffer, StreamingStdout, cap_text
from openai4s.kernel.runtime.forks import forks


@pytest.fixture(autouse=True)
def _an_unforked_worker():
    # These tests are about a worker that has not forked; the pytest process
    # may have (another test's server in a forked process), and after a fork
    # the stream is cut into small atomic chunks on purpose.
    saved, forks[0] = forks[0], 0
    yield
    forks[0] = saved


MARKER = "\n...(truncated at 1000000 characters)"


def test_the_frame_ceiling_is_the_documented_value():
    assert protocol.MAX_FRAME_BYTES == 6 * 3 * 1_000_000 + 2_000_000 == 20_000_000


def test_a_bounded_buffer_keeps_the_head_and_reports_handed_in_length():
    buffer = BoundedBuffer(limit=10)
    assert buffer.write("12345678") == 8
    assert buffer.write("abcdef") == 6
    assert buffer.write("more") == 4
    assert buffer.captured() == "12345678ab" + MARKER
    assert buffer.getvalue() == "12345678ab"


def test_a_bounded_buffer_rejects_non_text_like_stringio():
    buffer = BoundedBuffer()
    try:
        buffer.write(b"bytes")
    except TypeError:
        pass
    else:
        raise AssertionError("bytes accepted")


def test_cap_text():
    assert cap_text("short") == "short"
    assert cap_text("x" * 1_000_001) == "x" * 1_000_000 + MARKER


def _collector():
    frames = []
    return frames, lambda line: frames.append(json.loads(line))


def test_streaming_splits_into_chunks_and_stops_with_one_marker():
    frames, write_line = _collector()
    out = StreamingStdout("cell", write_line)
    out.write("a" * 150_000)
    assert [len(frame["text"]) for frame in frames] == [64_000, 64_000, 22_000]
    assert all(set(frame) == {"type", "id", "stream", "seq", "text"} for frame in frames)
    assert [frame["seq"] for frame in frames] == [0, 1, 2]
    assert all(frame["type"] == "stdout_chunk" and frame["id"] == "cell" for frame in frames)
    out.write("b" * 900_000)
    out.write("c" * 10)
    texts = [frame["text"] for frame in frames]
    assert sum(len(text) for text in texts if text != MARKER) == 1_000_000
    assert texts.count(MARKER) == 1 and texts[-1] == MARKER
    assert out.captured().endswith(MARKER)


def test_nothing_empty_is_streamed():
    frames, write_line = _collector()
    out = StreamingStdout("cell", write_line)
    assert out.write("") == 0
    assert frames == []


def test_an_oversized_response_is_replaced_not_truncated():
    huge = {
        "type": "response",
        "id": "cell-9",
        "stdout": "\x01" * 4_000_000,
        "stderr": "",
        "error": None,
        "interrupted": True,
    }
    line = protocol.encode_frame(huge)
    assert line.endswith("\n") and line.count("\n") == 1
    assert json.loads(line) == {
        "type": "response",
        "id": "cell-9",
        "stdout": "",
        "stderr": "",
        "error": "kernel dropped an oversized 'response' frame (>20000000 bytes)",
        "interrupted": True,
    }


def test_any_other_oversized_frame_becomes_a_log():
    line = protocol.encode_frame({"type": "stdout_chunk", "text": "\x01" * 4_000_000})
    assert json.loads(line) == {
        "type": "log",
        "msg": "kernel dropped an oversized 'stdout_chunk' frame (>20000000 bytes)",
    }


def test_chunk_lines_escape_what_json_must():
    lines = []
    StreamingStdout(7, lines.append).write('q"\\\n\x00é')
    assert lines == [
        '{"type":"stdout_chunk","id":7,"stream":0,"seq":0,"text":"q\\"\\\\\\n\\u0000é"}\n'.encode()
    ]
    assert json.loads(lines[0])["text"] == 'q"\\\n\x00é'


def test_frames_are_compact_raw_utf8_and_refuse_nan():
    assert protocol.encode_frame({"t": "é"}) == '{"t":"é"}\n'
    try:
        protocol.encode_frame({"x": float("nan")})
    except ValueError:
        pass
    else:
        raise AssertionError("NaN is not JSON")


def _rebuilt(out, lines):
    """What the host makes of a StreamingStdout's frames and response."""
    from worker_harness import as_the_host_finalises

    text, declaration, _ = out.response_text()
    response = {"id": "cell", "stdout": text}
    if declaration is not None:
        response["stdout_stream"] = declaration
    return as_the_host_finalises(response, [json.loads(line) for line in lines])["stdout"]


def _rebuilt_with(declaration, lines):
    from worker_harness import as_the_host_finalises

    response = {"id": "cell", "stdout": "", "stdout_stream": declaration}
    return as_the_host_finalises(response, [json.loads(line) for line in lines])["stdout"]


def test_streamed_stdout_is_not_sent_twice():
    lines = []
    out = StreamingStdout("cell", lines.append, stream=7)
    for part in ("a" * 70_000, "é\n", "🙂"):
        out.write(part)
    text, declaration, captured = out.response_text()
    assert text == "" and captured == out.captured()
    assert declaration == {"stream": 7, "chunks": 4, "head_trim": 0}
    assert _rebuilt(out, lines) == out.captured()
    assert [json.loads(line)["seq"] for line in lines] == [0, 1, 2, 3]


def test_a_truncated_stream_is_rebuilt_from_its_chunks():
    lines = []
    out = StreamingStdout("cell", lines.append)
    out.write("x" * 1_000_000)
    out.write("more")
    assert out.response_text()[0] == ""
    assert _rebuilt(out, lines) == out.captured()
    assert out.captured().endswith("(truncated at 1000000 characters)")


def test_after_a_spill_the_host_is_told_how_much_head_to_cut(tmp_path):
    from openai4s.kernel.runtime.spill import SpillFile

    lines = []
    out = StreamingStdout("cell", lines.append, SpillFile(str(tmp_path), "cell", "stdout"))
    out.write("é" * 999_990)
    out.write("z" * 50)
    text, declaration, _ = out.response_text()
    assert text == "" and declaration["head_trim"] > 0
    assert _rebuilt(out, lines) == out.captured()
    assert len(out.captured()) <= 1_000_064
    out.end_spill()
    out.finish_spill()


def test_nothing_streamed_sends_stdout_as_is():
    out = StreamingStdout("cell", lambda line: None)
    assert out.response_text() == ("", None, "")


def test_a_write_cut_short_sends_stdout_in_full():
    lines = []

    def interrupted_once(line):
        if len(lines) == 1:
            lines.append(None)
            raise KeyboardInterrupt
        lines.append(line)

    out = StreamingStdout("cell", interrupted_once)
    out.write("first ")
    with pytest.raises(KeyboardInterrupt):
        out.write("y" * 200_000)  # several chunks; the stop lands after one
    assert out.response_text() == (out.captured(), None, out.captured())


def test_overlapping_writes_send_stdout_in_full():
    lines = []
    out = StreamingStdout("cell", lambda line: (lines.append(line), reenter()))
    entered = []

    def reenter():
        # A write arriving while another is still streaming (as a second
        # thread's would): the two copies could order them differently.
        if not entered:
            entered.append(True)
            out.write("inner")

    out.write("outer")
    assert out.response_text()[:2] == (out.captured(), None)


def test_a_write_in_flight_when_the_response_is_built_sends_stdout_in_full():
    out = StreamingStdout("cell", lambda line: None)
    out.write("before\n")
    out._writing.acquire()  # another thread is mid-write
    try:
        assert out.response_text()[:2] == (out.captured(), None)
    finally:
        out._writing.release()


def test_rewinding_the_buffer_sends_stdout_in_full():
    out = StreamingStdout("cell", lambda line: None)
    out.write("hello world\n")
    out.seek(0)
    out.truncate()
    out.write("X\n")
    assert out.captured() == "X\n"
    assert out.response_text()[:2] == ("X\n", None)


def test_writes_after_the_response_stream_beyond_the_declared_count():
    lines = []
    out = StreamingStdout("cell", lines.append)
    out.write("in the cell\n")
    _, declaration, _ = out.response_text()
    out.write("a thread, later\n")  # still streamed under the old id (spec)
    assert declaration["chunks"] == 1
    assert [json.loads(line)["seq"] for line in lines] == [0, 1]
    assert _rebuilt_with(declaration, lines) == "in the cell\n"


def test_a_str_subclass_is_chunked_by_its_real_length():
    class Liar(str):
        def __len__(self):
            return 1

    lines = []
    out = StreamingStdout("cell", lines.append)
    out.write(Liar("z" * 150_000))
    assert [len(json.loads(line)["text"]) for line in lines] == [64_000, 64_000, 22_000]
