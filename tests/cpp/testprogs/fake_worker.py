"""A stand-in worker that speaks the manager's JSON-lines protocol.

The C++ KernelManager integration tests spawn it with /usr/bin/python3 so the
manager's side of spec kernel.md §3 runs against a real process: the
attestation handshake, execute with stdout chunks and host calls, variable
inspection, SIGINT as an interrupt, a dying worker, and shutdown. A cell's
"code" is a one-word command plus an argument, not Python, so each test states
exactly what the worker does:

    echo <text>          stream <text> as a stdout_chunk, respond with stdout ""
    call <method> <json> host_call(method, args) and respond with the reply
    sleep                stream "sleeping", then block until interrupted
    env <NAME>           respond with json.dumps(os.environ.get(NAME))
    ids                  respond with the worker's pid, pgid and sid
    grandchild           start a sleeping process in this group, respond its pid
    die <text>           write <text> to stderr and exit 3 mid-transaction
"""

import ctypes
import json
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def send(frame):
    sys.stdout.write(json.dumps(frame, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def read_frame():
    line = sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)


def respond(cell_id, stdout="", error=None, interrupted=False):
    send(
        {
            "type": "response",
            "id": cell_id,
            "stdout": stdout,
            "stderr": "",
            "error": error,
            "interrupted": interrupted,
            "trace": {"error_lineno": None, "error_call": None},
            "guards": {},
            "files_read": [],
            "usage": {"wall_s": 0.0, "cpu_s": 0.0, "peak_rss_kb": 0},
        }
    )


def host_call(method, args):
    call_id = "hc-0-1"
    send({"type": "host_call", "id": call_id, "method": method, "args": args})
    reply = read_frame()
    if reply is None:
        sys.exit(0)
    return {k: reply.get(k) for k in ("id", "data", "error") if k in reply}


def run_cell(cell_id, code):
    command, _, arg = code.partition(" ")
    if command == "echo":
        send({"type": "stdout_chunk", "id": cell_id, "text": arg})
        respond(cell_id)
    elif command == "call":
        method, _, raw_args = arg.partition(" ")
        respond(cell_id, json.dumps(host_call(method, json.loads(raw_args or "[]"))))
    elif command == "sleep":
        send({"type": "stdout_chunk", "id": cell_id, "text": "sleeping\n"})
        signal.pause()
        respond(cell_id, error="woke without a signal")
    elif command == "env":
        respond(cell_id, json.dumps(os.environ.get(arg)))
    elif command == "ids":
        ids = {"pid": os.getpid(), "pgid": os.getpgid(0), "sid": os.getsid(0)}
        respond(cell_id, json.dumps(ids))
    elif command == "grandchild":
        child = subprocess.Popen(["/bin/sleep", "60"], stdin=subprocess.DEVNULL)
        respond(cell_id, str(child.pid))
    elif command == "die":
        sys.stderr.write(arg)
        sys.stderr.flush()
        os._exit(3)
    else:
        respond(cell_id, error="unknown command " + command)


def handshake():
    frame = read_frame()
    if frame is None:
        sys.exit(0)
    key = frame.get("skill_attestation_key")
    if frame.get("type") != "initialize" or not isinstance(key, str):
        send(
            {
                "type": "initialization_error",
                "id": frame.get("id", "unknown"),
                "error": "missing manager attestation handshake",
            }
        )
        sys.exit(1)
    send({"type": "initialized", "id": frame["id"]})


def main():
    # Emulate bubblewrap's --die-with-parent: die with the thread that spawned
    # us, which is what makes the spawning thread matter.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    handshake()
    while True:
        frame = read_frame()
        if frame is None or frame.get("type") == "shutdown":
            return
        if frame.get("type") == "inspect_variables":
            send(
                {
                    "type": "variables_response",
                    "id": frame["id"],
                    "variables": [{"name": "x", "type": "int"}],
                    "truncated": False,
                    "limit": frame["limit"],
                }
            )
        elif frame.get("type") == "execute":
            cell_id = frame["id"]
            try:
                run_cell(cell_id, frame["code"])
            except KeyboardInterrupt:
                respond(cell_id, error="Interrupted", interrupted=True)


if __name__ == "__main__":
    main()
