"""Negative tests for what a cell can learn about the host it runs on: the
sandbox has a host name of its own, and the host's boot command line and
kernel build configuration are masked."""

import socket

import pytest

from sandbox_support import assert_usable

READ_IDENTITY = (
    "import os, socket\n"
    "print('gethostname', socket.gethostname())\n"
    "print('uname', os.uname().nodename)\n"
    "for path in ('/proc/sys/kernel/hostname', '/etc/hostname', '/proc/cmdline',\n"
    "             '/proc/config.gz'):\n"
    "    try:\n"
    "        with open(path, 'rb') as handle:\n"
    "            data = handle.read()\n"
    "        print(path, len(data), data.decode('latin-1').split()[:1])\n"
    "    except OSError as exc:\n"
    "        print(path, 'refused', exc.strerror)\n"
)


def host_file(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


@pytest.mark.parametrize("mode", ["enforce", "auto"])
def test_a_cell_sees_its_own_host_name_and_not_the_hosts_identity(sandboxed, mode):
    kernel = sandboxed(mode=mode)
    result = kernel.execute(READ_IDENTITY)
    assert result["error"] is None, result
    lines = dict(line.split(" ", 1) for line in result["stdout"].splitlines())
    assert lines["gethostname"] == "openai4s", lines
    assert lines["uname"] == "openai4s", lines
    assert lines["/proc/sys/kernel/hostname"] == "9 ['openai4s']", lines
    for path in ("/etc/hostname", "/proc/cmdline", "/proc/config.gz"):
        # Masked (empty) where the host has the file; absent elsewhere.
        assert lines.get(path, "0 ").startswith("0 ") or "refused" in lines[path], lines
    host_name = socket.gethostname()
    if host_name != "openai4s":
        assert host_name not in result["stdout"], result["stdout"]
    boot = host_file("/proc/cmdline").decode("latin-1").strip()
    if boot:
        assert boot not in result["stdout"], result["stdout"]
    assert_usable(kernel)
