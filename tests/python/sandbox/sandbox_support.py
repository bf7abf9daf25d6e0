"""Helpers shared by the sandbox tests."""

import os

#: Small limits keep the bombs fast: the defaults (half of RAM, 1024 tasks)
#: would take tens of seconds to reach.
TEST_LIMITS = {
    "OPENAI4S_KERNEL_MEMORY_LIMIT": "1G",
    "OPENAI4S_KERNEL_PROCESS_LIMIT": "64",
    "OPENAI4S_KERNEL_FILE_SIZE_LIMIT": "64M",
}


def echo_dispatcher(method, args):
    if method == "ping":
        return "pong"
    raise ValueError(f"unknown method {method}")


def error_of(result):
    """The cell's error text, asserting there is one."""
    assert result["error"], f"the cell was expected to fail: {result}"
    return result["error"]


def assert_usable(kernel):
    """The kernel still runs cells after whatever the test did to it."""
    result = kernel.execute("print('still here')")
    assert result["error"] is None, result
    assert result["stdout"] == "still here\n"


def process_running(pid):
    """Present and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def pids_with_marker(marker):
    """Host pids of processes whose command line contains `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found
