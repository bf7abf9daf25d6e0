"""Negative tests for the sandbox's privilege on the host: a hostile cell must
not act as host root (host sysctls, set-uid files), must not reach the
kernel's procfs knobs, and must not write bubblewrap's PID 1 memory."""

import ast
import os
import socket
import stat

import pytest

from sandbox_support import assert_usable, error_of

LEASE_BREAK_TIME = "/proc/sys/fs/lease-break-time"


def worker_host_pid(kernel):
    """The sandboxed worker's host pid, from its pidfd's fdinfo."""
    pidfd = kernel._sandbox._bwrap_worker_pidfd
    assert pidfd is not None
    with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as info:
        for line in info:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    raise AssertionError("no Pid: line in the pidfd's fdinfo")


def host_ids(pid):
    """(real, effective, saved, fs) uids and gids of a host process."""
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            fields[name] = (
                [int(word) for word in value.split()] if name in ("Uid", "Gid") else value
            )
    return fields["Uid"], fields["Gid"]


def test_the_worker_never_runs_as_host_root(kernel):
    uids, gids = host_ids(worker_host_pid(kernel))
    assert 0 not in uids, uids
    assert 0 not in gids, gids
    identity = kernel.sandbox_status["identity"]
    assert identity["host_uid"] == uids[0] and identity["host_gid"] == gids[0], identity
    checks = {check["name"]: check for check in kernel.sandbox_status["checks"]}
    assert checks["sandbox_uid_not_host_root"]["passed"], checks
    assert checks["proc_sys_read_only"]["passed"], checks


def test_a_cell_cannot_change_a_host_sysctl(kernel):
    with open(LEASE_BREAK_TIME, encoding="ascii") as knob:
        before = knob.read()
    wanted = str(int(before) + 1)
    try:
        result = kernel.execute(f"open({LEASE_BREAK_TIME!r}, 'w').write({wanted!r})")
        error = error_of(result)
        assert "Read-only file system" in error or "Permission denied" in error, error
    finally:
        with open(LEASE_BREAK_TIME, encoding="ascii") as knob:
            after = knob.read()
        if after != before and os.geteuid() == 0:
            with open(LEASE_BREAK_TIME, "w", encoding="ascii") as knob:
                knob.write(before)
    assert after == before
    assert_usable(kernel)


def test_kernel_procfs_knobs_are_read_only_and_leaks_are_masked(kernel):
    result = kernel.execute(
        "import os\n"
        "for path in ('/proc/sys', '/proc/irq', '/proc/bus', '/proc/fs'):\n"
        "    if os.path.exists(path):\n"
        "        print(path, os.statvfs(path).f_flag & os.ST_RDONLY != 0)\n"
        "for path in ('/proc/keys', '/proc/timer_list', '/proc/kpagecount', '/proc/kpageflags',\n"
        "             '/proc/kpagecgroup', '/proc/kcore', '/proc/sysrq-trigger'):\n"
        "    if os.path.exists(path):\n"
        "        try:\n"
        "            with open(path, 'rb') as handle:\n"
        "                print(path, len(handle.read(4096)))\n"
        "        except PermissionError:\n"
        "            print(path, 0)  # the /dev/null mask sits on a nodev mount\n"
    )
    assert result["error"] is None, result
    lines = result["stdout"].splitlines()
    assert "/proc/sys True" in lines, lines
    for line in lines:
        path, value = line.split()
        if path in ("/proc/sys", "/proc/irq", "/proc/bus", "/proc/fs"):
            assert value == "True", line
        else:
            assert value == "0", f"{path} is not masked: {line}"


