"""Debian's jupyter_kernel_test.KernelTests against the installed
`openai4s-python` kernelspec: the protocol as a client no one here wrote
checks it, once with the default sandbox mode and once enforced."""

import unittest

import pytest
from jupyter_client.manager import start_new_kernel

from jupyter_support import (
    KERNEL_NAME,
    KernelEnvironment,
    bubblewrap_unavailable_reason,
    kernel_missing_reason,
)

jupyter_kernel_test = pytest.importorskip("jupyter_kernel_test")

pytestmark = pytest.mark.skipif(
    kernel_missing_reason() is not None, reason=str(kernel_missing_reason())
)


class OpenAI4SKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = KERNEL_NAME
    sandbox_mode = None
    language_name = "python"
    file_extension = ".py"

    code_hello_world = "print('hello, world')"
    code_stderr = "import sys; print('test', file=sys.stderr)"
    complete_code_samples = ["1", "print('hello, world')", "def f(x):\n  return x*2\n\n\n"]
    incomplete_code_samples = ["print('''hello", "def f(x):\n  x*2"]
    invalid_code_samples = ["import = 7q", "random = 3 + *"]
    code_generate_error = "raise ValueError('boom')"
    code_execute_result = [
        {"code": "1+2+3", "result": "6"},
        {"code": "[n*n for n in range(3)]", "result": "[0, 1, 4]"},
    ]
    code_history_pattern = "1?2*"
    supported_history_operations = ("tail", "range", "search")
    code_display_data = [
        {
            "code": "from openai4s.kernel.display import HTML; display(HTML('<b>x</b>'))",
            "mime": "text/html",
        },
    ]
    code_clear_output = "from openai4s.kernel.display import clear_output; clear_output()"
    completion_samples = [{"text": "zi", "matches": {"zip"}}]
    code_inspect_sample = "zip"

    @classmethod
    def setUpClass(cls):
        if cls.sandbox_mode == "enforce":
            reason = bubblewrap_unavailable_reason()
            if reason:
                raise unittest.SkipTest(f"bubblewrap cannot sandbox a kernel here: {reason}")
        cls.environment = KernelEnvironment(cls.sandbox_mode)
        cls._applied = cls.environment.applied()
        cls._applied.__enter__()
        cls.km, cls.kc = start_new_kernel(
            kernel_name=cls.kernel_name, cwd=str(cls.environment.workspace), startup_timeout=60
        )

    @classmethod
    def tearDownClass(cls):
        try:
            cls.kc.stop_channels()
            cls.km.shutdown_kernel()
        finally:
            cls._applied.__exit__(None, None, None)
            cls.environment.cleanup()

    def test_kernel_info_names_the_sandbox(self):
        self.flush_channels()
        self.kc.kernel_info()
        reply = self.kc.get_shell_msg(timeout=15)
        content = reply["content"]
        self.assertIn("sandbox:", content["banner"])
        self.assertRegex(content["language_info"]["version"], r"^3\.\d+\.\d+")
        if self.sandbox_mode == "enforce":
            self.assertIn("enforced", content["banner"])

    def test_a_rich_last_value_is_the_execute_result_with_its_mime_types(self):
        self.flush_channels()
        code = (
            "class Shown:\n"
            "    def _repr_html_(self): return '<i>shown</i>'\n"
            "    def __repr__(self): return 'Shown()'\n"
            "Shown()"
        )
        reply, output_msgs = self.execute_helper(code=code)
        self.assertEqual(reply["content"]["status"], "ok")
        results = [m for m in output_msgs if m["msg_type"] == "execute_result"]
        self.assertEqual(len(results), 1, [m["msg_type"] for m in output_msgs])
        data = results[0]["content"]["data"]
        self.assertEqual(data["text/html"], "<i>shown</i>")
        self.assertEqual(data["text/plain"], "Shown()")
        self.assertEqual(
            results[0]["content"]["execution_count"], reply["content"]["execution_count"]
        )
        # Shown once: not also as stdout text or as a display_data.
        kinds = [m["msg_type"] for m in output_msgs]
        self.assertNotIn("display_data", kinds)
        self.assertFalse([m for m in output_msgs if m["msg_type"] == "stream"], kinds)

    def test_a_trailing_semicolon_and_none_show_no_result(self):
        for code in ("1 + 1;", "None", "x = 5"):
            self.flush_channels()
            reply, output_msgs = self.execute_helper(code=code)
            self.assertEqual(reply["content"]["status"], "ok")
            self.assertEqual([m["msg_type"] for m in output_msgs], [], code)

    def test_a_failing_repr_of_the_last_value_is_the_cell_s_error(self):
        self.flush_channels()
        code = "class Bad:\n    def __repr__(self): raise RuntimeError('no repr')\nBad()"
        reply, output_msgs = self.execute_helper(code=code)
        self.assertEqual(reply["content"]["status"], "error")
        self.assertEqual(reply["content"]["ename"], "RuntimeError")
        self.assertNotIn("execute_result", [m["msg_type"] for m in output_msgs])


class TestEnforcedSandbox(OpenAI4SKernelTests):
    sandbox_mode = "enforce"


class TestDefaultSandbox(OpenAI4SKernelTests):
    sandbox_mode = None


del OpenAI4SKernelTests
