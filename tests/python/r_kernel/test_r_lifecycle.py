"""Interrupts, crashes, restart and bad installations of the R kernel."""

import base64
import stat

import pytest

from r_support import ChunkWatcher, run_in_thread


def test_an_interrupt_stops_a_running_cell_and_the_kernel_stays_usable(r_kernel):
    watcher = ChunkWatcher()
    thread, box = run_in_thread(
        lambda: r_kernel.execute(
            "cat('started\\n')\nwhile (TRUE) Sys.sleep(0.05)\ncat('never\\n')", on_chunk=watcher
        )
    )
    # The sink output arrives live, so this is proof the cell is running.
    assert watcher.wait_for("started\n"), "the cell's output never streamed"
    delivery = r_kernel.interrupt()
    assert delivery.delivered, delivery
    thread.join(60)
    assert not thread.is_alive(), "the interrupted cell never returned"
    result = box["result"]
    assert result["error"] == "Interrupted"
    assert result["interrupted"] is True
    assert result["stdout"] == "started\n"
    assert r_kernel.execute("cat(1 + 1)")["stdout"] == "2"


def test_an_interrupt_reaches_a_busy_loop_too(r_kernel):
    watcher = ChunkWatcher()
    thread, box = run_in_thread(
        # Printed from inside the loop, so the loop is running (R compiles a
        # top-level loop before it starts it).
        lambda: r_kernel.execute(
            "x <- 0; repeat { x <- x + 1; if (x == 1000) cat('spin\\n') }", on_chunk=watcher
        )
    )
    assert watcher.wait_for("spin\n")
    assert r_kernel.interrupt().delivered
    thread.join(60)
    assert box["result"]["interrupted"] is True
    assert r_kernel.execute("cat(x > 0)")["stdout"] == "TRUE"


def test_an_idle_interrupt_is_swallowed(r_kernel):
    assert r_kernel.execute("y <- 5")["error"] is None  # R is up and reading
    assert r_kernel.interrupt().delivered
    result = r_kernel.execute("cat(y)")
    assert result["error"] is None, result
    assert result["stdout"] == "5"
    assert r_kernel.inspect_variables()["variables"][0]["name"] == "y"


def test_a_cell_that_crashes_r_is_a_clear_error_and_restart_recovers(r_kernel):
    r_kernel.execute("before <- 1")
    generation = r_kernel.generation
    with pytest.raises(RuntimeError, match="kernel worker exited unexpectedly") as raised:
        r_kernel.execute("tools::pskill(Sys.getpid(), 11L)  # SIGSEGV\nSys.sleep(30)")
    # Unsandboxed R is the spawned process; bubblewrap reports 128 + signal.
    assert "killed by signal 11" in str(raised.value) or "exit status 139" in str(raised.value)
    assert "caught segfault" in str(raised.value)
    assert not r_kernel.is_alive()
    r_kernel.restart()
    assert r_kernel.generation == generation + 1
    assert r_kernel.execute("exists('before')")["stdout"] == "[1] FALSE\n"
    assert r_kernel.execute("cat('back')")["stdout"] == "back"


def _rscript_without_jsonlite(directory):
    # The library R finds jsonlite in is R_LIBS_SITE (Debian's Renviron keeps
    # an inherited value); pointing it nowhere is R without jsonlite.
    wrapper = directory / "rscript-without-jsonlite"
    wrapper.write_text('#!/bin/sh\nR_LIBS_SITE=/nonexistent exec Rscript "$@"\n')
    # Executable by everyone: under a root host the sandbox runs as its own uid.
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(wrapper)


def test_r_without_jsonlite_answers_with_the_clear_error(start_r, workspace):
    kernel = start_r(rscript=_rscript_without_jsonlite(workspace))
    result = kernel.execute("1 + 1")
    assert result["error"] == (
        "openai4s R worker requires the 'jsonlite' package \u2014 "
        "install.packages(\"jsonlite\") or select the prebuilt 'r' environment"
    )
    with pytest.raises(
        RuntimeError, match="variable inspection failed: openai4s R worker requires"
    ):
        kernel.inspect_variables()
    assert kernel.is_alive()
    kernel.shutdown()
    assert not kernel.is_alive()


def test_a_cell_printing_300_mb_stays_bounded_on_the_host(r_kernel):
    watcher = ChunkWatcher()
    # Peak RSS of this (host) process from here on.
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    before = _vm_kb("VmRSS")
    result = r_kernel.execute(
        "line <- paste0(strrep('x', 999), '\\n')\n"
        "for (i in 1:300) cat(rep(line, 1000), sep = '')",
        on_chunk=watcher,
    )
    peak = _vm_kb("VmHWM")
    assert result["error"] is None, result
    usage = result["usage"]
    assert usage["stdout_seen_bytes"] == 300 * 1000 * 1000
    assert usage["stdout_retained_bytes"] == 1_000_000
    assert usage["stdout_dropped_bytes"] == 299_000_000
    assert usage["stdout_truncated"] is True
    assert result["stdout"].endswith("\n...(truncated at 1000000 bytes)")
    assert len(result["stdout"]) == 1_000_000 + len("\n...(truncated at 1000000 bytes)")
    assert len(watcher.text) == 1_000_000, "on_chunk saw exactly the retained text"
    assert peak - before < 150 * 1024, f"host RSS grew by {peak - before} KiB"
    assert r_kernel.execute("cat('ok')")["stdout"] == "ok"


def _vm_kb(field):
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"{field} missing from /proc/self/status")


def test_a_plot_on_the_default_device_becomes_a_png_display_frame(r_kernel, workspace):
    frames = []
    native = r_kernel._readline

    def recording_readline():
        frame = native()
        if isinstance(frame, dict):
            frames.append(frame)
        return frame

    r_kernel._readline = recording_readline
    result = r_kernel.execute("plot(1:10, main = 'ten')")
    del r_kernel._readline
    assert result["error"] is None, result
    displays = [f for f in frames if f.get("type") == "display"]
    assert len(displays) == 1
    display = displays[0]
    assert display["id"] == result["id"]
    assert display["update"] is False and display["display_id"] is None
    assert base64.b64decode(display["data"]["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    # The device's own file is gone: a front door that keeps figures saves
    # the display (one file per plot).
    assert not list(workspace.rglob("*.png"))
    assert r_kernel.execute("cat(length(dev.list()))")["stdout"] == "0", "devices closed"


def test_files_read_are_what_r_opened_for_reading(r_kernel, workspace):
    (workspace / "data").mkdir()
    (workspace / "data" / "in.csv").write_text("a,b\n1,2\n")
    (workspace / "notes.txt").write_text("hello\n")
    result = r_kernel.execute(
        "t <- read.csv('data/in.csv')\n"
        "n <- readLines(file.path(getwd(), 'notes.txt'))\n"
        "writeLines('out', 'written.txt')\n"
        "if (FALSE) readLines('never.txt')\n"
        "try(readLines('/etc/hostname'), silent = TRUE)"
    )
    assert result["error"] is None, result
    assert result["files_read"] == ["data/in.csv", "notes.txt"]
    assert r_kernel.execute("cat(nrow(t))")["files_read"] == []
