import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from worker_harness import WorkerProcess  # noqa: E402


@pytest.fixture
def spawn(tmp_path):
    """spawn(**kw) -> a handshaken WorkerProcess; every one is killed after."""
    started = []

    def factory(*, cwd=None, handshake=True, **kwargs):
        worker = WorkerProcess(cwd or tmp_path, **kwargs)
        started.append(worker)
        if handshake:
            worker.handshake()
        return worker

    try:
        yield factory
    finally:
        for worker in started:
            worker.kill()


@pytest.fixture
def worker(spawn):
    return spawn()
