"""Negative security tests: what a hostile cell tries, refused with a clear
error, and the kernel still usable afterwards."""

import os
import platform
import sys

import pytest

from sandbox_support import assert_usable, error_of


def manager_module_file():
    from openai4s.kernel import manager

    return manager.__file__


def test_a_host_file_outside_the_allowed_paths_cannot_be_read(kernel, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("host secret")

    result = kernel.execute(f"open({str(outside / 'secret.txt')!r}).read()")
    assert "FileNotFoundError" in error_of(result)
    # The host home is a private empty directory, and root-only files in the
    # system view (here /etc/shadow) are masked.
    home = kernel.execute("import os; print(os.listdir(os.path.expanduser('~')))")
    # Only the way to the worker's own runtime, when a checkout lives there.
    expected = []
    package = os.path.realpath(os.path.dirname(os.path.dirname(manager_module_file())))
    host_home = os.path.realpath(os.path.expanduser("~"))
    if package.startswith(host_home + os.sep):
        expected = [os.path.relpath(package, host_home).split(os.sep)[0]]
    assert home["stdout"] == f"{expected!r}\n", home
    shadow = kernel.execute("open('/etc/shadow').read()")
    assert "PermissionError" in error_of(shadow) or "No such file" in error_of(shadow)
    assert_usable(kernel)


def test_writes_outside_the_workspace_are_refused(kernel, workspace):
    from openai4s.kernel import manager

    package_dir = os.path.dirname(manager.__file__)
    for target in ("/usr/o4s-evil", "/o4s-evil", os.path.join(package_dir, "evil.py")):
        result = kernel.execute(f"open({target!r}, 'w')")
        assert "Read-only file system" in error_of(result), (target, result)
        assert not os.path.exists(target)
    # The workspace's parent is host /tmp in this test: inside, that is a
    # private tmpfs, so a write there never reaches the host.
    beside = workspace.parent / "beside.txt"
    result = kernel.execute(f"open({str(beside)!r}, 'w').write('x')")
    assert not beside.exists()
    written = kernel.execute("open('inside.txt', 'w').write('ok')")
    assert written["error"] is None, written
    assert (workspace / "inside.txt").read_text() == "ok"
    assert_usable(kernel)


def test_a_symlink_out_of_the_workspace_leads_nowhere(kernel, workspace, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    (workspace / "link").symlink_to(secret)
    (workspace / "etc-link").symlink_to("/root")

    result = kernel.execute("open('link').read()")
    assert "FileNotFoundError" in error_of(result)
    listing = kernel.execute("import os; print(os.listdir('etc-link'))")
    assert listing["stdout"] == "[]\n", listing
    assert_usable(kernel)


def test_a_tcp_connection_to_a_host_loopback_listener_is_refused(kernel, loopback_listener):
    result = kernel.execute(
        "import socket\n" f"socket.create_connection(('127.0.0.1', {loopback_listener}), timeout=5)"
    )
    assert "ConnectionRefusedError" in error_of(result)
    status = kernel.sandbox_status
    assert status["network_policy"] == "blocked"
    assert_usable(kernel)


def test_a_host_process_can_be_neither_seen_nor_signalled(kernel, host_process):
    pid, _ = host_process
    result = kernel.execute(f"import os; os.kill({pid}, 9)")
    assert "ProcessLookupError" in error_of(result)
    assert os.waitpid(pid, os.WNOHANG) == (0, 0), "the host process was killed"
    listing = kernel.execute(
        "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
    )
    visible = eval(listing["stdout"])
    # Only the sandbox's own init and worker (its pids count from 1).
    assert len(visible) < 10, visible
    # PID 1 inside is the sandbox's own init, not the host's.
    init = kernel.execute("print(open('/proc/1/cmdline').read().split(chr(0))[0])")
    assert init["stdout"].strip().endswith("bwrap"), init
    assert_usable(kernel)


def test_no_proc_environ_holds_a_host_secret(kernel, host_process):
    _, secret = host_process
    result = kernel.execute(
        "import glob\n"
        "found = []\n"
        "for path in glob.glob('/proc/*/environ') + glob.glob('/proc/*/task/*/environ'):\n"
        "    try:\n"
        "        data = open(path, 'rb').read()\n"
        "    except OSError:\n"
        "        continue\n"
        f"    if {secret.encode()!r} in data or b'OPENAI4S_LLM_API_KEY' in data:\n"
        "        found.append(path)\n"
        "print(found)"
    )
    assert result["error"] is None, result
    assert result["stdout"] == "[]\n"


_LIBC = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def test_ptrace_is_denied(kernel):
    result = kernel.execute(
        _LIBC + "child = os.fork()\n"
        "if child == 0:\n"
        "    import time; time.sleep(30); os._exit(0)\n"
        "rc = libc.ptrace(16, child, None, None)  # PTRACE_ATTACH\n"
        "err = ctypes.get_errno()\n"
        "os.kill(child, 9); os.waitpid(child, 0)\n"
        "print(rc, os.strerror(err))"
    )
    assert result["error"] is None, result
    assert result["stdout"] == "-1 Operation not permitted\n"


#: Syscalls without a libc wrapper: bpf, keyctl, perf_event_open.
_RAW_SYSCALLS = {"x86_64": (321, 250, 298), "aarch64": (280, 219, 241)}


def test_namespace_mount_and_kernel_interfaces_are_denied(kernel):
    bpf, keyctl, perf = _RAW_SYSCALLS.get(platform.machine(), (None, None, None))
    if bpf is None:
        pytest.skip(f"no syscall numbers recorded for {platform.machine()}")
    result = kernel.execute(
        _LIBC + "def call(name, *args):\n"
        "    rc = getattr(libc, name)(*args)\n"
        "    return (rc, os.strerror(ctypes.get_errno()) if rc == -1 else '')\n"
        "print(call('unshare', 0x10000000))  # CLONE_NEWUSER\n"
        "print(call('unshare', 0x00020000))  # CLONE_NEWNS\n"
        "print(call('mount', b'none', b'/tmp', b'tmpfs', 0, None))\n"
        f"print(call('syscall', {bpf}, 0, None, 0))\n"
        f"print(call('syscall', {keyctl}, 0, 0, 0))\n"
        f"print(call('syscall', {perf}, None, 0, -1, -1, 0))\n"
    )
    assert result["error"] is None, result
    lines = result["stdout"].splitlines()
    assert lines == ["(-1, 'Operation not permitted')"] * 6, lines
    assert_usable(kernel)


def _linked_interpreter(parent, prefix):
    """A new directory in `parent` holding `python`, a symbolic link to the
    real interpreter; returns (directory, link)."""
    import tempfile

    runtime = tempfile.mkdtemp(prefix=prefix, dir=parent)
    os.chmod(runtime, 0o755)  # as an interpreter's directory is
    python = os.path.join(runtime, "python")
    os.symlink(os.path.realpath(sys.executable), python)
    return runtime, python


def test_an_interpreter_right_under_the_temp_root_does_not_show_the_host_temp_dir(sandboxed):
    # A worker interpreter at /tmp/<dir>/python: its install prefix would be
    # /tmp itself, and binding that read-only would show the cell every temp
    # file of the host. Only the interpreter's own directory is shown.
    import shutil
    import tempfile

    top = tempfile.gettempdir()
    if os.path.dirname(os.path.realpath(top)) != "/":
        pytest.skip(f"the temp root {top} is not a top-level directory")
    runtime, python = _linked_interpreter(top, "o4s-shallow-python-")
    secret_dir = tempfile.mkdtemp(prefix="o4s-host-temp-", dir=top)
    try:
        secret = os.path.join(secret_dir, "secret.txt")
        with open(secret, "w") as handle:
            handle.write("host temp secret")
        kernel = sandboxed(python=python)
        result = kernel.execute(f"open({secret!r}).read()")
        assert "FileNotFoundError" in error_of(result), result
        listing = kernel.execute(f"import os; print(sorted(os.listdir({top!r})))")
        assert os.path.basename(secret_dir) not in listing["stdout"], listing
        assert_usable(kernel)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.rmtree(secret_dir, ignore_errors=True)


def test_a_symlinked_interpreter_in_the_home_runs_and_shows_nothing_beside_it(sandboxed):
    # ~/<dir>/python -> the real interpreter: the link alone is bound, over
    # the home's private tmpfs (so after it: mounted before, the tmpfs would
    # hide it and the worker could not start), and its directory shows
    # nothing else.
    import shutil

    home = os.path.realpath(os.path.expanduser("~"))
    if not os.access(home, os.W_OK):
        pytest.skip(f"the home {home} is not writable here")
    runtime, python = _linked_interpreter(home, "o4s-home-link-")
    try:
        beside = os.path.join(runtime, "notes.txt")
        with open(beside, "w") as handle:
            handle.write("host home secret")
        kernel = sandboxed(python=python)
        result = kernel.execute(
            "import os, sys\n"
            f"print(sys.executable, sorted(os.listdir({runtime!r})))\n"
            f"print(os.path.exists({beside!r}))"
        )
        assert result["error"] is None, result
        assert result["stdout"] == f"{python} ['python']\nFalse\n", result
        assert_usable(kernel)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def test_a_venv_at_a_top_level_directory_keeps_its_packages(sandboxed):
    # /venv/bin/python (a common container layout): its prefix is a whole
    # top-level directory, shown because it is an interpreter's prefix, so
    # the packages installed in it stay importable.
    import shutil
    import subprocess
    import tempfile

    if os.geteuid() != 0 or not os.access("/", os.W_OK):
        pytest.skip("making a top-level directory needs root")
    venv = tempfile.mkdtemp(prefix="o4s-toplevel-venv-", dir="/")
    try:
        os.chmod(venv, 0o755)
        subprocess.run(
            [os.path.realpath(sys.executable), "-m", "venv", "--without-pip", venv],
            check=True,
            timeout=120,
        )
        site = subprocess.run(
            [
                os.path.join(venv, "bin", "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        with open(os.path.join(site, "o4s_venv_marker.py"), "w") as handle:
            handle.write("WHERE = 'venv'\n")
        kernel = sandboxed(python=os.path.join(venv, "bin", "python"))
        result = kernel.execute(
            "import o4s_venv_marker, sys; print(o4s_venv_marker.WHERE, sys.prefix)"
        )
        assert result["error"] is None, result
        assert result["stdout"] == f"venv {venv}\n"
    finally:
        shutil.rmtree(venv, ignore_errors=True)
