"""An attacker's pass over host.web_fetch / web_download and the egress
policy (issue 30 part 3), through a real kernel and the C++ host against
hostile local servers: every spelling of a loopback or unspecified address,
schemes other than http(s) reached by redirect, a gzip bomb, a header
flood, look-alike and userinfo domains, a prompt that names one domain and
grants another, and a grant that must stay in its conversation."""

import resource

import pytest

from openai4s.kernel import Kernel

from attack_support import HostileServer, call, make_dispatcher


@pytest.fixture(scope="module")
def server():
    """The one server the policy lets the host reach (127.0.0.1)."""
    local = HostileServer("127.0.0.1")
    yield local
    local.stop()


@pytest.fixture(scope="module")
def inner():
    """A server on another loopback address, standing for the host's own
    network: nothing may ever reach it."""
    local = HostileServer("127.0.0.2")
    yield local
    local.stop()


@pytest.fixture
def open_web(monkeypatch):
    """The domain allowlist off, 127.0.0.1 alone allowed among the private
    addresses: only the address check stands between a cell and the rest."""
    monkeypatch.setenv("OPENAI4S_EGRESS", "off")
    monkeypatch.delenv("OPENAI4S_EGRESS_ALLOW", raising=False)
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.1")


@pytest.fixture
def kernel(dispatcher, workspace, open_web):
    with Kernel(dispatcher=dispatcher, cwd=workspace) as k:
        yield k


def inner_urls(server, inner):
    """Spellings of a loopback address other than the allowed one, and of
    the unspecified address (which connects to this host)."""
    p1, p2 = server.port, inner.port
    return [
        f"http://127.0.0.2:{p2}/data.csv",
        f"http://2130706434:{p2}/data.csv",
        f"http://0177.0.0.2:{p2}/data.csv",
        f"http://0x7f.0.0.2:{p2}/data.csv",
        f"http://0x7f000002:{p2}/data.csv",
        f"http://127.2:{p2}/data.csv",
        f"http://127.0.0.2.:{p2}/data.csv",
        f"http://[::ffff:127.0.0.2]:{p2}/data.csv",
        f"http://[::ffff:7f00:2]:{p2}/data.csv",
        f"http://127.0.0.1@127.0.0.2:{p2}/data.csv",
        f"http://127.0.0.1:{p1}@127.0.0.2:{p2}/data.csv",
        f"http://0.0.0.0:{p1}/data.csv",
        f"http://0:{p1}/data.csv",
        f"http://[::]:{p1}/data.csv",
        f"http://[::ffff:0.0.0.0]:{p1}/data.csv",
        f"http://[::ffff:127.0.0.1]:{p1}/data.csv",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1%25lo]/data.csv",
    ]


def test_no_spelling_of_another_local_address_is_reached(kernel, server, inner):
    before = server.hits().get("/data.csv", 0)
    for url in inner_urls(server, inner):
        _, direct = call(kernel, f"web_fetch({url!r}, timeout=5)")
        hop = f"{server.url}/redirect?to={url}"
        _, redirected = call(kernel, f"web_fetch({hop!r}, timeout=5)")
        for error in (direct, redirected):
            assert error is not None and "refused by the egress policy" in error, (url, error)
    assert inner.visits() == {}, "a refused request reached the inner server"
    assert server.hits().get("/data.csv", 0) == before
    assert kernel.execute("print(1)")["stdout"] == "1\n"


@pytest.mark.parametrize(
    "target",
    [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "gopher://127.0.0.1:{p1}/_GET%20/data.csv",
        "dict://127.0.0.1:{p1}/info",
        "ftp://127.0.0.1:{p1}/data.csv",
        "ldap://127.0.0.1:{p1}/",
        "//127.0.0.2:{p2}/data.csv",
    ],
)
def test_a_redirect_to_another_scheme_or_host_is_refused(kernel, server, inner, target):
    before = server.hits().get("/data.csv", 0)
    target = target.format(p1=server.port, p2=inner.port)
    hop = f"{server.url}/redirect?to={target}"
    _, error = call(kernel, f"web_fetch({hop!r}, timeout=5)")
    assert error is not None and "refused by the egress policy" in error, error
    if "://" in target:
        _, error = call(kernel, f"web_download({target!r}, 'x', timeout=5)")
        assert error is not None, target
    assert inner.visits() == {}
    assert server.hits().get("/data.csv", 0) == before


def test_a_gzip_bomb_stops_at_max_bytes_and_leaves_nothing(kernel, server, workspace):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    bomb = f"{server.url}/gzip-bomb/128"
    _, error = call(kernel, f"web_download({bomb!r}, 'bomb.txt', max_bytes=1 << 20)")
    assert "larger than max_bytes (1048576 bytes)" in error
    assert list(workspace.iterdir()) == []
    page, error = call(kernel, f"web_fetch({bomb!r}, max_chars=1000)")
    assert error is None and page["truncated"] and len(page["text"]) <= 1000
    assert page["bytes"] <= 10 << 20
    # 128 MiB decompressed, never held: the host's peak grows by far less.
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak
    assert grown_kib < 96 << 10, f"the host grew by {grown_kib} KiB"


