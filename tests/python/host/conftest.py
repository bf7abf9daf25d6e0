import pytest

from openai4s.config import Config, LLMConfig
from openai4s.host_dispatch import build_dispatcher


@pytest.fixture
def workspace(tmp_path):
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def dispatcher(tmp_path, workspace, monkeypatch):
    """A real dispatcher on a real SQLite store, in a session frame, with no
    standing rule for bash (so shell commands resolve to ask -> denied)."""
    monkeypatch.delenv("OPENAI4S_UNATTENDED_APPROVAL", raising=False)
    cfg = Config(data_dir=tmp_path / "data", llm=LLMConfig(provider="deepseek", api_key="x"))
    d = build_dispatcher(cfg, workspace=workspace)
    d.frame_id = d.store.new_frame(kind="turn")
    yield d
    d.store.close()
