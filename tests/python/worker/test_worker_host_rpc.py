"""The worker's side of ``host_call``: wire shape, errors, caps, recovery."""

import re

import pytest

from worker_harness import echo_dispatcher


def _calls(frames):
    return [frame for frame in frames if frame["type"] == "host_call"]


def test_a_call_round_trips_with_a_wire_id(worker):
    response, frames = worker.execute("print(host._call('ping', []))", on_host_call=echo_dispatcher)
    assert response["stdout"] == "pong\n"
    (call,) = _calls(frames)
    assert re.fullmatch(r"hc-\d+-\d+", call["id"])
    assert call["method"] == "ping" and call["args"] == []


def test_dict_arguments_are_camel_cased_without_none(worker):
    seen = []

    def dispatcher(method, args):
        seen.append(args)
        return None

    worker.execute(
        "host._call('x', [{'nums': [1], 'a_b_c': 1, 'drop_me': None, 'nested': {'k_v': 1}}, "
        "'plain', [ {'in_list': 1} ]])",
        on_host_call=dispatcher,
    )
    assert seen == [[{"nums": [1], "aBC": 1, "nested": {"k_v": 1}}, "plain", [{"in_list": 1}]]]


def test_errors_and_soft_errors_raise_runtime_error_in_the_cell(worker):
    code = (
        "for method in ('nope', 'soft'):\n"
        "    try:\n"
        "        host._call(method, [])\n"
        "    except RuntimeError as e:\n"
        "        print(e)\n"
    )

    def answer(method, args):
        # The harness turns a raised error into the host_response error field,
        # as the manager does for exceptions and single-key error dicts alike.
        if method == "soft":
            raise RuntimeError("soft failure from host")
        return echo_dispatcher(method, args)

    response, _ = worker.execute(code, on_host_call=answer)
    assert response["stdout"].splitlines() == [
        "host.nope error: unknown method nope",
        "host.soft error: soft failure from host",
    ]


def test_null_and_absent_data_are_none(worker):
    code = "print(host._call('a', []) is None, host._call('b', []) is None)"

    def reply(frame):
        body = {"type": "host_response", "id": frame["id"]}
        if frame["method"] == "a":
            body["data"] = None
        worker.send(body)

    worker.send({"type": "execute", "id": "n", "code": code})
    response, _ = worker.collect(on_frame=lambda f: f["type"] == "host_call" and reply(f))
    assert response["stdout"] == "True True\n"


def test_an_oversized_call_is_refused_before_anything_is_written(worker):
    code = (
        "big = 'x' * 15_000_001\n"
        "try:\n"
        "    host._call('ping', [big])\n"
        "except ValueError as e:\n"
        "    print(e)\n"
        "print(host._call('ping', []))"
    )
    response, frames = worker.execute(code, on_host_call=echo_dispatcher)
    first, second = response["stdout"].splitlines()
    assert re.fullmatch(
        r"host call 'ping' payload is \d+ bytes, exceeding the 15MB wire cap "
        r"\(the host rejects oversized frames\)",
        first,
    )
    assert second == "pong"
    assert len(_calls(frames)) == 1


def test_an_ack_and_eight_discards_are_survived(worker):
    def noisy(frame):
        worker.send({"type": "host_ack", "id": frame["id"]})
        for i in range(6):
            worker.send({"type": "host_response", "id": f"stale-{i}", "data": "old"})
        worker.send_raw("this line is not json\n")
        worker.send([1, 2, 3])
        worker.answer(frame, echo_dispatcher)

    worker.send({"type": "execute", "id": "n", "code": "print(host._call('ping', []))"})
    response, _ = worker.collect(on_frame=lambda f: f["type"] == "host_call" and noisy(f))
    assert response["stdout"] == "pong\n"


def test_a_ninth_discard_is_a_desync_and_the_next_call_is_aligned(worker):
    def flood(frame):
        worker.send_raw("\n")  # a blank line counts too
        for i in range(8):
            worker.send({"type": "host_response", "id": f"stale-{i}", "data": None})

    code = "try:\n    host._call('ping', [])\nexcept RuntimeError as e:\n    print(e)"
    worker.send({"type": "execute", "id": "d", "code": code})
    response, _ = worker.collect(on_frame=lambda f: f["type"] == "host_call" and flood(f))
    assert response["stdout"] == "host.ping: protocol desync, too many out-of-order frames\n"
    response, _ = worker.execute("print(host._call('ping', []))", on_host_call=echo_dispatcher)
    assert response["stdout"] == "pong\n"


def test_end_of_stream_during_a_call_is_reported_then_the_worker_exits(worker):
    code = "try:\n    host._call('ping', [])\nexcept RuntimeError as e:\n    print(e)"
    worker.send({"type": "execute", "id": "eof", "code": code})
    frame = worker.read()
    assert frame["type"] == "host_call"
    worker.proc.stdin.close()
    response, _ = worker.collect()
    assert response["stdout"] == "host channel closed during host_call\n"
    assert worker.read() is None


