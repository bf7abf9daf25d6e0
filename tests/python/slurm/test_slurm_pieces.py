"""The provisioner's pieces without a cluster: how Slurm's answers are
read, the private hand-off files, the node-side launcher run as the job
would run it, the `--slurm` kernelspec, and the entry point `make setup`
registers."""

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from openai4s.slurm import handoff, lease, slurm_cli

NODE = Path(handoff.__file__).with_name("node.py")


def test_an_ended_job_is_read_from_scontrol():
    line = (
        "JobId=12 JobName=openai4s-ab UserId=u(1) JobState=TIMEOUT Reason=TimeLimit "
        "Dependency=(null) ExitCode=0:15 RunTime=00:01:03 NodeList=node7 BatchHost=node7"
    )
    status = slurm_cli.parse_scontrol("12", line)
    assert (status.state, status.reason, status.nodes) == ("TIMEOUT", "TimeLimit", "node7")
    assert not status.active
    assert status.exit_status() == 128 + 15
    assert status.describe() == "Slurm job 12 on node7 ended: TIMEOUT (TimeLimit), exit code 0:15"


@pytest.mark.parametrize(
    "state, code, expected",
    [
        ("COMPLETED", "0:0", 0),
        ("COMPLETED", "3:0", 3),
        ("NODE_FAIL", "0:0", 1),
        ("PREEMPTED", "0:9", 137),
    ],
)
def test_an_end_slurm_imposed_is_never_status_zero(state, code, expected):
    assert slurm_cli.JobStatus("1", state, exit_code=code).exit_status() == expected


def test_sacct_is_read_when_slurmctld_forgot_the_job():
    status = slurm_cli.parse_sacct("9", "CANCELLED by 1000|None|0:15|node3\n")
    assert (status.state, status.exit_code, status.nodes) == ("CANCELLED", "0:15", "node3")
    assert slurm_cli.parse_sacct("9", "") is None


