"""host.web_fetch and host.web_download through a real kernel and the C++
host, against a local HTTP server on 127.0.0.1 that the test's
configuration allows (issue 30 part 3): text and files, the size and time
caps, redirects and domains the egress policy refuses, no loopback unless
configured, and an audit row for every fetch."""

import hashlib

import pytest

from openai4s.kernel import Kernel

from web_support import LocalServer, call, web_rows


@pytest.fixture(scope="module")
def server():
    local = LocalServer()
    yield local
    local.stop()


@pytest.fixture
def allowed(monkeypatch):
    """The local server is allowed: its address by name and by range."""
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.1")


@pytest.fixture
def kernel(dispatcher, workspace, allowed):
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        yield k


def test_fetch_returns_the_page_as_markdown_and_is_audited(kernel, dispatcher, server):
    page, error = call(kernel, f"web_fetch({server.url + '/page.html'!r})")
    assert error is None
    assert page["status"] == 200 and page["egress"] == "configured"
    assert page["text"].startswith("# Hemoglobin\n\nSee [P69905](https://www.uniprot.org/P69905)")
    assert "var x" not in page["text"] and "<p>" not in page["text"]
    csv, _ = call(kernel, f"web_fetch({server.url + '/data.csv'!r})")
    assert csv["text"] == "a,b\n1,2\n"
    rows = web_rows(dispatcher)
    assert [r[:3] for r in rows] == [("web_fetch", 1, "127.0.0.1")] * 2
    assert rows[0][4] == f"HTTP 200, {page['bytes']} bytes, egress: configured"


def test_max_chars_bounds_the_text(kernel, server):
    page, _ = call(kernel, f"web_fetch({server.url + '/page.html'!r}, max_chars=50)")
    assert len(page["text"]) == 50 and page["truncated"] is True


def test_binary_is_not_fetched_as_text(kernel, server):
    _, error = call(kernel, f"web_fetch({server.url + '/image.png'!r})")
    assert "is image/png, not text" in error and "host.web_download" in error


def test_download_lands_in_the_workspace_whole_and_on_record(kernel, dispatcher, workspace, server):
    result, error = call(
        kernel, f"web_download({server.url + '/bytes/3000'!r}, 'data/raw/blob.bin')"
    )
    assert error is None
    target = workspace / "data" / "raw" / "blob.bin"
    assert target.read_bytes() == b"x" * 3000
    assert result["sha256"] == hashlib.sha256(b"x" * 3000).hexdigest()
    assert result["bytes"] == 3000 and result["path"] == str(target)
    assert [p.name for p in target.parent.iterdir()] == ["blob.bin"]  # no temporary left
    # The cell reads it like any other file: files_read sees it, and
    # provenance knows it as a version whose source is the URL.
    out = kernel.execute("len(open('data/raw/blob.bin', 'rb').read())")
    assert out["files_read"] == ["data/raw/blob.bin"]
    source = dispatcher.store._conn.execute(
        "SELECT source FROM artifact_versions WHERE version_id = ?", (result["version_id"],)
    ).fetchone()
    assert server.url + "/bytes/3000" in source[0]


@pytest.mark.parametrize("route", ["bytes", "stream"])
def test_a_download_over_max_bytes_fails_and_leaves_nothing(kernel, workspace, server, route):
    # "bytes" declares its length (refused before reading); "stream" does
    # not (refused once the count passes the bound).
    url = f"{server.url}/{route}/5000"
    _, error = call(kernel, f"web_download({url!r}, 'big.bin', max_bytes=1000)")
    assert "larger than max_bytes (1000 bytes)" in error
    assert list(workspace.iterdir()) == []


def test_a_download_is_bounded_in_time(kernel, workspace, server):
    _, error = call(kernel, f"web_download({server.url + '/slow'!r}, 'slow.txt', timeout=1)")
    assert "timed out after 1000 ms" in error
    assert list(workspace.iterdir()) == []


def test_a_download_stays_inside_the_workspace(kernel, server):
    _, error = call(kernel, f"web_download({server.url + '/data.csv'!r}, '../outside.csv')")
    assert "path escapes the workspace" in error
    _, error = call(kernel, f"web_download({server.url + '/data.csv'!r}, '.env')")
    assert "secret files" in error


def test_a_redirect_is_judged_again(kernel, server):
    inside, _ = call(kernel, f"web_fetch({server.url + '/redirect?to=/data.csv'!r})")
    assert inside["text"] == "a,b\n1,2\n"
    assert inside["redirects"] == [server.url + "/data.csv"]
    _, error = call(kernel, f"web_fetch({server.url + '/redirect?to=http://evil.example/x'!r})")
    assert "refused by the egress policy" in error
    assert "host.request_network_access('evil.example'" in error


def test_a_domain_off_the_allowlist_is_refused_with_the_request_hint(kernel, dispatcher):
    _, error = call(kernel, "web_fetch('https://evil.example/data')")
    assert "blocked by the egress allowlist" in error
    assert "host.request_network_access('evil.example', reason=" in error
    assert "OPENAI4S_EGRESS_ALLOW" in error
    method, ok, summary, _, outcome = web_rows(dispatcher)[-1]
    assert (method, ok, summary) == ("web_fetch", 0, "evil.example")
    assert outcome.startswith("error: web_fetch: https://evil.example/data: refused by the egress")


def test_loopback_is_refused_unless_configured(kernel, server, monkeypatch):
    before = server.hits().get("/data.csv", 0)
    monkeypatch.delenv("OPENAI4S_EGRESS_ALLOW_PRIVATE")
    _, error = call(kernel, f"web_fetch({server.url + '/data.csv'!r})")
    assert "'127.0.0.1' is a loopback address" in error
    # A name that resolves to loopback is judged by its address, after DNS,
    # even with the domain allowlist off.
    monkeypatch.setenv("OPENAI4S_EGRESS", "off")
    localhost = f"http://localhost:{server.port}/data.csv"
    _, error = call(kernel, f"web_fetch({localhost!r})")
    assert "'localhost' resolves to" in error and "a loopback address" in error
    # And through a redirect from an allowed server.
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.1")
    monkeypatch.setenv("OPENAI4S_EGRESS", "allowlist")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1, localhost")
    _, error = call(kernel, f"web_fetch({server.url + '/redirect?to=http://[::1]/x'!r})")
    assert "'::1' is a loopback address" in error
    assert server.hits().get("/data.csv", 0) == before, "no refused request reached the server"


def test_bad_arguments_are_clear_errors_and_the_kernel_stays_usable(kernel):
    for expression, message in [
        ("web_fetch('file:///etc/passwd')", "only http and https URLs"),
        ("web_fetch('https://pypi.org/', max_chars=0)", "max_chars must be a whole number"),
        ("web_fetch('https://pypi.org/', method='POST')", "only GET is supported"),
        ("web_fetch('https://pypi.org/', format='pdf')", "format must be"),
        ("web_download('https://pypi.org/', 'x', timeout=-1)", "timeout must be"),
    ]:
        _, error = call(kernel, expression)
        assert message in error, (expression, error)
    assert kernel.execute("print(1 + 1)")["stdout"] == "2\n"
