"""Output over the cap is not lost: it is spilled, whole, to a workspace file.

The file is written after the response is sent, under a ".part" name that is
renamed when complete: a following request always finds it whole.
"""

import os
import time
from pathlib import Path

from openai4s.kernel.runtime import spill as spill_mod
from openai4s.kernel.runtime.capture import BoundedBuffer, StreamingStdout
from openai4s.kernel.runtime.spill import SPILL_DIR, SpillFile, safe_name

from test_worker_cells import RESPONSE_KEYS

FLOOD = "import sys\nfor _ in range(300):\n    sys.stdout.write({char!r} * 10_000)\n"


def _settled(worker):
    """Sync with the worker: once it answers a request, the files of the Cells
    before it are complete."""
    response, _ = worker.execute("pass")
    assert response["error"] is None


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
    _settled(worker)
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
    _settled(worker)
    assert (Path(worker.cwd) / path).read_text(encoding="utf-8") == "é" * 1_500_000
    assert path in response["stderr"]


def test_a_spill_works_after_the_cell_changes_directory(worker, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = f"import os\nos.chdir({str(elsewhere)!r})\nprint('z' * 1_000_001)"
    response, _ = worker.execute(code, cell_id="cell-cd")
    _settled(worker)
    assert (Path(worker.cwd) / response["stdout_file"]).stat().st_size == 1_000_002


def test_an_unwritable_workspace_keeps_the_plain_marker(tmp_path):
    root = tmp_path / "ro"
    root.mkdir()
    (root / ".openai4s").write_text("not a directory")
    out = BoundedBuffer(limit=10, spill=SpillFile(str(root), "c", "stderr"))
    out.write("x" * 20)
    out.end_spill()
    out.finish_spill()
    assert out.spill_path is None
    assert out.captured() == "x" * 10 + "\n...(truncated at 1000000 characters)"


def test_writes_after_the_cell_ended_are_dropped(tmp_path):
    frames = []
    out = StreamingStdout("c", frames.append, SpillFile(str(tmp_path), "c", "stdout"))
    out.write("a" * 1_000_005)
    out.end_spill()
    out.write("late")
    out.finish_spill()
    out.write("later")
    assert (tmp_path / out.spill_path).read_text() == "a" * 1_000_005


def test_exactly_the_cap_is_not_truncated(tmp_path):
    frames = []
    out = StreamingStdout("c", frames.append, SpillFile(str(tmp_path), "c", "stdout"))
    out.write("a" * 1_000_000)
    assert out.captured() == "a" * 1_000_000
    assert not os.path.exists(tmp_path / SPILL_DIR)
    assert all(b"truncated" not in line for line in frames)


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
    out.finish_spill()
    text = (tmp_path / out.spill_path).read_text()
    assert text == "y" * 100 + "\n...(spill file truncated at 100 bytes)\n"


def test_old_spill_files_are_pruned(tmp_path, monkeypatch):
    monkeypatch.setattr(spill_mod, "MAX_SPILL_FILES", 3)
    outputs = tmp_path / SPILL_DIR
    outputs.mkdir(parents=True)
    # A killed worker's leftover ".part" is in the same pool.
    olds = ["old0.stdout.txt", "old1.stderr.txt.part", "old2.stdout.txt", "old3.stdout.txt"]
    olds.append("old4.stderr.txt.part")
    for i, name in enumerate(olds):
        (outputs / name).write_text("x")
        os.utime(outputs / name, ns=(i * 10**9, i * 10**9))
    (outputs / "notes.md").write_text("not a spill file")
    spill = SpillFile(str(tmp_path), "new", "stdout")
    spill.start("head")
    assert len(list(outputs.iterdir())) == 7  # pruning waits for finish
    spill.finish()
    names = sorted(path.name for path in outputs.iterdir())
    assert names == ["new.stdout.txt", "notes.md", "old3.stdout.txt", "old4.stderr.txt.part"]


def test_the_file_is_whole_or_absent_when_the_response_arrives(worker):
    response, _ = worker.execute(FLOOD.format(char="w"), cell_id="cell-race")
    final = Path(worker.cwd) / response["stdout_file"]
    whole = "w" * 3_000_000
    # The write follows the response: the name is absent or names it whole.
    assert not final.exists() or final.read_text() == whole
    # The next Cell already finds it whole, from inside the kernel.
    seen, _ = worker.execute(f"print(len(open({str(final)!r}).read()))")
    assert seen["stdout"] == "3000000\n"
    assert final.read_text() == whole
    assert sorted(path.name for path in final.parent.iterdir()) == [final.name]


def test_a_rerun_of_a_cell_id_replaces_its_file_whole(worker):
    worker.execute(FLOOD.format(char="a"), cell_id="cell-again")
    code = "print('b' * 1_500_000, end='')"
    response, _ = worker.execute(code, cell_id="cell-again")
    _settled(worker)
    final = Path(worker.cwd) / response["stdout_file"]
    assert final.read_text() == "b" * 1_500_000
    assert [path.name for path in final.parent.iterdir()] == [final.name]


def test_a_spill_at_shutdown_is_still_written_whole(worker):
    # The shutdown request is queued behind the Cell: no wait in between.
    worker.send({"type": "execute", "id": "cell-last", "code": FLOOD.format(char="s")})
    worker.send({"type": "shutdown"})
    response, _ = worker.collect()
    assert worker.proc.wait(timeout=10) == 0
    outputs = Path(worker.cwd) / SPILL_DIR
    assert (Path(worker.cwd) / response["stdout_file"]).read_text() == "s" * 3_000_000
    assert [path.name for path in outputs.iterdir()] == ["cell-last.stdout.txt"]


def test_past_the_pending_bound_the_overflow_is_written_during_the_cell(worker):
    # The Cell lowers the worker's bound, then checks the ".part" file grew
    # while it was still running.
    code = (
        "import os, sys\n"
        "from openai4s.kernel.runtime import spill\n"
        "spill.MAX_PENDING_CHARS = 100_000\n"
        "part = '.openai4s/outputs/cell-bp.stdout.txt.part'\n"
        "sizes = []\n"
        "for i in range(300):\n"
        "    sys.stdout.write(chr(97 + i % 26) * 9_999 + '\\n')\n"
        "    if i % 50 == 49 and i > 100:\n"
        "        sizes.append(os.path.getsize(part))\n"
        "spill.MAX_PENDING_CHARS = 32 * 1024 * 1024\n"
        "sys.stderr.write(repr(sizes));\n"
    )
    response, _ = worker.execute(code, cell_id="cell-bp")
    assert response["error"] is None
    sizes = eval(response["stderr"])
    assert len(sizes) == 4 and 0 < sizes[0] < sizes[-1] < 3_000_000
    _settled(worker)
    expected = "".join(chr(97 + i % 26) * 9_999 + "\n" for i in range(300))
    assert (Path(worker.cwd) / response["stdout_file"]).read_text() == expected


def test_the_pending_bound_leaves_the_file_exact(tmp_path, monkeypatch):
    monkeypatch.setattr(spill_mod, "MAX_PENDING_CHARS", 50)
    spill = SpillFile(str(tmp_path), "c", "stdout")
    out = BoundedBuffer(limit=10, spill=spill)
    pieces = [f"{i:03d}é" * 7 for i in range(100)]
    for piece in pieces:
        out.write(piece)
    part = tmp_path / (out.spill_path + spill_mod.PART_SUFFIX)
    assert part.stat().st_size > 0  # written before the Cell's end
    out.end_spill()
    out.finish_spill()
    out.finish_spill()  # idempotent
    assert (tmp_path / out.spill_path).read_text(encoding="utf-8") == "".join(pieces)
    assert not part.exists()


def test_many_tiny_writes_are_bounded_too(tmp_path, monkeypatch):
    monkeypatch.setattr(spill_mod, "MAX_PENDING_PIECES", 10)
    out = BoundedBuffer(limit=1, spill=SpillFile(str(tmp_path), "c", "stdout"))
    for i in range(100):
        out.write(str(i % 10))
    assert len(out._spill._pending) <= 11
    out.end_spill()
    out.finish_spill()
    expected = "".join(str(i % 10) for i in range(100))
    assert (tmp_path / out.spill_path).read_text() == expected


def test_a_full_disk_keeps_what_fit_and_never_raises(tmp_path, monkeypatch):
    spill = SpillFile(str(tmp_path), "c", "stderr")
    out = BoundedBuffer(limit=3, spill=spill)
    out.write("abcdef")

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill_mod.os, "write", full)
    out.end_spill()
    out.finish_spill()
    monkeypatch.undo()
    assert (tmp_path / out.spill_path).read_text() == ""
    assert out.spill_path in out.captured()


def test_another_kernel_s_spill_in_progress_is_never_pruned(tmp_path, monkeypatch):
    # Two kernels may share a workspace: a recent ".part" is someone's spill
    # still being written, however many newer files there are.
    monkeypatch.setattr(spill_mod, "MAX_SPILL_FILES", 2)
    outputs = tmp_path / SPILL_DIR
    outputs.mkdir(parents=True)
    in_progress = outputs / "other-kernel.stdout.txt.part"
    in_progress.write_text("being written")
    old = time.time_ns() - 2 * spill_mod.PART_GRACE_NS
    os.utime(in_progress, ns=(old + spill_mod.PART_GRACE_NS * 3 // 2,) * 2)
    leftover = outputs / "killed.stdout.txt.part"
    leftover.write_text("abandoned")
    os.utime(leftover, ns=(old, old))
    for name in ("a", "b", "c"):
        spill = SpillFile(str(tmp_path), name, "stdout")
        spill.start("x")
        spill.finish()
    names = sorted(path.name for path in outputs.iterdir())
    assert "other-kernel.stdout.txt.part" in names
    assert "killed.stdout.txt.part" not in names
    assert "c.stdout.txt" in names
