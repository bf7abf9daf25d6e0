"""The MCP server's own cost, side by side with the Python API (issue 26).

`python -m bench.mcp_server [--rounds N] [--cells N]` times, for the MCP
stdio server (`openai4s mcp`, driven by a minimal JSON-lines client in this
process: the SDK's own overhead is the client's, not the server's) and for
the Python API (`openai4s.kernel.Kernel`), both unsandboxed unless
OPENAI4S_KERNEL_SANDBOX says otherwise:

* `pass` round trip on a warm kernel (tools/call execute -> its result);
* create_kernel -> the first result (`1+1`), the kernel's cold start.

Target: the MCP layer adds at most 0.3 ms to the median `pass` round trip.
"""

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

from bench.side_by_side import (
    ApiKernel,
    cold_start,
    format_seconds,
    machine_line,
    median_p90,
    round_trips,
    write_report,
)

ADDED_MEDIAN_TARGET_S = 0.0003


class McpStdio:
    name = "mcp"

    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.ids = itertools.count(1)
        self.server = None
        self.kernel_id = None

    def _ask(self, method, params):
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        self.server.stdin.write(json.dumps(message) + "\n")
        self.server.stdin.flush()
        for line in self.server.stdout:
            answer = json.loads(line)
            if answer.get("id") == message["id"]:
                if "error" in answer:
                    raise RuntimeError(answer["error"])
                return answer["result"]
        raise RuntimeError("the server closed its stdout")

    def _tool(self, name, arguments):
        result = self._ask("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(result["content"][0]["text"])
        return result["structuredContent"]

    def start(self, cwd):
        if self.server is None:
            argv = [sys.executable, "-m", "openai4s", "mcp", "--data-dir", self.data_dir]
            self.server = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                bufsize=1,
            )
            self._ask(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            )
        self.kernel_id = self._tool("create_kernel", {})["kernel_id"]

    def run(self, code):
        result = self._tool("execute", {"kernel_id": self.kernel_id, "code": code})
        if result["status"] != "ok":
            raise RuntimeError(result["error"])
        return result["stdout"] + (result["result"] or "")

    def stop(self):
        self._tool("shutdown_kernel", {"kernel_id": self.kernel_id})

    def close(self):
        if self.server is not None:
            self.server.stdin.close()
            self.server.wait(timeout=60)


def _python_api_kernel(cwd):
    from openai4s.kernel import Kernel

    return Kernel(cwd=cwd)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_server", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="cold starts per system")
    parser.add_argument("--cells", type=int, default=500, help="`pass` round trips in all")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI4S_KERNEL_SANDBOX", "off")

    load_before = os.getloadavg()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="o4s-mcp-bench-") as tmp:
        cwd = os.path.join(tmp, "work")
        os.makedirs(cwd)
        systems = [McpStdio(os.path.join(tmp, "data")), ApiKernel("python-api", _python_api_kernel)]
        cold = {s.name: [] for s in systems}
        trips = {s.name: [] for s in systems}
        try:
            for round_index in range(args.rounds):
                order = systems if round_index % 2 == 0 else systems[::-1]
                for system in order:
                    cold[system.name].append(cold_start(system, cwd, "1+1"))
                    trips[system.name].extend(
                        round_trips(system, cwd, max(1, args.cells // args.rounds), "pass", warm=5)
                    )
        finally:
            for system in systems:
                system.close()
    load_after = os.getloadavg()

    rows = []
    for label, data in (("`pass` round trip", trips), ("create_kernel -> first result", cold)):
        mcp = median_p90(data["mcp"])
        api = median_p90(data["python-api"])
        rows.append(
            {
                "metric": label,
                "mcp": {"median_s": mcp[0], "p90_s": mcp[1], "n": len(data["mcp"])},
                "python_api": {"median_s": api[0], "p90_s": api[1], "n": len(data["python-api"])},
                "added_median_s": mcp[0] - api[0],
            }
        )
        print(
            f"{label:32s} mcp {format_seconds(mcp[0])} / {format_seconds(mcp[1])}   "
            f"python api {format_seconds(api[0])} / {format_seconds(api[1])}   "
            f"added {format_seconds(mcp[0] - api[0])} at the median"
        )
    added = rows[0]["added_median_s"]
    met = added <= ADDED_MEDIAN_TARGET_S
    print(f"MCP layer adds <= 0.3 ms to `pass`: {'met' if met else 'NOT met'}")
    elapsed = time.perf_counter() - began
    print(machine_line(load_before, load_after, elapsed))
    report = {"rows": rows, "target_added_median_s": ADDED_MEDIAN_TARGET_S, "met": met}
    report.update(load_before=load_before, load_after=load_after, seconds=elapsed)
    print(f"results: {write_report('mcp-server', report)}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
