"""The worker's one wire module (runtime/frames.py): its type table matches
src/proto/frame_types.h, the main loop dispatches every host->worker type
through one table, and the one request/reply wait (frames.Exchange) that
host calls and input() share applies one rule to whatever else arrives."""

import contextlib

import pytest

from frame_types_h import listed
from openai4s.kernel.runtime import frames
from openai4s.kernel.runtime.protocol import DISCARD_BUDGET
from openai4s.kernel.runtime.session import Session


def test_the_worker_names_the_headers_host_to_worker_types():
    assert frames.HOST_TO_WORKER == listed("kHostToWorker")
    assert frames.MAIN_LOOP_REQUESTS | frames.REPLIES | {"initialize"} == frames.HOST_TO_WORKER
    assert not frames.MAIN_LOOP_REQUESTS & frames.REPLIES


def test_the_main_loop_has_one_handler_per_host_to_worker_type():
    class Attributes:
        def __getattr__(self, name):
            return name

    assert set(Session.handlers(Attributes())) == listed("kHostToWorker")


class FakePipe:
    """The protocol primitives an Exchange uses, over a list of lines."""

    def __init__(self, *lines):
        self.incoming = list(lines)
        self.written = []
        self.deferred = []

    def exchange(self):
        return frames.Exchange(
            self.written.append, self.read_line, contextlib.nullcontext, self.deferred.append
        )

    def read_line(self):
        return self.incoming.pop(0) if self.incoming else ""


def ask(pipe, on_request=lambda: None):
    return pipe.exchange().request(
        '{"type":"host_call","id":"hc-1"}\n',
        "hc-1",
        lambda frame: frame.get("type") == "host_response",
        on_closed=lambda: EOFError("closed"),
        on_request=on_request,
        desync="desync",
    )


def test_the_reply_comes_back_after_acks_and_stale_frames():
    pipe = FakePipe(
        '{"type":"host_ack","id":"hc-1"}\n',
        '{"type":"host_response","id":"hc-0","data":"late"}\n',
        "not json\n",
        '{"type":"host_response","id":"hc-1","data":42}\n',
    )
    assert ask(pipe)["data"] == 42
    assert pipe.written == ['{"type":"host_call","id":"hc-1"}\n']


def test_one_frame_past_the_discard_budget_is_a_desync():
    stale = ['{"type":"host_response","id":"old","data":null}\n'] * DISCARD_BUDGET
    assert ask(FakePipe(*stale, '{"type":"host_response","id":"hc-1"}\n')) is not None
    with pytest.raises(RuntimeError, match="desync"):
        ask(FakePipe(*stale, "\f\n", '{"type":"host_response","id":"hc-1"}\n'))


@pytest.mark.parametrize("kind", sorted(frames.MAIN_LOOP_REQUESTS - {"interrupt"}))
def test_every_main_loop_request_goes_back_to_the_main_loop(kind):
    # A thread a Cell left running reads the host's next request (a fence
    # stdout_request, an is_complete, ...): it is the main loop's, never a
    # discarded frame, and the wait goes on.
    request = f'{{"type":"{kind}","id":"r-1"}}\n'
    pipe = FakePipe(request, '{"type":"host_response","id":"hc-1","data":1}\n')
    seen = []
    assert ask(pipe, on_request=lambda: seen.append(kind))["data"] == 1
    assert pipe.deferred == [request] and seen == [kind]


def test_an_interrupt_frame_goes_back_without_ending_the_wait():
    # It precedes the SIGINT for the Cell still waiting: the host has not
    # moved on, so on_request (which may end the wait) is not asked.
    request = '{"type":"interrupt","seq":3}\n'
    pipe = FakePipe(request, '{"type":"host_response","id":"hc-1","data":1}\n')

    def finished():
        raise LookupError("the cell has finished")

    assert ask(pipe, on_request=finished)["data"] == 1
    assert pipe.deferred == [request]


def test_on_request_may_end_the_wait():
    def finished():
        raise LookupError("the cell has finished")

    pipe = FakePipe('{"type":"execute","id":"c-2","code":""}\n')
    with pytest.raises(LookupError):
        ask(pipe, on_request=finished)
    assert len(pipe.deferred) == 1


def test_the_end_of_the_stream_ends_the_wait():
    with pytest.raises(EOFError):
        ask(FakePipe())
