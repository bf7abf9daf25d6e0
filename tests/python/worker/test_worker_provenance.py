"""Provenance: object-level lineage from what a Cell read to what it wrote."""

import importlib.util
import os
import time

import pytest

from worker_harness import echo_dispatcher, worker_env

from openai4s.kernel.runtime import provenance

needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed"
)
needs_numpy = pytest.mark.skipif(
    importlib.util.find_spec("numpy") is None, reason="numpy is not installed"
)


class LineageHost:
    """Knows a version id per absolute path; records what the worker asks."""

    def __init__(self, versions=None):
        self.versions = {os.path.realpath(path): vid for path, vid in (versions or {}).items()}
        self.resolved = []
        self.records = []

    def __call__(self, method, args):
        if method == "prov_resolve_path":
            self.resolved.append(args[0])
            return self.versions.get(args[0])
        if method == "prov_record":
            self.records.append(args[0])
            return {"ok": True}
        return echo_dispatcher(method, args)


def test_tags_live_on_the_object_or_in_the_side_table():
    class Plain:
        pass

    obj = Plain()
    assert provenance.set_tags(obj, {"v1"}) is obj
    assert provenance.get_tags(obj) == frozenset({"v1"})
    number = 10**30
    provenance.set_tags(number, ["v2"])
    assert provenance.get_tags(number) == frozenset({"v2"})
    assert provenance.get_tags(10**30 + 0) == frozenset()  # another object, same value
    assert provenance.merge_tags(obj, number, object()) == frozenset({"v1", "v2"})
    empty = Plain()
    provenance.set_tags(empty, [])
    assert not hasattr(empty, "_openai4s_src")
    assert provenance.PROVENANCE_VERSION == "1"


def test_written_data_reports_the_version_it_was_read_from(worker, tmp_path):
    (tmp_path / "input.csv").write_text("a,b\n1,2\n")
    host = LineageHost({tmp_path / "input.csv": "v-in"})
    response, _ = worker.execute(
        "data = open('input.csv').read()\n"
        "with open('out.csv', 'w') as out:\n"
        "    out.write(data)\n",
        cell_id="cell-lineage",
        on_host_call=host,
    )
    assert response["error"] is None
    assert host.records == [
        {
            "path": str((tmp_path / "out.csv").resolve()),
            "filename": "out.csv",
            "input_version_ids": ["v-in"],
            "producing_cell_id": "cell-lineage",
        }
    ]
    assert host.resolved == [str((tmp_path / "input.csv").resolve())]


def test_reading_alone_asks_the_host_nothing(worker, tmp_path):
    for i in range(50):
        (tmp_path / f"f{i}.txt").write_text(str(i))
    host = LineageHost()
    response, frames = worker.execute(
        "for i in range(50):\n    open(f'f{i}.txt').read()\n", on_host_call=host
    )
    assert response["error"] is None
    assert not [frame for frame in frames if frame["type"] == "host_call"]


def test_a_source_changed_since_it_was_read_is_dropped_not_misattributed(worker, tmp_path):
    (tmp_path / "input.txt").write_text("first")
    host = LineageHost({tmp_path / "input.txt": "v-new"})
    worker.execute(
        "data = open('input.txt').read()\n"
        "open('input.txt', 'w').write('second, longer')\n"
        "open('out.txt', 'w').write(data)\n",
        on_host_call=host,
    )
    assert host.records == []


def test_tagged_files_are_real_io_objects(worker, tmp_path):
    (tmp_path / "lines.txt").write_text("one\ntwo\n")
    host = LineageHost({tmp_path / "lines.txt": "v-lines"})
    code = (
        "import io\n"
        "from openai4s.kernel import provenance\n"
        "f = open('lines.txt')\n"
        "b = open('lines.txt', 'rb')\n"
        "print(isinstance(f, io.TextIOWrapper), isinstance(b, io.BufferedReader), f.mode, b.mode)\n"
        "lines = list(f)\n"
        "print(lines, provenance.get_tags(lines[1]), provenance.get_tags(b.read(3)))\n"
        "f.seek(0)\n"
        "print(provenance.get_tags(f.readline()), f.readlines())\n"
        "f.close(); b.close()\n"
        "with open('lines.txt', encoding='utf-8', newline='') as g:\n"
        "    print(repr(g.read()))\n"
    )
    response, _ = worker.execute(code, on_host_call=host)
    assert response["error"] is None, response["error"]
    assert response["stdout"].splitlines() == [
        "True True r rb",
        "['one\\n', 'two\\n'] frozenset({'v-lines'}) frozenset({'v-lines'})",
        "frozenset({'v-lines'}) ['two\\n']",
        "'one\\ntwo\\n'",
    ]


