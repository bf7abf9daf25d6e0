import os

import pytest

import slurm_support


@pytest.fixture(scope="session")
def cluster():
    """The one-node cluster, started by the project's script unless it was
    already up; shared by every pytest-xdist worker (the last one out stops
    it, and only if the tests started it); skipped only when it cannot run."""
    reason = slurm_support.missing_reason()
    if reason:
        pytest.skip(reason)
    with slurm_support.ClusterUsers() as users:
        failure = users.join()
    if failure:
        pytest.skip(f"the Slurm daemons cannot run here: {failure}")
    saved = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = slurm_support.slurm_conf()
    yield os.environ["SLURM_CONF"]
    if saved is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = saved
    with slurm_support.ClusterUsers() as users:
        users.leave()


@pytest.fixture
def slurm_env(cluster):
    env = slurm_support.SlurmEnvironment()
    yield env
    env.cleanup()