def test_a_header_flood_is_refused_and_the_kernel_stays_usable(kernel, server):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _, error = call(kernel, f"web_fetch({server.url + '/headers/8192'!r}, timeout=20)")
    # libcurl stops reading headers past its own bound (300 KiB).
    assert error is not None and "/headers/8192: " in error, error
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak
    assert grown_kib < 64 << 10, f"the host grew by {grown_kib} KiB"
    assert kernel.execute("print(1)")["stdout"] == "1\n"


@pytest.mark.parametrize(
    "url",
    [
        "https://pyp\u0456.org/simple/",  # a Cyrillic i
        "https://pypi.org.evil.example/simple/",
        "https://pypi.org@evil.example/simple/",
        "https://evil.example/.pypi.org/",
        "https://evil.example#@pypi.org/",
        "https://evilpypi.org/",
    ],
)
def test_a_look_alike_of_an_allowed_domain_is_refused(dispatcher, workspace, monkeypatch, url):
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    monkeypatch.delenv("OPENAI4S_EGRESS_ALLOW", raising=False)
    with Kernel(dispatcher=dispatcher, cwd=workspace) as kernel:
        _, error = call(kernel, f"web_fetch({url!r}, timeout=5)")
    # Refused before any connection (offline, an allowed name would fail
    # with a network error instead).
    assert error is not None, url
    refusals = ("refused by the egress policy", "not a valid absolute", "names no usable host")
    assert any(refusal in error for refusal in refusals), error


class Approver:
    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked = []

    def __call__(self, request):
        self.asked.append(dict(request))
        return self.answers.pop(0)


@pytest.fixture
def allowlisted(monkeypatch):
    monkeypatch.delenv("OPENAI4S_EGRESS", raising=False)
    monkeypatch.delenv("OPENAI4S_EGRESS_ALLOW", raising=False)
    monkeypatch.setenv("OPENAI4S_EGRESS_ALLOW_PRIVATE", "127.0.0.0/8")


@pytest.mark.parametrize(
    "asked",
    [
        "pypi.org@evil.example",
        "pypi.org:443@evil.example",
        "https://pypi.org@evil.example/",
        "pypi.org/@evil.example",
    ],
)
def test_the_prompt_names_the_domain_that_is_granted(dispatcher, workspace, allowlisted, asked):
    dispatcher.approver = approver = Approver("once")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as kernel:
        granted, error = call(kernel, f"request_network_access({asked!r}, reason='docs')")
    if granted is None:
        assert approver.asked == [] and "request_network_access" in error, error
        return
    if granted["asked"] is False:  # already allowed: no prompt, no grant
        assert approver.asked == []
        return
    shown = [request["target"] for request in approver.asked]
    assert shown == [granted["domain"]], f"the person saw {shown}, the grant is {granted}"


def test_a_grant_stays_in_its_conversation(tmp_path, dispatcher, workspace, allowlisted, server):
    url = f"http://localhost:{server.port}/data.csv"
    dispatcher.approver = Approver("once")
    with Kernel(dispatcher=dispatcher, cwd=workspace) as kernel:
        granted, _ = call(kernel, "request_network_access('localhost', reason='lab')")
        assert granted["granted"] is True
        page, _ = call(kernel, f"web_fetch({url!r})")
        assert page["text"] == "a,b\n1,2\n"
        # A new conversation on the same store starts from the policy alone.
        dispatcher.frame_id = dispatcher.store.new_frame(kind="turn")
        _, error = call(kernel, f"web_fetch({url!r})")
        assert "blocked by the egress allowlist" in error
    # So does another host on the same data directory.
    other = make_dispatcher(tmp_path / "data", workspace)
    try:
        with Kernel(dispatcher=other, cwd=workspace) as kernel:
            _, error = call(kernel, f"web_fetch({url!r})")
            assert "blocked by the egress allowlist" in error
            _, error = call(kernel, "request_network_access('localhost')")
            assert "no interactive channel is attached" in error
    finally:
        other.store.close()


def test_a_user_agent_cannot_carry_headers_or_a_second_request(kernel, server):
    before = server.hits().get("/data.csv", 0)
    for agent in ["x\r\nX-Injected: 1", "x\nPOST /data.csv HTTP/1.1", "x\r"]:
        _, error = call(kernel, f"web_fetch({server.url + '/data.csv'!r}, user_agent={agent!r})")
        assert "user_agent must be one line" in error, error
    assert server.hits().get("/data.csv", 0) == before
