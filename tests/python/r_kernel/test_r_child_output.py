"""What R's child processes and native code write on fds 1 and 2 joins the
cell's stdout/stderr, live and in order with R's own output (fds 1/2 point
at the cell's fifos while it runs), through the Python API, in both
sandbox modes. A process the cell leaves running costs the cell nothing:
what it writes later goes to the worker's log, never into a later cell."""

import shutil
import subprocess

import pytest

NATIVE_SOURCE = r"""
#include <stdio.h>
#include <unistd.h>
void say(void) {
  write(1, "native out\n", 11);
  write(2, "native err\n", 11);
  printf("buffered printf\n"); /* C stdio: flushed with the cell */
}
"""


def test_background_children_and_shells_write_into_the_running_cell(r_kernel):
    result = r_kernel.execute(
        "cat('r1\\n')\n"
        "system('echo child-wait-false; echo to-err >&2', wait = FALSE)\n"
        "Sys.sleep(0.5)\n"
        "p <- pipe('sh -c \"echo from-pipe-stderr >&2; echo kept\"'); x <- readLines(p); close(p)\n"
        "invisible(system2('sh', c('-c', shQuote('echo s2err >&2')), stdout = TRUE))\n"
        "cat('r2\\n'); message('m2')\n"
    )
    assert result["error"] is None, result
    assert result["stdout"] == "r1\nchild-wait-false\nr2\n", result["stdout"]
    assert result["stderr"] == "to-err\nfrom-pipe-stderr\ns2err\nm2\n", result["stderr"]


def test_child_output_streams_live_before_the_cell_ends(r_kernel, workspace):
    seen = []

    def on_chunk(text):
        seen.append(text)
        if "first" in "".join(seen):
            (workspace / "go").write_text("")

    # The child waits (at most 20 s) for the caller to have seen its first
    # line: only a live stream lets it go on.
    result = r_kernel.execute(
        "system('echo first; for i in $(seq 400); do [ -e go ] && break; sleep 0.05; done; "
        "[ -e go ] && echo second || echo never-seen')",
        on_chunk=on_chunk,
    )
    assert result["stdout"] == "first\nsecond\n", result
    assert "".join(seen) == result["stdout"]


def test_a_megabyte_from_a_child_arrives_whole_and_in_order(r_kernel):
    # 5 + 999,990 + 5 bytes: exactly the 1,000,000 a cell's stdout keeps.
    result = r_kernel.execute(
        "cat('head\\n'); system('yes 0123456789abcde | head -c 999990'); cat('tail\\n')"
    )
    assert result["error"] is None
    body = ("0123456789abcde\n" * 62500)[:999_990]
    assert result["stdout"] == "head\n" + body + "tail\n"
    usage = result["usage"]
    assert usage["stdout_seen_bytes"] == 1_000_000 and usage["stdout_dropped_bytes"] == 0


def test_a_process_left_running_writes_to_the_log_not_into_later_cells(r_kernel, workspace):
    # It waits for the caller (at most 20 s), so it surely outlives the cell.
    result = r_kernel.execute(
        "system('(for i in $(seq 400); do [ -e release ] && break; sleep 0.05; done; "
        "echo late-out; echo late-err >&2) &'); cat('cell done\\n')"
    )
    assert result["stdout"] == "cell done\n" and result["stderr"] == "", result
    (workspace / "release").write_text("")
    later = r_kernel.execute("Sys.sleep(1); cat('next\\n')")
    assert later["stdout"] == "next\n" and later["stderr"] == "", later
    log = r_kernel._stderr_tail.text()
    log = log.decode("utf-8", "replace") if isinstance(log, bytes) else log
    assert "late-out" in log and "late-err" in log, log[-500:]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (build-essential)")
def test_native_code_writing_to_fds_1_and_2_joins_the_cell(r_kernel, workspace):
    source = workspace / "say.c"
    source.write_text(NATIVE_SOURCE)
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", str(workspace / "say.so"), str(source)], check=True
    )
    result = r_kernel.execute(
        "d <- dyn.load(file.path(getwd(), 'say.so'))\n"
        "cat('before\\n'); invisible(.C(d$say)); cat('after\\n')"
    )
    if result["error"] and "say.so" in result["error"]:
        pytest.skip(f"this sandbox does not map workspace code: {result['error']}")
    assert result["error"] is None, result
    assert result["stdout"] == "before\nnative out\nafter\nbuffered printf\n", result
    assert result["stderr"] == "native err\n"
    # Between cells fds 1/2 are the worker's own again.
    assert r_kernel.execute("cat('plain\\n')")["stdout"] == "plain\n"
