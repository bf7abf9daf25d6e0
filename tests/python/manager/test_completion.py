"""complete() and inspect() through real workers: useful answers, and never
a user-defined hook run to get them."""

import threading

import pytest

from openai4s.kernel import Kernel, KernelBusyError


def _matches(kernel, code, cursor=None):
    reply = kernel.complete(code, len(code) if cursor is None else cursor)
    return reply["matches"]


def test_completion_of_names_attributes_modules_and_imports(kernel):
    kernel.execute(
        "import os\n"
        "class Point:\n"
        "    def norm(self): return 0\n"
        "    def __init__(self): self.x_coord = 1\n"
        "point = Point()\n"
        "particle_count = 3"
    )
    assert _matches(kernel, "par")[:1] == ["particle_count"]
    assert {"norm", "x_coord"} <= set(_matches(kernel, "point."))
    assert _matches(kernel, "point.no") == ["norm"]
    assert "path" in _matches(kernel, "os.pa")
    assert "join" in _matches(kernel, "os.path.jo")
    assert "os" in _matches(kernel, "import o")
    reply = kernel.complete("print(point.x_)", 14)
    assert reply == {"matches": ["x_coord"], "cursor_start": 12, "cursor_end": 14}


def test_jedi_completes_what_the_namespace_cannot_say(kernel):
    pytest.importorskip("jedi")
    assert "upper" in _matches(kernel, "'abc'.up")
    assert "local_helper" in _matches(kernel, "def local_helper(): pass\nlocal_h")


HOSTILE = (
    "events = []\n"
    "class Meta(type):\n"
    "    def __getattr__(cls, name): events.append('meta-getattr'); return 1\n"
    "    def __dir__(cls): events.append('meta-dir'); return ['x']\n"
    "    def __repr__(cls): events.append('meta-repr'); return 'M'\n"
    "class Descriptor:\n"
    "    def __get__(self, obj, owner): events.append('descriptor'); return 1\n"
    "class Hostile(metaclass=Meta):\n"
    "    '''Hostile docs.'''\n"
    "    trap = Descriptor()\n"
    "    def __getattr__(self, name): events.append('getattr:' + name); return self\n"
    "    def __getattribute__(self, name):\n"
    "        events.append('getattribute:' + name)\n"
    "        return object.__getattribute__(self, name)\n"
    "    def __dir__(self): events.append('dir'); return ['fake']\n"
    "    def __repr__(self): events.append('repr'); return 'Hostile()'\n"
    "    @property\n"
    "    def prop(self): events.append('property'); return self\n"
    "    def method(self, a, b=2): '''Method docs.'''\n"
    "hostile = Hostile()\n"
)


def test_completion_and_help_never_run_user_hooks(kernel):
    assert kernel.execute(HOSTILE)["error"] is None
    requests = [
        "hostile.",
        "hostile.pr",
        "hostile.prop.",
        "hostile.missing.",
        "hostile.trap.",
        "Hostile.",
        "Hostile.trap.",
        "hostile.method(",
        "hos",
        "[hostile][0].",
        "hostile().",
    ]
    completions = {code: _matches(kernel, code) for code in requests}
    helps = {
        code: kernel.inspect(code, len(code), detail_level)
        for code in ("hostile", "hostile.prop", "hostile.trap", "Hostile", "hostile.method(")
        for detail_level in (0, 1)
    }
    assert kernel.execute("print(events)")["stdout"] == "[]\n"
    assert {"method", "prop", "trap"} <= set(completions["hostile."])
    assert "fake" not in completions["hostile."]
    assert completions["hostile.pr"] == ["prop"]
    assert completions["hostile.prop."] == []
    assert "hostile" in completions["hos"]
    assert all(reply["found"] for reply in helps.values())
    text = kernel.inspect("hostile", 7)["data"]["text/plain"]
    assert "Hostile" in text and "Hostile()" not in text
    assert "not inspected (reading it would run property 'prop')" in (
        kernel.inspect("hostile.prop", 12)["data"]["text/plain"]
    )
    method_help = kernel.inspect("hostile.method(", 15)["data"]["text/plain"]
    assert "Signature: hostile.method(self, a, b=2)" in method_help
    assert "Method docs." in method_help
    assert "Hostile docs." in kernel.inspect("Hostile", 7)["data"]["text/plain"]
    assert kernel.execute("print(events)")["stdout"] == "[]\n"


