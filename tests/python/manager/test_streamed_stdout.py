"""A cell's stdout travels once, as chunks, and the host rebuilds it; these
are the ways that could go wrong, through a real host and worker."""

import pathlib

from openai4s.kernel import Kernel

FORKED_WRITERS = """
import multiprocessing as mp, sys

def child(tag):
    for _ in range(20):
        sys.stdout.write(tag * 20_000 + "\\n")

procs = [mp.get_context("fork").Process(target=child, args=(t,)) for t in "CD"]
for p in procs:
    p.start()
for _ in range(15):
    sys.stdout.write("P" * 50_000 + "\\n")
for p in procs:
    p.join()
"""


def test_forked_children_writing_through_the_cell_s_stdout_do_not_change_its_result(tmp_path):
    # The children inherit the buffer and the protocol pipe. Their output
    # is shown live, under a stream of their own (never the cell's result),
    # in frames small enough to be written atomically (never garbled).
    with Kernel(cwd=tmp_path) as k:
        for _ in range(3):
            seen = []
            result = k.execute(FORKED_WRITERS, on_chunk=seen.append)
            assert result["error"] is None, result["error"]
            assert result["stdout"] == ("P" * 50_000 + "\n") * 15
            live = "".join(seen)
            assert live.count("C") == live.count("D") == 20 * 20_000
        assert k._core.malformed_frames == 0
        assert k._core.mismatched_streams == 0
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


OUTLIVING_WRITERS = """
import multiprocessing as mp, sys, time

def child(tag):
    for _ in range(8):
        sys.stdout.write(tag * 110_000 + "\\n")
        time.sleep(0.002)

children = [mp.get_context("fork").Process(target=child, args=(t,)) for t in "ABCD"]
for c in children:
    c.start()
for _ in range(9):
    sys.stdout.write("P" * 100_000 + "\\n")
"""


def _with_deadline(function, seconds=60):
    import threading

    outcome = []
    runner = threading.Thread(target=lambda: outcome.append(function()), daemon=True)
    runner.start()
    runner.join(seconds)
    assert outcome, "the call never returned (the protocol desynchronised)"
    return outcome[0]


def test_children_still_writing_after_the_cell_cannot_desynchronise_the_kernel(tmp_path):
    # Their frames interleave with the worker's on one pipe: every frame must
    # arrive whole (atomic writes), and none of theirs may count as the cell's.
    with Kernel(cwd=tmp_path) as k:
        seen = []
        result = _with_deadline(lambda: k.execute(OUTLIVING_WRITERS, on_chunk=seen.append))
        assert result["error"] is None, result["error"]
        assert result["stdout"] == ("P" * 100_000 + "\n") * 9
        later = _with_deadline(
            lambda: k.execute("import time\nfor c in children:\n    c.join()\nprint('joined')")
        )
        assert later["stdout"] == "joined\n"
        assert k._core.malformed_frames == 0


def test_a_forked_child_overflowing_leaves_the_cell_s_spill_file_alone(tmp_path):
    code = (
        "import multiprocessing as mp, sys\n"
        "from openai4s.kernel.runtime import spill\n"
        "spill.MAX_PENDING_CHARS = 1000\n"  # flush as it goes, in the child too
        "sys.stdout.write('p' * 1_200_000)\n"  # the cell's spill file exists now
        "def child():\n"
        "    sys.stdout.write('c' * 1_500_000)\n"
        "proc = mp.get_context('fork').Process(target=child)\n"
        "proc.start(); proc.join()\n"
        "sys.stdout.write('q' * 10)\n"
    )
    with Kernel(cwd=tmp_path) as k:
        result = k.execute(code, cell_id="fork-spill")
        k.execute("pass")  # the spill is complete before the next request
        whole = pathlib.Path(tmp_path, result["stdout_file"]).read_text()
        leftovers = sorted(p.name for p in (tmp_path / ".openai4s" / "outputs").iterdir())
    assert whole == "p" * 1_200_000 + "q" * 10
    assert leftovers == ["fork-spill.stdout.txt"]
