"""`python -m openai4s audit`: the recent host calls recorded in a store.

Every `host.*` call a cell makes leaves one row in the dispatcher's audit log
(`host_call_log` in `<data dir>/openai4s.db`), whatever the outcome. This
command reads that file read-only and prints the newest rows as a log a
person can follow: when, which tool, what it was about (a command, a path;
secrets already redacted when the row was written), who decided (a standing
rule, the user, the unattended setting) and how it ended.

One `host.bash` is four calls between the worker and the host (authorize,
consume, record, and the result row "bash"); the log shows it as one row:
the decision when it was refused, else the result with its exit code.
`--all` shows every stored row as it is.

Kernels that ran as Slurm jobs kept their stores on their nodes (SQLite's
locking does not hold across hosts) and copied them to
`<data dir>/slurm-jobs/<job id>/openai4s.db` (openai4s.slurm.records): the
log merges those records with the local store's rows, and says which job
each row came from (`--job ID` shows one job's).
"""

import json
import os
import sqlite3
import sys
import time
from pathlib import Path

from openai4s.slurm.records import JOBS_DIR, STORE

#: Columns of the table printed for each row, in order.
_HEADERS = ("time", "tool", "what", "decided by", "outcome")
#: Characters of the "what" column (the stored summary is longer).
_WHAT_CHARS = 70

#: The steps of a host.bash that its other rows already tell.
_BASH_STEPS = ("consume_bash_authorization", "record_bash_result")
#: Columns added in store schema version 2; an older store lacks them.
_STORY_COLUMNS = ("summary", "decided_by", "outcome")

_QUERY = """
SELECT log.created_at, log.method, log.ok, log.frame_id, log.args_preview,
       log.result_preview, log.permission_decision_id, request.state,
       {story}
FROM host_call_log AS log
LEFT JOIN permission_requests AS request
       ON request.decision_id = log.permission_decision_id
{where}
ORDER BY log.created_at DESC, log.rowid DESC
LIMIT ?
"""

# A "bash" result row takes what and who from the authorize row before it
# with the same command digest (its resource key).
_FROM_AUTHORIZE = """coalesce(log.{column}, (SELECT a.{column} FROM host_call_log AS a
    WHERE log.method = 'bash' AND a.method = 'authorize_bash'
      AND a.resource_keys = log.resource_keys AND a.created_at < log.created_at
    ORDER BY a.created_at DESC LIMIT 1))"""

# An allowed authorize row whose command then ran: its result row tells it.
_TOLD_BY_RESULT = """NOT (log.method = 'authorize_bash' AND log.ok = 1 AND EXISTS (
    SELECT 1 FROM host_call_log AS later WHERE later.method = 'bash'
      AND later.resource_keys = log.resource_keys AND later.created_at > log.created_at))"""


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


def _story_columns(conn):
    present = {row[1] for row in conn.execute("PRAGMA table_info(host_call_log)")}
    if not all(column in present for column in _STORY_COLUMNS):
        return "NULL, NULL, NULL", False
    story = ", ".join(_FROM_AUTHORIZE.format(column=column) for column in _STORY_COLUMNS[:2])
    return story + ", log.outcome", True


def _where(frame_id, method, everything, has_story):
    clauses, params = [], []
    if frame_id is not None:
        clauses.append("log.frame_id = ?")
        params.append(frame_id)
    if method is not None:
        methods = ["authorize_bash", "bash"] if method == "bash" and not everything else [method]
        clauses.append(f"log.method IN ({', '.join('?' for _ in methods)})")
        params.extend(methods)
    if not everything:
        clauses.append(f"log.method NOT IN ({', '.join(repr(m) for m in _BASH_STEPS)})")
        if has_story:
            clauses.append(_TOLD_BY_RESULT)
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


