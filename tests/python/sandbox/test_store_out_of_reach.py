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
