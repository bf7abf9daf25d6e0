"""The worker's answers about the namespace: variables, completion, help.

None of these runs user code on purpose (inspection is bounded, completion
reads attributes safely), and each fails closed into an empty answer with an
``error`` field: a request about the namespace must never cost the worker.
"""

from openai4s.kernel.runtime import inspector


def variables_reply(namespace, request):
    """The ``variables_response`` frame for an ``inspect_variables`` request."""
    frame = {"type": "variables_response", "id": request.get("id")}
    limit = request.get("limit")
    try:
        frame.update(inspector.inspect_namespace(namespace, limit))
    except inspector.InvalidLimit:
        frame.update(variables=[], truncated=False, limit=0)
        frame["error"] = "invalid variable inspection limit"
    except Exception:
        frame.update(variables=[], truncated=False, limit=limit)
        frame["error"] = "variable inspection failed closed"
    return frame


def code_help_reply(namespace, kind, request):
    """The ``complete_reply`` / ``inspect_reply`` frame for ``kind``."""
    # Loaded on first use: completion may import jedi, which most workers
    # never need.
    from openai4s.kernel.runtime import completion

    frame = {"type": kind + "_reply", "id": request.get("id")}
    code, cursor = request.get("code"), request.get("cursor")
    try:
        if kind == "complete":
            frame.update(completion.complete(namespace, code, cursor))
        else:
            level = request.get("detail_level", 0)
            frame.update(completion.inspect_code(namespace, code, cursor, level))
    except Exception as exc:
        if kind == "complete":
            frame.update(matches=[], cursor_start=0, cursor_end=0)
        else:
            frame.update(found=False, data={})
        frame["error"] = f"{kind} failed: {type(exc).__name__}"
    return frame


def last_stdout_reply(last, cell_id):
    """The ``stdout_text`` frame: the last Cell's captured stdout, for a host
    whose chunks did not add up (a lost frame, a forked child writing with
    the same id). ``last`` is ``(cell_id, text)`` or None."""
    frame = {"type": "stdout_text", "id": cell_id, "text": ""}
    if last is not None and last[0] == cell_id:
        frame["text"] = last[1]
    else:
        frame["error"] = "no stdout kept for this cell"
    return frame
