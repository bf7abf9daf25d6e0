"""An install from a URL source reaches that source and nothing else (issue
30 part 2): the install sandbox has no network of its own, and the host's
install proxy admits only the configured source's host and port, judging
each address by the egress policy. The source is a local package index on
127.0.0.1, allowed through the test's configuration; everything else an
install script tries (another local server, directly or through the proxy,
a public address, a DNS lookup) fails and is seen to fail."""

import functools
import http.server
import json
import shutil
import threading

import pytest

from env_support import make_sdist, make_wheel

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="installs need bubblewrap")


class Served:
    """A ThreadingHTTPServer on 127.0.0.1 that counts the requests it gets;
    `redirect` sends every path elsewhere (302)."""

    def __init__(self, directory=None, redirect=None):
        self.hits = 0
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                outer.hits += 1
                if redirect is not None:
                    self.send_response(302)
                    self.send_header("Location", redirect)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                super().do_GET()

        handler = functools.partial(Handler, directory=str(directory or "/nonexistent"))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def packages(tmp_path):
    directory = tmp_path / "index"
    directory.mkdir()
    return directory


@pytest.fixture
def other():
    """A second local server: not a source of any install."""
    server = Served()
    yield server
    server.close()


@pytest.fixture
def source(packages, monkeypatch):
    """The packages directory served on 127.0.0.1 as the only source
    (pip's find-links page is its listing), allowed as a private source."""
    server = Served(packages)
    for name in ("OPENAI4S_ENV_PIP_INDEX_URL", "OPENAI4S_ENV_R_REPOS", "OPENAI4S_EGRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES", "1")
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")  # any port of it, as policy goes
    monkeypatch.setenv("OPENAI4S_ENV_FIND_LINKS", server.url)
    yield server
    server.close()


def setup_env(dispatcher, packages):
    return dispatcher("env_setup", [{"name": None, "packages": packages}])


def audited_connections(dispatcher):
    """The install's connections, one audit row each: (ok, summary, outcome)."""
    return dispatcher.store._conn.execute(
        "SELECT ok, summary, outcome FROM host_call_log WHERE method = 'env_connection' "
        "ORDER BY created_at"
    ).fetchall()


def test_an_sdist_installs_through_the_proxy_and_each_connection_is_audited(
    dispatcher, packages, source
):
    make_sdist(packages, "goodpkg", "1.0", "")
    result = setup_env(dispatcher, ["goodpkg"])
    assert result.get("ok"), result
    port = source.server.server_port
    assert result["installed"]["python"]["goodpkg"]["source"].startswith(source.url)
    network = result["network"]
    assert network and all(c["target"] == f"127.0.0.1:{port}" for c in network), network
    assert all(c["allowed"] and c["address"] == "127.0.0.1" for c in network), network
    assert sum(c["bytes_in"] for c in network) > 0
    rows = audited_connections(dispatcher)
    assert [(ok, summary) for ok, summary, _ in rows] == [
        (1, f"{c['method']} 127.0.0.1:{port}") for c in network
    ]
    assert all(outcome.startswith("ok (") for _, _, outcome in rows), rows


# The install script's attempts, each reported by name when it gets through.
ATTEMPTS = """
import os, socket, urllib.request
reached = []
def attempt(name, action):
    try:
        action()
        reached.append(name)
    except Exception:
        pass
attempt("other-direct", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=5).close())
attempt("other-via-proxy", lambda: urllib.request.urlopen("{url}", timeout=5).read())
attempt("public-address", lambda: socket.create_connection(("1.1.1.1", 443), timeout=5).close())
attempt("dns", lambda: socket.getaddrinfo("example.org", 443))
raise SystemExit("SANDBOX-REPORT reached=" + ",".join(reached or ["nothing"]))
"""


def test_an_install_script_reaches_nothing_but_the_source(dispatcher, packages, source, other):
    body = ATTEMPTS.format(port=other.server.server_port, url=other.url)
    make_sdist(packages, "nosypkg", "1.0", body)
    result = setup_env(dispatcher, ["nosypkg"])
    assert "SANDBOX-REPORT reached=nothing" in result["error"], result["error"]
    assert other.hits == 0
    # The proxy saw the script's try through it, and refused it.
    refused = [c for c in result["network"] if not c["allowed"]]
    assert [c["target"] for c in refused] == [f"127.0.0.1:{other.server.server_port}"]
    assert "not a configured package source" in refused[0]["reason"]
    assert [ok for ok, _, _ in audited_connections(dispatcher)].count(0) == 1
    assert dispatcher("env_list", [{}])["environments"] == []


def test_a_redirect_from_the_source_to_another_host_is_refused(
    dispatcher, packages, monkeypatch, other
):
    make_wheel(packages, "tinypkg", "1.0", {"tinypkg/__init__.py": ""})
    hop = Served(redirect=other.url)
    try:
        for name in ("OPENAI4S_ENV_PIP_INDEX_URL", "OPENAI4S_ENV_R_REPOS", "OPENAI4S_EGRESS"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES", "1")
        monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW", "127.0.0.1")
        monkeypatch.setenv("OPENAI4S_ENV_FIND_LINKS", hop.url)
        result = setup_env(dispatcher, ["tinypkg"])
    finally:
        hop.close()
    assert "error" in result and hop.hits > 0
    assert other.hits == 0
    targets = {c["target"]: c["allowed"] for c in result["network"]}
    assert targets[f"127.0.0.1:{other.server.server_port}"] is False
    assert "an install reaches only its configured sources; refused: 127.0.0.1:" in result["error"]
