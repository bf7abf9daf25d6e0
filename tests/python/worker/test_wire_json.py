"""The worker's JSON codec agrees with the json package it stands in for."""

import json
import os
import subprocess

import pytest

from openai4s.kernel.runtime import wire_json
from worker_harness import PYTHON, WORKER

DOCUMENTS = [
    '{"a":1}',
    ' \n [1, 2.5, -0.0, 1e400, "x\\u00e9\\ud83d\\ude00"] \r\n',
    '"\\ud800"',
    "NaN",
    "[-Infinity, Infinity]",
    '{"a": {"b": [true, false, null]}, "a": 2}',
    "12345678901234567890123",
    b'{"bytes": "\xc3\xa9"}',
    '{"k": "v"}'.encode("utf-16"),
]

NOT_JSON = [
    "",
    "   ",
    '{"a":1} x',
    "[1,",
    "\ufeff1",
    '"\x01"',
    '{"a" 1}',
    "01",
    "[1] [2]",
]

VALUES = [
    {"a": [1, 2, (3, 4)], 1: 2, None: 3, True: "é\n", 2.5: "\x7f"},
    "é\x01\u2028",
    1.5,
    [float("inf")],
    [float("nan")],
    {"k": object()},
    {(1, 2): "tuple key"},
    [{"nested": [{"deep": ["x"] * 3}]}],
]


def _outcome(call, *args, **kwargs):
    try:
        return ("ok", repr(call(*args, **kwargs)))
    except Exception as exc:
        return (type(exc), str(exc))


@pytest.mark.parametrize("document", DOCUMENTS + NOT_JSON)
def test_decode_is_json_loads(document):
    assert _outcome(wire_json.decode, document) == _outcome(json.loads, document)


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"ensure_ascii": True},
        {"separators": (", ", ": "), "allow_nan": True},
        {"sort_keys": True, "allow_nan": True},
        {"default": repr},
    ],
    ids=["wire", "ascii", "spaced", "sorted", "default"],
)
def test_encode_is_json_dumps(value, options):
    expected = {"ensure_ascii": False, "separators": (",", ":"), "allow_nan": False}
    expected.update(options)
    assert _outcome(wire_json.encode, value, **options) == _outcome(json.dumps, value, **expected)


def test_a_cycle_is_refused_and_the_next_value_still_encodes():
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        wire_json.encode({"x": loop})
    shared = [1]
    assert wire_json.encode([shared, shared]) == "[[1],[1]]"


def test_not_json_is_reported_in_a_worker_that_never_imported_json(tmp_path):
    # The C scanner finds its error class in sys.modules only; a worker
    # without json must still raise json's error, not a SystemError.
    probe = (
        "import sys\n"
        "from openai4s.kernel.runtime import wire_json\n"
        "before = 'json' in sys.modules\n"
        "try:\n"
        "    wire_json.decode('{\"a\" 1}')\n"
        "except ValueError as exc:\n"
        "    print(before, type(exc).__name__, exc)\n"
    )
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(WORKER)))
    out = subprocess.run(
        [PYTHON, "-c", probe],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": package_parent},
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.stdout == (
        "False JSONDecodeError Expecting ':' delimiter: line 1 column 6 (char 5)\n"
    ), out.stderr
