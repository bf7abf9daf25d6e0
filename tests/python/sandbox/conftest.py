"""Fixtures for the sandbox tests: real kernels under an enforced bubblewrap
sandbox, skipped (with bubblewrap's own diagnosis as the reason) on a machine
that cannot run one."""

import os
import socket
import subprocess
import sys

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

from sandbox_support import TEST_LIMITS, echo_dispatcher


@pytest.fixture
def limits(monkeypatch):
    for name, value in TEST_LIMITS.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def workspace(tmp_path):
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def sandboxed(sandbox_unavailable_reason, limits, workspace):
    """A factory of enforced-sandbox kernels in `workspace`, all shut down at
    the end of the test."""
    if sandbox_unavailable_reason is not None:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {sandbox_unavailable_reason}")
    started = []

    def start(dispatcher=echo_dispatcher, mode="enforce", **kwargs):
        kernel = Kernel(
            dispatcher=dispatcher,
            cwd=str(workspace),
            sandbox=sandbox_for(str(workspace), mode=mode),
            **kwargs,
        )
        started.append(kernel)
        return kernel

    yield start
    for kernel in started:
        kernel.shutdown()


@pytest.fixture
def kernel(sandboxed):
    return sandboxed()


@pytest.fixture
def loopback_listener():
    """A TCP listener on the host's 127.0.0.1; yields its port."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


@pytest.fixture
def host_process():
    """A host process with a secret in its environment; yields (pid, secret)."""
    secret = "o4s-host-secret-" + os.urandom(8).hex()
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "O4S_TEST_SECRET": secret},
    )
    try:
        yield child.pid, secret
    finally:
        child.kill()
        child.wait()
