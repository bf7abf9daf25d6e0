import pytest

from jupyter_support import KernelEnvironment, kernel_missing_reason
from kernel_client import RunningKernel


@pytest.fixture
def environment():
    reason = kernel_missing_reason()
    if reason:
        pytest.skip(reason)
    env = KernelEnvironment()
    yield env
    env.cleanup()


@pytest.fixture
def kernel(environment):
    running = RunningKernel(environment)
    yield running
    running.shutdown()
