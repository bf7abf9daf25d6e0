"""A cell's stdout travels once, as chunks, and the host rebuilds it; these
are the ways that could go wrong, through a real host and worker."""

import pathlib

from openai4s.kernel import Kernel

FORKED_WRITERS = """
import multiprocessing as mp, sys

def child(tag):
    for _ in range(20):
        sys.stdout.write(tag * 50_000 + "\\n")

procs = [mp.get_context("fork").Process(target=child, args=(t,)) for t in "CD"]
for p in procs:
    p.start()
for _ in range(15):
    sys.stdout.write("P" * 50_000 + "\\n")
for p in procs:
    p.join()
"""


def test_forked_children_writing_through_the_cell_s_stdout_do_not_change_its_result(tmp_path):
    # The children inherit the buffer, its stream id and the protocol pipe:
    # their chunks duplicate the parent's sequence numbers (and may garble
    # frames). The host notices and asks the worker for the captured text.
    with Kernel(cwd=tmp_path) as k:
        for _ in range(3):
            result = k.execute(FORKED_WRITERS)
            assert result["error"] is None, result["error"]
            assert result["stdout"] == ("P" * 50_000 + "\n") * 15
        assert k._core.mismatched_streams >= 1
        assert k.execute("print('still aligned')")["stdout"] == "still aligned\n"


def test_a_stale_handler_under_a_reused_cell_id_stays_out_of_the_result(tmp_path):
    with Kernel(cwd=tmp_path) as k:
        k.execute(
            "import logging, sys\n"
            "log = logging.getLogger('stale')\n"
            "log.addHandler(logging.StreamHandler(sys.stdout))\n"
            "log.setLevel(logging.INFO)",
            cell_id="step",
        )
        seen = []
        result = k.execute(
            "log.info('from the handler bound to an earlier cell')\nprint('this cell')",
            cell_id="step",
            on_chunk=seen.append,
        )
        assert result["stdout"] == "this cell\n"
        # Live delivery is as before: the same id reaches on_chunk.
        assert "from the handler bound to an earlier cell\n" in seen

        spilled = k.execute("print('y' * 1_100_000)\nlog.info('LATE LOG LINE')", cell_id="step")
        marker = f"\n...(truncated at 1000000 characters; full output in {spilled['stdout_file']})"
        assert spilled["stdout"].endswith(marker)
        assert "LATE LOG LINE" not in spilled["stdout"]


def test_a_spilled_flood_comes_back_as_the_head_of_its_file(tmp_path):
    with Kernel(cwd=tmp_path) as k:
        result = k.execute(
            "import sys\nfor i in range(150):\n    sys.stdout.write(f'{i:05d}' + 'é' * 9_995)\n"
        )
        k.execute("pass")  # the spill file is complete before the next request
        whole = pathlib.Path(tmp_path, result["stdout_file"]).read_text(encoding="utf-8")
    marker = f"\n...(truncated at 1000000 characters; full output in {result['stdout_file']})"
    head = result["stdout"][: -len(marker)]
    assert result["stdout"].endswith(marker)
    assert len(result["stdout"]) <= 1_000_064
    assert head == whole[: len(head)]
    assert len(whole) == 150 * 10_000
