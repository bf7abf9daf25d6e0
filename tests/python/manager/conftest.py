import pytest

from openai4s.kernel import Kernel


@pytest.fixture
def kernel(tmp_path):
    k = Kernel(dispatcher=lambda method, args: "pong" if method == "ping" else None, cwd=tmp_path)
    try:
        yield k
    finally:
        k.shutdown()
