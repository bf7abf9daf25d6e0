"""The MCP server's kernels on Slurm, through its front door: `openai4s mcp
--slurm` on stdio, create_kernel with engine "slurm" (or the server's
--engine slurm). The kernel is a job of the one-node cluster, started by
the same provisioner Jupyter uses; cells, interrupt, restart and shutdown
reach it; its record lands in the server's data dir; nothing is left."""

import json
import subprocess
import sys
import threading

import pytest

from slurm_support import SlurmEnvironment, active_jobs, job_state, wait_for


class McpClient:
    """A minimal stdio MCP client: JSON-RPC requests, one line each."""

    def __init__(self, env, *flags):
        self.env = env
        self.workspaces = env.data_dir.parent / "workspaces"
        self.workspaces.mkdir()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "openai4s", "mcp", "--data-dir", str(env.data_dir)]
            + ["--workspace-root", str(self.workspaces), "--idle-timeout", "0", *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env.environ(),
        )
        self.log = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "slurm-test", "version": "1"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _drain_stderr(self):
        for line in self.process.stderr:
            self.log.append(line)

    def _send(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            assert line, "the server ended: " + "".join(self.log[-20:])
            message = json.loads(line)
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message["result"]

    def tool(self, name, **arguments):
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        return result

    def ok(self, name, **arguments):
        result = self.tool(name, **arguments)
        assert not result.get("isError"), result["content"][0]["text"]
        return result["structuredContent"]

    def close(self):
        self.process.stdin.close()
        code = self.process.wait(timeout=120)
        self.process.stdout.close()
        return code


@pytest.fixture
def slurm_mcp(cluster):
    env = SlurmEnvironment()
    clients = []

    def start(*flags):
        client = McpClient(env, *flags)
        clients.append(client)
        return client

    yield start
    for client in clients:
        if client.process.poll() is None:
            client.close()
    env.cleanup()


def test_create_kernel_with_engine_slurm_runs_cells_in_a_job(slurm_mcp):
    client = slurm_mcp("--slurm")
    created = client.ok("create_kernel", engine="slurm")
    kernel, job = created["kernel_id"], created["job_id"]
    assert created["engine"] == "slurm" and job in active_jobs()
    ran = client.ok(
        "execute", kernel_id=kernel, code="import os\nx = 6\nprint(os.environ['SLURM_JOB_ID'])"
    )
    assert ran["status"] == "ok" and ran["stdout"].split() == [job]
    assert client.ok("execute", kernel_id=kernel, code="x * 7")["result"] == "42"
    failed = client.ok("execute", kernel_id=kernel, code="1/0")
    assert failed["status"] == "error" and failed["error"]["ename"] == "ZeroDivisionError"
    listed = client.ok("list_kernels")["kernels"]
    assert [(k["kernel_id"], k["engine"], k["job_id"]) for k in listed] == [(kernel, "slurm", job)]
    # A local kernel beside it is still the server's own.
    local = client.ok("create_kernel")
    assert "engine" not in local and local["kernel_id"] != kernel
    assert client.ok("execute", kernel_id=local["kernel_id"], code="print(2)")["stdout"] == "2\n"

    assert client.ok("shutdown_kernel", kernel_id=kernel)["shut_down"]
    assert job not in active_jobs() and job_state(job) == "COMPLETED"
    assert client.close() == 0
    # The job's record reached the server's data dir; no private file stays.
    assert (client.env.data_dir / "slurm-jobs" / job / "openai4s.db").is_file()
    assert client.env.leftovers() == []


def test_interrupt_and_restart_reach_the_job(slurm_mcp):
    client = slurm_mcp("--engine", "slurm")
    kernel = client.ok("create_kernel")["kernel_id"]
    first = client.ok("list_kernels")["kernels"][0]["job_id"]
    client.ok("execute", kernel_id=kernel, code="y = 'kept'")
    running = client.ok(
        "execute", kernel_id=kernel, code="import time\ntime.sleep(120)", wait=False
    )
    wait_for(
        lambda: client.ok("list_kernels")["kernels"][0]["state"] == "busy", 30, "the cell runs"
    )
    assert client.ok("interrupt", kernel_id=kernel)["interrupted"]
    done = client.ok("get_execution", execution_id=running["execution_id"], wait_s=60)
    assert done["status"] == "interrupted"
    assert client.ok("execute", kernel_id=kernel, code="print(y)")["stdout"] == "kept\n"
    # A cell's timeout_s interrupts it the same way.
    late = client.ok("execute", kernel_id=kernel, code="import time\ntime.sleep(60)", timeout_s=2)
    assert late["status"] == "timeout"

    assert client.ok("restart_kernel", kernel_id=kernel)["restarted"]
    second = client.ok("list_kernels")["kernels"][0]["job_id"]
    assert second != first and first not in active_jobs()
    fresh = client.ok("execute", kernel_id=kernel, code="print('y' in dir())")
    assert fresh["stdout"] == "False\n"
    # End of input shuts the server's Slurm kernels down with it.
    assert client.close() == 0
    assert second not in active_jobs()
    assert client.env.leftovers() == []


def test_a_server_without_slurm_refuses_the_engine_clearly(slurm_mcp):
    client = slurm_mcp()
    refused = client.tool("create_kernel", engine="slurm")
    assert refused["isError"] and "--slurm" in refused["content"][0]["text"]
    assert client.close() == 0


def test_a_job_slurm_ended_is_a_dead_kernel_with_the_reason(slurm_mcp):
    client = slurm_mcp("--slurm")
    created = client.ok("create_kernel", engine="slurm")
    subprocess.run(["scancel", created["job_id"]], check=True)
    wait_for(lambda: created["job_id"] not in active_jobs(), 30, "the job ends")
    dead = client.ok("execute", kernel_id=created["kernel_id"], code="print(1)")
    assert dead["status"] == "error"
    assert f"Slurm job {created['job_id']}" in dead["error"]["evalue"]
    assert "CANCELLED" in dead["error"]["evalue"]
    assert client.ok("shutdown_kernel", kernel_id=created["kernel_id"])["shut_down"]
    assert client.close() == 0
    assert client.env.leftovers() == []
