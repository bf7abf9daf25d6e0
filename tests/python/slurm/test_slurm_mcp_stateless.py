"""A Slurm kernel's approvals for a stateless (2026-07-28) client: the
official 2.x MCP client (tests/mcp/slurm_stateless_client.mjs, pinned to
2026-07-28) drives `openai4s mcp --slurm`; a cell's host.bash in the Slurm
job needs approval, the server answers the call `input_required` while the
cell waits, and the client's retry (inputResponses and the requestState)
gives the decision to the job's cell, for `execute` and for `get_execution`
of a cell started with wait: false; cancelling such a retry interrupts the
job's cell."""

import json
import shutil
import subprocess
import sys

import pytest

import slurm_support
from slurm_support import SlurmEnvironment, active_jobs

CLIENT = slurm_support.REPO / "tests" / "mcp" / "slurm_stateless_client.mjs"
SDK = slurm_support.REPO / "tests" / "mcp" / "node_modules" / "@modelcontextprotocol" / "client"


@pytest.fixture
def env(cluster):
    if shutil.which("node") is None or not SDK.is_dir():
        pytest.skip("node or the 2.x MCP client is not installed (make setup installs them)")
    env = SlurmEnvironment()
    yield env
    env.cleanup()


def test_a_slurm_kernels_approval_is_answered_through_input_required(env):
    workspaces = env.data_dir.parent / "workspaces"
    workspaces.mkdir()
    done = subprocess.run(
        ["node", str(CLIENT), sys.executable, str(env.data_dir), str(workspaces)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env.environ(),
    )
    assert done.returncode == 0, done.stderr[-4000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["version"] == "2026-07-28"
    job = out["created"]["job_id"]
    assert out["created"]["engine"] == "slurm"

    # Once: the job's cell ran the command, asked exactly one question.
    assert out["allowed"]["status"] == "ok", out["allowed"]
    assert "approved-stateless-slurm" in out["allowed"]["stdout"]
    first = out["asked"][0]
    assert first["mode"] == "form"
    assert "(a Slurm job)" in first["message"]
    assert "echo approved-stateless-slurm" in first["message"]
    assert "[y]es" not in first["message"]
    assert first["requestedSchema"]["properties"]["decision"]["enum"] == ["once", "always", "deny"]
    # Deny: the cell's host.bash is refused, the kernel goes on.
    assert out["denied"]["status"] == "error"
    assert "denied" in out["denied"]["error"]["evalue"]
    # A wait: false cell's question came through get_execution.
    assert out["polled"]["status"] == "ok", out["polled"]
    assert "approved-stateless-slurm" in out["polled"]["stdout"]
    assert len(out["asked"]) == 3  # the manual round below asks no handler
    assert out["after"]["result"] == "42"
    # The retry that carried an answer, cancelled while the cell runs on:
    # the job's cell is interrupted, as a local kernel's would be.
    assert out["question"]["resultType"] == "input_required"
    assert out["retried"].startswith("rejected"), out["retried"]
    assert out["cancelled"]["status"] == "interrupted", out["cancelled"]
    assert "then-sleep" in out["cancelled"]["stdout"]

    assert out["shut"]["shut_down"]
    assert job not in active_jobs()
    assert env.leftovers() == []