def mount_points(kernel):
    """Where the sandbox has mounts, from its own mount table."""
    result = kernel.execute("print(open('/proc/self/mountinfo').read())")
    assert result["error"] is None, result
    return {line.split()[4] for line in result["stdout"].splitlines() if line.strip()}


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root daemon chooses the sandbox's ids")
def test_an_etc_secret_is_masked_exactly_when_the_sandbox_ids_could_read_it(sandboxed, monkeypatch):
    shadow = os.stat("/etc/shadow")
    if shadow.st_mode & stat.S_IROTH or not shadow.st_mode & stat.S_IRGRP or shadow.st_gid == 0:
        pytest.skip("this host's /etc/shadow is not a group-readable secret")
    read_shadow = "open('/etc/shadow').read()"

    # A stranger to the file (nobody): the kernel's permission check refuses
    # it, and no mount (bubblewrap's dearest step) is spent on it.
    stranger = sandboxed()
    assert stranger.sandbox_status["identity"]["host_gid"] != shadow.st_gid
    assert "PermissionError" in error_of(stranger.execute(read_shadow))
    assert "/etc/shadow" not in mount_points(stranger)

    # In the file's group its modes would let the cell read the hashes: only
    # the mask stands in the way.
    monkeypatch.setenv("OPENAI4S_SANDBOX_UID", "65534")
    monkeypatch.setenv("OPENAI4S_SANDBOX_GID", str(shadow.st_gid))
    member = sandboxed()
    assert member.sandbox_status["identity"]["host_gid"] == shadow.st_gid
    assert "PermissionError" in error_of(member.execute(read_shadow))
    assert "/etc/shadow" in mount_points(member)
    assert_usable(member)


SET_ID_ATTEMPTS = r"""
import ctypes, errno, os, shutil, stat
libc = ctypes.CDLL(None, use_errno=True)
def raw(number, *args):
    if libc.syscall(number, *args) < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
def outcome(make):
    try:
        make()
        return "allowed"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
shutil.copy("/usr/bin/id", "suid-id")
here = os.open(".", os.O_RDONLY)
AT_FDCWD = -100
attempts = {
    "chmod 4755": lambda: os.chmod("suid-id", 0o4755),
    "chmod 2755": lambda: os.chmod("suid-id", 0o2755),
    "fchmod": lambda: os.fchmod(os.open("suid-id", os.O_RDONLY), 0o6755),
    "fchmodat": lambda: os.chmod("suid-id", 0o4755, dir_fd=here),
    "fchmodat2": lambda: raw(452, AT_FDCWD, b"suid-id", 0o4755, 0),
    "open O_CREAT": lambda: os.close(os.open("made", os.O_CREAT | os.O_WRONLY, 0o4755)),
    "openat O_TMPFILE": lambda: os.close(os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o2755)),
    # x86_64's numbers: creat (85) exists there only; openat2 (437) and
    # fchmodat2 (452) are the same on aarch64.
    **({"creat": lambda: raw(85, b"creat-made", 0o4755)} if os.uname().machine == "x86_64" else {}),
    "mknod": lambda: os.mknod("node-made", stat.S_IFREG | 0o4755),
    "openat2": lambda: raw(437, AT_FDCWD, b"openat2-made", 0, 0),
}
print({name: outcome(make) for name, make in attempts.items()})
os.chmod("suid-id", 0o755)
os.close(os.open("plain", os.O_CREAT | os.O_WRONLY, 0o644))
print("plain modes work")
"""


def test_no_file_a_cell_makes_carries_a_set_id_bit(kernel, workspace):
    # The sandbox's uid (nobody, for a root daemon) holds every workspace; a
    # set-uid file of it on the host would hand them to any local user.
    result = kernel.execute(SET_ID_ATTEMPTS)
    assert result["error"] is None, result
    outcomes = ast.literal_eval(result["stdout"].splitlines()[0])
    assert outcomes.pop("openat2") == "ENOSYS", outcomes  # the fallback is openat
    assert set(outcomes.values()) == {"EPERM"}, outcomes
    assert result["stdout"].endswith("plain modes work\n"), result
    for entry in workspace.iterdir():
        mode = entry.lstat().st_mode
        assert not mode & (stat.S_ISUID | stat.S_ISGID), (entry, oct(mode))
        assert entry.lstat().st_uid != 0, entry
    assert_usable(kernel)


