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
import socket
import ssl
import subprocess
import sys
import threading
from pathlib import Path

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


# A throwaway self-signed certificate for the TLS origin below (EC P-256,
# "openai4s test origin", valid to 2126): the attacker does not check it.
ORIGIN_KEY_AND_CERT = """\
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgAU8on1CxvMNbrEQh
By2G0nlP10WrklIdtJItuThRPQKhRANCAASe71+30Rs45OG4FkZUxiUlSMTd6eX1
TmL2YRBK2LGwTO53AJL7tNQKeCLgLJDGvLC4nKxTKq5oNr3fb+tc+yKw
-----END PRIVATE KEY-----
-----BEGIN CERTIFICATE-----
MIIBlTCCATugAwIBAgIUOlnztlaRPUA1m7TeKa4d3IBwEAkwCgYIKoZIzj0EAwIw
HzEdMBsGA1UEAwwUb3BlbmFpNHMgdGVzdCBvcmlnaW4wIBcNMjYxMjAzMjEzNjIy
WhgPMjEyNjExMDkyMTM2MjJaMB8xHTAbBgNVBAMMFG9wZW5haTRzIHRlc3Qgb3Jp
Z2luMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEnu9ft9EbOOThuBZGVMYlJUjE
3enl9U5i9mEQStixsEzudwCS+7TUCngi4CyQxrywuJysUyquaDa932/rXPsisKNT
MFEwHQYDVR0OBBYEFOF2RbbDcsu/5m311kKKF97uN8drMB8GA1UdIwQYMBaAFOF2
RbbDcsu/5m311kKKF97uN8drMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID
SAAwRQIhAPiyVVJwjesQSt9X1p8d8dY6Ny9yeyuUEJB0+sAZKnchAiBY97dfbEYT
4SKLvJ28Sbmw6RVWePByx9CNCsPsDGVmgg==
-----END CERTIFICATE-----
"""


class TlsOrigin:
    """A TLS server on 127.0.0.1 standing for a CDN address that serves many
    sites: it records the name each hello asked for and answers any request
    with "origin"."""

    def __init__(self, directory):
        pem = directory / "origin.pem"
        pem.write_text(ORIGIN_KEY_AND_CERT)
        self.names = []
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(pem)
        self.context.sni_callback = lambda _sock, name, _context: self.names.append(name)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn):
        try:
            with self.context.wrap_socket(conn, server_side=True) as tls:
                tls.recv(4096)
                tls.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\norigin\n")
        except OSError:
            conn.close()

    def close(self):
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join()


# The install script's tunnels to the TLS source, through the proxy the
# sandbox offers: one whose hello names another site on the same address
# (domain fronting), one whose hello is the source's own (an address: no
# name at all).
FRONTING = """
import os, socket, ssl
host, port = os.environ["https_proxy"].rsplit("/", 1)[-1].rsplit(":", 1)
def through(name):
    raw = socket.create_connection((host, int(port)), timeout=20)
    raw.sendall(b"CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\n\\r\\n")
    head = b""
    while not head.endswith(b"\\r\\n\\r\\n"):
        byte = raw.recv(1)
        if not byte:
            raise OSError("closed before the tunnel")
        head += byte
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    tls = context.wrap_socket(raw, server_hostname=name)
    tls.sendall(b"GET /secret HTTP/1.0\\r\\n\\r\\n")
    return tls.recv(4096)
report = []
for name in ("pypi.org", "127.0.0.1"):
    try:
        report.append(name + "=" + ("reached" if b"origin" in through(name) else "empty"))
    except Exception as error:
        report.append(name + "=" + type(error).__name__ + ":" + str(error)[:60])
raise SystemExit("SANDBOX-REPORT " + " ".join(report))
"""


def test_a_tunnel_whose_tls_hello_names_another_site_is_refused(
    dispatcher, packages, source, tmp_path, monkeypatch
):
    origin = TlsOrigin(tmp_path)
    try:
        # The TLS origin is a configured source too (pip's own try of it
        # fails on the certificate, and pip goes on without it).
        tls_source = f"https://127.0.0.1:{origin.port}/"
        monkeypatch.setenv("OPENAI4S_ENV_FIND_LINKS", f"{source.url},{tls_source}")
        make_sdist(packages, "frontpkg", "1.0", FRONTING.format(port=origin.port))
        result = setup_env(dispatcher, ["frontpkg"])
    finally:
        origin.close()
    error = result["error"]
    assert "pypi.org=SSLError:[SSL: TLSV1_ALERT_ACCESS_DENIED]" in error, error
    assert "127.0.0.1=reached" in error, error
    assert "pypi.org" not in origin.names
    target = f"127.0.0.1:{origin.port}"
    refused = [c for c in result["network"] if not c["allowed"]]
    assert [c["target"] for c in refused] == [target], result["network"]
    assert refused[0]["reason"].endswith("names another server in its TLS hello: pypi.org")
    assert refused[0]["bytes_out"] == 0
    outcomes = [o for ok, s, o in audited_connections(dispatcher) if not ok]
    assert outcomes == ["refused: " + refused[0]["reason"]]


FORWARDER = Path(__file__).resolve().parents[3] / "src" / "host" / "install_forwarder.py"


def test_the_forwarder_replaces_the_token_the_host_gives_it():
    """The token is the host's one constant, passed on the command line:
    the forwarder puts its URL wherever that argument stands."""
    show = "import os, sys; print(sys.argv[1:], os.environ['https_proxy'])"
    done = subprocess.run(
        [sys.executable, "-I", str(FORWARDER), "/nonexistent/proxy.sock", "@any-token@", "--"]
        + [sys.executable, "-c", show, "@any-token@", "kept"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    args, url = done.stdout.rsplit(" ", 1)
    assert url.strip().startswith("http://127.0.0.1:")
    assert args == repr([url.strip(), "kept"])
