"""A compute node without unprivileged user namespaces, as many clusters
have: bubblewrap there fails as it does on such a node (the `bwrap` the
job finds first on its PATH says what the real one says). An enforcing
kernel refuses to run cells and says why; `auto` runs them with a security
warning that says why. Both stay Slurm jobs that shut down cleanly."""

import os

import pytest

from slurm_support import SlurmEnvironment
from test_slurm_kernel import SlurmKernel

_NO_USERNS = (
    "#!/bin/sh\n"
    "echo 'bwrap: No permissions to creating new namespace, likely because the kernel does not "
    "allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or "
    "<file:///usr/share/doc/bubblewrap/README.Debian.gz>.' >&2\n"
    "exit 1\n"
)


class NoUsernsEnvironment(SlurmEnvironment):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        self.bin = self.data_dir.parent / "bin"
        self.bin.mkdir()
        fake = self.bin / "bwrap"
        fake.write_text(_NO_USERNS)
        fake.chmod(0o755)

    def environ(self):
        env = super().environ()
        env["PATH"] = f"{self.bin}:{env['PATH']}"
        env["OPENAI4S_KERNEL_SANDBOX"] = self.mode
        return env


@pytest.fixture(params=["enforce", "auto"])
def node_without_userns(request, cluster):
    env = NoUsernsEnvironment(request.param)
    yield env
    env.cleanup()


def _first_cell(kernel):
    """(reply content, every stream's text) of a cell that prints."""
    seen = []

    def collect(msg):
        if msg["msg_type"] == "stream":
            seen.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            seen.append("\n".join(msg["content"]["traceback"]))

    reply = kernel.kc.execute_interactive("print('ran')", timeout=90, output_hook=collect)
    return reply["content"], "".join(seen)


def banner(kernel):
    msg_id = kernel.kc.kernel_info()
    reply = kernel.kc.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=30)
    return reply["content"]["banner"]


def test_a_node_without_user_namespaces(node_without_userns):
    kernel = SlurmKernel(node_without_userns)
    try:
        reply, text = _first_cell(kernel)
        if node_without_userns.mode == "enforce":
            assert reply["status"] == "error"
            assert "user namespaces are disabled" in text and "ran" not in text
            # The kernel stays up and says the same again: a clear error, no hang.
            assert kernel.run("print('again')")[0]["status"] == "error"
        else:
            assert reply["status"] == "ok" and "ran" in text
            # Said once: in the banner when the worker was up by the time a
            # client asked for it, else with the first cell.
            shown = text + banner(kernel)
            assert "SECURITY WARNING: OS kernel sandbox is not enforced" in shown
            assert "user namespaces are disabled" in shown
    finally:
        kernel.shutdown()
    assert node_without_userns.leftovers() == []
    assert not os.path.exists(kernel.km.connection_file)
