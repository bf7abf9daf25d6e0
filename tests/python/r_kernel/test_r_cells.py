"""R cells through a real Rscript worker: output, errors, quit(), usage,
the variable inspector (spec kernel.md §7.2, §7.3, §7.5)."""

import pytest


def test_output_persists_and_comes_back_through_the_host_sinks(r_kernel):
    first = r_kernel.execute("x <- 21\ncat('answer', x * 2, '\\n')\nmessage('to stderr')")
    assert first["error"] is None, first
    assert first["stdout"] == "answer 42 \n"
    assert first["stderr"] == "to stderr\n"
    assert first["interrupted"] is False
    assert first["trace"] == {"error_lineno": None, "error_call": None}
    second = r_kernel.execute("x\nwarning('careful')\ninvisible(7)\n'visible'")
    assert second["stdout"] == '[1] 21\n[1] "visible"\n'
    assert second["stderr"] == "Warning: careful\n"
    usage = second["usage"]
    for key in ("wall_s", "cpu_s", "peak_rss_kb"):
        assert key in usage
    assert usage["peak_rss_kb"] > 0
    assert usage["stdout_seen_bytes"] == len(second["stdout"])
    assert usage["stdout_truncated"] is False
    assert usage["stderr_retained_bytes"] == len(second["stderr"])


def test_runtime_errors_carry_the_line_and_the_call(r_kernel):
    failed = r_kernel.execute("ok <- 1\nf <- function(v) stop('bad value: ', v)\n\nf(3)\nok <- 2")
    assert failed["error"] == "Error in f(3): bad value: 3"
    assert failed["trace"] == {"error_lineno": 4, "error_call": "f"}
    assert r_kernel.execute("ok")["stdout"] == "[1] 1\n", "the cell stopped at its error"

    bare = r_kernel.execute("stop('plain')")
    assert bare["error"] == "Error: plain"
    assert bare["trace"] == {"error_lineno": 1, "error_call": None}

    arithmetic = r_kernel.execute("1 + 'a'")
    assert arithmetic["error"].startswith('Error in 1 + "a": non-numeric argument')
    assert arithmetic["trace"]["error_call"] == "+"


def test_a_parse_error_names_its_line(r_kernel):
    result = r_kernel.execute("a <- 1\nb <- (2 +\nc <- )")
    assert result["error"].startswith("ParseError: <text>:3:6: unexpected ')'")
    assert result["trace"]["error_lineno"] == 3
    assert r_kernel.execute("exists('a')")["stdout"] == "[1] FALSE\n", "nothing ran"


@pytest.mark.parametrize("call", ["quit", "q"])
def test_quit_is_disabled_and_the_kernel_stays(r_kernel, call):
    result = r_kernel.execute(f"{call}(save = 'no')")
    assert (
        f"{call}() is disabled inside openai4s R cells; the kernel stays alive" in result["error"]
    )
    assert r_kernel.is_alive()
    assert r_kernel.execute("cat('still here')")["stdout"] == "still here"


def test_error_messages_are_capped(r_kernel):
    # stop('...') itself cuts messages at warning.length; a condition object
    # keeps its whole message.
    result = r_kernel.execute("stop(simpleError(strrep('e', 1500000)))")
    assert result["error"].endswith("\n...(truncated at 1000000 characters)")
    assert len(result["error"]) < 1_000_100


def test_output_a_cell_sets_up_cannot_break_the_protocol(r_kernel):
    # Locale-style options and a cell-made sink must not leak into frames or
    # into the next cell.
    result = r_kernel.execute("options(OutDec = ','); sink(tempfile()); print(1.5)")
    assert result["error"] is None
    assert r_kernel.execute("print(2.5)")["stdout"] == "[1] 2,5\n"
    usage = r_kernel.execute("Sys.sleep(0.01)")["usage"]
    assert isinstance(usage["wall_s"], float) and usage["wall_s"] > 0


def test_the_inspector_reads_the_global_environment_without_forcing_user_code(r_kernel):
    r_kernel.execute(
        "score <- 0.93\ntitle <- 'protein'\nsamples <- c(1L, 2L, 3L)\n"
        "frame <- data.frame(a = 1:2)\nmixed <- list(1, list(2))\nraw_bytes <- as.raw(1:3)\n"
        "makeActiveBinding('live', function() stop('must not run'), globalenv())\n"
        ".oai4s_hidden <- 1"
    )
    body = r_kernel.inspect_variables(limit=50)
    entries = {entry["name"]: entry for entry in body["variables"]}
    assert [e["name"] for e in body["variables"]] == sorted(entries)
    assert "q" not in entries and "quit" not in entries and ".oai4s_hidden" not in entries
    assert ".oai4s_worker" not in entries
    assert entries["score"]["kind"] == "vector" and entries["score"]["preview"] == "[0.93]"
    assert entries["title"]["kind"] == "text" and entries["title"]["preview"] == '["protein"]'
    assert entries["samples"]["length"] == 3
    assert entries["samples"]["preview"] == "[1, 2, 3]"
    assert len(entries["samples"]["fingerprint"]) == 8
    assert entries["frame"]["type"] == "data.frame" and entries["frame"]["shape"] == [2, 1]
    assert entries["mixed"] == {"name": "mixed", "type": "list", "kind": "container", "length": 2}
    assert entries["raw_bytes"]["kind"] == "bytes"
    assert entries["live"] == {"name": "live", "type": "active_binding"}
    assert body["truncated"] is False

    small = r_kernel.inspect_variables(limit=1)
    assert len(small["variables"]) == 1 and small["truncated"] is True
    with pytest.raises(ValueError, match="between 1 and 500"):
        r_kernel.inspect_variables(limit=0)


def test_the_inspector_is_out_of_reach_of_cell_bindings(r_kernel):
    r_kernel.execute("cat <- function(...) stop('shadowed'); paste <- function(...) 'x'")
    r_kernel.execute("rm('.oai4s_worker')")
    assert r_kernel.execute("base::cat('fine')")["stdout"] == "fine"
    names = [e["name"] for e in r_kernel.inspect_variables()["variables"]]
    assert names == ["cat", "paste"]
