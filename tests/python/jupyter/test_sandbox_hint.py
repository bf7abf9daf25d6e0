"""A sandboxed cell that cannot find a file plainly on this machine gets a
one-line hint on stderr, after its traceback (Python and R); an unsandboxed
kernel, or a path missing on the host too, gets none."""

import shutil

import pytest

from jupyter_support import (
    KernelEnvironment,
    bubblewrap_unavailable_reason,
    kernel_missing_reason,
)
from kernel_client import RunningKernel

pytestmark = pytest.mark.skipif(
    kernel_missing_reason() is not None, reason=str(kernel_missing_reason())
)

HINT = "exists on this machine but is outside the sandbox"


def _kernel(mode, lang):
    if mode == "enforce":
        reason = bubblewrap_unavailable_reason()
        if reason:
            pytest.skip(f"bubblewrap cannot sandbox a kernel here: {reason}")
    if lang == "r" and shutil.which("Rscript") is None:
        pytest.skip("R is not installed (r-base-core)")
    environment = KernelEnvironment(sandbox_mode=mode, lang=lang)
    outside = environment.workspace.parent / "outside.csv"
    outside.write_text("a,b\n1,2\n")
    return environment, RunningKernel(environment), outside


def _stderr_after_error(outputs):
    kinds = [m["msg_type"] for m in outputs]
    assert "error" in kinds, kinds
    after = outputs[kinds.index("error") + 1 :]
    return "".join(
        m["content"]["text"]
        for m in after
        if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"
    )


READERS = {"python": "open({path!r}).read()", "r": "read.csv('{path}')"}


@pytest.mark.parametrize("lang", ["python", "r"])
def test_a_host_file_outside_the_sandbox_gets_a_hint(lang):
    environment, kernel, outside = _kernel("enforce", lang)
    try:
        reply, outputs = kernel.execute(READERS[lang].format(path=str(outside)))
        assert reply["status"] == "error"
        hint = _stderr_after_error(outputs)
        assert hint.startswith(f"hint: {outside} {HINT}"), hint
        assert hint.count("\n") == 1 and "OPENAI4S_KERNEL_SANDBOX_READ_PATHS" in hint
        # A path missing on the host too: no hint, only the error.
        reply, outputs = kernel.execute(READERS[lang].format(path=str(outside) + ".absent"))
        assert reply["status"] == "error" and _stderr_after_error(outputs) == ""
    finally:
        kernel.shutdown()
        environment.cleanup()


def test_an_unsandboxed_kernel_gives_no_hint():
    environment, kernel, outside = _kernel("off", "python")
    try:
        reply, outputs = kernel.execute(f"open({str(outside) + '.absent'!r}).read()")
        assert reply["status"] == "error" and _stderr_after_error(outputs) == ""
    finally:
        kernel.shutdown()
        environment.cleanup()
