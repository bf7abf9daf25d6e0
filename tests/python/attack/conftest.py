"""Fixtures for the attack tests: a real dispatcher on a real SQLite store
(whether bubblewrap can sandbox a kernel here: tests/python/conftest.py)."""

import pytest

from attack_support import make_dispatcher


@pytest.fixture
def workspace(tmp_path):
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def dispatcher(tmp_path, workspace, monkeypatch):
    """No standing approvals: what is not allowed by default is asked, and
    unattended, refused."""
    monkeypatch.delenv("OPENAI4S_UNATTENDED_APPROVAL", raising=False)
    d = make_dispatcher(tmp_path / "data", workspace)
    yield d
    d.store.close()
