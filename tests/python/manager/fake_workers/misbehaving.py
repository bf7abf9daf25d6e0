"""A scripted worker that answers the handshake, then breaks the protocol in
the way named by argv[1] during its first cell, then answers properly."""

import json
import os
import sys

mode = sys.argv[1]
inp, out = sys.stdin, sys.stdout


def send(frame):
    out.write(json.dumps(frame) + "\n")
    out.flush()


for line in inp:
    frame = json.loads(line)
    kind = frame.get("type")
    if kind == "initialize":
        send({"type": "initialized", "id": frame["id"]})
    elif kind == "execute":
        cell = frame["id"]
        if mode == "garbage":
            out.write("this is not json\n")
            out.write('{"truncated": \n')
            out.flush()
        elif mode == "oversized":
            # Past the 20 MB frame cap: the host must skip it, not hold it.
            out.write('{"type":"log","msg":"' + "x" * 21_000_000 + '"}\n')
            out.flush()
        elif mode == "die":
            sys.stderr.write("fatal: the worker fell over\n")
            sys.stderr.flush()
            os._exit(3)
        elif mode == "noisy-stderr":
            chunk = "e" * 65536
            for _ in range(160):  # 10 MB: far past any pipe buffer
                sys.stderr.write(chunk)
            sys.stderr.flush()
        send({"type": "stdout_chunk", "id": cell, "text": "still here\n"})
        send(
            {
                "type": "response",
                "id": cell,
                "stdout": "",
                "stderr": "",
                "error": None,
                "interrupted": False,
                "trace": {"error_lineno": None, "error_call": None},
                "guards": {},
                "files_read": [],
                "usage": {"wall_s": 0.0, "cpu_s": 0.0, "peak_rss_kb": 1},
            }
        )
    elif kind == "shutdown":
        break
