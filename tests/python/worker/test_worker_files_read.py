"""``files_read``: runtime observation of the workspace files a Cell read."""

import ntpath
import posixpath

import pytest

from openai4s.kernel.runtime.files_read import _workspace_relative_read_path


def _windows(raw, cwd=r"C:\Workspace\analysis"):
    return _workspace_relative_read_path(
        raw,
        root=r"C:\Workspace",
        cwd=cwd,
        isabs=ntpath.isabs,
        normpath=ntpath.normpath,
        relpath=ntpath.relpath,
        separator="\\",
    )


def _posix(raw, cwd="/ws/sub"):
    return _workspace_relative_read_path(
        raw,
        root="/ws",
        cwd=cwd,
        isabs=posixpath.isabs,
        normpath=posixpath.normpath,
        relpath=posixpath.relpath,
        separator="/",
    )


@pytest.mark.parametrize(
    ("raw", "cwd", "expected"),
    [
        (r"..\Data\input.csv", r"C:\Workspace\analysis", "Data/input.csv"),
        (r"c:\workspace\Data\input.csv", r"C:\Workspace\analysis", "Data/input.csv"),
        (r"link\input.csv", r"C:\Workspace\analysis", "analysis/link/input.csv"),
        (r"C:\Other\secret.csv", r"C:\Workspace\analysis", None),
        (r"D:\Workspace\input.csv", r"C:\Workspace\analysis", None),
        (r"C:\Workspace", r"C:\Workspace", None),
        (r"..\..\escape.txt", r"C:\Workspace\analysis", None),
        ("x.csv", "C:\\Workspace\\", "x.csv"),
    ],
)
def test_windows_rules(raw, cwd, expected):
    assert _windows(raw, cwd) == expected


@pytest.mark.parametrize(
    ("raw", "cwd", "expected"),
    [
        ("a.txt", "/ws/sub", "sub/a.txt"),
        ("../b.txt", "/ws/sub", "b.txt"),
        ("/ws/c/./d.txt", "/elsewhere", "c/d.txt"),
        ("/ws", "/ws", None),
        ("..", "/ws", None),
        ("/dev/null", "/ws", None),
        ("/wsx/e.txt", "/ws", None),
        ("nested/../nested/input.bin", "/ws", "nested/input.bin"),
    ],
)
def test_posix_rules(raw, cwd, expected):
    assert _posix(raw, cwd) == expected


def test_only_executed_reads_are_reported(worker, tmp_path):
    (tmp_path / "executed.txt").write_text("observed")
    (tmp_path / "dead.txt").write_text("not observed")
    response, _ = worker.execute(
        "from pathlib import Path\n"
        "if False:\n"
        "    Path('dead.txt').read_text()\n"
        "print(Path('executed.txt').read_text())\n"
        "Path('write-only.txt').write_text('output');"
    )
    assert response["stdout"] == "observed\n"
    assert response["files_read"] == ["executed.txt"]


def test_reads_are_normalised_deduplicated_and_workspace_only(worker, tmp_path):
    nested = tmp_path / "nested"
    nested.mkdir()
    (nested / "input.bin").write_bytes(b"data")
    (tmp_path / "a.txt").write_text("a")
    response, _ = worker.execute(
        "import os\n"
        "open(os.path.join('nested', '..', 'nested', 'input.bin'), 'rb').read()\n"
        f"open({str(tmp_path / 'a.txt')!r}).read()\n"
        "open('a.txt').read()\n"
        "open('/dev/null', 'rb').read()\n"
        "os.close(os.open('a.txt', os.O_RDONLY))\n"
        "os.close(os.open('created.bin', os.O_CREAT | os.O_WRONLY, 0o600))\n"
        "open('appended.txt', 'a').close()\n"
        "open('a.txt', 'r+').close()\n"
    )
    assert response["error"] is None
    assert response["files_read"] == ["nested/input.bin", "a.txt"]


def test_reads_after_a_chdir_are_workspace_relative(worker, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("x")
    response, _ = worker.execute("import os\nos.chdir('sub')\nopen('f.txt').read()")
    assert response["files_read"] == ["sub/f.txt"]
    worker.execute("os.chdir('..')")


def test_background_threads_and_housekeeping_are_not_attributed(worker, tmp_path):
    (tmp_path / "bg.txt").write_text("x")
    worker.execute(
        "import threading, time\n"
        "def loop():\n"
        "    while True:\n"
        "        open('bg.txt').read(); time.sleep(0.01)\n"
        "threading.Thread(target=loop, daemon=True).start()"
    )
    response, _ = worker.execute("import time\ntime.sleep(0.2)")
    assert response["files_read"] == []


def test_functions_defined_in_the_cell_count(worker, tmp_path):
    (tmp_path / "f.txt").write_text("x")
    response, _ = worker.execute("def load():\n    return open('f.txt').read()\nload()")
    assert response["files_read"] == ["f.txt"]


def test_at_most_256_entries_are_kept(worker, tmp_path):
    (tmp_path / "many").mkdir()
    for i in range(300):
        (tmp_path / "many" / f"{i:03}.txt").write_text("x")
    response, _ = worker.execute("for i in range(300):\n    open(f'many/{i:03}.txt').read()")
    assert len(response["files_read"]) == 256
    assert response["files_read"][0] == "many/000.txt"
    assert worker.execute("open('many/299.txt').read()")[0]["files_read"] == ["many/299.txt"]
