"""The host's one table of methods (src/host/host_methods.cpp) against the
worker SDK that calls them, the store's default rules, and a real kernel."""

import ast
from pathlib import Path

import pytest

from openai4s import _core
from openai4s.kernel import Kernel

from host_support import audit_rows

ROOT = Path(__file__).resolve().parents[3]
# Where the worker names host methods: the `host` facade and the runtime's
# provenance hooks.
SDK_SOURCES = [
    *sorted((ROOT / "python" / "openai4s" / "sdk").glob("*.py")),
    *sorted((ROOT / "python" / "openai4s" / "kernel" / "runtime").glob("*.py")),
]
# The callables through which the worker issues a host call.
CALLERS = {"_call", "call", "host_call", "_host_call"}
# The methods this host serves; every other row is refused with a clear error.
SERVED = {
    "authorize_bash",
    "consume_bash_authorization",
    "record_bash_result",
    "egress_check",
    "save_artifact",
    "prov_record",
    "prov_resolve_path",
    "capabilities",
    "env_setup",
    "env_list",
    "env_use",
    "env_lock",
    "web_fetch",
    "web_download",
    "request_network_access",
    "exec_background",
    "exec_peek",
    "exec_interrupt",
    "exec_list",
}


def sdk_methods():
    """(method, file:line) for every host call with a literal method name."""
    found = {}
    for path in SDK_SOURCES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if name in CALLERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.setdefault(first.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def table():
    return {row["name"]: row for row in _core.host_methods()}


def test_every_method_the_sdk_calls_is_in_the_table():
    called = sdk_methods()
    assert len(called) > 80, "the scan found too few host calls; did the SDK move?"
    missing = {method: where for method, where in called.items() if method not in table()}
    assert missing == {}, "the worker SDK calls methods the host table lacks"


def test_the_table_names_no_method_the_sdk_never_calls():
    stale = set(table()) - set(sdk_methods())
    assert stale == set(), "table rows no worker code calls"


def test_the_served_methods_are_exactly_those_with_handlers():
    served = {name for name, row in table().items() if row["served"]}
    assert served == SERVED


def test_a_method_is_declared_once():
    names = [row["name"] for row in _core.host_methods()]
    assert len(names) == len(set(names))


def test_the_tables_default_rules_are_the_ones_the_store_seeds(dispatcher):
    declared = {
        (row["name"], pattern, decision)
        for row in _core.host_methods()
        for pattern, decision in row["default_rules"]
    }
    seeded = set(
        dispatcher.store._conn.execute(
            "SELECT tool, pattern, decision FROM permission_rules WHERE scope = 'global'"
        ).fetchall()
    )
    assert declared == seeded


def test_an_unserved_method_is_refused_in_one_line_naming_it(dispatcher):
    with pytest.raises(ValueError) as raised:
        dispatcher("llm", [{"prompt": "hi"}])
    message = str(raised.value)
    assert "\n" not in message
    assert "'llm'" in message and "does not serve it" in message
    assert audit_rows(dispatcher) == [], "a refused call leaves no audit row"


def test_an_unserved_method_errors_in_the_cell_and_the_kernel_stays_usable(dispatcher, workspace):
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result = k.execute("host.current_model()")
        assert result["error"] is not None
        assert "host.current_model error: unknown host method: 'current_model'" in result["error"]
        assert "does not serve it" in result["error"]
        assert k.execute("print(host.capabilities()['bash'])")["stdout"].strip() == "True"


def test_a_call_over_its_argument_bound_is_refused_before_the_handler(dispatcher):
    with pytest.raises(ValueError, match="'capabilities' takes at most 1 argument"):
        dispatcher("capabilities", [{}, {}, {}])
    assert audit_rows(dispatcher) == []


def test_a_name_outside_the_table_keeps_the_specs_refusal(dispatcher):
    with pytest.raises(ValueError, match=r"^unknown host method: 'bash'$"):
        dispatcher("bash", [{}])
