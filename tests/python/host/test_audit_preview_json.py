"""The audit log's argument previews are JSON documents, however large or
odd the arguments a cell sends (values are cut, never the document)."""

import json

from openai4s.kernel import Kernel


def test_oversized_arguments_leave_a_valid_json_preview(dispatcher, workspace):
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result = k.execute(
            "for args in (\n"
            "    [{'blob': 'x' * 5000, 'after': 'kept'}],\n"
            "    [list(range(3000))],\n"
            "    ['\"' * 2000],\n"
            "    [{'k%d' % i: 'é' * 50 for i in range(200)}],\n"
            "):\n"
            "    host._call('capabilities', args)\n"
        )
    assert result["error"] is None, result
    rows = dispatcher.store._conn.execute(
        "SELECT args_preview FROM host_call_log WHERE method = 'capabilities' ORDER BY rowid"
    ).fetchall()
    assert len(rows) == 4, rows
    for (preview,) in rows:
        assert len(preview) <= 500
        json.loads(preview)  # raises on a cut document
    assert json.loads(rows[0][0])[0]["after"] == "kept"
