"""Helpers for the host-side tests."""


def allow_bash(dispatcher):
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="bash",
        pattern="*",
        decision="allow",
    )


def audit_rows(dispatcher):
    return dispatcher.store._conn.execute(
        "SELECT method, ok, permission_decision_id FROM host_call_log ORDER BY created_at"
    ).fetchall()
