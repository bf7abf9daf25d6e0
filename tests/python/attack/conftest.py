"""Fixtures for the attack tests: a real dispatcher on a real SQLite store
(whether bubblewrap can sandbox a kernel here: tests/python/conftest.py)."""

import sys
from pathlib import Path

import pytest

from attack_support import make_dispatcher

# The host tests' package builders (env_support) serve these tests too.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "host"))


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
