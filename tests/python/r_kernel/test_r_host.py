"""The R cell's `host` (issue 30 for R kernels): real Rscript workers, a real
C++ dispatcher on a real SQLite store, a local HTTP server on 127.0.0.1
that the test's configuration allows. Every call is a host_call frame on
the R worker's protocol pipe, served, gated and audited as Python's are."""

import functools
import http.server
import os
import sys
import threading
import time
import uuid

import pytest

from openai4s.config import Config, LLMConfig
from openai4s.host_dispatch import build_dispatcher

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "sandbox"))
from sandbox_support import pids_with_marker  # noqa: E402  (the sandbox tests' helper)


@pytest.fixture
def dispatcher(tmp_path, workspace, monkeypatch):
    monkeypatch.delenv("OPENAI4S_UNATTENDED_APPROVAL", raising=False)
    cfg = Config(data_dir=tmp_path / "data", llm=LLMConfig(provider="deepseek", api_key="x"))
    d = build_dispatcher(cfg, workspace=workspace)
    d.frame_id = d.store.new_frame(kind="turn")
    yield d
    d.store.close()


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A directory served on 127.0.0.1, allowed by the egress policy."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "data.csv").write_text("a,b\n1,2\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.1")
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join()


def rows(dispatcher, method):
    return dispatcher.store._conn.execute(
        "SELECT ok, decided_by FROM host_call_log WHERE method = ? ORDER BY created_at", (method,)
    ).fetchall()


def run(kernel, code):
    out = kernel.execute(code)
    assert out["error"] is None, (out["error"], out["stderr"])
    return out["stdout"]


def r_error(kernel, call):
    """The message of the R error `call` raises (the cell itself succeeds)."""
    return run(kernel, f"cat(tryCatch({{{call}; 'NO ERROR'}}, error = conditionMessage))")


def test_host_is_beside_the_guard_not_in_the_global_environment(start_r, dispatcher):
    k = start_r(dispatcher=dispatcher)
    assert run(k, "cat(length(ls(all.names = TRUE)), class(host))") == "0 openai4s_host"
    run(k, "host <- 1; rm(list = ls(all.names = TRUE))")
    assert run(k, "cat(is.function(host$web_fetch), find('host'))") == "TRUE openai4s"
    assert "host$web_fetch()" in run(k, "host")
    assert k.inspect_variables()["variables"] == []


def test_web_fetch_and_download_are_served_and_audited(start_r, dispatcher, site, workspace):
    k = start_r(dispatcher=dispatcher)
    page = run(k, f"p <- host$web_fetch('{site}/data.csv'); cat(p$status, p$text, sep = '|')")
    assert page == "200|a,b\n1,2\n"
    saved = run(k, f"d <- host$web_download('{site}/data.csv', 'got.csv'); cat(d$bytes)")
    assert saved == "8" and (workspace / "got.csv").read_text() == "a,b\n1,2\n"
    assert run(k, "cat(nrow(read.csv('got.csv')))") == "1"
    assert rows(dispatcher, "web_fetch") == [(1, "rule")]
    assert [ok for ok, _ in rows(dispatcher, "web_download")] == [1]


def test_a_refusal_is_an_r_error_with_the_hosts_message(start_r, dispatcher, site):
    k = start_r(dispatcher=dispatcher)
    refused = r_error(k, "host$web_fetch('http://example.invalid/x')")
    assert refused.startswith("host.web_fetch error: ") and "egress" in refused
    # The hint names the call in R's spelling.
    assert "host$request_network_access('example.invalid', reason = '...')" in refused
    assert "must be one non-empty string" in r_error(k, "host$web_fetch(42)")
    # The kernel is usable after both, and the host kept the same channel.
    assert run(k, "cat(host$web_fetch(paste0('" + site + "', '/data.csv'))$status)") == "200"
    assert [ok for ok, _ in rows(dispatcher, "web_fetch")] == [0, 1]


def test_a_call_the_host_would_not_read_is_refused_before_it_is_sent(start_r, dispatcher):
    k = start_r(dispatcher=dispatcher)
    huge = r_error(k, "host$web_fetch(strrep('a', 16e6))")
    assert "over the 15MB wire cap" in huge
    assert rows(dispatcher, "web_fetch") == []
    assert run(k, "cat(class(host$env_list()$environments))") == "list"


def test_without_a_dispatcher_each_call_says_so(start_r):
    k = start_r()
    assert r_error(k, "host$env_list()") == "host.env_list error: no host dispatcher configured"
    assert run(k, "cat(1 + 1)") == "2"


def test_request_network_access_asks_the_person(start_r, dispatcher, monkeypatch):
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    asked = []
    dispatcher.approver = lambda request: asked.append(request["target"]) or "deny"
    k = start_r(dispatcher=dispatcher)
    refused = r_error(k, "host$request_network_access('data.example.org', reason = 'a table')")
    assert asked == ["data.example.org"] and "denied" in refused
    dispatcher.approver = lambda request: asked.append(request["target"]) or "once"
    granted = run(k, "g <- host$request_network_access('data.example.org'); cat(g$granted)")
    assert granted == "TRUE" and asked == ["data.example.org"] * 2


