"""The C fast path of the provenance open() gives exactly what the Python
wrapper gives, and hands everything else to it."""

import builtins
import io
import os
import pathlib

import pytest

from openai4s.kernel.runtime import provenance, provenance_files, provenance_tags

fast_open_module = pytest.importorskip(
    "openai4s.kernel._fast_open", reason="the worker extension is built by `make setup`"
)


@pytest.fixture
def opens(tmp_path, monkeypatch):
    """(python_open, fast_open) over one execution root, a Cell running."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "data.txt").write_text("héllo\nworld\n", encoding="utf-8")
    (root / "sub" / "inner.bin").write_bytes(b"\x00\x01binary")
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    monkeypatch.chdir(root)
    monkeypatch.setattr(provenance_tags.state, "root", str(root))
    off, active = [False], [True]
    python_open = provenance_files.make_open(
        builtins.open, lambda: off[0], active, accelerated=False
    )
    fast_open = provenance_files.make_open(builtins.open, lambda: off[0], active)
    assert type(fast_open).__name__ == "FastOpen"
    return python_open, fast_open, root, outside, off, active


def _outcome(opener, *args, **kwargs):
    """What one call produced, comparable across the two opens."""
    try:
        handle = opener(*args, **kwargs)
    except Exception as exc:
        return ("raised", type(exc), getattr(exc, "errno", None))
    try:
        data = handle.read()
        return (
            type(handle),
            getattr(handle, "mode", None),
            getattr(handle, "_openai4s_src", None),
            type(data),
            data,
            provenance.get_tags(data) if hasattr(data, "_openai4s_src") else None,
            getattr(data, "_openai4s_src", None),
        )
    finally:
        handle.close()


def _calls(root, outside):
    data = str(root / "data.txt")
    return [
        ("data.txt",),
        ("data.txt", "r"),
        ("data.txt", "rt"),
        ("data.txt", "rb"),
        ("sub/inner.bin", "rb"),
        ("./data.txt",),
        ("sub/../data.txt",),
        (data,),
        (data, "rb"),
        (str(root) + "//data.txt",),
        (str(root) + "/./data.txt",),
        (str(outside),),
        (str(outside), "rb"),
        (pathlib.Path("data.txt"),),
        (b"data.txt",),
        ("data.txt", "br"),
        ("data.txt", "tr"),
        ("missing.txt",),
        (str(root / "missing.txt"), "rb"),
        ("sub",),
        ("",),
        ("data.txt", "r", -1),
        ("data.txt", "r", 0),
    ]


def test_every_call_gives_what_the_python_wrapper_gives(opens):
    python_open, fast_open, root, outside, *_ = opens
    for call in _calls(root, outside):
        assert _outcome(fast_open, *call) == _outcome(python_open, *call), call


def test_keyword_calls_and_write_modes_go_to_the_python_wrapper(opens):
    python_open, fast_open, root, *_ = opens
    assert _outcome(fast_open, "data.txt", encoding="latin-1") == _outcome(
        python_open, "data.txt", encoding="latin-1"
    )
    with fast_open("written.txt", "w") as out:
        assert type(out).__name__ == "_WriteProxy"
        out.write("x")
    assert (root / "written.txt").read_text() == "x"


def test_between_cells_and_when_off_it_is_the_plain_builtin(opens):
    _, fast_open, _, _, off, active = opens
    active[0] = False
    with fast_open("data.txt") as handle:
        assert type(handle) is io.TextIOWrapper
    active[0] = True
    off[0] = True
    with fast_open("data.txt", "rb") as handle:
        assert type(handle) is io.BufferedReader


def test_a_failed_open_leaks_no_descriptor(opens):
    _, fast_open, *_ = opens
    before = set(os.listdir("/proc/self/fd"))
    for _ in range(50):
        with pytest.raises(IsADirectoryError):
            fast_open("sub")
        with pytest.raises(FileNotFoundError):
            fast_open("nope.txt", "rb")
    assert set(os.listdir("/proc/self/fd")) == before


def test_it_looks_like_open(opens):
    _, fast_open, *_ = opens
    assert fast_open.__name__ == "open"
    assert fast_open.__doc__ == builtins.open.__doc__
    assert fast_open._openai4s_wrapped is builtins.open


def test_a_worker_installs_the_fast_path(worker):
    response, _ = worker.execute("import builtins\nprint(type(builtins.open).__name__)")
    assert response["stdout"] == "FastOpen\n"


def test_the_common_calls_never_reach_the_python_wrapper(opens):
    python_open, _, root, outside, off, active = opens
    reached = []

    def counting(*args, **kwargs):
        reached.append(args)
        return python_open(*args, **kwargs)

    fast_open = fast_open_module.FastOpen(
        fallback=counting,
        real_open=builtins.open,
        is_off=lambda: off[0],
        active=active,
        state=provenance_tags.state,
        cwd_cache=[None],
        current_cwd=os.getcwd,
        text_class=provenance_files._TaggedText,
        reader_class=provenance_files._TaggedReader,
        file_io=io.FileIO,
        buffered_reader=io.BufferedReader,
        default_buffer=io.DEFAULT_BUFFER_SIZE,
    )
    for call in [("data.txt",), ("data.txt", "rt"), ("sub/inner.bin", "rb"), (str(outside),)]:
        assert _outcome(fast_open, *call) == _outcome(python_open, *call), call
    assert reached == []
    _outcome(fast_open, "data.txt", "r", 0)
    assert reached == [("data.txt", "r", 0)]


def test_tagged_reads_behave_like_the_python_ones(opens):
    _, fast_open, root, *_ = opens
    (root / "empty.txt").write_text("")
    python_text_read, python_bytes_read = provenance_files.python_reads
    assert isinstance(provenance_files._TaggedText.read, type(str.upper))  # the C one

    def reads(name, mode, read):
        out = []
        calls = [((3,), {}), ((), {"size": 2}), ((None,), {}), ((), {}), ((), {}), ((1, 2), {})]
        calls += [((), {"size": 1, "x": 1}), ((1,), {"size": 2}), ((), {"n": 1})]
        with fast_open(name, mode) as handle:
            for args, kwargs in calls:
                try:
                    data = read(handle, *args, **kwargs)
                except Exception as exc:
                    out.append(("raised", type(exc)))
                    continue
                out.append((type(data), data, getattr(data, "_openai4s_src", None)))
        return out

    for name, mode, python_read in [
        ("data.txt", "r", python_text_read),
        ("sub/inner.bin", "rb", python_bytes_read),
        ("empty.txt", "r", python_text_read),
    ]:
        c_read = type(fast_open(name, mode)).read
        assert reads(name, mode, c_read) == reads(name, mode, python_read), (name, mode)
    first = reads("data.txt", "r", python_text_read)[0]
    assert first[0] is provenance_tags.TaggedStr and first[2][1] == "data.txt"


def test_it_can_be_inspected_and_weakly_referenced(opens):
    import inspect
    import weakref

    python_open, fast_open, *_ = opens
    assert inspect.signature(fast_open) == inspect.signature(python_open)
    assert fast_open.__qualname__ == "open"
    reference = weakref.ref(fast_open)
    assert reference() is fast_open


def test_an_uninitialised_one_refuses_instead_of_crashing():
    bare = fast_open_module.FastOpen.__new__(fast_open_module.FastOpen)
    with pytest.raises(TypeError, match="not initialised"):
        bare("x")


def test_a_cell_poking_at_open_leaves_the_worker_alive(worker):
    response, _ = worker.execute(
        "try:\n"
        "    type(open).__new__(type(open))('x')\n"
        "except TypeError as exc:\n"
        "    print(exc)\n"
        "import inspect\nprint(list(inspect.signature(open).parameters)[:2])"
    )
    assert response["error"] is None, response["error"]
    assert response["stdout"] == "FastOpen object is not initialised\n['file', 'mode']\n"


def test_it_cannot_be_initialised_twice(opens):
    _, fast_open, *_ = opens
    with pytest.raises(TypeError, match="already initialised"):
        fast_open.__init__(
            fallback=print,
            real_open=print,
            is_off=print,
            active=[True],
            state=None,
            cwd_cache=[None],
            current_cwd=print,
            text_class=print,
            reader_class=print,
            file_io=print,
            buffered_reader=print,
            default_buffer=1,
        )
    assert fast_open._openai4s_wrapped is builtins.open
