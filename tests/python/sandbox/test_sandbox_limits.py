"""Resource limits: bombs end as clear results, the host is unaffected and
the kernel stays usable or restarts cleanly. The conftest lowers the limits
(1 GiB memory, 64 tasks, 64 MiB files) so each bomb goes off in well under a
second."""

import subprocess
import time

import pytest

from sandbox_support import assert_usable, error_of


def test_the_status_reports_the_limits_in_force(kernel):
    limits = kernel.sandbox_status["limits"]
    assert limits["memory_bytes"] == 1 << 30
    assert limits["processes"] == 64
    assert limits["file_size_bytes"] == 64 << 20
    assert not limits["processes_enforced_by"].startswith("none"), limits


def test_a_bounded_fork_loop_is_refused_at_the_process_limit(kernel):
    result = kernel.execute(
        "import os, time\n"
        "children = []\n"
        "try:\n"
        "    while True:\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        children.append(pid)\n"
        "except OSError as exc:\n"
        "    print('refused after', len(children), exc.strerror)\n"
        "for pid in children:\n"
        "    os.kill(pid, 9)\n"
        "    os.waitpid(pid, 0)\n"
    )
    assert result["error"] is None, result
    words = result["stdout"].split()
    assert words[:2] == ["refused", "after"], result
    assert int(words[2]) < 64
    assert "Resource temporarily unavailable" in result["stdout"]
    assert_usable(kernel)


def test_a_fork_bomb_is_contained_and_the_kernel_restarts(kernel):
    started = time.monotonic()
    result = kernel.execute("import os\nwhile True:\n    os.fork()\n")
    assert "BlockingIOError" in error_of(result) or "Resource temporarily" in error_of(result)
    assert time.monotonic() - started < 10
    # The host still forks freely.
    assert subprocess.run(["true"], timeout=10).returncode == 0
    # Every copy of the worker the bomb made shares its protocol pipes; only a
    # restart gives a clean kernel back, and it does.
    kernel.restart()
    assert_usable(kernel)


def test_a_memory_bomb_ends_as_a_memory_error_and_the_kernel_survives(kernel):
    result = kernel.execute("hoard = []\nwhile True:\n    hoard.append(bytearray(64 << 20))\n")
    assert "MemoryError" in error_of(result)
    freed = kernel.execute("del hoard\nprint('freed')")
    assert freed["stdout"] == "freed\n", freed
    big = kernel.execute("buffer = bytearray(8 << 30)")
    assert "MemoryError" in error_of(big)
    kernel.restart()
    assert_usable(kernel)


# Unreclaimable ballast in the sandbox's tmpfs (charged to its memory cgroup,
# not to any process's RLIMIT_AS; in files under the file size limit), then
# a child that grows until the cgroup
# is full: the kernel's OOM killer ends the child (the largest process, and
# it asks to be chosen), while the cell itself carries on.
OOM_CELL = (
    "import os, subprocess, sys\n"
    "ballast = [f'/dev/shm/ballast{i}' for i in range(22)]\n"
    "for path in ballast:\n"
    "    with open(path, 'wb') as handle:\n"
    "        handle.write(b'x' * (32 << 20))\n"
    "grow = (\n"
    '    \'open("/proc/self/oom_score_adj", "w").write("1000")\\n\'\n'
    "    'chunks = []\\n'\n"
    "    'while True:\\n'\n"
    "    '    chunks.append(b\"x\" * (32 << 20))\\n'\n"
    ")\n"
    "try:\n"
    "    child = subprocess.run([sys.executable, '-c', grow], capture_output=True)\n"
    "finally:\n"
    "    for path in ballast:\n"
    "        os.unlink(path)\n"
    "print('child', child.returncode)\n"
)


@pytest.mark.parametrize("mode", ["enforce", "auto"])
def test_a_child_killed_by_the_oom_killer_is_reported(sandboxed, mode):
    kernel = sandboxed(mode=mode)
    if "cgroup" not in kernel.sandbox_status["envelope"]["memory"]["enforced_by"]:
        pytest.skip(
            "no memory cgroup: " + kernel.sandbox_status["envelope"]["memory"]["enforced_by"]
        )
    result = kernel.execute(OOM_CELL)
    assert result["error"] is None, result
    assert result["stdout"] == "child -9\n", result
    assert result["usage"]["oom_kills"] >= 1, result["usage"]
    assert "OOM killer ended" in result["stderr"], result["stderr"]
    assert "memory limit (1.0 GiB" in result["stderr"], result["stderr"]
    # Said once: the next cell has nothing to report.
    quiet = kernel.execute("pass")
    assert "oom_kills" not in quiet.get("usage", {}), quiet
    assert "OOM" not in (quiet["stderr"] or "")
    assert_usable(kernel)


def test_a_ten_gigabyte_file_write_fails_with_file_too_large(kernel, workspace):
    # Sparse: seeking past the limit makes the write itself exceed it, so the
    # test needs no disk space and no time.
    result = kernel.execute(
        "with open('huge.bin', 'wb') as handle:\n"
        "    handle.seek(10 * 2**30)\n"
        "    handle.write(b'x')\n"
    )
    assert "File too large" in error_of(result)
    assert (workspace / "huge.bin").stat().st_size < 10 * 2**30
    streamed = kernel.execute(
        "chunk = b'x' * (1 << 20)\n"
        "with open('big.bin', 'wb') as handle:\n"
        "    for _ in range(2048):\n"
        "        handle.write(chunk)\n"
    )
    assert "File too large" in error_of(streamed)
    (workspace / "big.bin").unlink()
    assert_usable(kernel)
