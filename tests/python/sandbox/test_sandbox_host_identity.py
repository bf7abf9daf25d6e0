"""Negative tests for what a cell can learn about the host it runs on: the
sandbox has a host name of its own, and the host's boot command line and
kernel build configuration are masked."""

import os
import socket

import pytest

from sandbox_support import assert_usable

READ_IDENTITY = (
    "import os, socket\n"
    "print('gethostname', socket.gethostname())\n"
    "print('uname', os.uname().nodename)\n"
    "print('resolves', socket.gethostbyname(socket.gethostname()))\n"
    "print('hosts', open('/etc/hosts').read().split())\n"
    "print('machine-id', open('/etc/machine-id').read().strip() if os.path.exists('/etc/machine-id') else '-')\n"
    "print('boot-id', open('/proc/sys/kernel/random/boot_id').read().strip())\n"
    "print('version', open('/proc/version').read().strip())\n"
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
    # Its own name resolves, to loopback, from a host table of its own.
    assert lines["resolves"] == "127.0.0.1", lines
    # A machine id of its own, where the host has one.
    host_id = host_file("/etc/machine-id").decode("latin-1").strip()
    if host_id and mode == "enforce":
        assert lines["machine-id"] != host_id and len(lines["machine-id"]) == 32, lines
    # A boot id of its own: the host's is shared by every kernel of one boot.
    host_boot = host_file("/proc/sys/kernel/random/boot_id").decode("latin-1").strip()
    if host_boot and mode == "enforce":
        assert lines["boot-id"] != host_boot and len(lines["boot-id"]) == 36, lines
    # The kernel's release, as uname tells it, without the host's build host
    # and compiler.
    host_version = host_file("/proc/version").decode("latin-1").strip()
    if host_version and mode == "enforce":
        release = os.uname().release
        assert lines["version"].startswith(f"Linux version {release} (openai4s)"), lines
        assert lines["version"] != host_version, lines
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


READ_ACCOUNTS = (
    "import getpass, os, pwd, subprocess\n"
    "print('whoami', subprocess.run(['whoami'], capture_output=True, text=True).stdout.strip())\n"
    "print('getuser', getpass.getuser())\n"
    "print('uid', pwd.getpwuid(os.getuid()).pw_name)\n"
    "print('accounts', sorted(entry.pw_name for entry in pwd.getpwall()))\n"
    "try:\n"
    "    open('/etc/passwd', 'a').close()\n"
    "    print('passwd', 'writable')\n"
    "except OSError as exc:\n"
    "    print('passwd', exc.strerror)\n"
)


def test_the_kernels_user_has_a_name_and_the_hosts_accounts_are_not_listed(sandboxed):
    """A uid leased for one kernel is in no host file: `whoami` and
    getpass.getuser() failed inside. The host's account list (who runs what
    on it) is not shown either: the sandbox has its own /etc/passwd."""
    kernel = sandboxed(mode="enforce")
    result = kernel.execute("import os\nos.environ.pop('USER', None)\n" + READ_ACCOUNTS)
    assert result["error"] is None, result
    lines = dict(line.split(" ", 1) for line in result["stdout"].splitlines())
    assert lines["whoami"] == lines["getuser"] == lines["uid"] != "", lines
    assert set(eval(lines["accounts"])) <= {"root", "nobody", "openai4s"}, lines
    for account in host_file("/etc/passwd").decode("latin-1").splitlines():
        name = account.split(":", 1)[0]
        if name and name not in ("root", "nobody", "openai4s"):
            assert name not in lines["accounts"], (name, lines)
    assert lines["passwd"] != "writable", lines
    assert_usable(kernel)
