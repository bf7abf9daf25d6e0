"""The MCP server's kernels on Slurm, through its front door: `openai4s mcp
--slurm` on stdio, create_kernel with engine "slurm" (or the server's
--engine slurm). The kernel is a job of the one-node cluster, started by
the same provisioner Jupyter uses; cells, interrupt, restart, shutdown,
list_variables and approvals reach it; it follows the local kernels' limits
and workspace rules; its record lands in the server's data dir; a killed
bridge or server leaves no job; nothing is left."""

import json
import os
import signal
import subprocess
import sys
import threading

import pytest

import slurm_support
from slurm_support import SlurmEnvironment, active_jobs, job_state, wait_for


class McpClient:
    """A minimal stdio MCP client: JSON-RPC requests, one line each."""

    def __init__(self, env, *flags, answers=None, environ=None):
        self.env = env
        self.workspaces = env.data_dir.parent / "workspaces"
        self.workspaces.mkdir(exist_ok=True)
        # With `answers` the client offers elicitation and answers each
        # question with the next decision ("deny" when none is left).
        self.answers = answers
        self.asked = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "openai4s", "mcp", "--data-dir", str(env.data_dir)]
            + ["--workspace-root", str(self.workspaces), "--idle-timeout", "0", *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**env.environ(), **(environ or {})},
        )
        self.log = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {} if answers is None else {"elicitation": {}},
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
            if message.get("method") == "elicitation/create":
                self._answer(message)
            elif message.get("id") == self.next_id:
                assert "error" not in message, message
                return message["result"]

    def _answer(self, question):
        self.asked.append(question["params"])
        decision = self.answers.pop(0) if self.answers else "deny"
        result = {"action": "accept", "content": {"decision": decision}}
        self._send({"jsonrpc": "2.0", "id": question["id"], "result": result})

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

    def start(*flags, **options):
        client = McpClient(env, *flags, **options)
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
    # The file tools reach the job's workspace (shared with the node).
    client.ok("write_file", kernel_id=kernel, path="in.txt", content="from the client")
    cell = "print(open('in.txt').read())\nopen('out.txt', 'w').write('from the job')"
    assert client.ok("execute", kernel_id=kernel, code=cell)["stdout"] == "from the client\n"
    read = client.tool("read_file", kernel_id=kernel, path="out.txt")
    assert read["content"][0]["text"] == "from the job"
    listed = client.ok("list_kernels")["kernels"]
    assert [(k["kernel_id"], k["engine"], k["job_id"]) for k in listed] == [(kernel, "slurm", job)]
    # A local kernel beside it is still the server's own.
    local = client.ok("create_kernel")
    assert "engine" not in local and local["kernel_id"] != kernel
    assert client.ok("execute", kernel_id=local["kernel_id"], code="print(2)")["stdout"] == "2\n"
    # An approval this client cannot show is refused as for a local kernel.
    for each in (kernel, local["kernel_id"]):
        refused = client.ok("execute", kernel_id=each, code="host.bash('echo never')")
        assert refused["status"] == "error"
        assert "this client cannot show approval prompts" in refused["error"]["evalue"]

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


def variables_of(client, kernel):
    return client.ok("list_variables", kernel_id=kernel)["variables"]


def test_list_variables_and_approvals_reach_the_slurm_kernel(slurm_mcp):
    client = slurm_mcp("--slurm", answers=["once", "deny"])
    kernel = client.ok("create_kernel", engine="slurm")["kernel_id"]
    local = client.ok("create_kernel")["kernel_id"]
    cell = "x = 6\nname = 'slurm'\nrows = [1, 2, 3]"
    for each in (kernel, local):
        client.ok("execute", kernel_id=each, code=cell)
    # The worker's own listing, as for a local kernel.
    listed = variables_of(client, kernel)
    assert {row["name"] for row in listed} >= {"x", "name", "rows"}
    assert listed == variables_of(client, local)
    running = client.ok("execute", kernel_id=kernel, code="import time\ntime.sleep(60)", wait=False)
    busy = client.tool("list_variables", kernel_id=kernel)
    assert busy["isError"] and "running a cell" in busy["content"][0]["text"]
    # An interrupt at once (perhaps before the cell's code runs) still
    # stops it: the bridge sends it again until the cell ends.
    client.ok("interrupt", kernel_id=kernel)
    done = client.ok("get_execution", execution_id=running["execution_id"], wait_s=60)
    assert done["status"] == "interrupted"

    # host.bash asks; the question goes to this client by elicitation.
    asked = "print(host.bash('echo approved-on-slurm')['stdout'])"
    allowed = client.ok("execute", kernel_id=kernel, code=asked)
    assert allowed["status"] == "ok" and "approved-on-slurm" in allowed["stdout"]
    assert len(client.asked) == 1
    assert "echo approved-on-slurm" in client.asked[0]["message"]
    assert "[y]es" not in client.asked[0]["message"]
    choices = client.asked[0]["requestedSchema"]["properties"]["decision"]["enum"]
    assert choices == ["once", "always", "deny"]
    denied = client.ok("execute", kernel_id=kernel, code=asked)
    assert denied["status"] == "error" and "denied" in denied["error"]["evalue"]
    assert len(client.asked) == 2
    assert client.ok("execute", kernel_id=kernel, code="x * 7")["result"] == "42"
    assert client.close() == 0
    assert client.env.leftovers() == []


