"""Negative tests for kernels side by side: one kernel must not exhaust what
Linux counts per uid (inotify instances, POSIX message queue bytes, queued
signals) for another. A root host gives each kernel a host uid of its own;
a non-root host cannot, and its status says what is then shared."""

import os

import time

import pytest

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

from sandbox_support import assert_usable

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="only a root host can give kernels uids")

# Each probe: the cell that takes all of one per-uid resource (and keeps it
# in the worker's globals), and the cell that needs one of it.
EXHAUST_INOTIFY = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "held = []\n"
    "while len(held) < 4096:\n"
    "    fd = libc.inotify_init1(0)\n"
    "    if fd < 0:\n"
    "        print('stopped', os.strerror(ctypes.get_errno()), len(held))\n"
    "        break\n"
    "    held.append(fd)\n"
)
NEEDS_INOTIFY = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "fd = libc.inotify_init1(0)\n"
    "print('ok' if fd >= 0 else os.strerror(ctypes.get_errno()))\n"
)
MQUEUE_HELPERS = (
    "import ctypes, os\n"
    "rt = ctypes.CDLL('librt.so.1', use_errno=True)\n"
    "rt.mq_open.restype = ctypes.c_int\n"
    "rt.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]\n"
    "def open_queue(name):\n"
    "    return rt.mq_open(name.encode(), os.O_CREAT | os.O_RDWR, 0o600, None)\n"
)
EXHAUST_MQUEUE = MQUEUE_HELPERS + (
    "held = []\n"
    "while len(held) < 4096:\n"
    "    fd = open_queue(f'/o4s-hog-{len(held)}')\n"
    "    if fd < 0:\n"
    "        print('stopped', os.strerror(ctypes.get_errno()), len(held))\n"
    "        break\n"
    "    held.append(fd)\n"
)
NEEDS_MQUEUE = MQUEUE_HELPERS + (
    "fd = open_queue('/o4s-needed')\n"
    "print('ok' if fd >= 0 else os.strerror(ctypes.get_errno()))\n"
)
# Real-time signals queue one entry per send while blocked, each charged to
# the receiver's uid up to RLIMIT_SIGPENDING. Sent to the main thread alone
# (pthread_kill), which blocks them: the worker's other threads do not.
EXHAUST_SIGNALS = (
    "import os, signal, threading\n"
    "main = threading.main_thread().ident\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN})\n"
    "queued = 0\n"
    "while queued < 1 << 22:\n"
    "    try:\n"
    "        signal.pthread_kill(main, signal.SIGRTMIN)\n"
    "    except OSError as exc:\n"
    "        print('stopped', exc.strerror, queued)\n"
    "        break\n"
    "    queued += 1\n"
)
NEEDS_SIGNAL = (
    "import signal, threading\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN + 1})\n"
    "try:\n"
    "    signal.pthread_kill(threading.main_thread().ident, signal.SIGRTMIN + 1)\n"
    "    print('ok')\n"
    "except OSError as exc:\n"
    "    print(exc.strerror)\n"
)


def run(kernel, code):
    result = kernel.execute(code)
    assert result["error"] is None, result
    return result["stdout"]


@needs_root
@pytest.mark.parametrize(
    "exhaust, needs, refusal",
    [
        (EXHAUST_INOTIFY, NEEDS_INOTIFY, "Too many open files"),
        (EXHAUST_MQUEUE, NEEDS_MQUEUE, "Too many open files"),
        (EXHAUST_SIGNALS, NEEDS_SIGNAL, "Resource temporarily unavailable"),
    ],
    ids=["inotify", "mqueue", "sigpending"],
)
def test_one_kernel_cannot_exhaust_a_per_uid_limit_of_another(sandboxed, exhaust, needs, refusal):
    attacker, victim = sandboxed(), sandboxed()
    # The attacker really reached the per-uid limit (not a limit of its own
    # process, nor the loop's bound).
    said = run(attacker, exhaust)
    assert said.startswith("stopped " + refusal), said
    assert run(victim, needs) == "ok\n"
    assert_usable(attacker)


@needs_root
def test_each_kernel_runs_as_a_host_uid_of_its_own(sandboxed):
    first, second = sandboxed(), sandboxed()
    ids = [kernel.sandbox_status["identity"] for kernel in (first, second)]
    assert ids[0]["host_uid"] != ids[1]["host_uid"], ids
    assert ids[0]["host_gid"] != ids[1]["host_gid"], ids
    for identity in ids:
        assert identity["own_uid"] is True, identity
        assert identity["shared"] is None, identity
        assert identity["host_uid"] not in (0, 65534), identity
    # RLIMIT_NPROC now counts this kernel's tasks alone, so it is set.
    limits = run(first, "print(open('/proc/self/limits').read())")
    assert [line.split()[2] for line in limits.splitlines() if "Max processes" in line] == ["64"]
    enforced_by = first.sandbox_status["limits"]["processes_enforced_by"]
    assert "RLIMIT_NPROC" in enforced_by, enforced_by
    # A restart keeps the kernel's uid: the files it made stay its own.
    uid = ids[0]["host_uid"]
    first.restart()
    assert first.sandbox_status["identity"]["host_uid"] == uid
    run(first, "open('mine.txt', 'w').write('x')")
    assert os.stat(first.sandbox_status["workspace"] + "/mine.txt").st_uid == uid


@needs_root
def test_a_workspaces_next_kernel_gets_the_uid_its_files_belong_to(
    sandbox_unavailable_reason, limits, tmp_path
):
    if sandbox_unavailable_reason is not None:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {sandbox_unavailable_reason}")
    first_space, second_space = tmp_path / "first", tmp_path / "second"
    first_space.mkdir()
    second_space.mkdir()

    def start(space):
        return Kernel(cwd=str(space), sandbox=sandbox_for(str(space), mode="enforce"))

    first = start(first_space)
    second = start(second_space)
    try:
        run(second, "open('notes.txt', 'w').write('draft')")
        owner = second.sandbox_status["identity"]["host_uid"]
        assert (second_space / "notes.txt").stat().st_uid == owner
        second.shutdown()
        first.shutdown()
        # Both uids are free now; the lowest is the first kernel's, but the
        # second workspace's files belong to the other one. (Another test's
        # kernel may lease that uid meanwhile, under pytest-xdist: then
        # this one waits for it and tries again.)
        for _ in range(20):
            second = start(second_space)
            if second.sandbox_status["identity"]["host_uid"] == owner:
                break
            second.shutdown()
            time.sleep(0.5)
        assert second.sandbox_status["identity"]["host_uid"] == owner
        run(second, "open('notes.txt', 'a').write(' and more')")
        assert (second_space / "notes.txt").read_text() == "draft and more"
    finally:
        first.shutdown()
        second.shutdown()


@needs_root
def test_a_fixed_sandbox_uid_is_shared_and_says_so(sandboxed, monkeypatch):
    monkeypatch.setenv("OPENAI4S_SANDBOX_UID", "65534")
    identity = sandboxed().sandbox_status["identity"]
    assert identity["host_uid"] == 65534 and identity["own_uid"] is False, identity
    assert "OPENAI4S_SANDBOX_UID" in identity["shared"], identity
    assert "inotify" in identity["shared"], identity


@pytest.mark.skipif(ROOT, reason="a root host gives each kernel a uid of its own")
def test_a_non_root_host_says_what_its_kernels_share(sandboxed):
    identity = sandboxed().sandbox_status["identity"]
    assert identity["own_uid"] is False, identity
    assert "not root" in identity["shared"] and "inotify" in identity["shared"], identity