def test_inspect_shows_signature_docs_and_at_detail_1_the_cell_source(kernel):
    kernel.execute(
        "def scale(values, factor=2.5, *, clip=None):\n    '''Scale values.'''\n    return values"
    )
    brief = kernel.inspect("scale", 5)
    assert brief["found"] is True
    text = brief["data"]["text/plain"]
    assert "Signature: scale(values, factor=2.5, *, clip=None)" in text
    assert "Scale values." in text and "return values" not in text
    assert "return values" in kernel.inspect("scale(", 6, detail_level=1)["data"]["text/plain"]
    assert kernel.inspect("nothing_here", 3)["found"] is False


def test_arguments_are_checked_before_any_frame(kernel):
    with pytest.raises(TypeError):
        kernel.complete(b"x", 1)
    with pytest.raises(TypeError):
        kernel.complete("x", "1")
    with pytest.raises(ValueError, match="cursor"):
        kernel.complete("x", 5)
    with pytest.raises(ValueError, match="detail_level"):
        kernel.inspect("x", 1, detail_level=3)
    assert kernel.execute("print('aligned')")["stdout"] == "aligned\n"


def test_a_busy_kernel_refuses_completion_fast(kernel):
    started = threading.Event()
    runner = threading.Thread(
        target=lambda: kernel.execute(
            "print('go', flush=True)\nimport time\ntime.sleep(3)",
            on_chunk=lambda _t: started.set(),
        )
    )
    runner.start()
    try:
        assert started.wait(30)
        with pytest.raises(KernelBusyError):
            kernel.complete("pri", 3)
        with pytest.raises(KernelBusyError):
            kernel.inspect("print", 3)
    finally:
        runner.join(30)
    assert "print" in _matches(kernel, "pri")


def test_without_jedi_completion_falls_back_to_static_names(tmp_path):
    with Kernel(cwd=tmp_path) as kernel:
        kernel.execute("import sys\nsys.modules['jedi'] = None\nvalue_one = 1")
        assert _matches(kernel, "value_") == ["value_one"]
        assert "os" in _matches(kernel, "import o")
        assert "path" in _matches(kernel, "sys.pa")
        assert (
            kernel.execute("print('jedi' in sys.modules and sys.modules['jedi'])")["stdout"]
            == "None\n"
        )


def test_the_variable_inspector_gives_array_shape_dtype_and_lengths(kernel):
    pytest.importorskip("numpy")
    kernel.execute(
        "import numpy as np, collections\n"
        "events = []\n"
        "class Sub(np.ndarray):\n"
        "    @property\n"
        "    def shape(self): events.append('shape'); return (0,)\n"
        "grid = np.zeros((3, 4), dtype=np.float32)\n"
        "sub = np.zeros(2).view(Sub)\n"
        "queue = collections.deque([1, 2, 3])\n"
        "buf = bytearray(b'abcd')\n"
    )
    variables = {v["name"]: v for v in kernel.inspect_variables()["variables"]}
    assert variables["grid"] == {
        "name": "grid",
        "type": "ndarray",
        "kind": "array",
        "shape": [3, 4],
        "length": 3,
        "dtype": "float32",
    }
    assert variables["sub"] == {"name": "sub", "type": "Sub"}
    assert variables["queue"]["length"] == 3 and variables["buf"]["length"] == 4
    assert kernel.execute("print(events)")["stdout"] == "[]\n"