def test_slurm_kernels_follow_the_local_limits_and_workspace_rules(slurm_mcp):
    client = slurm_mcp("--slurm", "--max-kernels", "2", "--idle-timeout", "10")
    for name in ("a", "b", "c"):
        (client.workspaces / name / "inner").mkdir(parents=True)
    created = client.ok("create_kernel", engine="slurm", workspace="a")
    assert created["workspace"] == str((client.workspaces / "a").resolve())

    def refused(**arguments):
        answer = client.tool("create_kernel", **arguments)
        assert answer["isError"], answer
        return answer["content"][0]["text"]

    # The same checks as a local kernel's, both ways round.
    root = str(client.workspaces)
    assert "--workspace-root itself" in refused(engine="slurm", workspace=root)
    assert "nests with kernel" in refused(workspace="a/inner")
    local = client.ok("create_kernel", workspace="b")["kernel_id"]
    assert "nests with kernel " + local in refused(engine="slurm", workspace="b/inner")
    assert "not under the server's --workspace-root" in refused(engine="slurm", workspace="/tmp")
    # Two kernels, one of each: the third, either engine, is over the limit.
    assert "--max-kernels" in refused(engine="slurm", workspace="c")
    assert "--max-kernels" in refused(workspace="c")

    # Left idle, the Slurm kernel is shut down like the local one.
    def gone():
        return client.ok("list_kernels")["kernels"] == []

    wait_for(gone, 60, "both idle kernels are shut down")
    wait_for(lambda: created["job_id"] not in active_jobs(), 30, "its job ends")
    assert client.ok("create_kernel", workspace="c")["kernel_id"]
    assert client.close() == 0
    assert client.env.leftovers() == []


def bridge_of(server):
    """The pid of the server's Slurm bridge process."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat, open(f"/proc/{entry}/cmdline", "rb") as cmd:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                command = cmd.read()
        except OSError:
            continue
        if parent == server.pid and b"openai4s.slurm.mcp_bridge" in command:
            return int(entry)
    raise AssertionError("no bridge process")


def test_a_killed_bridge_or_server_leaves_no_job_running(slurm_mcp):
    # The bridge killed: the server scancels the job it reported.
    client = slurm_mcp("--slurm", environ={"OPENAI4S_SLURM_LEASE_S": "3"})
    created = client.ok("create_kernel", engine="slurm")
    os.kill(bridge_of(client.process), signal.SIGKILL)
    wait_for(lambda: created["job_id"] not in active_jobs(), 30, "the job is cancelled")
    dead = client.tool("execute", kernel_id=created["kernel_id"], code="print(1)")
    assert dead["isError"] and "dead" in dead["content"][0]["text"]
    assert client.ok("shutdown_kernel", kernel_id=created["kernel_id"])["shut_down"]
    assert client.close() == 0

    # The server and its bridge killed at once (the bridge stopped first,
    # so that it cannot shut the job down): the job's lease runs out.
    client = slurm_mcp("--slurm", environ={"OPENAI4S_SLURM_LEASE_S": "3"})
    job = client.ok("create_kernel", engine="slurm")["job_id"]
    bridge = bridge_of(client.process)
    os.kill(bridge, signal.SIGSTOP)
    client.process.kill()
    client.process.wait(timeout=30)
    os.kill(bridge, signal.SIGKILL)
    assert job in active_jobs()
    wait_for(lambda: job not in active_jobs(), 60, "the job ends when its lease runs out")


def test_an_r_kernel_on_slurm(slurm_mcp):
    client = slurm_mcp("--slurm")
    subprocess.run(
        [sys.executable, "-m", "openai4s", "jupyter", "install", "--lang", "r", "--slurm"]
        + ["--prefix", str(client.env.prefix), "--executable", str(slurm_support.KERNEL_BINARY)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    created = client.ok("create_kernel", engine="slurm", language="r")
    kernel = created["kernel_id"]
    assert created["language"] == "r" and created["job_id"] in active_jobs()
    ran = client.ok("execute", kernel_id=kernel, code="1 + 1")
    assert ran["status"] == "ok" and "[1] 2" in ran["stdout"] + str(ran.get("result")), ran
    client.ok("execute", kernel_id=kernel, code="answer <- 42")
    listed = client.ok("list_variables", kernel_id=kernel)["variables"]
    assert "answer" in [row["name"] for row in listed]
    assert client.ok("execute", kernel_id=kernel, code="cat(answer)")["stdout"] == "42"
    assert client.ok("shutdown_kernel", kernel_id=kernel)["shut_down"]
    assert created["job_id"] not in active_jobs()
    assert client.close() == 0
    assert client.env.leftovers() == []
