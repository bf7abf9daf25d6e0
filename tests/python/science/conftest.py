"""Fixtures for the science-stack tests: the packages `make setup` installs
from Debian, seen by real kernels with the sandbox off and enforced."""

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import SandboxUnavailableError, sandbox_for


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
def workspace(tmp_path):
    path = tmp_path / "workspace"
    path.mkdir()
    return path
