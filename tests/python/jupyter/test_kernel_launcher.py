"""The kernelspec's executable is a launcher: it listens on the connection
file's ports before the kernel (openai4s-jupyter-kernel-core) is loaded, so
a client that connects at once is not refused (libzmq then waited 100 ms
before trying again), and the kernel takes those sockets over. Checked with
a stand-in core beside a copy of the launcher (what it hands over), and
with the real kernel (it serves on them; no worker inherits them)."""

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap

import pytest

from jupyter_support import KERNEL_BINARY, KernelEnvironment, kernel_missing_reason
from kernel_client import RunningKernel

# Stands in for the core: reports its argv, and for each handed fd its
# port and whether it listens; a connection to that port lands in its
# backlog (as a client's does while the real kernel loads).
STAND_IN = textwrap.dedent(
    """\
    #!{python}
    import json, os, socket, sys
    args = sys.argv[1:]
    fds = []
    if "--listening-fds" in args:
        fds = [int(fd) for fd in args[args.index("--listening-fds") + 1].split(",")]
    handed = []
    for fd in fds:
        s = socket.socket(fileno=os.dup(fd))
        port = s.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.settimeout(10)
        peer, _ = s.accept()
        handed.append([port, s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)])
        peer.close(), client.close(), s.close()
    print(json.dumps({{"args": args, "handed": handed,
                      "open": sorted(int(fd) for fd in os.listdir("/proc/self/fd"))}}))
    """
)


@pytest.fixture
def launcher_dir(tmp_path):
    if kernel_missing_reason():
        pytest.skip(kernel_missing_reason())
    shutil.copy(KERNEL_BINARY, tmp_path / KERNEL_BINARY.name)
    core = tmp_path / "openai4s-jupyter-kernel-core"
    core.write_text(STAND_IN.format(python=sys.executable))
    core.chmod(0o755)
    return tmp_path


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _connection_file(tmp_path, **overrides):
    names = ["shell_port", "control_port", "stdin_port", "hb_port", "iopub_port"]
    config = dict(zip(names, _free_ports(5)), ip="127.0.0.1", transport="tcp", key="k")
    config.update(overrides)
    path = tmp_path / "connection.json"
    path.write_text(json.dumps(config))
    return path, config


def _launch(launcher_dir, connection):
    launched = subprocess.run(
        [str(launcher_dir / KERNEL_BINARY.name), "-f", str(connection), "--python", "p"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert launched.returncode == 0, launched
    return json.loads(launched.stdout)


def test_the_launcher_listens_on_every_port_before_the_kernel_runs(launcher_dir, tmp_path):
    for _ in range(5):  # a port taken meanwhile by another test: choose again
        connection, config = _connection_file(tmp_path)
        report = _launch(launcher_dir, connection)
        if "--listening-fds" in report["args"]:
            break
    ports = [config[f"{name}_port"] for name in ("shell", "control", "stdin", "hb", "iopub")]
    # The flags follow unchanged (argv[0] is checked on the real kernel:
    # a script's interpreter replaces it).
    assert report["args"][2:] == ["-f", str(connection), "--python", "p"], report
    assert report["handed"] == [[port, 1] for port in ports], report


def test_a_connection_file_that_is_a_pipe_is_left_unread(launcher_dir, tmp_path):
    """The kernel reads the file again: a pipe read by the launcher would
    reach it empty (and one with no writer would block the launcher)."""
    fifo = tmp_path / "connection.fifo"
    os.mkfifo(fifo)
    report = _launch(launcher_dir, fifo)
    assert "--listening-fds" not in report["args"], report


@pytest.mark.parametrize(
    "overrides",
    [{"transport": "ipc"}, {"ip": "localhost"}, {"shell_port": 0}, {"hb_port": "x"}],
    ids=["ipc", "named-ip", "port-0", "port-not-a-number"],
)
def test_what_the_launcher_cannot_open_is_left_to_the_kernel(launcher_dir, tmp_path, overrides):
    connection, _ = _connection_file(tmp_path, **overrides)
    report = _launch(launcher_dir, connection)
    assert "--listening-fds" not in report["args"], report
    assert report["open"] == [0, 1, 2, 3], report  # 3: the listing's own


def test_a_port_in_use_leaves_no_socket_open(launcher_dir, tmp_path):
    connection, config = _connection_file(tmp_path)
    taken = socket.socket()
    taken.bind(("127.0.0.1", config["stdin_port"]))
    taken.listen()
    try:
        report = _launch(launcher_dir, connection)
    finally:
        taken.close()
    assert "--listening-fds" not in report["args"], report
    assert report["open"] == [0, 1, 2, 3], report


def test_the_core_refuses_a_listening_fds_list_that_does_not_parse(tmp_path):
    if kernel_missing_reason():
        pytest.skip(kernel_missing_reason())
    core = KERNEL_BINARY.with_name("openai4s-jupyter-kernel-core")
    connection, _ = _connection_file(tmp_path)
    for bad in ("0,1,2", "3,x", "4,", "3,4,5,6,7"):
        done = subprocess.run(
            [
                str(core),
                "--listening-fds",
                bad,
                "-f",
                str(connection),
                "--python",
                "p",
                "--repo-root",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            timeout=15,
        )
        assert done.returncode == 2 and "usage" in done.stderr, (bad, done)


LISTENING_FDS = textwrap.dedent(
    """\
    import os, socket
    listening = []
    for name in os.listdir('/proc/self/fd'):
        try:
            s = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        try:
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                listening.append(s.getsockname())
        except OSError:
            pass
        s.detach()
    print('listening', listening)
    """
)


def _listening_inodes(ports):
    """Inodes of this host's listening TCP sockets on `ports`."""
    inodes = set()
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            port = int(fields[1].rsplit(":", 1)[1], 16)
            if fields[3] == "0A" and port in ports:
                inodes.add(fields[9])
    return inodes


def _socket_fds(pid, inodes):
    """{fd: fdinfo flags} of `pid`'s descriptors on those socket inodes."""
    found = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
            with open(f"/proc/{pid}/fdinfo/{name}") as info:
                flags = next(line for line in info if line.startswith("flags:"))
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            found[int(name)] = int(flags.split()[1], 8)
    return found


@pytest.mark.parametrize("mode", ["enforce", "off"])
def test_the_kernel_serves_on_the_launchers_sockets_and_no_worker_inherits_them(mode):
    if kernel_missing_reason():
        pytest.skip(kernel_missing_reason())
    environment = KernelEnvironment(sandbox_mode=mode)
    try:
        kernel = RunningKernel(environment)
        try:
            reply, outputs = kernel.execute(LISTENING_FDS)
            assert reply["status"] == "ok", reply
            text = "".join(m["content"].get("text", "") for m in outputs)
            assert "listening []" in text, text
            # `ps` shows the kernelspec's name.
            with open(f"/proc/{kernel.pid}/cmdline", "rb") as handle:
                assert handle.read().split(b"\0")[0] == bytes(KERNEL_BINARY)
            # Its listening sockets are the five the launcher opened first
            # (descriptors 3 to 7), close-on-exec.
            ports = {
                getattr(kernel.km, f"{n}_port")
                for n in ("shell", "control", "stdin", "hb", "iopub")
            }
            held = _socket_fds(kernel.pid, _listening_inodes(ports))
            assert sorted(held) == [3, 4, 5, 6, 7], held
            assert all(flags & os.O_CLOEXEC for flags in held.values()), held
        finally:
            kernel.shutdown()
    finally:
        environment.cleanup()
