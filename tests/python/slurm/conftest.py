import os

import pytest

import slurm_support


@pytest.fixture(scope="session")
def cluster():
    """The one-node cluster, started by the project's script unless it was
    already up (then left running); skipped only when it cannot run here."""
    reason = slurm_support.missing_reason()
    if reason:
        pytest.skip(reason)
    already_up = slurm_support.script("status").returncode == 0
    if not already_up:
        started = slurm_support.script("start")
        if started.returncode != 0:
            pytest.skip(f"the Slurm daemons cannot run here: {started.stderr.strip()}")
    saved = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = slurm_support.slurm_conf()
    yield os.environ["SLURM_CONF"]
    if saved is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = saved
    if not already_up:
        slurm_support.script("stop")


@pytest.fixture
def slurm_env(cluster):
    env = slurm_support.SlurmEnvironment()
    yield env
    env.cleanup()
