"""The worker's protocol reader: lines from raw reads, a brief poll before
sleeping, and the failure modes the channel's recovery relies on."""

import os
import threading
import time

import pytest

from openai4s.kernel.runtime import channel
from openai4s.kernel.runtime.channel import LineIn


@pytest.fixture
def pipe():
    read_end, write_end = os.pipe()
    yield LineIn(read_end), write_end
    for fd in (read_end, write_end):
        try:
            os.close(fd)
        except OSError:
            pass


def test_lines_split_and_joined_across_reads(pipe):
    reader, writer = pipe
    os.write(writer, b'{"a":1}\n{"b"')
    assert reader.readline() == '{"a":1}\n'
    os.write(writer, b':2}\n\n{"c":3}\n')
    assert reader.readline() == '{"b":2}\n'
    assert reader.readline() == "\n"
    assert reader.readline() == '{"c":3}\n'


def test_end_of_stream_returns_the_unterminated_rest_then_empty(pipe):
    reader, writer = pipe
    os.write(writer, b"tail without newline")
    os.close(writer)
    assert reader.readline() == "tail without newline"
    assert reader.readline() == ""
    assert reader.readline() == ""


def test_undecodable_bytes_become_replacement_characters(pipe):
    reader, writer = pipe
    os.write(writer, b'{"t":"\xff\xfe"}\n' + "é✓\n".encode())
    assert reader.readline() == '{"t":"\ufffd\ufffd"}\n'
    assert reader.readline() == "é✓\n"


def test_a_multibyte_character_split_between_reads_survives(pipe):
    reader, writer = pipe
    data = "x✓y\n".encode()
    os.write(writer, data[:2])
    done = threading.Thread(target=lambda: (time.sleep(0.05), os.write(writer, data[2:])))
    done.start()
    assert reader.readline() == "x✓y\n"
    done.join()


def test_a_frame_of_megabytes_is_read_whole(pipe):
    reader, writer = pipe
    frame = b'{"data":"' + b"z" * 5_000_000 + b'"}\n'
    feeder = threading.Thread(target=lambda: os.write(writer, frame) and os.close(writer))
    feeder.start()
    assert reader.readline() == frame.decode()
    feeder.join()
    assert reader.readline() == ""


def test_a_wait_past_the_poll_sleeps_instead_of_spinning(pipe):
    reader, writer = pipe
    late = threading.Thread(target=lambda: (time.sleep(0.2), os.write(writer, b"late\n")))
    late.start()
    cpu = time.process_time()
    assert reader.readline() == "late\n"
    late.join()
    # 200 ms of waiting; the poll lasts channel.SPIN_SECONDS (100 us).
    assert time.process_time() - cpu < 0.1


def test_closed_reader_raises_like_a_closed_file(pipe):
    reader, _ = pipe
    reader.close()
    with pytest.raises(ValueError):
        reader.readline()
    with pytest.raises(ValueError):
        reader.fileno()
    reader.close()  # idempotent


def test_a_descriptor_closed_underneath_is_an_os_error(pipe):
    reader, _ = pipe
    os.close(reader.fileno())
    with pytest.raises(OSError):
        reader.readline()


def test_dropping_a_reader_never_closes_its_descriptor(pipe):
    reader, writer = pipe
    fd = reader.fileno()
    del reader
    os.write(writer, b"still open\n")
    assert os.read(fd, 100) == b"still open\n"


def test_the_wrapper_used_for_protocol_in_is_this_reader():
    read_end, write_end = os.pipe()
    try:
        assert isinstance(channel._wrap_in(read_end), LineIn)
    finally:
        os.close(read_end)
        os.close(write_end)
