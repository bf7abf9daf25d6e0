"""Fixtures for the attack tests: a real dispatcher on a real SQLite store,
and whether bubblewrap can sandbox a kernel here."""

import sys
from pathlib import Path

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import SandboxUnavailableError, sandbox_for

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


@pytest.fixture(scope="session")
def sandbox_unavailable_reason(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("probe")
    try:
        Kernel(cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode="enforce")).shutdown()
    except SandboxUnavailableError as exc:
        return str(exc)
    return None


@pytest.fixture(params=["off", "enforce"])
def sandbox_mode(request, sandbox_unavailable_reason):
    if request.param == "enforce" and sandbox_unavailable_reason is not None:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {sandbox_unavailable_reason}")
    return request.param


@pytest.fixture
def enforced(sandbox_unavailable_reason):
    if sandbox_unavailable_reason is not None:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {sandbox_unavailable_reason}")
    return "enforce"
