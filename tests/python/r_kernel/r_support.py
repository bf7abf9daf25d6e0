"""Helpers shared by the R kernel tests."""

import threading

TEST_LIMITS = {
    "OPENAI4S_KERNEL_MEMORY_LIMIT": "2G",
    "OPENAI4S_KERNEL_PROCESS_LIMIT": "128",
    "OPENAI4S_KERNEL_FILE_SIZE_LIMIT": "64M",
}


class ChunkWatcher:
    """An on_chunk callback that can be waited on for some text."""

    def __init__(self):
        self.text = ""
        self._changed = threading.Condition()

    def __call__(self, chunk):
        with self._changed:
            self.text += chunk
            self._changed.notify_all()

    def wait_for(self, needle, timeout=120):
        with self._changed:
            return self._changed.wait_for(lambda: needle in self.text, timeout)


def run_in_thread(fn):
    """Starts fn on a thread; returns (thread, box) where box gets its result."""
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:  # reported by the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box