def test_artifact_calls_carry_the_cell_identity(worker):
    calls = []

    def dispatcher(method, args):
        calls.append((method, args))
        return {"ok": True}

    worker.execute(
        "print(host.save_artifact('result.csv')['ok'])",
        cell_id="cell-artifact",
        on_host_call=dispatcher,
    )
    worker.execute(
        "host.save_artifact('result.csv', producing_cell_id='manual-cell')\n"
        "host.materialise_artifact('v-1', filename='x.csv')\n"
        "host._call('materialise_artifact', [{'producing_cell_id': 'raw'}])\n"
        "host._call('other', [{'path': 'p'}])",
        cell_id="cell-other",
        on_host_call=dispatcher,
    )
    assert calls == [
        (
            "save_artifact",
            [
                {
                    "path": "result.csv",
                    "inputVersionIds": [],
                    "priority": 0,
                    "executionCellId": "cell-artifact",
                    "producingCellId": "cell-artifact",
                }
            ],
        ),
        (
            "save_artifact",
            [
                {
                    "path": "result.csv",
                    "inputVersionIds": [],
                    "producingCellId": "manual-cell",
                    "priority": 0,
                    "executionCellId": "cell-other",
                }
            ],
        ),
        (
            "materialise_artifact",
            [
                {
                    "versionId": "v-1",
                    "filename": "x.csv",
                    "executionCellId": "cell-other",
                    "producingCellId": "cell-other",
                }
            ],
        ),
        (
            "materialise_artifact",
            [{"producingCellId": "raw", "executionCellId": "cell-other"}],
        ),
        ("other", [{"path": "p"}]),
    ]


@pytest.mark.parametrize("mode", ["python", "analysis", "r", "R"])
def test_analysis_kernels_have_no_control_plane(spawn, mode):
    worker = spawn(mode=mode)
    code = (
        "for name in ('frames', 'query', 'mcp', 'delegate', 'children', 'collect',\n"
        "             'stop_child', 'send_message', 'delegation_stats', 'compute'):\n"
        "    try:\n"
        "        getattr(host, name)\n"
        "    except AttributeError as e:\n"
        "        print(e)\n"
        "print(hasattr(host, 'save_artifact'), openai4s is host)"
    )
    lines = worker.execute(code)[0]["stdout"].splitlines()
    assert lines[0] == "'_Host' object has no attribute 'frames' (not available in this kernel)"
    assert len(lines) == 11 and lines[-1] == "True True"


def test_a_repl_kernel_has_the_control_plane(worker):
    seen = []
    worker.execute(
        "host.frames(pattern='x')\nhost.query('select 1')\nhost.collect('child-1')",
        on_host_call=lambda method, args: seen.append((method, args)),
    )
    assert seen == [
        (
            "frames",
            [
                {
                    "pattern": "x",
                    "projectId": "default",
                    "rootsOnly": True,
                    "page": 0,
                    "pageSize": 50,
                    "limit": 50,
                }
            ],
        ),
        ("query", [{"sql": "select 1", "params": [], "df": False, "scope": "project"}]),
        ("collect", [{"childIds": ["child-1"]}]),
    ]


def test_a_jupyter_kernel_has_no_host_at_all(spawn):
    worker = spawn(mode="jupyter")
    response, frames = worker.execute("print('host' in globals(), 'openai4s' in globals())")
    assert response["stdout"] == "False False\n"
    assert not _calls(frames)


def test_an_unknown_mode_logs_and_runs_without_host(spawn):
    worker = spawn(mode="weird")
    response, frames = worker.execute("print('host' in globals())")
    assert response["stdout"] == "False\n"
    assert {
        "type": "log",
        "msg": "host sdk unavailable: build_host: unknown kernel mode 'weird'",
    } in frames
    assert not [f for f in worker.execute("pass")[1] if f["type"] == "log"]  # said once


def test_a_deleted_host_is_reinstalled_next_cell(worker):
    worker.execute("del host")
    assert worker.execute("print(type(host).__name__)")[0]["stdout"] == "_ControlPlaneHost\n"


def test_the_mode_is_captured_once(worker):
    worker.execute("import os\nos.environ['OPENAI4S_KERNEL_MODE'] = 'jupyter'\ndel host")
    assert worker.execute("print('host' in globals())")[0]["stdout"] == "True\n"


def test_a_thread_calling_the_host_between_cells_waits_for_the_next_cell(worker):
    worker.execute(
        "import threading, time\nresults = []\n"
        "def later():\n    time.sleep(0.3); results.append(host._call('ping', []))\n"
        "threading.Thread(target=later).start()"
    )
    import time

    time.sleep(0.6)  # the thread is now blocked, not reading our frames
    response, frames = worker.execute(
        "import time\nfor _ in range(1000):\n    if results:\n        break\n"
        "    time.sleep(0.01)\nprint(results)",
        on_host_call=echo_dispatcher,
    )
    assert response["stdout"] == "['pong']\n"
    assert len(_calls(frames)) == 1
    assert worker.inspect()["variables"]


def test_a_thread_call_straddling_the_end_of_its_cell_does_not_eat_the_next_request(worker):
    worker.send(
        {
            "type": "execute",
            "id": "a",
            "code": "import threading\nresults = []\n"
            "threading.Thread(target=lambda: results.append(host._call('ping', []))).start()",
        }
    )
    response, frames = worker.collect()  # the call is not answered during its Cell
    pending = _calls(frames) or [worker.read()]
    assert pending[0]["type"] == "host_call"
    worker.send({"type": "execute", "id": "b", "code": "print('b ran')"})
    worker.answer(pending[0], echo_dispatcher)
    response, _ = worker.collect()
    assert response["id"] == "b" and response["stdout"] == "b ran\n"
    assert worker.execute("print(results)")[0]["stdout"] == "['pong']\n"
