"""A scripted worker that answers the handshake and cells but never answers
the request types named in argv[1:] (not even the fence after them): the
silent worker a host must never wait for forever."""

import json
import sys

ignored = set(sys.argv[1:])


def send(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    frame = json.loads(line)
    kind = frame.get("type")
    if kind in ignored:
        continue
    if kind == "initialize":
        send({"type": "initialized", "id": frame["id"]})
    elif kind == "execute":
        send(
            {
                "type": "response",
                "id": frame["id"],
                "stdout": "ran\n",
                "stderr": "",
                "error": None,
                "interrupted": False,
                "trace": {"error_lineno": None, "error_call": None},
                "guards": {},
                "files_read": [],
                "usage": {"wall_s": 0.0, "cpu_s": 0.0, "peak_rss_kb": 1},
            }
        )
    elif kind == "complete":
        send(
            {
                "type": "complete_reply",
                "id": frame["id"],
                "matches": ["print"],
                "cursor_start": 0,
                "cursor_end": frame["cursor"],
            }
        )
    elif kind == "shutdown":
        break
