"""One resource envelope per sandbox: memory (tmpfs included), processes and
CPU time count every process of the sandbox together, not each on its own.
The conftest's limits apply (1 GiB memory, 64 tasks)."""

import pytest

from sandbox_support import assert_usable, pids_with_marker

# Four children each touching 512 MiB: each fits the per-process RLIMIT_AS,
# together they need twice the sandbox's 1 GiB.
FOUR_HOARDERS = """
import os, time
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        hoard = b'x' * (512 << 20)
        open('/tmp/held-%d' % os.getpid(), 'w').close()
        time.sleep(30)
        os._exit(0)
    children.append(pid)
dead = set()
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    for pid in children:
        if pid not in dead and os.waitpid(pid, os.WNOHANG) != (0, 0):
            dead.add(pid)
    held = [pid for pid in children if os.path.exists('/tmp/held-%d' % pid)]
    if len(set(held) | dead) == 4:
        break
    time.sleep(0.1)
alive = [pid for pid in children if pid not in dead]
for pid in alive:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
print('alive', len(alive))
"""


def test_four_forked_hoarders_do_not_all_fit_in_the_sandbox(kernel):
    result = kernel.execute(FOUR_HOARDERS)
    if result["error"] is None:
        alive = int(result["stdout"].split()[-1])
        assert alive < 4, result
    else:
        # The memory cgroup may pick the worker itself; the result must say
        # which limit ended it, and the kernel restarts cleanly.
        assert "memory limit" in result["error"], result
    kernel.restart()
    assert_usable(kernel)


def test_tmpfs_files_count_against_the_sandbox_memory(kernel):
    # 600 MiB in each private tmpfs (each is within its own 1 GiB size) is
    # 1.2 GiB of memory held by files: more than the sandbox's 1 GiB.
    result = kernel.execute(
        "chunk = b'x' * (8 << 20)\n"
        "for path in ('/tmp/fill', '/dev/shm/fill'):\n"
        "    with open(path, 'wb') as handle:\n"
        "        for _ in range(75):\n"
        "            handle.write(chunk)\n"
        "print('both written')\n"
    )
    assert result["stdout"] != "both written\n", result
    assert result["error"], result
    kernel.restart()
    assert_usable(kernel)


@pytest.fixture
def cpu_limited(sandboxed, monkeypatch):
    monkeypatch.setenv("OPENAI4S_KERNEL_CPU_LIMIT", "3")
    return sandboxed()


def test_forked_cpu_spinners_share_one_cpu_budget(cpu_limited):
    marker = "o4s-spinner-" + str(id(cpu_limited))
    cell = (
        "import os, resource, time\n"
        "children = []\n"
        "for _ in range(3):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        f"        os.execvp('python3', ['python3', '-c', 'while True: pass', {marker!r}])\n"
        "    children.append(pid)\n"
        "cpu = 0.0\n"
        "for pid in children:\n"
        "    _, _, usage = os.wait4(pid, 0)\n"
        "    cpu += usage.ru_utime + usage.ru_stime\n"
        "print('children cpu', round(cpu, 1))\n"
    )
    try:
        result = cpu_limited.execute(cell)
    except RuntimeError as exc:
        # The watchdog ends the whole sandbox: the worker is gone, and the
        # error names the limit.
        assert "CPU limit" in str(exc), exc
    else:
        # Under per-process RLIMIT_CPU alone, each spinner gets 3 s: 9 s.
        assert result["error"] is None or "CPU limit" in result["error"], result
        if result["error"] is None:
            assert float(result["stdout"].split()[-1]) <= 4.5, result
    assert pids_with_marker(marker) == []
    cpu_limited.restart()
    assert_usable(cpu_limited)


def test_the_status_reports_the_envelope(kernel):
    envelope = kernel.sandbox_status["envelope"]
    for resource in ("memory", "processes", "cpu"):
        assert resource in envelope, envelope
        assert "enforced_by" in envelope[resource], envelope
    assert envelope["memory"]["limit"] == 1 << 30
    assert "cgroup" in envelope["memory"]["enforced_by"], envelope
    assert "cgroup" in envelope["processes"]["enforced_by"], envelope
    assert envelope["memory"]["includes_tmpfs"] is True
    assert envelope["processes"]["limit"] == 64