def recent_calls(db_path, *, limit=20, frame_id=None, method=None, everything=False):
    """The newest `limit` audit rows as dicts, newest first."""
    if not Path(db_path).is_file():
        raise FileNotFoundError(f"no store at {db_path} (has a dispatcher run with this data dir?)")
    # Read-only: listing must never create, migrate or lock a store for writing.
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
    try:
        story, has_story = _story_columns(conn)
        where, params = _where(frame_id, method, everything, has_story)
        query = _QUERY.format(story=story, where=where)
        rows = conn.execute(query, (*params, int(limit))).fetchall()
    finally:
        conn.close()
    return [_call(row, everything) for row in rows]


def _call(row, everything):
    created_at, method, ok, frame, args_preview, result, decision_id, state = row[:8]
    summary, decided_by, outcome = row[8:]
    tool = "bash" if method == "authorize_bash" and not everything else method
    return {
        "time": created_at,
        "tool": tool,
        "method": method,
        "what": summary if summary is not None else args_preview,
        "decided_by": decided_by or ("-" if decision_id is None else "?"),
        "outcome": outcome or ("ok" if ok else "error"),
        "decision": decision_of(ok, result, decision_id, state),
        "ok": bool(ok),
        "frame_id": frame,
        "arguments": args_preview,
    }


def _format_time(epoch_ms):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch_ms / 1000))


def _shorten(text, width):
    text = _visible(" ".join((text or "").split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def _visible(text):
    """Controls, C1, DEL and bidi/format characters as escapes (the rule of
    the approval prompts and refusals): a cell's ESC sequence or override in
    a stored command must not repaint the terminal that shows its row."""
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def format_calls(calls):
    """A plain-text table, newest first as listed; with a "where" column
    when the rows come from more than one store."""
    headers = _HEADERS
    where = len({call.get("where") for call in calls}) > 1
    if where:
        headers = _HEADERS + ("where",)
    rows = [
        (
            _format_time(call["time"]),
            call["tool"],
            _shorten(call["what"], _WHAT_CHARS),
            _visible(call["decided_by"] or ""),
            _visible(" ".join((call["outcome"] or "").split())),
        )
        + ((call.get("where") or "local",) if where else ())
        for call in calls
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def stores(data_dir, job=None):
    """(where, path) of every store to read: the local one (if any) and each
    Slurm job's record, or only job `job`'s."""
    data_dir = Path(data_dir)
    found = []
    if job is None and (data_dir / STORE).is_file():
        found.append((None, data_dir / STORE))
    jobs = data_dir / JOBS_DIR
    if jobs.is_dir():
        for record in sorted(jobs.iterdir(), key=lambda p: p.name):
            if (job is None or record.name == job) and (record / STORE).is_file():
                found.append((f"slurm job {record.name}", record / STORE))
    if not found:
        what = (
            f"no record of Slurm job {job} in {jobs}" if job else f"no store at {data_dir / STORE}"
        )
        raise FileNotFoundError(f"{what} (has a dispatcher run with this data dir?)")
    return found


def all_recent_calls(data_dir, *, limit=20, job=None, **filters):
    """The newest `limit` rows over every store, newest first."""
    calls = []
    for where, path in stores(data_dir, job):
        for call in recent_calls(path, limit=limit, **filters):
            call["where"] = where
            calls.append(call)
    calls.sort(key=lambda call: call["time"], reverse=True)
    return calls[:limit]


def run_audit(
    data_dir=None,
    *,
    limit=20,
    frame_id=None,
    method=None,
    as_json=False,
    everything=False,
    job=None,
):
    """Print the recent calls; returns the exit status."""
    data_dir = Path(data_dir or default_data_dir())
    try:
        calls = all_recent_calls(
            data_dir, limit=limit, job=job, frame_id=frame_id, method=method, everything=everything
        )
    except (FileNotFoundError, sqlite3.Error) as exc:
        print(f"openai4s audit: {exc}", file=sys.stderr)
        return 1
    if as_json:
        for call in calls:
            print(json.dumps(call, ensure_ascii=False))
    elif calls:
        sys.stdout.write(format_calls(calls))
    else:
        print(f"no host calls recorded in {data_dir}")
    return 0
