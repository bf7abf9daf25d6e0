"""A front door names a cell by the number its client shows (Jupyter's
execution count): the execute frame's `cell_name` is the `<kernel:NAME>`
of its tracebacks; without one (or with one a traceback cannot show as
is) the worker numbers cells itself."""

import pytest


def _run(worker, code, name=None):
    frame = {"type": "execute", "id": "cell-named", "code": code, "origin": "agent"}
    if name is not None:
        frame["cell_name"] = name
    worker.send(frame)
    response, _ = worker.collect()
    return response


def test_a_named_cell_carries_its_name_in_tracebacks(worker):
    response = _run(worker, "def g():\n    raise KeyError('k')\n", name="7")
    assert response["error"] is None
    response = _run(worker, "g()", name="9")
    assert '"<kernel:7>", line 2' in response["error"]
    assert '"<kernel:9>", line 1' in response["error"]


@pytest.mark.parametrize("name", ["", "a b", "x>y", "9" * 40, 3, None])
def test_an_unusable_name_falls_back_to_the_workers_count(worker, name):
    _run(worker, "pass")
    response = _run(worker, "1 / 0", name=name)
    assert '"<kernel:2>"' in response["error"], response["error"]
