"""Fixtures for the R kernel tests: real Rscript workers, each test run with
the sandbox off and enforced (skipped with bubblewrap's own reason where it
cannot run, and skipped entirely where R is not installed)."""

import shutil

import pytest

from openai4s.kernel.r_kernel import spawn_r_kernel
from openai4s.kernel.sandbox_status import SandboxUnavailableError, sandbox_for

from r_support import TEST_LIMITS


if shutil.which("Rscript") is None:
    pytest.skip("R is not installed (Debian r-base-core)", allow_module_level=True)


@pytest.fixture(scope="session")
def sandbox_unavailable_reason(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("r-probe")
    try:
        spawn_r_kernel(
            cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode="enforce")
        ).shutdown()
    except SandboxUnavailableError as exc:
        return str(exc)
    return None


@pytest.fixture
def workspace(tmp_path):
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture(params=["off", "enforce"])
def sandbox_mode(request, sandbox_unavailable_reason, monkeypatch):
    if request.param == "enforce":
        if sandbox_unavailable_reason is not None:
            pytest.skip(f"bubblewrap cannot sandbox a kernel here: {sandbox_unavailable_reason}")
        for name, value in TEST_LIMITS.items():
            monkeypatch.setenv(name, value)
    return request.param


@pytest.fixture
def start_r(workspace, sandbox_mode):
    """A factory of R kernels in `workspace` under this test's sandbox mode,
    all shut down at the end."""
    started = []

    def start(**kwargs):
        kernel = spawn_r_kernel(
            cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode=sandbox_mode), **kwargs
        )
        started.append(kernel)
        return kernel

    yield start
    for kernel in started:
        kernel.shutdown()


@pytest.fixture
def r_kernel(start_r):
    return start_r()