def test_the_sandbox_init_memory_is_not_writable(kernel):
    result = kernel.execute(
        "outcomes = []\n"
        "for path in ('/proc/1/mem', '/proc/1/task/1/mem'):\n"
        "    try:\n"
        "        with open(path, 'r+b', buffering=0) as mem:\n"
        "            outcomes.append(path + ' opened')\n"
        "    except OSError as exc:\n"
        "        outcomes.append(path + ' refused')\n"
        "print(outcomes)\n"
    )
    assert result["error"] is None, result
    assert "opened" not in result["stdout"], result
    assert_usable(kernel)


@pytest.mark.parametrize("family", ["AF_VSOCK", "AF_ALG", "AF_PACKET", "AF_BLUETOOTH"])
def test_socket_families_a_cell_does_not_need_are_refused(kernel, family):
    if not hasattr(socket, family):
        pytest.skip(f"this Python has no socket.{family}")
    result = kernel.execute(
        "import errno, socket\n"
        "try:\n"
        f"    socket.socket(socket.{family}, socket.SOCK_STREAM if socket.{family} != socket.AF_ALG"
        " else socket.SOCK_SEQPACKET).close()\n"
        "    print('created')\n"
        "except OSError as exc:\n"
        "    print(errno.errorcode[exc.errno])\n"
    )
    assert result["error"] is None, result
    assert result["stdout"].strip() in ("EPERM", "EAFNOSUPPORT"), result


def test_netlink_serves_only_its_routing_protocol(kernel):
    # audit (9), uevents (15), netfilter (12), generic (16), sock_diag (4)...
    result = kernel.execute(
        "import errno, socket\n"
        "refused = {}\n"
        "for protocol in range(1, 32):\n"
        "    try:\n"
        "        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, protocol).close()\n"
        "        refused[protocol] = 'created'\n"
        "    except OSError as exc:\n"
        "        refused[protocol] = errno.errorcode[exc.errno]\n"
        "print(set(refused.values()))\n"
        "print(socket.if_nameindex())\n"
    )
    assert result["error"] is None, result
    assert result["stdout"] == "{'EPROTONOSUPPORT'}\n[(1, 'lo')]\n", result
    assert_usable(kernel)


def test_the_socket_families_a_cell_needs_still_work(kernel):
    result = kernel.execute(
        "import socket\n"
        "for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):\n"
        "    socket.socket(family, socket.SOCK_STREAM).close()\n"
        "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()\n"
        "a, b = socket.socketpair()\n"
        "a.close(); b.close()\n"
        "print(socket.getaddrinfo('localhost', 80)[0][0] is not None)\n"
    )
    assert result["error"] is None, result
    assert result["stdout"] == "True\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="the grant is a root daemon's")
def test_a_symlink_a_cell_leaves_cannot_become_another_kernels_workspace(
    kernel, workspace, tmp_path
):
    # Kernel A's cell swaps a directory of its workspace for a symlink to a
    # root-only directory; a kernel later started there must not be handed
    # (and grant the sandbox uid) that directory.
    from openai4s.kernel import Kernel
    from openai4s.kernel.sandbox_status import sandbox_for

    victim = tmp_path / "root-only"
    victim.mkdir(mode=0o700)
    (victim / "root.conf").write_text("root's\n")
    (workspace / "inner").mkdir()
    result = kernel.execute(
        f"import os\nos.rename('inner', 'inner.bak')\nos.symlink({str(victim)!r}, 'inner')\n"
    )
    assert result["error"] is None, result
    asked = str(workspace / "inner")
    with pytest.raises(Exception) as refused:
        Kernel(cwd=asked, sandbox=sandbox_for(asked, mode="enforce")).shutdown()
    message = str(refused.value)
    assert "a symlink owned by uid" in message and "pass the real path" in message, message
    assert os.stat(victim).st_mode & 0o777 == 0o700
    assert os.listxattr(victim) == [], os.listxattr(victim)  # no ACL was granted
    assert sorted(os.listdir(victim)) == ["root.conf"]
    assert_usable(kernel)
