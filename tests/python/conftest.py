"""Fixtures every test directory may take: whether bubblewrap can sandbox a
kernel on this machine, and a parameter that runs a test with the sandbox
off and enforced (skipping enforce, with bubblewrap's own diagnosis, where
it cannot run). A directory whose kernels start differently (R) overrides
`sandbox_unavailable_reason` in its own conftest."""

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import SandboxUnavailableError, sandbox_for


def _skip_unless_sandboxed(reason):
    if reason is not None:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {reason}")


@pytest.fixture(scope="session")
def sandbox_unavailable_reason(tmp_path_factory):
    """None when an enforced sandbox starts here, else why not."""
    workspace = tmp_path_factory.mktemp("probe")
    try:
        Kernel(cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode="enforce")).shutdown()
    except SandboxUnavailableError as exc:
        return str(exc)
    return None


@pytest.fixture(params=["off", "enforce"])
def sandbox_mode(request, sandbox_unavailable_reason):
    """Each test that takes it runs with the sandbox off and enforced."""
    if request.param == "enforce":
        _skip_unless_sandboxed(sandbox_unavailable_reason)
    return request.param


@pytest.fixture
def enforced(sandbox_unavailable_reason):
    """The enforce mode, or a skip saying why this machine cannot."""
    _skip_unless_sandboxed(sandbox_unavailable_reason)
    return "enforce"
