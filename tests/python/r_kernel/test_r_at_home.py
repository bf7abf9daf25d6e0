"""R as R users expect it, through a real Rscript worker: completion, help
and is_complete answered by R's own machinery, a quit() guard that is not in
the user's environment, child processes' output in the cell, an inspector
that describes R objects without running their methods, and plots that
leave no file behind. Sandbox off: none of this depends on the sandbox
(child output, which crosses it, also runs enforced)."""

import base64

import pytest

from openai4s.kernel.r_kernel import spawn_r_kernel
from openai4s.kernel.sandbox_status import sandbox_for


@pytest.fixture
def r(workspace):
    kernel = spawn_r_kernel(cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode="off"))
    yield kernel
    kernel.shutdown()


def test_completion_comes_from_r_and_never_evaluates_what_precedes_the_dollar(r, workspace):
    r.execute(
        "frame <- data.frame(alpha = 1, beta = 2)\nsideeffect <- function() file.create('ran')"
    )
    reply = r.complete("x <- 1\npas", 10)
    assert {"paste", "paste0"} <= set(reply["matches"])
    assert (reply["cursor_start"], reply["cursor_end"]) == (7, 10)
    reply = r.complete("frame$al", 8)
    assert reply["matches"] == ["alpha"] and reply["cursor_start"] == 6
    r.complete("sideeffect()$", 13)
    assert not (workspace / "ran").exists()


def test_help_is_r_s_help_page_or_a_description_that_runs_no_method(r, workspace):
    reply = r.inspect("paste", 2)
    assert reply["found"] and "Concatenate" in reply["data"]["text/plain"]
    r.execute(
        "obj <- structure(list(a = 1), class = 'mine')\n"
        "print.mine <- function(x, ...) file.create('ran')\n"
        "format.mine <- function(x, ...) file.create('ran')\n"
        "length.mine <- function(x) file.create('ran')"
    )
    reply = r.inspect("obj", 3)
    assert reply["found"] and reply["data"]["text/plain"].startswith("obj: mine")
    assert not (workspace / "ran").exists()
    assert not r.inspect("no_such_name_anywhere", 5)["found"]


def test_the_quit_guard_is_not_in_the_global_environment(r):
    assert r.execute("print(ls(all.names = TRUE))")["stdout"] == "character(0)\n"
    r.execute("x <- 1\nrm(list = ls(all.names = TRUE))")
    # base's own bindings too: the guard is not one name lookup away.
    for call in ("quit()", "q('no')", "base::quit()", "base::q()", "get('quit', baseenv())()"):
        error = r.execute(call)["error"]
        assert "is disabled inside openai4s R cells" in error
        assert "`exit` or press Ctrl-D in the REPL" in error and "Jupyter" in error
    assert r.execute("cat('alive')")["stdout"] == "alive"


def test_the_inspector_describes_r_objects_without_their_methods(r, workspace):
    r.execute(
        "df <- data.frame(n = 1:5, s = letters[1:5], f = factor(c('a', 'b', 'a', 'b', 'a')))\n"
        "tb <- structure(df[1:2], class = c('tbl_df', 'tbl', 'data.frame'))\n"
        "fac <- factor(c('lo', 'hi', 'lo'), levels = c('lo', 'hi'))\n"
        "mat <- matrix(0, 5, 2)\n"
        "lst <- list(1, 'a', TRUE)\n"
        "odd <- structure(1:3, class = 'odd')\n"
        "registerS3method('length', 'odd', function(x) { file.create('ran'); 99L })\n"
        "registerS3method('dim', 'odd', function(x) { file.create('ran'); c(1L, 1L) })"
    )
    entries = {e["name"]: e for e in r.inspect_variables()["variables"]}
    df = entries["df"]
    assert df["type"] == "data.frame" and df["shape"] == [5, 3] and df["length"] == 5
    assert df["columns"] == [
        {"name": "n", "type": "int"},
        {"name": "s", "type": "chr"},
        {"name": "f", "type": "fct"},
    ]
    assert df["preview"] == "5 x 3 data.frame: n <int>, s <chr>, f <fct>"
    tb = entries["tb"]
    assert tb["type"] == "tbl_df" and tb["class"] == ["tbl_df", "tbl", "data.frame"]
    assert tb["shape"] == [5, 2]
    fac = entries["fac"]
    assert fac["type"] == "factor" and fac["levels"] == ["lo", "hi"] and fac["length"] == 3
    mat = entries["mat"]
    assert mat["type"] == "matrix" and mat["shape"] == [5, 2] and mat["preview"].startswith("5 x 2")
    assert entries["lst"]["kind"] == "container" and entries["lst"]["length"] == 3
    odd = entries["odd"]
    assert odd["type"] == "odd" and "length" not in odd, "a user's length() is never called"
    assert not (workspace / "ran").exists()


@pytest.mark.parametrize("mode", ["off", "enforce"])
def test_child_processes_write_into_the_cell_in_order(workspace, mode, sandbox_unavailable_reason):
    if mode == "enforce" and sandbox_unavailable_reason is not None:
        pytest.skip(f"bubblewrap cannot sandbox a kernel here: {sandbox_unavailable_reason}")
    kernel = spawn_r_kernel(cwd=str(workspace), sandbox=sandbox_for(str(workspace), mode=mode))
    try:
        chunks = []
        result = kernel.execute(
            "cat('one\\n')\n"
            "system('echo two; echo oops >&2')\n"
            "cat('three\\n')\n"
            "system2('echo', 'four')\n"
            "kept <- system('echo five', intern = TRUE)\n"
            "system('sh -c \"echo six\"')\n"
            "print(kept)",
            on_chunk=chunks.append,
        )
        assert result["error"] is None, result
        assert result["stdout"] == 'one\ntwo\nthree\nfour\nsix\n[1] "five"\n'
        assert result["stderr"] == "oops\n"
        assert "".join(chunks) == result["stdout"], "streamed live as it came"
    finally:
        kernel.shutdown()


def test_a_plot_is_a_display_and_leaves_no_file(r, workspace):
    result = r.execute("plot(1:10)\nplot(10:1)")
    assert result["error"] is None, result
    pngs = [d["data"]["image/png"] for d in result["displays"]]
    assert len(pngs) == 2
    assert all(base64.b64decode(p)[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert not list(workspace.rglob("*.png"))


def test_a_visible_value_is_printed_by_the_cell_s_own_method(r):
    # As R's console does: a print method defined in a cell is the one used.
    result = r.execute(
        "print.temperature <- function(x, ...) cat(unclass(x), 'degrees\\n')\n"
        "structure(21, class = 'temperature')"
    )
    assert result["stdout"] == "21 degrees\n", result
