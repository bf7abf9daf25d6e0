"""host.env through the Jupyter kernel (issue 30 part 2): the C++ front door
serves env_setup from its own environment's sources, and its sandboxed
Python kernel imports the package at once."""

import sys
from pathlib import Path

import pytest

from jupyter_support import KernelEnvironment, bubblewrap_unavailable_reason, kernel_missing_reason
from kernel_client import RunningKernel, stdout_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))
from env_support import make_wheel  # noqa: E402

pytestmark = pytest.mark.skipif(
    kernel_missing_reason() is not None, reason=str(kernel_missing_reason())
)


def test_a_jupyter_kernel_installs_and_imports_in_its_sandbox(tmp_path, monkeypatch):
    reason = bubblewrap_unavailable_reason()
    if reason:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {reason}")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels, "jupyterpkg", "0.3", {"jupyterpkg/__init__.py": "VALUE = 'from the host'\n"})
    environment = KernelEnvironment(sandbox_mode="enforce")
    # The kernel's environment is the helper's own (it starts from an
    # emptied os.environ), so the source goes into it there.
    own = environment.environ
    monkeypatch.setattr(
        environment, "environ", lambda: {**own(), "OPENAI4S_ENV_FIND_LINKS": str(wheels)}
    )
    kernel = RunningKernel(environment)
    try:
        reply, _ = kernel.execute("host.env.create(packages=['jupyterpkg'])", timeout=300)
        assert reply["status"] == "ok", reply
        reply, outputs = kernel.execute("import jupyterpkg\nprint(jupyterpkg.VALUE)")
        assert reply["status"] == "ok", reply
        assert stdout_of(outputs).strip() == "from the host"
        reply, outputs = kernel.execute("print(host.env.lock()['python']['jupyterpkg']['version'])")
        assert stdout_of(outputs).strip() == "0.3"
    finally:
        kernel.shutdown()
        environment.cleanup()
