"""save_artifact against a cell that tries to make the host pay: sparse
files, the same bytes saved over and over, oversized files and fields.
Through a real kernel, the real dispatcher and a real SQLite store."""

import os

import pytest

from openai4s.kernel import Kernel

SPARSE_BYTES = 256 * 1024 * 1024


def _save(k, call):
    return k.execute(
        "try:\n"
        f"    r = {call}\n"
        "    print('saved', r['version_id'], r['path'])\n"
        "except (RuntimeError, ValueError) as e:\n"
        "    print('refused:', e)\n"
    )["stdout"]


def _allocated(path):
    return os.stat(path).st_blocks * 512


def test_a_sparse_file_saved_twice_is_stored_once_without_its_holes(dispatcher, workspace):
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        k.execute(
            "with open('sparse.bin', 'wb') as f:\n"
            "    f.write(b'head')\n"
            f"    f.truncate({SPARSE_BYTES})\n"
        )
        if _allocated(workspace / "sparse.bin") >= 1024 * 1024:
            pytest.skip("this filesystem does not keep holes")
        first = _save(k, "host.save_artifact('sparse.bin')")
        second = _save(k, "host.save_artifact('sparse.bin', filename='again.bin')")
    assert first.startswith("saved"), first
    assert second.startswith("saved"), second
    first_path, second_path = first.split()[2], second.split()[2]
    # The same bytes are one object in the store...
    assert os.path.samefile(first_path, second_path) or first_path == second_path
    stored = [p for p in dispatcher.cfg.artifacts_dir.iterdir() if p.is_file()]
    assert len(stored) == 1, stored
    # ...holding the logical size without materialising the holes.
    assert os.path.getsize(first_path) == SPARSE_BYTES
    assert _allocated(first_path) < 16 * 1024 * 1024
    with open(first_path, "rb") as f:
        assert f.read(4) == b"head"


def test_one_save_past_the_per_call_limit_is_refused_clearly(dispatcher, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI4S_ARTIFACT_MAX_BYTES", "1000")
    (workspace / "big.bin").write_bytes(b"x" * 2000)
    (workspace / "small.bin").write_bytes(b"y" * 500)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        refused = _save(k, "host.save_artifact('big.bin')")
        ok = _save(k, "host.save_artifact('small.bin')")
    assert "refused:" in refused and "at most 1000 bytes" in refused, refused
    assert ok.startswith("saved"), ok
    leftovers = [p.name for p in dispatcher.cfg.artifacts_dir.iterdir()]
    assert len(leftovers) == 1, leftovers  # the small one; no staging file left behind


def test_the_workspace_quota_counts_distinct_bytes(dispatcher, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI4S_ARTIFACT_QUOTA_BYTES", "3000")
    (workspace / "a.bin").write_bytes(b"a" * 2000)
    (workspace / "b.bin").write_bytes(b"b" * 2000)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        first = _save(k, "host.save_artifact('a.bin')")
        again = _save(k, "host.save_artifact('a.bin', filename='copy.bin')")
        over = _save(k, "host.save_artifact('b.bin')")
    assert first.startswith("saved") and again.startswith("saved"), (first, again)
    assert "refused:" in over and "quota of 3000 bytes" in over, over


def test_stored_string_fields_are_bounded(dispatcher, workspace):
    (workspace / "r.txt").write_text("r")
    db = dispatcher.cfg.db_path
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        before = os.path.getsize(db)
        sources = [
            _save(k, "host.save_artifact('r.txt', source={'code': 'x' * 8_000_000})")
            for _ in range(4)
        ]
        content_type = _save(k, "host.save_artifact('r.txt', content_type='t' * 100_000)")
        cell_id = _save(k, "host.save_artifact('r.txt', producing_cell_id='c' * 100_000)")
        fine = _save(k, "host.save_artifact('r.txt', source={'code': 'print(1)'})")
    for refused in sources:
        assert "refused:" in refused and "source (serialised)" in refused, refused
    assert "refused:" in content_type and "content_type" in content_type, content_type
    assert "refused:" in cell_id and "producing_cell_id" in cell_id, cell_id
    assert fine.startswith("saved"), fine
    assert os.path.getsize(db) - before < 4 * 1024 * 1024