def test_bash_is_authorized_by_the_host_and_run_by_the_worker(start_r, dispatcher, workspace):
    k = start_r(dispatcher=dispatcher)
    refused = r_error(k, "host$bash('echo hi > made.txt')")
    assert refused == (
        "host$bash needs approval and nobody can be asked here (unattended): echo hi > made.txt"
        " -- allow it with OPENAI4S_UNATTENDED_APPROVAL=allow or a standing allow rule"
    )
    assert not (workspace / "made.txt").exists()
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="bash",
        pattern="*",
        decision="allow",
    )
    out = run(
        k, "r <- host$bash('echo hi; echo oops >&2; exit 3'); cat(r$exit_code, r$stdout, r$stderr)"
    )
    assert out == "3 hi\n oops\n"
    # The call leaves the cell's random stream as it was (set.seed holds).
    same = run(
        k,
        "set.seed(7); a <- runif(1); set.seed(7); invisible(host$bash('true')); "
        "cat(identical(a, runif(1)))",
    )
    assert same == "TRUE"
    # The SDK's precheck refuses, allowed or not, before any host call
    # (test_r_host_bash.py has the rest).
    blocked = r_error(k, "host$bash('rm -rf /')")
    assert blocked.startswith("bash: blocked by static safety precheck: ")
    audited = dispatcher.store._conn.execute(
        "SELECT ok, outcome FROM host_call_log WHERE method = 'bash' ORDER BY created_at"
    ).fetchall()
    assert audited == [(0, "exit 3"), (1, "exit 0")]


def test_a_background_job_runs_r_in_a_worker_of_its_own(start_r, dispatcher):
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="exec_background",
        pattern="*",
        decision="allow",
    )
    k = start_r(dispatcher=dispatcher)
    run(k, "x <- 'interactive'")
    job = run(
        k, "j <- host$exec_background('x <- 40 + 2; cat(\"job says\", x, R.version$language)')"
    )
    assert job == ""
    peek = "p <- host$exec_peek(j$exec_id); cat(p$state, '|', p$output, sep = '')"
    deadline = time.monotonic() + 90
    while (seen := run(k, peek)).startswith(("starting", "running")):
        assert time.monotonic() < deadline, seen
        time.sleep(0.1)
    assert seen == "done|job says 42 R"
    # The job's namespace is its own: this kernel's x is as it was.
    assert run(k, "cat(x, length(host$exec_list()))") == "interactive 1"


def test_save_artifact_records_the_cell_that_made_it(start_r, dispatcher, workspace):
    k = start_r(dispatcher=dispatcher)
    out = k.execute(
        "writeLines(c('a', 'b'), 'table.txt'); v <- host$save_artifact('table.txt'); cat(v$version_id)",
        cell_id="cell-r-7",
    )
    assert out["error"] is None, out["error"]
    (producer,) = dispatcher.store._conn.execute(
        "SELECT producing_cell_id FROM artifact_versions WHERE version_id = ?", (out["stdout"],)
    ).fetchone()
    assert producer == "cell-r-7"


def test_an_interrupt_during_a_host_call_ends_the_cell_and_keeps_the_channel(
    start_r, dispatcher, monkeypatch
):
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    k = start_r(dispatcher=dispatcher)
    asked = threading.Event()

    def slow_yes(request):
        asked.set()
        time.sleep(1.0)  # the person takes a moment; the cell is interrupted meanwhile
        return "once"

    dispatcher.approver = slow_yes
    interrupter = threading.Thread(target=lambda: asked.wait(60) and k.interrupt())
    interrupter.start()
    out = k.execute("host$request_network_access('data.example.org'); cat('after')")
    interrupter.join()
    # The reply was read before the interrupt fired: the cell stops there,
    # and the next call gets its own reply, not the one before.
    assert out["interrupted"] is True and out["stdout"] == ""
    assert run(k, "cat(length(host$env_list()$environments))") == "0"


def test_an_interrupt_ends_the_wait_for_a_host_reply_at_once(
    start_r, dispatcher, workspace, monkeypatch
):
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    k = start_r(dispatcher=dispatcher)
    stopped = workspace / "stopped.txt"
    seen = {}

    def person(request):
        k.interrupt()
        # The host is still in this call (its reply is not sent): only a
        # worker that stopped waiting for it can have left the cell's
        # function (its on.exit writes the file) before the person answers.
        deadline = time.monotonic() + 30
        while not stopped.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        seen["left_before_the_reply"] = stopped.exists()
        return "once"

    dispatcher.approver = person
    out = k.execute(
        "f <- function() {\n"
        "  on.exit(writeLines('yes', 'stopped.txt'))\n"
        "  host$request_network_access('data.example.org'); cat('after')\n"
        "}\n"
        "f()"
    )
    assert out["interrupted"] is True and out["stdout"] == ""
    assert seen == {"left_before_the_reply": True}
    # The late reply was dropped: the next call gets its own.
    assert run(k, "cat(length(host$env_list()$environments))") == "0"


def test_an_interrupt_stops_a_bash_command_and_the_cell(start_r, dispatcher):
    dispatcher.store.set_permission_rule(
        scope="conversation",
        scope_id=dispatcher.frame_id,
        tool="bash",
        pattern="*",
        decision="allow",
    )
    k = start_r(dispatcher=dispatcher)
    marker = f"o4s-r-bash-{uuid.uuid4().hex[:12]}"

    def interrupt_once_running():
        deadline = time.monotonic() + 60
        while not pids_with_marker(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        k.interrupt()

    interrupter = threading.Thread(target=interrupt_once_running)
    interrupter.start()
    out = k.execute(f"r <- host$bash('exec -a {marker} sleep 30'); cat('after')")
    interrupter.join()
    # R's interrupt, at once: the cell stops there and the command is gone.
    assert out["interrupted"] is True and out["stdout"] == ""
    deadline = time.monotonic() + 10
    while pids_with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pids_with_marker(marker) == []
    assert run(k, "cat(host$bash('echo next')$stdout)") == "next\n"