def test_private_files_are_0600_and_a_loosened_one_is_refused(tmp_path):
    path = tmp_path / "launch.json"
    handoff.write_private(str(path), {"key": "k"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert handoff.read_private(str(path)) == {"key": "k"}
    path.chmod(0o644)
    with pytest.raises(handoff.HandoffError, match="not private"):
        handoff.read_private(str(path))


def _kernel_dir(tmp_path, mode=0o600):
    directory = tmp_path / "kernel"
    directory.mkdir(mode=0o700)
    handoff.write_private(str(directory / handoff.LAUNCH), {"key": "s3cret", "ip": "127.0.0.1"})
    (directory / handoff.LAUNCH).chmod(mode)
    return directory


def _node(directory, *command):
    return subprocess.run(
        [sys.executable, str(NODE), str(directory), "--", *command],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.environ["PATH"], "SLURM_JOB_ID": "77"},
    )


def test_the_node_side_writes_the_connection_file_and_reports_ports_without_the_key(tmp_path):
    directory = _kernel_dir(tmp_path)
    done = _node(directory, "sh", "-c", 'echo "$0 ran"')
    assert done.returncode == 0 and done.stdout == "sh ran\n", done.stderr
    connection = handoff.read_private(str(directory / handoff.CONNECTION))
    ready = handoff.read_private(str(directory / handoff.READY))
    ports = [connection[f"{name}_port"] for name in ("shell", "iopub", "stdin", "control", "hb")]
    assert len(set(ports)) == 5 and all(port > 0 for port in ports)
    assert connection["key"] == "s3cret" and connection["ip"] == "127.0.0.1"
    assert "key" not in ready and "s3cret" not in json.dumps(ready)
    assert ready["job_id"] == "77" and ready["shell_port"] == connection["shell_port"]


def test_a_restart_on_the_same_node_gets_its_old_ports_back(tmp_path):
    directory = _kernel_dir(tmp_path)
    assert _node(directory, "true").returncode == 0
    first = handoff.read_private(str(directory / handoff.READY))
    launch = handoff.read_private(str(directory / handoff.LAUNCH))
    for name in (handoff.READY, handoff.CONNECTION, handoff.LAUNCH):
        (directory / name).unlink()
    handoff.write_private(str(directory / handoff.LAUNCH), {**launch, "previous": first})
    assert _node(directory, "true").returncode == 0
    second = handoff.read_private(str(directory / handoff.READY))
    names = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
    assert [second[n] for n in names] == [first[n] for n in names]


def test_the_node_side_ends_a_kernel_whose_launcher_stopped_renewing_its_lease(tmp_path):
    directory = _kernel_dir(tmp_path)
    launch = handoff.read_private(str(directory / handoff.LAUNCH))
    (directory / handoff.LAUNCH).unlink()
    handoff.write_private(str(directory / handoff.LAUNCH), {**launch, "lease": 1.0})
    # Nobody renews: the kernel (a long sleep) is ended after about a lease.
    done = _node(directory, "sleep", "600")
    assert done.returncode == 128 + 15, done.stderr
    assert "has not renewed its lease for 1 s" in done.stderr


def test_a_renewed_lease_keeps_the_kernel_and_a_stopped_renewer_lets_it_expire(tmp_path):
    ticks = [0.0]
    watcher = lease.Watcher(str(tmp_path), 2.0, clock=lambda: ticks[0])
    renewer = lease.Renewer(lambda: str(tmp_path), 2.0)
    for _ in range(5):
        ticks[0] += 1.5
        renewer.renew()
        assert not watcher.expired()
    ticks[0] += 2.5
    assert watcher.expired()
    # A launcher's clock is not the node's: only the content's change counts.
    os.utime(tmp_path / lease.LEASE, (0, 0))
    assert watcher.expired()


def test_the_node_side_refuses_a_launch_file_others_can_read(tmp_path):
    directory = _kernel_dir(tmp_path, mode=0o644)
    done = _node(directory, "true")
    assert done.returncode != 0 and "not private" in done.stderr
    assert not (directory / handoff.CONNECTION).exists()


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "openai4s", "jupyter", *args, "--executable", "/bin/true"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_slurm_kernelspec_names_the_provisioner_and_its_resources(tmp_path):
    done = _cli("install", "--prefix", str(tmp_path), "--slurm", "--partition", "gpu")
    assert done.returncode == 0, done.stderr
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / "openai4s-python-slurm"
    spec = json.loads((spec_dir / "kernel.json").read_text())
    provisioner = spec["metadata"]["kernel_provisioner"]
    assert provisioner["provisioner_name"] == "openai4s-slurm"
    assert provisioner["config"]["partition"] == "gpu"
    assert "time" not in provisioner["config"]
    assert spec["interrupt_mode"] == "message"
    assert spec["display_name"] == "openai4s (Python, Slurm)"
    exported = json.loads(
        _cli(
            "export",
            "--slurm",
            "--time",
            "2:00:00",
            "--cpus",
            "4",
            "--mem",
            "8G",
            "--gres",
            "gpu:1",
        ).stdout
    )
    config = exported["metadata"]["kernel_provisioner"]["config"]
    assert (config["time"], config["cpus"], config["mem"], config["gres"]) == (
        "2:00:00",
        "4",
        "8G",
        "gpu:1",
    )


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript is not installed")
def test_the_r_slurm_kernelspec_has_its_own_name(tmp_path):
    done = _cli("install", "--prefix", str(tmp_path), "--slurm", "--lang", "r")
    assert done.returncode == 0, done.stderr
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / "openai4s-r-slurm"
    spec = json.loads((spec_dir / "kernel.json").read_text())
    assert spec["language"] == "R" and spec["display_name"] == "openai4s (R, Slurm)"
    assert spec["metadata"]["kernel_provisioner"]["provisioner_name"] == "openai4s-slurm"


def test_the_kernel_argv_keeps_braces_it_does_not_own():
    from jupyter_client.kernelspec import KernelSpec

    from openai4s.slurm.provisioner import SlurmProvisioner

    provisioner = SlurmProvisioner(
        kernel_spec=KernelSpec(
            argv=["k", "-f", "{connection_file}", '{"a": 1}', "{resource_dir}/x"],
            resource_dir="/specs/k",
        )
    )
    assert provisioner._kernel_argv("/d/connection.json", ["--more"]) == [
        "k",
        "-f",
        "/d/connection.json",
        '{"a": 1}',
        "/specs/k/x",
        "--more",
    ]


def test_resources_without_slurm_are_a_clear_error(tmp_path):
    done = _cli("install", "--prefix", str(tmp_path), "--partition", "gpu")
    assert done.returncode == 1 and "--partition only apply with --slurm" in done.stderr
    assert not (tmp_path / "share").exists()


def test_the_entry_point_is_registered_for_jupyter_client():
    from jupyter_client.provisioning.factory import KernelProvisionerFactory

    entries = KernelProvisionerFactory.instance().get_provisioner_entries()
    assert entries.get("openai4s-slurm") == "openai4s.slurm.provisioner:SlurmProvisioner"
