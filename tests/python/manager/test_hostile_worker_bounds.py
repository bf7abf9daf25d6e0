"""A cell that writes forged frames onto its own protocol pipe must not make
the host hold, or hand back, more than the documented bounds (spec §3.11:
1,000,000 chars of stdout plus one marker), through a real host and worker."""

import json
import threading

from openai4s.kernel import Kernel

FRAME_TEXT_CHARS = 64_000
FORGED_FRAMES = 600  # 38.4 MB of forged stdout: far past every bound

FORGE = """
import json, sys
out = sys._openai4s_protocol_stdout
line = json.dumps({{"type": "stdout_chunk", "id": "forger", "text": "F" * {chars}}}) + "\\n"
for _ in range({frames}):
    out.write(line)
    out.flush()
print("done forging")
"""

OUTPUT_BOUND = 1_000_000 + 4_200  # the chars plus the longest marker (a spill path)


def _rss_bytes():
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    import resource

    return pages * resource.getpagesize()


class _PeakRss:
    """Samples this process's resident size while a cell runs."""

    def __init__(self):
        self.base = _rss_bytes()
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, _rss_bytes())

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def test_forged_chunks_with_the_cell_s_own_id_are_bounded(tmp_path):
    code = FORGE.format(chars=FRAME_TEXT_CHARS, frames=FORGED_FRAMES)
    with Kernel(cwd=tmp_path) as k:
        k.execute("pass")  # worker up and the host's steady state reached
        seen_bytes = 0

        def count(text):
            nonlocal seen_bytes
            seen_bytes += len(text.encode())

        with _PeakRss() as rss:
            result = k.execute(code, cell_id="forger", on_chunk=count)
        assert result["error"] is None, result["error"]
        assert len(result["stdout"]) <= OUTPUT_BOUND
        # Live delivery has a budget of its own (well under the flood).
        assert seen_bytes <= 8_000_000
        # The flood is 38 MB; the host keeps a bounded part of it.
        assert rss.peak - rss.base < 32 * 1024 * 1024, rss.peak - rss.base
        assert k.execute("print('still aligned')")["stdout"] == "still aligned\n"


def test_a_forged_oversized_response_is_cut_to_the_documented_bound(tmp_path):
    # A response frame written by the cell itself under its own id is taken
    # as the answer (the id matches); its text fields must still be bounded.
    forge = (
        "import json, sys\n"
        "out = sys._openai4s_protocol_stdout\n"
        "out.write(json.dumps({'type': 'response', 'id': 'forger', 'stdout': 'S' * 3_000_000,"
        " 'stderr': 'E' * 3_000_000, 'error': 'R' * 3_000_000, 'interrupted': False,"
        " 'trace': {'error_lineno': None, 'error_call': 'C' * 3_000_000},"
        " 'files_read': ['p' * 100] * 50_000, 'usage': {}}) + '\\n')\n"
        "out.flush()\n"
    )
    with Kernel(cwd=tmp_path) as k:
        result = k.execute(forge, cell_id="forger")
        for field in ("stdout", "stderr", "error"):
            assert len(result[field]) <= OUTPUT_BOUND, field
        # Any other field: at most 1,000,000 bytes serialised.
        for field in ("trace", "files_read"):
            assert len(json.dumps(result[field], separators=(",", ":"))) <= 1_000_000, field
        # The real response of that cell arrives later and is dropped as
        # stale; the kernel stays aligned.
        assert k.execute("print('next')")["stdout"] == "next\n"


# 400,000 one-character displays: their payload is 400 kB, far under the
# 64 MB display budget, but each one kept is an object on the host.
DISPLAY_FLOOD = """
for i in range(400_000):
    display(1)
print("flooded")
"""


def test_a_flood_of_tiny_displays_keeps_the_host_bounded(tmp_path):
    with Kernel(cwd=tmp_path) as k:
        k.execute("pass")  # worker up and the host's steady state reached
        with _PeakRss() as rss:
            result = k.execute(DISPLAY_FLOOD)
        assert result["error"] is None, result["error"]
        assert result["stdout"] == "flooded\n"
        displays = result["displays"]
        # At most 10,000 kept, then one marker that says how many were not.
        assert len(displays) == 10_001
        assert result["displays_truncated"] is True
        assert result["displays_dropped"] == 390_000
        marker = displays[-1]
        assert marker["metadata"]["openai4s"]["dropped_displays"] == 390_000
        assert "390000 more displays dropped" in marker["data"]["text/plain"]
        # Once grew the host by 560-610 MiB; now well under the budget.
        grew = rss.peak - rss.base
        assert grew < 96 * 1024 * 1024, f"host RSS grew by {grew // (1024 * 1024)} MiB"
        assert k.execute("print('still aligned')")["stdout"] == "still aligned\n"
