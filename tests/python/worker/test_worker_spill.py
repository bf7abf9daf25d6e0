"""Output over the cap is not lost: it is spilled, whole, to a workspace file."""

import os
from pathlib import Path

from openai4s.kernel.capture import BoundedBuffer, StreamingStdout
from openai4s.kernel.spill import SPILL_DIR, SpillFile, safe_name

from test_worker_cells import RESPONSE_KEYS


def test_a_normal_cell_creates_no_file_and_no_key(worker):
    response, _ = worker.execute("print('x' * 1000)", cell_id="cell-small")
    assert set(response) == RESPONSE_KEYS
    assert not (Path(worker.cwd) / ".openai4s").exists()


def test_stdout_over_the_cap_goes_whole_to_the_named_file(worker):
    code = "import sys\nfor _ in range(300):\n    sys.stdout.write('0123456789' * 1000)\n"
    response, frames = worker.execute(code, cell_id="cell-flood")
    assert set(response) == RESPONSE_KEYS | {"stdout_file"}
    path = response["stdout_file"]
    assert path == f"{SPILL_DIR}/cell-flood.stdout.txt"
    spilled = (Path(worker.cwd) / path).read_text()
    assert spilled == "0123456789" * 300_000
    marker = f"\n...(truncated at 1000000 characters; full output in {path})"
    assert response["stdout"].endswith(marker)
    assert len(response["stdout"]) <= 1_000_064
    streamed = [frame["text"] for frame in frames if frame["type"] == "stdout_chunk"]
    assert streamed[-1] == marker


def test_stderr_over_the_cap_is_spilled_too(worker):
    code = "import sys\nsys.stderr.write('é' * 1_500_000)\nprint('ok')"
    response, _ = worker.execute(code, cell_id="cell-err")
    assert "stdout_file" not in response
    assert response["stdout"] == "ok\n"
    path = response["stderr_file"]
    assert (Path(worker.cwd) / path).read_text(encoding="utf-8") == "é" * 1_500_000
    assert path in response["stderr"]


def test_a_spill_works_after_the_cell_changes_directory(worker, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = f"import os\nos.chdir({str(elsewhere)!r})\nprint('z' * 1_000_001)"
    response, _ = worker.execute(code, cell_id="cell-cd")
    assert (Path(worker.cwd) / response["stdout_file"]).stat().st_size == 1_000_002


def test_an_unwritable_workspace_keeps_the_plain_marker(tmp_path):
    root = tmp_path / "ro"
    root.mkdir()
    (root / ".openai4s").write_text("not a directory")
    out = BoundedBuffer(limit=10, spill=SpillFile(str(root), "c", "stderr"))
    out.write("x" * 20)
    out.end_spill()
    assert out.spill_path is None
    assert out.captured() == "x" * 10 + "\n...(truncated at 1000000 characters)"


def test_writes_after_the_cell_ended_are_dropped(tmp_path):
    frames = []
    out = StreamingStdout("c", frames.append, SpillFile(str(tmp_path), "c", "stdout"))
    out.write("a" * 1_000_005)
    out.end_spill()
    out.write("late")
    assert (tmp_path / out.spill_path).read_text() == "a" * 1_000_005


def test_exactly_the_cap_is_not_truncated(tmp_path):
    frames = []
    out = StreamingStdout("c", frames.append, SpillFile(str(tmp_path), "c", "stdout"))
    out.write("a" * 1_000_000)
    assert out.captured() == "a" * 1_000_000
    assert not os.path.exists(tmp_path / SPILL_DIR)
    assert all("truncated" not in line for line in frames)


def test_safe_names_are_plain_and_distinct():
    assert safe_name("cell-1") == "cell-1"
    assert safe_name("a/b") != safe_name("a_b")
    assert "/" not in safe_name("../../etc/passwd")
    assert not safe_name("..").startswith(".")
    assert len(safe_name("x" * 500)) <= 64 + 13


def test_a_spill_file_is_bounded(tmp_path):
    spill = SpillFile(str(tmp_path), "c", "stdout")
    spill._limit = 100
    out = BoundedBuffer(limit=10, spill=spill)
    for _ in range(50):
        out.write("y" * 7)
    out.end_spill()
    text = (tmp_path / out.spill_path).read_text()
    assert text == "y" * 100 + "\n...(spill file truncated at 100 bytes)\n"


def test_old_spill_files_are_pruned(tmp_path, monkeypatch):
    from openai4s.kernel import spill as spill_mod

    monkeypatch.setattr(spill_mod, "MAX_SPILL_FILES", 3)
    outputs = tmp_path / SPILL_DIR
    outputs.mkdir(parents=True)
    for i in range(5):
        old = outputs / f"old{i}.stdout.txt"
        old.write_text("x")
        os.utime(old, ns=(i * 10**9, i * 10**9))
    (outputs / "notes.md").write_text("not a spill file")
    SpillFile(str(tmp_path), "new", "stdout").start("head")
    names = sorted(path.name for path in outputs.iterdir())
    assert names == ["new.stdout.txt", "notes.md", "old3.stdout.txt", "old4.stdout.txt"]
