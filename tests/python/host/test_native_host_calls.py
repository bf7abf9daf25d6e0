"""With the stock dispatcher a host call never enters Python on the host
side; an overridden hook is honoured (issue 25 point 3)."""

import sys

from openai4s import host_dispatch
from openai4s.kernel import Kernel

from host_support import allow_bash, audit_rows

CELL = "for _ in range(3):\n    _c = host.capabilities()\nprint(_c['bash'])"


def python_calls_during(fn):
    """The Python functions called on this thread (the execute thread, where
    the core services host calls) while fn runs: (file name, function)."""
    seen = []

    def profile(frame, event, _arg):
        if event == "call":
            seen.append((frame.f_code.co_filename, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
    return result, seen


def host_dispatch_calls(seen):
    return [name for path, name in seen if path == host_dispatch.__file__]


def test_stock_dispatcher_host_calls_run_no_python(dispatcher, workspace):
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result, seen = python_calls_during(lambda: k.execute(CELL))
    assert result["error"] is None and result["stdout"].strip() == "True"
    assert [row[0] for row in audit_rows(dispatcher)] == ["capabilities"] * 3
    # Once per request the core asks whether the dispatcher is the stock
    # one; the three calls themselves never enter host_dispatch.
    assert "__call__" not in host_dispatch_calls(seen)
    assert "bind_bash_generation" not in host_dispatch_calls(seen)


def test_native_calls_carry_frame_action_and_generation(dispatcher, workspace):
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        k.execute("host.capabilities()", action_context={"action_id": "act-1"})
        row = dispatcher.store._conn.execute(
            "SELECT frame_id, action_id FROM host_call_log WHERE method = 'capabilities'"
        ).fetchone()
    assert row == (dispatcher.frame_id, "act-1")


def test_a_dispatcher_call_patched_on_the_class_is_used(dispatcher, workspace, monkeypatch):
    called = []
    stock = host_dispatch.HostDispatcher.__call__

    def spy(self, method, args):
        called.append(method)
        return stock(self, method, args)

    monkeypatch.setattr(host_dispatch.HostDispatcher, "__call__", spy)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        assert k.execute("print(host.capabilities()['bash'])")["stdout"].strip() == "True"
    assert called == ["capabilities"]


def test_an_authorize_override_on_the_instance_is_used(dispatcher, workspace):
    seen = []

    def authorize(spec):
        seen.append(spec.get("command"))
        return {"error": "refused by the test's override"}

    allow_bash(dispatcher)
    dispatcher._bash_authorization.authorize = authorize
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        result = k.execute("host.bash('echo hi')")
    assert seen == ["echo hi"]
    assert result["error"] is not None


def test_a_subclass_goes_through_python(tmp_path, workspace):
    from openai4s.config import Config, LLMConfig

    class Counting(host_dispatch.HostDispatcher):
        calls = 0

        def __call__(self, method, args):
            Counting.calls += 1
            return super().__call__(method, args)

    cfg = Config(data_dir=tmp_path / "sub", llm=LLMConfig(provider="deepseek", api_key="x"))
    counting = Counting(cfg, workspace=workspace)
    with Kernel(dispatcher=counting, cwd=workspace) as k:
        k.execute("host.capabilities()")
    assert Counting.calls == 1
