"""Through `openai4s.Kernel`: a sandboxed cell that cannot open a file that
exists on this machine gets the one-line hint at the end of its stderr,
as the REPL and the Jupyter kernel show it; a path missing here too, an
unsandboxed kernel and a cell that did not fail get none."""

from openai4s.kernel import Kernel
from openai4s.kernel.sandbox_status import sandbox_for

HINT = "exists on this machine but is outside the sandbox"


def _outside_file(tmp_path):
    outside = tmp_path / "data" / "counts.csv"
    outside.parent.mkdir()
    outside.write_text("a,b\n")
    return outside


def test_a_host_file_outside_the_sandbox_gets_the_hint_on_stderr(kernel, tmp_path, workspace):
    outside = _outside_file(tmp_path)
    result = kernel.execute(f"import sys\nprint('before', file=sys.stderr)\nopen({str(outside)!r})")
    assert result["error"].rstrip().endswith(f"No such file or directory: {str(outside)!r}")
    assert result["stderr"] == (
        f"before\nhint: {outside} {HINT}; copy it into the workspace ({workspace}) "
        "or add its directory to OPENAI4S_KERNEL_SANDBOX_READ_PATHS\n"
    )
    # A relative spelling resolves against the workspace, as the cell meant.
    (workspace / "inside.txt").write_text("x")
    assert kernel.execute("open('inside.txt').read()")["error"] is None
    # A path missing on the host too: only the error.
    missing = kernel.execute(f"open({str(outside) + '.absent'!r})")
    assert missing["error"] and missing["stderr"] == ""
    # The kernel is as usable as before.
    assert kernel.execute("print(6 * 7)")["stdout"] == "42\n"


def test_no_hint_without_a_sandbox_or_without_a_failure(tmp_path, workspace):
    outside = _outside_file(tmp_path)
    with Kernel(cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode="off")) as kernel:
        result = kernel.execute(f"open({str(outside) + '.absent'!r})")
        assert result["error"] and HINT not in (result["stderr"] or "")
        # Unsandboxed, the host file is simply there.
        assert kernel.execute(f"open({str(outside)!r}).read()")["error"] is None


def test_a_cell_that_prints_an_error_line_but_succeeds_gets_no_hint(kernel, tmp_path):
    outside = _outside_file(tmp_path)
    text = f"FileNotFoundError: [Errno 2] No such file or directory: {str(outside)!r}"
    result = kernel.execute(f"print({text!r})")
    assert result["error"] is None and HINT not in result["stdout"] + result["stderr"]
