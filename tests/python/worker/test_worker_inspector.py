"""The variable inspector: safe summaries that never run user code."""

import hashlib

import pytest

from openai4s.kernel.runtime import inspector


def _sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def _one(value, name="v"):
    return inspector.describe(name, value)


@pytest.mark.parametrize(
    ("value", "kind", "preview", "token"),
    [
        (None, "scalar", None, "none"),
        (True, "scalar", True, "bool:1"),
        (False, "scalar", False, "bool:0"),
        (42, "scalar", 42, "int:42"),
        (-7, "scalar", -7, "int:-7"),
        (0.93, "scalar", 0.93, "float:" + (0.93).hex()),
        (float("nan"), "scalar", "NaN", "float:nan"),
        (float("inf"), "scalar", "+Infinity", "float:+inf"),
        (float("-inf"), "scalar", "-Infinity", "float:-inf"),
        ("protein", "text", "protein", "str:protein"),
    ],
)
def test_scalars(value, kind, preview, token):
    entry = _one(value)
    assert entry["kind"] == kind and entry["preview"] == preview
    assert entry["fingerprint"] == _sha(token)


def test_long_text_and_bytes_are_previewed_bounded():
    entry = _one("a" * 300)
    assert entry["length"] == 300 and entry["preview"] == "a" * 239 + "…"
    entry = _one(bytes(range(60)))
    assert entry["kind"] == "bytes" and entry["length"] == 60
    assert entry["preview"] == "0x" + bytes(range(48)).hex() + "…"


def test_huge_values_have_bounded_tokens():
    big = 1 << 5000
    entry = _one(-big)
    assert entry["preview"] == "<integer 5001 bits>"
    low = str(big & ((1 << 256) - 1))
    assert entry["fingerprint"] == _sha(f"int-bounded:5001:{low}:negative")
    # Bounded by characters, then (the result being over 65,536 bytes) by bytes.
    chars = ("x" * 32_768 + "<...>" + "x" * 32_768 + "70000").encode()
    bounded = chars[:32_768] + b"<...>" + chars[-32_768:] + str(len(chars)).encode()
    token = b"str:" + bounded
    assert _one("x" * 70_000)["fingerprint"] == hashlib.sha256(token).hexdigest()


def test_containers_of_primitives():
    entry = _one([1, 2, 3])
    assert entry == {
        "name": "v",
        "type": "list",
        "kind": "sequence",
        "length": 3,
        "preview": "[1, 2, 3]",
        "fingerprint": _sha("list:3:int:1|int:2|int:3"),
    }
    assert _one((1, "a"))["preview"] == '(1, "a")'
    assert _one({"k": 1.5})["preview"] == '{"k": 1.5}'
    assert _one({"k": 1.5})["kind"] == "mapping"
    assert _one({3, 1, 2})["preview"] == "{1, 2, 3}"
    assert _one(frozenset({2}))["preview"] == "frozenset({2})"
    assert _one(list(range(20)))["preview"].endswith(", …]")
    assert _one({3, 1, 2})["fingerprint"] == _one({2, 3, 1})["fingerprint"]


def test_containers_with_anything_else_are_opaque():
    assert _one([1, object()]) == {"name": "v", "type": "list", "kind": "container", "length": 2}
    assert _one({"k": [1]}) == {"name": "v", "type": "dict", "kind": "container", "length": 1}


def test_other_objects_are_name_and_type_only():
    class Thing:
        pass

    class Sub(list):
        pass

    assert _one(Thing()) == {"name": "v", "type": "Thing"}
    assert _one(Sub([1])) == {"name": "v", "type": "Sub"}
    assert _one(len) == {"name": "v", "type": "builtin_function_or_method"}
    assert _one(1, name="n" * 300)["name"] == "n" * 160


def test_names_are_filtered_sorted_and_limited():
    namespace = {
        "__name__": "__openai4s__",
        "__builtins__": None,
        "host": 1,
        "openai4s": 1,
        "__dunder": 1,
        "_o4s_gate": 1,
        "_OpenAI4SSkillGate": 1,
        "_private": 1,
        "b": 2,
        "a": 1,
        "Z": 0,
        3: "not a str name",
    }
    body = inspector.inspect_namespace(namespace, 2)
    assert [entry["name"] for entry in body["variables"]] == ["Z", "_private"]
    assert body["truncated"] is True and body["limit"] == 2
    body = inspector.inspect_namespace(namespace, 500)
    assert [entry["name"] for entry in body["variables"]] == ["Z", "_private", "a", "b"]
    assert body["truncated"] is False


@pytest.mark.parametrize("limit", [0, 501, True, "3", 2.0, None])
def test_invalid_limits_are_refused(limit):
    with pytest.raises(inspector.InvalidLimit):
        inspector.inspect_namespace({}, limit)


HOSTILE = (
    "events = []\n"
    "class Meta(type):\n"
    "    def __getattribute__(cls, name):\n"
    "        events.append('meta-' + name)\n"
    "        return super().__getattribute__(name)\n"
    "    def __eq__(cls, other): events.append('meta-eq'); return False\n"
    "    def __hash__(cls): events.append('meta-hash'); return 1\n"
    "class Hostile(metaclass=Meta):\n"
    "    def __repr__(self): events.append('repr'); raise RuntimeError('repr')\n"
    "    def __len__(self): events.append('len'); raise RuntimeError('len')\n"
    "    def __sizeof__(self): events.append('sizeof'); raise RuntimeError('sizeof')\n"
    "    def __eq__(self, other): events.append('eq'); return False\n"
    "    def __hash__(self): events.append('hash'); return 1\n"
    "class TrapList(list):\n"
    "    def __repr__(self): events.append('list-repr'); raise RuntimeError('repr')\n"
    "    def __iter__(self): events.append('list-iter'); raise RuntimeError('iter')\n"
    "    def __len__(self): events.append('list-len'); raise RuntimeError('len')\n"
    "score = 0.93\n"
    "mixed = [1, Hostile()]\n"
    "hostile = Hostile()\n"
    "trap = TrapList([1, 2])\n"
    "keyed = {Hostile(): 1}\n"
    "_o4s_helper = 1\n"
    "_OpenAI4SGate = 2\n"
    "events.clear()\n"  # building the dict above hashed its key
)


def test_hostile_objects_run_no_hooks_end_to_end(worker):
    assert worker.execute(HOSTILE)[0]["error"] is None
    frame = worker.inspect()
    variables = {item["name"]: item for item in frame["variables"]}
    assert variables["score"]["preview"] == 0.93
    assert variables["mixed"] == {"name": "mixed", "type": "list", "kind": "container", "length": 2}
    assert variables["hostile"] == {"name": "hostile", "type": "Hostile"}
    assert variables["trap"] == {"name": "trap", "type": "TrapList"}
    assert variables["keyed"]["kind"] == "container"
    assert variables["Meta"] == {"name": "Meta", "type": "type"}
    assert variables["Hostile"] == {"name": "Hostile", "type": "Meta"}
    for hidden in ("host", "openai4s", "_o4s_helper", "_OpenAI4SGate", "__builtins__"):
        assert hidden not in variables
    assert worker.execute("print(events)")[0]["stdout"] == "[]\n"


def test_inspection_errors_are_answered(worker):
    request = {"type": "inspect_variables", "id": "variables-1", "limit": 0}
    worker.send(request)
    assert worker.read() == {
        "type": "variables_response",
        "id": "variables-1",
        "variables": [],
        "truncated": False,
        "limit": 0,
        "error": "invalid variable inspection limit",
    }
    worker.execute("x = 1")
    assert worker.inspect(limit=1)["variables"][0]["name"] == "x"