def test_json_results_inherit_their_source(worker, tmp_path):
    (tmp_path / "in.json").write_text('{"a": [1, 2]}')
    host = LineageHost({tmp_path / "in.json": "v-json"})
    response, _ = worker.execute(
        "import json\nfrom openai4s.kernel import provenance\n"
        "d = json.load(open('in.json'))\nprint(d, provenance.get_tags(d))",
        on_host_call=host,
    )
    assert response["stdout"] == "{'a': [1, 2]} frozenset({'v-json'})\n"


def test_opens_between_cells_are_the_plain_builtin(worker, tmp_path):
    (tmp_path / "x.txt").write_text("x")
    worker.execute(
        "import threading, time\nfrom openai4s.kernel.runtime import provenance_tags\nseen = []\n"
        "def later():\n"
        "    while provenance_tags.cell_active[0]:\n"
        "        time.sleep(0.001)\n"
        "    seen.append(type(open('x.txt')).__name__)\n"
        "thread = threading.Thread(target=later)\nthread.start()"
    )
    time.sleep(0.3)  # between Cells: the thread opens now
    response, _ = worker.execute("thread.join(5)\nprint(seen, type(open('x.txt')).__name__)")
    assert response["stdout"] == "['TextIOWrapper'] _TaggedText\n"


def test_provenance_off_is_a_pass_through(spawn, tmp_path):
    worker = spawn(env=worker_env(tmp_path, OPENAI4S_PROVENANCE_OFF="1"))
    (tmp_path / "input.txt").write_text("x")
    host = LineageHost({tmp_path / "input.txt": "v-in"})
    response, frames = worker.execute(
        "d = open('input.txt').read()\nprint(type(d).__name__)\nopen('o.txt', 'w').write(d);",
        on_host_call=host,
    )
    assert response["stdout"] == "str\n"
    assert not [frame for frame in frames if frame["type"] == "host_call"]


def test_a_jupyter_kernel_installs_no_provenance(spawn, tmp_path):
    worker = spawn(mode="jupyter")
    response, _ = worker.execute("import builtins, io\nprint(builtins.open is io.open)")
    assert response["stdout"] == "True\n"


@needs_numpy
def test_numpy_save_reports_what_load_read(worker, tmp_path):
    import numpy

    numpy.save(tmp_path / "in.npy", numpy.arange(3))
    host = LineageHost({tmp_path / "in.npy": "v-array"})
    response, _ = worker.execute(
        "import numpy as np\na = np.load('in.npy')\nnp.save('out', a)", on_host_call=host
    )
    assert response["error"] is None
    assert [(r["filename"], r["input_version_ids"]) for r in host.records] == [
        ("out.npy", ["v-array"])
    ]


TAGGED_FIGURE_SAVE = (
    "from openai4s.kernel import provenance\n"
    "figure = plt.figure()\n"
    "provenance.set_tags(figure, frozenset({'input-version'}))\n"
    "figure.savefig('figure.png')\n"
    "plt.close(figure)\n"
)
IMPORT_PYPLOT = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"


@needs_matplotlib
@pytest.mark.parametrize("same_cell", [True, False], ids=["same-cell", "later-cell"])
def test_figure_savefig_lineage(worker, tmp_path, same_cell):
    host = LineageHost()
    worker.execute("x = 1", on_host_call=host)
    if same_cell:
        response, _ = worker.execute(
            IMPORT_PYPLOT + TAGGED_FIGURE_SAVE, cell_id="fig", on_host_call=host
        )
    else:
        worker.execute(IMPORT_PYPLOT, on_host_call=host)
        response, _ = worker.execute(TAGGED_FIGURE_SAVE, cell_id="fig", on_host_call=host)
    assert response["error"] is None
    assert (tmp_path / "figure.png").is_file()
    assert host.records == [
        {
            "path": str((tmp_path / "figure.png").resolve()),
            "filename": "figure.png",
            "input_version_ids": ["input-version"],
            "producing_cell_id": "fig",
        }
    ]
    # The module looks normally imported: its loader is the real one again.
    response, _ = worker.execute(
        "import matplotlib.figure as mf\nprint(type(mf.__loader__).__name__, "
        "type(mf.__spec__.loader).__name__)"
    )
    assert response["stdout"] == "SourceFileLoader SourceFileLoader\n"
