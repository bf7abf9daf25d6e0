"""`python -m openai4s audit`: the recent host calls recorded in a store.

Every `host.*` call a cell makes leaves one row in the dispatcher's audit log
(`host_call_log` in `<data dir>/openai4s.db`), whatever the outcome. This
command reads that file read-only and prints the newest rows: when, which
tool, what the permission gate decided, and the argument preview the store
kept (already bounded and redacted when it was written).
"""

import json
import os
import sqlite3
import sys
import time
from pathlib import Path

#: Columns of the table printed for each row, in order.
_HEADERS = ("time", "tool", "decision", "ok", "frame", "arguments")
#: Characters of the argument preview shown per row (the stored one is longer).
_PREVIEW_CHARS = 100

_QUERY = """
SELECT log.created_at, log.method, log.ok, log.frame_id, log.args_preview,
       log.result_preview, log.permission_decision_id, request.state
FROM host_call_log AS log
LEFT JOIN permission_requests AS request
       ON request.decision_id = log.permission_decision_id
{where}
ORDER BY log.created_at DESC, log.rowid DESC
LIMIT ?
"""


def default_data_dir():
    configured = os.environ.get("OPENAI4S_DATA_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".openai4s"


def decision_of(ok, result_preview, decision_id, request_state):
    """What the gate decided: the durable request's state when the call was
    gated through one, 'denied' for a refusal without one (a standing deny
    rule or the secret-file gate), else 'ungated'."""
    if request_state:
        return request_state
    if not ok and "Permission denied" in (result_preview or ""):
        return "denied"
    if decision_id:
        return "allowed"
    return "ungated"


def recent_calls(db_path, *, limit=20, frame_id=None, method=None):
    """The newest `limit` audit rows as dicts, newest first."""
    if not Path(db_path).is_file():
        raise FileNotFoundError(f"no store at {db_path} (has a dispatcher run with this data dir?)")
    clauses, params = [], []
    if frame_id is not None:
        clauses.append("log.frame_id = ?")
        params.append(frame_id)
    if method is not None:
        clauses.append("log.method = ?")
        params.append(method)
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    # Read-only: listing must never create, migrate or lock a store for writing.
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
    try:
        rows = conn.execute(_QUERY.format(where=where), (*params, int(limit))).fetchall()
    finally:
        conn.close()
    return [
        {
            "time": created_at,
            "tool": method_name,
            "decision": decision_of(ok, result, decision_id, state),
            "ok": bool(ok),
            "frame_id": frame,
            "arguments": args_preview,
        }
        for created_at, method_name, ok, frame, args_preview, result, decision_id, state in rows
    ]


def _format_time(epoch_ms):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch_ms / 1000))


def _shorten(text, width):
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def format_calls(calls):
    """A plain-text table, oldest last as stored (newest first)."""
    rows = [
        (
            _format_time(call["time"]),
            call["tool"],
            call["decision"],
            "yes" if call["ok"] else "no",
            call["frame_id"] or "-",
            _shorten(call["arguments"], _PREVIEW_CHARS),
        )
        for call in calls
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADERS)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(_HEADERS, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def run_audit(data_dir=None, *, limit=20, frame_id=None, method=None, as_json=False):
    """Print the recent calls; returns the exit status."""
    db_path = Path(data_dir or default_data_dir()) / "openai4s.db"
    try:
        calls = recent_calls(db_path, limit=limit, frame_id=frame_id, method=method)
    except (FileNotFoundError, sqlite3.Error) as exc:
        print(f"openai4s audit: {exc}", file=sys.stderr)
        return 1
    if as_json:
        for call in calls:
            print(json.dumps(call, ensure_ascii=False))
    elif calls:
        sys.stdout.write(format_calls(calls))
    else:
        print(f"no host calls recorded in {db_path}")
    return 0
