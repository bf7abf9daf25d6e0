"""The host's store (database, artifacts) is out of a cell's reach even when
the dispatcher's data directory sits inside the kernel's workspace, and a
data directory that IS the workspace is refused. A real dispatcher on real
SQLite, a real worker, the real sandbox."""

import pytest

from openai4s.config import Config, LLMConfig
from openai4s.host_dispatch import build_dispatcher

ERASE = """
import os, sqlite3
db = os.path.join({data!r}, 'openai4s.db')
try:
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM host_call_log")
    conn.execute(
        "INSERT INTO permission_rules (rule_id, scope, scope_id, tool, pattern, decision, "
        "created_at, updated_at) VALUES ('forged', 'global', '', 'bash', '*', 'allow', 0, 0)"
    )
    conn.commit()
    print('rewrote the store')
except Exception as e:
    print('refused:', type(e).__name__, e)
print('visible:', sorted(os.listdir({data!r})) if os.path.isdir({data!r}) else None)
"""


def _dispatcher(data_dir, workspace):
    cfg = Config(data_dir=data_dir, llm=LLMConfig(provider="deepseek", api_key="x"))
    d = build_dispatcher(cfg, workspace=workspace)
    d.frame_id = d.store.new_frame(kind="turn")
    return d


def test_a_store_inside_the_workspace_is_hidden_from_the_cell(sandboxed, workspace):
    data = workspace / ".data"
    d = _dispatcher(data, workspace)
    try:
        k = sandboxed(dispatcher=d)
        k.execute("print(host._call('capabilities', []))")  # one audited call
        before = d.store._conn.execute("SELECT COUNT(*) FROM host_call_log").fetchone()[0]
        result = k.execute(ERASE.format(data=str(data)))
        assert result["error"] is None, result
        assert "rewrote the store" not in result["stdout"], result["stdout"]
        assert "visible: []" in result["stdout"], result["stdout"]
        after = d.store._conn.execute("SELECT COUNT(*) FROM host_call_log").fetchone()[0]
        assert after >= before >= 1
        forged = d.store._conn.execute(
            "SELECT COUNT(*) FROM permission_rules WHERE pattern = '*' AND tool = 'bash'"
        ).fetchone()[0]
        assert forged == 0
    finally:
        d.store.close()


def test_a_data_directory_that_is_the_workspace_is_refused(sandboxed, workspace):
    d = _dispatcher(workspace, workspace)
    try:
        with pytest.raises(Exception) as caught:
            sandboxed(dispatcher=d)
        message = str(caught.value)
        assert "data directory" in message and str(workspace.resolve()) in message, message
        assert "workspace" in message
    finally:
        d.store.close()


MOVE_THE_STORE_ASIDE = """
import os
os.chdir({workspace!r})
moved = []
for name in ("sub", os.path.join("sub", "deeper")):
    try:
        os.rename(name, name + ".aside")
        moved.append(name)
    except OSError as exc:
        print("rename", name, "refused:", exc.strerror)
try:
    os.rmdir(os.path.join("sub", "deeper", ".data"))
except OSError as exc:
    print("rmdir refused:", exc.strerror)
if moved:
    os.makedirs(os.path.join("sub", "deeper", ".data"), exist_ok=True)
    os.symlink({target!r}, os.path.join("sub", "deeper", ".data", "artifacts"))
print("moved:", moved)
open("payload.txt", "w").write("written by the cell\\n")
try:
    print(host.save_artifact("payload.txt"))
except Exception as exc:
    print("save failed:", type(exc).__name__)
"""


def test_a_nested_store_cannot_be_moved_aside_to_redirect_the_hosts_writes(
    sandboxed, workspace, tmp_path
):
    # The attack: rename a directory above the hidden store (the mask moves
    # with it), rebuild the path with a symlink where artifacts go, and let
    # the host (root here) write a cell-chosen file outside the workspace.
    target = tmp_path / "outside-target"
    target.mkdir()
    nested = workspace / "sub" / "deeper"
    nested.mkdir(parents=True)
    for directory in (workspace / "sub", nested):
        directory.chmod(0o777)  # as if the cell had made them: its to rename
    d = _dispatcher(nested / ".data", workspace)
    try:
        k = sandboxed(dispatcher=d)
        for attempt in range(2):  # the second time after a restart
            result = k.execute(
                MOVE_THE_STORE_ASIDE.format(workspace=str(workspace), target=str(target))
            )
            assert result["error"] is None, result
            assert "moved: []" in result["stdout"], result["stdout"]
            assert result["stdout"].count("refused: Device or resource busy") == 3, result
            assert list(target.iterdir()) == [], list(target.iterdir())
            assert (nested / ".data").is_dir() and not (nested / ".data").is_symlink()
            if attempt == 0:
                k.restart()
    finally:
        d.store.close()


@pytest.mark.skipif(__import__("os").geteuid() != 0, reason="the symlink rule is a root daemon's")
def test_a_store_reached_through_a_cells_symlink_is_refused(sandboxed, workspace):
    # A cell leaves `.store` pointing into a directory of its own; a store
    # configured there would be written by the host through a link the cell
    # can repoint, so no sandboxed kernel starts with it.
    first = sandboxed()
    planted = first.execute("import os\nos.mkdir('mine')\nos.symlink('mine', '.store')\n")
    assert planted["error"] is None, planted
    d = _dispatcher(workspace / ".store", workspace)
    try:
        with pytest.raises(Exception) as refused:
            sandboxed(dispatcher=d)
        message = str(refused.value)
        assert "data directory" in message and "a symlink owned by uid" in message, message
    finally:
        d.store.close()
